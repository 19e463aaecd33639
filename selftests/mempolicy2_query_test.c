// SPDX-License-Identifier: GPL-2.0
/*
 * get_mempolicy2() returns what was set: mode, mode flags, nodemask, home
 * node and the effective weights (the policy's own, or the global sysfs
 * table when it has none), for the task policy and, with MPOL_F_ADDR, for
 * a VMA.  /proc/self/numa_maps shows own weights as a new last field and
 * leaves every other line as it was.
 */
#include "../kselftest_harness.h"
#include "numa_util.h"

#define MASK_LONGS (WI_MAX_NODES / (8 * sizeof(long)))

/* The numa_maps line of the VMA starting at @addr, or "" if none. */
static void numa_maps_line(void *addr, char *line, size_t len)
{
	char want[32];
	FILE *f = fopen("/proc/self/numa_maps", "r");

	line[0] = '\0';
	if (!f)
		return;
	snprintf(want, sizeof(want), "%08lx ", (unsigned long)addr);
	while (fgets(line, len, f))
		if (!strncmp(line, want, strlen(want)))
			break;
	if (strncmp(line, want, strlen(want)))
		line[0] = '\0';
	fclose(f);
}

FIXTURE(query) {
	int nodes[WI_MAX_NODES];
	int nr_nodes;
	unsigned char w[WI_MAXNODE];
	unsigned long mask[MASK_LONGS];
	struct mpol_args args;
	int saved_sysfs[WI_MAX_NODES];
};

FIXTURE_SETUP(query)
{
	static const unsigned char own[] = { 5, 3, 1, 1 };
	int i;

	self->nr_nodes = wi_memory_nodes(self->nodes, WI_MAX_NODES);
	if (self->nr_nodes < 2)
		SKIP(return, "Not enough NUMA nodes available");
	memset(self->w, 0, sizeof(self->w));
	for (i = 0; i < self->nr_nodes; i++) {
		self->w[self->nodes[i]] = own[i % 4];
		self->saved_sysfs[i] = wi_sysfs_weight_get(self->nodes[i]);
	}
	wi_args(&self->args, self->mask, self->nodes, self->nr_nodes, self->w);
}

FIXTURE_TEARDOWN(query)
{
	int i;

	sys_set_mempolicy(MPOL_DEFAULT, NULL, 0);
	for (i = 0; i < self->nr_nodes; i++)
		if (self->saved_sysfs[i] > 0)
			wi_sysfs_weight_set(self->nodes[i], self->saved_sysfs[i]);
}

TEST_F(query, task_policy_round_trip_with_own_weights)
{
	struct wi_policy r;

	ASSERT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));
	ASSERT_EQ(0, wi_read_policy(&r, NULL));
	EXPECT_EQ(MPOL_WEIGHTED_INTERLEAVE, r.args.mode);
	EXPECT_EQ(0, r.args.mode_flags);
	EXPECT_EQ(-1, r.args.home_node);
	EXPECT_EQ(0, memcmp(r.mask, self->mask, sizeof(r.mask)));
	EXPECT_EQ(0, memcmp(r.w, self->w, sizeof(r.w)));
}

TEST_F(query, without_own_weights_reports_global_sysfs_weights)
{
	unsigned char want[WI_MAXNODE] = { 0 };
	struct wi_policy r;
	int i;

	for (i = 0; i < self->nr_nodes; i++) {
		ASSERT_EQ(0, wi_sysfs_weight_set(self->nodes[i], 7 + i));
		want[self->nodes[i]] = 7 + i;
	}
	self->args.il_weights = 0;
	ASSERT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));
	ASSERT_EQ(0, wi_read_policy(&r, NULL));
	EXPECT_EQ(MPOL_WEIGHTED_INTERLEAVE, r.args.mode);
	EXPECT_EQ(0, memcmp(r.w, want, sizeof(r.w)));
	/* Read at call time: a sysfs change shows up at once. */
	ASSERT_EQ(0, wi_sysfs_weight_set(self->nodes[0], 200));
	want[self->nodes[0]] = 200;
	ASSERT_EQ(0, wi_read_policy(&r, NULL));
	EXPECT_EQ(0, memcmp(r.w, want, sizeof(r.w)));
}

TEST_F(query, default_policy_reads_as_default_with_no_weights)
{
	unsigned long empty[MASK_LONGS] = { 0 };
	unsigned char zero[WI_MAXNODE] = { 0 };
	struct wi_policy r;

	ASSERT_EQ(0, wi_read_policy(&r, NULL));
	EXPECT_EQ(MPOL_DEFAULT, r.args.mode);
	EXPECT_EQ(-1, r.args.home_node);
	EXPECT_EQ(0, memcmp(r.mask, empty, sizeof(empty)));
	EXPECT_EQ(0, memcmp(r.w, zero, sizeof(zero)));
}

TEST_F(query, bind_home_node_round_trip)
{
	struct wi_policy r;

	self->args.mode = MPOL_BIND;
	self->args.flags = MPOL_ARGS_HOME_NODE;
	self->args.il_weights = 0;
	self->args.home_node = self->nodes[1];
	ASSERT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));
	ASSERT_EQ(0, wi_read_policy(&r, NULL));
	EXPECT_EQ(MPOL_BIND, r.args.mode);
	EXPECT_EQ(0, r.args.mode_flags);
	EXPECT_EQ(MPOL_ARGS_HOME_NODE, r.args.flags);
	EXPECT_EQ(self->nodes[1], r.args.home_node);
	EXPECT_EQ(0, memcmp(r.mask, self->mask, sizeof(r.mask)));
}

TEST_F(query, vma_policy_read_by_address_and_shown_in_numa_maps)
{
	size_t len = 8 * getpagesize();
	char *own = mmap(NULL, 2 * len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *legacy = own + len, line[1024], want[256];
	struct wi_policy r;
	int i, off = 0;

	ASSERT_NE(MAP_FAILED, own);
	ASSERT_EQ(0, sys_mbind2(own, len, &self->args, sizeof(self->args), 0));
	ASSERT_EQ(0, sys_mbind(legacy, len, MPOL_WEIGHTED_INTERLEAVE, self->mask,
			       WI_MAXNODE, 0));
	own[0] = 1;
	legacy[0] = 1;

	ASSERT_EQ(0, wi_read_policy(&r, own));
	EXPECT_EQ(MPOL_WEIGHTED_INTERLEAVE, r.args.mode);
	EXPECT_EQ(0, memcmp(r.w, self->w, sizeof(r.w)));
	ASSERT_EQ(0, wi_read_policy(&r, own + len - 1));	/* not merged */
	EXPECT_EQ(0, memcmp(r.w, self->w, sizeof(r.w)));

	/* Own weights: " il_weights=0:5,1:3,..." ends the line. */
	off = snprintf(want, sizeof(want), " il_weights");
	for (i = 0; i < self->nr_nodes; i++)
		off += snprintf(want + off, sizeof(want) - off, "%c%d:%d",
				i ? ',' : '=', self->nodes[i], self->w[self->nodes[i]]);
	snprintf(want + off, sizeof(want) - off, "\n");
	numa_maps_line(own, line, sizeof(line));
	TH_LOG("own:    %s", line);
	ASSERT_NE(0, line[0]);
	ASSERT_GE(strlen(line), strlen(want));
	EXPECT_STREQ(want, line + strlen(line) - strlen(want));
	EXPECT_NE(NULL, strstr(line, " weighted interleave:"));

	/* Global weights: the line as before, no new field. */
	numa_maps_line(legacy, line, sizeof(line));
	TH_LOG("legacy: %s", line);
	ASSERT_NE(0, line[0]);
	EXPECT_EQ(NULL, strstr(line, "il_weights"));
	EXPECT_NE(NULL, strstr(line, " kernelpagesize_kB=4\n"));
	munmap(own, 2 * len);
}

/*
 * Regression test: splitting a shmem shared-policy range copied the policy
 * struct, so both halves pointed at one weight table, freed twice when the
 * file went away.  Each half must keep its own copy of the weights.
 */
TEST_F(query, shmem_split_range_keeps_own_weights_copy)
{
	size_t psz = getpagesize(), len = 3 * psz;
	unsigned long mid_mask[WI_MAX_NODES / (8 * sizeof(long))] = { 0 };
	struct wi_policy r;
	char *buf;
	int round;

	for (round = 0; round < 3; round++) {
		buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		ASSERT_NE(MAP_FAILED, buf);
		ASSERT_EQ(0, sys_mbind2(buf, len, &self->args, sizeof(self->args), 0));
		wi_nodemask_set(mid_mask, self->nodes[0]);
		ASSERT_EQ(0, sys_mbind(buf + psz, psz, MPOL_BIND, mid_mask,
				       WI_MAXNODE, 0));
		memset(buf, 1, len);
		ASSERT_EQ(0, wi_read_policy(&r, buf));
		EXPECT_EQ(MPOL_WEIGHTED_INTERLEAVE, r.args.mode);
		EXPECT_EQ(0, memcmp(r.w, self->w, sizeof(r.w)));
		ASSERT_EQ(0, wi_read_policy(&r, buf + psz));
		EXPECT_EQ(MPOL_BIND, r.args.mode);
		ASSERT_EQ(0, wi_read_policy(&r, buf + 2 * psz));
		EXPECT_EQ(MPOL_WEIGHTED_INTERLEAVE, r.args.mode);
		EXPECT_EQ(0, memcmp(r.w, self->w, sizeof(r.w)));
		/* Replace the first part: its table is freed, the last part's stays. */
		ASSERT_EQ(0, sys_mbind(buf, psz, MPOL_BIND, mid_mask, WI_MAXNODE, 0));
		ASSERT_EQ(0, wi_read_policy(&r, buf + 2 * psz));
		EXPECT_EQ(0, memcmp(r.w, self->w, sizeof(r.w)));
		munmap(buf, len);
	}
}

/*
 * Zero means default: a zeroed home_node is no home node unless
 * MPOL_ARGS_HOME_NODE says it is set (home_node 0 would otherwise be node 0
 * for BIND, and an error for the other modes).
 */
TEST_F(query, zeroed_home_node_is_no_home_node)
{
	struct wi_policy r;

	self->args.mode = MPOL_BIND;
	self->args.il_weights = 0;
	self->args.home_node = 0;
	ASSERT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));
	ASSERT_EQ(0, wi_read_policy(&r, NULL));
	EXPECT_EQ(MPOL_BIND, r.args.mode);
	EXPECT_EQ(0, r.args.mode_flags);
	EXPECT_EQ(-1, r.args.home_node);

	/* Any mode: without the flag the field is not read at all. */
	self->args.mode = MPOL_WEIGHTED_INTERLEAVE;
	self->args.il_weights = (unsigned long)self->w;
	self->args.home_node = 12345;
	ASSERT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));
	ASSERT_EQ(0, wi_read_policy(&r, NULL));
	EXPECT_EQ(-1, r.args.home_node);
}

/*
 * A caller built against a larger struct mpol_args passes its size: the
 * kernel fills the fields it knows and writes zeros after them, as
 * copy_struct_to_user() does, and never more than the size given.
 */
TEST_F(query, larger_struct_gets_zeros_after_the_known_fields)
{
	static const unsigned char zeros[16];
	struct {
		struct mpol_args args;
		unsigned char tail[16];
		unsigned char guard[16];
	} big;

	ASSERT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));
	memset(&big, 0, sizeof(big));
	memset(big.guard, 0xa5, sizeof(big.guard));
	big.args.pol_maxnodes = WI_MAXNODE;
	ASSERT_EQ(0, sys_get_mempolicy2(&big.args,
					sizeof(big.args) + sizeof(big.tail),
					0, 0));
	EXPECT_EQ(MPOL_WEIGHTED_INTERLEAVE, big.args.mode);
	EXPECT_EQ(WI_MAXNODE, big.args.pol_maxnodes);
	EXPECT_EQ(0, memcmp(big.tail, zeros, sizeof(zeros)));
	EXPECT_EQ(0xa5, big.guard[0]);
	EXPECT_EQ(0xa5, big.guard[15]);
}

/*
 * get_mempolicy2() says that a weighted-interleave policy follows the
 * global weights (MPOL_ARGS_GLOBAL_WEIGHTS), and handing what it returned to
 * set_mempolicy2() keeps the policy global: a later sysfs change still
 * shows, which it would not if the returned weights became its own.
 */
TEST_F(query, global_weights_survive_a_get_then_set)
{
	unsigned char want[WI_MAXNODE] = { 0 };
	struct wi_policy r, again;
	int i;

	for (i = 0; i < self->nr_nodes; i++) {
		ASSERT_EQ(0, wi_sysfs_weight_set(self->nodes[i], 3 + i));
		want[self->nodes[i]] = 3 + i;
	}
	self->args.il_weights = 0;
	ASSERT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));
	ASSERT_EQ(0, wi_read_policy(&r, NULL));
	EXPECT_EQ(MPOL_ARGS_GLOBAL_WEIGHTS, r.args.flags);
	EXPECT_EQ(0, memcmp(r.w, want, sizeof(r.w)));

	/* Set back exactly what came out (il_weights points at the copy). */
	ASSERT_EQ(0, sys_set_mempolicy2(&r.args, sizeof(r.args), 0));
	ASSERT_EQ(0, wi_sysfs_weight_set(self->nodes[0], 99));
	want[self->nodes[0]] = 99;
	ASSERT_EQ(0, wi_read_policy(&again, NULL));
	EXPECT_EQ(MPOL_ARGS_GLOBAL_WEIGHTS, again.args.flags);
	EXPECT_EQ(0, memcmp(again.w, want, sizeof(again.w)));

	/* A policy with weights of its own reads back without the flag. */
	self->args.il_weights = (unsigned long)self->w;
	ASSERT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));
	ASSERT_EQ(0, wi_read_policy(&again, NULL));
	EXPECT_EQ(0, again.args.mode_flags);
	EXPECT_EQ(0, again.args.flags);
	ASSERT_EQ(0, sys_set_mempolicy2(&again.args, sizeof(again.args), 0));
	ASSERT_EQ(0, wi_sysfs_weight_set(self->nodes[0], 50));
	ASSERT_EQ(0, wi_read_policy(&r, NULL));
	EXPECT_EQ(0, memcmp(r.w, self->w, sizeof(r.w)));
}

/*
 * Every mode round-trips: what get_mempolicy2() fills, handed back
 * unchanged to set_mempolicy2() (task) or mbind2() (VMA), sets the same
 * policy.  The structure is not touched between the calls: its weights
 * pointer and the buffers it points to stay as get_mempolicy2() left them.
 */
FIXTURE(round_trip) {
	int nodes[WI_MAX_NODES];
	int nr_nodes;
	unsigned char w[WI_MAXNODE];
	unsigned long mask[MASK_LONGS];
	struct mpol_args args;
	size_t len;
	char *map;
};

FIXTURE_VARIANT(round_trip) {
	int mode;
	int nr_nodes;		/* nodes in the mask, 0 for none */
	int home;		/* set a home node (the second node) */
	int own_weights;	/* weighted interleave with weights of its own */
	int mode_flags;		/* MPOL_F_STATIC_NODES or MPOL_F_RELATIVE_NODES */
};

FIXTURE_VARIANT_ADD(round_trip, default_policy) { .mode = MPOL_DEFAULT };

FIXTURE_VARIANT_ADD(round_trip, local) { .mode = MPOL_LOCAL };

FIXTURE_VARIANT_ADD(round_trip, preferred) {
	.mode = MPOL_PREFERRED, .nr_nodes = 1,
};

FIXTURE_VARIANT_ADD(round_trip, bind) { .mode = MPOL_BIND, .nr_nodes = 2 };

FIXTURE_VARIANT_ADD(round_trip, bind_home_node) {
	.mode = MPOL_BIND, .nr_nodes = 2, .home = 1,
};

FIXTURE_VARIANT_ADD(round_trip, preferred_many) {
	.mode = MPOL_PREFERRED_MANY, .nr_nodes = 2,
};

FIXTURE_VARIANT_ADD(round_trip, preferred_many_home_node) {
	.mode = MPOL_PREFERRED_MANY, .nr_nodes = 2, .home = 1,
};

FIXTURE_VARIANT_ADD(round_trip, interleave) {
	.mode = MPOL_INTERLEAVE, .nr_nodes = 2,
};

FIXTURE_VARIANT_ADD(round_trip, weighted_interleave_own) {
	.mode = MPOL_WEIGHTED_INTERLEAVE, .nr_nodes = 2, .own_weights = 1,
};

FIXTURE_VARIANT_ADD(round_trip, weighted_interleave_global) {
	.mode = MPOL_WEIGHTED_INTERLEAVE, .nr_nodes = 2,
};

/*
 * Regression variants: with MPOL_F_RELATIVE_NODES the weights array that
 * get_mempolicy2() hands back made set_mempolicy2() and mbind2() fail
 * with EINVAL whatever the mode.
 */
FIXTURE_VARIANT_ADD(round_trip, bind_relative_nodes) {
	.mode = MPOL_BIND, .nr_nodes = 2, .mode_flags = MPOL_F_RELATIVE_NODES,
};

FIXTURE_VARIANT_ADD(round_trip, bind_static_nodes) {
	.mode = MPOL_BIND, .nr_nodes = 2, .mode_flags = MPOL_F_STATIC_NODES,
};

FIXTURE_VARIANT_ADD(round_trip, preferred_many_relative_nodes) {
	.mode = MPOL_PREFERRED_MANY, .nr_nodes = 2,
	.mode_flags = MPOL_F_RELATIVE_NODES,
};

FIXTURE_VARIANT_ADD(round_trip, interleave_relative_nodes) {
	.mode = MPOL_INTERLEAVE, .nr_nodes = 2,
	.mode_flags = MPOL_F_RELATIVE_NODES,
};

FIXTURE_VARIANT_ADD(round_trip, weighted_interleave_global_relative_nodes) {
	.mode = MPOL_WEIGHTED_INTERLEAVE, .nr_nodes = 2,
	.mode_flags = MPOL_F_RELATIVE_NODES,
};

FIXTURE_VARIANT_ADD(round_trip, weighted_interleave_own_static_nodes) {
	.mode = MPOL_WEIGHTED_INTERLEAVE, .nr_nodes = 2, .own_weights = 1,
	.mode_flags = MPOL_F_STATIC_NODES,
};

FIXTURE_SETUP(round_trip)
{
	int i;

	self->nr_nodes = wi_memory_nodes(self->nodes, WI_MAX_NODES);
	if (self->nr_nodes < 2)
		SKIP(return, "Not enough NUMA nodes available");
	memset(self->w, 0, sizeof(self->w));
	for (i = 0; i < variant->nr_nodes; i++)
		self->w[self->nodes[i]] = 5 - 2 * i;
	wi_args(&self->args, self->mask, self->nodes, variant->nr_nodes,
		variant->own_weights ? self->w : NULL);
	self->args.mode = variant->mode;
	self->args.mode_flags = variant->mode_flags;
	if (variant->home) {
		self->args.flags = MPOL_ARGS_HOME_NODE;
		self->args.home_node = self->nodes[1];
	}
	self->len = 4 * getpagesize();
	self->map = mmap(NULL, 2 * self->len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->map);
}

FIXTURE_TEARDOWN(round_trip)
{
	sys_set_mempolicy(MPOL_DEFAULT, NULL, 0);
	if (self->map && self->map != MAP_FAILED)
		munmap(self->map, 2 * self->len);
}

static void expect_same_policy(struct __test_metadata *_metadata,
			       const struct wi_policy *a,
			       const struct wi_policy *b)
{
	EXPECT_EQ(a->args.mode, b->args.mode);
	EXPECT_EQ(a->args.mode_flags, b->args.mode_flags);
	EXPECT_EQ(a->args.flags, b->args.flags);
	EXPECT_EQ(a->args.home_node, b->args.home_node);
	EXPECT_EQ(0, memcmp(a->mask, b->mask, sizeof(a->mask)));
	EXPECT_EQ(0, memcmp(a->w, b->w, sizeof(a->w)));
}

TEST_F(round_trip, task_policy_get_then_set_sets_the_same_policy)
{
	struct wi_policy r, again;

	ASSERT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));
	ASSERT_EQ(0, wi_read_policy(&r, NULL));
	ASSERT_EQ(variant->mode, r.args.mode);
	ASSERT_EQ(variant->mode_flags, r.args.mode_flags);
	ASSERT_EQ(0, sys_set_mempolicy(MPOL_DEFAULT, NULL, 0));
	ASSERT_EQ(0, sys_set_mempolicy2(&r.args, sizeof(r.args), 0));
	ASSERT_EQ(0, wi_read_policy(&again, NULL));
	expect_same_policy(_metadata, &r, &again);
}

TEST_F(round_trip, vma_policy_get_then_mbind2_sets_the_same_policy)
{
	char *second = self->map + self->len;
	struct wi_policy r, again;

	ASSERT_EQ(0, sys_mbind2(self->map, self->len, &self->args,
				sizeof(self->args), 0));
	ASSERT_EQ(0, wi_read_policy(&r, self->map));
	ASSERT_EQ(variant->mode, r.args.mode);
	ASSERT_EQ(variant->mode_flags, r.args.mode_flags);
	ASSERT_EQ(0, sys_mbind2(second, self->len, &r.args, sizeof(r.args), 0));
	ASSERT_EQ(0, wi_read_policy(&again, second));
	expect_same_policy(_metadata, &r, &again);
}

int main(int argc, char **argv)
{
	wi_skip_without_mempolicy2();
	return test_harness_run(argc, argv);
}
