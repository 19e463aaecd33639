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
#include <time.h>
#include <unistd.h>

#include "bwap.h"

char *bwap_ctl_socket_path(const char *state_dir, char *buf, size_t len)
{
	snprintf(buf, len, "%s/bwapd.sock", state_dir);
	return buf;
}

static double mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

/*
 * Connect before deadline (monotonic ms).  The socket is non-blocking: a
 * unix socket whose listen queue is full (bwapd stopped, or overloaded)
 * makes a blocking connect() wait without limit; here it says EAGAIN, and
 * we try again every 10 ms until the deadline.
 */
static int connect_by(const char *state_dir, double deadline, char *err, size_t errlen)
{
	struct sockaddr_un sa;
	char path[sizeof(sa.sun_path)];
	int fd, e;

	bwap_ctl_socket_path(state_dir, path, sizeof(path));
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		snprintf(err, errlen, "socket: %s", strerror(errno));
		return -1;
	}
	for (;;) {
		struct timespec gap = { .tv_nsec = 10 * 1000 * 1000 };

		if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			return fd;
		e = errno;
		if (e == EINTR)
			continue;
		if ((e != EAGAIN && e != EINPROGRESS) || mono_ms() >= deadline)
			break;
		/* the queue is full: a pace for the retries, nothing waits on it */
		nanosleep(&gap, NULL);
	}
	if (e == EAGAIN || e == EINPROGRESS)
		snprintf(err, errlen, "bwapd at %s takes no connection (its queue is full: is it stopped or "
			 "overloaded? see its log, or restart it with 'systemctl restart bwapd')", path);
	else if (e == EACCES || e == EPERM)
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

int bwap_ctl_connect(const char *state_dir, char *err, size_t errlen)
{
	int fd = connect_by(state_dir, mono_ms() + 30000, err, errlen);

	/* callers of this one read and write as they like: blocking */
	if (fd >= 0)
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	return fd;
}

/*
 * Write all of buf before deadline, the descriptors fds (nfds, may be 0)
 * with its first byte (SCM_RIGHTS): bwapd opens no path a client names,
 * so a client passes the files it means.  0, or -1 (err set).
 */
static int send_by(int fd, const char *buf, size_t len, const int *fds, int nfds, double deadline, char *err,
		   size_t errlen)
{
	while (len) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		double left = deadline - mono_ms();
		union {
			char buf[CMSG_SPACE(BWAP_CTL_MAX_FDS * sizeof(int))];
			struct cmsghdr align;
		} ctl;
		struct iovec iov = { (void *)buf, len };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
		ssize_t n;

		if (left <= 0 || poll(&pfd, 1, (int)left + 1) == 0) {
			snprintf(err, errlen, "bwapd did not take the request within its deadline (is it stopped?)");
			return -1;
		}
		if (nfds > 0) {
			struct cmsghdr *cm;

			memset(&ctl, 0, sizeof(ctl));
			mh.msg_control = ctl.buf;
			mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
			cm = CMSG_FIRSTHDR(&mh);
			cm->cmsg_level = SOL_SOCKET;
			cm->cmsg_type = SCM_RIGHTS;
			cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
			memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
		}
		n = sendmsg(fd, &mh, MSG_NOSIGNAL);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			snprintf(err, errlen, "cannot send to bwapd: %s", strerror(errno));
			return -1;
		}
		nfds = 0;	/* they went with the first byte */
		buf += n;
		len -= n;
	}
	return 0;
}

/*
 * Hand the request to bwapd and go, without its answer: for a caller
 * that must not wait (slurmstepd at a task's exit).  bwapd still reads
 * and logs it when it gets to it.  timeout_ms bounds the hand-over (a
 * full queue); 0, or -1 with err.
 */
int bwap_ctl_send(const char *state_dir, const char *request, int timeout_ms, char *err, size_t errlen)
{
	size_t len = strlen(request);
	double deadline = mono_ms() + timeout_ms;
	int fd = connect_by(state_dir, deadline, err, errlen), r;
	char *line;

	if (fd < 0)
		return -1;
	line = malloc(len + 2);
	if (!line) {
		snprintf(err, errlen, "out of memory");
		close(fd);
		return -1;
	}
	memcpy(line, request, len);
	line[len] = '\n';
	r = send_by(fd, line, len + 1, NULL, 0, deadline, err, errlen);
	free(line);
	close(fd);
	return r;
}

char *bwap_ctl_request(const char *state_dir, const char *request, char *err, size_t errlen)
{
	return bwap_ctl_request_timeout(state_dir, request, 30000, err, errlen);
}

/*
 * timeout_ms bounds the whole request, connect to last byte: a bwapd that
 * is stopped, busy or answers a byte at a time costs its caller no more.
 */
char *bwap_ctl_request_timeout(const char *state_dir, const char *request, int timeout_ms,
			       char *err, size_t errlen)
{
	return bwap_ctl_request_fds(state_dir, request, NULL, 0, timeout_ms, err, errlen);
}

char *bwap_ctl_request_fds(const char *state_dir, const char *request, const int *fds, int nfds, int timeout_ms,
			   char *err, size_t errlen)
{
	size_t len = strlen(request), cap = 4096, n = 0;
	double deadline = mono_ms() + timeout_ms;
	char *buf, *line;
	int fd = connect_by(state_dir, deadline, err, errlen);

	if (fd < 0)
		return NULL;
	line = malloc(len + 2);
	if (!line) {
		snprintf(err, errlen, "out of memory");
		close(fd);
		return NULL;
	}
	memcpy(line, request, len);
	line[len] = '\n';
	if (nfds < 0 || nfds > BWAP_CTL_MAX_FDS) {
		snprintf(err, errlen, "at most %d descriptors go with a request", BWAP_CTL_MAX_FDS);
		free(line);
		close(fd);
		return NULL;
	}
	if (send_by(fd, line, len + 1, fds, nfds, deadline, err, errlen)) {
		free(line);
		close(fd);
		return NULL;
	}
	free(line);
	shutdown(fd, SHUT_WR);
	buf = malloc(cap);
	while (buf) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		double left = deadline - mono_ms();
		ssize_t got;

		if (left <= 0 || poll(&pfd, 1, (int)left + 1) == 0) {
			snprintf(err, errlen, "no answer from bwapd within %d ms (is it stopped or overloaded? "
				 "see its log)", timeout_ms);
			free(buf);
			close(fd);
			return NULL;
		}
		got = read(fd, buf + n, cap - n - 1);

		if (got < 0 && (errno == EINTR || errno == EAGAIN))
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
