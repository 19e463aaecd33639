// SPDX-License-Identifier: GPL-2.0
/*
 * The rig's check of the bulk allocator under own weights: one
 * alloc_pages_bulk_mempolicy() call through the local debugfs knob
 * (bulk_alloc_debugfs.h) gives every node exactly its share.  A rig test:
 * the knob is not in the posted series, whose KUnit suite covers the path.
 */
#include "../kselftest_harness.h"
#include "bulk_alloc_debugfs.h"

#define ROUNDS 100

FIXTURE(bulk) {
	int nodes[WI_MAX_NODES];
	int nr_nodes;
	unsigned char weights[WI_MAXNODE];	/* by node id */
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
	struct mpol_args args;
	long sum;
};

/* Per-node weights, repeated over the nodes in order. */
FIXTURE_VARIANT(bulk) {
	unsigned char pattern[4];
	int max_nodes;
};

FIXTURE_VARIANT_ADD(bulk, w5311) {
	.pattern = { 5, 3, 1, 1 },
	.max_nodes = WI_MAX_NODES,
};

/* Node 1 of weight 0 gets no page at all. */
FIXTURE_VARIANT_ADD(bulk, w301) {
	.pattern = { 3, 0, 1 },
	.max_nodes = 3,
};

FIXTURE_SETUP(bulk)
{
	int i;

	self->nr_nodes = wi_memory_nodes(self->nodes, WI_MAX_NODES);
	if (self->nr_nodes < 2)
		SKIP(return, "Not enough NUMA nodes available");
	if (self->nr_nodes > variant->max_nodes)
		self->nr_nodes = variant->max_nodes;
	memset(self->weights, 0, sizeof(self->weights));
	self->sum = 0;
	for (i = 0; i < self->nr_nodes; i++) {
		self->weights[self->nodes[i]] = variant->pattern[i % 4];
		self->sum += variant->pattern[i % 4];
	}
	wi_args(&self->args, self->mask, self->nodes, self->nr_nodes, self->weights);
}

FIXTURE_TEARDOWN(bulk)
{
	sys_set_mempolicy(MPOL_DEFAULT, NULL, 0);
}

TEST_F(bulk, one_bulk_call_places_exact_share)
{
	long counts[WI_MAX_NODES];
	int ret, i;

	ASSERT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));
	ret = wi_bulk_alloc_count(ROUNDS * self->sum, counts);
	ASSERT_EQ(0, sys_set_mempolicy(MPOL_DEFAULT, NULL, 0));
	ASSERT_EQ(0, ret) TH_LOG("%s: %s (needs debugfs and CONFIG_NUMA_POLICY_BULK_DEBUGFS)",
				 WI_BULK_ALLOC, strerror(-ret));
	for (i = 0; i < self->nr_nodes; i++)
		EXPECT_EQ(ROUNDS * self->weights[self->nodes[i]], counts[self->nodes[i]])
			TH_LOG("node %d: %ld pages, want %ld", self->nodes[i],
			       counts[self->nodes[i]],
			       (long)ROUNDS * self->weights[self->nodes[i]]);
}

TEST_HARNESS_MAIN
