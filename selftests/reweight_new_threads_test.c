// SPDX-License-Identifier: GPL-2.0
/*
 * Threads created while process_mpol_reweight() runs end up with the new
 * weights.
 *
 * clone() copies the parent's task policy well before it links the new
 * thread into the thread list.  Weights written into each thread's policy
 * would miss a thread copied before the reweight and linked after it;
 * the weights a reweight gives live in the process's mm instead, which
 * every thread, cloned when it may, reads.
 *
 * The target creates threads without pause, from three creator threads.
 * Each new thread notes how many reweights the test has finished (e), waits
 * until it has finished one more, and then reads its own task policy: the
 * weights must be those of reweight e + 1 or later.  It checks the same against
 * reweight e when it starts.  The test gives node 0 the weight
 * 1 + k % CYCLE in reweight k, so the weights say which reweight set them.
 * Needs two memory nodes; SKIPs with fewer.
 */
#define _GNU_SOURCE
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "numa_util.h"

#define REWEIGHTS 300		/* at least this many reweights ... */
#define MIN_CHECKS 300		/* ... and until this many threads checked */
#define MAX_REWEIGHTS 20000	/* a bound, should threads stop coming */
#define CYCLE 200		/* reweight k gives node 0 the weight 1 + k % CYCLE */
#define CREATORS 3
#define MAX_ALIVE 128		/* new threads waiting at once */

struct shared {
	atomic_int done;	/* reweights the test has finished */
	atomic_int stop;
	atomic_int wake;	/* the futex: bumped after each change of done or stop */
	atomic_int ready;	/* creators running */
	atomic_long created, checked, stale, errors, undecided;
	atomic_int alive;
	int worst_behind;	/* most reweights a thread was behind */
	int node0;
	struct {		/* the first stale threads, for the log */
		int e, w, done, tid;
	} seen[4];
};

static struct shared *sh;

/*
 * Sleep while sh->done is @seen (waiting threads must not spin: there are
 * dozens of them on a few CPUs).  The futex is shared: the test
 * process wakes the target's threads.  It is a word of its own, read before
 * done and stop: the stop that ends the test changes no reweight count, and
 * a thread that read done and stop just before it must still wake.
 */
static void wait_done_past(int seen)
{
	for (;;) {
		int w = atomic_load(&sh->wake);

		if (atomic_load(&sh->done) != seen || atomic_load(&sh->stop))
			return;
		syscall(SYS_futex, &sh->wake, FUTEX_WAIT, w, NULL, NULL, 0);
	}
}

static void wake_all(void)
{
	atomic_fetch_add(&sh->wake, 1);
	syscall(SYS_futex, &sh->wake, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

/* Node 0's own weight in the calling thread's task policy, or -1. */
static int own_weight0(void)
{
	struct wi_policy r;

	if (wi_read_policy(&r, NULL) || r.args.mode != MPOL_WEIGHTED_INTERLEAVE)
		return -1;
	return r.w[sh->node0];
}

/*
 * Check that the calling thread has the weights of reweight @e or later.
 * Reweight k set 1 + k % CYCLE, so the weights name k modulo CYCLE; the
 * reweights that may have set them are @e up to the one running after the
 * read (a thread can wait unscheduled through many).  Past CYCLE of them
 * the weights no longer name one, and the check is not made.
 */
static void check_weights(int e)
{
	int w = own_weight0(), now = atomic_load(&sh->done), k, behind;

	atomic_fetch_add(&sh->checked, 1);
	if (w < 1) {
		atomic_fetch_add(&sh->errors, 1);
		return;
	}
	if (now + 1 - e >= CYCLE) {
		atomic_fetch_add(&sh->undecided, 1);
		return;
	}
	for (k = e; k <= now + 1; k++)
		if (k % CYCLE == w - 1)
			return;
	behind = ((e - (w - 1)) % CYCLE + CYCLE) % CYCLE;
	{
		long n = atomic_fetch_add(&sh->stale, 1);

		if (n < 4) {
			sh->seen[n].e = e;
			sh->seen[n].w = w;
			sh->seen[n].done = now;
			sh->seen[n].tid = gettid();
		}
	}
	if (behind > sh->worst_behind)
		sh->worst_behind = behind;
}

static void *new_thread(void *arg)
{
	int e = atomic_load(&sh->done);

	check_weights(e);
	wait_done_past(e);
	if (atomic_load(&sh->done) > e)
		check_weights(e + 1);
	atomic_fetch_sub(&sh->alive, 1);
	return NULL;
}

static void *creator(void *arg)
{
	pthread_attr_t attr;
	pthread_t t;

	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	atomic_fetch_add(&sh->ready, 1);
	while (!atomic_load(&sh->stop)) {
		/* Enough are waiting: the next reweight lets them go. */
		if (atomic_load(&sh->alive) >= MAX_ALIVE) {
			wait_done_past(atomic_load(&sh->done));
			continue;
		}
		atomic_fetch_add(&sh->alive, 1);
		if (pthread_create(&t, &attr, new_thread, NULL)) {
			atomic_fetch_sub(&sh->alive, 1);
			atomic_fetch_add(&sh->errors, 1);
			continue;
		}
		atomic_fetch_add(&sh->created, 1);
	}
	return NULL;
}

/* Give the calling thread a policy over @nodes with own weights 1 each. */
static long set_own_weights_1(const int *nodes, int nr)
{
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
	unsigned char w[WI_MAXNODE] = { 0 };
	struct mpol_args args;
	int i;

	for (i = 0; i < nr; i++)
		w[nodes[i]] = 1;
	wi_args(&args, mask, nodes, nr, w);
	return sys_set_mempolicy2(&args, sizeof(args), 0);
}

static void target_main(const int *nodes, int nr)
{
	pthread_t c[CREATORS];
	int i;

	if (set_own_weights_1(nodes, nr))
		_exit(3);
	for (i = 0; i < CREATORS; i++)
		if (pthread_create(&c[i], NULL, creator, NULL))
			_exit(3);
	for (i = 0; i < CREATORS; i++)
		pthread_join(c[i], NULL);
	/* Let the last new threads see the stop flag and count themselves out. */
	while (atomic_load(&sh->alive) > 0)
		sched_yield();
	_exit(0);
}

FIXTURE(reweight) {};
FIXTURE_SETUP(reweight) {}
FIXTURE_TEARDOWN(reweight) {}

/*
 * 300 reweights take seconds, more under KASAN.  It goes on until
 * MIN_CHECKS threads have checked their weights, however slowly the
 * machine creates them.
 */
TEST_F_TIMEOUT(reweight, threads_created_during_a_reweight_get_its_weights, 300)
{
	unsigned char w[WI_MAXNODE] = { 0 };
	int nodes[WI_MAX_NODES], nr, pidfd, status, k, i;
	long created_before;
	pid_t pid;

	nr = wi_memory_nodes(nodes, WI_MAX_NODES);
	if (nr < 2)
		SKIP(return, "Not enough NUMA nodes available (need 2)");
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, sh);
	memset(sh, 0, sizeof(*sh));
	sh->node0 = nodes[0];

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		target_main(nodes, nr);
	pidfd = sys_pidfd_open(pid);
	ASSERT_LE(0, pidfd);
	/* Threads are being made before the first reweight. */
	while (atomic_load(&sh->ready) < CREATORS || atomic_load(&sh->created) < MAX_ALIVE / 2)
		ASSERT_EQ(0, waitpid(pid, &status, WNOHANG));

	created_before = atomic_load(&sh->created);
	for (i = 0; i < nr; i++)
		w[nodes[i]] = 1;
	for (k = 1; k <= MAX_REWEIGHTS; k++) {
		if (k > REWEIGHTS && atomic_load(&sh->checked) >= MIN_CHECKS)
			break;
		w[nodes[0]] = 1 + k % CYCLE;
		ASSERT_EQ(0, sys_process_mpol_reweight(pidfd, w, WI_MAXNODE, 0))
			TH_LOG("reweight %d: %s", k, strerror(errno));
		atomic_store(&sh->done, k);
		wake_all();
	}
	atomic_store(&sh->stop, 1);
	wake_all();
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));

	TH_LOG("%d reweights; %ld threads created during them, %ld checks, %ld errors",
	       k - 1, atomic_load(&sh->created) - created_before,
	       atomic_load(&sh->checked), atomic_load(&sh->errors));
	TH_LOG("%ld with older weights (at most %d reweights behind)",
	       atomic_load(&sh->stale), sh->worst_behind);
	TH_LOG("%ld undecided (the thread waited through %d reweights)",
	       atomic_load(&sh->undecided), CYCLE);
	for (k = 0; k < 4 && k < atomic_load(&sh->stale); k++)
		TH_LOG("stale: thread %d, reweight %d: node %d weight %d (%d mod %d), %d done",
		       sh->seen[k].tid, sh->seen[k].e, sh->node0, sh->seen[k].w,
		       sh->seen[k].w - 1, CYCLE, sh->seen[k].done);
	EXPECT_EQ(0, atomic_load(&sh->errors));
	EXPECT_EQ(0, atomic_load(&sh->stale));
	/* The check is worth something only if threads came and went. */
	EXPECT_LE(MIN_CHECKS, atomic_load(&sh->checked));
	close(pidfd);
	munmap(sh, sizeof(*sh));
}

/* Reweight the process behind @pidfd: node 0 gets @w0, the others 1. */
static long reweight_to(int pidfd, const int *nodes, int nr, int w0)
{
	unsigned char w[WI_MAXNODE] = { 0 };
	int i;

	for (i = 0; i < nr; i++)
		w[nodes[i]] = 1;
	w[nodes[0]] = w0;
	return sys_process_mpol_reweight(pidfd, w, WI_MAXNODE, 0);
}

/* Node 0's weight in the calling thread's task policy, or -1. */
static int weight0(int node0)
{
	struct wi_policy r;

	if (wi_read_policy(&r, NULL) || r.args.mode != MPOL_WEIGHTED_INTERLEAVE)
		return -1;
	return r.w[node0];
}

static void *clone_and_exit(void *arg)
{
	return arg;
}

/*
 * A tuner that reweights its target in a tight loop never makes the
 * target's clone() fail.  (Clones used to be restarted when a reweight
 * of their process ran during them.)
 */
TEST_F_TIMEOUT(reweight, tight_reweight_loop_never_fails_a_clone, 300)
{
	int nodes[WI_MAX_NODES], nr, pidfd, status, pipefd[2], k = 0;
	pid_t pid;
	char go;

	nr = wi_memory_nodes(nodes, WI_MAX_NODES);
	if (nr < 2)
		SKIP(return, "Not enough NUMA nodes available (need 2)");
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		pthread_t t;
		int i;

		if (set_own_weights_1(nodes, nr))
			_exit(3);
		close(pipefd[0]);
		/* Tell the tuner to start, then clone 2000 threads. */
		if (write(pipefd[1], "s", 1) != 1)
			_exit(3);
		for (i = 0; i < 2000; i++) {
			if (pthread_create(&t, NULL, clone_and_exit, NULL))
				_exit(4);
			if (pthread_join(t, NULL))
				_exit(4);
		}
		close(pipefd[1]);
		_exit(0);
	}
	close(pipefd[1]);
	pidfd = sys_pidfd_open(pid);
	ASSERT_LE(0, pidfd);
	ASSERT_EQ(1, read(pipefd[0], &go, 1));
	/* Reweight until the target is done (its exit shows as ESRCH). */
	while (waitpid(pid, &status, WNOHANG) == 0) {
		long ret = reweight_to(pidfd, nodes, nr, 1 + k % 100);

		ASSERT_TRUE(ret == 0 || errno == ESRCH)
			TH_LOG("reweight %d: %s", k, strerror(errno));
		k++;
	}
	TH_LOG("%d reweights while the target made 2000 threads", k);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(pidfd);
	close(pipefd[0]);
}

/*
 * The weights a reweight gives a process are its own: a child forked
 * after it starts with them, and later reweights of parent and child do
 * not reach each other.  A task policy set after a reweight keeps the
 * weights it was set with.
 */
TEST_F(reweight, forked_child_and_later_policies_keep_their_weights)
{
	int nodes[WI_MAX_NODES], nr, self_fd, child_fd, to_child[2], back[2];
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
	unsigned char w[WI_MAXNODE] = { 0 };
	struct mpol_args args;
	int status, i, got;
	pid_t pid;
	char c;

	nr = wi_memory_nodes(nodes, WI_MAX_NODES);
	if (nr < 2)
		SKIP(return, "Not enough NUMA nodes available (need 2)");
	for (i = 0; i < nr; i++)
		w[nodes[i]] = 1;
	wi_args(&args, mask, nodes, nr, w);
	ASSERT_EQ(0, sys_set_mempolicy2(&args, sizeof(args), 0));
	self_fd = sys_pidfd_open(getpid());
	ASSERT_LE(0, self_fd);
	ASSERT_EQ(0, reweight_to(self_fd, nodes, nr, 7));
	ASSERT_EQ(7, weight0(nodes[0]));

	ASSERT_EQ(0, pipe(to_child));
	ASSERT_EQ(0, pipe(back));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(to_child[1]);
		close(back[0]);
		/* Report the weight each time the parent asks. */
		while (read(to_child[0], &c, 1) == 1) {
			c = weight0(nodes[0]);
			if (write(back[1], &c, 1) != 1)
				_exit(3);
		}
		_exit(0);
	}
	close(to_child[0]);
	close(back[1]);
	child_fd = sys_pidfd_open(pid);
	ASSERT_LE(0, child_fd);

	/* The child inherited 7; the parent's reweight to 9 is the parent's. */
	ASSERT_EQ(0, reweight_to(self_fd, nodes, nr, 9));
	ASSERT_EQ(1, write(to_child[1], "?", 1));
	ASSERT_EQ(1, read(back[0], &c, 1));
	EXPECT_EQ(7, c);
	EXPECT_EQ(9, weight0(nodes[0]));

	/* The child's reweight to 11 is the child's. */
	ASSERT_EQ(0, reweight_to(child_fd, nodes, nr, 11));
	ASSERT_EQ(1, write(to_child[1], "?", 1));
	ASSERT_EQ(1, read(back[0], &c, 1));
	EXPECT_EQ(11, c);
	EXPECT_EQ(9, weight0(nodes[0]));

	/* A policy set after the reweights keeps what it was set with. */
	w[nodes[0]] = 5;
	ASSERT_EQ(0, sys_set_mempolicy2(&args, sizeof(args), 0));
	got = weight0(nodes[0]);
	EXPECT_EQ(5, got);

	close(to_child[1]);
	close(back[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	close(child_fd);
	close(self_fd);
	sys_set_mempolicy(MPOL_DEFAULT, NULL, 0);
}

int main(int argc, char **argv)
{
	wi_skip_without_mempolicy2();
	return test_harness_run(argc, argv);
}
