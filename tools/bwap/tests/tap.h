/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A few lines of TAP for the host unit tests: ok()/not ok, a plan at the
 * end, exit status 1 if anything failed.  CHECK() keeps going after a
 * failure so one run shows every broken case.
 */
#ifndef BWAP_TAP_H
#define BWAP_TAP_H

#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int tap_n, tap_failed;

static inline int tap_result(int cond, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	if (!cond)
		tap_failed++;
	printf("%sok %d - ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	return cond;
}

#define CHECK(cond, ...) tap_result(!!(cond), __VA_ARGS__)
/* "ok N - # SKIP why": a check this machine cannot make (TAP's directive) */
#define SKIP(...) (printf("ok %d - # SKIP ", ++tap_n), printf(__VA_ARGS__), putchar('\n'))
#define CHECK_NEAR(a, b, tol, ...) tap_result(fabs((double)(a) - (double)(b)) <= (tol), __VA_ARGS__)

/*
 * Path of a file under this test's data/ folder, found from where the
 * test program itself is (/proc/self/exe), so tests run from any
 * directory and outside the repository.  Returns a static buffer.
 */
static inline const char *test_data(const char *name)
{
	static char path[PATH_MAX];
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = '\0';
	snprintf(path, sizeof(path), "%s/data/%s", n > 0 ? dirname(exe) : ".", name);
	return path;
}

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
