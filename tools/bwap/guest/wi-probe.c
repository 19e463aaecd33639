// SPDX-License-Identifier: GPL-2.0
/*
 * wi-probe: run under 'bwapctl run' in the guest.  It checks what it was
 * started with, from the inside:
 *   - get_mempolicy2() reads back MPOL_WEIGHTED_INTERLEAVE over exactly the
 *     nodes with a non-zero expected weight, with those own weights (not
 *     MPOL_ARGS_GLOBAL_WEIGHTS);
 *   - its CPU mask is exactly the CPUs of the worker nodes;
 *   - N freshly faulted pages sit on the nodes in exactly the weights'
 *     proportions (move_pages query).  The task policy hands out pages in a
 *     weighted round robin of period sum(w), so any run of N = k * sum(w)
 *     consecutive faults puts exactly k * w[i] pages on node i.
 * Prints "# " diagnostics and exits 0 only if every check holds.
 *
 * Usage: wi-probe --pages N --workers SET --expect W0,W1,...
 * Raw syscalls with the ABI from ../lib/mempolicy2.h; built static for
 * the busybox guest.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "../lib/mempolicy2.h"

#define MAX_NODES 64
#define MAXNODE (MAX_NODES + 1)
static int failures;

static void check(int ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	printf("# %s: ", ok ? "pass" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	failures += !ok;
}

static uint64_t parse_set(const char *s)
{
	uint64_t set = 0;

	while (*s) {
		char *end;
		long lo = strtol(s, &end, 10), hi = lo;

		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		for (; lo <= hi && lo < MAX_NODES; lo++)
			set |= 1ULL << lo;
		s = *end == ',' ? end + 1 : end;
		if (end == s && *s)
			break;
	}
	return set;
}

static int node_cpus(int node, cpu_set_t *set)
{
	char path[128], buf[1024], *p = buf;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", node);
	f = fopen(path, "r");
	if (!f || !fgets(buf, sizeof(buf), f)) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	while (*p && *p != '\n') {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;

		if (end == p)
			break;
		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		for (; lo <= hi; lo++)
			CPU_SET(lo, set);
		p = *end == ',' ? end + 1 : end;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned char expect[MAXNODE] = { 0 }, got_w[MAXNODE];
	unsigned long mask[2] = { 0 };
	long pages = 0, sum = 0, counts[MAX_NODES] = { 0 };
	uint64_t workers = 0, expect_nodes = 0;
	struct mpol_args args;
	cpu_set_t want, have;
	size_t psz = getpagesize();
	int nr_expect = 0, mode_ok;
	void **addrs;
	int *status;
	char *buf;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--pages")) {
			pages = atol(argv[i + 1]);
		} else if (!strcmp(argv[i], "--workers")) {
			workers = parse_set(argv[i + 1]);
		} else if (!strcmp(argv[i], "--expect")) {
			char *p = argv[i + 1];

			while (*p && nr_expect < MAX_NODES) {
				expect[nr_expect] = (unsigned char)strtol(p, &p, 10);
				if (expect[nr_expect])
					expect_nodes |= 1ULL << nr_expect;
				sum += expect[nr_expect++];
				if (*p == ',')
					p++;
			}
		}
	}
	if (pages <= 0 || !workers || !sum || pages % sum) {
		fprintf(stderr, "usage: wi-probe --pages N --workers SET --expect W0,W1,...\n"
				"(N must be a multiple of the sum of the weights)\n");
		return 2;
	}

	/* 1. the policy, read back */
	memset(&args, 0, sizeof(args));
	memset(got_w, 0xee, sizeof(got_w));
	args.pol_maxnodes = MAXNODE;
	args.pol_nodes = (uintptr_t)mask;
	args.il_weights = (uintptr_t)got_w;
	if (syscall(__NR_get_mempolicy2, &args, sizeof(args), 0UL, 0)) {
		check(0, "get_mempolicy2: %s", strerror(errno));
		return 1;
	}
	mode_ok = args.mode == BWAP_MPOL_WEIGHTED_INTERLEAVE;
	check(mode_ok, "get_mempolicy2: mode %u (MPOL_WEIGHTED_INTERLEAVE = 6)", args.mode);
	check(mask[0] == expect_nodes, "get_mempolicy2: nodemask 0x%lx, expected 0x%llx", mask[0],
	      (unsigned long long)expect_nodes);
	/* equal weights could be the global table's: the flag says whose they are */
	check(!(args.flags & MPOL_ARGS_GLOBAL_WEIGHTS),
	      "get_mempolicy2: weights of its own (flags 0x%llx, MPOL_ARGS_GLOBAL_WEIGHTS clear)",
	      (unsigned long long)args.flags);
	for (int n = 0; n < nr_expect; n++)
		if (expect[n])
			check(got_w[n] == expect[n], "get_mempolicy2: own weight of node %d is %u, expected %u", n,
			      got_w[n], expect[n]);

	/* 2. the CPU mask */
	CPU_ZERO(&want);
	for (int n = 0; n < MAX_NODES; n++)
		if (workers & (1ULL << n))
			node_cpus(n, &want);
	CPU_ZERO(&have);
	sched_getaffinity(0, sizeof(have), &have);
	check(CPU_EQUAL(&want, &have), "affinity: %d CPUs, exactly those of the worker nodes (%d)",
	      CPU_COUNT(&have), CPU_COUNT(&want));

	/* 3. the pages.  Build the page tables first so later faults allocate data pages only. */
	buf = mmap(NULL, pages * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	addrs = calloc(pages, sizeof(*addrs));
	status = calloc(pages, sizeof(*status));
	if (buf == MAP_FAILED || !addrs || !status) {
		check(0, "cannot map %ld pages", pages);
		return 1;
	}
	madvise(buf, pages * psz, MADV_NOHUGEPAGE);
	for (long i = 0; i < pages; i++)
		buf[i * psz] = 1;
	madvise(buf, pages * psz, MADV_DONTNEED);
	for (long i = 0; i < pages; i++) {
		buf[i * psz] = 2;
		addrs[i] = buf + i * psz;
	}
	if (syscall(SYS_move_pages, 0, pages, addrs, NULL, status, 0)) {
		check(0, "move_pages: %s", strerror(errno));
		return 1;
	}
	for (long i = 0; i < pages; i++)
		if (status[i] >= 0 && status[i] < MAX_NODES)
			counts[status[i]]++;
	printf("# pages per node:");
	for (int n = 0; n < nr_expect; n++)
		printf(" N%d=%ld", n, counts[n]);
	printf("  (expected");
	for (int n = 0; n < nr_expect; n++)
		printf(" N%d=%ld", n, pages / sum * expect[n]);
	printf(")\n");
	for (int n = 0; n < MAX_NODES; n++) {
		long want_n = n < nr_expect ? pages / sum * expect[n] : 0;

		if (counts[n] || want_n)
			check(counts[n] == want_n, "node %d holds %ld of %ld pages, expected exactly %ld", n,
			      counts[n], pages, want_n);
	}
	printf("wi-probe: %s\n", failures ? "FAIL" : "PASS");
	return failures ? 1 : 0;
}
