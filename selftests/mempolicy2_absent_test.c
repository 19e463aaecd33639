// SPDX-License-Identifier: GPL-2.0
/*
 * On a kernel built with CONFIG_NUMA_POLICY_WEIGHTS off (configs/upstream),
 * the mempolicy2 syscall numbers must answer ENOSYS and never reach some
 * other syscall, and numa_maps and vmstat must show no new fields.
 */
#include "../kselftest_harness.h"
#include "numa_util.h"

TEST(mempolicy2_syscalls_are_enosys)
{
	struct mpol_args args = { .home_node = -1 };

	errno = 0;
	EXPECT_EQ(-1, sys_set_mempolicy2(&args, sizeof(args), 0));
	EXPECT_EQ(ENOSYS, errno);
	errno = 0;
	EXPECT_EQ(-1, sys_get_mempolicy2(&args, sizeof(args), 0, 0));
	EXPECT_EQ(ENOSYS, errno);
	errno = 0;
	EXPECT_EQ(-1, sys_mbind2(NULL, 0, &args, sizeof(args), 0));
	EXPECT_EQ(ENOSYS, errno);
	errno = 0;
	EXPECT_EQ(-1, sys_process_mpol_reweight(0, NULL, 0, 0));
	EXPECT_EQ(ENOSYS, errno);
}

/* The rebalance counters exist only with CONFIG_NUMA_POLICY_WEIGHTS. */
TEST(vmstat_has_no_rebalance_counters)
{
	EXPECT_EQ(-1, wi_vmstat("mpol_rebalance_scanned"));
	EXPECT_EQ(-1, wi_vmstat("mpol_rebalance_moved"));
	EXPECT_EQ(-1, wi_vmstat("mpol_rebalance_failed"));
}

TEST(numa_maps_has_no_il_weights)
{
	char line[1024];
	FILE *f = fopen("/proc/self/numa_maps", "r");

	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		EXPECT_EQ(NULL, strstr(line, "il_weights")) TH_LOG("%s", line);
	fclose(f);
}

TEST_HARNESS_MAIN
