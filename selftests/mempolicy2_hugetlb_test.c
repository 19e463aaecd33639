// SPDX-License-Identifier: GPL-2.0
/*
 * hugetlb under own weights: faults of a MAP_HUGETLB range land exactly
 * in huge pages, and a rebalance moves whole huge pages to their
 * shares, each into a free huge page of the destination node's pool.
 * Rebalance never allocates a fresh huge page: where the destination pool
 * is empty the folios stay, their pages are returned as not moved, the
 * pools keep their sizes and no data is lost.  Nor does it take the free
 * huge pages a reservation may need: another process's reserved, not yet
 * faulted huge pages, bound to the destination node, still fault there.
 * Each node's pool is set through /sys/devices/system/node/nodeN/hugepages/
 * and restored after.
 *
 * A 1 GiB folio moves whole too, in a batch of its own: the base pages
 * queued before it are migrated first, in batches of at most 512 pages,
 * so they move whether or not the folio finds a free 1 GiB page on its
 * destination.  Those tests need 1 GiB huge pages reserved at boot on two
 * nodes (hugepagesz=1G hugepages=1:1,2:1, with a third node that has
 * none), and skip without them.
 */
#include <signal.h>
#include <stdbool.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "numa_util.h"

#define HPAGE_PAGES 512		/* 2 MiB huge pages in 4 KiB pages */
#define HPAGE_SIZE (2UL << 20)
#define NR_HUGE 16		/* huge pages in the range */
#define POOL 10			/* huge pages reserved per node */

FIXTURE(hugetlb) {
	int nodes[WI_MAX_NODES];
	long saved[4];			/* each node's pool before the test */
	char *buf;
};

#define POOL_2M "hugepages-2048kB"
#define POOL_1G "hugepages-1048576kB"

/*
 * The @pool (POOL_2M, POOL_1G) of node @nid: @what is "nr_hugepages" or
 * "free_hugepages".
 */
static void pool_path(char *path, size_t size, const char *pool, int nid,
		      const char *what)
{
	snprintf(path, size, "/sys/devices/system/node/node%d/hugepages/%s/%s",
		 nid, pool, what);
}

static long pool_read(const char *pool, int nid, const char *what)
{
	char path[128], buf[32];
	long val = -1;
	FILE *f;

	pool_path(path, sizeof(path), pool, nid, what);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		val = atol(buf);
	fclose(f);
	return val;
}

static long pool_get(int nid, const char *what)
{
	return pool_read(POOL_2M, nid, what);
}

static int pool_set(int nid, long pages)
{
	char path[128], buf[32];
	int fd, len, ok;

	pool_path(path, sizeof(path), POOL_2M, nid, "nr_hugepages");
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	len = snprintf(buf, sizeof(buf), "%ld\n", pages);
	ok = write(fd, buf, len) == len;
	close(fd);
	return ok && pool_get(nid, "nr_hugepages") == pages ? 0 : -1;
}

FIXTURE_SETUP(hugetlb)
{
	int i;

	self->buf = MAP_FAILED;
	memset(self->saved, -1, sizeof(self->saved));
	if (wi_memory_nodes(self->nodes, WI_MAX_NODES) < 4)
		SKIP(return, "Not enough NUMA nodes available (needs 4)");
	if (pool_get(self->nodes[0], "nr_hugepages") < 0)
		SKIP(return, "No 2 MiB hugetlb pools (CONFIG_HUGETLBFS)");
	for (i = 0; i < 4; i++) {
		self->saved[i] = pool_get(self->nodes[i], "nr_hugepages");
		ASSERT_EQ(0, pool_set(self->nodes[i], POOL))
			TH_LOG("cannot reserve %d huge pages on node %d", POOL,
			       self->nodes[i]);
	}
}

FIXTURE_TEARDOWN(hugetlb)
{
	int i;

	if (self->buf != MAP_FAILED)
		munmap(self->buf, NR_HUGE * HPAGE_SIZE);
	for (i = 0; i < 4; i++)
		if (self->saved[i] >= 0)
			pool_set(self->nodes[i], self->saved[i]);
}

/* mbind2 the range to @w on the fixture's first four nodes. */
static long bind_huge(struct _test_data_hugetlb *self, const unsigned char *w,
		      unsigned int flags)
{
	return wi_mbind2_nodes(self->buf, NR_HUGE * HPAGE_SIZE, self->nodes, 4,
				 w, flags);
}

/* Map NR_HUGE huge pages under @w and fill each with its own byte. */
static void fault_huge(struct __test_metadata *_metadata,
		       struct _test_data_hugetlb *self, const unsigned char *w)
{
	int i;

	self->buf = mmap(NULL, NR_HUGE * HPAGE_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	ASSERT_NE(MAP_FAILED, self->buf);
	ASSERT_EQ(0, bind_huge(self, w, 0));
	for (i = 0; i < NR_HUGE; i++)
		memset(self->buf + i * HPAGE_SIZE, 0x40 + i, HPAGE_SIZE);
}

/* Huge pages per node of the range equal @want (in huge pages). */
static void expect_huge(struct __test_metadata *_metadata,
			struct _test_data_hugetlb *self, const long *want,
			const char *when)
{
	long counts[WI_MAX_NODES];
	int i;

	ASSERT_EQ(0, wi_count_pages_per_node(self->buf, NR_HUGE * HPAGE_PAGES,
					     counts));
	TH_LOG("%s: %ld/%ld/%ld/%ld huge pages, expected %ld/%ld/%ld/%ld", when,
	       counts[self->nodes[0]] / HPAGE_PAGES,
	       counts[self->nodes[1]] / HPAGE_PAGES,
	       counts[self->nodes[2]] / HPAGE_PAGES,
	       counts[self->nodes[3]] / HPAGE_PAGES,
	       want[0], want[1], want[2], want[3]);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(want[i] * HPAGE_PAGES, counts[self->nodes[i]]);
}

/* Every huge page still holds its byte, wherever it went. */
static void expect_data(struct __test_metadata *_metadata,
			struct _test_data_hugetlb *self)
{
	size_t off;
	int i;

	for (i = 0; i < NR_HUGE; i++)
		for (off = 0; off < HPAGE_SIZE; off += 4096)
			ASSERT_EQ(0x40 + i, self->buf[i * HPAGE_SIZE + off]);
}

static const unsigned char w2110[4] = { 2, 1, 1, 0 };
static const unsigned char w1111[4] = { 1, 1, 1, 1 };

TEST_F(hugetlb, faults_place_exact_huge_pages)
{
	static const long want[4] = { 8, 4, 4, 0 };

	fault_huge(_metadata, self, w2110);
	expect_huge(_metadata, self, want, "faulted");
	expect_data(_metadata, self);
}

/*
 * 8/4/4/0 to 1,1,1,1: node 0 gives 4 huge pages to node 3, whose pool has
 * them free.  The pools keep their sizes; their free pages follow.
 */
TEST_F(hugetlb, rebalance_moves_whole_huge_pages_into_the_pools)
{
	static const long faulted[4] = { 8, 4, 4, 0 }, after[4] = { 4, 4, 4, 4 };
	long moved, left;
	int i;

	fault_huge(_metadata, self, w2110);
	expect_huge(_metadata, self, faulted, "faulted");
	moved = wi_vmstat("mpol_rebalance_moved");
	left = bind_huge(self, w1111, WI_REBALANCE);
	moved = wi_vmstat("mpol_rebalance_moved") - moved;
	EXPECT_EQ(0, left);
	EXPECT_EQ(4 * HPAGE_PAGES, moved);
	expect_huge(_metadata, self, after, "rebalanced");
	expect_data(_metadata, self);
	for (i = 0; i < 4; i++) {
		EXPECT_EQ(POOL, pool_get(self->nodes[i], "nr_hugepages"));
		EXPECT_EQ(POOL - after[i], pool_get(self->nodes[i], "free_hugepages"));
	}
}

/*
 * The same with node 3's pool empty: its 4 huge pages cannot move, stay on
 * node 0, and come back as 2048 pages not moved; no huge page is
 * allocated outside the pools and nothing is lost.
 */
TEST_F(hugetlb, empty_destination_pool_leaves_folios_in_place)
{
	static const long faulted[4] = { 8, 4, 4, 0 };
	long moved, left;

	ASSERT_EQ(0, pool_set(self->nodes[3], 0));
	fault_huge(_metadata, self, w2110);
	expect_huge(_metadata, self, faulted, "faulted");
	moved = wi_vmstat("mpol_rebalance_moved");
	left = bind_huge(self, w1111, WI_REBALANCE);
	moved = wi_vmstat("mpol_rebalance_moved") - moved;
	EXPECT_EQ(4 * HPAGE_PAGES, left);
	EXPECT_EQ(0, moved);
	expect_huge(_metadata, self, faulted, "after");
	expect_data(_metadata, self);
	EXPECT_EQ(0, pool_get(self->nodes[3], "nr_hugepages"));
	EXPECT_EQ(POOL - 8, pool_get(self->nodes[0], "free_hugepages"));
}

/*
 * Process B maps 4 huge pages bound to node 3 (MPOL_BIND), which reserves
 * them, and does not fault them yet; node 3's pool holds exactly 4.  A
 * rebalance of 8/4/4/0 to 1,1,1,1 would send 4 huge pages to node 3.
 * Reservations are counted for the whole hstate, not per node, so the
 * rebalance must leave node 3 as many free huge pages as are reserved:
 * its 4 huge pages stay (2048 pages not moved) and B then faults all of
 * its pages on node 3, where taking them would have killed it with
 * SIGBUS.
 */
TEST_F(hugetlb, reserved_pages_of_a_bound_process_stay_free)
{
	static const long faulted[4] = { 8, 4, 4, 0 };
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))] = { 0 };
	int go[2], ready[2], status, i;
	long left, counts[WI_MAX_NODES];
	char c = 0, *b;
	pid_t pid;

	ASSERT_EQ(0, pool_set(self->nodes[3], 4));
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(ready));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		b = mmap(NULL, 4 * HPAGE_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
		wi_nodemask_set(mask, self->nodes[3]);
		if (b == MAP_FAILED ||
		    sys_mbind(b, 4 * HPAGE_SIZE, MPOL_BIND, mask, WI_MAX_NODES + 1, 0))
			_exit(3);
		if (write(ready[1], &c, 1) != 1 || read(go[0], &c, 1) != 1)
			_exit(3);
		for (i = 0; i < 4; i++)
			memset(b + i * HPAGE_SIZE, 0x70 + i, HPAGE_SIZE);
		if (wi_count_pages_per_node(b, 4 * HPAGE_PAGES, counts) ||
		    counts[self->nodes[3]] != 4 * HPAGE_PAGES)
			_exit(2);
		_exit(0);
	}
	ASSERT_EQ(1, read(ready[0], &c, 1));

	fault_huge(_metadata, self, w2110);
	expect_huge(_metadata, self, faulted, "faulted");
	left = bind_huge(self, w1111, WI_REBALANCE);
	EXPECT_EQ(4 * HPAGE_PAGES, left);
	expect_huge(_metadata, self, faulted, "after");
	EXPECT_EQ(4, pool_get(self->nodes[3], "free_hugepages"));

	ASSERT_EQ(1, write(go[1], &c, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status))
		TH_LOG("process B died of signal %d faulting its reserved huge pages",
		       WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	/* 0: B found its 4 huge pages on node 3; they are free again now. */
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(4, pool_get(self->nodes[3], "free_hugepages"));
	expect_data(_metadata, self);
}

#ifndef MAP_HUGE_1GB
#define MAP_HUGE_1GB (30 << 26)		/* log2(1 GiB) << MAP_HUGE_SHIFT */
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

#define BASE_PAGE 4096UL
#define GPAGE_SIZE (512 * HPAGE_SIZE)	/* 1 GiB */
#define GPAGE_PAGES ((long)(GPAGE_SIZE / BASE_PAGE))	/* 262144 */
#define GPAGE_PIECES (GPAGE_SIZE / HPAGE_SIZE)	/* its 2 MiB pieces */
#define BATCH 512		/* most pages a rebalance isolates at once */
/* Base pages before the 1 GiB folio: a full batch, then 488 pages. */
#define NR_BASE 1000
#define LAST_BASE_BATCH (NR_BASE % BATCH)
#define RANGE_LEN (NR_BASE * BASE_PAGE + GPAGE_SIZE)

/*
 * NR_BASE base pages and, right after them in a VMA of its own, one
 * 1 GiB hugetlb folio, all faulted on @src, a node with a free 1 GiB
 * huge page.  The nodes to send them to: @dst_free, another node with a
 * free 1 GiB huge page, and @dst_none, a node with memory but no free
 * 1 GiB huge page (-1 where there is no such node).  The tests take the
 * pools as they are: resizing a 1 GiB pool at run time needs
 * CONFIG_CONTIG_ALLOC, and even then rarely finds 1 GiB free in one
 * piece.  @free_before and @nr_before hold each pool before the test.
 */
FIXTURE(gigantic) {
	int src, dst_free, dst_none;
	long free_before[WI_MAX_NODES];
	long nr_before[WI_MAX_NODES];
	char *base;
	char *huge;
};

FIXTURE_SETUP(gigantic)
{
	int nodes[WI_MAX_NODES], nr, i, nid;

	self->base = MAP_FAILED;
	self->huge = MAP_FAILED;
	self->src = -1;
	self->dst_free = -1;
	self->dst_none = -1;
	nr = wi_memory_nodes(nodes, WI_MAX_NODES);
	if (nr < 2)
		SKIP(return, "Not enough NUMA nodes available (needs 2)");
	if (access("/sys/kernel/mm/hugepages/" POOL_1G, F_OK))
		SKIP(return,
		     "No 1 GiB huge pages (needs hugepagesz=1G and, on x86, a CPU with pdpe1gb)");
	for (i = 0; i < nr; i++) {
		nid = nodes[i];
		self->free_before[nid] = pool_read(POOL_1G, nid, "free_hugepages");
		self->nr_before[nid] = pool_read(POOL_1G, nid, "nr_hugepages");
		if (self->free_before[nid] > 0 && self->src < 0)
			self->src = nid;
		else if (self->free_before[nid] > 0 && self->dst_free < 0)
			self->dst_free = nid;
		else if (!self->free_before[nid] && self->dst_none < 0)
			self->dst_none = nid;
	}
	if (self->src < 0)
		SKIP(return,
		     "No free 1 GiB huge page on any node (boot with hugepagesz=1G hugepages=N:1)");
}

FIXTURE_TEARDOWN(gigantic)
{
	if (self->huge != MAP_FAILED)
		munmap(self->huge, GPAGE_SIZE);
	if (self->base != MAP_FAILED)
		munmap(self->base, NR_BASE * BASE_PAGE);
}

/* The node all of the 1 GiB folio is on; -1 if its pieces disagree. */
static int gigantic_node(char *huge)
{
	void *pages[GPAGE_PIECES];
	int status[GPAGE_PIECES];
	unsigned long i;

	for (i = 0; i < GPAGE_PIECES; i++)
		pages[i] = huge + i * HPAGE_SIZE;
	if (sys_move_pages(0, GPAGE_PIECES, pages, NULL, status, 0))
		return -1;
	for (i = 1; i < GPAGE_PIECES; i++)
		if (status[i] != status[0])
			return -1;
	return status[0];
}

/*
 * Map the range, bind it to @self->src and fault it: each base page and
 * each 2 MiB piece of the 1 GiB folio gets its own byte.
 */
static void map_gigantic(struct __test_metadata *_metadata,
			 struct _test_data_gigantic *self)
{
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))] = { 0 };
	long counts[WI_MAX_NODES];
	unsigned long i;
	char *want;

	self->huge = mmap(NULL, GPAGE_SIZE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_HUGE_1GB,
			  -1, 0);
	ASSERT_NE(MAP_FAILED, self->huge);
	want = self->huge - NR_BASE * BASE_PAGE;
	self->base = mmap(want, NR_BASE * BASE_PAGE, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	ASSERT_EQ(want, self->base);
	ASSERT_EQ(0, madvise(self->base, NR_BASE * BASE_PAGE, MADV_NOHUGEPAGE));
	wi_nodemask_set(mask, self->src);
	ASSERT_EQ(0, sys_mbind(self->base, RANGE_LEN, MPOL_BIND, mask,
			       WI_MAX_NODES + 1, 0));
	for (i = 0; i < NR_BASE; i++)
		self->base[i * BASE_PAGE] = (char)(0x10 + i);
	for (i = 0; i < GPAGE_PIECES; i++)
		self->huge[i * HPAGE_SIZE] = (char)(0x80 + i);

	ASSERT_EQ(0, wi_count_pages_per_node(self->base, NR_BASE, counts));
	ASSERT_EQ(NR_BASE, counts[self->src]);
	ASSERT_EQ(self->src, gigantic_node(self->huge));
}

/* Every base page and every piece of the folio still holds its byte. */
static void expect_gigantic_data(struct __test_metadata *_metadata,
				 struct _test_data_gigantic *self)
{
	unsigned long i;

	for (i = 0; i < NR_BASE; i++)
		ASSERT_EQ((char)(0x10 + i), self->base[i * BASE_PAGE]);
	for (i = 0; i < GPAGE_PIECES; i++)
		ASSERT_EQ((char)(0x80 + i), self->huge[i * HPAGE_SIZE]);
}

/* mbind2 the range with rebalance: weight 0 on the source, 1 on @dst. */
static long rebalance_to(struct _test_data_gigantic *self, int dst)
{
	static const unsigned char w[2] = { 0, 1 };
	int nodes[2] = { self->src, dst };

	return wi_mbind2_nodes(self->base, RANGE_LEN, nodes, 2, w, WI_REBALANCE);
}

#define TRACING "/sys/kernel/tracing"
#define MIGRATE_EVENT "events/migrate/mm_migrate_pages/enable"

/*
 * Trace each migrate_pages() call (mm_migrate_pages), from an empty
 * buffer: true if tracing is there (tracefs mounted if need be).
 */
static bool migrate_trace_start(void)
{
	if (access(TRACING "/" MIGRATE_EVENT, F_OK))
		mount("tracefs", TRACING, "tracefs", 0, NULL);
	return !wi_tracing_write("trace", "") && !wi_tracing_write(MIGRATE_EVENT, "1") &&
	       !wi_tracing_write("tracing_on", "1");
}

/*
 * Stop tracing and read back the rebalance's migrate_pages() calls, in
 * order: the pages each migrated into @ok[] and failed into @failed[], at
 * most @max.  Returns how many calls there were, or -1.
 */
static int migrate_trace_calls(struct __test_metadata *_metadata, long *ok,
			       long *failed, int max)
{
	char line[512], *p;
	int n = 0;
	FILE *f;

	if (wi_tracing_write(MIGRATE_EVENT, "0"))
		return -1;
	f = fopen(TRACING "/trace", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		p = strstr(line, "mm_migrate_pages: ");
		if (!p || !strstr(p, "reason=mempolicy_rebalance"))
			continue;
		p[strcspn(p, "\n")] = '\0';
		TH_LOG("%s", p);
		if (n < max &&
		    sscanf(p, "mm_migrate_pages: nr_succeeded=%ld nr_failed=%ld",
			   &ok[n], &failed[n]) != 2)
			n = max;
		n++;
	}
	fclose(f);
	wi_tracing_write("trace", "");
	return n;
}

/*
 * NR_BASE base pages, then one 1 GiB folio, rebalanced from @src to a
 * node that has a free 1 GiB huge page: the folio moves whole into that
 * page (pools keep their sizes, their free pages follow) and the base
 * pages all move.  Where migration is traced, the batches show: the
 * rebalance migrates 512 pages, 488, then the folio alone, 262144.  A
 * batch checked against its size only before each folio took the folio
 * into the batch of 488, one migration of 262632 pages.
 */
TEST_F_TIMEOUT(gigantic, folio_moves_alone_into_a_free_gigantic_page, 300)
{
	static const long want_ok[3] = { BATCH, LAST_BASE_BATCH, GPAGE_PAGES };
	struct wi_rebalance_stat s0, s1, d;
	long counts[WI_MAX_NODES], ok[4], failed[4], left;
	int n, i, err, dst = self->dst_free;
	bool traced;

	if (dst < 0)
		SKIP(return, "Needs a free 1 GiB huge page on a second node");
	map_gigantic(_metadata, self);
	traced = migrate_trace_start();
	wi_rebalance_stat_read(&s0);
	left = rebalance_to(self, dst);
	err = errno;
	wi_rebalance_stat_read(&s1);
	n = traced ? migrate_trace_calls(_metadata, ok, failed, 4) : -1;

	ASSERT_LE(0, left) TH_LOG("mbind2: %s", strerror(err));
	EXPECT_EQ(0, left);
	ASSERT_EQ(0, wi_count_pages_per_node(self->base, NR_BASE, counts));
	EXPECT_EQ(NR_BASE, counts[dst]);
	EXPECT_EQ(dst, gigantic_node(self->huge));
	expect_gigantic_data(_metadata, self);
	d = wi_rebalance_delta(&s0, &s1);
	EXPECT_EQ(NR_BASE + GPAGE_PAGES, d.scanned);
	EXPECT_EQ(NR_BASE + GPAGE_PAGES, d.moved);
	EXPECT_EQ(0, d.failed);
	/* The folio's old page is free again on @src; the new one was free. */
	EXPECT_EQ(self->free_before[self->src],
		  pool_read(POOL_1G, self->src, "free_hugepages"));
	EXPECT_EQ(self->free_before[dst] - 1,
		  pool_read(POOL_1G, dst, "free_hugepages"));
	EXPECT_EQ(self->nr_before[self->src],
		  pool_read(POOL_1G, self->src, "nr_hugepages"));
	EXPECT_EQ(self->nr_before[dst], pool_read(POOL_1G, dst, "nr_hugepages"));

	if (n < 0) {
		TH_LOG("migrate_pages() calls not traced (no mm_migrate_pages event)");
		return;
	}
	ASSERT_EQ(3, n);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(want_ok[i], ok[i]) TH_LOG("migration %d", i);
		EXPECT_EQ(0, failed[i]) TH_LOG("migration %d", i);
	}
}

/*
 * The same towards a node without a free 1 GiB huge page: the folio
 * stays on @src and comes back as its 262144 pages not moved, and every
 * base page before it moves.  A batch checked against its size only
 * before each folio took the folio into the batch of the last 488 base
 * pages, and migrate_pages() gives up the whole list when it finds no
 * page for a hugetlb folio: those 488 pages stayed too, and 262632 pages
 * came back as not moved.
 */
TEST_F_TIMEOUT(gigantic, folio_without_a_free_page_holds_no_base_page_back, 300)
{
	static const long want_ok[3] = { BATCH, LAST_BASE_BATCH, 0 };
	static const long want_failed[3] = { 0, 0, GPAGE_PAGES };
	struct wi_rebalance_stat s0, s1, d;
	long counts[WI_MAX_NODES], ok[4], failed[4], left;
	int n, i, err, dst = self->dst_none;
	bool traced;

	if (dst < 0)
		SKIP(return, "Needs a memory node without a free 1 GiB huge page");
	map_gigantic(_metadata, self);
	traced = migrate_trace_start();
	wi_rebalance_stat_read(&s0);
	left = rebalance_to(self, dst);
	err = errno;
	wi_rebalance_stat_read(&s1);
	n = traced ? migrate_trace_calls(_metadata, ok, failed, 4) : -1;

	ASSERT_LE(0, left) TH_LOG("mbind2: %s", strerror(err));
	EXPECT_EQ(GPAGE_PAGES, left);
	ASSERT_EQ(0, wi_count_pages_per_node(self->base, NR_BASE, counts));
	EXPECT_EQ(NR_BASE, counts[dst]);
	EXPECT_EQ(self->src, gigantic_node(self->huge));
	expect_gigantic_data(_metadata, self);
	d = wi_rebalance_delta(&s0, &s1);
	EXPECT_EQ(NR_BASE + GPAGE_PAGES, d.scanned);
	EXPECT_EQ(NR_BASE, d.moved);
	EXPECT_EQ(GPAGE_PAGES, d.failed);
	/* No 1 GiB page was made on @dst; the folio still holds its own. */
	EXPECT_EQ(self->free_before[self->src] - 1,
		  pool_read(POOL_1G, self->src, "free_hugepages"));
	EXPECT_EQ(self->nr_before[dst], pool_read(POOL_1G, dst, "nr_hugepages"));
	EXPECT_EQ(0, pool_read(POOL_1G, dst, "free_hugepages"));

	if (n < 0) {
		TH_LOG("migrate_pages() calls not traced (no mm_migrate_pages event)");
		return;
	}
	ASSERT_EQ(3, n);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(want_ok[i], ok[i]) TH_LOG("migration %d", i);
		EXPECT_EQ(want_failed[i], failed[i]) TH_LOG("migration %d", i);
	}
}

int main(int argc, char **argv)
{
	wi_skip_without_mempolicy2();
	return test_harness_run(argc, argv);
}
