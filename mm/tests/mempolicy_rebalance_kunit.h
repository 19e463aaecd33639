/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * KUnit tests for the share arithmetic of rebalance.  Included at the end
 * of mm/mempolicy_rebalance.c; built with
 * CONFIG_NUMA_POLICY_WEIGHTS_KUNIT_TEST.
 */
#ifdef CONFIG_NUMA_POLICY_WEIGHTS_KUNIT_TEST

#ifndef _MM_TESTS_MEMPOLICY_REBALANCE_KUNIT_H
#define _MM_TESTS_MEMPOLICY_REBALANCE_KUNIT_H

#include <kunit/test.h>

/* The tests index arrays by node id, so they need this many node ids. */
#define REBAL_TEST_NODES 4

struct rebal_case {
	unsigned long total;
	unsigned long cur[REBAL_TEST_NODES];
	u8 weight[REBAL_TEST_NODES];
	unsigned int nodes;		/* bitmap of nodes in the policy */
	long want[REBAL_TEST_NODES];
};

static void rebal_run(struct kunit *test, const struct rebal_case *c)
{
	unsigned long cur[MAX_NUMNODES] = { };
	u8 weight[MAX_NUMNODES] = { };
	long target[MAX_NUMNODES];
	nodemask_t nodes;
	int nid;

	if (nr_node_ids < REBAL_TEST_NODES)
		kunit_skip(test, "needs %d node ids, the machine has %u",
			   REBAL_TEST_NODES, nr_node_ids);
	nodes_clear(nodes);
	for (nid = 0; nid < REBAL_TEST_NODES; nid++) {
		cur[nid] = c->cur[nid];
		weight[nid] = c->weight[nid];
		if (c->nodes & (1U << nid))
			node_set(nid, nodes);
	}
	mpol_rebalance_targets(c->total, cur, weight, &nodes, target);
	for (nid = 0; nid < REBAL_TEST_NODES; nid++)
		KUNIT_EXPECT_EQ_MSG(test, target[nid], c->want[nid],
				    "node %d", nid);
}

/* 4000 pages, 1,1,1,1 -> 4,2,1,1: exact shares, no remainder. */
static void mpol_test_rebalance_targets_exact(struct kunit *test)
{
	static const struct rebal_case c = {
		.total = 4000, .cur = { 1000, 1000, 1000, 1000 },
		.weight = { 4, 2, 1, 1 }, .nodes = 0xf,
		.want = { 2000, 1000, 500, 500 },
	};

	rebal_run(test, &c);
}

/* 10 pages over 3,3,3,1 (W=10) and 11 pages: largest remainders win. */
static void mpol_test_rebalance_targets_remainder(struct kunit *test)
{
	static const struct rebal_case c = {
		/* 11*3/10 = 3 r3 (x3), 11*1/10 = 1 r1: 10 given, one left */
		.total = 11, .cur = { 0, 0, 11, 0 },
		.weight = { 3, 3, 3, 1 }, .nodes = 0xf,
		/* tie between 0,1,2 at r3: node 2 holds most pages now */
		.want = { 3, 3, 4, 1 },
	};

	rebal_run(test, &c);
}

/* Equal remainders and equal holdings: the lower node id wins. */
static void mpol_test_rebalance_targets_tie_low_node(struct kunit *test)
{
	static const struct rebal_case c = {
		.total = 5, .cur = { 1, 1, 1, 2 },
		.weight = { 1, 1, 1, 1 }, .nodes = 0xf,
		/* 1 each, one left, r1 each; node 3 holds 2 */
		.want = { 1, 1, 1, 2 },
	};
	static const struct rebal_case d = {
		.total = 6, .cur = { 0, 0, 3, 3 },
		.weight = { 1, 1, 1, 1 }, .nodes = 0xf,
		/* 1 each, two left: nodes 2 and 3 hold more */
		.want = { 1, 1, 2, 2 },
	};

	rebal_run(test, &c);
	rebal_run(test, &d);
}

/* Weight 0 and nodes outside the policy get nothing: drained. */
static void mpol_test_rebalance_targets_drain(struct kunit *test)
{
	static const struct rebal_case c = {
		.total = 4000, .cur = { 1000, 1000, 1000, 1000 },
		.weight = { 1, 1, 1, 0 }, .nodes = 0xf,
		/* 4000/3 = 1333 r1 each: one extra, to the lowest id */
		.want = { 1334, 1333, 1333, 0 },
	};
	static const struct rebal_case d = {
		.total = 100, .cur = { 25, 25, 25, 25 },
		.weight = { 7, 7, 9, 9 }, .nodes = 0x3,
		.want = { 50, 50, 0, 0 },
	};

	rebal_run(test, &c);
	rebal_run(test, &d);
}

/* The targets always add up to the total. */
static void mpol_test_rebalance_targets_sum(struct kunit *test)
{
	unsigned long cur[MAX_NUMNODES] = { };
	u8 weight[MAX_NUMNODES] = { };
	long target[MAX_NUMNODES], sum;
	unsigned long total;
	nodemask_t nodes;
	int nid, w;

	if (nr_node_ids < REBAL_TEST_NODES)
		kunit_skip(test, "needs %d node ids", REBAL_TEST_NODES);
	nodes_clear(nodes);
	for (nid = 0; nid < REBAL_TEST_NODES; nid++)
		node_set(nid, nodes);
	for (w = 1; w <= 255; w += 17) {
		for (nid = 0; nid < REBAL_TEST_NODES; nid++)
			weight[nid] = (w * (nid + 3)) % 256 ?: 1;
		for (total = 0; total < 300; total += 7) {
			mpol_rebalance_targets(total, cur, weight, &nodes,
					       target);
			sum = 0;
			for (nid = 0; nid < REBAL_TEST_NODES; nid++)
				sum += target[nid];
			KUNIT_ASSERT_EQ(test, sum, (long)total);
		}
	}
}

static struct kunit_case mpol_rebalance_test_cases[] = {
	KUNIT_CASE(mpol_test_rebalance_targets_exact),
	KUNIT_CASE(mpol_test_rebalance_targets_remainder),
	KUNIT_CASE(mpol_test_rebalance_targets_tie_low_node),
	KUNIT_CASE(mpol_test_rebalance_targets_drain),
	KUNIT_CASE(mpol_test_rebalance_targets_sum),
	{},
};

static struct kunit_suite mpol_rebalance_test_suite = {
	.name = "mempolicy_rebalance",
	.test_cases = mpol_rebalance_test_cases,
};

kunit_test_suite(mpol_rebalance_test_suite);

#endif /* _MM_TESTS_MEMPOLICY_REBALANCE_KUNIT_H */
#endif /* CONFIG_NUMA_POLICY_WEIGHTS_KUNIT_TEST */
