// SPDX-License-Identifier: GPL-2.0
/*
 * Every bad input to set_mempolicy2(), mbind2() and get_mempolicy2() gets
 * its precise errno and changes nothing: the policy read back afterwards is
 * the one set before the call.  Each case also prints a line
 * "# errcase <syscall> <case> <errno name>" for the error table.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sys/stat.h>

#include "../kselftest_harness.h"
#include "numa_util.h"
#include "cpuset_util.h"

enum which { SET, MBIND, GET };

/* One syscall, about to be made. */
struct call {
	enum which which;
	struct mpol_args *args;		/* may point into pad[] or be bogus */
	size_t size;
	unsigned int flags;
	unsigned long addr;		/* get_mempolicy2 */
	char *range;			/* mbind2 start */
	size_t range_len;
	unsigned char *weights;
	unsigned long *mask;
	int nr_nodes;
};

FIXTURE(bad_input) {
	int nodes[WI_MAX_NODES];
	int nr_nodes;
	unsigned char known_w[WI_MAXNODE];	/* policy in place before */
	unsigned char weights[WI_MAXNODE];	/* weights the call passes */
	unsigned long known_mask[WI_MAX_NODES / (8 * sizeof(long))];
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
	struct mpol_args known;
	/* struct mpol_args plus room for a larger, future size */
	union {
		struct mpol_args args;
		char bytes[64];
	} pad;
	char *range;
	size_t range_len;
};

FIXTURE_VARIANT(bad_input) {
	const char *name;
	enum which which;
	void (*mutate)(struct call *c);
	int want_errno;
};

FIXTURE_SETUP(bad_input)
{
	int i;

	self->nr_nodes = wi_memory_nodes(self->nodes, WI_MAX_NODES);
	if (self->nr_nodes < 2)
		SKIP(return, "Not enough NUMA nodes available");
	memset(self->known_w, 0, sizeof(self->known_w));
	memset(self->weights, 0, sizeof(self->weights));
	for (i = 0; i < self->nr_nodes; i++) {
		self->known_w[self->nodes[i]] = 2 + i;
		self->weights[self->nodes[i]] = 1;
	}
	wi_args(&self->known, self->known_mask, self->nodes,
		self->nr_nodes, self->known_w);
	memset(&self->pad, 0, sizeof(self->pad));
	wi_args(&self->pad.args, self->mask, self->nodes, self->nr_nodes,
		self->weights);

	self->range_len = 16 * getpagesize();
	self->range = mmap(NULL, self->range_len, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->range);
	ASSERT_EQ(0, sys_set_mempolicy2(&self->known, sizeof(self->known), 0));
	ASSERT_EQ(0, sys_mbind2(self->range, self->range_len, &self->known,
				sizeof(self->known), 0));
}

FIXTURE_TEARDOWN(bad_input)
{
	sys_set_mempolicy(MPOL_DEFAULT, NULL, 0);
}

/* Read back a policy and check it is still the known one. */
static void expect_known_policy(struct __test_metadata *_metadata,
				struct _test_data_bad_input *self, void *addr)
{
	struct wi_policy got;

	ASSERT_EQ(0, wi_read_policy(&got, addr));
	EXPECT_EQ(MPOL_WEIGHTED_INTERLEAVE, got.args.mode);
	EXPECT_EQ(0, got.args.mode_flags);
	EXPECT_EQ(-1, got.args.home_node);
	EXPECT_EQ(0, memcmp(got.mask, self->known_mask, sizeof(got.mask)));
	EXPECT_EQ(0, memcmp(got.w, self->known_w, sizeof(got.w)));
}

TEST_F(bad_input, fails_with_errno_and_changes_nothing)
{
	struct call c = {
		.which = variant->which,
		.args = &self->pad.args,
		.size = sizeof(struct mpol_args),
		.range = self->range,
		.range_len = self->range_len,
		.weights = self->weights,
		.mask = self->mask,
		.nr_nodes = self->nr_nodes,
	};
	long ret;

	variant->mutate(&c);
	errno = 0;
	switch (c.which) {
	case SET:
		ret = sys_set_mempolicy2(c.args, c.size, c.flags);
		break;
	case MBIND:
		ret = sys_mbind2(c.range, c.range_len, c.args, c.size, c.flags);
		break;
	default:
		ret = sys_get_mempolicy2(c.args, c.size, c.addr, c.flags);
		break;
	}
	printf("# errcase %-15s %-40s %s\n",
	       c.which == SET ? "set_mempolicy2" : c.which == MBIND ? "mbind2" :
	       "get_mempolicy2", variant->name,
	       errno ? strerrorname_np(errno) : "no error");
	EXPECT_EQ(-1, ret);
	EXPECT_EQ(variant->want_errno, errno);
	expect_known_policy(_metadata, self, NULL);
	expect_known_policy(_metadata, self, self->range);
}

#define BAD(id, syscall_, err) \
	static void mutate_##id(struct call *c); \
	FIXTURE_VARIANT_ADD(bad_input, id) { \
		.name = #id, .which = syscall_, .mutate = mutate_##id, \
		.want_errno = err, \
	}; \
	static void mutate_##id(struct call *c)

/* --- set_mempolicy2 ------------------------------------------------------ */
BAD(set_unknown_mode, SET, EINVAL) { c->args->mode = MPOL_MAX; }

BAD(set_weights_with_interleave, SET, EINVAL) { c->args->mode = MPOL_INTERLEAVE; }

BAD(set_weights_with_bind, SET, EINVAL) { c->args->mode = MPOL_BIND; }

BAD(set_all_weights_zero, SET, EINVAL) { memset(c->weights, 0, WI_MAXNODE); }

BAD(set_weight_only_outside_nodemask, SET, EINVAL)
{
	memset(c->weights, 0, WI_MAXNODE);
	c->weights[WI_MAX_NODES - 1] = 5;
}

BAD(set_maxnodes_too_large, SET, EINVAL) { c->args->pol_maxnodes = 4096 * 8 + 2; }

BAD(set_maxnodes_zero, SET, EINVAL) { c->args->pol_maxnodes = 0; }

BAD(set_maxnodes_one, SET, EINVAL) { c->args->pol_maxnodes = 1; }

BAD(set_node_not_in_cpuset, SET, EINVAL) { wi_nodemask_set(c->mask, c->nr_nodes); }

BAD(set_unknown_syscall_flags, SET, EINVAL) { c->flags = 1; }

BAD(set_unknown_mode_flag, SET, EINVAL) { c->args->mode_flags = 1 << 10; }

BAD(set_static_and_relative, SET, EINVAL)
{
	c->args->mode_flags = MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES;
}

BAD(set_relative_nodes_with_weights, SET, EINVAL) { c->args->mode_flags = MPOL_F_RELATIVE_NODES; }

BAD(set_home_node_with_weighted_interleave, SET, EINVAL)
{
	c->args->flags = MPOL_ARGS_HOME_NODE;
	c->args->home_node = 0;
}

BAD(set_home_node_impossible, SET, EINVAL)
{
	c->args->mode = MPOL_BIND;
	c->args->flags = MPOL_ARGS_HOME_NODE;
	c->args->il_weights = 0;
	c->args->home_node = 1000;
}

BAD(set_home_node_flag_with_no_node, SET, EINVAL)
{
	c->args->mode = MPOL_BIND;
	c->args->flags = MPOL_ARGS_HOME_NODE;
	c->args->il_weights = 0;
	c->args->home_node = -1;
}

BAD(set_global_weights_flag_with_bind, SET, EINVAL)
{
	c->args->mode = MPOL_BIND;
	c->args->flags = MPOL_ARGS_GLOBAL_WEIGHTS;
	c->args->il_weights = 0;
}

BAD(set_size_below_ver0, SET, EINVAL) { c->size = 16; }

/* The struct before it had a flags field. */
BAD(set_size_without_flags, SET, EINVAL) { c->size = 32; }

BAD(set_unknown_args_flag, SET, EINVAL) { c->args->flags = 1ULL << 3; }

/* mbind2()'s rebalance is not set_mempolicy2()'s. */
BAD(set_rebalance_args_flag, SET, EINVAL) { c->args->flags = MPOL_ARGS_REBALANCE; }

BAD(set_unknown_high_args_flag, SET, EINVAL) { c->args->flags = 1ULL << 63; }

/* The mempolicy2 flags are fields of their own, never mode flags. */
BAD(set_mode_flag_bit_11, SET, EINVAL) { c->args->mode_flags = 1 << 11; }

BAD(set_mode_flag_bit_12, SET, EINVAL) { c->args->mode_flags = 1 << 12; }

BAD(set_size_larger_with_nonzero_tail, SET, E2BIG)
{
	c->size = 48;
	((char *)c->args)[44] = 1;
}

BAD(set_bad_args_pointer, SET, EFAULT) { c->args = (struct mpol_args *)8; }

BAD(set_bad_nodemask_pointer, SET, EFAULT) { c->args->pol_nodes = 8; }

BAD(set_bad_weights_pointer, SET, EFAULT) { c->args->il_weights = 8; }

/* --- mbind2 --------------------------------------------------------------- */
BAD(mbind_unknown_flags, MBIND, EINVAL) { c->flags = 1 << 7; }

/*
 * Regression test: mbind2() took its rebalance as MPOL_MF_* bit 8, above
 * MPOL_MF_INTERNAL, where mbind()'s internal flags live.  It is a flag of
 * struct mpol_args now; the flags argument takes MPOL_MF_VALID only.
 */
BAD(mbind_flag_bit_8, MBIND, EINVAL) { c->flags = 1 << 8; }

BAD(mbind_rebalance_with_bind, MBIND, EINVAL)
{
	memset(c->weights, 0, WI_MAXNODE);
	c->args->mode = MPOL_BIND;
	c->args->flags = MPOL_ARGS_REBALANCE;
}

BAD(mbind_all_weights_zero, MBIND, EINVAL) { memset(c->weights, 0, WI_MAXNODE); }

BAD(mbind_weights_with_preferred, MBIND, EINVAL) { c->args->mode = MPOL_PREFERRED; }

BAD(mbind_unaligned_start, MBIND, EINVAL) { c->range += 1; }

BAD(mbind_node_not_in_cpuset, MBIND, EINVAL) { wi_nodemask_set(c->mask, c->nr_nodes); }

BAD(mbind_bad_weights_pointer, MBIND, EFAULT) { c->args->il_weights = 8; }

BAD(mbind_size_larger_with_nonzero_tail, MBIND, E2BIG)
{
	c->size = 48;
	((char *)c->args)[47] = 1;
}

/* --- get_mempolicy2 ------------------------------------------------------- */
BAD(get_unknown_flags, GET, EINVAL) { c->flags = MPOL_F_NODE; }

BAD(get_addr_without_f_addr, GET, EINVAL) { c->addr = (unsigned long)c->range; }

BAD(get_unmapped_addr, GET, EFAULT) { c->flags = MPOL_F_ADDR; c->addr = 4096; }

BAD(get_maxnodes_too_small, GET, EINVAL) { c->args->pol_maxnodes = 1; }

BAD(get_bad_weights_pointer, GET, EFAULT) { c->args->il_weights = 8; }

BAD(get_bad_nodemask_pointer, GET, EFAULT) { c->args->pol_nodes = 8; }

BAD(get_size_below_ver0, GET, EINVAL) { c->size = 8; }

BAD(get_size_larger_with_nonzero_tail, GET, E2BIG)
{
	c->size = 64;
	((char *)c->args)[63] = 1;
}

/* A larger size whose extra bytes are zero is accepted, as clone3() does. */
TEST(larger_size_with_zero_tail_is_accepted)
{
	int nodes[WI_MAX_NODES], n = wi_memory_nodes(nodes, WI_MAX_NODES);
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
	unsigned char w[WI_MAXNODE] = { 0 };
	union { struct mpol_args a; char b[64]; } pad = { 0 };
	int i;

	for (i = 0; i < n; i++)
		w[nodes[i]] = 1;
	wi_args(&pad.a, mask, nodes, n, w);
	EXPECT_EQ(0, sys_set_mempolicy2(&pad.a, sizeof(pad), 0));
	EXPECT_EQ(0, sys_get_mempolicy2(&pad.a, sizeof(pad), 0, 0));
	EXPECT_EQ(MPOL_WEIGHTED_INTERLEAVE, pad.a.mode);
	sys_set_mempolicy(MPOL_DEFAULT, NULL, 0);
}

/*
 * A real cpuset: in a cgroup whose cpuset.mems is node 0, naming node 1 is
 * EINVAL, node 0 alone is fine, and MPOL_F_STATIC_NODES may name node 1.
 * The test process leaves the cgroup and removes it at the end.
 */
TEST(cpuset_restricted_nodes_are_refused)
{
	const char *cg = WI_CGROUP_ROOT "/mpol2-errors-test";
	int nodes[WI_MAX_NODES], n = wi_memory_nodes(nodes, WI_MAX_NODES);
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
	unsigned char w[WI_MAXNODE] = { 3, 1 };
	int both[2] = { 0, 1 };
	struct mpol_args a;

	if (n < 2)
		SKIP(return, "Not enough NUMA nodes available");
	if (!wi_cpuset_supported())
		SKIP(return, "No cgroup2 cpuset controller at %s", WI_CGROUP_ROOT);
	ASSERT_EQ(0, wi_cpuset_create(cg, "0"));
	ASSERT_EQ(0, wi_cpuset_join(cg));

	wi_args(&a, mask, both, 2, w);
	EXPECT_EQ(-1, sys_set_mempolicy2(&a, sizeof(a), 0));
	EXPECT_EQ(EINVAL, errno);
	wi_args(&a, mask, both, 1, w);
	EXPECT_EQ(0, sys_set_mempolicy2(&a, sizeof(a), 0));
	wi_args(&a, mask, both, 2, w);
	a.mode_flags = MPOL_F_STATIC_NODES;
	EXPECT_EQ(0, sys_set_mempolicy2(&a, sizeof(a), 0));

	sys_set_mempolicy(MPOL_DEFAULT, NULL, 0);
	EXPECT_EQ(0, wi_cpuset_leave_and_remove(cg));
}

int main(int argc, char **argv)
{
	wi_skip_without_mempolicy2();
	return test_harness_run(argc, argv);
}
