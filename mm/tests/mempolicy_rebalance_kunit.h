/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * KUnit tests for the share arithmetic of rebalance and the choice of
 * the pages to move.  Included at the end
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

/*
 * Per-node arrays on the heap: MAX_NUMNODES entries are 8 KiB each with
 * MAXSMP, too much for one stack frame.
 */
struct rebal_arrays {
	unsigned long *cur;
	u8 *weight;
	long *target;
};

static void rebal_alloc(struct kunit *test, struct rebal_arrays *a)
{
	if (nr_node_ids < REBAL_TEST_NODES)
		kunit_skip(test, "needs %d node ids, the machine has %u",
			   REBAL_TEST_NODES, nr_node_ids);
	a->cur = kunit_kcalloc(test, nr_node_ids, sizeof(*a->cur), GFP_KERNEL);
	a->weight = kunit_kcalloc(test, nr_node_ids, sizeof(*a->weight),
				  GFP_KERNEL);
	a->target = kunit_kcalloc(test, nr_node_ids, sizeof(*a->target),
				  GFP_KERNEL);
	if (!a->cur || !a->weight || !a->target)
		kunit_skip(test, "cannot allocate the per-node arrays");
}

static void rebal_run(struct kunit *test, const struct rebal_case *c)
{
	struct rebal_arrays a;
	unsigned long *cur;
	long *target;
	nodemask_t nodes;
	u8 *weight;
	int nid;

	rebal_alloc(test, &a);
	cur = a.cur;
	weight = a.weight;
	target = a.target;
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
	struct rebal_arrays a;
	unsigned long total, *cur;
	long *target, sum;
	nodemask_t nodes;
	int nid, w;
	u8 *weight;

	rebal_alloc(test, &a);
	cur = a.cur;
	weight = a.weight;
	target = a.target;
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

#define REBAL_SPREAD_PAGES 4096
#define REBAL_SPREAD_WINDOW 64

/*
 * Run the second walk's choice over REBAL_SPREAD_PAGES pages laid out as
 * 1,1,1,1 faults them (0,1,2,3,0,...), rebalanced to @w: exactly the
 * minimum moves, and every window of REBAL_SPREAD_WINDOW pages holds each
 * node's weighted share to within @slack pages.
 */
static void rebal_spread_run(struct kunit *test, const u8 *w, long slack)
{
	struct mpol_rebalance rb = { };
	long needed = 0, moved = 0, wsum = 0, count, dev, worst = 0;
	struct rebal_arrays a;
	nodemask_t nodes;
	int i, nid, dst, *node;

	rebal_alloc(test, &a);
	rb.cur = a.cur;
	rb.target = a.target;
	rb.share = kunit_kcalloc(test, nr_node_ids, sizeof(*rb.share),
				 GFP_KERNEL);
	rb.seen = kunit_kcalloc(test, nr_node_ids, sizeof(*rb.seen),
				GFP_KERNEL);
	node = kunit_kcalloc(test, REBAL_SPREAD_PAGES, sizeof(*node),
			     GFP_KERNEL);
	if (!rb.share || !rb.seen || !node)
		kunit_skip(test, "cannot allocate the layout");

	nodes_clear(nodes);
	for (nid = 0; nid < REBAL_TEST_NODES; nid++) {
		node_set(nid, nodes);
		a.weight[nid] = w[nid];
		wsum += w[nid];
	}
	for (i = 0; i < REBAL_SPREAD_PAGES; i++) {
		node[i] = i % REBAL_TEST_NODES;
		rb.cur[node[i]]++;
	}
	mpol_rebalance_targets(REBAL_SPREAD_PAGES, rb.cur, a.weight, &nodes,
			       rb.target);
	for (nid = 0; nid < REBAL_TEST_NODES; nid++) {
		rb.target[nid] = rb.cur[nid] - rb.target[nid];
		rb.share[nid] = rb.target[nid];
		needed += max(0L, rb.target[nid]);
	}
	rb.to_queue = needed;
	for (i = 0; i < REBAL_SPREAD_PAGES; i++) {
		rb.seen[node[i]]++;
		dst = mpol_rebalance_pick(&rb, node[i], 1);
		if (dst == NUMA_NO_NODE)
			continue;
		mpol_rebalance_take(&rb, node[i], dst, 1);
		node[i] = dst;
		moved++;
	}
	KUNIT_EXPECT_EQ(test, moved, needed);

	for (i = 0; i < REBAL_SPREAD_PAGES; i += REBAL_SPREAD_WINDOW) {
		for (nid = 0; nid < REBAL_TEST_NODES; nid++) {
			int j;

			count = 0;
			for (j = i; j < i + REBAL_SPREAD_WINDOW; j++)
				count += node[j] == nid;
			/* In 1/wsum pages, to stay in integers. */
			dev = abs(count * wsum - REBAL_SPREAD_WINDOW * w[nid]);
			worst = max(worst, dev);
		}
	}
	KUNIT_EXPECT_LE_MSG(test, worst, slack * wsum,
			    "worst window off by %ld/%ld pages", worst, wsum);
}

/* 1,1,1,1 -> 4,2,1,1 and 1,1,3,3: windows keep the weighted mix. */
static void mpol_test_rebalance_pick_spread(struct kunit *test)
{
	static const u8 w4211[REBAL_TEST_NODES] = { 4, 2, 1, 1 };
	static const u8 w1133[REBAL_TEST_NODES] = { 1, 1, 3, 3 };
	static const u8 w5311[REBAL_TEST_NODES] = { 5, 3, 1, 1 };

	/* A fresh fault is exact in 64-page windows at these weights. */
	rebal_spread_run(test, w4211, 0);
	rebal_spread_run(test, w1133, 1);
	/* 64 * 3 / 10 is not whole: a fresh fault is off by up to 0.8. */
	rebal_spread_run(test, w5311, 2);
}

static struct kunit_case mpol_rebalance_test_cases[] = {
	KUNIT_CASE(mpol_test_rebalance_targets_exact),
	KUNIT_CASE(mpol_test_rebalance_targets_remainder),
	KUNIT_CASE(mpol_test_rebalance_targets_tie_low_node),
	KUNIT_CASE(mpol_test_rebalance_targets_drain),
	KUNIT_CASE(mpol_test_rebalance_targets_sum),
	KUNIT_CASE(mpol_test_rebalance_pick_spread),
	{},
};

static struct kunit_suite mpol_rebalance_test_suite = {
	.name = "mempolicy_rebalance",
	.test_cases = mpol_rebalance_test_cases,
};

kunit_test_suite(mpol_rebalance_test_suite);

#endif /* _MM_TESTS_MEMPOLICY_REBALANCE_KUNIT_H */
#endif /* CONFIG_NUMA_POLICY_WEIGHTS_KUNIT_TEST */
