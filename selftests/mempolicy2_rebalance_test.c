// SPDX-License-Identifier: GPL-2.0
/*
 * process_mpol_reweight() and mbind2()'s rebalance move exactly the fewest
 * pages: each node ends with its largest-remainder share of a range's
 * resident pages, the kernel moves sum(max(0, current - target)) pages
 * (checked through /proc/vmstat), and every page keeps its contents.
 * Needs four memory nodes; SKIPs with fewer.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include <linux/io_uring.h>
#include <sys/ipc.h>
#include <sys/mount.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "numa_util.h"

#define NPAGES 4000
#define NODES 4

/* Each page holds its index and a tag in every 8-byte word. */
static void fill_pages(char *p, size_t npages, uint64_t tag)
{
	size_t psz = getpagesize(), i, j;

	for (i = 0; i < npages; i++) {
		uint64_t *w = (uint64_t *)(p + i * psz);

		for (j = 0; j < psz / sizeof(*w); j++)
			w[j] = (tag << 32) ^ (i << 12) ^ j;
	}
}

/* Pages whose contents are not what fill_pages() wrote. */
static long bad_pages(char *p, size_t npages, uint64_t tag)
{
	size_t psz = getpagesize(), i, j;
	long bad = 0;

	for (i = 0; i < npages; i++) {
		uint64_t *w = (uint64_t *)(p + i * psz);

		for (j = 0; j < psz / sizeof(*w); j++) {
			if (w[j] != ((tag << 32) ^ (i << 12) ^ j)) {
				bad++;
				break;
			}
		}
	}
	return bad;
}

FIXTURE(rebalance) {
	int nodes[WI_MAX_NODES];
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
	unsigned char w[WI_MAXNODE];
	struct mpol_args args;
	long counts[WI_MAX_NODES];
	struct wi_rebalance_stat before, after;
	int pidfd;
	char *p;
	size_t len;
};

FIXTURE_SETUP(rebalance)
{
	if (wi_memory_nodes(self->nodes, WI_MAX_NODES) < NODES)
		SKIP(return, "Not enough NUMA nodes available");
	self->pidfd = sys_pidfd_open(getpid());
	ASSERT_LE(0, self->pidfd);
	self->len = (size_t)NPAGES * getpagesize();
	self->p = NULL;
}

FIXTURE_TEARDOWN(rebalance)
{
	if (self->p)
		munmap(self->p, self->len);
	if (self->pidfd >= 0)
		close(self->pidfd);
	sys_set_mempolicy(MPOL_DEFAULT, NULL, 0);
}

/* Weights @a,@b,@c,@d for the first four memory nodes. */
static void set_w(struct _test_data_rebalance *self, int a, int b, int c, int d)
{
	memset(self->w, 0, sizeof(self->w));
	self->w[self->nodes[0]] = a;
	self->w[self->nodes[1]] = b;
	self->w[self->nodes[2]] = c;
	self->w[self->nodes[3]] = d;
	wi_args(&self->args, self->mask, self->nodes, NODES, self->w);
}

#define EXPECT_COUNTS(a, b, c, d) do {					\
	ASSERT_EQ(0, wi_count_pages_per_node(self->p, NPAGES,		\
					       self->counts));		\
	EXPECT_EQ(a, self->counts[self->nodes[0]]);			\
	EXPECT_EQ(b, self->counts[self->nodes[1]]);			\
	EXPECT_EQ(c, self->counts[self->nodes[2]]);			\
	EXPECT_EQ(d, self->counts[self->nodes[3]]);			\
} while (0)

/* Map the range with a weighted VMA policy @a..@d and fault it in. */
static int map_with_vma_policy(struct _test_data_rebalance *self, int shared,
			       int a, int b, int c, int d)
{
	self->p = mmap(NULL, self->len, PROT_READ | PROT_WRITE,
		       (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS,
		       -1, 0);
	if (self->p == MAP_FAILED) {
		self->p = NULL;
		return -1;
	}
	madvise(self->p, self->len, MADV_NOHUGEPAGE);
	set_w(self, a, b, c, d);
	if (sys_mbind2(self->p, self->len, &self->args, sizeof(self->args), 0))
		return -1;
	fill_pages(self->p, NPAGES, 1);
	return 0;
}

/* Reweight ourselves with @a..@d and @flags; return its result. */
static long reweight_self(struct _test_data_rebalance *self, int a, int b, int c,
			  int d, unsigned int flags)
{
	long ret;

	set_w(self, a, b, c, d);
	wi_rebalance_stat_read(&self->before);
	ret = sys_process_mpol_reweight(self->pidfd, self->w, WI_MAXNODE, flags);
	wi_rebalance_stat_read(&self->after);
	return ret;
}

/*
 * The acceptance case: 4000 pages under 1,1,1,1 reweighted to 4,2,1,1 end
 * as 2000/1000/500/500 with 1000 pages moved, and back again with 1000.
 */
TEST_F(rebalance, vma_1111_to_4211_and_back_moves_minimum)
{
	struct wi_rebalance_stat d;

	ASSERT_EQ(0, map_with_vma_policy(self, 0, 1, 1, 1, 1));
	EXPECT_COUNTS(1000, 1000, 1000, 1000);

	ASSERT_EQ(0, reweight_self(self, 4, 2, 1, 1, MPOL_REWEIGHT_REBALANCE));
	EXPECT_COUNTS(2000, 1000, 500, 500);
	d = wi_rebalance_delta(&self->before, &self->after);
	EXPECT_EQ(NPAGES, d.scanned);
	EXPECT_EQ(1000, d.moved);
	EXPECT_EQ(0, d.failed);
	EXPECT_EQ(0, bad_pages(self->p, NPAGES, 1));

	ASSERT_EQ(0, reweight_self(self, 1, 1, 1, 1, MPOL_REWEIGHT_REBALANCE));
	EXPECT_COUNTS(1000, 1000, 1000, 1000);
	d = wi_rebalance_delta(&self->before, &self->after);
	EXPECT_EQ(1000, d.moved);
	EXPECT_EQ(0, bad_pages(self->p, NPAGES, 1));

	/* Same weights again: nothing to move. */
	ASSERT_EQ(0, reweight_self(self, 1, 1, 1, 1, MPOL_REWEIGHT_REBALANCE));
	d = wi_rebalance_delta(&self->before, &self->after);
	EXPECT_EQ(0, d.moved);
}

#define TRACING "/sys/kernel/tracing"
#define TP_DIR TRACING "/events/mempolicy/mpol_rebalance"

/* tracefs is there, mounted if need be, with the mpol_rebalance event. */
static bool tracing_ready(void)
{
	if (access(TP_DIR, F_OK))
		mount("tracefs", TRACING, "tracefs", 0, NULL);
	return !access(TP_DIR, F_OK);
}

/* Trace only mpol_rebalance, from an empty buffer; 0 or -1. */
static int tracing_start(void)
{
	if (wi_tracing_write("tracing_on", "0") || wi_tracing_write("trace", "") ||
	    wi_tracing_write("events/mempolicy/mpol_rebalance/enable", "1"))
		return -1;
	return wi_tracing_write("tracing_on", "1");
}

static int tracing_stop(void)
{
	if (wi_tracing_write("tracing_on", "0"))
		return -1;
	return wi_tracing_write("events/mempolicy/mpol_rebalance/enable", "0");
}

/*
 * The mpol_rebalance events in the buffer, each logged; with @want1 and
 * @want2, one missing either counts as failed.
 */
static int tracing_events(struct __test_metadata *_metadata,
			  const char *want1, const char *want2)
{
	char line[512];
	int found = 0;
	FILE *f;

	f = fopen(TRACING "/trace", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strstr(line, "mpol_rebalance:"))
			continue;
		found++;
		TH_LOG("%s", line);
		EXPECT_NE(NULL, strstr(line, want1));
		EXPECT_NE(NULL, strstr(line, want2));
	}
	fclose(f);
	return found;
}

/*
 * The mpol_rebalance tracepoint reports each call: the same call as above
 * must name the process and the range it walked (the whole address space,
 * for a reweight) and show 4000 pages found, 1000 to move, 1000 moved, 0
 * failed and none under migration.  Kernels built without event tracing
 * skip.
 */
TEST_F(rebalance, tracepoint_reports_the_call)
{
	const char *want = "scanned=4000 needed=1000 moved=1000 failed=0 busy=0";
	char who[64];

	if (!tracing_ready())
		SKIP(return, "No %s (a kernel without CONFIG_EVENT_TRACING)", TP_DIR);
	ASSERT_EQ(0, map_with_vma_policy(self, 0, 1, 1, 1, 1));
	ASSERT_EQ(0, tracing_start());
	ASSERT_EQ(0, reweight_self(self, 4, 2, 1, 1, MPOL_REWEIGHT_REBALANCE));
	ASSERT_EQ(0, tracing_stop());
	EXPECT_COUNTS(2000, 1000, 500, 500);
	snprintf(who, sizeof(who), "pid=%d mm=", getpid());
	EXPECT_EQ(1, tracing_events(_metadata, who, want));
	EXPECT_EQ(1, tracing_events(_metadata, "range=0x0-0x", want));
}

/*
 * A call refused before any walk is not traced: a reweight that a VMA
 * policy on nodes 2,3 cannot take (weights 0 there) fails with EINVAL
 * and moves nothing.  mbind2() of the range with rebalance is traced,
 * with the range it walked.
 */
TEST_F(rebalance, tracepoint_silent_without_a_walk)
{
	static const unsigned char w11[2] = { 1, 1 };
	int two[2] = { 2, 3 };
	char range[64], who[32];

	if (!tracing_ready())
		SKIP(return, "No %s (a kernel without CONFIG_EVENT_TRACING)", TP_DIR);
	ASSERT_EQ(0, map_with_vma_policy(self, 0, 1, 1, 1, 1));
	ASSERT_EQ(0, tracing_start());
	ASSERT_EQ(0, wi_mbind2_nodes(self->p, self->len, two, 2, w11, 0));
	EXPECT_EQ(-1, reweight_self(self, 1, 1, 0, 0, MPOL_REWEIGHT_REBALANCE));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, tracing_stop());
	EXPECT_EQ(0, tracing_events(_metadata, "", ""));

	ASSERT_EQ(0, tracing_start());
	ASSERT_EQ(0, wi_mbind2_nodes(self->p, self->len, two, 2, w11,
				     WI_REBALANCE));
	ASSERT_EQ(0, tracing_stop());
	snprintf(range, sizeof(range), "range=%#lx-%#lx ",
		 (unsigned long)self->p, (unsigned long)self->p + self->len);
	snprintf(who, sizeof(who), "pid=%d ", getpid());
	EXPECT_EQ(1, tracing_events(_metadata, who, range));
}

/*
 * A rebalance keeps the interleave layout: the pages it moves are spread
 * over the range, so every 64- and 512-page window holds each node's
 * weighted share to within 2 pages of what a fresh weighted fault gives.
 * Taking surplus pages in address order left 64-page windows 16 pages
 * off, the first half of the range about 75% on the first node.
 */
TEST_F(rebalance, rebalanced_range_keeps_interleave_layout)
{
	static const unsigned char w4211[NODES] = { 4, 2, 1, 1 };
	static const unsigned char w5311[NODES] = { 5, 3, 1, 1 };
	static const unsigned char *nw[2] = { w4211, w5311 };
	static const long min_moved[2] = { 1000, 1200 };
	static const long windows[2] = { 64, 512 };
	int *fresh_st = calloc(NPAGES, sizeof(int));
	int *rebal_st = calloc(NPAGES, sizeof(int));
	double fresh, got;
	struct wi_rebalance_stat d;
	int t, k;

	ASSERT_NE(NULL, fresh_st);
	ASSERT_NE(NULL, rebal_st);
	for (t = 0; t < 2; t++) {
		const unsigned char *w = nw[t];

		/* A fresh fault under the new weights, for reference. */
		ASSERT_EQ(0, map_with_vma_policy(self, 0, w[0], w[1], w[2], w[3]));
		ASSERT_EQ(0, wi_page_nodes(self->p, NPAGES, fresh_st));
		munmap(self->p, self->len);

		ASSERT_EQ(0, map_with_vma_policy(self, 0, 1, 1, 1, 1));
		ASSERT_EQ(0, reweight_self(self, w[0], w[1], w[2], w[3],
					   MPOL_REWEIGHT_REBALANCE));
		d = wi_rebalance_delta(&self->before, &self->after);
		EXPECT_EQ(min_moved[t], d.moved);
		EXPECT_EQ(0, d.failed);
		ASSERT_EQ(0, wi_page_nodes(self->p, NPAGES, rebal_st));
		munmap(self->p, self->len);
		self->p = NULL;

		for (k = 0; k < 2; k++) {
			fresh = wi_window_balance(fresh_st, NPAGES, self->nodes,
						  w, NODES, windows[k]);
			got = wi_window_balance(rebal_st, NPAGES, self->nodes,
						w, NODES, windows[k]);
			TH_LOG("to %u,%u,%u,%u, %ld-page windows: %.1f pages off, fresh fault %.1f",
			       w[0], w[1], w[2], w[3], windows[k], got, fresh);
			EXPECT_LE(got, fresh + 2);
		}
	}
	free(fresh_st);
	free(rebal_st);
}

/* Weight 0 drains a node; 4000/3 leaves one page for the lowest node. */
TEST_F(rebalance, drain_node_to_zero)
{
	struct wi_rebalance_stat d;

	ASSERT_EQ(0, map_with_vma_policy(self, 0, 1, 1, 1, 1));
	ASSERT_EQ(0, reweight_self(self, 1, 1, 1, 0, MPOL_REWEIGHT_REBALANCE));
	EXPECT_COUNTS(1334, 1333, 1333, 0);
	d = wi_rebalance_delta(&self->before, &self->after);
	EXPECT_EQ(1000, d.moved);
	EXPECT_EQ(0, bad_pages(self->p, NPAGES, 1));
}

/*
 * A shared range at 1,1,1,1, filled: reweight to 1,3,0,1 and check that
 * its pages and its shared policy both follow.
 */
static void expect_shared_range_reweighted(struct __test_metadata *_metadata,
					   struct _test_data_rebalance *self)
{
	struct wi_rebalance_stat d;
	struct wi_policy r;

	EXPECT_COUNTS(1000, 1000, 1000, 1000);
	/* The object's policy, and its pages, only on request. */
	ASSERT_EQ(0, reweight_self(self, 1, 3, 0, 1, MPOL_REWEIGHT_REBALANCE));
	EXPECT_COUNTS(1000, 1000, 1000, 1000);
	d = wi_rebalance_delta(&self->before, &self->after);
	EXPECT_EQ(0, d.scanned);
	ASSERT_EQ(0, wi_read_policy(&r, self->p));
	EXPECT_EQ(1, r.w[self->nodes[1]]);
	EXPECT_EQ(1, r.w[self->nodes[2]]);

	ASSERT_EQ(0, reweight_self(self, 1, 3, 0, 1, MPOL_REWEIGHT_REBALANCE |
				   MPOL_REWEIGHT_SHARED));
	EXPECT_COUNTS(800, 2400, 0, 800);
	d = wi_rebalance_delta(&self->before, &self->after);
	EXPECT_EQ(1400, d.moved);
	EXPECT_EQ(0, bad_pages(self->p, NPAGES, 1));
	ASSERT_EQ(0, wi_read_policy(&r, self->p));
	EXPECT_EQ(3, r.w[self->nodes[1]]);
	EXPECT_EQ(0, r.w[self->nodes[2]]);
}

/*
 * Shared anonymous memory is shmem: with MPOL_REWEIGHT_SHARED its shared
 * policy is reweighted.
 */
TEST_F(rebalance, shmem_range)
{
	ASSERT_EQ(0, map_with_vma_policy(self, 1, 1, 1, 1, 1));
	expect_shared_range_reweighted(_metadata, self);
}

/*
 * SysV shared memory is shmem behind shm's own vm_ops (vma_is_shmem() is
 * false): with MPOL_REWEIGHT_SHARED its shared policy is reweighted and
 * its pages rebalanced too.
 */
TEST_F(rebalance, sysv_shm_range)
{
	int id;

	id = shmget(IPC_PRIVATE, self->len, IPC_CREAT | 0600);
	ASSERT_LE(0, id);
	self->p = shmat(id, NULL, 0);
	/* Marked for removal now: it goes when the test detaches. */
	ASSERT_EQ(0, shmctl(id, IPC_RMID, NULL));
	ASSERT_NE((void *)-1, self->p);
	set_w(self, 1, 1, 1, 1);
	ASSERT_EQ(0, sys_mbind2(self->p, self->len, &self->args,
				sizeof(self->args), 0));
	fill_pages(self->p, NPAGES, 1);
	expect_shared_range_reweighted(_metadata, self);
}

/*
 * One shmem VMA spanning two shared-policy ranges: each range is its own
 * rebalance unit.  The owner of a 2048-page memfd puts the lower half
 * under weighted interleave 1,1,1,1 and the upper half under MPOL_BIND to
 * the first node; a second process maps the whole memfd as one VMA and is
 * reweighted to 4,2,1,1.  The weighted half must end at 512/256/128/128
 * and the bound half stay on its node.  Shares taken over the whole VMA,
 * bound pages included, gave 0/512/256/256 for the weighted half.
 */
#define MEMFD_PAGES 2048

TEST_F(rebalance, shared_policy_ranges_rebalance_separately)
{
	struct wi_rebalance_stat d;
	size_t len = (size_t)MEMFD_PAGES * getpagesize(), half = len / 2;
	unsigned long bind[WI_MAX_NODES / (8 * sizeof(long))] = { };
	int ready[2], go[2], fd, pidfd, status;
	long lo[WI_MAX_NODES], hi[WI_MAX_NODES];
	char c = 0, *q;
	pid_t pid;

	fd = memfd_create("mpol2-two-ranges", 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, len));
	q = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, q);
	set_w(self, 1, 1, 1, 1);
	ASSERT_EQ(0, sys_mbind2(q, half, &self->args, sizeof(self->args), 0));
	wi_nodemask_set(bind, self->nodes[0]);
	ASSERT_EQ(0, sys_mbind(q + half, half, MPOL_BIND, bind, WI_MAXNODE, 0));
	fill_pages(q, MEMFD_PAGES, 4);
	ASSERT_EQ(0, wi_count_pages_per_node(q, MEMFD_PAGES / 2, lo));
	EXPECT_EQ(256, lo[self->nodes[0]]);
	EXPECT_EQ(256, lo[self->nodes[3]]);

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/*
		 * Only one mapping of the memfd, the whole of it in one VMA,
		 * every page mapped (read) before the reweight.
		 */
		char *whole;

		if (munmap(q, len))
			_exit(10);
		whole = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (whole == MAP_FAILED)
			_exit(11);
		if (bad_pages(whole, MEMFD_PAGES, 4))
			_exit(12);
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(13);
		_exit(bad_pages(whole, MEMFD_PAGES, 4) ? 14 : 0);
	}
	ASSERT_EQ(1, read(ready[0], &c, 1));
	pidfd = sys_pidfd_open(pid);
	ASSERT_LE(0, pidfd);

	/* Both processes map the pages: moving them takes MOVE_ALL. */
	set_w(self, 4, 2, 1, 1);
	wi_rebalance_stat_read(&self->before);
	EXPECT_EQ(0, sys_process_mpol_reweight(pidfd, self->w, WI_MAXNODE,
					       MPOL_REWEIGHT_REBALANCE | MPOL_REWEIGHT_MOVE_ALL |
					       MPOL_REWEIGHT_SHARED));
	wi_rebalance_stat_read(&self->after);
	ASSERT_EQ(1, write(go[1], &c, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(pidfd);

	ASSERT_EQ(0, wi_count_pages_per_node(q, MEMFD_PAGES / 2, lo));
	ASSERT_EQ(0, wi_count_pages_per_node(q + half, MEMFD_PAGES / 2, hi));
	TH_LOG("weighted half %ld/%ld/%ld/%ld, bound half %ld/%ld/%ld/%ld",
	       lo[self->nodes[0]], lo[self->nodes[1]], lo[self->nodes[2]],
	       lo[self->nodes[3]], hi[self->nodes[0]], hi[self->nodes[1]],
	       hi[self->nodes[2]], hi[self->nodes[3]]);
	EXPECT_EQ(512, lo[self->nodes[0]]);
	EXPECT_EQ(256, lo[self->nodes[1]]);
	EXPECT_EQ(128, lo[self->nodes[2]]);
	EXPECT_EQ(128, lo[self->nodes[3]]);
	EXPECT_EQ(MEMFD_PAGES / 2, hi[self->nodes[0]]);
	/* Only the weighted half is counted; 128 + 128 pages move. */
	d = wi_rebalance_delta(&self->before, &self->after);
	EXPECT_EQ(MEMFD_PAGES / 2, d.scanned);
	EXPECT_EQ(256, d.moved);
	EXPECT_EQ(0, d.failed);
	EXPECT_EQ(0, bad_pages(q, MEMFD_PAGES, 4));
	munmap(q, len);
	close(fd);
}

/* Without MPOL_REWEIGHT_REBALANCE nothing moves, but new faults follow. */
TEST_F(rebalance, reweight_alone_moves_nothing)
{
	struct wi_rebalance_stat d;
	struct wi_policy r;

	ASSERT_EQ(0, map_with_vma_policy(self, 0, 1, 1, 1, 1));
	ASSERT_EQ(0, reweight_self(self, 4, 2, 1, 1, 0));
	d = wi_rebalance_delta(&self->before, &self->after);
	EXPECT_EQ(0, d.moved);
	EXPECT_EQ(0, d.scanned);
	EXPECT_COUNTS(1000, 1000, 1000, 1000);
	ASSERT_EQ(0, wi_read_policy(&r, self->p));
	EXPECT_EQ(MPOL_WEIGHTED_INTERLEAVE, r.args.mode);
	EXPECT_EQ(4, r.w[self->nodes[0]]);
	EXPECT_EQ(2, r.w[self->nodes[1]]);

	/* Refault: the VMA's interleave index now maps to 4,2,1,1. */
	ASSERT_EQ(0, madvise(self->p, self->len, MADV_DONTNEED));
	fill_pages(self->p, NPAGES, 2);
	EXPECT_COUNTS(2000, 1000, 500, 500);
}

/* mbind2() with MPOL_ARGS_REBALANCE on half the range moves that half. */
TEST_F(rebalance, mbind2_rebalance_half_range)
{
	struct wi_rebalance_stat d;
	size_t half = self->len / 2;
	long ret;

	ASSERT_EQ(0, map_with_vma_policy(self, 0, 1, 1, 1, 1));
	set_w(self, 4, 2, 1, 1);
	self->args.flags |= MPOL_ARGS_REBALANCE;
	/* An empty range rebalances nothing. */
	wi_rebalance_stat_read(&self->before);
	ASSERT_EQ(0, sys_mbind2(self->p, 0, &self->args, sizeof(self->args),
				0));
	wi_rebalance_stat_read(&self->after);
	d = wi_rebalance_delta(&self->before, &self->after);
	EXPECT_EQ(0, d.scanned);
	wi_rebalance_stat_read(&self->before);
	ret = sys_mbind2(self->p, half, &self->args, sizeof(self->args), 0);
	wi_rebalance_stat_read(&self->after);
	ASSERT_EQ(0, ret);
	/* First half 1000/500/250/250, second half still 500 each. */
	EXPECT_COUNTS(1500, 1000, 750, 750);
	d = wi_rebalance_delta(&self->before, &self->after);
	EXPECT_EQ(500, d.moved);
	EXPECT_EQ(NPAGES / 2, d.scanned);
	EXPECT_EQ(0, bad_pages(self->p, NPAGES, 1));
}

/* Plain interleave gets equal shares with mbind2()'s rebalance. */
TEST_F(rebalance, mbind2_rebalance_to_plain_interleave)
{
	ASSERT_EQ(0, map_with_vma_policy(self, 0, 5, 1, 1, 1));
	EXPECT_COUNTS(2500, 500, 500, 500);
	self->args.mode = MPOL_INTERLEAVE;
	self->args.il_weights = 0;
	self->args.flags |= MPOL_ARGS_REBALANCE;
	ASSERT_EQ(0, sys_mbind2(self->p, self->len, &self->args,
				sizeof(self->args), 0));
	EXPECT_COUNTS(1000, 1000, 1000, 1000);
}

/*
 * The task policy governs anonymous VMAs without their own; their pages
 * are rebalanced too.  Other VMAs of this process (stack, heap) are under
 * the same policy, and some of their pages are still shared with the
 * harness process this test was forked from, so they cannot move without
 * MPOL_MF_MOVE_ALL: the call returns exactly the pages counted as failed,
 * and only a lower bound on moved pages holds.
 */
TEST_F(rebalance, task_policy_anon_range)
{
	struct wi_rebalance_stat d;
	long left;

	self->p = wi_map_prefaulted(NPAGES);
	ASSERT_NE(NULL, self->p);
	set_w(self, 1, 1, 1, 1);
	ASSERT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));
	fill_pages(self->p, NPAGES, 3);
	ASSERT_EQ(0, sys_set_mempolicy(MPOL_DEFAULT, NULL, 0));
	EXPECT_COUNTS(1000, 1000, 1000, 1000);
	ASSERT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));

	left = reweight_self(self, 4, 2, 1, 1, MPOL_REWEIGHT_REBALANCE);
	ASSERT_EQ(0, sys_set_mempolicy(MPOL_DEFAULT, NULL, 0));
	ASSERT_LE(0, left);
	d = wi_rebalance_delta(&self->before, &self->after);
	EXPECT_EQ(left, d.failed);
	EXPECT_COUNTS(2000, 1000, 500, 500);
	EXPECT_LE(1000, d.moved);
	EXPECT_EQ(0, bad_pages(self->p, NPAGES, 3));
}

/*
 * Task policies are per thread.  The main thread interleaves 1,1,1,1 and
 * faults its buffer; a worker binds to the last node and faults its own.
 * Neither buffer has a VMA policy, and nothing records which thread
 * placed a page, so a reweight with MPOL_REWEIGHT_REBALANCE moves neither: the
 * worker's pages stay on its node (they were spread over the main
 * thread's weights before), the main thread's stay at 1,1,1,1, and the
 * call moves and fails nothing.
 */
struct bound_worker {
	pthread_barrier_t *faulted, *checked;
	int node;
	char *buf;
	long ret;
};

static void *bound_worker(void *p)
{
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))] = { 0 };
	struct bound_worker *a = p;

	wi_nodemask_set(mask, a->node);
	a->ret = sys_set_mempolicy(MPOL_BIND, mask, WI_MAX_NODES + 1);
	if (!a->ret) {
		a->buf = wi_map_prefaulted(NPAGES / 4);
		if (a->buf)
			wi_touch_pages(a->buf, NPAGES / 4);
		else
			a->ret = -1;
	}
	pthread_barrier_wait(a->faulted);
	pthread_barrier_wait(a->checked);
	return NULL;
}

TEST_F(rebalance, mixed_thread_policies_leave_task_policy_memory)
{
	struct wi_rebalance_stat d;
	pthread_barrier_t faulted, checked;
	struct bound_worker a = { &faulted, &checked, self->nodes[3], NULL, 0 };
	long worker[WI_MAX_NODES], left;
	pthread_t t;

	ASSERT_EQ(0, pthread_barrier_init(&faulted, NULL, 2));
	ASSERT_EQ(0, pthread_barrier_init(&checked, NULL, 2));
	self->p = wi_map_prefaulted(NPAGES);
	ASSERT_NE(NULL, self->p);
	set_w(self, 1, 1, 1, 1);
	ASSERT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));
	fill_pages(self->p, NPAGES, 5);
	ASSERT_EQ(0, pthread_create(&t, NULL, bound_worker, &a));
	pthread_barrier_wait(&faulted);
	ASSERT_EQ(0, a.ret);
	EXPECT_COUNTS(1000, 1000, 1000, 1000);
	ASSERT_EQ(0, wi_count_pages_per_node(a.buf, NPAGES / 4, worker));
	ASSERT_EQ(NPAGES / 4, worker[self->nodes[3]]);

	left = reweight_self(self, 4, 2, 1, 1, MPOL_REWEIGHT_REBALANCE);
	EXPECT_EQ(0, left);
	d = wi_rebalance_delta(&self->before, &self->after);
	EXPECT_EQ(0, d.moved);
	EXPECT_EQ(0, d.failed);
	ASSERT_EQ(0, wi_count_pages_per_node(a.buf, NPAGES / 4, worker));
	EXPECT_EQ(NPAGES / 4, worker[self->nodes[3]]);
	TH_LOG("worker's pages: node%d=%ld node%d=%ld node%d=%ld node%d=%ld",
	       self->nodes[0], worker[self->nodes[0]], self->nodes[1],
	       worker[self->nodes[1]], self->nodes[2], worker[self->nodes[2]],
	       self->nodes[3], worker[self->nodes[3]]);
	EXPECT_COUNTS(1000, 1000, 1000, 1000);
	EXPECT_EQ(0, bad_pages(self->p, NPAGES, 5));

	pthread_barrier_wait(&checked);
	ASSERT_EQ(0, pthread_join(t, NULL));
	munmap(a.buf, NPAGES / 4 * getpagesize());
	ASSERT_EQ(0, sys_set_mempolicy(MPOL_DEFAULT, NULL, 0));
}

/*
 * A shmem range without a shared policy is no rebalance unit: its pages
 * belong to the file, placed by whichever task faulted them, and other
 * processes may map them (an executable on tmpfs, a file in /dev/shm).
 * The task policy that placed them does not move them.
 */
TEST_F(rebalance, task_policy_leaves_shmem_without_policy)
{
	int fd = memfd_create("mpol2-no-policy", 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, self->len));
	self->p = mmap(NULL, self->len, PROT_READ | PROT_WRITE, MAP_SHARED,
		       fd, 0);
	close(fd);
	ASSERT_NE(MAP_FAILED, self->p);
	set_w(self, 1, 1, 1, 1);
	ASSERT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));
	fill_pages(self->p, NPAGES, 4);
	EXPECT_COUNTS(1000, 1000, 1000, 1000);

	reweight_self(self, 4, 2, 1, 1, MPOL_REWEIGHT_REBALANCE);
	ASSERT_EQ(0, sys_set_mempolicy(MPOL_DEFAULT, NULL, 0));
	EXPECT_COUNTS(1000, 1000, 1000, 1000);
	EXPECT_EQ(0, bad_pages(self->p, NPAGES, 4));
}

/* Policies of other modes, and their pages, are left alone. */
TEST_F(rebalance, other_modes_untouched)
{
	struct wi_rebalance_stat d;
	struct wi_policy r;

	ASSERT_EQ(0, map_with_vma_policy(self, 0, 1, 1, 1, 1));
	self->args.mode = MPOL_INTERLEAVE;
	self->args.il_weights = 0;
	ASSERT_EQ(0, sys_mbind2(self->p, self->len, &self->args,
				sizeof(self->args), 0));
	ASSERT_EQ(0, reweight_self(self, 4, 2, 1, 1, MPOL_REWEIGHT_REBALANCE));
	d = wi_rebalance_delta(&self->before, &self->after);
	EXPECT_EQ(0, d.scanned);
	EXPECT_COUNTS(1000, 1000, 1000, 1000);
	ASSERT_EQ(0, wi_read_policy(&r, self->p));
	EXPECT_EQ(MPOL_INTERLEAVE, r.args.mode);
}

/*
 * Pin @len bytes at @p for DMA as a registered io_uring buffer (FOLL_PIN,
 * long term).  Returns the ring's fd, which holds the pin until closed, or
 * -1 with errno set.
 */
static int pin_with_io_uring(void *p, size_t len)
{
	struct io_uring_params params = { 0 };
	struct iovec iov = { .iov_base = p, .iov_len = len };
	int fd = syscall(__NR_io_uring_setup, 1, &params);

	if (fd < 0)
		return -1;
	if (syscall(__NR_io_uring_register, fd, IORING_REGISTER_BUFFERS,
		    &iov, 1)) {
		close(fd);
		return -1;
	}
	return fd;
}

/*
 * Pages pinned for DMA cannot migrate.  A rebalance counts them where
 * they are and plans around them: the other pages fill every node's
 * share, exactly the minimum moves, nothing fails and no pinned page
 * moves.  Isolating pinned pages failed them on every call (250 of the
 * 1000 to move here) and left the nodes off their shares.
 */
TEST_F(rebalance, pinned_pages_are_planned_around)
{
	int before[NPAGES / 4], after[NPAGES / 4];
	struct wi_rebalance_stat d;
	int ring, i;

	ASSERT_EQ(0, map_with_vma_policy(self, 0, 1, 1, 1, 1));
	EXPECT_COUNTS(1000, 1000, 1000, 1000);
	/* The first quarter, 250 pages on each node, pinned. */
	ring = pin_with_io_uring(self->p, self->len / 4);
	if (ring < 0)
		SKIP(return, "io_uring buffers unavailable: %s", strerror(errno));
	ASSERT_EQ(0, wi_page_nodes(self->p, NPAGES / 4, before));

	ASSERT_EQ(0, reweight_self(self, 4, 2, 1, 1, MPOL_REWEIGHT_REBALANCE));
	EXPECT_COUNTS(2000, 1000, 500, 500);
	d = wi_rebalance_delta(&self->before, &self->after);
	EXPECT_EQ(NPAGES, d.scanned);
	EXPECT_EQ(1000, d.moved);
	EXPECT_EQ(0, d.failed);
	ASSERT_EQ(0, wi_page_nodes(self->p, NPAGES / 4, after));
	for (i = 0; i < NPAGES / 4; i++)
		if (before[i] != after[i])
			break;
	EXPECT_EQ(NPAGES / 4, i);
	EXPECT_EQ(0, bad_pages(self->p, NPAGES, 1));
	close(ring);
}

/*
 * Pages a forked child still maps move only with MPOL_MF_MOVE_ALL; the
 * call returns how many had to move and could not.
 */
TEST_F(rebalance, shared_pages_need_move_all)
{
	struct wi_rebalance_stat d;
	int go[2], done[2], status;
	char c = 0;
	pid_t pid;

	ASSERT_EQ(0, map_with_vma_policy(self, 0, 1, 1, 1, 1));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(done));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		/* Keep the COW-shared pages mapped until told to go. */
		close(go[1]);
		close(done[0]);
		if (write(done[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(1);
		_exit(bad_pages(self->p, NPAGES, 1) ? 2 : 0);
	}
	close(go[0]);
	close(done[1]);
	ASSERT_EQ(1, read(done[0], &c, 1));

	EXPECT_EQ(1000, reweight_self(self, 4, 2, 1, 1, MPOL_REWEIGHT_REBALANCE));
	d = wi_rebalance_delta(&self->before, &self->after);
	EXPECT_EQ(0, d.moved);
	EXPECT_EQ(1000, d.failed);
	EXPECT_COUNTS(1000, 1000, 1000, 1000);

	EXPECT_EQ(0, reweight_self(self, 4, 2, 1, 1,
				   MPOL_REWEIGHT_REBALANCE | MPOL_REWEIGHT_MOVE_ALL));
	d = wi_rebalance_delta(&self->before, &self->after);
	EXPECT_EQ(1000, d.moved);
	EXPECT_COUNTS(2000, 1000, 500, 500);

	ASSERT_EQ(1, write(go[1], &c, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, bad_pages(self->p, NPAGES, 1));
}

/* Another process, through its pidfd: its pages and contents. */
TEST_F(rebalance, remote_process)
{
	struct wi_rebalance_stat d;
	int ready[2], go[2], pidfd, status;
	char c = 0;
	pid_t pid;

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (map_with_vma_policy(self, 0, 1, 1, 1, 1))
			_exit(10);
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(11);
		if (wi_count_pages_per_node(self->p, NPAGES, self->counts))
			_exit(12);
		if (self->counts[self->nodes[0]] != 500 ||
		    self->counts[self->nodes[1]] != 500 ||
		    self->counts[self->nodes[2]] != 1500 ||
		    self->counts[self->nodes[3]] != 1500)
			_exit(13);
		_exit(bad_pages(self->p, NPAGES, 1) ? 14 : 0);
	}
	ASSERT_EQ(1, read(ready[0], &c, 1));
	pidfd = sys_pidfd_open(pid);
	ASSERT_LE(0, pidfd);
	set_w(self, 1, 1, 3, 3);
	wi_rebalance_stat_read(&self->before);
	EXPECT_EQ(0, sys_process_mpol_reweight(pidfd, self->w, WI_MAXNODE,
					       MPOL_REWEIGHT_REBALANCE));
	wi_rebalance_stat_read(&self->after);
	d = wi_rebalance_delta(&self->before, &self->after);
	EXPECT_EQ(1000, d.moved);
	ASSERT_EQ(1, write(go[1], &c, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(pidfd);
}

/* A refused call changes nothing: node 2,3 policy would lose all weight. */
TEST_F(rebalance, refused_call_changes_nothing)
{
	struct wi_rebalance_stat d;
	struct wi_policy r;
	char *q;
	int two[2];

	ASSERT_EQ(0, map_with_vma_policy(self, 0, 1, 1, 1, 1));
	q = mmap(NULL, 16 * getpagesize(), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, q);
	two[0] = self->nodes[2];
	two[1] = self->nodes[3];
	wi_args(&self->args, self->mask, two, 2, self->w);
	ASSERT_EQ(0, sys_mbind2(q, 16 * getpagesize(), &self->args,
				sizeof(self->args), 0));

	EXPECT_EQ(-1, reweight_self(self, 1, 1, 0, 0, MPOL_REWEIGHT_REBALANCE));
	EXPECT_EQ(EINVAL, errno);
	d = wi_rebalance_delta(&self->before, &self->after);
	EXPECT_EQ(0, d.moved);
	ASSERT_EQ(0, wi_read_policy(&r, self->p));
	EXPECT_EQ(1, r.w[self->nodes[2]]);
	EXPECT_EQ(1, r.w[self->nodes[3]]);
	ASSERT_EQ(0, wi_read_policy(&r, q));
	EXPECT_EQ(1, r.w[self->nodes[2]]);
	munmap(q, 16 * getpagesize());
}

/* Every thread's task policy gets the weights; its nodemask stays. */
struct thread_arg {
	pthread_barrier_t *set, *check;
	const int *nodes;
	int nr_nodes;
	unsigned char w[WI_MAXNODE];
	struct wi_policy r;
	long ret;
};

static void *thread_policy(void *p)
{
	struct thread_arg *a = p;
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
	struct mpol_args args;

	memset(a->w, 0, sizeof(a->w));
	for (int i = 0; i < a->nr_nodes; i++)
		a->w[a->nodes[i]] = 1;
	wi_args(&args, mask, a->nodes, a->nr_nodes, a->w);
	a->ret = sys_set_mempolicy2(&args, sizeof(args), 0);
	pthread_barrier_wait(a->set);
	pthread_barrier_wait(a->check);
	if (!a->ret)
		a->ret = wi_read_policy(&a->r, NULL);
	return NULL;
}

TEST_F(rebalance, every_thread_policy)
{
	pthread_barrier_t set, check;
	struct thread_arg a[3];
	pthread_t t[3];
	int i;

	ASSERT_EQ(0, pthread_barrier_init(&set, NULL, 4));
	ASSERT_EQ(0, pthread_barrier_init(&check, NULL, 4));
	for (i = 0; i < 3; i++) {
		a[i].set = &set;
		a[i].check = &check;
		a[i].nodes = self->nodes;
		a[i].nr_nodes = i == 2 ? 2 : NODES;
		ASSERT_EQ(0, pthread_create(&t[i], NULL, thread_policy, &a[i]));
	}
	pthread_barrier_wait(&set);
	EXPECT_EQ(0, reweight_self(self, 4, 2, 1, 1, 0));
	pthread_barrier_wait(&check);
	for (i = 0; i < 3; i++) {
		ASSERT_EQ(0, pthread_join(t[i], NULL));
		ASSERT_EQ(0, a[i].ret);
		EXPECT_EQ(MPOL_WEIGHTED_INTERLEAVE, a[i].r.args.mode);
		EXPECT_EQ(4, a[i].r.w[self->nodes[0]]);
		EXPECT_EQ(2, a[i].r.w[self->nodes[1]]);
		if (i == 2)
			EXPECT_EQ((1UL << self->nodes[0]) | (1UL << self->nodes[1]),
				  a[i].r.mask[0]);
	}
}

/* The target's leader thread has exited; another thread still runs. */
static int leader_go[2];

static void *survivor(void *arg)
{
	struct wi_policy r;
	char c;

	if (read(leader_go[0], &c, 1) != 1 || wi_read_policy(&r, NULL))
		syscall(SYS_exit_group, 20);
	syscall(SYS_exit_group, r.w[*(int *)arg] == 4 ? 0 : 21);
	return NULL;
}

/* 'Z' once the leader of @pid is a zombie, read from /proc. */
static char proc_state(pid_t pid)
{
	char path[64], buf[256], *p;
	int fd, n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] ? p[2] : 0;
}

TEST_F(rebalance, leader_exited_thread_runs)
{
	int ready[2], pidfd, status;
	long spins;
	char c = 0;
	pid_t pid;

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(leader_go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		pthread_t t;

		set_w(self, 1, 1, 1, 1);
		if (sys_set_mempolicy2(&self->args, sizeof(self->args), 0) ||
		    pthread_create(&t, NULL, survivor, &self->nodes[0]) ||
		    write(ready[1], &c, 1) != 1)
			_exit(10);
		syscall(SYS_exit, 0);	/* this thread only */
	}
	ASSERT_EQ(1, read(ready[0], &c, 1));
	pidfd = sys_pidfd_open(pid);
	ASSERT_LE(0, pidfd);
	/* Wait for the leader to exit by watching its state, not by time. */
	for (spins = 0; proc_state(pid) != 'Z' && spins < 100000000; spins++)
		sched_yield();
	ASSERT_EQ('Z', proc_state(pid));
	set_w(self, 4, 2, 1, 1);
	/* No rebalance: the child's pages are still shared with us. */
	EXPECT_EQ(0, sys_process_mpol_reweight(pidfd, self->w, WI_MAXNODE, 0));
	ASSERT_EQ(1, write(leader_go[1], &c, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(pidfd);
}

int main(int argc, char **argv)
{
	wi_skip_without_mempolicy2();
	return test_harness_run(argc, argv);
}
