/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The BWAP series' user ABI: syscall numbers, struct mpol_args and the
 * flags the tools use.  Taken from the installed kernel headers when they
 * have them (a libc built against a patched kernel's uapi); otherwise the
 * one fallback copy below, laid out as Documentation/DESIGN.md fixes it.
 * Everything in tools/bwap (library, daemon, guest programs) includes this
 * file and no other definition exists.
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

/* MPOL_ARGS_SIZE_VER0 comes with the uapi struct mpol_args. */
#ifndef MPOL_ARGS_SIZE_VER0
struct mpol_args {
	uint16_t mode;
	uint16_t mode_flags;
	int32_t home_node;
	uint64_t pol_maxnodes;
	uint64_t pol_nodes;	/* user pointer to the nodemask */
	uint64_t il_weights;	/* user pointer to u8[pol_maxnodes] */
};
#define MPOL_ARGS_SIZE_VER0 32
#endif
_Static_assert(sizeof(struct mpol_args) == MPOL_ARGS_SIZE_VER0, "struct mpol_args is 32 bytes");

/*
 * An enum member in uapi headers from 6.9 on, so it cannot be tested for
 * with #ifdef: its value is part of the ABI either way.
 */
#define BWAP_MPOL_WEIGHTED_INTERLEAVE 6

#ifndef MPOL_MF_REBALANCE
#define MPOL_MF_REBALANCE (1 << 8)
#endif

#endif /* BWAP_MEMPOLICY2_H */
