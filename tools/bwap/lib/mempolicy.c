// SPDX-License-Identifier: GPL-2.0
/*
 * Raw NUMA syscalls, so that bwapctl needs no libnuma and links statically:
 * mbind(2), sched_setaffinity(2), and the BWAP mempolicy2 calls, whose
 * numbers and structs come from mempolicy2.h; a kernel without
 * the series answers ENOSYS.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "bwap.h"
#include "mempolicy2.h"

/* maxnode as libnuma passes it: bits in the mask plus one. */
#define MAXNODE (BWAP_MAX_NODES + 1)
#define MASK_LONGS ((MAXNODE + 63) / 64)

long bwap_sys_mbind(void *addr, unsigned long len, int mode, const unsigned long *mask,
		    unsigned long maxnode, unsigned int flags)
{
	return syscall(SYS_mbind, addr, len, mode, mask, maxnode, flags);
}

/* Weighted interleave over nodes with own weights w (indexed by node), into args. */
static void own_weights_args(struct mpol_args *args, unsigned long *mask, unsigned char *weights,
			     bwap_nodeset nodes, const unsigned char *w)
{
	for (int i = 0; i < BWAP_MAX_NODES; i++) {
		if (!bwap_nodeset_has(nodes, i))
			continue;
		mask[i / 64] |= 1UL << (i % 64);
		weights[i] = w[i];
	}
	memset(args, 0, sizeof(*args));
	args->mode = BWAP_MPOL_WEIGHTED_INTERLEAVE;
	args->home_node = -1;
	args->pol_maxnodes = MAXNODE;
	args->pol_nodes = (uintptr_t)mask;
	args->il_weights = (uintptr_t)weights;
}

long bwap_set_own_weights(const struct bwap_weights *w)
{
	unsigned long mask[MASK_LONGS] = { 0 };
	unsigned char weights[MAXNODE] = { 0 };
	struct mpol_args args;

	own_weights_args(&args, mask, weights, w->nodes & (w->nr_nodes >= 64 ? ~0ULL :
				 BWAP_NODE_BIT(w->nr_nodes) - 1), w->w);
	return syscall(__NR_set_mempolicy2, &args, sizeof(args), 0);
}

long bwap_mbind_own_weights(void *addr, unsigned long len, bwap_nodeset nodes, const unsigned char *w)
{
	unsigned long mask[MASK_LONGS] = { 0 };
	unsigned char weights[MAXNODE] = { 0 };
	struct mpol_args args;

	own_weights_args(&args, mask, weights, nodes, w);
	return syscall(__NR_mbind2, (unsigned long)addr, len, &args, sizeof(args), 0);
}

long bwap_process_mpol_reweight(int pidfd, const struct bwap_weights *w, unsigned int flags)
{
	unsigned char weights[MAXNODE] = { 0 };
	struct mpol_reweight_args args;

	for (int i = 0; i < w->nr_nodes && i < BWAP_MAX_NODES; i++)
		weights[i] = bwap_nodeset_has(w->nodes, i) ? w->w[i] : 0;
	memset(&args, 0, sizeof(args));
	args.pol_maxnodes = MAXNODE;
	args.il_weights = (uintptr_t)weights;
	return syscall(__NR_process_mpol_reweight, pidfd, &args, sizeof(args), flags);
}

long bwap_get_own_policy(int *mode, bwap_nodeset *nodes, unsigned char *weights)
{
	unsigned long mask[MASK_LONGS] = { 0 };
	struct mpol_args args;
	long ret;

	memset(&args, 0, sizeof(args));
	memset(weights, 0, MAXNODE);
	args.pol_maxnodes = MAXNODE;
	args.pol_nodes = (uintptr_t)mask;
	args.il_weights = (uintptr_t)weights;
	ret = syscall(__NR_get_mempolicy2, &args, sizeof(args), 0UL, 0);
	if (ret)
		return ret;
	*mode = args.mode;
	*nodes = mask[0];
	return 0;
}

long bwap_pages_off_node(void *buf, size_t bytes, int node)
{
	size_t psz = getpagesize(), n = bytes / psz;
	void **pages = calloc(n, sizeof(*pages));
	int *status = calloc(n, sizeof(*status));
	long off = -1;

	if (pages && status) {
		for (size_t i = 0; i < n; i++)
			pages[i] = (char *)buf + i * psz;
		if (!syscall(SYS_move_pages, 0, n, pages, NULL, status, 0)) {
			off = 0;
			for (size_t i = 0; i < n; i++)
				off += status[i] != node;
		}
	}
	free(pages);
	free(status);
	return off;
}

int bwap_pin_to_cpus(int tid, const unsigned char *cpus)
{
	cpu_set_t *set;
	size_t size = CPU_ALLOC_SIZE(BWAP_MAX_CPUS);
	int ret;

	set = CPU_ALLOC(BWAP_MAX_CPUS);
	if (!set)
		return -1;
	CPU_ZERO_S(size, set);
	for (int c = 0; c < BWAP_MAX_CPUS; c++)
		if (cpus[c])
			CPU_SET_S(c, size, set);
	ret = sched_setaffinity(tid, size, set);
	CPU_FREE(set);
	return ret;
}

enum bwap_kernel_mode bwap_kernel_mode(void)
{
	const char *wi = getenv("BWAP_SYSFS_WEIGHTS") && *getenv("BWAP_SYSFS_WEIGHTS") ?
			 getenv("BWAP_SYSFS_WEIGHTS") : BWAP_SYSFS_WEIGHTS;	/* tests point this elsewhere */

	/* tests: portable mode on a kernel that has the series too */
	if (getenv("BWAP_FORCE_PORTABLE") && *getenv("BWAP_FORCE_PORTABLE") == '1')
		return access(wi, F_OK) ? BWAP_KERNEL_STOCK : BWAP_KERNEL_STOCK_WI;
	/* NULL args, size 0: a kernel with the call says EINVAL, one without ENOSYS */
	if (syscall(__NR_get_mempolicy2, NULL, 0UL, 0UL, 0UL) < 0 && errno != ENOSYS &&
	    syscall(__NR_process_mpol_reweight, -1, NULL, 0UL, 0U) < 0 && errno != ENOSYS)
		return BWAP_KERNEL_SERIES;
	if (!access(wi, F_OK))
		return BWAP_KERNEL_STOCK_WI;
	return BWAP_KERNEL_STOCK;
}

/*
 * Whether process_mpol_reweight takes MPOL_REWEIGHT_REBALANCE, asked so
 * that nothing changes.  The call checks its flags first, then its
 * arguments (a size, pol_maxnodes and a non-zero weight for a possible
 * node), and only then the pidfd: with valid arguments (pol_maxnodes 1,
 * node 0's weight 1) and pidfd -1, a kernel that knows the flag answers
 * EBADF; the series' parts 1-2 answer EINVAL (a flag they do not know); a
 * series kernel built without CONFIG_NUMA_POLICY_REBALANCE (no
 * migration) answers EOPNOTSUPP; a kernel without the call ENOSYS.  The
 * answer is the kernel's and does not change while it runs: asked once.
 */
enum bwap_rebalance bwap_kernel_rebalance(void)
{
	static volatile int known = -1;		/* racing first askers get the same answer */
	unsigned char weight[1] = { 1 };
	struct mpol_reweight_args args;
	long ret;

	if (known >= 0)
		return known;
	memset(&args, 0, sizeof(args));
	args.pol_maxnodes = 1;
	args.il_weights = (uintptr_t)weight;
	ret = syscall(__NR_process_mpol_reweight, -1, &args, sizeof(args), MPOL_REWEIGHT_REBALANCE);
	if (ret >= 0 || errno == EBADF)
		known = BWAP_REBALANCE_KERNEL;
	else if (errno == EINVAL)
		known = BWAP_REBALANCE_UNKNOWN_FLAG;
	else if (errno == EOPNOTSUPP)
		known = BWAP_REBALANCE_NOT_BUILT;
	else
		known = BWAP_REBALANCE_NO_CALL;
	return known;
}

const char *bwap_rebalance_name(enum bwap_rebalance r)
{
	return r == BWAP_REBALANCE_KERNEL ? "kernel rebalance" :
	       r == BWAP_REBALANCE_UNKNOWN_FLAG ? "no kernel rebalance: the series' parts 1-2 "
						  "(process_mpol_reweight refuses MPOL_REWEIGHT_REBALANCE)" :
	       r == BWAP_REBALANCE_NOT_BUILT ? "no kernel rebalance: built without CONFIG_NUMA_POLICY_REBALANCE" :
	       "no process_mpol_reweight";
}

const char *bwap_kernel_mode_name(enum bwap_kernel_mode m)
{
	if (m == BWAP_KERNEL_SERIES) {
		/* a mode is always the running kernel's (bwap_kernel_mode()) */
		switch (bwap_kernel_rebalance()) {
		case BWAP_REBALANCE_UNKNOWN_FLAG:
			return "BWAP series without rebalance (parts 1-2)";
		case BWAP_REBALANCE_NOT_BUILT:
			return "BWAP series without rebalance (CONFIG_NUMA_POLICY_REBALANCE off)";
		default:
			return "BWAP series";
		}
	}
	return m == BWAP_KERNEL_STOCK_WI ? "stock with weighted interleave" : "stock";
}
