// SPDX-License-Identifier: GPL-2.0
/*
 * Rebalance with transparent huge pages, which kernels built with
 * THP "always" fault by default.  A huge page moves whole and is never
 * split, so the plan is made in huge-page units: each node ends within
 * one huge page of its largest-remainder share, base pages fill the rest,
 * and the fewest pages move for that.  Each case states the counts the
 * rule in Documentation/userspace-api/process_mpol_reweight.rst gives,
 * worked out by hand, and checks them exactly: pages per node, pages
 * moved (/proc/vmstat), the return value, and that every huge page is
 * still whole (AnonHugePages of the range).
 */
#include "../kselftest_harness.h"
#include "numa_util.h"

#define HPAGE_PAGES 512		/* 2 MiB THP in 4 KiB pages */
#define THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"

/* One case: a range faulted at @from, rebalanced to @to. */
struct thp_case {
	int huge;			/* 2 MiB huge pages at the start */
	int base;			/* base pages after them, < HPAGE_PAGES */
	unsigned char from[4], to[4];
	long faulted[4];		/* pages per node after the fault */
	long after[4];			/* pages per node after the rebalance */
	long moved;
};

FIXTURE(thp) {
	int nodes[WI_MAX_NODES];
	char saved_enabled[64];		/* THP_ENABLED's mode, to restore */
	char *buf;
	size_t len, npages;
};

FIXTURE_VARIANT(thp) {
	const char *enabled;		/* "always" or "madvise" */
	const struct thp_case *c;
};

/* 16/8/4/4 huge pages to 5,3,1,1: shares 8192/4915/1639/1638. */
static const struct thp_case all_thp_5311 = {
	.huge = 32, .from = { 4, 2, 1, 1 }, .to = { 5, 3, 1, 1 },
	.faulted = { 8192, 4096, 2048, 2048 },
	.after = { 8192, 4608, 2048, 1536 }, .moved = 512,
};

/* Shares that are whole huge pages: exactly the base-page minimum. */
static const struct thp_case all_thp_4211 = {
	.huge = 32, .from = { 1, 1, 1, 1 }, .to = { 4, 2, 1, 1 },
	.faulted = { 4096, 4096, 4096, 4096 },
	.after = { 8192, 4096, 2048, 2048 }, .moved = 4096,
};

/*
 * 8 huge pages and 400 base pages at 1,1,1,1 (2 and 100 per node) to
 * 5,3,1,1: shares 2248/1349/450/449.  Nodes 0 and 1 take the huge pages
 * that nodes 2 and 3 give (each keeps one, 62 and 63 over) and all of
 * their base pages, 125 short of filling nodes 0 and 1 exactly.
 */
static const struct thp_case mixed_5311 = {
	.huge = 8, .base = 400, .from = { 1, 1, 1, 1 }, .to = { 5, 3, 1, 1 },
	.faulted = { 1124, 1124, 1124, 1124 },
	.after = { 2185, 1287, 512, 512 }, .moved = 1224,
};

FIXTURE_VARIANT_ADD(thp, madvise_all_thp_5311) {
	.enabled = "madvise", .c = &all_thp_5311,
};

FIXTURE_VARIANT_ADD(thp, always_all_thp_5311) {
	.enabled = "always", .c = &all_thp_5311,
};

FIXTURE_VARIANT_ADD(thp, madvise_all_thp_4211) {
	.enabled = "madvise", .c = &all_thp_4211,
};

FIXTURE_VARIANT_ADD(thp, madvise_mixed_5311) {
	.enabled = "madvise", .c = &mixed_5311,
};

FIXTURE_VARIANT_ADD(thp, always_mixed_5311) {
	.enabled = "always", .c = &mixed_5311,
};

FIXTURE_SETUP(thp)
{
	int n = wi_memory_nodes(self->nodes, WI_MAX_NODES);

	self->buf = NULL;
	self->saved_enabled[0] = '\0';
	if (n < 4)
		SKIP(return, "Not enough NUMA nodes available (needs 4)");
	if (wi_read_selected(THP_ENABLED, self->saved_enabled, sizeof(self->saved_enabled)))
		SKIP(return, "No transparent huge pages (%s)", THP_ENABLED);
	ASSERT_EQ(0, wi_write_file(THP_ENABLED, variant->enabled));

	self->npages = (size_t)variant->c->huge * HPAGE_PAGES + variant->c->base;
	self->len = self->npages * getpagesize();
	self->buf = wi_map_hpage_aligned(self->len);
	ASSERT_NE(NULL, self->buf);
	if (!strcmp(variant->enabled, "madvise"))
		ASSERT_EQ(0, madvise(self->buf, self->len, MADV_HUGEPAGE));
}

FIXTURE_TEARDOWN(thp)
{
	if (self->buf)
		munmap(self->buf, self->len);
	if (self->saved_enabled[0])
		wi_write_file(THP_ENABLED, self->saved_enabled);
}

/* mbind2 the range to @w on the fixture's first four nodes. */
static long bind_range(struct _test_data_thp *self, const unsigned char *w,
		       unsigned int flags)
{
	return wi_mbind2_nodes(self->buf, self->len, self->nodes, 4, w, flags);
}

static void expect_counts(struct __test_metadata *_metadata,
			  struct _test_data_thp *self, const long *want,
			  const char *when)
{
	long counts[WI_MAX_NODES];
	int i;

	ASSERT_EQ(0, wi_count_pages_per_node(self->buf, self->npages, counts));
	TH_LOG("%s: %ld/%ld/%ld/%ld pages, expected %ld/%ld/%ld/%ld", when,
	       counts[self->nodes[0]], counts[self->nodes[1]],
	       counts[self->nodes[2]], counts[self->nodes[3]],
	       want[0], want[1], want[2], want[3]);
	for (i = 0; i < 4; i++)
		EXPECT_EQ(want[i], counts[self->nodes[i]]) TH_LOG("node %d", self->nodes[i]);
}

TEST_F(thp, rebalance_plans_in_whole_huge_pages)
{
	const struct thp_case *c = variant->c;
	long huge_kb = (long)c->huge * HPAGE_PAGES * getpagesize() / 1024;
	long moved, left;

	ASSERT_EQ(0, bind_range(self, c->from, 0));
	wi_touch_pages(self->buf, self->npages);
	ASSERT_EQ(huge_kb, wi_anon_huge_kb(self->buf)) TH_LOG("huge pages faulted");
	expect_counts(_metadata, self, c->faulted, "faulted");

	moved = wi_vmstat("mpol_rebalance_moved");
	left = bind_range(self, c->to, WI_REBALANCE);
	moved = wi_vmstat("mpol_rebalance_moved") - moved;
	TH_LOG("moved %ld pages (expected %ld), %ld not moved", moved, c->moved,
	       left);
	EXPECT_EQ(0, left);
	EXPECT_EQ(c->moved, moved);
	expect_counts(_metadata, self, c->after, "rebalanced");
	EXPECT_EQ(huge_kb, wi_anon_huge_kb(self->buf)) TH_LOG("huge pages still whole");
}

/*
 * Two folio sizes in one range, as mTHP makes them: one 2 MiB THP, then
 * 96 folios of 64 KiB, faulted under 1,1 on two nodes (the THP's node
 * holds 512 + 768 pages, the other 768).  Reweighted 3:1 toward the THP's
 * node, the shares are 1536/512: reachable only if the 64 KiB folios are
 * planned too, 16 of them moving (256 pages).
 */
#define MTHP_DIR "/sys/kernel/mm/transparent_hugepage/"
#define MTHP_64K MTHP_DIR "hugepages-64kB/enabled"
#define MTHP_2M MTHP_DIR "hugepages-2048kB/enabled"

FIXTURE(mthp) {
	int nodes[WI_MAX_NODES];
	char saved[3][64];		/* THP_ENABLED, MTHP_2M, MTHP_64K */
	char *buf;
	size_t len, npages;
};

static const char *const mthp_files[3] = { THP_ENABLED, MTHP_2M, MTHP_64K };

FIXTURE_SETUP(mthp)
{
	int i;

	self->buf = NULL;
	for (i = 0; i < 3; i++)
		self->saved[i][0] = '\0';
	if (wi_memory_nodes(self->nodes, WI_MAX_NODES) < 2)
		SKIP(return, "Not enough NUMA nodes available (needs 2)");
	for (i = 0; i < 3; i++)
		if (wi_read_selected(mthp_files[i], self->saved[i],
				     sizeof(self->saved[i])))
			SKIP(return, "No %s", mthp_files[i]);
	self->npages = HPAGE_PAGES + 96 * 16;
	self->len = self->npages * getpagesize();
	self->buf = wi_map_hpage_aligned(self->len);
	ASSERT_NE(NULL, self->buf);
}

FIXTURE_TEARDOWN(mthp)
{
	int i;

	if (self->buf)
		munmap(self->buf, self->len);
	for (i = 0; i < 3; i++)
		if (self->saved[i][0])
			wi_write_file(mthp_files[i], self->saved[i]);
}

TEST_F_TIMEOUT(mthp, mixed_sizes_reach_their_shares, 120)
{
	unsigned char w[2] = { 1, 1 };
	long counts[WI_MAX_NODES], moved, left, a, b;
	int big, small;

	ASSERT_EQ(0, wi_mbind2_nodes(self->buf, self->len, self->nodes, 2,
				     w, 0));
	/* The first 2 MiB as one THP, the rest as 64 KiB folios. */
	ASSERT_EQ(0, wi_write_file(THP_ENABLED, "always"));
	ASSERT_EQ(0, wi_write_file(MTHP_2M, "inherit"));
	ASSERT_EQ(0, wi_write_file(MTHP_64K, "never"));
	wi_touch_pages(self->buf, HPAGE_PAGES);
	ASSERT_EQ(0, wi_write_file(MTHP_2M, "never"));
	ASSERT_EQ(0, wi_write_file(MTHP_64K, "always"));
	wi_touch_pages(self->buf + HPAGE_PAGES * getpagesize(),
		       self->npages - HPAGE_PAGES);
	ASSERT_EQ(2048, wi_anon_huge_kb(self->buf)) TH_LOG("one 2 MiB THP");

	ASSERT_EQ(0, wi_count_pages_per_node(self->buf, self->npages, counts));
	a = counts[self->nodes[0]];
	b = counts[self->nodes[1]];
	TH_LOG("faulted: %ld/%ld pages", a, b);
	ASSERT_EQ(2048, a + b);
	ASSERT_TRUE((a == 1280 && b == 768) || (a == 768 && b == 1280));
	big = a > b ? 0 : 1;
	small = 1 - big;
	w[big] = 3;
	w[small] = 1;

	moved = wi_vmstat("mpol_rebalance_moved");
	left = wi_mbind2_nodes(self->buf, self->len, self->nodes, 2, w,
			       WI_REBALANCE);
	moved = wi_vmstat("mpol_rebalance_moved") - moved;
	ASSERT_EQ(0, wi_count_pages_per_node(self->buf, self->npages, counts));
	TH_LOG("rebalanced: %ld/%ld pages (expected 1536/512), moved %ld",
	       counts[self->nodes[big]], counts[self->nodes[small]], moved);
	EXPECT_EQ(0, left);
	EXPECT_EQ(256, moved);
	EXPECT_EQ(1536, counts[self->nodes[big]]);
	EXPECT_EQ(512, counts[self->nodes[small]]);
	EXPECT_EQ(2048, wi_anon_huge_kb(self->buf)) TH_LOG("THP still whole");
}

/*
 * Four folio sizes in one range, as mTHP makes them: one 2 MiB THP, then
 * 8 folios each of 64, 32 and 16 KiB (736 pages), faulted on one node and
 * rebalanced to another.  Every folio is planned, whatever its size, so
 * all 736 pages move, each folio whole; a planner that kept a fourth size
 * fixed left the 16 KiB folios (32 pages) behind.  Each size's
 * anon_fault_alloc count shows its folios were made.
 */
#define MTHP_NSIZES 4
#define MTHP_FOLIOS 8

static const int mthp4_kb[MTHP_NSIZES] = { 2048, 64, 32, 16 };

FIXTURE(mthp4) {
	int nodes[WI_MAX_NODES];
	char saved[MTHP_NSIZES + 1][64];	/* each size's enabled, THP_ENABLED */
	char files[MTHP_NSIZES + 1][128];
	char *buf;
	size_t len, npages;
};

FIXTURE_SETUP(mthp4)
{
	int i;

	self->buf = NULL;
	for (i = 0; i <= MTHP_NSIZES; i++)
		self->saved[i][0] = '\0';
	if (wi_memory_nodes(self->nodes, WI_MAX_NODES) < 2)
		SKIP(return, "Not enough NUMA nodes available (needs 2)");
	for (i = 0; i < MTHP_NSIZES; i++)
		snprintf(self->files[i], sizeof(self->files[i]),
			 MTHP_DIR "hugepages-%dkB/enabled", mthp4_kb[i]);
	snprintf(self->files[MTHP_NSIZES], sizeof(self->files[0]), "%s",
		 THP_ENABLED);
	for (i = 0; i <= MTHP_NSIZES; i++)
		if (wi_read_selected(self->files[i], self->saved[i],
				     sizeof(self->saved[i])))
			SKIP(return, "No %s", self->files[i]);
	self->npages = HPAGE_PAGES;
	for (i = 1; i < MTHP_NSIZES; i++)
		self->npages += MTHP_FOLIOS * mthp4_kb[i] * 1024 / getpagesize();
	self->len = self->npages * getpagesize();
	self->buf = wi_map_hpage_aligned(self->len);
	ASSERT_NE(NULL, self->buf);
}

FIXTURE_TEARDOWN(mthp4)
{
	int i;

	if (self->buf)
		munmap(self->buf, self->len);
	for (i = 0; i <= MTHP_NSIZES; i++)
		if (self->saved[i][0])
			wi_write_file(self->files[i], self->saved[i]);
}

/* Folios of @kb KiB faulted so far (the size's anon_fault_alloc). */
static long mthp_faulted(int kb)
{
	char path[128];

	snprintf(path, sizeof(path),
		 MTHP_DIR "hugepages-%dkB/stats/anon_fault_alloc", kb);
	return wi_read_long(path);
}

TEST_F_TIMEOUT(mthp4, four_sizes_all_planned, 120)
{
	unsigned char w[1] = { 1 };
	long counts[WI_MAX_NODES], moved, left, before, pages;
	char *p = self->buf;
	int i;

	ASSERT_EQ(0, wi_mbind2_nodes(self->buf, self->len, self->nodes, 1,
				     w, 0));
	ASSERT_EQ(0, wi_write_file(THP_ENABLED, "always"));
	for (i = 0; i < MTHP_NSIZES; i++)
		ASSERT_EQ(0, wi_write_file(self->files[i], "never"));
	/* Each size's part of the range faulted with only that size on. */
	for (i = 0; i < MTHP_NSIZES; i++) {
		pages = i ? MTHP_FOLIOS * mthp4_kb[i] * 1024 / getpagesize() :
			    HPAGE_PAGES;
		ASSERT_EQ(0, wi_write_file(self->files[i], "always"));
		before = mthp_faulted(mthp4_kb[i]);
		ASSERT_LE(0, before) TH_LOG("no stats for %d KiB", mthp4_kb[i]);
		wi_touch_pages(p, pages);
		ASSERT_EQ(i ? MTHP_FOLIOS : 1,
			  mthp_faulted(mthp4_kb[i]) - before)
			TH_LOG("%d KiB folios faulted", mthp4_kb[i]);
		ASSERT_EQ(0, wi_write_file(self->files[i], "never"));
		p += pages * getpagesize();
	}
	ASSERT_EQ(0, wi_count_pages_per_node(self->buf, self->npages, counts));
	TH_LOG("faulted: %ld/%ld pages", counts[self->nodes[0]],
	       counts[self->nodes[1]]);
	ASSERT_EQ((long)self->npages, counts[self->nodes[0]]);

	moved = wi_vmstat("mpol_rebalance_moved");
	left = wi_mbind2_nodes(self->buf, self->len, self->nodes + 1, 1, w,
			       WI_REBALANCE);
	moved = wi_vmstat("mpol_rebalance_moved") - moved;
	ASSERT_EQ(0, wi_count_pages_per_node(self->buf, self->npages, counts));
	TH_LOG("rebalanced: %ld/%ld pages (expected 0/%zu), moved %ld",
	       counts[self->nodes[0]], counts[self->nodes[1]], self->npages,
	       moved);
	EXPECT_EQ(0, left);
	EXPECT_EQ((long)self->npages, moved);
	EXPECT_EQ(0, counts[self->nodes[0]]);
	EXPECT_EQ((long)self->npages, counts[self->nodes[1]]);
	EXPECT_EQ(2048, wi_anon_huge_kb(self->buf)) TH_LOG("THP still whole");
}

int main(int argc, char **argv)
{
	wi_skip_without_mempolicy2();
	return test_harness_run(argc, argv);
}
