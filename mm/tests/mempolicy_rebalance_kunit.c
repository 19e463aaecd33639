// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for the share arithmetic of rebalance and the choice of
 * the pages to move (mm/mempolicy_rebalance.c).
 */
#include <kunit/test.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/module.h>
#include <linux/nodemask.h>
#include <linux/sched/mm.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "../mempolicy_rebalance.h"

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
	struct mpol_rebalance_class c = { };
	long needed = 0, moved = 0, wsum = 0, count, dev, worst = 0;
	struct rebal_arrays a;
	nodemask_t nodes;
	int i, nid, dst, *node;

	rebal_alloc(test, &a);
	c.cur = a.cur;
	c.target = a.target;
	c.share = kunit_kcalloc(test, nr_node_ids, sizeof(*c.share),
				GFP_KERNEL);
	c.seen = kunit_kcalloc(test, nr_node_ids, sizeof(*c.seen),
			       GFP_KERNEL);
	node = kunit_kcalloc(test, REBAL_SPREAD_PAGES, sizeof(*node),
			     GFP_KERNEL);
	if (!c.share || !c.seen || !node)
		kunit_skip(test, "cannot allocate the layout");

	nodes_clear(nodes);
	for (nid = 0; nid < REBAL_TEST_NODES; nid++) {
		node_set(nid, nodes);
		a.weight[nid] = w[nid];
		wsum += w[nid];
	}
	for (i = 0; i < REBAL_SPREAD_PAGES; i++) {
		node[i] = i % REBAL_TEST_NODES;
		c.cur[node[i]]++;
	}
	mpol_rebalance_targets(REBAL_SPREAD_PAGES, c.cur, a.weight, &nodes,
			       c.target);
	for (nid = 0; nid < REBAL_TEST_NODES; nid++) {
		c.target[nid] = c.cur[nid] - c.target[nid];
		c.share[nid] = c.target[nid];
		needed += max(0L, c.target[nid]);
	}
	rb.to_queue = needed;
	for (i = 0; i < REBAL_SPREAD_PAGES; i++) {
		c.seen[node[i]]++;
		dst = mpol_rebalance_pick(&c, node[i], 1);
		if (dst == NUMA_NO_NODE)
			continue;
		mpol_rebalance_take(&rb, &c, node[i], dst, 1);
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

#if BITS_PER_LONG == 64
/*
 * Sizes a CXL server reaches: node 0 holds 2^34 pages (64 TiB) of one
 * range and has passed them all, so its whole surplus of 2^32 is due.
 * Nodes 1 and 2 can each take 2^33 pages; node 1 has had half of its, so
 * the page goes to node 2, the least served.  Products of these counts
 * pass 2^64.  With @src_cur 2^33 and a surplus of 2^30 the first test
 * stays below 2^64 and only the choice between destinations does not.
 */
static void rebal_pick_huge_run(struct kunit *test, unsigned long src_cur,
				long surplus)
{
	struct mpol_rebalance_class c = { };
	struct rebal_arrays a;

	rebal_alloc(test, &a);
	c.cur = a.cur;
	c.target = a.target;
	c.share = kunit_kcalloc(test, nr_node_ids, sizeof(*c.share),
				GFP_KERNEL);
	c.seen = kunit_kcalloc(test, nr_node_ids, sizeof(*c.seen),
			       GFP_KERNEL);
	if (!c.share || !c.seen)
		kunit_skip(test, "cannot allocate the plan");
	c.cur[0] = src_cur;
	c.seen[0] = src_cur;
	c.share[0] = surplus;
	c.target[0] = surplus;
	c.share[1] = -(1L << 33);
	c.target[1] = -(1L << 32);
	c.share[2] = -(1L << 33);
	c.target[2] = -(1L << 33);
	KUNIT_EXPECT_EQ(test, mpol_rebalance_pick(&c, 0, 1), 2);
	/* Not yet its turn: only half the range passed. */
	c.seen[0] = src_cur / 2;
	c.target[0] = surplus / 2;
	KUNIT_EXPECT_EQ(test, mpol_rebalance_pick(&c, 0, 1), NUMA_NO_NODE);
}

static void mpol_test_rebalance_pick_huge(struct kunit *test)
{
	rebal_pick_huge_run(test, 1UL << 34, 1L << 32);
	rebal_pick_huge_run(test, 1UL << 33, 1L << 30);
}

/* 2^45 pages (128 PiB) at 5,3,1,1: the shares stay exact. */
static void mpol_test_rebalance_targets_huge(struct kunit *test)
{
	static const long want[REBAL_TEST_NODES] = {
		17592186044416L, 10555311626650L, 3518437208883L,
		3518437208883L,
	};
	static const u8 w[REBAL_TEST_NODES] = { 5, 3, 1, 1 };
	unsigned long total = 1UL << 45;
	struct rebal_arrays a;
	nodemask_t nodes;
	int nid;

	rebal_alloc(test, &a);
	nodes_clear(nodes);
	for (nid = 0; nid < REBAL_TEST_NODES; nid++) {
		node_set(nid, nodes);
		a.weight[nid] = w[nid];
		a.cur[nid] = total / REBAL_TEST_NODES;
	}
	KUNIT_ASSERT_TRUE(test, mpol_rebalance_targets(total, a.cur, a.weight,
						       &nodes, a.target));
	for (nid = 0; nid < REBAL_TEST_NODES; nid++)
		KUNIT_EXPECT_EQ_MSG(test, a.target[nid], want[nid],
				    "node %d", nid);
}
#else
/* A 32-bit kernel cannot map 2^32 pages in one range. */
static void mpol_test_rebalance_pick_huge(struct kunit *test)
{
	kunit_skip(test, "needs a 64-bit kernel");
}

static void mpol_test_rebalance_targets_huge(struct kunit *test)
{
	kunit_skip(test, "needs a 64-bit kernel");
}
#endif

struct split_case {
	unsigned long unit;
	unsigned long base[REBAL_TEST_NODES];
	unsigned long large[REBAL_TEST_NODES];
	unsigned long fixed[REBAL_TEST_NODES];
	u8 weight[REBAL_TEST_NODES];
	long want_base[REBAL_TEST_NODES];
	long want_large[REBAL_TEST_NODES];
};

/*
 * Share the case's pages by its weights over nodes 0-3, split them, and
 * check the plan: what each node ends with, and that it moves exactly
 * @moved pages.
 */
static void split_run(struct kunit *test, const struct split_case *c,
		      long moved)
{
	unsigned long *base, *large, *fixed, total = 0;
	long *goal, *base_to, *large_to, sent = 0;
	struct rebal_arrays a;
	nodemask_t nodes;
	int nid;

	rebal_alloc(test, &a);
	base = kunit_kcalloc(test, nr_node_ids, sizeof(*base), GFP_KERNEL);
	large = kunit_kcalloc(test, nr_node_ids, sizeof(*large), GFP_KERNEL);
	fixed = kunit_kcalloc(test, nr_node_ids, sizeof(*fixed), GFP_KERNEL);
	goal = kunit_kcalloc(test, nr_node_ids, sizeof(*goal), GFP_KERNEL);
	base_to = kunit_kcalloc(test, nr_node_ids, sizeof(*base_to),
				GFP_KERNEL);
	large_to = kunit_kcalloc(test, nr_node_ids, sizeof(*large_to),
				 GFP_KERNEL);
	if (!base || !large || !fixed || !goal || !base_to || !large_to)
		kunit_skip(test, "cannot allocate the per-node arrays");
	nodes_clear(nodes);
	for (nid = 0; nid < REBAL_TEST_NODES; nid++) {
		node_set(nid, nodes);
		base[nid] = c->base[nid];
		large[nid] = c->large[nid];
		fixed[nid] = c->fixed[nid];
		a.cur[nid] = base[nid] + large[nid] + fixed[nid];
		a.weight[nid] = c->weight[nid];
		total += a.cur[nid];
	}
	mpol_rebalance_targets(total, a.cur, a.weight, &nodes, goal);
	mpol_rebalance_split(c->unit, base, large, fixed, goal, base_to,
			     large_to);
	for (nid = 0; nid < REBAL_TEST_NODES; nid++) {
		KUNIT_EXPECT_EQ_MSG(test, base_to[nid], c->want_base[nid],
				    "base pages, node %d", nid);
		KUNIT_EXPECT_EQ_MSG(test, large_to[nid], c->want_large[nid],
				    "large-folio pages, node %d", nid);
		sent += max(0L, (long)base[nid] - base_to[nid]) +
			max(0L, (long)large[nid] - large_to[nid]);
	}
	KUNIT_EXPECT_EQ(test, sent, moved);
}

/* Base pages only: the plan is the goal, as before large folios counted. */
static void mpol_test_rebalance_split_base_only(struct kunit *test)
{
	static const struct split_case c = {
		.base = { 1000, 1000, 1000, 1000 }, .weight = { 4, 2, 1, 1 },
		.want_base = { 2000, 1000, 500, 500 },
	};

	split_run(test, &c, 1000);
}

/*
 * 32 THPs at 4,2,1,1 (16/8/4/4) to 5,3,1,1: the goals 8192/4915/1639/1638
 * are no multiples of 512.  Node 1 must gain a THP to be within one of its
 * goal, and the cheapest giver is node 3, whose 1536 are 102 pages short
 * of its goal where node 2's 2048 are 409 over.  One THP moves.
 */
static void mpol_test_rebalance_split_thp_not_multiple(struct kunit *test)
{
	static const struct split_case c = {
		.unit = 512, .large = { 8192, 4096, 2048, 2048 },
		.weight = { 5, 3, 1, 1 },
		.want_large = { 8192, 4608, 2048, 1536 },
	};

	split_run(test, &c, 512);
}

/* THPs that fit their shares move whole and nothing else moves. */
static void mpol_test_rebalance_split_thp_multiple(struct kunit *test)
{
	static const struct split_case c = {
		.unit = 512, .large = { 4096, 4096, 4096, 4096 },
		.weight = { 4, 2, 1, 1 },
		.want_large = { 8192, 4096, 2048, 2048 },
	};

	split_run(test, &c, 4096);
}

/*
 * THPs and base pages: 4 THPs on node 0 and 2048 base pages on node 1,
 * at 3,1: goals 3072/1024.  Node 0 keeps its THPs (2048) and the base
 * pages fill exactly: 1024 of them go to node 0.
 */
static void mpol_test_rebalance_split_mixed_exact(struct kunit *test)
{
	static const struct split_case c = {
		.unit = 512, .base = { 0, 2048, 0, 0 },
		.large = { 2048, 0, 0, 0 }, .weight = { 3, 1, 0, 0 },
		.want_base = { 1024, 1024, 0, 0 },
		.want_large = { 2048, 0, 0, 0 },
	};

	split_run(test, &c, 1024);
}

/*
 * Too few base pages to fill exactly: 3 THPs and 100 base pages, all on
 * node 0, at 1,1,1,1 (goals 409 each).  Nodes 0-2 hold a THP each, 103
 * over; node 0's base pages go to node 3, which ends 309 short: none is a
 * THP off its goal.
 */
static void mpol_test_rebalance_split_few_base(struct kunit *test)
{
	static const struct split_case c = {
		.unit = 512, .base = { 100, 0, 0, 0 },
		.large = { 1536, 0, 0, 0 }, .weight = { 1, 1, 1, 1 },
		.want_base = { 0, 0, 0, 100 },
		.want_large = { 512, 512, 512, 0 },
	};

	split_run(test, &c, 1124);
}

/*
 * 8 THPs and 1000 base pages, 2/2/2/2 and 250 each, to 5,3,1,1: goals
 * 2548/1529/510/509.  Nodes 2 and 3 keep one THP each (2 and 3 over) and
 * send their base pages; nodes 0 and 1 take the THPs and fill with base
 * pages, 5 short between them, taken alternately.
 */
static void mpol_test_rebalance_split_mixed_short(struct kunit *test)
{
	static const struct split_case c = {
		.unit = 512, .base = { 250, 250, 250, 250 },
		.large = { 1024, 1024, 1024, 1024 }, .weight = { 5, 3, 1, 1 },
		.want_base = { 497, 503, 0, 0 },
		.want_large = { 2048, 1024, 512, 512 },
	};

	split_run(test, &c, 1524);
}

/* Pages that cannot move count against their node's goal and stay. */
static void mpol_test_rebalance_split_fixed(struct kunit *test)
{
	static const struct split_case c = {
		.base = { 0, 1000, 0, 0 }, .fixed = { 1000, 0, 0, 0 },
		.weight = { 1, 1, 0, 0 },
		.want_base = { 0, 1000, 0, 0 },
	};

	split_run(test, &c, 0);
}

/*
 * Fixed pages past a goal: 1500 on node 0 against a goal of 1000.  The
 * base pages cannot make up for them and stay where they are.
 */
static void mpol_test_rebalance_split_fixed_past_goal(struct kunit *test)
{
	static const struct split_case c = {
		.base = { 0, 500, 0, 0 }, .fixed = { 1500, 0, 0, 0 },
		.weight = { 1, 1, 0, 0 },
		.want_base = { 0, 500, 0, 0 },
	};

	split_run(test, &c, 0);
}

/*
 * Two mTHP sizes in one range: one 2 MiB folio on node 0, and 64 KiB
 * folios, 768 pages on each node.  Shares 3:1 of 2048 pages are
 * 1536/512.  Planning only the largest size would keep the 64 KiB folios
 * where they are, node 1's 768 past its 512; planned in turn, the 2 MiB
 * folio stays and 16 of node 1's 64 KiB folios move, 256 pages.
 */
static void mpol_test_rebalance_split_sizes(struct kunit *test)
{
	static const unsigned long unit[] = { 512, 16 };
	struct mpol_rebalance_class large[2], base;
	struct rebal_arrays a;
	unsigned long *fixed;
	long *work, sent = 0;
	nodemask_t nodes;
	int i, nid;

	rebal_alloc(test, &a);
	fixed = kunit_kcalloc(test, nr_node_ids, sizeof(*fixed), GFP_KERNEL);
	work = kunit_kcalloc(test, 3 * nr_node_ids, sizeof(*work), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, fixed);
	KUNIT_ASSERT_NOT_NULL(test, work);
	for (i = 0; i < 2; i++) {
		large[i].cur = kunit_kcalloc(test, nr_node_ids, sizeof(long),
					     GFP_KERNEL);
		large[i].target = kunit_kcalloc(test, nr_node_ids,
						sizeof(long), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, large[i].cur);
		KUNIT_ASSERT_NOT_NULL(test, large[i].target);
	}
	base.cur = kunit_kcalloc(test, nr_node_ids, sizeof(long), GFP_KERNEL);
	base.target = kunit_kcalloc(test, nr_node_ids, sizeof(long),
				    GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, base.cur);
	KUNIT_ASSERT_NOT_NULL(test, base.target);
	large[0].cur[0] = 512;
	large[1].cur[0] = 768;
	large[1].cur[1] = 768;
	a.cur[0] = 1280;
	a.cur[1] = 768;
	a.weight[0] = 3;
	a.weight[1] = 1;
	nodes_clear(nodes);
	node_set(0, nodes);
	node_set(1, nodes);
	KUNIT_ASSERT_TRUE(test, mpol_rebalance_targets(2048, a.cur, a.weight,
						       &nodes, a.target));
	KUNIT_ASSERT_EQ(test, a.target[0], 1536);
	KUNIT_ASSERT_EQ(test, a.target[1], 512);
	mpol_rebalance_split_sizes(2, unit, large, &base, fixed, a.target,
				   work);
	KUNIT_EXPECT_EQ(test, large[0].target[0], 512);
	KUNIT_EXPECT_EQ(test, large[0].target[1], 0);
	KUNIT_EXPECT_EQ(test, large[1].target[0], 1024);
	KUNIT_EXPECT_EQ(test, large[1].target[1], 512);
	for (nid = 0; nid < REBAL_TEST_NODES; nid++) {
		KUNIT_EXPECT_EQ(test, base.target[nid], 0);
		for (i = 0; i < 2; i++)
			sent += max(0L, (long)large[i].cur[nid] -
					large[i].target[nid]);
	}
	KUNIT_EXPECT_EQ(test, sent, 256);
}

#if IS_BUILTIN(CONFIG_NUMA_POLICY_WEIGHTS_KUNIT_TEST) && \
	defined(CONFIG_TRANSPARENT_HUGEPAGE)
/*
 * A batch holds at most REBALANCE_BATCH pages, a large folio alone
 * excepted.  In the test's own address space, REBALANCE_BATCH - 1 base
 * pages and then a PMD-sized THP, all faulted on one node, are rebalanced
 * to another: the first batch holds the base pages and stops at the THP,
 * which the second batch holds alone.  Built in only: the test sets
 * VM_HUGEPAGE on its VMA itself.
 */
static void mpol_test_rebalance_batch_bound(struct kunit *test)
{
	unsigned long nbase = REBALANCE_BATCH - 1, start, thp, end, addr;
	struct vm_area_struct *vma;
	struct mpol_rebalance rb;
	struct mm_struct *mm;
	bool planned, full;
	nodemask_t nodes;
	int src, dst;
	u8 *weight;

	if (num_node_state(N_MEMORY) < 2)
		kunit_skip(test, "needs two nodes with memory");
	addr = kunit_vm_mmap(test, NULL, 0,
			     nbase * PAGE_SIZE + 2 * HPAGE_PMD_SIZE,
			     PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE(test, addr, 0);
	mm = current->mm;
	thp = ALIGN(addr + nbase * PAGE_SIZE, HPAGE_PMD_SIZE);
	start = thp - nbase * PAGE_SIZE;
	end = thp + HPAGE_PMD_SIZE;
	/*
	 * Keep only [start, end): khugepaged must not collapse the base
	 * pages into a THP of a PMD range the VMA would cover whole.
	 */
	KUNIT_ASSERT_EQ(test, vm_munmap(addr, start - addr), 0);
	KUNIT_ASSERT_EQ(test, vm_munmap(end, addr + nbase * PAGE_SIZE +
					2 * HPAGE_PMD_SIZE - end), 0);

	/* Base pages first, while the VMA takes no THP, then the THP. */
	migrate_disable();
	src = numa_node_id();
	KUNIT_EXPECT_EQ(test, clear_user((void __user *)start,
					 nbase * PAGE_SIZE), 0);
	mmap_write_lock(mm);
	vma = find_vma(mm, thp);
	vm_flags_set(vma, VM_HUGEPAGE);
	mmap_write_unlock(mm);
	KUNIT_EXPECT_EQ(test, clear_user((void __user *)thp, HPAGE_PMD_SIZE),
			0);
	migrate_enable();

	for_each_node_state(dst, N_MEMORY)
		if (dst != src)
			break;
	nodes = nodemask_of_node(dst);
	weight = kunit_kcalloc(test, nr_node_ids, sizeof(*weight), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, weight);
	weight[dst] = 1;

	KUNIT_ASSERT_EQ(test, mpol_rebalance_init(&rb, 0), 0);
	mpol_rebalance_count_begin(&rb);
	mmap_read_lock(mm);
	vma = find_vma(mm, start);
	planned = !mpol_rebalance_count(&rb, vma, start, end) &&
		  rb.cur[src] == nbase + HPAGE_PMD_NR && rb.nr_sizes == 1 &&
		  rb.unit[0] == HPAGE_PMD_NR;
	mmap_read_unlock(mm);
	if (!planned) {
		mpol_rebalance_finish(&rb);
		kunit_skip(test, "no THP, or the pages not all on node %d", src);
	}
	mpol_rebalance_plan(&rb, &nodes, weight);
	KUNIT_EXPECT_EQ(test, rb.to_queue, nbase + HPAGE_PMD_NR);

	mpol_rebalance_lru_disable(&rb, mm);
	mmap_read_lock(mm);
	vma = find_vma(mm, start);
	full = mpol_rebalance_queue(&rb, vma, start, end);
	mmap_read_unlock(mm);
	KUNIT_EXPECT_TRUE(test, full);
	KUNIT_EXPECT_EQ(test, rb.batch, nbase);
	KUNIT_EXPECT_EQ(test, rb.resume, thp);
	KUNIT_EXPECT_EQ(test, mpol_rebalance_migrate(&rb), 0);

	mmap_read_lock(mm);
	vma = find_vma(mm, start);
	mpol_rebalance_queue(&rb, vma, rb.resume, end);
	mmap_read_unlock(mm);
	KUNIT_EXPECT_EQ(test, rb.batch, HPAGE_PMD_NR);
	KUNIT_EXPECT_EQ(test, rb.to_queue, 0);
	KUNIT_EXPECT_EQ(test, mpol_rebalance_finish(&rb), 0);
}
#else
static void mpol_test_rebalance_batch_bound(struct kunit *test)
{
	kunit_skip(test, "needs THP and the test built in");
}
#endif

#if IS_BUILTIN(CONFIG_NUMA_POLICY_WEIGHTS_KUNIT_TEST)
/*
 * The counting walk lets mmap_lock go after REBALANCE_WALK_STEP page-table
 * entries.  Over one page table more than a step holds, each table mapping
 * one page, the first call stops at the end of the last table of the step
 * with those tables' pages counted, and the next call counts the last one.
 * Built in only: the test sets VM_NOHUGEPAGE on its VMA itself.
 */
static void mpol_test_rebalance_count_step(struct kunit *test)
{
	unsigned long tables = REBALANCE_WALK_STEP / PTRS_PER_PTE;
	unsigned long addr, start, end, i, total = 0;
	struct vm_area_struct *vma;
	struct mpol_rebalance rb;
	struct mm_struct *mm;
	int nid, ret;

	addr = kunit_vm_mmap(test, NULL, 0, (tables + 2) * PMD_SIZE,
			     PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE(test, addr, 0);
	mm = current->mm;
	start = ALIGN(addr, PMD_SIZE);
	end = start + (tables + 1) * PMD_SIZE;
	mmap_write_lock(mm);
	vma = find_vma(mm, start);
	vm_flags_set(vma, VM_NOHUGEPAGE);
	mmap_write_unlock(mm);
	for (i = 0; i <= tables; i++)
		KUNIT_ASSERT_EQ(test, clear_user((void __user *)(start +
								  i * PMD_SIZE),
						 PAGE_SIZE), 0);

	KUNIT_ASSERT_EQ(test, mpol_rebalance_init(&rb, 0), 0);
	mpol_rebalance_count_begin(&rb);
	mmap_read_lock(mm);
	vma = find_vma(mm, start);
	ret = mpol_rebalance_count(&rb, vma, start, end);
	mmap_read_unlock(mm);
	for (nid = 0; nid < nr_node_ids; nid++)
		total += rb.cur[nid];
	KUNIT_EXPECT_EQ(test, ret, 1);
	KUNIT_EXPECT_EQ(test, rb.steps, REBALANCE_WALK_STEP);
	KUNIT_EXPECT_EQ(test, rb.resume, start + tables * PMD_SIZE);
	KUNIT_EXPECT_EQ(test, total, tables);

	rb.steps = 0;
	total = 0;
	mmap_read_lock(mm);
	vma = find_vma(mm, start);
	ret = mpol_rebalance_count(&rb, vma, rb.resume, end);
	mmap_read_unlock(mm);
	for (nid = 0; nid < nr_node_ids; nid++)
		total += rb.cur[nid];
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, rb.steps, PTRS_PER_PTE);
	KUNIT_EXPECT_EQ(test, total, tables + 1);
	KUNIT_EXPECT_EQ(test, mpol_rebalance_finish(&rb), 0);
}
#else
static void mpol_test_rebalance_count_step(struct kunit *test)
{
	kunit_skip(test, "needs the test built in");
}
#endif

#if IS_BUILTIN(CONFIG_NUMA_POLICY_WEIGHTS_KUNIT_TEST)
/*
 * The second pass visits the folios the counting walk recorded, and
 * checks each under its page table's lock: one that is gone since the
 * count (zapped with mmap_lock dropped between the count and the queue)
 * is neither isolated nor looked up again, and the others still move.
 * Built in only: the test sets VM_NOHUGEPAGE on its VMA itself.
 */
static void mpol_test_rebalance_record_checked(struct kunit *test)
{
	unsigned long npages = 16, gone = 5, start, end;
	struct vm_area_struct *vma;
	struct mpol_rebalance rb;
	struct mm_struct *mm;
	nodemask_t nodes;
	int src, dst;
	bool counted;
	u8 *weight;

	if (num_node_state(N_MEMORY) < 2)
		kunit_skip(test, "needs two nodes with memory");
	start = kunit_vm_mmap(test, NULL, 0, npages * PAGE_SIZE,
			      PROT_READ | PROT_WRITE,
			      MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE(test, start, 0);
	end = start + npages * PAGE_SIZE;
	mm = current->mm;
	mmap_write_lock(mm);
	vma = find_vma(mm, start);
	vm_flags_set(vma, VM_NOHUGEPAGE);
	mmap_write_unlock(mm);
	migrate_disable();
	src = numa_node_id();
	KUNIT_EXPECT_EQ(test, clear_user((void __user *)start,
					 npages * PAGE_SIZE), 0);
	migrate_enable();

	for_each_node_state(dst, N_MEMORY)
		if (dst != src)
			break;
	nodes = nodemask_of_node(dst);
	weight = kunit_kcalloc(test, nr_node_ids, sizeof(*weight), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, weight);
	weight[dst] = 1;

	KUNIT_ASSERT_EQ(test, mpol_rebalance_init(&rb, 0), 0);
	if (!rb.rec) {
		mpol_rebalance_finish(&rb);
		kunit_skip(test, "no memory for the record");
	}
	mpol_rebalance_count_begin(&rb);
	mmap_read_lock(mm);
	vma = find_vma(mm, start);
	counted = !mpol_rebalance_count(&rb, vma, start, end) &&
		  rb.cur[src] == npages && rb.rec_len == npages;
	mmap_read_unlock(mm);
	if (!counted) {
		mpol_rebalance_finish(&rb);
		kunit_skip(test, "the pages not all base pages on node %d", src);
	}
	mpol_rebalance_plan(&rb, &nodes, weight);
	KUNIT_EXPECT_EQ(test, rb.to_queue, npages);

	/* Gone while mmap_lock was dropped after the count. */
	KUNIT_EXPECT_EQ(test, do_madvise(mm, start + gone * PAGE_SIZE,
					 PAGE_SIZE, MADV_DONTNEED), 0);
	mpol_rebalance_lru_disable(&rb, mm);
	mmap_read_lock(mm);
	vma = find_vma(mm, start);
	KUNIT_EXPECT_FALSE(test, mpol_rebalance_queue(&rb, vma, start, end));
	mmap_read_unlock(mm);
	KUNIT_EXPECT_EQ(test, rb.queued, npages - 1);
	KUNIT_EXPECT_EQ(test, rb.rec_next, npages);
	KUNIT_EXPECT_EQ(test, mpol_rebalance_finish(&rb), 1);
}
#else
static void mpol_test_rebalance_record_checked(struct kunit *test)
{
	kunit_skip(test, "needs the test built in");
}
#endif

static struct kunit_case mpol_rebalance_test_cases[] = {
	KUNIT_CASE(mpol_test_rebalance_targets_exact),
	KUNIT_CASE(mpol_test_rebalance_targets_remainder),
	KUNIT_CASE(mpol_test_rebalance_targets_tie_low_node),
	KUNIT_CASE(mpol_test_rebalance_targets_drain),
	KUNIT_CASE(mpol_test_rebalance_targets_sum),
	KUNIT_CASE(mpol_test_rebalance_pick_spread),
	KUNIT_CASE(mpol_test_rebalance_pick_huge),
	KUNIT_CASE(mpol_test_rebalance_targets_huge),
	KUNIT_CASE(mpol_test_rebalance_split_base_only),
	KUNIT_CASE(mpol_test_rebalance_split_thp_not_multiple),
	KUNIT_CASE(mpol_test_rebalance_split_thp_multiple),
	KUNIT_CASE(mpol_test_rebalance_split_mixed_exact),
	KUNIT_CASE(mpol_test_rebalance_split_few_base),
	KUNIT_CASE(mpol_test_rebalance_split_mixed_short),
	KUNIT_CASE(mpol_test_rebalance_split_fixed),
	KUNIT_CASE(mpol_test_rebalance_split_fixed_past_goal),
	KUNIT_CASE(mpol_test_rebalance_split_sizes),
	KUNIT_CASE(mpol_test_rebalance_batch_bound),
	KUNIT_CASE(mpol_test_rebalance_count_step),
	KUNIT_CASE(mpol_test_rebalance_record_checked),
	{},
};

static struct kunit_suite mpol_rebalance_test_suite = {
	.name = "mempolicy_rebalance",
	.test_cases = mpol_rebalance_test_cases,
};

kunit_test_suite(mpol_rebalance_test_suite);

MODULE_DESCRIPTION("KUnit tests for the shares and plans of mempolicy rebalance");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
