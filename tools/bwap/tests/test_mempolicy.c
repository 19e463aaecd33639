// SPDX-License-Identifier: GPL-2.0
/*
 * What lib/mempolicy.c hands the kernel, without a BWAP kernel: this
 * program defines syscall(), which the library's calls then reach, records
 * the arguments of the mempolicy2 calls and answers them itself; every
 * other call goes on to libc's.  Checked exactly: process_mpol_reweight()
 * gets a struct mpol_reweight_args of MPOL_REWEIGHT_ARGS_SIZE_VER0 (16)
 * bytes with pol_maxnodes = BWAP_MAX_NODES + 1 and the weights of the
 * nodes in the set (0 elsewhere), and the caller's MPOL_REWEIGHT_* flags
 * unchanged; set_mempolicy2() and mbind2() a 40-byte struct mpol_args with
 * flags 0 (weights of its own, no home node).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/syscall.h>

#include "tap.h"
#include "bwap.h"

static long seen_nr, seen_pidfd;
static size_t seen_size;
static unsigned long seen_flags;
static unsigned char seen_struct[64];
static unsigned char seen_w[BWAP_MAX_NODES + 1];
static unsigned long seen_mask;

long syscall(long nr, ...)
{
	long a[6];
	va_list ap;

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == __NR_process_mpol_reweight) {
		const struct mpol_reweight_args *args = (const void *)a[1];

		seen_nr = nr;
		seen_pidfd = a[0];
		seen_size = a[2];
		seen_flags = a[3];
		memcpy(seen_struct, args, seen_size < sizeof(seen_struct) ? seen_size : sizeof(seen_struct));
		if (args->pol_maxnodes == BWAP_MAX_NODES + 1)
			memcpy(seen_w, (const void *)(uintptr_t)args->il_weights, sizeof(seen_w));
		return 7;	/* "pages not moved", passed back as is */
	}
	if (nr == __NR_set_mempolicy2 || nr == __NR_mbind2) {
		int mb = nr == __NR_mbind2;
		const struct mpol_args *args = (const void *)a[mb ? 2 : 0];

		seen_nr = nr;
		seen_size = a[mb ? 3 : 1];
		seen_flags = a[mb ? 4 : 2];
		memcpy(seen_struct, args, seen_size < sizeof(seen_struct) ? seen_size : sizeof(seen_struct));
		if (args->pol_maxnodes == BWAP_MAX_NODES + 1) {
			memcpy(seen_w, (const void *)(uintptr_t)args->il_weights, sizeof(seen_w));
			seen_mask = *(const unsigned long *)(uintptr_t)args->pol_nodes;
		}
		return 0;
	}
	{
		long (*next)(long, ...) = (long (*)(long, ...))dlsym(RTLD_NEXT, "syscall");

		if (!next) {
			errno = ENOSYS;
			return -1;
		}
		return next(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	}
}

static void weights(struct bwap_weights *w)
{
	memset(w, 0, sizeof(*w));
	w->nr_nodes = 4;
	w->nodes = BWAP_NODE_BIT(0) | BWAP_NODE_BIT(1) | BWAP_NODE_BIT(3);
	w->w[0] = 20;
	w->w[1] = 10;
	w->w[2] = 8;	/* not in the set: must reach the kernel as 0 */
	w->w[3] = 5;
}

int main(void)
{
	const unsigned int flags[] = {
		0, MPOL_REWEIGHT_REBALANCE, MPOL_REWEIGHT_REBALANCE | MPOL_REWEIGHT_GLOBAL,
		MPOL_REWEIGHT_REBALANCE | MPOL_REWEIGHT_MOVE_ALL | MPOL_REWEIGHT_GLOBAL | MPOL_REWEIGHT_SHARED,
	};
	struct mpol_reweight_args ra;
	struct mpol_args ma;
	struct bwap_weights w;
	unsigned char want[BWAP_MAX_NODES + 1] = { 20, 10, 0, 5 };
	long ret;

	CHECK(sizeof(struct mpol_args) == 40 && MPOL_ARGS_SIZE_VER0 == 40,
	      "struct mpol_args is the v5 one: 40 bytes, MPOL_ARGS_SIZE_VER0 40");
	CHECK(sizeof(struct mpol_reweight_args) == 16 && MPOL_REWEIGHT_ARGS_SIZE_VER0 == 16,
	      "struct mpol_reweight_args is 16 bytes, MPOL_REWEIGHT_ARGS_SIZE_VER0 16");
	CHECK(MPOL_ARGS_HOME_NODE == 1 && MPOL_ARGS_GLOBAL_WEIGHTS == 2 &&
	      MPOL_ARGS_REBALANCE == 4 &&
	      MPOL_REWEIGHT_REBALANCE == 1 && MPOL_REWEIGHT_MOVE_ALL == 2 &&
	      MPOL_REWEIGHT_GLOBAL == 4 && MPOL_REWEIGHT_SHARED == 8,
	      "flag values as the uapi header has them");

	weights(&w);
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		seen_nr = 0;
		memset(seen_w, 0xee, sizeof(seen_w));
		ret = bwap_process_mpol_reweight(42, &w, flags[i]);
		memcpy(&ra, seen_struct, sizeof(ra));
		CHECK(seen_nr == __NR_process_mpol_reweight && seen_pidfd == 42 && ret == 7,
		      "reweight flags 0x%x: process_mpol_reweight(pidfd 42), its return value passed back (%ld)",
		      flags[i], ret);
		CHECK(seen_size == MPOL_REWEIGHT_ARGS_SIZE_VER0 && seen_flags == flags[i],
		      "reweight flags 0x%x: size %zu, flags 0x%lx as given", flags[i], seen_size, seen_flags);
		CHECK(ra.pol_maxnodes == BWAP_MAX_NODES + 1 && !memcmp(seen_w, want, sizeof(want)),
		      "reweight flags 0x%x: pol_maxnodes %llu, weights %u,%u,%u,%u then 0 (node 2 is not in the set)",
		      flags[i], (unsigned long long)ra.pol_maxnodes, seen_w[0], seen_w[1], seen_w[2], seen_w[3]);
	}

	seen_nr = 0;
	ret = bwap_set_own_weights(&w);
	memcpy(&ma, seen_struct, sizeof(ma));
	CHECK(ret == 0 && seen_nr == __NR_set_mempolicy2 && seen_size == MPOL_ARGS_SIZE_VER0 && seen_flags == 0,
	      "set_mempolicy2: a %zu-byte struct mpol_args, call flags 0x%lx", seen_size, seen_flags);
	CHECK(ma.mode == BWAP_MPOL_WEIGHTED_INTERLEAVE && ma.mode_flags == 0 && ma.flags == 0 &&
	      ma.pol_maxnodes == BWAP_MAX_NODES + 1 && seen_mask == 0xb && !memcmp(seen_w, want, sizeof(want)),
	      "set_mempolicy2: mode 6, own weights 20,10,0,5 over nodes 0x%lx, flags 0x%llx (no global weights, no home node)",
	      seen_mask, (unsigned long long)ma.flags);

	seen_nr = 0;
	ret = bwap_mbind_own_weights((void *)0x10000, 4096, w.nodes, w.w);
	memcpy(&ma, seen_struct, sizeof(ma));
	CHECK(ret == 0 && seen_nr == __NR_mbind2 && seen_size == MPOL_ARGS_SIZE_VER0 && seen_flags == 0 &&
	      ma.flags == 0 && seen_mask == 0xb,
	      "mbind2: a %zu-byte struct mpol_args, args.flags 0x%llx, nodes 0x%lx",
	      seen_size, (unsigned long long)ma.flags, seen_mask);
	return tap_done();
}
