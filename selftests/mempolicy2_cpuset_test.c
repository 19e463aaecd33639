// SPDX-License-Identifier: GPL-2.0
/*
 * What a cpuset rebind does to weights owned by a policy:
 *  - MPOL_F_STATIC_NODES: each weight stays with its node; nodes that
 *    leave the cpuset get no pages, and get their weight back on return;
 *  - no flags: the nodemask is remapped and each weight moves with its
 *    node; nodes folded onto one add their weights.
 * Each test joins its own cgroup and changes that cgroup's cpuset.mems,
 * which rebinds the policy before the write returns.
 */
#include "kselftest_harness.h"
#include "numa_util.h"
#include "cpuset_util.h"

#define CG BWAP_CGROUP_ROOT "/bwap-rebind-test"

FIXTURE(rebind) {
	int nodes[BWAP_MAX_NODES];
	int nr_nodes;
	unsigned char w[BWAP_MAXNODE];
	unsigned long mask[BWAP_MAX_NODES / (8 * sizeof(long))];
	struct mpol_args args;
};

FIXTURE_SETUP(rebind)
{
	char mems[16];

	self->nr_nodes = bwap_memory_nodes(self->nodes, BWAP_MAX_NODES);
	if (self->nr_nodes < 4)
		SKIP(return, "Not enough NUMA nodes available (need 4)");
	memset(self->w, 0, sizeof(self->w));
	snprintf(mems, sizeof(mems), "0-%d", self->nr_nodes - 1);
	ASSERT_EQ(0, bwap_cpuset_create(CG, mems));
	ASSERT_EQ(0, bwap_cpuset_join(CG));
}

FIXTURE_TEARDOWN(rebind)
{
	bwap_set_mempolicy(MPOL_DEFAULT, NULL, 0);
	if (self->nr_nodes >= 4)
		EXPECT_EQ(0, bwap_cpuset_leave_and_remove(CG));
}

/* Fault rounds * sum(want) pages under the task policy; check each node. */
static void expect_placement(struct __test_metadata *_metadata,
			     const unsigned char *want, long rounds)
{
	long counts[BWAP_MAX_NODES], sum = 0;
	size_t npages;
	char *buf;
	int n;

	for (n = 0; n < BWAP_MAX_NODES; n++)
		sum += want[n];
	npages = rounds * sum;
	buf = bwap_map_prefaulted(npages);
	ASSERT_NE(NULL, buf);
	bwap_touch_pages(buf, npages);
	ASSERT_EQ(0, bwap_count_pages_per_node(buf, npages, counts));
	for (n = 0; n < 4; n++)
		EXPECT_EQ(rounds * want[n], counts[n]) TH_LOG("node %d", n);
	TH_LOG("pages: node0=%ld node1=%ld node2=%ld node3=%ld",
	       counts[0], counts[1], counts[2], counts[3]);
	munmap(buf, npages * getpagesize());
}

static void expect_weights(struct __test_metadata *_metadata,
			   const unsigned char *want)
{
	struct bwap_policy got;

	ASSERT_EQ(0, bwap_read_policy(&got, NULL));
	EXPECT_EQ(0, memcmp(want, got.w, 4)) TH_LOG("weights now %u,%u,%u,%u",
						     got.w[0], got.w[1], got.w[2], got.w[3]);
}

TEST_F(rebind, static_nodes_keep_weights_on_their_nodes)
{
	static const unsigned char all[BWAP_MAXNODE] = { 5, 3, 1, 1 };
	static const unsigned char first2[BWAP_MAXNODE] = { 5, 3 };
	int four[4] = { 0, 1, 2, 3 };

	memcpy(self->w, all, sizeof(all));
	bwap_wi_args(&self->args, self->mask, four, 4, self->w);
	self->args.mode_flags = MPOL_F_STATIC_NODES;
	ASSERT_EQ(0, bwap_set_mempolicy2(&self->args, sizeof(self->args), 0));

	ASSERT_EQ(0, bwap_cg_write(CG, "cpuset.mems", "0-1"));
	expect_placement(_metadata, first2, 100);	/* 500/300/0/0 */
	expect_weights(_metadata, all);

	ASSERT_EQ(0, bwap_cg_write(CG, "cpuset.mems", "0-3"));
	expect_placement(_metadata, all, 100);		/* 500/300/100/100 */
}

TEST_F(rebind, remapped_nodes_carry_their_weights)
{
	static const unsigned char on01[BWAP_MAXNODE] = { 5, 3 };
	static const unsigned char on23[BWAP_MAXNODE] = { 0, 0, 5, 3 };
	int two[2] = { 0, 1 };

	ASSERT_EQ(0, bwap_cg_write(CG, "cpuset.mems", "0-1"));
	memcpy(self->w, on01, sizeof(on01));
	bwap_wi_args(&self->args, self->mask, two, 2, self->w);
	ASSERT_EQ(0, bwap_set_mempolicy2(&self->args, sizeof(self->args), 0));
	expect_placement(_metadata, on01, 100);

	ASSERT_EQ(0, bwap_cg_write(CG, "cpuset.mems", "2-3"));
	expect_weights(_metadata, on23);
	expect_placement(_metadata, on23, 100);		/* 0/0/500/300 */
}

TEST_F(rebind, folded_nodes_add_their_weights)
{
	static const unsigned char all[BWAP_MAXNODE] = { 5, 3, 1, 1 };
	static const unsigned char folded[BWAP_MAXNODE] = { 6, 4 };
	int four[4] = { 0, 1, 2, 3 };

	memcpy(self->w, all, sizeof(all));
	bwap_wi_args(&self->args, self->mask, four, 4, self->w);
	ASSERT_EQ(0, bwap_set_mempolicy2(&self->args, sizeof(self->args), 0));

	/* 0-3 onto 0-1: the n-th node goes to the (n mod 2)-th one. */
	ASSERT_EQ(0, bwap_cg_write(CG, "cpuset.mems", "0-1"));
	expect_weights(_metadata, folded);
	expect_placement(_metadata, folded, 100);	/* 600/400/0/0 */
}

TEST_HARNESS_MAIN
