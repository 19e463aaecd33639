// SPDX-License-Identifier: GPL-2.0
/*
 * bwapd's control socket, STATE_DIR/bwapd.sock: one request line per
 * connection (bwapd(8) lists them), the pid file that keeps one daemon per
 * state dir, and the clean-up at exit.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "bwapd.h"
#include "../lib/mempolicy2.h"

static int listen_fd = -1, lock_fd = -1;
static int own_state_dir;	/* we hold the pid file lock: the socket and pid file are ours */
static char sock_path[300], pid_path[300];

/* The owner of /proc/PID, or -1 if PID is gone. */
static long owner_of(long pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%ld", pid);
	return stat(path, &st) ? -1 : (long)st.st_uid;
}

/*
 * May the client (uid from SO_PEERCRED) act on pid?  Root may act on any
 * process; a user only on their own.  0, or -1 with the reason in why.
 */
static int may_act_on(uid_t uid, long pid, char *why, size_t len)
{
	long owner;

	if (uid == 0)
		return 0;
	owner = owner_of(pid);
	if (owner < 0) {
		snprintf(why, len, "pid %ld does not exist", pid);
		return -1;
	}
	if (owner != (long)uid) {
		snprintf(why, len, "pid %ld belongs to uid %ld, and uid %u may only register its own processes "
			 "(run as root for others)", pid, owner, (unsigned int)uid);
		return -1;
	}
	return 0;
}

/* Every pid an attach request names: the target and its protect PID. */
static int may_attach(uid_t uid, const char *req, char *why, size_t len)
{
	const char *p = strstr(req, " protect ");
	long pid;

	if (sscanf(req, "attach %ld", &pid) == 1 && may_act_on(uid, pid, why, len))
		return -1;
	if (p && sscanf(p, " protect %ld", &pid) == 1 && may_act_on(uid, pid, why, len))
		return -1;
	return 0;
}

static void handle_request(int fd, uid_t uid, const char *req)
{
	char why[256];

	char *body = NULL;
	size_t len = 0;
	FILE *f;
	int pid, keep = 0;

	f = open_memstream(&body, &len);
	if (!f) {
		close(fd);
		return;
	}
	if (!strcmp(req, "status") || !strcmp(req, "status json")) {
		fprintf(f, "ok\n");
		status_print(f, !strcmp(req, "status json"));
	} else if (sscanf(req, "attach %d", &pid) == 1 && may_attach(uid, req, why, sizeof(why))) {
		logmsg("attach %d refused: %s", pid, why);
		fprintf(f, "error: %s\n", why);
	} else if (sscanf(req, "attach %d", &pid) == 1) {
		char err[512];
		const char *args = strchr(req + 7, ' ');

		if (target_attach(pid, args, err, sizeof(err))) {
			logmsg("attach %d refused: %s", pid, err);
			fprintf(f, "error: %s\n", err);
		} else {
			struct target *t = find_target(pid);
			char ws[256];

			fprintf(f, "ok\nbwapd tunes pid %d: workers %s, start DWP %.3f, weights %s, signal: %s\n",
				pid, bwap_nodeset_format(t->workers, err, sizeof(err)), t->pushed_dwp,
				weights_str(&t->pushed, ws, sizeof(ws)), t->sig.label);
			if (t->note[0])
				fprintf(f, "note: %s\n", t->note);
		}
	} else if (sscanf(req, "detach %d", &pid) == 1) {
		struct target *t = find_target(pid);

		if (t && may_act_on(uid, pid, why, sizeof(why))) {
			fprintf(f, "error: %s\n", why);
		} else if (!t) {
			fprintf(f, "error: pid %d is not a target\n", pid);
		} else {
			drop_target(t, "detached on request (its weights stay as last pushed)");
			fprintf(f, "ok\ndetached pid %d\n", pid);
		}
	} else if (sscanf(req, "wait %d", &pid) == 1) {
		struct target *t = find_target(pid);
		long want = 0;

		sscanf(req, "wait %*d pushes %ld", &want);
		if (!t)
			fprintf(f, "error: pid %d is not a target\n", pid);
		else if (want > 0 && t->pushes >= want)
			fprintf(f, "ok\npushed pid %d dwp %.3f pushes %ld moved %ld state %s\n", pid, t->pushed_dwp,
				t->pushes, t->moved, t->cs.t.phase == BWAP_TUNER_SETTLED ? "settled" : "searching");
		else if (!want && t->cs.t.phase == BWAP_TUNER_SETTLED && t->cs.stage == 2)
			fprintf(f, "ok\nconverged pid %d dwp %.3f pushes %ld moved %ld\n", pid, t->cs.t.cur,
				t->pushes, t->moved);
		else if (t->nr_waiters >= MAX_WAITERS)
			fprintf(f, "error: too many clients wait for pid %d\n", pid);
		else {
			t->waiter_pushes[t->nr_waiters] = want;
			t->waiters[t->nr_waiters++] = fd;
			keep = 1;
		}
	} else if (!strcmp(req, "ping")) {
		fprintf(f, "ok\npong\n");
	} else {
		fprintf(f, "error: unknown request '%s' (requests: status, status json, attach PID [workers SET] "
			   "[signal KIND] [progress FILE] [protect PID], detach PID, wait PID [pushes N], ping)\n", req);
	}
	fclose(f);
	send_reply(fd, body, len);
	free(body);
	if (!keep)
		close(fd);
}

/* One request per socket connection. */
void handle_socket_client(int fd)
{
	char req[1024];
	ssize_t n = 0, got;
	struct timeval tv = { .tv_sec = 2 };
	struct ucred cred;
	socklen_t credlen = sizeof(cred);

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	while (n < (ssize_t)sizeof(req) - 1 && (got = read(fd, req + n, sizeof(req) - 1 - n)) > 0) {
		n += got;
		if (memchr(req, '\n', n))
			break;
	}
	req[n > 0 ? n : 0] = '\0';
	req[strcspn(req, "\n")] = '\0';
	/* who is asking: the kernel's word, not the client's */
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &credlen)) {
		logmsg("control: SO_PEERCRED: %s; request refused", strerror(errno));
		close(fd);
		return;
	}
	handle_request(fd, cred.uid, req);
}

int open_socket(char *err, size_t errlen)
{
	struct sockaddr_un sa;
	char buf[64];
	int n;

	/* The pid file's lock says whether another bwapd owns this state dir. */
	snprintf(pid_path, sizeof(pid_path), "%s/bwapd.pid", bwapd.conf.state_dir);
	lock_fd = open(pid_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (lock_fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", pid_path, strerror(errno));
		return -1;
	}
	if (flock(lock_fd, LOCK_EX | LOCK_NB)) {
		n = read(lock_fd, buf, sizeof(buf) - 1);
		buf[n > 0 ? n : 0] = '\0';
		snprintf(err, errlen, "another bwapd (pid %d) already runs on %s; stop it first or use "
			 "another state_dir", atoi(buf), bwapd.conf.state_dir);
		return -1;
	}
	own_state_dir = 1;
	n = snprintf(buf, sizeof(buf), "%d\n", getpid());
	if (ftruncate(lock_fd, 0) || pwrite(lock_fd, buf, n, 0) != n) {
		snprintf(err, errlen, "cannot write %s: %s", pid_path, strerror(errno));
		return -1;
	}
	/* We hold the lock, so a socket left here is from a bwapd that died. */
	bwap_ctl_socket_path(bwapd.conf.state_dir, sock_path, sizeof(sock_path));
	if (unlink(sock_path) == 0)
		logmsg("removed a stale %s left by an earlier bwapd", sock_path);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (strlen(sock_path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "socket path %s is too long; use a shorter state_dir", sock_path);
		return -1;
	}
	strcpy(sa.sun_path, sock_path);
	listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(listen_fd, 16)) {
		snprintf(err, errlen, "cannot listen on %s: %s", sock_path, strerror(errno));
		return -1;
	}
	/* anyone may ask; handle_request() lets users register only their own processes */
	chmod(sock_path, 0666);
	return 0;
}

int control_fd(void)
{
	return listen_fd;
}

const char *control_path(void)
{
	return sock_path;
}

/* Remove our socket and pid file (never another bwapd's); the lock goes with the fd. */
void close_socket(void)
{
	if (!own_state_dir)
		return;
	if (sock_path[0])
		unlink(sock_path);
	if (pid_path[0])
		unlink(pid_path);
	if (listen_fd >= 0)
		close(listen_fd);
	if (lock_fd >= 0)
		close(lock_fd);
}
