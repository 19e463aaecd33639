// SPDX-License-Identifier: GPL-2.0
/*
 * MPOL_WEIGHTED_INTERLEAVE on the global sysfs weights places
 * exactly the weighted share of a run of faults on each node, for a task
 * policy (set_mempolicy) and for a VMA policy (mbind).  Pages are counted
 * per node with move_pages(2) in query mode.
 */
#include "../kselftest_harness.h"
#include "numa_util.h"

/* Rounds of the weight cycle to fault: pages = ROUNDS * sum of weights. */
#define ROUNDS 100

FIXTURE(sysfs_weights) {
	int nodes[WI_MAX_NODES];
	int nr_nodes;
	int saved[WI_MAX_NODES];
	int weight[WI_MAX_NODES];
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long)) + 1];
	size_t npages;
};

/*
 * Weights 4,2,1,1 repeated over the nodes (3,1 on two nodes so that the
 * shares differ), saving the old table for teardown.
 */
FIXTURE_SETUP(sysfs_weights)
{
	static const int pattern[] = { 4, 2, 1, 1 };
	int i, sum = 0;

	self->nr_nodes = wi_memory_nodes(self->nodes, WI_MAX_NODES);
	if (self->nr_nodes < 2)
		SKIP(return, "Not enough NUMA nodes available");
	memset(self->mask, 0, sizeof(self->mask));
	for (i = 0; i < self->nr_nodes; i++) {
		int node = self->nodes[i];

		self->saved[i] = wi_sysfs_weight_get(node);
		ASSERT_GT(self->saved[i], 0) TH_LOG("cannot read weight of node %d", node);
		self->weight[i] = self->nr_nodes == 2 ? (i ? 1 : 3) : pattern[i % 4];
		ASSERT_EQ(0, wi_sysfs_weight_set(node, self->weight[i]));
		ASSERT_EQ(self->weight[i], wi_sysfs_weight_get(node));
		wi_nodemask_set(self->mask, node);
		sum += self->weight[i];
	}
	self->npages = (size_t)ROUNDS * sum;
}

FIXTURE_TEARDOWN(sysfs_weights)
{
	int i;

	for (i = 0; i < self->nr_nodes; i++)
		if (self->saved[i] > 0)
			wi_sysfs_weight_set(self->nodes[i], self->saved[i]);
}

static void log_counts(struct __test_metadata *_metadata,
		       struct _test_data_sysfs_weights *self, const long *counts)
{
	char line[512];
	int i, off = 0;

	for (i = 0; i < self->nr_nodes; i++)
		off += snprintf(line + off, sizeof(line) - off, " node%d=%ld/%ld",
				self->nodes[i], counts[self->nodes[i]],
				(long)(ROUNDS * self->weight[i]));
	TH_LOG("pages (measured/expected):%s", line);
}

TEST_F(sysfs_weights, task_policy_places_exact_weighted_share)
{
	long counts[WI_MAX_NODES];
	char *buf = wi_map_prefaulted(self->npages);
	int i;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, sys_set_mempolicy(MPOL_WEIGHTED_INTERLEAVE, self->mask,
				       WI_MAX_NODES + 1));
	wi_touch_pages(buf, self->npages);
	ASSERT_EQ(0, sys_set_mempolicy(MPOL_DEFAULT, NULL, 0));

	ASSERT_EQ(0, wi_count_pages_per_node(buf, self->npages, counts));
	log_counts(_metadata, self, counts);
	for (i = 0; i < self->nr_nodes; i++)
		EXPECT_EQ(ROUNDS * self->weight[i], counts[self->nodes[i]])
			TH_LOG("node %d", self->nodes[i]);
	munmap(buf, self->npages * getpagesize());
}

TEST_F(sysfs_weights, vma_policy_places_exact_weighted_share)
{
	long counts[WI_MAX_NODES];
	char *buf = wi_map_prefaulted(self->npages);
	int i;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, sys_mbind(buf, self->npages * getpagesize(),
			       MPOL_WEIGHTED_INTERLEAVE, self->mask,
				WI_MAX_NODES + 1, 0));
	wi_touch_pages(buf, self->npages);

	ASSERT_EQ(0, wi_count_pages_per_node(buf, self->npages, counts));
	log_counts(_metadata, self, counts);
	for (i = 0; i < self->nr_nodes; i++)
		EXPECT_EQ(ROUNDS * self->weight[i], counts[self->nodes[i]])
			TH_LOG("node %d", self->nodes[i]);
	munmap(buf, self->npages * getpagesize());
}

TEST_HARNESS_MAIN
