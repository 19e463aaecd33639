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

/* The pid a pidfd names, in bwapd's PID namespace (its fdinfo's "Pid:"); -1 if fd is none or it exited. */
static long pidfd_pid(int fd)
{
	char path[64], *text, *p;
	long pid = -1;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	text = bwap_read_file(path, NULL);
	p = text ? strstr(text, "\nPid:") : NULL;
	if (p)
		pid = strtol(p + 5, NULL, 10);
	free(text);
	return pid > 0 ? pid : -1;
}

/* Is the client (pid from SO_PEERCRED) in bwapd's own PID namespace?  Its pid numbers mean ours then. */
static int same_pid_ns(pid_t peer)
{
	char a[64];
	struct stat mine, theirs;

	/* a kernel without PID namespaces (CONFIG_PID_NS=n) has one, and no ns files */
	if (stat("/proc/self/ns/pid", &mine))
		return errno == ENOENT;
	snprintf(a, sizeof(a), "/proc/%d/ns/pid", (int)peer);
	return !stat(a, &theirs) && mine.st_ino == theirs.st_ino && mine.st_dev == theirs.st_dev;
}

/*
 * The process a request names: "fd" (the first descriptor the client
 * passed, a pidfd: bwapctl passes one) or a number.  A number from a
 * client in another PID namespace means another process there, so it is
 * refused; and a user registering as a task itself ("how run", "how
 * slurm") names the asking process, which SO_PEERCRED tells.  The pid,
 * with *pidfd the passed pidfd or -1; -1 with why.
 */
static long named_pid(const struct ucred *cred, const struct bwapd_request *r, struct passed_fds *pf, int *pidfd,
		      char *why, size_t len)
{
	long pid;

	*pidfd = -1;
	if (r->target_fd) {
		if (pf->nr < 1) {
			snprintf(why, len, "'fd' names a process by a pidfd passed with the request, and none came");
			return -1;
		}
		*pidfd = pf->fd[0];
		pid = pidfd_pid(*pidfd);
		if (pid < 0)
			snprintf(why, len, "the descriptor passed is not a pidfd of a live process in bwapd's PID "
				 "namespace");
		return pid;
	}
	pid = r->pid;
	if (!same_pid_ns(cred->pid)) {
		snprintf(why, len, "the client is in another PID namespace, where pid %ld means another process: "
			 "pass a pidfd ('fd'), as bwapctl does", pid);
		return -1;
	}
	if (r->verb == REQ_ATTACH && cred->uid != 0 && (!strcmp(r->a.how, "run") || !strcmp(r->a.how, "slurm")) &&
	    pid != cred->pid) {
		snprintf(why, len, "a task registers itself: pid %ld is not the asking process (%d)", pid,
			 (int)cred->pid);
		return -1;
	}
	return pid;
}

/* Every pid an attach request names: the target and its protect PID. */
static int may_attach(uid_t uid, long pid, const struct attach_args *a, char *why, size_t len)
{
	if (may_act_on(uid, pid, why, len))
		return -1;
	if (a->protect && may_act_on(uid, a->protect, why, len))
		return -1;
	return 0;
}

/*
 * The target pid as uid may see it: its own, or any for root.  Another
 * user's target answers exactly as a pid that is no target, so that no
 * user learns which pids bwapd tunes for others.
 */
static struct target *own_target(uid_t uid, long pid)
{
	struct target *t = pid > 0 ? find_target((pid_t)pid) : NULL;

	return t && (uid == 0 || t->uid == uid) ? t : NULL;
}

/*
 * One request from the client cred on fd, with the descriptors it passed:
 * the reply in *body (malloc()ed, *len bytes).  Returns 1 when fd now
 * waits on a target (wait PID): the target answers and closes it later.
 */
static int handle_request(int fd, const struct ucred *cred, const char *req, struct passed_fds *pf,
			  char **body, size_t *len)
{
	uid_t uid = cred->uid;
	struct bwapd_request r;
	char why[256];
	FILE *f;
	int keep = 0, pidfd = -1;
	long pid = -1;

	*body = NULL;
	*len = 0;
	f = open_memstream(body, len);
	if (!f)
		return 0;
	if (bwapd_request_parse(req, 1, &r, why, sizeof(why)) ||
	    ((r.verb == REQ_ATTACH || r.verb == REQ_DETACH || r.verb == REQ_WAIT) &&
	     (pid = named_pid(cred, &r, pf, &pidfd, why, sizeof(why))) < 0)) {
		/* every detach is logged, this one too (Slurm's task_exit); the client's words are not echoed */
		if (!strncmp(req, "detach ", 7))
			logmsg("detach %.16s (uid %u): refused: %s", req + 7, (unsigned int)uid, why);
		if (!strncmp(req, "attach ", 7))
			bwapd.stats.refused_other++;
		if (!strncmp(why, "unknown request", 15))
			fprintf(f, "error: unknown request (requests: status, status json, attach PID|fd [workers SET] "
				   "[signal KIND] [progress fd] [protect PID] [phases fd phase-weights fd] [job N step N "
				   "task N] [children 0|1] [tune 0|1] [how attach|run|slurm], detach PID|fd, wait PID|fd "
				   "[pushes N], stats, stats json, ping)\n");
		else
			fprintf(f, "error: %s\n", why);
	} else if (r.nr_fds != pf->nr) {
		fprintf(f, "error: the request's words take %d descriptor(s) and %d came with it\n", r.nr_fds, pf->nr);
	} else if (r.verb == REQ_STATUS || r.verb == REQ_STATUS_JSON) {
		/* from what bwapd already knows: no scan, no walk of any target's memory */
		fprintf(f, "ok\n");
		status_print(f, r.verb == REQ_STATUS_JSON, uid);
	} else if (r.verb == REQ_STATS || r.verb == REQ_STATS_JSON) {
		fprintf(f, "ok\n");
		stats_print(f, r.verb == REQ_STATS_JSON, uid);
	} else if (r.verb == REQ_PING) {
		fprintf(f, "ok\npong\n");
	} else if (r.verb == REQ_ATTACH && may_attach(uid, pid, &r.a, why, sizeof(why))) {
		logmsg("attach %ld refused: %s", pid, why);
		if (strstr(why, "does not exist"))
			bwapd.stats.refused_noproc++;
		else
			bwapd.stats.refused_owner++;
		fprintf(f, "error: %s\n", why);
	} else if (r.verb == REQ_ATTACH) {
		char err[512];

		if (target_attach((pid_t)pid, pidfd, &r.a, pf, err, sizeof(err))) {
			logmsg("attach %ld (uid %u) refused: %s", pid, (unsigned int)uid, err);
			if (strstr(err, "max_targets"))
				bwapd.stats.refused_limit++;
			else if (strstr(err, "no such process"))
				bwapd.stats.refused_noproc++;
			else
				bwapd.stats.refused_other++;
			fprintf(f, "error: %s\n", err);
		} else {
			struct target *t = find_target((pid_t)pid);
			char ws[256];

			bwapd.stats.attaches++;
			fprintf(f, "ok\nbwapd tunes pid %ld: workers %s, start DWP %.3f, weights %s, signal: %s\n",
				pid, bwap_nodeset_format(t->workers, err, sizeof(err)), t->pushed_dwp,
				weights_str(&t->pushed, ws, sizeof(ws)), t->sig.label);
			if (t->note[0])
				fprintf(f, "note: %s\n", t->note);
			if (t->ids_unverified)
				fprintf(f, "note: the job and step ids are unverified: the process's cgroup names no "
					   "Slurm job\n");
		}
	} else if (r.verb == REQ_DETACH) {
		struct target *t = own_target(uid, pid);

		/* every detach is logged: Slurm's task_exit is seen even when the exit came first */
		if (!t) {
			logmsg("detach %ld (uid %u): not one of its targets (never attached, already dropped, or "
			       "another user's)", pid, (unsigned int)uid);
			fprintf(f, "error: pid %ld is not a target\n", pid);
		} else {
			logmsg("detach %ld (uid %u): detached", pid, (unsigned int)uid);
			bwapd.stats.detaches++;
			drop_target(t, "detached on request (its weights stay as last pushed)");
			fprintf(f, "ok\ndetached pid %ld\n", pid);
		}
	} else if (r.verb == REQ_WAIT) {
		struct target *t = own_target(uid, pid);
		long want = r.pushes;

		/* a followed target's new child (a wrapper's program) may ask before the next scan */
		if (!t && find_target((pid_t)pid) == NULL && follow_pid((pid_t)pid))
			t = own_target(uid, pid);
		if (!t)
			fprintf(f, "error: pid %ld is not a target\n", pid);
		/* a push the worker or DAMON is still placing is not done yet: push_done()/damon_tick() answer */
		else if (want > 0 && t->pushes >= want && !(t->damon_push && t->damon_push >= want))
			fprintf(f, "ok\npushed pid %ld dwp %.3f pushes %ld moved %ld state %s weights %s\n", pid,
				t->pushed_dwp, t->pushes, t->moved,
				t->cs.t.phase == BWAP_TUNER_SETTLED ? "settled" : "searching",
				weights_str(&t->pushed, why, sizeof(why)));
		else if (!want && t->cs.t.phase == BWAP_TUNER_SETTLED && t->cs.stage == 2 && !t->damon_push &&
			 !t->busy)
			fprintf(f, "ok\nconverged pid %ld dwp %.3f pushes %ld moved %ld\n", pid, t->cs.t.cur,
				t->pushes, t->moved);
		else if (t->nr_waiters >= MAX_WAITERS)
			fprintf(f, "error: too many clients wait for pid %ld\n", pid);
		else {
			t->waiter_pushes[t->nr_waiters] = want;
			t->waiter_uid[t->nr_waiters] = uid;
			t->waiter_deadline[t->nr_waiters] = now() + bwapd.conf.wait_timeout;
			t->waiters[t->nr_waiters++] = fd;
			keep = 1;
		}
	}
	fclose(f);
	return keep;
}

/*
 * The clients, served without blocking: a client's request is read as it
 * arrives, with any descriptors it passes (SCM_RIGHTS, at most
 * BWAPD_MAX_PASSED_FDS; more are closed and the request refused), its
 * reply written as the client takes it, and a client past
 * conf.client_timeout is closed.  A fd handed to a target as a waiter
 * (wait PID) leaves this list.
 */
struct client {
	int fd;
	uid_t uid;
	pid_t pid;
	double deadline;
	char req[1024];
	size_t n;
	struct passed_fds pf;
	int too_many_fds;
	int attach;		/* the request was an attach (its reply, if the client is gone, counts as late) */
	char *out;		/* the reply; NULL while reading */
	size_t out_len, out_off;
};

static struct client *clients;
static int nr_clients_, cap_clients;
static double accept_paused_until;	/* EMFILE: the listening socket rests until then */

int nr_clients(void)
{
	return nr_clients_;
}

static void close_passed(struct passed_fds *pf)
{
	for (int i = 0; i < pf->nr; i++)
		close(pf->fd[i]);
	pf->nr = pf->next = 0;
}

static void client_close(int i)
{
	close(clients[i].fd);
	close_passed(&clients[i].pf);
	free(clients[i].out);
	clients[i] = clients[--nr_clients_];
}

/* Connections uid holds: open clients and waits. */
static int connections_of(uid_t uid)
{
	int n = waiters_of_user(uid);

	for (int i = 0; i < nr_clients_; i++)
		n += clients[i].uid == uid;
	return n;
}

void accept_clients(void)
{
	double tnow = now();

	if (tnow < accept_paused_until)
		return;
	for (;;) {
		int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct ucred cred;
		socklen_t credlen = sizeof(cred);

		if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
			/*
			 * Out of descriptors: the connection stays queued and the
			 * socket readable, so rest it a while rather than spin;
			 * clients time out and free theirs meanwhile.
			 */
			static double last_said;

			if (tnow - last_said > 60) {
				logmsg("control: out of file descriptors (%s) with %d clients; not accepting for "
				       "0.1 s at a time (raise LimitNOFILE, or lower max_clients_per_user)",
				       strerror(errno), nr_clients_);
				last_said = tnow;
			}
			accept_paused_until = tnow + 0.1;
			return;
		}
		if (fd < 0)
			return;		/* EAGAIN: all taken */
		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &credlen)) {
			close(fd);
			continue;
		}
		if (cred.uid != 0 && connections_of(cred.uid) >= bwapd.conf.max_clients_per_user) {
			static double last_said;

			if (tnow - last_said > 10) {
				logmsg("control: uid %u holds %d connections, its max_clients_per_user; new ones "
				       "are closed", (unsigned int)cred.uid, bwapd.conf.max_clients_per_user);
				last_said = tnow;
			}
			close(fd);
			continue;
		}
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
		clients[nr_clients_].uid = cred.uid;
		clients[nr_clients_].pid = cred.pid;
		clients[nr_clients_++].deadline = tnow + bwapd.conf.client_timeout;
	}
}

int accept_paused(double *until)
{
	*until = accept_paused_until;
	return now() < accept_paused_until;
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
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return 0;
		if (n <= 0) {
			/* the client is gone: an attach it gave up on counts as late (the plugin's bound) */
			if (c->attach)
				bwapd.stats.late++;
			return 1;
		}
		c->out_off += n;
	}
	return 1;
}

/* Keep the descriptors of one message's SCM_RIGHTS, up to the limit; close the rest. */
static void take_fds(struct client *c, struct msghdr *mh)
{
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(mh); cm; cm = CMSG_NXTHDR(mh, cm)) {
		int n, *fds;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		fds = (int *)CMSG_DATA(cm);
		for (int i = 0; i < n; i++) {
			if (c->pf.nr < BWAPD_MAX_PASSED_FDS) {
				c->pf.fd[c->pf.nr++] = fds[i];
			} else {
				close(fds[i]);
				c->too_many_fds = 1;
			}
		}
	}
	if (mh->msg_flags & MSG_CTRUNC)
		c->too_many_fds = 1;	/* the kernel closed those that did not fit */
}

/* Read what is there; 1 when the request line is complete (or the client stopped sending). */
static int client_read(struct client *c)
{
	for (;;) {
		union {
			char buf[CMSG_SPACE(BWAPD_MAX_PASSED_FDS * sizeof(int))];
			struct cmsghdr align;
		} ctl;
		struct iovec iov = { c->req + c->n, sizeof(c->req) - 1 - c->n };
		struct msghdr mh = {
			.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf),
		};
		ssize_t got = recvmsg(c->fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0 && errno == EAGAIN)
			return 0;
		if (got >= 0)
			take_fds(c, &mh);
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
	struct ucred cred = { .pid = c->pid, .uid = c->uid };
	char *body = NULL;
	size_t len = 0;
	int keep = 0;

	c->req[c->n] = '\0';
	c->req[strcspn(c->req, "\n")] = '\0';
	if (c->too_many_fds) {
		const char *msg = "error: more descriptors than a request takes (at most 4); none was used\n";

		body = strdup(msg);
		len = body ? strlen(body) : 0;
	} else {
		c->attach = !strncmp(c->req, "attach ", 7);
		keep = handle_request(c->fd, &cred, c->req, &c->pf, &body, &len);
	}
	/* what the request did not keep (its target dups what it keeps) */
	close_passed(&c->pf);
	if (keep) {
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
				logmsg("control: a client (uid %u, fd %d) sent no request within %g s; closed",
				       (unsigned int)clients[i].uid, clients[i].fd, bwapd.conf.client_timeout);
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
