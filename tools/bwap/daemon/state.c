// SPDX-License-Identifier: GPL-2.0
/*
 * bwapd's shared state, its one definition, and what every part of the
 * daemon uses: the clock, the log and replies to clients.  The other
 * files include bwapd.h and read or change "bwapd"; none of them needs
 * another's globals, so the calls go one way: main.c -> control.c ->
 * targets.c -> signals.c, events.c, conf.c -> state.c.
 */
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "bwapd.h"

struct bwapd_state bwapd;

double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void logmsg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bwapd: [%9.3f] ", now() - bwapd.t_start);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* A client that went away, or one that takes nothing, is no error: bwapd never waits on it. */
void send_reply(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == ENOTSOCK)
			n = write(fd, buf, len);	/* --ready-fd is a pipe */
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= n;
	}
}
