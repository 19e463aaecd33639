// SPDX-License-Identifier: GPL-2.0
/*
 * The control-socket client (lib/ctl.c) against sockets that behave as a
 * stalled or slow bwapd does: every request must end within its timeout,
 * whatever the other side does, because slurmstepd waits on it.
 *  - a full listen queue (bwapd stopped with SIGSTOP, or busy): connect()
 *    itself would block; the request fails at its deadline;
 *  - a bwapd that accepts and never answers;
 *  - one that answers a byte at a time, slower than the deadline;
 *  - no socket at all: at once, saying bwapd is not running.
 * Each request runs in a child under alarm(), so a hang is a failure,
 * not a stuck test.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "bwap.h"
#include "tap.h"
#include "fake_bwapd.h"

static char dir[64];

/* Fill the listen queue of the socket in dir; the clients' fds stay open. */
static int fill_queue(int *fds, int max)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int n = 0;

	bwap_ctl_socket_path(dir, sa.sun_path, sizeof(sa.sun_path));
	while (n < max) {
		int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			close(fd);
			break;
		}
		fds[n++] = fd;
	}
	return n;
}

/*
 * The request, in a child under a 10 s alarm; how long it took, its
 * error text in err; -1 if it hung (killed by the alarm) or answered.
 */
static double timed_request(int timeout_ms, char *err, size_t errlen)
{
	int p[2], status;
	double t0 = test_mono(), took;
	ssize_t n;
	pid_t c;

	if (pipe(p))
		return -1;
	c = fork();
	if (!c) {
		char e[512] = "";
		char *r;

		close(p[0]);
		alarm(10);
		r = bwap_ctl_request_timeout(dir, "ping", timeout_ms, e, sizeof(e));
		if (r)
			snprintf(e, sizeof(e), "answered: %s", r);
		if (write(p[1], e, strlen(e)) < 0)
			_exit(3);
		_exit(r ? 1 : 0);
	}
	close(p[1]);
	n = read(p[0], err, errlen - 1);
	err[n > 0 ? n : 0] = '\0';
	close(p[0]);
	waitpid(c, &status, 0);
	took = test_mono() - t0;
	if (WIFSIGNALED(status)) {
		snprintf(err, errlen, "hung: killed by signal %d after %.1f s", WTERMSIG(status), took);
		return -1;
	}
	return WEXITSTATUS(status) ? -1 : took;
}

int main(void)
{
	char err[512];
	int lfd, fds[4096], n;
	double took;

	snprintf(dir, sizeof(dir), "/tmp/bwap-ctl.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);

	took = timed_request(300, err, sizeof(err));
	CHECK(took >= 0 && took < 0.3 && strstr(err, "is bwapd running"),
	      "no socket: fails at once (%.3f s), saying bwapd is not running: %s", took, err);

	/* A full queue: what a stopped bwapd leaves to the next client. */
	lfd = fake_bwapd_listen(dir, 0);
	n = fill_queue(fds, 4096);
	took = timed_request(300, err, sizeof(err));
	CHECK(lfd >= 0 && n > 0 && took >= 0.25 && took < 1.0 && strstr(err, "bwapd"),
	      "full listen queue (%d clients ahead): the request ends at its 300 ms deadline (%.3f s): %s", n, took, err);
	for (int i = 0; i < n; i++)
		close(fds[i]);
	close(lfd);

	/* Accepted (queued) and never answered. */
	lfd = fake_bwapd_listen(dir, 16);
	took = timed_request(300, err, sizeof(err));
	CHECK(took >= 0.25 && took < 1.0 && strstr(err, "no answer from bwapd"),
	      "queued, never answered: ends at 300 ms (%.3f s): %s", took, err);
	close(lfd);

	/* A byte every 100 ms for 3 s: the deadline is for the whole request. */
	lfd = fake_bwapd_listen(dir, 16);
	{
		pid_t slow = fork();

		if (!slow) {
			int c = accept(lfd, NULL, NULL);
			struct timespec gap = { .tv_nsec = 100 * 1000 * 1000 };

			/* a slow server, not a synchronisation: it writes at this pace */
			for (int i = 0; i < 30 && c >= 0; i++) {
				if (write(c, "o", 1) != 1)
					break;
				nanosleep(&gap, NULL);
			}
			_exit(0);
		}
		took = timed_request(300, err, sizeof(err));
		CHECK(took >= 0.25 && took < 1.0 && strstr(err, "no answer from bwapd"),
		      "a reply trickling in a byte per 100 ms: ends at the 300 ms deadline (%.3f s): %s", took, err);
		kill(slow, SIGKILL);
		waitpid(slow, NULL, 0);
	}
	close(lfd);

	snprintf(err, sizeof(err), "rm -rf %s", dir);
	if (system(err))
		return 1;
	return tap_done();
}
