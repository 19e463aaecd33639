/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For the tests that stand in for bwapd on its control socket (a stalled
 * or slow daemon) and time the client against it: a listening socket at
 * the path bwapd would use under a state directory, and a monotonic clock
 * in seconds.
 */
#ifndef BWAP_FAKE_BWAPD_H
#define BWAP_FAKE_BWAPD_H

#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "../lib/bwap.h"

/* Seconds on CLOCK_MONOTONIC, for timing a call against its deadline. */
static inline double test_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*
 * Listen with a queue of @backlog on the control socket of a bwapd whose
 * state directory is @dir, and never accept: a daemon that does not
 * answer.  Returns the socket, or -1.
 */
static inline int fake_bwapd_listen(const char *dir, int backlog)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	bwap_ctl_socket_path(dir, sa.sun_path, sizeof(sa.sun_path));
	unlink(sa.sun_path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, backlog))
		return -1;
	return fd;
}

#endif /* BWAP_FAKE_BWAPD_H */
