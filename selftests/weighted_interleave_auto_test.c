// SPDX-License-Identifier: GPL-2.0
/*
 * The global table's auto mode (mainline: weights computed from HMAT
 * bandwidth, left by any nodeN write, entered again by writing 1 to
 * "auto") against a policy's own weights.  Two VMAs over the first four
 * (or fewer) memory nodes: one with own weights 3,1,1,1 (mbind2), one with
 * the global weights (mbind).  Each is faulted a segment at a time in
 * auto mode, after a nodeN write (manual mode) and in auto mode again.
 * Every segment of the first must hold exactly its own shares; every
 * segment of the second exactly the global weights in effect when it was
 * faulted; get_mempolicy2() reports each VMA's weights in effect.
 * Without bandwidth data (no HMAT) mainline cannot enter auto mode and
 * says ENODEV, which is checked.  Kernels without auto mode skip.
 */
#include "../kselftest_harness.h"
#include "numa_util.h"

#define SEG 840			/* pages faulted per segment */
#define NSEG 3

FIXTURE(auto_mode) {
	int nodes[WI_MAX_NODES];
	int n;			/* nodes used, 2..4 */
	int saved[4];
	int saved_auto;
	char *own, *global;
	size_t len;
};

FIXTURE_SETUP(auto_mode)
{
	int i, all = wi_memory_nodes(self->nodes, WI_MAX_NODES);

	self->saved_auto = wi_auto_get();
	self->own = MAP_FAILED;
	self->global = MAP_FAILED;
	if (self->saved_auto < 0)
		SKIP(return, "no %s: this kernel has no auto mode", WI_WEIGHT_AUTO);
	if (all < 2)
		SKIP(return, "needs 2 memory nodes");
	self->n = all < 4 ? all : 4;
	for (i = 0; i < self->n; i++)
		self->saved[i] = wi_sysfs_weight_get(self->nodes[i]);
	self->len = (size_t)NSEG * SEG * getpagesize();
	self->own = mmap(NULL, self->len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	self->global = mmap(NULL, self->len, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->own);
	ASSERT_NE(MAP_FAILED, self->global);
	/* Base pages: the shares are counted per index. */
	ASSERT_EQ(0, madvise(self->own, self->len, MADV_NOHUGEPAGE));
	ASSERT_EQ(0, madvise(self->global, self->len, MADV_NOHUGEPAGE));
}

FIXTURE_TEARDOWN(auto_mode)
{
	if (self->own != MAP_FAILED)
		munmap(self->own, self->len);
	if (self->global != MAP_FAILED)
		munmap(self->global, self->len);
	if (self->saved_auto >= 0)
		wi_restore(self->nodes, self->saved, self->n, self->saved_auto);
}

/*
 * The pages of segment @seg of @p per node must be what a VMA policy with
 * weights @w over @n nodes gives: it interleaves by page index, which for
 * a private anonymous VMA is the virtual page number, each index taking
 * the node whose run of weight-many indexes holds it, in node order.
 */
static void expect_segment(struct __test_metadata *_metadata,
			   struct _test_data_auto_mode *self, char *p, int seg,
			   const int *w)
{
	char *start = p + (size_t)seg * SEG * getpagesize();
	long counts[WI_MAX_NODES], want[4] = { 0 };
	unsigned long vpn, j;
	int i, sum = 0;
	long t;

	for (i = 0; i < self->n; i++)
		sum += w[i];
	for (j = 0; j < SEG; j++) {
		vpn = (unsigned long)start / getpagesize() + j;
		t = vpn % sum;
		for (i = 0; t >= w[i]; i++)
			t -= w[i];
		want[i]++;
	}
	wi_touch_pages(start, SEG);
	ASSERT_EQ(0, wi_count_pages_per_node(start, SEG, counts));
	TH_LOG("%s segment %d: %ld/%ld/%ld/%ld pages, want %ld/%ld/%ld/%ld",
	       p == self->own ? "own weights" : "global weights", seg,
	       counts[self->nodes[0]], counts[self->nodes[1]],
	       self->n > 2 ? counts[self->nodes[2]] : 0,
	       self->n > 3 ? counts[self->nodes[3]] : 0,
	       want[0], want[1], want[2], want[3]);
	for (i = 0; i < self->n; i++)
		EXPECT_EQ(want[i], counts[self->nodes[i]])
			TH_LOG("segment %d, node %d, weights %d,%d,%d,%d",
			       seg, self->nodes[i], w[0], w[1],
			       self->n > 2 ? w[2] : 0, self->n > 3 ? w[3] : 0);
}

/* get_mempolicy2() of the VMA at @p must report weights @w. */
static void expect_query(struct __test_metadata *_metadata,
			 struct _test_data_auto_mode *self, char *p, const int *w)
{
	struct wi_policy r;
	int i;

	ASSERT_EQ(0, wi_read_policy(&r, p));
	EXPECT_EQ(MPOL_WEIGHTED_INTERLEAVE, r.args.mode);
	for (i = 0; i < self->n; i++)
		EXPECT_EQ(w[i], r.w[self->nodes[i]]);
}

static void global_weights(struct _test_data_auto_mode *self, int *w)
{
	int i;

	for (i = 0; i < self->n; i++)
		w[i] = wi_sysfs_weight_get(self->nodes[i]);
}

TEST_F(auto_mode, own_weights_stay_and_global_ones_follow_the_table)
{
	const unsigned char own_b[4] = { 3, 1, 1, 1 };
	const int own[4] = { 3, 1, 1, 1 };
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))] = { 0 };
	/* Zeroed: gcc cannot see that global_weights() fills all four. */
	int auto_w[4] = { 0 }, manual_w[4] = { 0 }, again_w[4] = { 0 }, i;

	for (i = 0; i < self->n; i++)
		wi_nodemask_set(mask, self->nodes[i]);
	ASSERT_EQ(0, wi_mbind2_nodes(self->own, self->len, self->nodes,
				     self->n, own_b, 0));
	ASSERT_EQ(0, sys_mbind(self->global, self->len, MPOL_WEIGHTED_INTERLEAVE,
			       mask, WI_MAXNODE, 0));

	if (!wi_node_has_bandwidth(self->nodes[0])) {
		/* Refused, and nothing changes (the boot state reads "true"). */
		ASSERT_EQ(-ENODEV, wi_auto_set(1));
		ASSERT_EQ(self->saved_auto, wi_auto_get());
		SKIP(return, "no HMAT bandwidth: auto mode refused with ENODEV, as it must be");
	}
	/* Auto mode, whatever the boot left: weights from HMAT. */
	ASSERT_EQ(0, wi_auto_set(1));
	ASSERT_EQ(1, wi_auto_get());
	global_weights(self, auto_w);
	TH_LOG("auto weights %d,%d,%d,%d", auto_w[0], auto_w[1],
	       self->n > 2 ? auto_w[2] : 0, self->n > 3 ? auto_w[3] : 0);
	expect_segment(_metadata, self, self->own, 0, own);
	expect_segment(_metadata, self, self->global, 0, auto_w);
	expect_query(_metadata, self, self->own, own);
	expect_query(_metadata, self, self->global, auto_w);

	/* A nodeN write leaves auto mode: manual weights, own ones kept. */
	ASSERT_EQ(0, wi_sysfs_weight_set(self->nodes[0], auto_w[0] < 200 ? auto_w[0] + 3 : 1));
	ASSERT_EQ(0, wi_auto_get());
	global_weights(self, manual_w);
	EXPECT_NE(auto_w[0], manual_w[0]);
	for (i = 1; i < self->n; i++)
		EXPECT_EQ(auto_w[i], manual_w[i]);
	expect_segment(_metadata, self, self->own, 1, own);
	expect_segment(_metadata, self, self->global, 1, manual_w);
	expect_query(_metadata, self, self->own, own);
	expect_query(_metadata, self, self->global, manual_w);

	/* Auto again: the computed weights come back; own ones still kept. */
	ASSERT_EQ(0, wi_auto_set(1));
	ASSERT_EQ(1, wi_auto_get());
	global_weights(self, again_w);
	for (i = 0; i < self->n; i++)
		EXPECT_EQ(auto_w[i], again_w[i]);
	expect_segment(_metadata, self, self->own, 2, own);
	expect_segment(_metadata, self, self->global, 2, again_w);
	expect_query(_metadata, self, self->own, own);
	expect_query(_metadata, self, self->global, again_w);
}

int main(int argc, char **argv)
{
	wi_skip_without_mempolicy2();
	return test_harness_run(argc, argv);
}
