// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for the allocation paths of MPOL_WEIGHTED_INTERLEAVE with a
 * policy's own weights: the task countdown (alloc_pages) and the bulk
 * allocator.  Each test sets the KUnit thread's own task policy and
 * restores the default policy before it ends.
 */
#include <kunit/test.h>
#include <linux/gfp.h>
#include <linux/mempolicy.h>
#include <linux/module.h>
#include <linux/nodemask.h>
#include <linux/sched/task.h>
#include <linux/slab.h>

#include "../mempolicy_weights.h"

#define MPOL_TEST_ROUNDS 20

/*
 * Give the current thread a weighted-interleave policy over the first
 * nodes with memory (up to four), with own weights from @pattern.
 * Returns the number of nodes used, 0 after kunit_skip().
 */
static int mpol_test_set_policy(struct kunit *test, const u8 *pattern,
				nodemask_t *nodes, u8 *weight, unsigned int *sum)
{
	struct mpol_attrs attrs = { .home_node = NUMA_NO_NODE };
	int nid, n = 0;

	nodes_clear(*nodes);
	*sum = 0;
	for_each_node_state(nid, N_MEMORY) {
		if (n == 4)
			break;
		node_set(nid, *nodes);
		weight[nid] = pattern[n++];
		*sum += weight[nid];
	}
	if (n < 2) {
		kunit_skip(test, "needs 2 nodes with memory");
		return 0;
	}
	attrs.weights = mpol_weights_alloc(GFP_KERNEL);
	if (!attrs.weights) {
		kunit_skip(test, "cannot allocate a weight table");
		return 0;
	}
	memcpy(attrs.weights->weight, weight, nr_node_ids);
	KUNIT_ASSERT_EQ(test, do_set_mempolicy(MPOL_WEIGHTED_INTERLEAVE, 0,
					       nodes, &attrs), 0);
	KUNIT_ASSERT_NULL(test, attrs.weights);
	return n;
}

static void mpol_test_check_pages(struct kunit *test, struct page **pages,
				  unsigned long n, const nodemask_t *nodes,
				  const u8 *weight, unsigned long rounds)
{
	/* On the heap: 8 KiB with MAXSMP, too much for one stack frame. */
	unsigned long *counts = kunit_kcalloc(test, MAX_NUMNODES,
					      sizeof(*counts), GFP_KERNEL);
	unsigned long i;
	int nid;

	if (!counts) {
		for (i = 0; i < n; i++)
			__free_page(pages[i]);
		kunit_skip(test, "cannot allocate the counts");
	}
	for (i = 0; i < n; i++) {
		counts[page_to_nid(pages[i])]++;
		__free_page(pages[i]);
	}
	for_each_node_mask(nid, *nodes)
		KUNIT_EXPECT_EQ_MSG(test, counts[nid], rounds * weight[nid],
				    "node %d", nid);
}

/*
 * What a cpuset rebind of an MPOL_F_STATIC_NODES policy can leave: every
 * node of the nodemask with own weight 0.  Made here by writing zeros into
 * the test's own task policy table under task_lock(), before the test
 * allocates with it; the kernel never rewrites a published table.  Each
 * node then takes one page in turn.
 */
static void mpol_test_zero_own_weights(const nodemask_t *nodes, u8 *weight,
				       unsigned int *sum)
{
	struct mpol_weights *own;
	int nid;

	task_lock(current);
	own = rcu_dereference_protected(current->mempolicy->il_weights,
					lockdep_is_held(&current->alloc_lock));
	*sum = 0;
	for_each_node_mask(nid, *nodes) {
		WRITE_ONCE(own->weight[nid], 0);
		weight[nid] = 1;
		(*sum)++;
	}
	task_unlock(current);
}

static void mpol_test_paths(struct kunit *test, const u8 *pattern, bool bulk,
			    bool all_zero)
{
	u8 *weight = kunit_kzalloc(test, nr_node_ids, GFP_KERNEL);
	unsigned long n, i, got = 0;
	struct page **pages;
	nodemask_t nodes;
	unsigned int sum;

	if (!weight)
		kunit_skip(test, "cannot allocate");
	if (!mpol_test_set_policy(test, pattern, &nodes, weight, &sum))
		return;
	if (all_zero)
		mpol_test_zero_own_weights(&nodes, weight, &sum);
	n = MPOL_TEST_ROUNDS * sum;
	pages = kunit_kcalloc(test, n, sizeof(*pages), GFP_KERNEL);
	if (!pages) {
		do_set_mempolicy(MPOL_DEFAULT, 0, NULL, NULL);
		kunit_skip(test, "cannot allocate the page array");
	}
	if (bulk) {
		got = alloc_pages_bulk_array_mempolicy_noprof(GFP_KERNEL, n, pages);
	} else {
		for (i = 0; i < n; i++) {
			pages[i] = alloc_pages_noprof(GFP_KERNEL, 0);
			if (!pages[i])
				break;
			got++;
		}
	}
	do_set_mempolicy(MPOL_DEFAULT, 0, NULL, NULL);
	KUNIT_EXPECT_EQ(test, got, n);
	mpol_test_check_pages(test, pages, got, &nodes, weight, MPOL_TEST_ROUNDS);
}

static void mpol_test_task_countdown_own_weights(struct kunit *test)
{
	static const u8 pattern[4] = { 5, 3, 1, 1 };

	mpol_test_paths(test, pattern, false, false);
}

static void mpol_test_task_countdown_zero_weight(struct kunit *test)
{
	static const u8 pattern[4] = { 3, 0, 1, 2 };

	mpol_test_paths(test, pattern, false, false);
}

static void mpol_test_bulk_own_weights(struct kunit *test)
{
	static const u8 pattern[4] = { 5, 3, 1, 1 };

	mpol_test_paths(test, pattern, true, false);
}

static void mpol_test_bulk_zero_weight(struct kunit *test)
{
	static const u8 pattern[4] = { 3, 0, 1, 2 };

	mpol_test_paths(test, pattern, true, false);
}

static void mpol_test_task_countdown_all_zero(struct kunit *test)
{
	static const u8 pattern[4] = { 5, 3, 1, 1 };

	mpol_test_paths(test, pattern, false, true);
}

static void mpol_test_bulk_all_zero(struct kunit *test)
{
	static const u8 pattern[4] = { 5, 3, 1, 1 };

	mpol_test_paths(test, pattern, true, true);
}

/*
 * Only a weighted-interleave task policy takes a generation (to order it
 * against reweights), when set_mempolicy() installs it: other policies
 * leave the system-wide counter alone.  Runs before user space, at boot,
 * so nothing else takes a generation meanwhile.
 */
static void mpol_test_weights_next_gen(struct kunit *test)
{
	nodemask_t nodes = NODE_MASK_NONE;
	u64 g0, g1, g2;

	node_set(first_memory_node, nodes);
	g0 = mpol_weights_next_gen();
	KUNIT_ASSERT_EQ(test, do_set_mempolicy(MPOL_BIND, 0, &nodes, NULL), 0);
	KUNIT_ASSERT_EQ(test, do_set_mempolicy(MPOL_INTERLEAVE, 0, &nodes,
					       NULL), 0);
	g1 = mpol_weights_next_gen();
	KUNIT_EXPECT_EQ(test, g1, g0 + 1);
	KUNIT_ASSERT_EQ(test, do_set_mempolicy(MPOL_WEIGHTED_INTERLEAVE, 0,
					       &nodes, NULL), 0);
	KUNIT_EXPECT_EQ(test, current->mempolicy->wi_gen, g1 + 1);
	g2 = mpol_weights_next_gen();
	KUNIT_EXPECT_EQ(test, g2, g1 + 2);
	do_set_mempolicy(MPOL_DEFAULT, 0, NULL, NULL);
}

static struct kunit_case mpol_alloc_test_cases[] = {
	KUNIT_CASE(mpol_test_task_countdown_own_weights),
	KUNIT_CASE(mpol_test_task_countdown_zero_weight),
	KUNIT_CASE(mpol_test_bulk_own_weights),
	KUNIT_CASE(mpol_test_bulk_zero_weight),
	KUNIT_CASE(mpol_test_task_countdown_all_zero),
	KUNIT_CASE(mpol_test_bulk_all_zero),
	KUNIT_CASE(mpol_test_weights_next_gen),
	{},
};

static struct kunit_suite mpol_alloc_test_suite = {
	.name = "mempolicy_weighted_alloc",
	.test_cases = mpol_alloc_test_cases,
};

kunit_test_suite(mpol_alloc_test_suite);

MODULE_DESCRIPTION("KUnit tests for weighted interleave allocation with own weights");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
