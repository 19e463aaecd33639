// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for the pure logic of per-policy interleave weights
 * (mm/mempolicy_weights.c): argument checks and the node chosen for an
 * interleave index.
 */
#include <kunit/test.h>
#include <linux/mm_types.h>
#include <linux/module.h>
#include <linux/nodemask.h>
#include <linux/string.h>

#include "../mempolicy_weights.h"

/* Count the node chosen for each index in [first, first + n). */
static void mpol_test_count(const nodemask_t *nodes,
			    const struct mpol_wi_table *t,
			    unsigned long first, unsigned long n,
			    unsigned long *counts)
{
	unsigned long i;

	memset(counts, 0, sizeof(*counts) * MAX_NUMNODES);
	for (i = 0; i < n; i++) {
		unsigned int nid = mpol_wi_nid_for_index(nodes, t, first + i);

		if (nid < MAX_NUMNODES)
			counts[nid]++;
	}
}

/*
 * A count per node id on the heap: MAX_NUMNODES entries are 8 KiB with
 * MAXSMP, too much for one stack frame.
 */
static unsigned long *mpol_test_counts(struct kunit *test)
{
	unsigned long *counts = kunit_kcalloc(test, MAX_NUMNODES,
					      sizeof(*counts), GFP_KERNEL);

	if (!counts)
		kunit_skip(test, "cannot allocate the counts");
	return counts;
}

static void mpol_test_nodes(nodemask_t *nodes, int n)
{
	int i;

	nodes_clear(*nodes);
	for (i = 0; i < n; i++)
		node_set(i, *nodes);
}

/* Own weights 5,3,1,1: 1000 consecutive indexes give 500/300/100/100. */
static void mpol_test_nid_for_index_exact_share(struct kunit *test)
{
	static const u8 own[MAX_NUMNODES] = { 5, 3, 1, 1 };
	struct mpol_wi_table t = { .own = own };
	unsigned long *counts = mpol_test_counts(test);
	nodemask_t nodes;

	mpol_test_nodes(&nodes, 4);
	mpol_test_count(&nodes, &t, 0, 1000, counts);
	KUNIT_EXPECT_EQ(test, counts[0], 500);
	KUNIT_EXPECT_EQ(test, counts[1], 300);
	KUNIT_EXPECT_EQ(test, counts[2], 100);
	KUNIT_EXPECT_EQ(test, counts[3], 100);
	/* Any window of one full cycle gives each node exactly its weight. */
	mpol_test_count(&nodes, &t, 7, 10, counts);
	KUNIT_EXPECT_EQ(test, counts[0], 5);
	KUNIT_EXPECT_EQ(test, counts[1], 3);
}

/* Index order within a cycle: node 0 takes 0..4, node 1 takes 5..7, ... */
static void mpol_test_nid_for_index_order(struct kunit *test)
{
	static const u8 own[MAX_NUMNODES] = { 5, 3, 1, 1 };
	static const int want[10] = { 0, 0, 0, 0, 0, 1, 1, 1, 2, 3 };
	struct mpol_wi_table t = { .own = own };
	nodemask_t nodes;
	int i;

	mpol_test_nodes(&nodes, 4);
	for (i = 0; i < 10; i++)
		KUNIT_EXPECT_EQ(test, mpol_wi_nid_for_index(&nodes, &t, i), want[i]);
}

/* Weight 0 takes no index, including the one right after a full node. */
static void mpol_test_nid_for_index_zero_weight(struct kunit *test)
{
	static const u8 own[MAX_NUMNODES] = { 3, 0, 1 };
	struct mpol_wi_table t = { .own = own };
	unsigned long *counts = mpol_test_counts(test);
	nodemask_t nodes;

	mpol_test_nodes(&nodes, 3);
	KUNIT_EXPECT_EQ(test, mpol_wi_nid_for_index(&nodes, &t, 3), 2);
	mpol_test_count(&nodes, &t, 0, 400, counts);
	KUNIT_EXPECT_EQ(test, counts[0], 300);
	KUNIT_EXPECT_EQ(test, counts[1], 0);
	KUNIT_EXPECT_EQ(test, counts[2], 100);
}

/* Only zero-weight nodes left: each is used once per cycle. */
static void mpol_test_nid_for_index_all_zero(struct kunit *test)
{
	static const u8 own[MAX_NUMNODES] = { 0, 0, 0 };
	struct mpol_wi_table t = { .own = own };
	unsigned long *counts = mpol_test_counts(test);
	nodemask_t nodes;

	mpol_test_nodes(&nodes, 3);
	mpol_test_count(&nodes, &t, 0, 30, counts);
	KUNIT_EXPECT_EQ(test, counts[0], 10);
	KUNIT_EXPECT_EQ(test, counts[1], 10);
	KUNIT_EXPECT_EQ(test, counts[2], 10);
}

/*
 * Without an own table the global one rules; no global table means weight
 * 1 everywhere.  (A global 0 exists only on bases whose sysfs accepts it.)
 */
static void mpol_test_nid_for_index_global(struct kunit *test)
{
	static const u8 global[MAX_NUMNODES] = { 2, 1 };
	struct mpol_wi_table none = { }, t = { .global = global };
	unsigned long *counts = mpol_test_counts(test);
	nodemask_t nodes;

	mpol_test_nodes(&nodes, 2);
	mpol_test_count(&nodes, &none, 0, 10, counts);
	KUNIT_EXPECT_EQ(test, counts[0], 5);
	KUNIT_EXPECT_EQ(test, counts[1], 5);
	mpol_test_count(&nodes, &t, 0, 30, counts);
	KUNIT_EXPECT_EQ(test, counts[0], 20);
	KUNIT_EXPECT_EQ(test, counts[1], 10);
}

/* Indexes near ULONG_MAX wrap like any other: node depends on ilx % sum. */
static void mpol_test_nid_for_index_wraps(struct kunit *test)
{
	static const u8 own[MAX_NUMNODES] = { 5, 3, 1, 1 };
	struct mpol_wi_table t = { .own = own };
	nodemask_t nodes;
	unsigned long ilx;

	mpol_test_nodes(&nodes, 4);
	for (ilx = ULONG_MAX - 25; ilx != 5; ilx++)
		KUNIT_EXPECT_EQ(test, mpol_wi_nid_for_index(&nodes, &t, ilx),
				mpol_wi_nid_for_index(&nodes, &t, ilx % 10));
}

/* Sparse nodemasks: only the nodes in the mask are used. */
static void mpol_test_nid_for_index_sparse_mask(struct kunit *test)
{
	static const u8 own[MAX_NUMNODES] = { 9, 2, 9, 1 };
	struct mpol_wi_table t = { .own = own };
	unsigned long *counts = mpol_test_counts(test);
	nodemask_t nodes = NODE_MASK_NONE;

	node_set(1, nodes);
	node_set(3, nodes);
	mpol_test_count(&nodes, &t, 0, 300, counts);
	KUNIT_EXPECT_EQ(test, counts[0], 0);
	KUNIT_EXPECT_EQ(test, counts[1], 200);
	KUNIT_EXPECT_EQ(test, counts[2], 0);
	KUNIT_EXPECT_EQ(test, counts[3], 100);
	nodes_clear(nodes);
	KUNIT_EXPECT_EQ(test, mpol_wi_nid_for_index(&nodes, &t, 0), NUMA_NO_NODE);
}

static void mpol_test_weights_check(struct kunit *test)
{
	u8 *w = kunit_kzalloc(test, nr_node_ids, GFP_KERNEL);
	nodemask_t nodes = NODE_MASK_NONE;

	if (!w)
		kunit_skip(test, "cannot allocate a weight table");
	node_set(0, nodes);
	KUNIT_EXPECT_EQ(test, mpol_weights_check(w, &nodes), -EINVAL);
	if (nr_node_ids > 1) {
		w[1] = 4;	/* non-zero, but outside the mask */
		KUNIT_EXPECT_EQ(test, mpol_weights_check(w, &nodes), -EINVAL);
		node_set(1, nodes);
		KUNIT_EXPECT_EQ(test, mpol_weights_check(w, &nodes), 0);
	}
	w[0] = 1;
	KUNIT_EXPECT_EQ(test, mpol_weights_check(w, &nodes), 0);
}

/*
 * A reweighted process's table laid out for the cpuset nodes 0,1: a task
 * policy relative to the same nodes follows it, one already rebound to
 * other nodes (a cpuset change under way, or a rebind that found no
 * spare table) follows its own weights instead, never weights meant for
 * other nodes; one with static nodes follows the weights as given.
 */
static void mpol_test_task_weights_for(struct kunit *test)
{
	struct mpol_task_weights *tw;
	struct mempolicy *pol;
	struct mm_struct *mm;
	const u8 *got;

	if (!IS_ENABLED(CONFIG_CPUSETS) || nr_node_ids < 4)
		kunit_skip(test, "needs CONFIG_CPUSETS and 4 possible nodes");
	mm = kunit_kzalloc(test, sizeof(*mm), GFP_KERNEL);
	pol = kunit_kzalloc(test, sizeof(*pol), GFP_KERNEL);
	tw = kunit_kzalloc(test, struct_size(tw, weight, 2 * nr_node_ids),
			   GFP_KERNEL);
	if (!mm || !pol || !tw)
		kunit_skip(test, "cannot allocate");
	tw->gen = 10;
	tw->global_gen = 10;	/* takes policies on the global weights */
	tw->weight[0] = 5;
	tw->weight[1] = 3;
	tw->weight[nr_node_ids + 0] = 7;
	node_set(0, tw->mems);
	node_set(1, tw->mems);
	RCU_INIT_POINTER(mm->mpol_task_weights, tw);

	pol->mode = MPOL_WEIGHTED_INTERLEAVE;
	pol->wi_gen = 1;
	node_set(0, pol->nodes);
	node_set(1, pol->nodes);
	pol->w.cpuset_mems_allowed = tw->mems;
	rcu_read_lock();
	got = mpol_task_weights_for(mm, pol);
	KUNIT_EXPECT_PTR_EQ(test, got, (const u8 *)tw->weight);

	/* Rebound to nodes 2,3 before the table: not the table's nodes. */
	nodes_clear(pol->nodes);
	node_set(2, pol->nodes);
	node_set(3, pol->nodes);
	pol->w.cpuset_mems_allowed = pol->nodes;
	KUNIT_EXPECT_NULL(test, mpol_task_weights_for(mm, pol));

	/* Static nodes: the weights as given, whatever the cpuset. */
	pol->flags = MPOL_F_STATIC_NODES;
	pol->w.user_nodemask = pol->nodes;
	got = mpol_task_weights_for(mm, pol);
	KUNIT_EXPECT_PTR_EQ(test, got, (const u8 *)tw->weight + nr_node_ids);

	/* Made after the reweight: its own weights. */
	pol->flags = 0;
	pol->w.cpuset_mems_allowed = tw->mems;
	pol->wi_gen = 11;
	KUNIT_EXPECT_NULL(test, mpol_task_weights_for(mm, pol));
	rcu_read_unlock();
}

static struct kunit_case mpol_weights_test_cases[] = {
	KUNIT_CASE(mpol_test_nid_for_index_exact_share),
	KUNIT_CASE(mpol_test_nid_for_index_order),
	KUNIT_CASE(mpol_test_nid_for_index_zero_weight),
	KUNIT_CASE(mpol_test_nid_for_index_all_zero),
	KUNIT_CASE(mpol_test_nid_for_index_global),
	KUNIT_CASE(mpol_test_nid_for_index_wraps),
	KUNIT_CASE(mpol_test_nid_for_index_sparse_mask),
	KUNIT_CASE(mpol_test_weights_check),
	KUNIT_CASE(mpol_test_task_weights_for),
	{},
};

static struct kunit_suite mpol_weights_test_suite = {
	.name = "mempolicy_weights",
	.test_cases = mpol_weights_test_cases,
};

kunit_test_suite(mpol_weights_test_suite);

MODULE_DESCRIPTION("KUnit tests for per-policy interleave weights");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
