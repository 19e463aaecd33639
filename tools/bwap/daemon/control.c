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

/*
 * One request from uid on fd: the reply in *body (malloc()ed, *len
 * bytes).  Returns 1 when fd now waits on a target (wait PID): the
 * target answers and closes it later.
 */
static int handle_request(int fd, uid_t uid, const char *req, char **body, size_t *len)
{
	char why[256];
	FILE *f;
	int pid, keep = 0;

	*body = NULL;
	*len = 0;
	f = open_memstream(body, len);
	if (!f)
		return 0;
	if (!strcmp(req, "status") || !strcmp(req, "status json")) {
		/* the descendants as of this request, not of the last scan */
		follow_children();
		fprintf(f, "ok\n");
		status_print(f, !strcmp(req, "status json"), uid);
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

		/* every detach is logged: Slurm's task_exit is seen even when the exit came first */
		if (t && may_act_on(uid, pid, why, sizeof(why))) {
			logmsg("detach %d (uid %u): refused: %s", pid, (unsigned int)uid, why);
			fprintf(f, "error: %s\n", why);
		} else if (!t) {
			logmsg("detach %d (uid %u): not a target (never attached, or already dropped)", pid,
			       (unsigned int)uid);
			fprintf(f, "error: pid %d is not a target\n", pid);
		} else {
			logmsg("detach %d (uid %u): detached", pid, (unsigned int)uid);
			drop_target(t, "detached on request (its weights stay as last pushed)");
			fprintf(f, "ok\ndetached pid %d\n", pid);
		}
	} else if (sscanf(req, "wait %d", &pid) == 1) {
		struct target *t = find_target(pid);
		long want = 0;

		/* a followed target's new child (a wrapper's program) may ask before the next scan */
		if (!t) {
			follow_children();
			t = find_target(pid);
		}

		sscanf(req, "wait %*d pushes %ld", &want);
		if (!t)
			fprintf(f, "error: pid %d is not a target\n", pid);
		/* a push DAMON is still placing is not done yet: damon_tick() answers */
		else if (want > 0 && t->pushes >= want && !(t->damon_push && t->damon_push >= want))
			fprintf(f, "ok\npushed pid %d dwp %.3f pushes %ld moved %ld state %s weights %s\n", pid,
				t->pushed_dwp, t->pushes, t->moved,
				t->cs.t.phase == BWAP_TUNER_SETTLED ? "settled" : "searching",
				weights_str(&t->pushed, why, sizeof(why)));
		else if (!want && t->cs.t.phase == BWAP_TUNER_SETTLED && t->cs.stage == 2 && !t->damon_push)
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
			   "[signal KIND] [progress FILE] [protect PID] [job N step N task N] [children 1], detach PID, "
			   "wait PID [pushes N], ping)\n", req);
	}
	fclose(f);
	return keep;
}

/*
 * The clients, served without blocking: a client's request is read as it
 * arrives, its reply written as the client takes it, and a client past
 * conf.client_timeout is closed.  A fd handed to a target as a waiter
 * (wait PID) leaves this list.
 */
struct client {
	int fd;
	double deadline;
	char req[1024];
	size_t n;
	char *out;		/* the reply; NULL while reading */
	size_t out_len, out_off;
};

static struct client *clients;
static int nr_clients_, cap_clients;

int nr_clients(void)
{
	return nr_clients_;
}

static void client_close(int i)
{
	close(clients[i].fd);
	free(clients[i].out);
	clients[i] = clients[--nr_clients_];
}

void accept_clients(void)
{
	for (;;) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0)
			return;		/* EAGAIN: all taken */
		if (nr_clients_ == cap_clients) {
			int cap = cap_clients ? 2 * cap_clients : 16;
			struct client *more = realloc(clients, cap * sizeof(*more));

			if (!more) {
				logmsg("control: out of memory for client %d; closed", nr_clients_ + 1);
				close(fd);
				continue;
			}
			clients = more;
			cap_clients = cap;
		}
		memset(&clients[nr_clients_], 0, sizeof(clients[0]));
		clients[nr_clients_].fd = fd;
		clients[nr_clients_++].deadline = now() + bwapd.conf.client_timeout;
	}
}

double clients_poll_setup(struct pollfd *pf)
{
	double due = now() + 3600;

	for (int i = 0; i < nr_clients_; i++) {
		pf[i].fd = clients[i].fd;
		pf[i].events = clients[i].out ? POLLOUT : POLLIN;
		pf[i].revents = 0;
		if (clients[i].deadline < due)
			due = clients[i].deadline;
	}
	return due;
}

/* Write what the client takes; 1 when all of the reply is out. */
static int client_write(struct client *c)
{
	while (c->out_off < c->out_len) {
		ssize_t n = write(c->fd, c->out + c->out_off, c->out_len - c->out_off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0)
			return 1;	/* the client is gone: nothing more to do */
		c->out_off += n;
	}
	return 1;
}

/* Read what is there; 1 when the request line is complete (or the client stopped sending). */
static int client_read(struct client *c)
{
	for (;;) {
		ssize_t got = read(c->fd, c->req + c->n, sizeof(c->req) - 1 - c->n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && errno == EAGAIN)
			return 0;
		if (got <= 0)
			return 1;
		c->n += got;
		if (memchr(c->req, '\n', c->n) || c->n == sizeof(c->req) - 1)
			return 1;
	}
}

/* The request of client i is complete: answer it; 0 if i is still a client after. */
static int client_serve(int i)
{
	struct client *c = &clients[i];
	struct ucred cred;
	socklen_t credlen = sizeof(cred);
	char *body;
	size_t len;

	c->req[c->n] = '\0';
	c->req[strcspn(c->req, "\n")] = '\0';
	/* who is asking: the kernel's word, not the client's */
	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &credlen)) {
		logmsg("control: SO_PEERCRED: %s; request refused", strerror(errno));
		client_close(i);
		return 1;
	}
	if (handle_request(c->fd, cred.uid, c->req, &body, &len)) {
		/* a waiter: the target owns the fd now (its replies are short lines) */
		free(body);
		clients[i] = clients[--nr_clients_];
		return 1;
	}
	c->out = body ? body : strdup("");
	c->out_len = body ? len : 0;
	c->deadline = now() + bwapd.conf.client_timeout;
	if (client_write(c)) {
		client_close(i);
		return 1;
	}
	return 0;
}

void clients_poll_done(const struct pollfd *pf, double tnow)
{
	/* pf[i] belongs to the client at i when the poll began; go backwards, closing swaps in the last */
	for (int i = nr_clients_ - 1; i >= 0; i--) {
		struct client *c = &clients[i];

		if (pf[i].fd != c->fd)
			continue;
		if (pf[i].revents) {
			if (c->out) {
				if (client_write(c)) {
					client_close(i);
					continue;
				}
			} else if (client_read(c)) {
				if (client_serve(i))
					continue;
			}
		}
		if (tnow >= clients[i].deadline) {
			if (!clients[i].out)
				logmsg("control: a client (fd %d) sent no request within %g s; closed", clients[i].fd,
				       bwapd.conf.client_timeout);
			client_close(i);
		}
	}
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
	if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(listen_fd, SOMAXCONN) ||
	    fcntl(listen_fd, F_SETFL, O_NONBLOCK)) {
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
