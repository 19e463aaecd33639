// SPDX-License-Identifier: GPL-2.0
/*
 * What writes to /sys/kernel/mm/mempolicy/weighted_interleave/nodeN do in
 * Linux 6.12, pinned so BWAP never changes the upstream ABI:
 *  - "256", "-1", "abc" are refused with EINVAL and the weight is unchanged;
 *  - "0", "" and "\n" are accepted and reset the node to the system default
 *    weight, which 6.12 reports as 1 (see the ABI file; later kernels refuse
 *    them, 6.12 does not);
 *  - a zero-length write(2) returns 0 and changes nothing.
 */
#include "kselftest_harness.h"
#include "numa_util.h"

/* A weight that is neither the default nor any value the variants write. */
#define KNOWN_WEIGHT 7

FIXTURE(weight_write) {
	int node;
	int saved;
};

FIXTURE_VARIANT(weight_write) {
	const char *text;
	size_t len;
	long want_errno;	/* 0: the write succeeds */
	int want_weight;	/* weight read back afterwards */
};

#define REFUSED(name, str) \
	FIXTURE_VARIANT_ADD(weight_write, name) { \
		.text = str, .len = sizeof(str) - 1, \
		.want_errno = EINVAL, .want_weight = KNOWN_WEIGHT, \
	}
#define RESETS(name, str) \
	FIXTURE_VARIANT_ADD(weight_write, name) { \
		.text = str, .len = sizeof(str) - 1, \
		.want_errno = 0, .want_weight = 1, \
	}

REFUSED(above_255_is_einval, "256");
REFUSED(above_255_with_newline_is_einval, "256\n");
REFUSED(negative_is_einval, "-1");
REFUSED(not_a_number_is_einval, "abc");
REFUSED(trailing_garbage_is_einval, "3x");
RESETS(zero_resets_to_default, "0");
RESETS(empty_line_resets_to_default, "\n");
RESETS(empty_string_resets_to_default, "");

FIXTURE_SETUP(weight_write)
{
	int nodes[BWAP_MAX_NODES];

	ASSERT_GT(bwap_memory_nodes(nodes, BWAP_MAX_NODES), 0);
	self->node = nodes[0];
	self->saved = bwap_sysfs_weight_get(self->node);
	ASSERT_GT(self->saved, 0);
	ASSERT_EQ(0, bwap_sysfs_weight_set(self->node, KNOWN_WEIGHT));
	ASSERT_EQ(KNOWN_WEIGHT, bwap_sysfs_weight_get(self->node));
}

FIXTURE_TEARDOWN(weight_write)
{
	if (self->saved > 0)
		bwap_sysfs_weight_set(self->node, self->saved);
}

TEST_F(weight_write, write_result_and_weight_after)
{
	long ret;

	/*
	 * "" goes through as a one-byte write of the terminating NUL, the
	 * way a program writing a C string with its NUL would; sysfs sees
	 * an empty string.  The zero-length write is its own test below.
	 */
	ret = bwap_sysfs_weight_write(self->node, variant->text,
				      variant->len ? variant->len : 1);
	if (variant->want_errno) {
		EXPECT_EQ(-variant->want_errno, ret);
	} else {
		EXPECT_EQ(variant->len ? (long)variant->len : 1, ret);
	}
	EXPECT_EQ(variant->want_weight, bwap_sysfs_weight_get(self->node));
}

TEST(zero_length_write_changes_nothing)
{
	int nodes[BWAP_MAX_NODES], saved;

	ASSERT_GT(bwap_memory_nodes(nodes, BWAP_MAX_NODES), 0);
	saved = bwap_sysfs_weight_get(nodes[0]);
	ASSERT_EQ(0, bwap_sysfs_weight_set(nodes[0], KNOWN_WEIGHT));
	EXPECT_EQ(0, bwap_sysfs_weight_write(nodes[0], "", 0));
	EXPECT_EQ(KNOWN_WEIGHT, bwap_sysfs_weight_get(nodes[0]));
	bwap_sysfs_weight_set(nodes[0], saved);
}

TEST_HARNESS_MAIN
