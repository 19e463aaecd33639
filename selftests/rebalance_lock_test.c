// SPDX-License-Identifier: GPL-2.0
/*
 * A process-wide rebalance must not hold its target's pages, or its
 * address space, for the whole call, and must end when its caller is
 * killed.
 *
 * process_mpol_reweight(MPOL_REWEIGHT_REBALANCE) of 256 MiB moves tens of
 * thousands of pages.  It takes mmap_lock for writing only to swap the
 * weight tables, walks under the read lock, and drops even that to
 * migrate each batch of isolated folios before it isolates the next: at no
 * time are more than a batch of pages off the LRU, and another thread of
 * the target that maps and unmaps in a loop goes on through the call (its
 * longest stall is logged).  A fatal signal ends the call at the next
 * batch, with the batches already migrated counted and nothing left
 * isolated.  A walk over a range with nothing to move lets mmap_lock go
 * a step at a time too.
 * Needs two memory nodes; SKIPs with fewer.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "../kselftest_harness.h"
#include "numa_util.h"

#define NPAGES 65536	/* 256 MiB of 4 KiB pages */
#define REBALANCE_BATCH 512	/* pages the kernel isolates at a time */

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct target {
	int nodes[WI_MAX_NODES], nr;
	unsigned char w[WI_MAXNODE];	/* the weights the call sets */
	long goal[WI_MAX_NODES];	/* pages of nodes[i] after the call */
	long want;			/* pages the call must move */
	char *p;
};

/*
 * NPAGES base pages under a VMA policy of weighted interleave 1,...,1 over
 * every memory node (its own policy keeps the VMA from merging with any
 * other, and the rest of the process has none to rebalance to).  The call
 * then asks for 1,...,1,3: the last node's share grows from 1/n to
 * 3/(n + 2).
 */
static int target_setup(struct __test_metadata *_metadata, struct target *t)
{
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
	unsigned char w1[WI_MAXNODE] = { 0 };
	unsigned char lw[WI_MAX_NODES];
	long cur[WI_MAX_NODES];
	size_t len = (size_t)NPAGES * getpagesize();
	struct mpol_args args;
	int i;

	t->nr = wi_memory_nodes(t->nodes, WI_MAX_NODES);
	if (t->nr < 2)
		return -1;
	memset(t->w, 0, sizeof(t->w));
	for (i = 0; i < t->nr; i++) {
		w1[t->nodes[i]] = 1;
		t->w[t->nodes[i]] = i == t->nr - 1 ? 3 : 1;
	}
	t->p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	EXPECT_NE(MAP_FAILED, t->p);
	EXPECT_EQ(0, madvise(t->p, len, MADV_NOHUGEPAGE));
	wi_args(&args, mask, t->nodes, t->nr, w1);
	EXPECT_EQ(0, sys_mbind2(t->p, len, &args, sizeof(args), 0));
	wi_touch_pages(t->p, NPAGES);

	/* What the call must move: the last node's gain, from exact counts. */
	EXPECT_EQ(0, wi_count_pages_per_node(t->p, NPAGES, cur));
	for (i = 0; i < t->nr; i++) {
		lw[i] = t->w[t->nodes[i]];
		cur[i] = cur[t->nodes[i]];
	}
	wi_lr_targets(NPAGES, cur, lw, t->nr, t->goal);
	t->want = 0;
	for (i = 0; i < t->nr; i++)
		if (t->goal[i] > cur[i])
			t->want += t->goal[i] - cur[i];
	return 0;
}

/* A thread of the target that maps and unmaps one page until told to stop. */
struct racer {
	pthread_t thread;
	atomic_long done;		/* mmap/munmap pairs completed */
	atomic_int stop;
	atomic_llong call_start_ns;	/* set by the main thread around the call */
	atomic_llong call_end_ns;
	double longest;			/* longest pair that overlapped the call */
	long isolated;			/* most nr_isolated_anon seen in the call */
};

static void *racer_run(void *arg)
{
	struct racer *r = arg;
	double before, after, start, end;
	long isolated;
	void *m;

	while (!atomic_load(&r->stop)) {
		before = now_s();
		m = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m != MAP_FAILED)
			munmap(m, 4096);
		after = now_s();
		atomic_fetch_add(&r->done, 1);
		/* A pair that overlapped the call, begun before it or not. */
		start = atomic_load(&r->call_start_ns) / 1e9;
		end = atomic_load(&r->call_end_ns) / 1e9;
		if (!start || after < start || (end && before > end))
			continue;
		if (after - before > r->longest)
			r->longest = after - before;
		isolated = wi_vmstat("nr_isolated_anon");
		if (isolated > r->isolated)
			r->isolated = isolated;
	}
	return NULL;
}

/*
 * Run @call(@arg) with a racer (@r, zeroed) mapping and unmapping beside
 * it: the racer is in its loop before the call starts, the rebalance
 * counters are read into @s0 before the call and into @s1 once the racer
 * has stopped after it.  *@took is how long the call took, *@during how
 * many pairs the racer made meanwhile.  Returns what @call returned, with
 * its errno.
 */
static long race_call(struct __test_metadata *_metadata, struct racer *r,
		      long (*call)(void *arg), void *arg,
		      struct wi_rebalance_stat *s0, struct wi_rebalance_stat *s1,
		      double *took, long *during)
{
	double t0;
	long ret;
	int err;

	ASSERT_EQ(0, pthread_create(&r->thread, NULL, racer_run, r));
	/* The racer is in its loop before the call starts. */
	while (atomic_load(&r->done) < 2)
		;
	wi_rebalance_stat_read(s0);
	*during = atomic_load(&r->done);
	t0 = now_s();
	atomic_store(&r->call_start_ns, (long long)(t0 * 1e9));
	ret = call(arg);
	err = errno;
	*took = now_s() - t0;
	atomic_store(&r->call_end_ns, (long long)((t0 + *took) * 1e9));
	*during = atomic_load(&r->done) - *during;
	atomic_store(&r->stop, 1);
	ASSERT_EQ(0, pthread_join(r->thread, NULL));
	wi_rebalance_stat_read(s1);
	errno = err;
	return ret;
}

/* process_mpol_reweight(MPOL_REWEIGHT_REBALANCE) of @pidfd to @w. */
struct reweight_call {
	int pidfd;
	const unsigned char *w;
};

static long reweight_rebalance(void *arg)
{
	struct reweight_call *c = arg;

	return sys_process_mpol_reweight(c->pidfd, c->w, WI_MAXNODE,
					 MPOL_REWEIGHT_REBALANCE);
}

/* mbind2() of [@p, @p + @len) to @args, with rebalance. */
struct mbind2_call {
	char *p;
	size_t len;
	const struct mpol_args *args;
};

static long mbind2_rebalance(void *arg)
{
	struct mbind2_call *c = arg;

	return wi_mbind2(c->p, c->len, c->args, WI_REBALANCE);
}

/*
 * Each test moves or fills hundreds of MiB, which takes a while on a
 * small or shared machine: more than the harness's default 30 s.
 */
FIXTURE(big) {};
FIXTURE_SETUP(big) {}
FIXTURE_TEARDOWN(big) {}

TEST_F_TIMEOUT(big, isolates_and_migrates_a_batch_at_a_time, 300)
{
	long counts[WI_MAX_NODES], during, ret;
	struct wi_rebalance_stat s0, s1;
	struct reweight_call call;
	struct racer r = { 0 };
	struct target t;
	int pidfd, i;
	double took;

	if (target_setup(_metadata, &t))
		SKIP(return, "Not enough NUMA nodes available (need 2)");
	pidfd = sys_pidfd_open(getpid());
	ASSERT_LE(0, pidfd);

	call.pidfd = pidfd;
	call.w = t.w;
	ret = race_call(_metadata, &r, reweight_rebalance, &call, &s0, &s1,
			&took, &during);

	ASSERT_EQ(0, ret) TH_LOG("process_mpol_reweight: %s", strerror(errno));
	TH_LOG("%ld pages moved in %.3f s, at most %ld isolated at once",
	       wi_rebalance_delta(&s0, &s1).moved, took, r.isolated);
	TH_LOG("the other thread made %ld mmap/munmap pairs, longest %.1f%% of the call",
	       during, 100.0 * r.longest / took);
	EXPECT_EQ(t.want, wi_rebalance_delta(&s0, &s1).moved);
	/*
	 * Folios are isolated and migrated a batch at a time, not all before
	 * the first migrates.  The sampled count lags by the per-CPU deltas
	 * vmstat has not folded yet, at most a few hundred pages here.
	 */
	EXPECT_GT(REBALANCE_BATCH + 1024, r.isolated);
	ASSERT_EQ(0, wi_count_pages_per_node(t.p, NPAGES, counts));
	for (i = 0; i < t.nr; i++)
		EXPECT_EQ(t.goal[i], counts[t.nodes[i]]) TH_LOG("node %d", t.nodes[i]);
	close(pidfd);
	munmap(t.p, (size_t)NPAGES * getpagesize());
}

TEST_F_TIMEOUT(big, kill_ends_the_call_at_a_batch, 300)
{
	long moved0, moved, isolated, want;
	int ready[2], status;
	double killed, reaped;
	struct target t;
	pid_t pid;

	ASSERT_EQ(0, pipe(ready));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		int pidfd;

		if (target_setup(_metadata, &t))
			_exit(4);
		pidfd = sys_pidfd_open(getpid());
		if (pidfd < 0 ||
		    write(ready[1], &t.want, sizeof(t.want)) != sizeof(t.want))
			_exit(3);
		sys_process_mpol_reweight(pidfd, t.w, WI_MAXNODE, MPOL_REWEIGHT_REBALANCE);
		/* Not reached if the kill ends the call first. */
		_exit(0);
	}
	close(ready[1]);
	if (read(ready[0], &want, sizeof(want)) != sizeof(want)) {
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		if (WIFEXITED(status) && WEXITSTATUS(status) == 4)
			SKIP(return, "Not enough NUMA nodes available (need 2)");
		ASSERT_TRUE(0) TH_LOG("child failed before the call: %#x", status);
	}
	/*
	 * Kill the caller once the first pages have moved: the call counts
	 * each batch as it migrates, so that is mid-call.  (A call that
	 * migrated everything at the end would show it only when done.)
	 */
	moved0 = wi_vmstat("mpol_rebalance_moved");
	while (wi_vmstat("mpol_rebalance_moved") == moved0 &&
	       waitpid(pid, &status, WNOHANG) == 0)
		;
	killed = now_s();
	ASSERT_EQ(0, kill(pid, SIGKILL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	reaped = now_s();
	moved = wi_vmstat("mpol_rebalance_moved") - moved0;
	/* Fold the per-CPU deltas, so that the count is exact. */
	ASSERT_EQ(0, wi_write_file("/proc/sys/vm/stat_refresh", "1"));
	isolated = wi_vmstat("nr_isolated_anon");
	TH_LOG("killed after the first batch: %ld of %ld pages moved, reaped %.3f s after the kill",
	       moved, want, reaped - killed);
	ASSERT_TRUE(WIFSIGNALED(status)) TH_LOG("child status %#x", status);
	EXPECT_EQ(SIGKILL, WTERMSIG(status));
	/* The kill ended the call: 16384 pages are due on four nodes. */
	EXPECT_LT(0, moved);
	EXPECT_GT(want, moved);
	/* Nothing is left off the LRU by the call it ended. */
	EXPECT_EQ(0, isolated);
	close(ready[0]);
}

/*
 * Page tables a walk passes under one hold of mmap_lock: the kernel's
 * REBALANCE_WALK_STEP, 32 page tables of entries.
 */
#define WALK_STEP_TABLES 32
#define WALK_TABLES (512 * WALK_STEP_TABLES)
#define WALK_TRIES 3
#define WALK_MIN_PAIRS 32

/*
 * A try of the walk below passed: no pair waited for a quarter of the
 * call, and the thread asked for the lock all through it.
 */
static int walk_let_go(double took, double longest, long during)
{
	return longest < took / 4 && during >= WALK_MIN_PAIRS;
}

/*
 * A rebalance with nothing to move still walks its whole range, to count
 * it.  Over 16384 page tables, each mapping one page (32 GiB of address
 * space, 64 MiB resident, on the node with the most free memory, so that
 * every page is where its policy puts it), that is 512 steps of the walk,
 * and the walk
 * lets mmap_lock go between them, and as soon as a writer waits: another
 * thread that maps and unmaps in a loop waits for the lock a small part
 * of the call at most.  A walk under one hold keeps it waiting from the
 * moment it asks until the walk ends (83% to 99% of the call, on
 * kernels with the walk under one hold); the check allows a quarter.
 * A host that leaves the walker's virtual CPU unscheduled in a step
 * keeps the thread waiting too, so the call is made up to WALK_TRIES
 * times, and one try that passes is enough: one hold fails every try.
 */
TEST_F_TIMEOUT(big, walk_lets_mmap_lock_go, 300)
{
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
	unsigned char w[WI_MAXNODE] = { 0 };
	/* What one page table maps: a page of 8-byte entries. */
	size_t table = (size_t)getpagesize() * (getpagesize() / 8);
	size_t len = WALK_TABLES * table;
	struct wi_rebalance_stat s0, s1;
	struct mbind2_call call;
	struct racer r = { 0 };
	struct mpol_args args;
	int nodes[WI_MAX_NODES], node, nr;
	long during, ret;
	int i, attempt;
	double took;
	char *p;

	nr = wi_memory_nodes(nodes, WI_MAX_NODES);
	ASSERT_LE(1, nr);
	node = nodes[0];
	for (i = 1; i < nr; i++)
		if (wi_node_free_kb(nodes[i]) > wi_node_free_kb(node))
			node = nodes[i];
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, madvise(p, len, MADV_NOHUGEPAGE));
	/* One node, weight 1: every page is where its policy wants it. */
	w[node] = 1;
	wi_args(&args, mask, &node, 1, w);
	ASSERT_EQ(0, sys_mbind2(p, len, &args, sizeof(args), 0));
	for (i = 0; i < WALK_TABLES; i++)
		p[i * table] = 1;

	call.p = p;
	call.len = len;
	call.args = &args;
	for (attempt = 1; attempt <= WALK_TRIES; attempt++) {
		memset(&r, 0, sizeof(r));
		ret = race_call(_metadata, &r, mbind2_rebalance, &call, &s0, &s1,
				&took, &during);
		ASSERT_EQ(0, ret) TH_LOG("mbind2: %s", strerror(errno));
		TH_LOG("try %d: %ld pages counted in %.3f s", attempt,
		       wi_rebalance_delta(&s0, &s1).scanned, took);
		TH_LOG("try %d: %ld mmap/munmap pairs meanwhile, longest %.1f%% of the call",
		       attempt, during, 100.0 * r.longest / took);
		EXPECT_EQ(WALK_TABLES, wi_rebalance_delta(&s0, &s1).scanned);
		EXPECT_EQ(0, wi_rebalance_delta(&s0, &s1).moved);
		if (walk_let_go(took, r.longest, during))
			break;
	}
	/*
	 * No pair waited for a quarter of the call: a walk under one hold
	 * keeps one waiting nearly all of it.  And the thread did ask for
	 * the lock all through the call, WALK_MIN_PAIRS times at least: a
	 * virtual CPU can go unscheduled by its host for a whole walk, and
	 * then nothing waited.  (The last try is judged: the first that
	 * passed, if any.)
	 */
	EXPECT_TRUE(walk_let_go(took, r.longest, during))
		TH_LOG("want under 25%% of the call and at least %d pairs",
		       WALK_MIN_PAIRS);
	munmap(p, len);
}

int main(int argc, char **argv)
{
	wi_skip_without_mempolicy2();
	return test_harness_run(argc, argv);
}
