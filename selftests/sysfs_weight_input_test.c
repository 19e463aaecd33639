// SPDX-License-Identifier: GPL-2.0
/*
 * What writes to /sys/kernel/mm/mempolicy/weighted_interleave/nodeN do,
 * pinned on each base so that own weights never change this ABI:
 *  - "256", "-1", "abc" are refused with EINVAL and the weight is unchanged;
 *  - "0", "" and "\n": Linux 6.12 accepts them and resets the node to the
 *    system default weight, which it reports as 1; mainline (the kernels
 *    with an "auto" file) refuses them with EINVAL and keeps the weight;
 *  - a zero-length write(2) returns 0 and changes nothing.
 * On mainline every write leaves auto mode; the test puts back the mode it
 * found.
 */
#include "../kselftest_harness.h"
#include "numa_util.h"

/* A weight that is neither the default nor any value the variants write. */
#define KNOWN_WEIGHT 7

FIXTURE(weight_write) {
	int node;
	int saved;
	int saved_auto;		/* -1: no auto mode (6.12) */
};

FIXTURE_VARIANT(weight_write) {
	const char *text;
	size_t len;
	long want_errno;	/* 0: the write succeeds */
	int want_weight;	/* weight read back afterwards */
	bool zero_like;		/* "0", "" or "\n": refused on mainline */
};

#define REFUSED(name, str) \
	FIXTURE_VARIANT_ADD(weight_write, name) { \
		.text = str, .len = sizeof(str) - 1, \
		.want_errno = EINVAL, .want_weight = KNOWN_WEIGHT, \
	}
#define RESETS(name, str) \
	FIXTURE_VARIANT_ADD(weight_write, name) { \
		.text = str, .len = sizeof(str) - 1, \
		.want_errno = 0, .want_weight = 1, .zero_like = true, \
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
	int nodes[WI_MAX_NODES];

	ASSERT_GT(wi_memory_nodes(nodes, WI_MAX_NODES), 0);
	self->node = nodes[0];
	self->saved_auto = wi_auto_get();
	self->saved = wi_sysfs_weight_get(self->node);
	ASSERT_GT(self->saved, 0);
	ASSERT_EQ(0, wi_sysfs_weight_set(self->node, KNOWN_WEIGHT));
	ASSERT_EQ(KNOWN_WEIGHT, wi_sysfs_weight_get(self->node));
}

FIXTURE_TEARDOWN(weight_write)
{
	wi_restore(&self->node, &self->saved, 1, self->saved_auto);
}

TEST_F(weight_write, write_result_and_weight_after)
{
	long want_errno = variant->want_errno;
	int want_weight = variant->want_weight;
	long ret;

	if (variant->zero_like && self->saved_auto >= 0) {
		/* Mainline: no reset to a default, the weight stays. */
		want_errno = EINVAL;
		want_weight = KNOWN_WEIGHT;
	}
	/*
	 * "" goes through as a one-byte write of the terminating NUL, the
	 * way a program writing a C string with its NUL would; sysfs sees
	 * an empty string.  The zero-length write is its own test below.
	 */
	ret = wi_sysfs_weight_write(self->node, variant->text,
				      variant->len ? variant->len : 1);
	if (want_errno) {
		EXPECT_EQ(-want_errno, ret);
	} else {
		EXPECT_EQ(variant->len ? (long)variant->len : 1, ret);
	}
	EXPECT_EQ(want_weight, wi_sysfs_weight_get(self->node));
	if (self->saved_auto >= 0)
		EXPECT_EQ(0, wi_auto_get());
}

TEST(zero_length_write_changes_nothing)
{
	int nodes[WI_MAX_NODES], saved, saved_auto;

	ASSERT_GT(wi_memory_nodes(nodes, WI_MAX_NODES), 0);
	saved_auto = wi_auto_get();
	saved = wi_sysfs_weight_get(nodes[0]);
	ASSERT_EQ(0, wi_sysfs_weight_set(nodes[0], KNOWN_WEIGHT));
	EXPECT_EQ(0, wi_sysfs_weight_write(nodes[0], "", 0));
	EXPECT_EQ(KNOWN_WEIGHT, wi_sysfs_weight_get(nodes[0]));
	wi_restore(nodes, &saved, 1, saved_auto);
}

TEST_HARNESS_MAIN
