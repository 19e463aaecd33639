// SPDX-License-Identifier: GPL-2.0
/*
 * The legacy calls keep their behaviour for every mode next to the
 * mempolicy2 syscalls: set_mempolicy() and mbind() accept each mode,
 * get_mempolicy() reads back the same mode, flags and nodemask, and pages
 * land where that mode puts them.  The test runs pinned to CPU 0 (node 0),
 * so "local" means node 0.  It runs with the global weights all 1: kernels
 * without auto mode (before 6.16) boot with them; where auto mode computes
 * them from HMAT bandwidth, the fixture writes them and puts back what it
 * found.
 */
#define _GNU_SOURCE
#include <sched.h>

#include "../kselftest_harness.h"
#include "numa_util.h"

#define NPAGES_PER_NODE 50

enum nodes_arg { NONE, NODE1, ALL };
enum placement { ON_NODE0, ON_NODE1, EVEN };

FIXTURE(legacy) {
	int nodes[WI_MAX_NODES];
	int nr_nodes;
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
	size_t npages;
	int saved_auto;		/* -1: no auto mode */
	int saved[WI_MAX_NODES];
};

FIXTURE_VARIANT(legacy) {
	int mode;
	int flags;
	enum nodes_arg nodes;
	enum placement where;
};

FIXTURE_VARIANT_ADD(legacy, default_mode) { MPOL_DEFAULT, 0, NONE, ON_NODE0 };
FIXTURE_VARIANT_ADD(legacy, preferred) { MPOL_PREFERRED, 0, NODE1, ON_NODE1 };
FIXTURE_VARIANT_ADD(legacy, bind) { MPOL_BIND, 0, NODE1, ON_NODE1 };
FIXTURE_VARIANT_ADD(legacy, interleave) { MPOL_INTERLEAVE, 0, ALL, EVEN };
FIXTURE_VARIANT_ADD(legacy, interleave_static) { MPOL_INTERLEAVE, MPOL_F_STATIC_NODES, ALL, EVEN };
FIXTURE_VARIANT_ADD(legacy, local) { MPOL_LOCAL, 0, NONE, ON_NODE0 };
FIXTURE_VARIANT_ADD(legacy, preferred_many) { MPOL_PREFERRED_MANY, 0, NODE1, ON_NODE1 };
/* Global weights all 1 (the default): even, like plain interleave. */
FIXTURE_VARIANT_ADD(legacy, weighted_interleave) { MPOL_WEIGHTED_INTERLEAVE, 0, ALL, EVEN };

FIXTURE_SETUP(legacy)
{
	cpu_set_t cpu0;
	int i;

	self->nr_nodes = wi_memory_nodes(self->nodes, WI_MAX_NODES);
	if (self->nr_nodes < 2)
		SKIP(return, "Not enough NUMA nodes available");
	self->saved_auto = wi_auto_get();
	for (i = 0; i < self->nr_nodes; i++) {
		self->saved[i] = wi_sysfs_weight_get(self->nodes[i]);
		if (self->saved_auto >= 0) {
			ASSERT_EQ(0, wi_sysfs_weight_set(self->nodes[i], 1));
		} else {
			ASSERT_EQ(1, self->saved[i])
				TH_LOG("global weights must be at their default 1");
		}
	}
	CPU_ZERO(&cpu0);
	CPU_SET(0, &cpu0);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(cpu0), &cpu0));
	memset(self->mask, 0, sizeof(self->mask));
	if (variant->nodes == NODE1)
		wi_nodemask_set(self->mask, self->nodes[1]);
	for (i = 0; variant->nodes == ALL && i < self->nr_nodes; i++)
		wi_nodemask_set(self->mask, self->nodes[i]);
	self->npages = NPAGES_PER_NODE * self->nr_nodes;
}

FIXTURE_TEARDOWN(legacy)
{
	sys_set_mempolicy(MPOL_DEFAULT, NULL, 0);
	if (self->saved_auto >= 0)
		wi_restore(self->nodes, self->saved, self->nr_nodes, self->saved_auto);
}

static void expect_placement(struct __test_metadata *_metadata,
			     struct _test_data_legacy *self, enum placement where,
			     char *buf)
{
	long counts[WI_MAX_NODES];
	int i;

	ASSERT_EQ(0, wi_count_pages_per_node(buf, self->npages, counts));
	for (i = 0; i < self->nr_nodes; i++) {
		long want = where == EVEN ? NPAGES_PER_NODE :
			    (where == ON_NODE0 && i == 0) ||
			    (where == ON_NODE1 && i == 1) ? (long)self->npages : 0;

		EXPECT_EQ(want, counts[self->nodes[i]]) TH_LOG("node %d", self->nodes[i]);
	}
}

TEST_F(legacy, set_mempolicy_get_mempolicy_and_placement)
{
	unsigned long got_mask[WI_MAX_NODES / (8 * sizeof(long))];
	char *buf = wi_map_prefaulted(self->npages);
	int got_mode = -1;

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, sys_set_mempolicy(variant->mode | variant->flags,
				       variant->nodes == NONE ? NULL : self->mask,
					WI_MAXNODE));
	ASSERT_EQ(0, syscall(SYS_get_mempolicy, &got_mode, got_mask,
			     WI_MAX_NODES, NULL, 0));
	wi_touch_pages(buf, self->npages);
	ASSERT_EQ(0, sys_set_mempolicy(MPOL_DEFAULT, NULL, 0));

	EXPECT_EQ(variant->mode | variant->flags, got_mode);
	EXPECT_EQ(0, memcmp(got_mask, self->mask, sizeof(got_mask)));
	expect_placement(_metadata, self, variant->where, buf);
	munmap(buf, self->npages * getpagesize());
}

TEST_F(legacy, mbind_get_mempolicy_addr_and_placement)
{
	unsigned long got_mask[WI_MAX_NODES / (8 * sizeof(long))];
	size_t len = self->npages * getpagesize();
	char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int got_mode = -1;

	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0, madvise(buf, len, MADV_NOHUGEPAGE));
	ASSERT_EQ(0, sys_mbind(buf, len, variant->mode | variant->flags,
			       variant->nodes == NONE ? NULL : self->mask,
				WI_MAXNODE, 0));
	ASSERT_EQ(0, syscall(SYS_get_mempolicy, &got_mode, got_mask,
			     WI_MAX_NODES, buf, MPOL_F_ADDR));
	wi_touch_pages(buf, self->npages);

	EXPECT_EQ(variant->mode | variant->flags, got_mode);
	EXPECT_EQ(0, memcmp(got_mask, self->mask, sizeof(got_mask)));
	expect_placement(_metadata, self, variant->where, buf);
	munmap(buf, len);
}

TEST_HARNESS_MAIN
