// SPDX-License-Identifier: GPL-2.0
/*
 * bwap.so's task side (task.c) on this host, as slurmstepd runs it: the
 * real topology, kernel and policy calls, a matrix in /tmp, and sockets
 * standing in for a bwapd that is absent, stopped or stalled.  Each case
 * runs in a child, so a policy it sets stays there.
 *  - a memory binding the task already has (task/affinity's --mem-bind)
 *    is refused, never replaced, and stays as it was;
 *  - weights over the nodes the task's cpuset allows (Mems_allowed): a
 *    4-node machine (a fake sysfs) where this host lets the task have
 *    node 0 only: the weights, and so the shares reported, are node 0's;
 *  - --bwap-tune where bwapd does not answer keeps the canonical weights
 *    and says so, rather than failing the task;
 *  - task exit with bwapd stalled (connections queued, never answered;
 *    a full queue) returns within a fraction of a second, and so do the
 *    exits of all 128 tasks of a step together.
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
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <pthread.h>

#include "tap.h"
#include "fake_bwapd.h"
#include "fake_sysfs.h"
#include "bwap_slurm.h"

#define MPOL_BIND_ 2
#define MPOL_WEIGHTED_INTERLEAVE_ 6

static char dir[64];

/* What one task_apply did in its child. */
struct result {
	int ret;
	int mode_after;		/* get_mempolicy's mode after it */
	int registered, tuned;	/* the outcome's */
	char msg[2048];
};

static void conf_for(struct bwap_slurm_conf *c, enum bwap_slurm_missing missing)
{
	char err[256];

	bwap_slurm_parse_conf(0, NULL, c, err, sizeof(err));
	c->missing = missing;
	snprintf(c->state_dir, sizeof(c->state_dir), "%s", dir);
	snprintf(c->matrix, sizeof(c->matrix), "%s/matrix", dir);
}

/* task_apply in a child whose policy is first set to mode over node 0 (0: left default). */
static void apply_in_child(const struct bwap_slurm_request *r, const struct bwap_slurm_conf *c, int mode,
			   struct result *res)
{
	int p[2], status;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	res->ret = -99;
	if (pipe(p))
		return;
	pid = fork();
	if (!pid) {
		struct bwap_slurm_outcome o;
		unsigned long mask = 1;
		int m = -1;

		close(p[0]);
		alarm(20);
		if (mode && syscall(SYS_set_mempolicy, mode, &mask, 2UL))
			snprintf(res->msg, sizeof(res->msg), "set_mempolicy(%d): %s", mode, strerror(errno));
		else
			res->ret = bwap_slurm_task_apply(r, c, &o, res->msg, sizeof(res->msg));
		res->registered = o.registered;
		res->tuned = o.tuned;
		syscall(SYS_get_mempolicy, &m, NULL, 0UL, NULL, 0UL);
		res->mode_after = m;
		if (write(p[1], res, sizeof(*res)) != sizeof(*res))
			_exit(1);
		_exit(0);
	}
	close(p[1]);
	if (read(p[0], res, sizeof(*res)) != sizeof(*res))
		snprintf(res->msg, sizeof(res->msg), "the child died before it answered");
	close(p[0]);
	waitpid(pid, &status, 0);
}

/*
 * task_forget of times tasks, one after another in one child (as
 * slurmstepd calls it for each task of its step), under alarm(); seconds
 * it took, or -1 if it hung.
 */
static double timed_forget(const struct bwap_slurm_conf *c, int times)
{
	double t0 = test_mono();
	int status;
	pid_t pid = fork();

	if (!pid) {
		alarm(30);
		for (int i = 0; i < times; i++)
			bwap_slurm_task_forget(c, getpid() + i);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	return WIFSIGNALED(status) ? -1 : test_mono() - t0;
}

/*
 * A bwapd that answers: each connection's request line is kept in
 * fake_reqs (one per line), and answered "ok" -- or, with fake_old, as a
 * bwapd from before "tune 0" answers an attach that has it.
 */
static int fake_lfd = -1, fake_old;
static char fake_reqs[4096];
static pthread_mutex_t fake_lock = PTHREAD_MUTEX_INITIALIZER;

static void *fake_serve(void *arg)
{
	int fd;

	while ((fd = accept(fake_lfd, NULL, NULL)) >= 0) {
		char line[512] = "";
		size_t n = 0;
		ssize_t got;
		const char *reply = "ok\nattached\n";

		while (n < sizeof(line) - 1 && (got = read(fd, line + n, sizeof(line) - 1 - n)) > 0) {
			n += got;
			if (memchr(line, '\n', n))
				break;
		}
		line[n] = '\0';
		pthread_mutex_lock(&fake_lock);
		if (strlen(fake_reqs) + n + 1 < sizeof(fake_reqs))
			strcat(fake_reqs, line);
		pthread_mutex_unlock(&fake_lock);
		if (fake_old && strstr(line, " tune "))
			reply = "error: unknown attach argument 'tune'\n";
		if (write(fd, reply, strlen(reply)) < 0)
			perror("fake bwapd");
		close(fd);
	}
	return NULL;
}

/* The requests the fake bwapd got since the last call, and forget them. */
static void fake_take(char *buf, size_t len)
{
	pthread_mutex_lock(&fake_lock);
	snprintf(buf, len, "%s", fake_reqs);
	fake_reqs[0] = '\0';
	pthread_mutex_unlock(&fake_lock);
}

/* reqs on one line, for the TAP line: "a\nb\n" as "a|b|" */
static const char *flat(const char *reqs)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf), "%s", reqs);
	for (char *p = buf; *p; p++)
		if (*p == '\n')
			*p = '|';
	return buf;
}

/*
 * Portable mode (a stock kernel whose global table differs): who tunes.
 * A task tuned only when it asked (--bwap-tune) and the site allows it;
 * with tune=deny nothing is tuned, BWAP_TUNED stays 0, and a bwapd that
 * cannot place without tuning places nothing.
 */
static void check_tuning(void)
{
	struct bwap_slurm_request r;
	struct bwap_slurm_conf c;
	struct result res;
	char reqs[4096], *av[1] = { "tune=deny" }, err[256];
	pthread_t th;

	fake_lfd = fake_bwapd_listen(dir, 64);
	if (fake_lfd < 0 || pthread_create(&th, NULL, fake_serve, NULL)) {
		SKIP("no fake bwapd");
		return;
	}
	setenv("BWAP_FORCE_PORTABLE", "1", 1);
	setenv("BWAP_SYSFS_WEIGHTS", "/nonexistent", 1);

	memset(&r, 0, sizeof(r));
	r.kind = BWAP_SLURM_CANONICAL;
	bwap_slurm_parse_conf(1, av, &c, err, sizeof(err));
	snprintf(c.state_dir, sizeof(c.state_dir), "%s", dir);
	snprintf(c.matrix, sizeof(c.matrix), "%s/matrix", dir);
	apply_in_child(&r, &c, 0, &res);
	fake_take(reqs, sizeof(reqs));
	CHECK(res.ret == 0 && res.registered && !res.tuned && strstr(reqs, "attach ") && strstr(reqs, " tune 0\n"),
	      "tune=deny, --bwap on a stock kernel (portable): bwapd places the task with 'tune 0', BWAP_TUNED=0 "
	      "(ret %d, registered %d, tuned %d; requests: %s): %s", res.ret, res.registered, res.tuned, flat(reqs), res.msg);

	fake_old = 1;
	apply_in_child(&r, &c, 0, &res);
	fake_take(reqs, sizeof(reqs));
	CHECK(res.ret == -1 && !res.tuned && strstr(res.msg, "tune=deny") && strstr(res.msg, "tune 0") &&
	      !strstr(reqs, "\nattach"),
	      "tune=deny, a bwapd without 'tune 0': the task is not handed over to be tuned; missing=fail fails it "
	      "with the reason (ret %d, requests: %s): %s", res.ret, flat(reqs), res.msg);

	c.tune_denied = 0;
	apply_in_child(&r, &c, 0, &res);
	fake_take(reqs, sizeof(reqs));
	CHECK(res.ret == 0 && res.registered && res.tuned && strstr(reqs, " tune 0\nattach ") &&
	      !strstr(strchr(reqs, '\n') + 1, " tune "),
	      "tune=allow, a bwapd without 'tune 0': asked again without it, tuned and BWAP_TUNED=1 says so "
	      "(ret %d, tuned %d; requests: %s)", res.ret, res.tuned, flat(reqs));

	fake_old = 0;
	r.tune = 1;
	apply_in_child(&r, &c, 0, &res);
	fake_take(reqs, sizeof(reqs));
	CHECK(res.ret == 0 && res.tuned && strstr(reqs, "attach ") && !strstr(reqs, " tune "),
	      "tune=allow, --bwap-tune: attached to be tuned, BWAP_TUNED=1 (tuned %d; requests: %s)", res.tuned, flat(reqs));

	unsetenv("BWAP_FORCE_PORTABLE");
	unsetenv("BWAP_SYSFS_WEIGHTS");
	shutdown(fake_lfd, SHUT_RDWR);
	close(fake_lfd);
	pthread_join(th, NULL);
}

/* A bwapd that closes each connection at once, unread: a client writing then gets EPIPE. */
static void *fake_hangup(void *arg)
{
	int fd;

	while ((fd = accept(fake_lfd, NULL, NULL)) >= 0)
		close(fd);
	return NULL;
}

/*
 * Task exit in slurmstepd (SIGPIPE not ignored there) against a bwapd
 * that hangs up before it reads: the detach fails, slurmstepd lives.
 * Whether the hang-up comes before the write is a race, so many tries,
 * each in a fresh child (after one failure a step stops trying).
 */
static void check_sigpipe(void)
{
	struct bwap_slurm_conf c;
	int killed = 0, tries = 300;
	pthread_t th;

	conf_for(&c, BWAP_MISSING_FAIL);
	fake_lfd = fake_bwapd_listen(dir, 64);
	if (fake_lfd < 0 || pthread_create(&th, NULL, fake_hangup, NULL)) {
		SKIP("no fake bwapd");
		return;
	}
	for (int i = 0; i < tries; i++) {
		int status;
		pid_t pid = fork();

		if (!pid) {
			signal(SIGPIPE, SIG_DFL);
			alarm(10);
			bwap_slurm_task_forget(&c, getpid());
			_exit(0);
		}
		waitpid(pid, &status, 0);
		killed += WIFSIGNALED(status) && WTERMSIG(status) == SIGPIPE;
	}
	shutdown(fake_lfd, SHUT_RDWR);
	close(fake_lfd);
	pthread_join(th, NULL);
	CHECK(!killed, "task exit against a bwapd that hangs up unread: slurmstepd never dies of SIGPIPE "
	      "(%d of %d tries killed)", killed, tries);
}

int main(void)
{
	struct bwap_slurm_request r;
	struct bwap_slurm_conf c;
	struct result res;
	char path[128];
	FILE *f;
	int lfd;

	snprintf(dir, sizeof(dir), "/tmp/bwap-task.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	signal(SIGPIPE, SIG_IGN);
	/* one memory node, as this host: canonical weights 0:1 */
	snprintf(path, sizeof(path), "%s/matrix", dir);
	f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "bwap-matrix 1\nnodes 1\nbw 0: 10000\n");
	fclose(f);

	memset(&r, 0, sizeof(r));
	r.kind = BWAP_SLURM_CANONICAL;
	conf_for(&c, BWAP_MISSING_RUN);
	apply_in_child(&r, &c, MPOL_BIND_, &res);
	CHECK(res.ret == -1 && strstr(res.msg, "--mem-bind") && res.mode_after == MPOL_BIND_,
	      "a task bound with MPOL_BIND (--mem-bind): refused, its binding kept (ret %d, mode after %d): %s",
	      res.ret, res.mode_after, res.msg);

	{
		char root[128], mems[64] = "?";
		FILE *st = fopen("/proc/self/status", "r");
		char line[512];

		while (st && fgets(line, sizeof(line), st))
			if (sscanf(line, "Mems_allowed_list: %63s", mems) == 1)
				break;
		if (st)
			fclose(st);
		if (strcmp(mems, "0")) {
			SKIP("the cpuset case wants a task allowed node 0 only (Mems_allowed_list here: %s)", mems);
		} else if (fake_sysfs_new(root, sizeof(root), "task", 4)) {
			SKIP("cannot make a fake sysfs");
		} else {
			/* the 4-node machine's matrix, canonical weights 2,2,1,1 for workers 0,1 */
			snprintf(path, sizeof(path), "%s/matrix", dir);
			f = fopen(path, "w");
			fprintf(f, "bwap-matrix 1\nunit GB/s\nnodes 4\nbw 0: 20 10 8 5\nbw 1: 10 20 5 8\n"
				   "bw 2: 8 5 20 10\nbw 3: 5 8 10 20\n");
			fclose(f);
			setenv("BWAP_SYSFS_ROOT", root, 1);
			memset(&r, 0, sizeof(r));
			r.kind = BWAP_SLURM_CANONICAL;
			conf_for(&c, BWAP_MISSING_RUN);
			apply_in_child(&r, &c, 0, &res);
			CHECK(strstr(res.msg, "weights 0:1 (canonical)") && strstr(res.msg, "allowed nodes 0"),
			      "4 memory nodes, the task's cpuset allows node 0: weights 0:1 over the allowed nodes "
			      "(ret %d): %s", res.ret, res.msg);
			memset(&r, 0, sizeof(r));
			r.kind = BWAP_SLURM_EXPLICIT;
			r.nodes = 0x3;
			r.w[0] = 5;
			r.w[1] = 3;
			apply_in_child(&r, &c, 0, &res);
			CHECK(res.ret == -1 && strstr(res.msg, "node 1, which this task's cpuset does not allow"),
			      "--bwap=0:5,1:3 where the cpuset allows node 0 only: refused (ret %d): %s", res.ret, res.msg);
			unsetenv("BWAP_SYSFS_ROOT");
			fake_sysfs_remove(root);
			f = fopen(path, "w");
			fprintf(f, "bwap-matrix 1\nnodes 1\nbw 0: 10000\n");
			fclose(f);
		}
	}

	memset(&r, 0, sizeof(r));
	r.kind = BWAP_SLURM_CANONICAL;
	if (bwap_kernel_mode() == BWAP_KERNEL_STOCK_WI) {
		/* no bwapd in dir; the global table (1 for node 0) equals the weights: mode 6 */
		r.tune = 1;
		conf_for(&c, BWAP_MISSING_FAIL);
		apply_in_child(&r, &c, 0, &res);
		CHECK(res.ret == 0 && res.mode_after == MPOL_WEIGHTED_INTERLEAVE_ && strstr(res.msg, "keeps") &&
		      strstr(res.msg, "not tuned"),
		      "--bwap-tune, bwapd absent: the task keeps its canonical weights (mode 6) and is told it is not "
		      "tuned (ret %d, mode after %d): %s", res.ret, res.mode_after, res.msg);
	} else {
		SKIP("the tuning fallback is checked on a stock kernel with weighted interleave (this is %s)",
		     bwap_kernel_mode_name(bwap_kernel_mode()));
	}

	check_tuning();
	check_sigpipe();

	conf_for(&c, BWAP_MISSING_FAIL);
	lfd = fake_bwapd_listen(dir, 16);
	{
		double took = timed_forget(&c, 1);

		CHECK(lfd >= 0 && took >= 0 && took < 0.5,
		      "task exit, bwapd stalled (request queued, never answered): returns in %.3f s (under 0.5 s)", took);
		took = timed_forget(&c, 128);
		CHECK(took >= 0 && took < 0.5, "the exits of a step's 128 tasks, bwapd stalled: %.3f s in all (under 0.5 s: "
		      "after one goes unanswered, the step's others do not wait)", took);
	}
	close(lfd);
	lfd = fake_bwapd_listen(dir, 0);
	{
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int fds[64], n = 0;
		double took;

		bwap_ctl_socket_path(dir, sa.sun_path, sizeof(sa.sun_path));
		while (n < 64) {
			int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);

			if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
				close(fd);
				break;
			}
			fds[n++] = fd;
		}
		took = timed_forget(&c, 1);
		CHECK(lfd >= 0 && took >= 0 && took < 0.5,
		      "task exit, bwapd's queue full (%d ahead): returns in %.3f s (under 0.5 s; -1 = hung)", n, took);
		while (n)
			close(fds[--n]);
	}
	close(lfd);
	/* a bwapd that takes every connection but has not answered yet: each task's detach still reaches it */
	lfd = fake_bwapd_listen(dir, 256);
	{
		double took = timed_forget(&c, 128);
		int got = 0, fd;

		fcntl(lfd, F_SETFL, O_NONBLOCK);
		while (lfd >= 0 && (fd = accept(lfd, NULL, NULL)) >= 0) {
			char line[64] = "";

			got += read(fd, line, sizeof(line) - 1) > 7 && !strncmp(line, "detach ", 7);
			close(fd);
		}
		CHECK(lfd >= 0 && took >= 0 && took < 0.5 && got == 128,
		      "the exits of a step's 128 tasks, bwapd not answering yet: all 128 detach requests reach its "
		      "queue (%d), in %.3f s", got, took);
	}
	close(lfd);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			return 1;
	}
	return tap_done();
}
