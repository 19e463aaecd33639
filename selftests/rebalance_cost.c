// SPDX-License-Identifier: GPL-2.0
/*
 * rebalance_cost: what a rebalance costs against moving the same pages
 * from user space.  Not a test: a measurement, with the command that made
 * each figure of the cover letter.
 *
 * For each change of weights, OLD to NEW, a range of --pages base pages
 * is mapped, given mbind2() weighted interleave OLD over the first nodes
 * with memory, and faulted, so each node holds the pages OLD's interleave
 * gives it.  Then:
 *   rebalance   process_mpol_reweight(own pidfd, NEW, MPOL_REWEIGHT_REBALANCE):
 *               the reweight and the move of the fewest pages to NEW's shares;
 *   walk        the same call again, with nothing left to move: the walk
 *               that counts the range, and the reweight;
 *   move_pages  in a fresh range in the same start state, one
 *               move_pages(2) call that moves the very pages the rebalance
 *               moved to the very nodes it moved them to: the least any
 *               user-space method can do once it knows what to move.
 * Each is timed with CLOCK_MONOTONIC, median of --repeats.  In a guest of
 * QEMU run with -icount the guest clock counts instructions, so the
 * figures are instruction counts: they repeat exactly, and leave out
 * caches and memory.  They are then no figures of a real machine.
 *
 * Printed: pages moved and the fewest that reach NEW's shares (exit 1 if
 * they differ), the three medians, rebalance / move_pages, and what the
 * rebalance costs beyond the move_pages call, in walks (negative where the
 * rebalance costs less).
 *
 * Usage: rebalance_cost [--pages N] [--repeats R] [OLD NEW ...]
 * with OLD and NEW comma-separated weights, one per node used; 4096 pages
 * and 3 repeats unless told (as run_vmtests.sh runs it), and by
 * default 4,2,1,1 5,2,1,1 (a small step) and 4,2,1,1 1,1,2,4 (weights
 * reversed), cut to the number of nodes with memory (at least 2).
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "numa_util.h"

#define MAX_REPEATS 99

static long npages = 4096;
static int repeats = 3;
static int nodes[WI_MAX_NODES], nr;
static int pidfd;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* "4,2,1,1" into @w; the count parsed, or -1. */
static int parse_weights(const char *s, unsigned char *w)
{
	char *end;
	long v;
	int n = 0;

	while (n < WI_MAX_NODES) {
		v = strtol(s, &end, 10);
		if (end == s || v < 0 || v > 255)
			return -1;
		w[n++] = v;
		if (!*end)
			return n;
		if (*end != ',')
			return -1;
		s = end + 1;
	}
	return -1;
}

/* @w (per node used) as a table indexed by node id. */
static void by_node(const unsigned char *w, int n, unsigned char *table)
{
	int i;

	memset(table, 0, WI_MAXNODE);
	for (i = 0; i < n; i++)
		table[nodes[i]] = w[i];
}

/* A range in the start state: weighted interleave @old, every page faulted. */
static char *start_state(const unsigned char *old, int n)
{
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
	unsigned char table[WI_MAXNODE];
	size_t len = npages * getpagesize();
	struct mpol_args args;
	char *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || madvise(p, len, MADV_NOHUGEPAGE)) {
		perror("rebalance_cost: mmap");
		exit(2);
	}
	by_node(old, n, table);
	wi_args(&args, mask, nodes, n, table);
	if (sys_mbind2(p, len, &args, sizeof(args), 0)) {
		perror("rebalance_cost: mbind2");
		exit(2);
	}
	wi_touch_pages(p, npages);
	return p;
}

static long long median(long long *v, int n)
{
	int i, j;

	for (i = 1; i < n; i++)
		for (j = i; j > 0 && v[j - 1] > v[j]; j--) {
			long long t = v[j];

			v[j] = v[j - 1];
			v[j - 1] = t;
		}
	return v[n / 2];
}

/* One change: returns 0 if every repeat moved the fewest pages. */
static int run(const unsigned char *old, const unsigned char *new, int n)
{
	long long t_reb[MAX_REPEATS], t_walk[MAX_REPEATS], t_mp[MAX_REPEATS];
	long cur[WI_MAX_NODES], target[WI_MAX_NODES], fewest = 0, moved = 0;
	int *before = calloc(npages, sizeof(int));
	int *after = calloc(npages, sizeof(int));
	int *dest = calloc(npages, sizeof(int));
	int *status = calloc(npages, sizeof(int));
	void **pages = calloc(npages, sizeof(void *));
	unsigned char table[WI_MAXNODE];
	long long reb, walk, mp;
	int r, i, bad = 0;
	long k, nmove;
	char *p;

	if (!before || !after || !dest || !status || !pages) {
		fprintf(stderr, "rebalance_cost: out of memory\n");
		exit(2);
	}
	by_node(new, n, table);
	for (r = 0; r < repeats; r++) {
		p = start_state(old, n);
		if (wi_page_nodes(p, npages, before))
			exit(2);
		t_reb[r] = now_ns();
		if (sys_process_mpol_reweight(pidfd, table, WI_MAXNODE,
					      MPOL_REWEIGHT_REBALANCE) < 0) {
			perror("rebalance_cost: process_mpol_reweight");
			exit(2);
		}
		t_reb[r] = now_ns() - t_reb[r];
		t_walk[r] = now_ns();
		sys_process_mpol_reweight(pidfd, table, WI_MAXNODE,
					  MPOL_REWEIGHT_REBALANCE);
		t_walk[r] = now_ns() - t_walk[r];
		if (wi_page_nodes(p, npages, after))
			exit(2);
		munmap(p, npages * getpagesize());

		/* The fewest moves, from the start state's counts. */
		memset(cur, 0, sizeof(cur));
		for (k = 0; k < npages; k++)
			for (i = 0; i < n; i++)
				cur[i] += before[k] == nodes[i];
		wi_lr_targets(npages, cur, new, n, target);
		fewest = 0;
		for (i = 0; i < n; i++)
			fewest += cur[i] > target[i] ? cur[i] - target[i] : 0;

		/* The same pages to the same nodes, from user space. */
		p = start_state(old, n);
		if (wi_page_nodes(p, npages, status))
			exit(2);
		nmove = 0;
		for (k = 0; k < npages; k++) {
			if (status[k] != before[k]) {
				fprintf(stderr, "rebalance_cost: start states differ\n");
				exit(2);
			}
			if (after[k] != before[k]) {
				pages[nmove] = p + k * getpagesize();
				dest[nmove++] = after[k];
			}
		}
		t_mp[r] = now_ns();
		if (nmove && sys_move_pages(0, nmove, pages, dest, status, 0)) {
			perror("rebalance_cost: move_pages");
			exit(2);
		}
		t_mp[r] = now_ns() - t_mp[r];
		munmap(p, npages * getpagesize());
		moved = nmove;
		bad |= nmove != fewest;
	}
	reb = median(t_reb, repeats);
	walk = median(t_walk, repeats);
	mp = median(t_mp, repeats);
	for (i = 0; i < n; i++)
		printf("%s%d", i ? "," : "", old[i]);
	printf(" -> ");
	for (i = 0; i < n; i++)
		printf("%s%d", i ? "," : "", new[i]);
	printf("  moved %ld of %ld (fewest %ld)", moved, npages, fewest);
	printf("  rebalance %lld  walk %lld  move_pages %lld", reb, walk, mp);
	printf("  rebalance/move_pages %.2f  (rebalance - move_pages)/walk %.2f\n",
	       mp ? (double)reb / mp : 0, walk ? (double)(reb - mp) / walk : 0);
	free(before);
	free(after);
	free(dest);
	free(status);
	free(pages);
	return bad;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pages", required_argument, NULL, 'p' },
		{ "repeats", required_argument, NULL, 'r' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	static const char *const defaults[] = {
		"4,2,1,1", "5,2,1,1", "4,2,1,1", "1,1,2,4",
	};
	unsigned char old[WI_MAX_NODES], new[WI_MAX_NODES];
	const char *const *pairs = defaults;
	int c, i, n, npairs = 4, bad = 0;

	while ((c = getopt_long(argc, argv, "p:r:h", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			npages = strtol(optarg, NULL, 10);
			break;
		case 'r':
			repeats = strtol(optarg, NULL, 10);
			break;
		default:
			fprintf(stderr, "usage: %s [--pages N] [--repeats R] [OLD NEW ...]\n",
				argv[0]);
			return c == 'h' ? 0 : 2;
		}
	}
	if (npages < 1 || repeats < 1 || repeats > MAX_REPEATS ||
	    (argc - optind) % 2) {
		fprintf(stderr, "rebalance_cost: --pages >= 1, --repeats 1..%d, %s\n",
			MAX_REPEATS, "weights in OLD NEW pairs");
		return 2;
	}
	if (optind < argc) {
		pairs = (const char *const *)argv + optind;
		npairs = argc - optind;
	}
	/* 4: kselftest's skip. */
	if (!wi_have_mempolicy2()) {
		printf("rebalance_cost: no mempolicy2 syscalls: %s\n",
		       "needs CONFIG_NUMA_POLICY_WEIGHTS");
		return 4;
	}
	nr = wi_memory_nodes(nodes, WI_MAX_NODES);
	if (nr < 2) {
		printf("rebalance_cost: needs 2 nodes with memory\n");
		return 4;
	}
	pidfd = sys_pidfd_open(getpid());
	if (pidfd < 0) {
		perror("rebalance_cost: pidfd_open");
		return 2;
	}
	printf("# rebalance_cost: %ld base pages, median of %d, in ns of the clock",
	       npages, repeats);
	printf(" (instructions under QEMU -icount)\n");
	for (i = 0; i + 1 < npairs; i += 2) {
		n = parse_weights(pairs[i], old);
		if (n < 0 || parse_weights(pairs[i + 1], new) != n ||
		    (pairs != defaults && n > nr)) {
			fprintf(stderr, "rebalance_cost: bad weights %s %s %s%d%s\n",
				pairs[i], pairs[i + 1], "(up to ", nr,
				" nodes, 0..255)");
			return 2;
		}
		/* The default changes, on the nodes there are. */
		if (n > nr)
			n = nr;
		bad |= run(old, new, n);
	}
	return bad;
}
