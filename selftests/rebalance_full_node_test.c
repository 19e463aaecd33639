// SPDX-License-Identifier: GPL-2.0
/*
 * A rebalance toward a node that has too little free memory: the pages
 * that cannot move are counted in the return value, no page lands on
 * another node, every page keeps its contents, and the kernel log stays
 * quiet.  A full destination is the expected case for a tuner that
 * pushes weights every few seconds, so each failed target allocation
 * must not print an allocation-failure report with a stack dump.
 * Needs two memory nodes; SKIPs with fewer.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>

#include "../kselftest_harness.h"
#include "numa_util.h"

/*
 * 256 MiB of 4 KiB pages, at 1,1 and then 1,63: the full node's share
 * grows by 31744 pages (124 MiB), far more than it has free between its
 * low and min watermarks, plus what its per-CPU lists hold, plus what
 * reclaim can give back (KASAN's quarantine, up to 1/32 of memory, with
 * KASAN).  The test uses the two nodes with the most free memory.
 */
#define NPAGES 65536
#define MOVE_WANTED 31744
/* What the filler leaves above the full node's low watermark. */
#define LEAVE_ABOVE_LOW_KB (4 * 1024)

/*
 * The sum of the low watermarks of @node's zones in KiB, from
 * /proc/zoneinfo, or -1.  With THP the kernel raises min_free_kbytes, so
 * the watermarks of a 512 MiB node are tens of MiB: a filler that went
 * below them would meet the OOM killer rather than leave a full node.
 */
static long node_low_kb(int node)
{
	char line[256];
	long low = -1, v;
	int n, in_node = 0;
	FILE *f = fopen("/proc/zoneinfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "Node %d, zone", &n) == 1) {
			in_node = n == node;
			continue;
		}
		if (in_node && sscanf(line, " low %ld", &v) == 1)
			low = (low < 0 ? 0 : low) + v * (getpagesize() / 1024);
	}
	fclose(f);
	return low;
}

/*
 * An open /dev/kmsg positioned after the last record, so that reads
 * return only what the kernel logs from now on.
 */
static int kmsg_open_at_end(void)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);

	if (fd >= 0 && lseek(fd, 0, SEEK_END) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Records logged since kmsg_open_at_end() that contain @what. */
static int kmsg_count(int fd, const char *what)
{
	char rec[8192];
	ssize_t n;
	int hits = 0;

	for (;;) {
		n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)	/* overwritten records: go on */
			continue;
		if (n <= 0)
			break;
		rec[n] = '\0';
		if (strstr(rec, what))
			hits++;
	}
	return hits;
}

static void fill_pages(char *p, size_t npages)
{
	size_t psz = getpagesize(), i, j;

	for (i = 0; i < npages; i++) {
		uint64_t *w = (uint64_t *)(p + i * psz);

		for (j = 0; j < psz / sizeof(*w); j++)
			w[j] = (i << 12) ^ j;
	}
}

static long bad_pages(char *p, size_t npages)
{
	size_t psz = getpagesize(), i, j;
	long bad = 0;

	for (i = 0; i < npages; i++) {
		uint64_t *w = (uint64_t *)(p + i * psz);

		for (j = 0; j < psz / sizeof(*w); j++) {
			if (w[j] != ((i << 12) ^ j)) {
				bad++;
				break;
			}
		}
	}
	return bad;
}

/*
 * Fill @node, under MPOL_BIND, down to LEAVE_ABOVE_LOW_KB above its low
 * watermark.  Returns the filler mapping and its length in *@len, or NULL.
 */
static char *fill_node(struct __test_metadata *_metadata, int node, size_t *len)
{
	unsigned long bind[WI_MAX_NODES / (8 * sizeof(long))] = { 0 };
	long free_kb = wi_node_free_kb(node), low_kb = node_low_kb(node);
	char *filler;

	if (low_kb <= 0 || free_kb <= low_kb + LEAVE_ABOVE_LOW_KB)
		return NULL;
	*len = (size_t)(free_kb - low_kb - LEAVE_ABOVE_LOW_KB) * 1024 /
	       getpagesize() * getpagesize();
	filler = mmap(NULL, *len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (filler == MAP_FAILED)
		return NULL;
	wi_nodemask_set(bind, node);
	if (madvise(filler, *len, MADV_NOHUGEPAGE) ||
	    sys_mbind(filler, *len, MPOL_BIND, bind, WI_MAX_NODES + 1, 0)) {
		munmap(filler, *len);
		return NULL;
	}
	memset(filler, 1, *len);
	TH_LOG("node %d: %ld kB free, low watermark %ld kB, filled %zu kB",
	       node, free_kb, low_kb, *len / 1024);
	return filler;
}

/*
 * The two memory nodes with the most free memory, the roomier first, so
 * that the 1,1 placement fits on both: node 0 may hold the kernel, a
 * KASAN shadow and other tests' leftovers, with too little left for its
 * half.  Returns 0, or -1 with fewer than two nodes.
 */
static int roomiest_two(int *two)
{
	int nodes[WI_MAX_NODES], n = wi_memory_nodes(nodes, WI_MAX_NODES);
	long best[2] = { -1, -1 }, kb;
	int i;

	for (i = 0; i < n; i++) {
		kb = wi_node_free_kb(nodes[i]);
		if (kb > best[0]) {
			best[1] = best[0];
			two[1] = two[0];
			best[0] = kb;
			two[0] = nodes[i];
		} else if (kb > best[1]) {
			best[1] = kb;
			two[1] = nodes[i];
		}
	}
	return best[1] < 0 ? -1 : 0;
}

/* mbind2 [@p, @p + @len) to weights 1,@w1 on nodes @two[0], @two[1]. */
static long bind_two(char *p, size_t len, const int *two, int w1,
		     unsigned int flags)
{
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
	unsigned char w[WI_MAXNODE] = { 0 };
	struct mpol_args args;

	w[two[0]] = 1;
	w[two[1]] = w1;
	wi_args(&args, mask, two, 2, w);
	return wi_mbind2(p, len, &args, flags);
}

/*
 * Each test moves or fills hundreds of MiB, which takes a while on a
 * small or shared machine: more than the harness's default 30 s.
 */
FIXTURE(big) {};
FIXTURE_SETUP(big) {}
FIXTURE_TEARDOWN(big) {}

TEST_F_TIMEOUT(big, full_destination_counts_its_shortfall_quietly, 300)
{
	size_t psz = getpagesize(), len = NPAGES * psz, fill_len;
	long counts[WI_MAX_NODES], failed, moved;
	int two[2], kmsg;
	char *p, *filler;

	if (roomiest_two(two))
		SKIP(return, "Not enough NUMA nodes available (need 2)");
	TH_LOG("nodes %d and %d: %ld and %ld kB free", two[0], two[1],
	       wi_node_free_kb(two[0]), wi_node_free_kb(two[1]));

	/* 1,1: 32768 pages on each node. */
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, madvise(p, len, MADV_NOHUGEPAGE));
	ASSERT_EQ(0, bind_two(p, len, two, 1, 0));
	fill_pages(p, NPAGES);
	ASSERT_EQ(0, wi_count_pages_per_node(p, NPAGES, counts));
	ASSERT_EQ(NPAGES / 2, counts[two[0]]);
	ASSERT_EQ(NPAGES / 2, counts[two[1]]);

	filler = fill_node(_metadata, two[1], &fill_len);
	ASSERT_NE(NULL, filler);

	/* 1,63: the second node's share is 64512 pages, 31744 more. */
	kmsg = kmsg_open_at_end();
	ASSERT_LE(0, kmsg);
	failed = bind_two(p, len, two, 63, WI_REBALANCE);
	ASSERT_LE(0, failed) TH_LOG("mbind2: %s", strerror(errno));
	ASSERT_EQ(0, wi_count_pages_per_node(p, NPAGES, counts));
	moved = counts[two[1]] - NPAGES / 2;
	TH_LOG("moved %ld, not moved %ld; node %d %ld, node %d %ld", moved, failed,
	       two[0], counts[two[0]], two[1], counts[two[1]]);
	/* Some of the pages due could not move, and each one is counted. */
	EXPECT_LT(0, failed);
	EXPECT_EQ(MOVE_WANTED, moved + failed);
	/* What did not move stayed where it was: on the first node. */
	EXPECT_EQ(NPAGES / 2 - moved, counts[two[0]]);
	EXPECT_EQ(0, bad_pages(p, NPAGES));
	EXPECT_EQ(0, kmsg_count(kmsg, "page allocation failure"));
	close(kmsg);
	munmap(filler, fill_len);
	munmap(p, len);
}

/*
 * The same with transparent huge pages: 64 of them at 1,1, then 1,63
 * toward the full node, whose share is 63 of them: 31 more (62 MiB),
 * more than it has room for.  (With KASAN, reclaim can empty its
 * quarantine and make room for all of them; a larger range does not fit
 * beside the other tests' memory.)
 * A huge page whose destination has no room stays where it is, whole,
 * and counts as not moved; none is split to move its base pages
 * (migrate_pages() splits a large folio it cannot place unless the reason
 * forbids it).
 */
#define THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"
#define HUGE_PAGES 64
#define HUGE_MOVE_WANTED (31 * 512)

TEST_F_TIMEOUT(big, full_destination_keeps_huge_pages_whole, 300)
{
	size_t npages = HUGE_PAGES * 512, len = npages * getpagesize(), fill_len;
	long counts[WI_MAX_NODES], failed, moved, huge_kb = len / 1024;
	int two[2], kmsg;
	char saved[32], *p, *filler;

	if (roomiest_two(two))
		SKIP(return, "Not enough NUMA nodes available (need 2)");
	if (wi_read_selected(THP_ENABLED, saved, sizeof(saved)))
		SKIP(return, "No transparent huge pages (%s)", THP_ENABLED);
	ASSERT_EQ(0, wi_write_file(THP_ENABLED, "madvise"));

	p = wi_map_hpage_aligned(len);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, madvise(p, len, MADV_HUGEPAGE));
	ASSERT_EQ(0, bind_two(p, len, two, 1, 0));
	fill_pages(p, npages);
	ASSERT_EQ(huge_kb, wi_anon_huge_kb(p)) TH_LOG("huge pages faulted");
	ASSERT_EQ(0, wi_count_pages_per_node(p, npages, counts));
	ASSERT_EQ((long)npages / 2, counts[two[0]]);

	filler = fill_node(_metadata, two[1], &fill_len);
	ASSERT_NE(NULL, filler);
	kmsg = kmsg_open_at_end();
	ASSERT_LE(0, kmsg);
	failed = bind_two(p, len, two, 63, WI_REBALANCE);
	ASSERT_LE(0, failed) TH_LOG("mbind2: %s", strerror(errno));
	ASSERT_EQ(0, wi_count_pages_per_node(p, npages, counts));
	moved = counts[two[1]] - (long)npages / 2;
	TH_LOG("moved %ld, not moved %ld; AnonHugePages %ld kB of %ld",
	       moved, failed, wi_anon_huge_kb(p), huge_kb);
	EXPECT_EQ(HUGE_MOVE_WANTED, moved + failed);
	EXPECT_EQ(0, moved % 512);
	EXPECT_EQ(huge_kb, wi_anon_huge_kb(p));
	EXPECT_EQ(0, bad_pages(p, npages));
	EXPECT_EQ(0, kmsg_count(kmsg, "page allocation failure"));
	close(kmsg);
	munmap(filler, fill_len);
	munmap(p, len);
	wi_write_file(THP_ENABLED, saved);
}

int main(int argc, char **argv)
{
	wi_skip_without_mempolicy2();
	return test_harness_run(argc, argv);
}
