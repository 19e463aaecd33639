/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BWAP series' user ABI: syscall numbers, struct mpol_args, struct
 * mpol_reweight_args and the flags the tools use.  Taken from the installed
 * kernel headers when they have them (a libc built against a patched
 * kernel's uapi); otherwise the one fallback copy below, a copy of the
 * series' include/uapi/linux/mempolicy.h.  Everything in tools/bwap
 * (library, daemon, guest programs) includes this file and no other
 * definition exists.
 */
#ifndef BWAP_MEMPOLICY2_H
#define BWAP_MEMPOLICY2_H

#include <stdint.h>
#include <sys/syscall.h>
#include <linux/mempolicy.h>

#ifndef __NR_set_mempolicy2
#define __NR_set_mempolicy2 1000
#endif
#ifndef __NR_get_mempolicy2
#define __NR_get_mempolicy2 1001
#endif
#ifndef __NR_mbind2
#define __NR_mbind2 1002
#endif
#ifndef __NR_process_mpol_reweight
#define __NR_process_mpol_reweight 1003
#endif

/*
 * MPOL_ARGS_SIZE_VER0 comes with the uapi struct mpol_args, and
 * MPOL_REWEIGHT_ARGS_SIZE_VER0 with struct mpol_reweight_args.  Headers
 * with the first but not the second are those of a series before v5
 * (32-byte struct mpol_args, flags in mode_flags): refused, as that ABI
 * was never released and no kernel takes it any more.
 */
#ifdef MPOL_ARGS_SIZE_VER0
#ifndef MPOL_REWEIGHT_ARGS_SIZE_VER0
#error "linux/mempolicy.h has the pre-v5 mempolicy2 ABI: build against the current series' headers"
#endif
#else
struct mpol_args {
	uint16_t mode;
	uint16_t mode_flags;	/* MPOL_F_STATIC_NODES, _RELATIVE_NODES, _NUMA_BALANCING only */
	int32_t home_node;	/* read only with MPOL_ARGS_HOME_NODE */
	uint64_t pol_maxnodes;
	uint64_t pol_nodes __attribute__((aligned(8)));		/* user pointer to the nodemask */
	uint64_t il_weights __attribute__((aligned(8)));	/* user pointer to u8[pol_maxnodes] */
	uint64_t flags;		/* MPOL_ARGS_* */
};
#define MPOL_ARGS_SIZE_VER0 40

#define MPOL_ARGS_HOME_NODE		(1ULL << 0)
#define MPOL_ARGS_GLOBAL_WEIGHTS	(1ULL << 1)
#define MPOL_ARGS_REBALANCE		(1ULL << 2)	/* mbind2() only */

struct mpol_reweight_args {
	uint64_t pol_maxnodes;	/* bytes in il_weights, counted as in struct mpol_args */
	uint64_t il_weights __attribute__((aligned(8)));	/* user pointer to u8[pol_maxnodes] */
};
#define MPOL_REWEIGHT_ARGS_SIZE_VER0 16

/* process_mpol_reweight()'s flags: its own, not MPOL_MF_* */
#define MPOL_REWEIGHT_REBALANCE	(1U << 0)
#define MPOL_REWEIGHT_MOVE_ALL	(1U << 1)
#define MPOL_REWEIGHT_GLOBAL	(1U << 2)
#define MPOL_REWEIGHT_SHARED	(1U << 3)
#endif
_Static_assert(sizeof(struct mpol_args) == MPOL_ARGS_SIZE_VER0, "struct mpol_args is 40 bytes");
_Static_assert(MPOL_ARGS_SIZE_VER0 == 40, "the v5 struct mpol_args");
_Static_assert(sizeof(struct mpol_reweight_args) == MPOL_REWEIGHT_ARGS_SIZE_VER0,
	       "struct mpol_reweight_args is 16 bytes");

/*
 * An enum member in uapi headers from 6.9 on, so it cannot be tested for
 * with #ifdef: its value is part of the ABI either way.
 */
#define BWAP_MPOL_WEIGHTED_INTERLEAVE 6

/*
 * Headers with struct mpol_args but no MPOL_ARGS_REBALANCE are those of a
 * series that had mbind2()'s rebalance as an MPOL_MF_* flag bit, never
 * released either.
 */
#ifndef MPOL_ARGS_REBALANCE
#error "linux/mempolicy.h has mbind2's rebalance as an MPOL_MF_* bit: build against the current series' headers"
#endif

#endif /* BWAP_MEMPOLICY2_H */
