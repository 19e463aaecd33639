// SPDX-License-Identifier: GPL-2.0
/*
 * MPOL_MF_REBALANCE with transparent huge pages, which Debian's kernels
 * fault by default (THP "always").  A huge page moves whole and is never
 * split, so the plan is made in huge-page units: each node ends within
 * one huge page of its largest-remainder share, base pages fill the rest,
 * and the fewest pages move for that.  Each case states the counts the
 * rule in Documentation/userspace-api/process_mpol_reweight.rst gives,
 * worked out by hand, and checks them exactly: pages per node, pages
 * moved (/proc/vmstat), the return value, and that every huge page is
 * still whole (AnonHugePages of the range).
 */
#include "kselftest_harness.h"
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
	int nodes[BWAP_MAX_NODES];
	char saved_enabled[64];		/* THP_ENABLED's mode, to restore */
	char *raw, *buf;
	size_t raw_len, len, npages;
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

/* The selected mode of THP_ENABLED ("[madvise]" -> "madvise"). */
static int read_thp_mode(char *mode, size_t size)
{
	char line[128], *open_br, *close_br;
	FILE *f = fopen(THP_ENABLED, "r");

	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	open_br = strchr(line, '[');
	close_br = open_br ? strchr(open_br, ']') : NULL;
	if (!close_br || (size_t)(close_br - open_br) > size)
		return -1;
	*close_br = '\0';
	snprintf(mode, size, "%s", open_br + 1);
	return 0;
}

/* AnonHugePages of the mapping that starts at @addr, in kB, or -1. */
static long anon_huge_kb(void *addr)
{
	unsigned long start, end;
	char line[256];
	int in_vma = 0;
	long kb = -1;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		/* A mapping's first line is "start-end perms ..." in hex. */
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2)
			in_vma = start == (unsigned long)addr;
		else if (in_vma && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

FIXTURE_SETUP(thp)
{
	size_t hsz = (size_t)HPAGE_PAGES * getpagesize();
	int n = bwap_memory_nodes(self->nodes, BWAP_MAX_NODES);

	self->raw = NULL;
	self->saved_enabled[0] = '\0';
	if (n < 4)
		SKIP(return, "Not enough NUMA nodes available (needs 4)");
	if (read_thp_mode(self->saved_enabled, sizeof(self->saved_enabled)))
		SKIP(return, "No transparent huge pages (%s)", THP_ENABLED);
	ASSERT_EQ(0, bwap_write_file(THP_ENABLED, variant->enabled));

	self->npages = (size_t)variant->c->huge * HPAGE_PAGES + variant->c->base;
	self->len = self->npages * getpagesize();
	/* Room to start on a huge-page boundary. */
	self->raw_len = self->len + hsz;
	self->raw = mmap(NULL, self->raw_len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->raw);
	self->buf = (char *)(((unsigned long)self->raw + hsz - 1) & ~(hsz - 1));
	/* Unmap the slack, so that the range is a VMA of its own. */
	if (self->buf > self->raw)
		ASSERT_EQ(0, munmap(self->raw, self->buf - self->raw));
	if (self->buf + self->len < self->raw + self->raw_len)
		ASSERT_EQ(0, munmap(self->buf + self->len,
				    self->raw + self->raw_len - (self->buf + self->len)));
	self->raw = self->buf;
	self->raw_len = self->len;
	if (!strcmp(variant->enabled, "madvise"))
		ASSERT_EQ(0, madvise(self->buf, self->len, MADV_HUGEPAGE));
}

FIXTURE_TEARDOWN(thp)
{
	if (self->raw)
		munmap(self->raw, self->raw_len);
	if (self->saved_enabled[0])
		bwap_write_file(THP_ENABLED, self->saved_enabled);
}

/* mbind2 the range to @w on the fixture's first four nodes. */
static long bind_range(FIXTURE_DATA(thp) *self, const unsigned char *w,
		       unsigned int flags)
{
	return bwap_mbind2_nodes(self->buf, self->len, self->nodes, 4, w, flags);
}

static void expect_counts(struct __test_metadata *_metadata,
			  FIXTURE_DATA(thp) *self, const long *want,
			  const char *when)
{
	long counts[BWAP_MAX_NODES];
	int i;

	ASSERT_EQ(0, bwap_count_pages_per_node(self->buf, self->npages, counts));
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
	bwap_touch_pages(self->buf, self->npages);
	ASSERT_EQ(huge_kb, anon_huge_kb(self->buf)) TH_LOG("huge pages faulted");
	expect_counts(_metadata, self, c->faulted, "faulted");

	moved = bwap_vmstat("numa_rebalance_moved");
	left = bind_range(self, c->to, MPOL_MF_REBALANCE);
	moved = bwap_vmstat("numa_rebalance_moved") - moved;
	TH_LOG("moved %ld pages (expected %ld), %ld not moved", moved, c->moved,
	       left);
	EXPECT_EQ(0, left);
	EXPECT_EQ(c->moved, moved);
	expect_counts(_metadata, self, c->after, "rebalanced");
	EXPECT_EQ(huge_kb, anon_huge_kb(self->buf)) TH_LOG("huge pages still whole");
}

TEST_HARNESS_MAIN
