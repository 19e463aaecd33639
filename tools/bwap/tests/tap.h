/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A few lines of TAP for the host unit tests: ok()/not ok, a plan at the
 * end, exit status 1 if anything failed.  CHECK() keeps going after a
 * failure so one run shows every broken case.
 */
#ifndef BWAP_TAP_H
#define BWAP_TAP_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

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
#define CHECK_NEAR(a, b, tol, ...) tap_result(fabs((double)(a) - (double)(b)) <= (tol), __VA_ARGS__)

static inline int tap_done(void)
{
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}

#endif
