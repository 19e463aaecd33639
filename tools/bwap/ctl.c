// SPDX-License-Identifier: GPL-2.0
/*
 * The client side of bwapd's control socket, STATE_DIR/bwapd.sock (a unix
 * stream socket).  One request per connection: a line of text, e.g.
 * "attach 123 signal model", "status json", "wait 123"; the reply is
 * "ok" or "error: WHY" on its first line, then the body, then EOF.
 * bwapd(8) lists the requests.
 *
 * Kernels without AF_UNIX (the minimal test guests) get the same requests
 * through the FIFO STATE_DIR/bwapd.ctl: the client makes its own reply
 * FIFO STATE_DIR/reply.PID, writes "@REPLY_FIFO REQUEST" (one write, below
 * PIPE_BUF, so it is atomic), and reads the reply from its FIFO to EOF.
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

#include "ctl.h"

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
		if (errno == EAFNOSUPPORT || errno == ENOSYS)
			return -2;	/* no unix sockets here: use the FIFO */
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		int e = errno;

		snprintf(err, errlen, "cannot reach bwapd at %s: %s (is bwapd running with "
			 "--state-dir %s? start it with 'bwapd' or 'systemctl start bwapd')",
			 path, strerror(e), state_dir);
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* Send over the FIFO; returns the reply FIFO's fd open for reading, or -1. */
static int fifo_send(const char *state_dir, const char *request, char *reply_path, size_t rlen,
		     int timeout_ms, char *err, size_t errlen)
{
	char ctl[512], line[1024];
	struct pollfd pfd;
	int cfd, rfd, n;

	snprintf(ctl, sizeof(ctl), "%s/bwapd.ctl", state_dir);
	if (access(ctl, F_OK)) {
		snprintf(err, errlen, "cannot reach bwapd at %s: %s (is bwapd running with --state-dir %s? "
			 "start it with 'bwapd' or 'systemctl start bwapd')", ctl, strerror(errno), state_dir);
		return -1;
	}
	snprintf(reply_path, rlen, "%s/reply.%d", state_dir, (int)getpid());
	unlink(reply_path);
	if (mkfifo(reply_path, 0600)) {
		snprintf(err, errlen, "cannot make %s: %s", reply_path, strerror(errno));
		return -1;
	}
	rfd = open(reply_path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	cfd = open(ctl, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
	if (rfd < 0 || cfd < 0) {
		int e = errno;

		snprintf(err, errlen, "cannot reach bwapd at %s: %s (is bwapd running with --state-dir %s? "
			 "start it with 'bwapd' or 'systemctl start bwapd')", ctl,
			 e == ENXIO ? "nobody reads it" : strerror(e), state_dir);
		if (rfd >= 0)
			close(rfd);
		if (cfd >= 0)
			close(cfd);
		unlink(reply_path);
		errno = e;
		return -1;
	}
	n = snprintf(line, sizeof(line), "@%s %s\n", reply_path, request);
	if (n >= (int)sizeof(line) || write(cfd, line, n) != n) {
		snprintf(err, errlen, "cannot send to bwapd through %s: %s", ctl, strerror(errno));
		close(cfd);
		close(rfd);
		unlink(reply_path);
		return -1;
	}
	close(cfd);
	/* A FIFO that never had a writer does not poll as hung up: this waits for bwapd. */
	pfd.fd = rfd;
	pfd.events = POLLIN;
	for (;;) {
		int r = poll(&pfd, 1, timeout_ms);

		if (r > 0)
			break;
		if (r == 0 || errno != EINTR) {
			snprintf(err, errlen, "no answer from bwapd within %d s", timeout_ms / 1000);
			close(rfd);
			unlink(reply_path);
			return -1;
		}
	}
	fcntl(rfd, F_SETFL, fcntl(rfd, F_GETFL) & ~O_NONBLOCK);
	return rfd;
}

char *bwap_ctl_request(const char *state_dir, const char *request, char *err, size_t errlen)
{
	return bwap_ctl_request_timeout(state_dir, request, 30000, err, errlen);
}

char *bwap_ctl_request_timeout(const char *state_dir, const char *request, int timeout_ms,
			       char *err, size_t errlen)
{
	size_t len = strlen(request), cap = 4096, n = 0;
	char *buf, reply_path[512] = "";
	int fd = bwap_ctl_connect(state_dir, err, errlen);

	if (fd == -2)
		fd = fifo_send(state_dir, request, reply_path, sizeof(reply_path), timeout_ms, err, errlen);
	else if (fd >= 0 && (write(fd, request, len) != (ssize_t)len || write(fd, "\n", 1) != 1)) {
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
			if (reply_path[0])
				unlink(reply_path);
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
	if (reply_path[0])
		unlink(reply_path);
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
