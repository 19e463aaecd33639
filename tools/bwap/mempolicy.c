// SPDX-License-Identifier: GPL-2.0
/*
 * Raw NUMA syscalls, so that bwapctl needs no libnuma and links statically:
 * mbind(2), sched_setaffinity(2), and the BWAP mempolicy2 calls.  struct
 * mpol_args is spelled out here with the layout fixed in DESIGN.md, so the
 * tool builds against any libc headers; a kernel without the series answers
 * ENOSYS.
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

#define BWAP_NR_SET_MEMPOLICY2 1000
#define BWAP_NR_GET_MEMPOLICY2 1001
#define BWAP_NR_PROCESS_MPOL_REWEIGHT 1003
#define BWAP_MPOL_WEIGHTED_INTERLEAVE 6

/* The uapi struct mpol_args, 32 bytes, no holes. */
struct bwap_mpol_args {
	uint16_t mode;
	uint16_t mode_flags;
	int32_t home_node;
	uint64_t pol_maxnodes;
	uint64_t pol_nodes;
	uint64_t il_weights;
};
_Static_assert(sizeof(struct bwap_mpol_args) == 32, "struct mpol_args is 32 bytes");

/* maxnode as libnuma passes it: bits in the mask plus one. */
#define MAXNODE (BWAP_MAX_NODES + 1)
#define MASK_LONGS ((MAXNODE + 63) / 64)

long bwap_sys_mbind(void *addr, unsigned long len, int mode, const unsigned long *mask,
		    unsigned long maxnode, unsigned int flags)
{
	return syscall(SYS_mbind, addr, len, mode, mask, maxnode, flags);
}

long bwap_set_own_weights(const struct bwap_weights *w)
{
	unsigned long mask[MASK_LONGS] = { 0 };
	unsigned char weights[MAXNODE] = { 0 };
	struct bwap_mpol_args args;

	for (int i = 0; i < w->nr_nodes && i < BWAP_MAX_NODES; i++) {
		if (!bwap_nodeset_has(w->nodes, i))
			continue;
		mask[i / 64] |= 1UL << (i % 64);
		weights[i] = w->w[i];
	}
	memset(&args, 0, sizeof(args));
	args.mode = BWAP_MPOL_WEIGHTED_INTERLEAVE;
	args.home_node = -1;
	args.pol_maxnodes = MAXNODE;
	args.pol_nodes = (uintptr_t)mask;
	args.il_weights = (uintptr_t)weights;
	return syscall(BWAP_NR_SET_MEMPOLICY2, &args, sizeof(args), 0);
}

long bwap_process_mpol_reweight(int pidfd, const struct bwap_weights *w, unsigned int flags)
{
	unsigned char weights[MAXNODE] = { 0 };

	for (int i = 0; i < w->nr_nodes && i < BWAP_MAX_NODES; i++)
		weights[i] = bwap_nodeset_has(w->nodes, i) ? w->w[i] : 0;
	return syscall(BWAP_NR_PROCESS_MPOL_REWEIGHT, pidfd, weights, (unsigned long)MAXNODE, flags);
}

long bwap_get_own_policy(int *mode, bwap_nodeset *nodes, unsigned char *weights)
{
	unsigned long mask[MASK_LONGS] = { 0 };
	struct bwap_mpol_args args;
	long ret;

	memset(&args, 0, sizeof(args));
	memset(weights, 0, MAXNODE);
	args.pol_maxnodes = MAXNODE;
	args.pol_nodes = (uintptr_t)mask;
	args.il_weights = (uintptr_t)weights;
	ret = syscall(BWAP_NR_GET_MEMPOLICY2, &args, sizeof(args), 0UL, 0);
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
