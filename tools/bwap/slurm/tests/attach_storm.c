// SPDX-License-Identifier: GPL-2.0
/*
 * attach_storm: a step's N tasks registering with a real bwapd at once,
 * each through task.c as bwap.so's task_init does (portable mode, so every
 * task is attached), optionally while bwapd also holds a target of BIG MiB
 * that it pushes (attached first, as 'bwapctl attach' does).  Prints TAP:
 * every task answered within the plugin's bound (BWAP_SLURM_ATTACH_MS),
 * with the latencies, and bwapd's CPU time per attach.
 *   attach_storm BWAPD STATE_DIR N [BIG_MIB [LIMIT_MS]]
 * LIMIT_MS: the bound each task_apply must keep (default the plugin's
 * BWAP_SLURM_ATTACH_MS; it includes the task's own work, some 0.1-0.3 s).
 * The 128-task step of scripts/test-slurm (step 13) is this on a TCG guest.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tap.h"
#include "fake_bwapd.h"
#include "bwap_slurm.h"

struct res {
	int ret, registered;
	double ms;
	char msg[2048];
};

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* bwapd's CPU seconds (utime + stime) */
static double cpu_of(pid_t pid)
{
	struct bwap_proc_stat st;

	return bwap_proc_stat(pid, &st) ? -1 : st.cpu_seconds;
}

int main(int argc, char **argv)
{
	int n = argc > 3 ? atoi(argv[3]) : 128, big = argc > 4 ? atoi(argv[4]) : 0, rp[2], go[2], ready[2];
	int limit = argc > 5 ? atoi(argv[5]) : BWAP_SLURM_ATTACH_MS;
	const char *dir = argc > 2 ? argv[2] : NULL;
	struct bwap_slurm_conf c;
	pid_t bwapd, *kids, bigpid = 0;
	struct res *res;
	double *ms, cpu0, cpu1;
	char path[600], err[256], line[16] = "";
	int failed = 0, late = 0;
	FILE *f;

	if (argc < 4 || n < 1 || n > 1024) {
		fprintf(stderr, "usage: attach_storm BWAPD STATE_DIR N [BIG_MIB]\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/matrix", dir);
	f = fopen(path, "w");
	fprintf(f, "bwap-matrix 1\nnodes 1\nbw 0: 10000\n");
	fclose(f);
	snprintf(path, sizeof(path), "%s/bwapd.conf", dir);
	f = fopen(path, "w");
	fclose(f);
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(300);	/* never a hung test */
	if (pipe(ready))
		return 1;
	bwapd = fork();
	if (!bwapd) {
		char fd[16], log[600];

		snprintf(fd, sizeof(fd), "%d", ready[1]);
		snprintf(log, sizeof(log), "%s/bwapd.log", dir);
		freopen(log, "w", stderr);
		close(ready[0]);
		execl(argv[1], argv[1], "--config", path, "--state-dir", dir, "--set", "interval=1", "--ready-fd", fd,
		      (char *)NULL);
		_exit(127);
	}
	close(ready[1]);
	if (read(ready[0], line, sizeof(line) - 1) <= 0 || strncmp(line, "ready", 5)) {
		fprintf(stderr, "attach_storm: bwapd did not start (see %s/bwapd.log)\n", dir);
		return 1;
	}
	bwap_slurm_parse_conf(0, NULL, &c, err, sizeof(err));
	snprintf(c.state_dir, sizeof(c.state_dir), "%s", dir);
	snprintf(c.matrix, sizeof(c.matrix), "%s/matrix", dir);
	setenv("BWAP_FORCE_PORTABLE", "1", 1);
	setenv("BWAP_SYSFS_WEIGHTS", "/nonexistent", 1);

	if (big > 0) {
		/* a target of BIG MiB, attached the way 'bwapctl attach' does: bwapd pushes it at once and after */
		int bp[2];

		if (pipe(bp))
			return 1;
		bigpid = fork();
		if (!bigpid) {
			size_t len = (size_t)big << 20;
			char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (m != MAP_FAILED) {
				madvise(m, len, MADV_NOHUGEPAGE);
				for (size_t i = 0; i < len; i += 4096)
					m[i] = 1;
			}
			if (write(bp[1], "x", 1) != 1)
				_exit(1);
			pause();
			_exit(0);
		}
		if (read(bp[0], line, 1) != 1)
			return 1;
		/* its attach (and push) goes on in a child while the tasks attach */
		if (!fork()) {
			char req[64], *reply;
			double t0 = test_mono();

			snprintf(req, sizeof(req), "attach %d workers 0", (int)bigpid);
			reply = bwap_ctl_request_timeout(dir, req, 600000, err, sizeof(err));
			printf("# the %d MiB target's attach took %.3f s: %s", big, test_mono() - t0,
			       reply ? reply : err);
			_exit(0);
		}
		usleep(200 * 1000);	/* bwapd has it, and pushes */
	}

	res = mmap(NULL, n * sizeof(*res), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	kids = calloc(n, sizeof(*kids));
	ms = calloc(n, sizeof(*ms));
	if (pipe(rp) || pipe(go))
		return 1;
	for (int i = 0; i < n; i++) {
		kids[i] = fork();
		if (!kids[i]) {
			struct bwap_slurm_request r;
			struct bwap_slurm_outcome o;
			char msg[2048], x;
			double t0;

			close(go[1]);
			if (read(go[0], &x, 1) < 0)	/* all start together: EOF when the parent closes it */
				_exit(1);
			memset(&r, 0, sizeof(r));
			r.kind = BWAP_SLURM_CANONICAL;
			r.job = 1;
			r.task = i;
			t0 = test_mono();
			res[i].ret = bwap_slurm_task_apply(&r, &c, &o, msg, sizeof(msg));
			res[i].ms = (test_mono() - t0) * 1000;
			res[i].registered = o.registered;
			snprintf(res[i].msg, sizeof(res[i].msg), "%s", msg);
			if (write(rp[1], "x", 1) != 1)
				_exit(1);
			pause();	/* a task that runs on, as the probe does */
			_exit(0);
		}
	}
	close(go[0]);
	close(rp[1]);
	cpu0 = cpu_of(bwapd);
	close(go[1]);
	for (int i = 0; i < n; i++)
		if (read(rp[0], line, 1) != 1)
			break;
	cpu1 = cpu_of(bwapd);
	for (int i = 0; i < n; i++) {
		ms[i] = res[i].ms;
		failed += res[i].ret != 0 || !res[i].registered;
		late += res[i].ms > limit;
		if (res[i].ret != 0 && failed < 4)
			printf("# task %d: %s\n", i, res[i].msg);
	}
	qsort(ms, n, sizeof(*ms), cmp);
	printf("# %d tasks: attach latency median %.1f ms, 90%% %.1f ms, max %.1f ms; bwapd CPU %.3f s (%.2f ms a task)\n",
	       n, ms[n / 2], ms[n * 9 / 10], ms[n - 1], cpu1 - cpu0, (cpu1 - cpu0) * 1000 / n);
	CHECK(!failed && !late, "%d tasks attaching at once%s: each registered within %d ms (%d failed, "
	      "%d late, max %.1f ms)", n, big ? " while bwapd attaches and pushes a large target" : "", limit, failed,
	      late, ms[n - 1]);
	for (int i = 0; i < n; i++) {
		kill(kids[i], SIGKILL);
		waitpid(kids[i], NULL, 0);
	}
	if (bigpid) {
		kill(bigpid, SIGKILL);
		waitpid(bigpid, NULL, 0);
	}
	kill(bwapd, SIGTERM);
	waitpid(bwapd, NULL, 0);
	return tap_done();
}
