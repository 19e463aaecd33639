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
 */
#include <signal.h>
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

/* The pool of node @nid: @what is "nr_hugepages" or "free_hugepages". */
static void pool_path(char *path, size_t size, int nid, const char *what)
{
	snprintf(path, size,
		 "/sys/devices/system/node/node%d/hugepages/hugepages-2048kB/%s",
		 nid, what);
}

static long pool_get(int nid, const char *what)
{
	char path[128], buf[32];
	long val = -1;
	FILE *f;

	pool_path(path, sizeof(path), nid, what);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		val = atol(buf);
	fclose(f);
	return val;
}

static int pool_set(int nid, long pages)
{
	char path[128], buf[32];
	int fd, len, ok;

	pool_path(path, sizeof(path), nid, "nr_hugepages");
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

int main(int argc, char **argv)
{
	wi_skip_without_mempolicy2();
	return test_harness_run(argc, argv);
}
