/* SPDX-License-Identifier: GPL-2.0 */
/*
 * process_mpol_reweight() for the guest programs, with the v5 ABI:
 *
 *	long process_mpol_reweight(int pidfd,
 *				   const struct mpol_reweight_args *args,
 *				   size_t size, unsigned int flags);
 *
 * flags are the call's own MPOL_REWEIGHT_* (REBALANCE, MOVE_ALL, GLOBAL,
 * SHARED), from the uapi header the programs are built with (KHDR).
 * Without GLOBAL the policies that follow the global weights are left
 * alone, without SHARED the shared (shmem, memfd, SysV) ones: each caller
 * says which it passes and why.
 *
 * numa_util.h, shared with the selftests, still has the pre-v5
 * sys_process_mpol_reweight(pidfd, weights, maxnode, flags); these
 * programs do not call it.
 */
#ifndef GUEST_MPOL_REWEIGHT_H
#define GUEST_MPOL_REWEIGHT_H

#include <errno.h>
#include <stddef.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/mempolicy.h>

#ifndef MPOL_REWEIGHT_ARGS_SIZE_VER0
#error "linux/mempolicy.h lacks struct mpol_reweight_args: build with KHDR of a v5 series kernel"
#endif

/* New weights @weights (@maxnode bytes, indexed by node id) for the process behind @pidfd. */
static inline long mpol_reweight(int pidfd, const unsigned char *weights,
				 unsigned long maxnode, unsigned int flags)
{
	struct mpol_reweight_args args = {
		.pol_maxnodes = maxnode,
		.il_weights = (unsigned long)weights,
	};

	return syscall(__NR_process_mpol_reweight, pidfd, &args, sizeof(args), flags);
}

/*
 * Is process_mpol_reweight() in this kernel?  Size 0 is refused with
 * EINVAL by a kernel that has it, ENOSYS by one that does not.
 */
static inline int have_mpol_reweight(void)
{
	return !(syscall(__NR_process_mpol_reweight, -1, NULL, 0UL, 0U) == -1 &&
		 errno == ENOSYS);
}

#endif /* GUEST_MPOL_REWEIGHT_H */
