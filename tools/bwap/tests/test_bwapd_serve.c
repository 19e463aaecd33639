// SPDX-License-Identifier: GPL-2.0
/*
 * bwapd as a Slurm node runs it: the real daemon (../bwapd) in a state
 * directory under /tmp, many registered tasks, clients that connect and
 * say nothing, and users who must not see each other's processes.
 *  - 130 tasks of one node (more than the old 64 slots) all attached;
 *  - a per-user limit: the 4th task of a user with max_targets_per_user=3
 *    is refused with the reason, another user's is still taken (root);
 *  - 20 silent clients do not delay a ping: it is answered while they
 *    still hold their connections, and bwapd closes them at its deadline;
 *  - Slurm's job, step and task ids are kept and shown by status;
 *  - a user other than root sees only their own targets in status
 *    (root only: needs a second uid);
 *  - every detach request is in bwapd's log, also for a task that had
 *    already exited;
 *  - a task attached with "children 1" (a wrapper, mpirun's daemon)
 *    brings its child and grandchild along, each marked with its parent;
 *  - a Slurm task, registered before its exec ("how slurm"), is answered
 *    without a push: its pages are the ones exec discards, and reading
 *    them for every task of a large job made the start storm time out;
 *  - a child such a task starts after its attach can be waited on at
 *    once ("wait CHILD pushes 1", as bwap-slurm-probe --self-check under
 *    a wrapper asks), not only after bwapd's next scan for descendants;
 *  - a task whose cpuset allows fewer nodes than the machine has (a 4-node
 *    fake sysfs, this host's node 0 allowed) gets weights on those only.
 * bwapd runs with --ready-fd, so nothing waits on a clock to start.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <json-c/json.h>

#include "bwap.h"
#include "tap.h"
#include "fake_bwapd.h"
#include "real_bwapd.h"
#include "fake_sysfs.h"

#define NR_TASKS 130
#define NR_SILENT 20

static char dir[64], logpath[128];
static pid_t daemon_pid;
static pid_t tasks[NR_TASKS + 1];
static int hold[2];	/* the tasks block reading hold[0]; closing hold[1] ends them */

static const char *matrix_text;	/* NULL: one node; cpuset_nodes() gives a 4-node one */

/* bwapd with extra --set options; 0 once it said "ready", -1 if it exited first. */
static int start_bwapd(const char *const *sets)
{
	return real_bwapd_start(dir, logpath, matrix_text, sets, 0, &daemon_pid);
}

static void stop_bwapd(void)
{
	if (daemon_pid > 0) {
		kill(daemon_pid, SIGTERM);
		waitpid(daemon_pid, NULL, 0);
	}
	daemon_pid = 0;
}

/* A reply's first line is "ok"; err gets the reply or the client's error. */
static char *request(const char *req, char *err, size_t errlen)
{
	char *r = bwap_ctl_request_timeout(dir, req, 10000, err, errlen);

	if (r)
		snprintf(err, errlen, "%.*s", (int)strcspn(r, "\n"), r);
	return r;
}

static int attach(pid_t pid, const char *extra, char *err, size_t errlen)
{
	char req[256], *r;
	int ok;

	snprintf(req, sizeof(req), "attach %d workers 0 signal model how slurm%s%s", (int)pid,
		 extra ? " " : "", extra ? extra : "");
	r = request(req, err, errlen);
	ok = r && !strncmp(r, "ok\n", 3);
	free(r);
	return ok ? 0 : -1;
}

/* Processes that wait, as tasks do; their number in tasks[]. */
static int spawn_tasks(int n)
{
	if (pipe(hold))
		return 0;
	for (int i = 0; i < n; i++) {
		char c;

		tasks[i] = fork();
		if (!tasks[i]) {
			close(hold[1]);
			if (read(hold[0], &c, 1) < 0)
				_exit(1);
			_exit(0);
		}
		if (tasks[i] < 0)
			return i;
	}
	close(hold[0]);
	return n;
}

static void end_tasks(int n)
{
	close(hold[1]);
	for (int i = 0; i < n; i++)
		waitpid(tasks[i], NULL, 0);
}

static int connect_silent(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	bwap_ctl_socket_path(dir, sa.sun_path, sizeof(sa.sun_path));
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

static int log_has(const char *what)
{
	char *text = bwap_read_file(logpath, NULL);
	int has = text && strstr(text, what);

	free(text);
	return has;
}

static void many_tasks(void)
{
	char err[512], ids_err[512], *r;
	int n = spawn_tasks(NR_TASKS + 1), attached = 0, first_refusal = -1, ids_ok;
	struct json_object *root, *list, *t = NULL, *v;
	pid_t slurm_task = tasks[NR_TASKS];

	CHECK(n == NR_TASKS + 1, "%d waiting tasks forked", n);
	for (int i = 0; i < NR_TASKS; i++) {
		if (!attach(tasks[i], NULL, err, sizeof(err)))
			attached++;
		else if (first_refusal < 0)
			first_refusal = i, fprintf(stderr, "# task %d refused: %s\n", i + 1, err);
	}
	CHECK(attached == NR_TASKS, "all %d tasks of one node attached (%d were; the first refused: task %d%s%s)",
	      NR_TASKS, attached, first_refusal + 1, first_refusal >= 0 ? ": " : "", first_refusal >= 0 ? err : "");
	ids_ok = !attach(slurm_task, "job 4242 step 3 task 129", ids_err, sizeof(ids_err));
	CHECK(ids_ok, "a task attached with Slurm's job 4242, step 3, task 129: %s", ids_err);
	attached += ids_ok;

	r = request("status json", err, sizeof(err));
	root = r ? json_tokener_parse(r + 3) : NULL;
	list = root && json_object_object_get_ex(root, "targets", &list) ? list : NULL;
	CHECK(list && json_object_array_length(list) == (size_t)attached, "status json lists %zu targets (want %d)",
	      list ? json_object_array_length(list) : 0, attached);
	for (size_t i = 0; list && i < json_object_array_length(list); i++)
		if (json_object_object_get_ex(json_object_array_get_idx(list, i), "pid", &v) &&
		    json_object_get_int(v) == slurm_task)
			t = json_object_array_get_idx(list, i);
	CHECK(t && json_object_object_get_ex(t, "job", &v) && json_object_get_int(v) == 4242 &&
	      json_object_object_get_ex(t, "step", &v) && json_object_get_int(v) == 3 &&
	      json_object_object_get_ex(t, "task", &v) && json_object_get_int(v) == 129,
	      "status json: pid %d has job 4242, step 3, task 129 (%.300s)", (int)slurm_task,
	      t ? json_object_to_json_string(t) : "not a target");
	json_object_put(root);
	free(r);
	r = request("status", err, sizeof(err));
	CHECK(r && strstr(r, "slurm job 4242.3 task 129"), "status text names the Slurm job, step and task");
	free(r);

	/* A silent client per connection must not hold up the others. */
	{
		int silent[NR_SILENT], open_ = 0, closed = 0;
		double t0, took;

		for (int i = 0; i < NR_SILENT; i++)
			open_ += (silent[i] = connect_silent()) >= 0;
		t0 = test_mono();
		r = request("ping", err, sizeof(err));
		took = test_mono() - t0;
		CHECK(open_ == NR_SILENT && r && !strcmp(err, "ok") && took < 1.0,
		      "%d silent clients connected, then a ping: answered '%s' in %.3f s (under 1 s)", open_, err, took);
		free(r);
		/* bwapd closes each at its deadline: EOF, never an answer */
		for (int i = 0; i < NR_SILENT; i++) {
			struct pollfd p = { .fd = silent[i], .events = POLLIN };
			char c;

			if (silent[i] >= 0 && poll(&p, 1, 10000) == 1 && read(silent[i], &c, 1) == 0)
				closed++;
			close(silent[i]);
		}
		CHECK(closed == NR_SILENT, "bwapd closed all %d silent clients (%d)", NR_SILENT, closed);
	}

	/* Another user's view: none of root's processes. */
	if (getuid() == 0) {
		int p[2], status;
		char buf[8192] = "";
		pid_t c;

		chmod(dir, 0755);
		if (pipe(p) == 0 && (c = fork()) == 0) {
			char *reply;

			close(p[0]);
			if (setgid(65534) || setuid(65534))
				_exit(2);
			reply = bwap_ctl_request_timeout(dir, "status json", 10000, err, sizeof(err));
			if (write(p[1], reply ? reply : err, strlen(reply ? reply : err)) < 0)
				_exit(3);
			_exit(0);
		}
		close(p[1]);
		for (size_t got = 0, k; (k = read(p[0], buf + got, sizeof(buf) - 1 - got)) > 0 && k != (size_t)-1;)
			got += k;
		close(p[0]);
		wait(&status);
		root = !strncmp(buf, "ok\n", 3) ? json_tokener_parse(buf + 3) : NULL;
		list = root && json_object_object_get_ex(root, "targets", &list) ? list : NULL;
		CHECK(list && json_object_array_length(list) == 0 &&
		      json_object_object_get_ex(root, "other_users_targets", &v) && json_object_get_int(v) == attached,
		      "uid 65534's status: no target of uid 0, only their number (%.200s)", buf);
		json_object_put(root);
	} else {
		SKIP("another user's view of status needs root (a second uid)");
	}

	r = request("detach 999999999", err, sizeof(err));
	free(r);
	snprintf(err, sizeof(err), "detach %d", (int)tasks[5]);
	r = request(err, err, sizeof(err));
	CHECK(r && !strncmp(r, "ok\n", 3), "detach of a task: %s", err);
	free(r);
	{
		char want[64];

		snprintf(want, sizeof(want), "detach %d (uid %u): detached", (int)tasks[5], (unsigned int)getuid());
		CHECK(log_has(want) && log_has("detach 999999999 (uid"), "bwapd's log records both detach requests "
		      "(\"%s\", and the one for a pid it never had)", want);
	}
	end_tasks(n);
	stop_bwapd();
}

/*
 * Parent side of a child that writes a byte to @ready once it is in place
 * and then waits on @stay: wait for that byte; the caller releases the
 * child by closing @stay[1].
 */
static void wait_ready(int ready[2], int stay[2])
{
	char c;

	close(stay[0]);
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		c = 0;
	close(ready[0]);
}

static void per_user_limit(void)
{
	const char *sets[] = { "max_targets_per_user=3", NULL };
	char err[512];
	int n, ok = 0;

	CHECK(!start_bwapd(sets), "bwapd starts with max_targets_per_user=3 (log: %s)", logpath);
	if (!daemon_pid)
		return;
	n = spawn_tasks(4);
	for (int i = 0; i < 3; i++)
		ok += !attach(tasks[i], NULL, err, sizeof(err));
	CHECK(ok == 3, "a user's first 3 tasks attached");
	snprintf(err, sizeof(err), "uid %u already has 3 targets", (unsigned int)getuid());
	{
		char want[512], got[512];

		snprintf(want, sizeof(want), "%s", err);
		CHECK(attach(tasks[3], NULL, got, sizeof(got)) && strstr(got, want) && strstr(got, "max_targets_per_user"),
		      "the 4th is refused: \"%s\"", got);
	}
	if (getuid() == 0) {
		/* a process of uid 65534: its own count, not root's; it says when it is that uid */
		int stay[2], ready[2];
		pid_t other;
		char c;

		if (pipe(stay) || pipe(ready))
			return;
		other = fork();
		if (!other) {
			close(stay[1]);
			close(ready[0]);
			if (setgid(65534) || setuid(65534) || write(ready[1], "r", 1) != 1 || read(stay[0], &c, 1) < 0)
				_exit(1);
			_exit(0);
		}
		wait_ready(ready, stay);
		CHECK(!attach(other, NULL, err, sizeof(err)), "uid 65534's task is still taken: %s", err);
		close(stay[1]);
		waitpid(other, NULL, 0);
	} else {
		SKIP("another user's task under the limit needs root (a second uid)");
	}
	end_tasks(n);
	stop_bwapd();
}

static void descendants(void)
{
	int ready[2], stay[2], nr = 0, parent_ok = 0;
	char err[512], c, *r;
	struct json_object *js, *list, *v;
	pid_t wrapper;

	CHECK(!start_bwapd(NULL), "bwapd starts for the descendants' case");
	if (pipe(ready) || pipe(stay))
		return;
	/* wrapper -> child -> grandchild; the grandchild says when all three are there */
	wrapper = fork();
	if (!wrapper) {
		close(stay[1]);
		close(ready[0]);
		for (int depth = 0; depth < 2; depth++)
			if (fork())
				break;
			else if (depth == 1 && write(ready[1], "r", 1) != 1)
				_exit(1);
		if (read(stay[0], &c, 1) < 0)
			_exit(1);
		while (wait(NULL) > 0)
			;
		_exit(0);
	}
	wait_ready(ready, stay);
	snprintf(err, sizeof(err), "attach %d workers 0 signal model how slurm children 1", (int)wrapper);
	r = request(err, err, sizeof(err));
	CHECK(r && !strncmp(r, "ok\n", 3), "a wrapper attached with children 1: %s", err);
	free(r);
	/*
	 * bwapd finds descendants at its periodic scan, or when one is
	 * asked about: ask about the child, then the grandchild (each is a
	 * followed target's child once the one before is taken).
	 */
	for (pid_t p = wrapper; p > 0;) {
		char path[64], *kids, q[64], *a;

		snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)p, (int)p);
		kids = bwap_read_file(path, NULL);
		p = kids ? (pid_t)atoi(kids) : 0;
		free(kids);
		if (p <= 0)
			break;
		snprintf(q, sizeof(q), "wait %d pushes 1", (int)p);
		a = request(q, err, sizeof(err));
		free(a);
	}
	r = request("status json", err, sizeof(err));
	js = r ? json_tokener_parse(r + 3) : NULL;
	if (js && json_object_object_get_ex(js, "targets", &list)) {
		nr = json_object_array_length(list);
		for (int i = 0; i < nr; i++)
			parent_ok += json_object_object_get_ex(json_object_array_get_idx(list, i), "parent", &v) &&
				     json_object_get_int(v) > 0;
	}
	CHECK(nr == 3 && parent_ok == 2, "status lists the wrapper, its child and its grandchild (%d targets, %d "
	      "with a parent)", nr, parent_ok);
	json_object_put(js);
	free(r);
	close(stay[1]);
	waitpid(wrapper, NULL, 0);
	stop_bwapd();
}

/* A task registered before its exec (how slurm): answered without reading or moving its pages. */
static void slurm_attach_no_start_push(void)
{
	char err[512], *r;
	struct json_object *js = NULL, *list, *v;
	long pushes = -1;
	int n;

	CHECK(!start_bwapd(NULL), "bwapd starts for the pre-exec registration (log: %s)", logpath);
	if (!daemon_pid)
		return;
	n = spawn_tasks(1);
	CHECK(!attach(tasks[0], "job 7 step 0 task 0", err, sizeof(err)), "a Slurm task attached: %s", err);
	r = request("status json", err, sizeof(err));
	js = r ? json_tokener_parse(r + 3) : NULL;
	if (js && json_object_object_get_ex(js, "targets", &list) && json_object_array_length(list) == 1 &&
	    json_object_object_get_ex(json_object_array_get_idx(list, 0), "pushes", &v))
		pushes = json_object_get_int64(v);
	CHECK(pushes == 0, "no push at a Slurm task's attach: its first comes after its exec (pushes %ld)", pushes);
	json_object_put(js);
	free(r);
	end_tasks(n);
	stop_bwapd();
}

/* A child the wrapper starts after its attach: "wait CHILD" finds it at once, not after the next scan. */
static void descendant_waited_at_once(void)
{
	/* no scan for descendants falls due while the test runs */
	const char *sets[] = { "cgroup_scan=3600", NULL };
	int go[2], told[2], stay[2];
	char err[512], c, *r, want[64];
	pid_t wrapper, child = 0;
	int ok;

	CHECK(!start_bwapd(sets), "bwapd starts with cgroup_scan=3600 (log: %s)", logpath);
	if (!daemon_pid || pipe(go) || pipe(told) || pipe(stay))
		return;
	wrapper = fork();
	if (!wrapper) {
		pid_t k;

		close(go[1]);
		close(told[0]);
		close(stay[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		k = fork();
		if (!k) {
			if (read(stay[0], &c, 1) < 0)
				_exit(1);
			_exit(0);
		}
		if (write(told[1], &k, sizeof(k)) != sizeof(k))
			_exit(1);
		waitpid(k, NULL, 0);
		_exit(0);
	}
	close(go[0]);
	close(told[1]);
	close(stay[0]);
	CHECK(!attach(wrapper, "children 1", err, sizeof(err)), "a wrapper attached with children 1: %s", err);
	/* only now the wrapper starts its program */
	if (write(go[1], "g", 1) != 1 || read(told[0], &child, sizeof(child)) != sizeof(child))
		child = 0;
	snprintf(want, sizeof(want), "ok\npushed pid %d ", (int)child);
	snprintf(err, sizeof(err), "wait %d pushes 1", (int)child);
	r = request(err, err, sizeof(err));
	ok = child > 0 && r && !strncmp(r, want, strlen(want));
	/* the reply on one TAP line */
	for (char *q = r; q && *q; q++)
		if (*q == '\n')
			*q = ' ';
	CHECK(ok, "wait for the wrapper's child %d, started after the attach: answered with its first push (%s)",
	      (int)child, r ? r : err);
	free(r);
	close(stay[1]);
	close(go[1]);
	close(told[0]);
	waitpid(wrapper, NULL, 0);
	stop_bwapd();
}

static void cpuset_nodes(void)
{
	char root[128], err[512], *r;
	struct json_object *js = NULL, *list, *w = NULL, *t;
	int n, ok;

	if (strcmp(bwap_nodeset_format(bwap_mems_allowed(0), err, sizeof(err)), "0")) {
		SKIP("the cpuset case wants this process allowed node 0 only (it has %s)", err);
		return;
	}
	if (fake_sysfs_new(root, sizeof(root), "serve", 4)) {
		SKIP("cannot make a fake sysfs");
		return;
	}
	/* the 4-node machine: canonical weights 2,2,1,1 for workers 0,1 over all its nodes */
	matrix_text = "bwap-matrix 1\nunit GB/s\nnodes 4\nbw 0: 20 10 8 5\nbw 1: 10 20 5 8\n"
		      "bw 2: 8 5 20 10\nbw 3: 5 8 10 20\n";
	setenv("BWAP_SYSFS_ROOT", root, 1);
	ok = !start_bwapd(NULL);
	unsetenv("BWAP_SYSFS_ROOT");
	CHECK(ok, "bwapd starts on a 4-node machine (fake sysfs)");
	n = spawn_tasks(1);
	snprintf(err, sizeof(err), "attach %d workers 0,1 signal model", (int)tasks[0]);
	free(request(err, err, sizeof(err)));
	r = request("status json", err, sizeof(err));
	js = r ? json_tokener_parse(r + 3) : NULL;
	if (js && json_object_object_get_ex(js, "targets", &list) && json_object_array_length(list) == 1) {
		t = json_object_array_get_idx(list, 0);
		json_object_object_get_ex(t, "weights", &w);
	}
	CHECK(w && json_object_array_length(w) == 4 && json_object_get_int(json_object_array_get_idx(w, 0)) > 0 &&
	      !json_object_get_int(json_object_array_get_idx(w, 1)) && !json_object_get_int(json_object_array_get_idx(w, 2)) &&
	      !json_object_get_int(json_object_array_get_idx(w, 3)),
	      "a task allowed node 0 of 4: weights on node 0 only (%s)", w ? json_object_to_json_string(w) : err);
	json_object_put(js);
	free(r);
	end_tasks(n);
	stop_bwapd();
	fake_sysfs_remove(root);
}


/*
 * A large push runs while others are served: a target with 256 MiB of
 * resident anonymous memory is attached (its start push, a portable
 * placement, lists and queries every page); the attach and the pings
 * sent meanwhile are each answered in under a quarter of the push's
 * time.  A loop that did the push itself would answer the attach only
 * after it.  Relative, not a fixed bound, so a loaded machine slows both
 * sides alike.
 */
static void large_push_does_not_block(void)
{
	int ready[2], stay[2];
	double t0, attach_s, worst = 0, push_s;
	char err[512], c, *r, req[64];
	pid_t big;
	int pings = 0;

	CHECK(!start_bwapd(NULL), "bwapd starts for the large push (log: %s)", logpath);
	if (!daemon_pid || pipe(ready) || pipe(stay))
		return;
	big = fork();
	if (!big) {
		size_t len = 256UL << 20;
		char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		close(stay[1]);
		close(ready[0]);
		if (m == MAP_FAILED)
			_exit(1);
		madvise(m, len, MADV_NOHUGEPAGE);	/* base pages: the listing is the push's cost */
		for (size_t i = 0; i < len; i += 4096)
			m[i] = 1;
		if (write(ready[1], "r", 1) != 1 || read(stay[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	wait_ready(ready, stay);
	t0 = test_mono();
	snprintf(req, sizeof(req), "attach %d workers 0 signal model", (int)big);
	r = request(req, err, sizeof(err));
	attach_s = test_mono() - t0;
	CHECK(r && !strncmp(r, "ok\n", 3), "attach of a 256 MiB target answered ok in %.3f s (%s)", attach_s, err);
	free(r);
	/* pings until the start push is done: "wait PID pushes 1" answers then */
	for (int i = 0; i < 10; i++) {
		double p0 = test_mono();

		r = request("ping", err, sizeof(err));
		if (r && !strcmp(r, "ok\npong\n"))
			pings++;
		if (test_mono() - p0 > worst)
			worst = test_mono() - p0;
		free(r);
	}
	snprintf(req, sizeof(req), "wait %d pushes 1", (int)big);
	r = bwap_ctl_request_timeout(dir, req, 300000, err, sizeof(err));
	push_s = test_mono() - t0;
	CHECK(r && strstr(r, "pushed pid"), "the push itself took %.2f s (%s)", push_s, err);
	CHECK(attach_s * 4 < push_s, "the attach (%.3f s) answered in under a quarter of the push's %.2f s",
	      attach_s, push_s);
	CHECK(pings == 10 && worst * 4 < push_s, "10 pings during the push, the slowest (%.3f s) under a quarter of it",
	      worst);
	free(r);
	close(stay[1]);
	waitpid(big, NULL, 0);
	stop_bwapd();
}

/* A restart keeps the targets: the next bwapd takes back the ones still running. */
static void restart_keeps_targets(void)
{
	char err[512], *r, want[64];
	int n;

	CHECK(!start_bwapd(NULL), "bwapd starts for the restart case (log: %s)", logpath);
	if (!daemon_pid)
		return;
	n = spawn_tasks(2);
	CHECK(!attach(tasks[0], "job 9 step 0 task 0", err, sizeof(err)) && !attach(tasks[1], NULL, err, sizeof(err)),
	      "two tasks attached: %s", err);
	r = request("detach 999999", err, sizeof(err));	/* a request, so the loop has turned once */
	free(r);
	stop_bwapd();
	CHECK(!start_bwapd(NULL), "bwapd starts again");
	r = request("status json", err, sizeof(err));
	snprintf(want, sizeof(want), "\"pid\": %d,", (int)tasks[0]);
	{
		char want2[64];

		snprintf(want2, sizeof(want2), "\"pid\": %d,", (int)tasks[1]);
		CHECK(r && strstr(r, want) && strstr(r, want2) && strstr(r, "\"job\": 9"),
		      "the restarted bwapd has both tasks back, job id and all");
	}
	free(r);
	CHECK(log_has("2 target(s) taken back"), "its log says it took 2 targets back");
	/* first: the second bwapd, started after the tasks, holds their pipe's write end too */
	stop_bwapd();
	end_tasks(n);
}

/* attach ... tune 0 places without tuning; stats counts attaches, refusals and jobs without a scan. */
static void tune0_and_stats(void)
{
	char err[512], *r;
	int n;

	CHECK(!start_bwapd(NULL), "bwapd starts for tune 0 and stats (log: %s)", logpath);
	if (!daemon_pid)
		return;
	n = spawn_tasks(2);
	CHECK(!attach(tasks[0], "tune 0 job 31 step 0 task 0", err, sizeof(err)), "attach with tune 0: %s", err);
	CHECK(attach(tasks[1], "tune 2", err, sizeof(err)) && strstr(err, "error: tune '2': expected 0 or 1"),
	      "tune 2 is refused: %s", err);
	r = request("status json", err, sizeof(err));
	CHECK(r && strstr(r, "\"tuned\": false"), "status json says the target is not tuned");
	free(r);
	CHECK(log_has(", not tuned (tune 0)"), "the log says it is not tuned");
	r = request("stats", err, sizeof(err));
	CHECK(r && strstr(r, "attaches ok 1 refused 1 ") && strstr(r, "refused limit 0 owner 0 noproc 0 other 1") &&
	      strstr(r, "\njob 31 uid "), "stats: 1 attach, 1 refused (other), job 31's line (%s)", err);
	free(r);
	end_tasks(n);
	stop_bwapd();
}

int main(void)
{
	snprintf(dir, sizeof(dir), "/tmp/bwapd-serve.XXXXXX");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(logpath, sizeof(logpath), "%s/bwapd.log", dir);
	signal(SIGPIPE, SIG_IGN);
	if (CHECK(!start_bwapd(NULL), "bwapd starts in %s", dir))
		many_tasks();
	else
		stop_bwapd();
	per_user_limit();
	descendants();
	descendant_waited_at_once();
	slurm_attach_no_start_push();
	cpuset_nodes();
	large_push_does_not_block();
	restart_keeps_targets();
	tune0_and_stats();
	if (!tap_failed) {
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			return 1;
	} else {
		printf("# bwapd's log: %s\n", logpath);
	}
	return tap_done();
}
