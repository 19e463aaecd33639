// SPDX-License-Identifier: GPL-2.0
/*
 * The client side of bwapd's control socket, STATE_DIR/bwapd.sock (a unix
 * stream socket).  One request per connection: a line of text, e.g.
 * "attach 123 signal model", "status json", "wait 123"; the reply is
 * "ok" or "error: WHY" on its first line, then the body, then EOF.
 * bwapd(8) lists the requests.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "bwap.h"

char *bwap_ctl_socket_path(const char *state_dir, char *buf, size_t len)
{
	snprintf(buf, len, "%s/bwapd.sock", state_dir);
	return buf;
}

int bwap_ctl_connect(const char *state_dir, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	char path[sizeof(sa.sun_path)];
	int fd;

	bwap_ctl_socket_path(state_dir, path, sizeof(path));
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int e = errno;

		if (e == EACCES || e == EPERM)
			snprintf(err, errlen, "cannot reach bwapd at %s: %s (the socket or its directory is "
				 "not open to this user; ask the administrator, or run as root)", path, strerror(e));
		else
			snprintf(err, errlen, "cannot reach bwapd at %s: %s (is bwapd running with "
				 "--state-dir %s? start it with 'bwapd' or 'systemctl start bwapd')",
				 path, strerror(e), state_dir);
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

char *bwap_ctl_request(const char *state_dir, const char *request, char *err, size_t errlen)
{
	return bwap_ctl_request_timeout(state_dir, request, 30000, err, errlen);
}

char *bwap_ctl_request_timeout(const char *state_dir, const char *request, int timeout_ms,
			       char *err, size_t errlen)
{
	size_t len = strlen(request), cap = 4096, n = 0;
	char *buf;
	int fd = bwap_ctl_connect(state_dir, err, errlen);

	if (fd >= 0 && (write(fd, request, len) != (ssize_t)len || write(fd, "\n", 1) != 1)) {
		snprintf(err, errlen, "cannot send to bwapd: %s", strerror(errno));
		close(fd);
		return NULL;
	} else if (fd >= 0) {
		shutdown(fd, SHUT_WR);
	}
	if (fd < 0)
		return NULL;
	buf = malloc(cap);
	while (buf) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t got;

		if (poll(&pfd, 1, timeout_ms) == 0) {
			snprintf(err, errlen, "no answer from bwapd within %d s", timeout_ms / 1000);
			free(buf);
			close(fd);
			return NULL;
		}
		got = read(fd, buf + n, cap - n - 1);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		n += got;
		if (n + 1 >= cap) {
			char *bigger = realloc(buf, cap * 2);

			if (!bigger) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = bigger;
			cap *= 2;
		}
	}
	close(fd);
	if (!buf) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	buf[n] = '\0';
	if (!n) {
		snprintf(err, errlen, "bwapd closed the connection without an answer (see its log)");
		free(buf);
		return NULL;
	}
	return buf;
}
