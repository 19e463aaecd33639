// SPDX-License-Identifier: GPL-2.0
/*
 * wi-demo: show weighted interleave at work in a guest.  Sets the global
 * weighted-interleave weights, faults a buffer under MPOL_WEIGHTED_INTERLEAVE
 * (as a task policy and as a VMA policy), and prints each node's target
 * share next to the pages it actually got.  Then the BWAP additions: weights
 * owned by the process, and a reweight that moves the fewest pages.
 * Restores the global weights on exit.
 */
#include <getopt.h>
#include <limits.h>

#include "numa_util.h"
#include "mpol_reweight.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: wi-demo [--weights W0,W1,...] [--pages N]\n"
		"\n"
		"Sets /sys/kernel/mm/mempolicy/weighted_interleave/nodeN to the given\n"
		"weights (default 4,2,1,1 repeated), faults N pages (default: 100\n"
		"rounds of the weights) under MPOL_WEIGHTED_INTERLEAVE, and prints\n"
		"target against measured pages per node; then does the same with\n"
		"weights of the process's own (set_mempolicy2, 5,3,1,1...), leaving\n"
		"the global table alone; last, faults pages at 1 per node and has the\n"
		"kernel rebalance them to 5,3,1,1... (process_mpol_reweight), showing\n"
		"the pages moved against the minimum.  Needs root.\n");
}

static int parse_weights(const char *s, int *w, int max)
{
	int n = 0;

	while (*s && n < max) {
		char *end;
		long v = strtol(s, &end, 10);

		if (end == s || v < 1 || v > 255) {
			fprintf(stderr, "wi-demo: weight '%s' is not 1..255\n", s);
			return -1;
		}
		w[n++] = v;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',') {
			fprintf(stderr, "wi-demo: bad weight list near '%s'\n", end);
			return -1;
		}
	}
	return n;
}

/* Print one placement table; returns 1 if every node got its exact share. */
static int show(const char *what, const int *nodes, const int *w, int n,
		const long *counts, long npages)
{
	long sum = 0;
	int i, exact = 1;

	for (i = 0; i < n; i++)
		sum += w[i];
	printf("\n%s: %ld pages\n", what, npages);
	printf("  node  weight  target share  target pages  measured pages\n");
	for (i = 0; i < n; i++) {
		long target = npages * w[i] / sum;	/* exact: npages is a multiple of sum */
		long got = counts[nodes[i]];

		exact &= got == target;
		printf("  %4d  %6d  %11.1f%%  %12ld  %14ld  %s\n", nodes[i], w[i],
		       100.0 * w[i] / sum, target, got, got == target ? "exact" : "OFF");
	}
	return exact;
}

/*
 * BWAP rebalance: fault @npages under own weights 1 per node (mbind2), then
 * reweight the whole process to @ow with MPOL_REWEIGHT_REBALANCE and show
 * the placement and the pages the kernel moved against the minimum.  The
 * range has weights of its own, which every reweight changes: no
 * MPOL_REWEIGHT_GLOBAL (the demo's task policy is the default by then) and
 * no MPOL_REWEIGHT_SHARED (the buffer is private).
 */
static int show_rebalance(const int *nodes, const int *ow, int n, long npages)
{
	unsigned char flat[WI_MAXNODE] = { 0 }, neww[WI_MAXNODE] = { 0 };
	unsigned long m[WI_MAX_NODES / (8 * sizeof(long))];
	long counts[WI_MAX_NODES], before, moved, min = 0, osum = 0, left;
	struct mpol_args args;
	int i, pidfd, ok;
	char *buf;

	for (i = 0; i < n; i++) {
		flat[nodes[i]] = 1;
		neww[nodes[i]] = ow[i];
		osum += ow[i];
	}
	wi_args(&args, m, nodes, n, flat);
	buf = mmap(NULL, npages * getpagesize(), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 0;
	madvise(buf, npages * getpagesize(), MADV_NOHUGEPAGE);
	pidfd = sys_pidfd_open(getpid());
	if (pidfd < 0 ||
	    sys_mbind2(buf, npages * getpagesize(), &args, sizeof(args), 0)) {
		printf("\nRebalance: mbind2/pidfd_open unavailable (%s)\n", strerror(errno));
		return 1;
	}
	wi_touch_pages(buf, npages);
	if (wi_count_pages_per_node(buf, npages, counts))
		return 0;
	for (i = 0; i < n; i++) {
		long target = npages * ow[i] / osum;

		if (counts[nodes[i]] > target)
			min += counts[nodes[i]] - target;
	}
	before = wi_vmstat("mpol_rebalance_moved");
	left = mpol_reweight(pidfd, neww, WI_MAXNODE, MPOL_REWEIGHT_REBALANCE);
	if (left < 0) {
		printf("\nRebalance: process_mpol_reweight unavailable (%s)\n", strerror(errno));
		return 1;
	}
	moved = wi_vmstat("mpol_rebalance_moved") - before;
	if (wi_count_pages_per_node(buf, npages, counts))
		return 0;
	ok = show("Rebalanced from 1 per node by process_mpol_reweight(MPOL_REWEIGHT_REBALANCE), BWAP",
		  nodes, ow, n, counts, npages);
	printf("  pages moved by the kernel: %ld (the minimum is %ld), not moved: %ld\n",
	       moved, min, left);
	munmap(buf, npages * getpagesize());
	close(pidfd);
	return ok && moved == min && !left;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "weights", required_argument, NULL, 'w' },
		{ "pages", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	int nodes[WI_MAX_NODES], w[WI_MAX_NODES], saved[WI_MAX_NODES];
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long)) + 1] = { 0 };
	long counts[WI_MAX_NODES], npages = 0, sum = 0;
	int n, nw = 0, i, c, ok = 1;
	char *buf;

	while ((c = getopt_long(argc, argv, "w:p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'w':
			nw = parse_weights(optarg, w, WI_MAX_NODES);
			if (nw < 0)
				return 2;
			break;
		case 'p':
			npages = atol(optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	n = wi_memory_nodes(nodes, WI_MAX_NODES);
	if (n < 1) {
		fprintf(stderr, "wi-demo: no memory nodes in /sys/devices/system/node\n");
		return 1;
	}
	for (i = nw; i < n; i++)
		w[i] = (int[]){ 4, 2, 1, 1 }[i % 4];
	if (nw > n) {
		fprintf(stderr, "wi-demo: %d weights given but only %d memory nodes\n", nw, n);
		return 2;
	}
	for (i = 0; i < n; i++)
		sum += w[i];
	if (!npages)
		npages = 100 * sum;
	if (npages % sum) {
		fprintf(stderr, "wi-demo: --pages %ld is not a multiple of the weight sum %ld\n",
			npages, sum);
		return 2;
	}

	printf("Weighted interleave over %d nodes, global sysfs weights:", n);
	for (i = 0; i < n; i++) {
		saved[i] = wi_sysfs_weight_get(nodes[i]);
		if (saved[i] < 1 || wi_sysfs_weight_set(nodes[i], w[i])) {
			fprintf(stderr, "\nwi-demo: cannot set %s/node%d (are you root?)\n",
				WI_WEIGHT_DIR, nodes[i]);
			return 1;
		}
		wi_nodemask_set(mask, nodes[i]);
		printf(" node%d=%d", nodes[i], w[i]);
	}
	printf("\n");

	buf = wi_map_prefaulted(npages);
	if (!buf || sys_set_mempolicy(MPOL_WEIGHTED_INTERLEAVE, mask, WI_MAX_NODES + 1)) {
		perror("wi-demo: set_mempolicy(MPOL_WEIGHTED_INTERLEAVE)");
		return 1;
	}
	wi_touch_pages(buf, npages);
	sys_set_mempolicy(MPOL_DEFAULT, NULL, 0);
	if (wi_count_pages_per_node(buf, npages, counts)) {
		perror("wi-demo: move_pages");
		return 1;
	}
	ok &= show("Task policy (set_mempolicy)", nodes, w, n, counts, npages);
	munmap(buf, npages * getpagesize());

	buf = wi_map_prefaulted(npages);
	if (!buf || sys_mbind(buf, npages * getpagesize(), MPOL_WEIGHTED_INTERLEAVE,
			      mask, WI_MAX_NODES + 1, 0)) {
		perror("wi-demo: mbind(MPOL_WEIGHTED_INTERLEAVE)");
		return 1;
	}
	wi_touch_pages(buf, npages);
	if (wi_count_pages_per_node(buf, npages, counts)) {
		perror("wi-demo: move_pages");
		return 1;
	}
	ok &= show("VMA policy (mbind)", nodes, w, n, counts, npages);
	munmap(buf, npages * getpagesize());

	/* BWAP: the same process, weights of its own, global table untouched. */
	{
		unsigned char own[WI_MAXNODE] = { 0 };
		int ow[WI_MAX_NODES];
		unsigned long m[WI_MAX_NODES / (8 * sizeof(long))];
		struct mpol_args args;
		long osum = 0;

		for (i = 0; i < n; i++) {
			ow[i] = (int[]){ 5, 3, 1, 1 }[i % 4];
			own[nodes[i]] = ow[i];
			osum += ow[i];
		}
		wi_args(&args, m, nodes, n, own);
		buf = wi_map_prefaulted(100 * osum);
		if (!buf)
			return 1;
		if (sys_set_mempolicy2(&args, sizeof(args), 0)) {
			printf("\nOwn weights: set_mempolicy2 unavailable (%s)\n", strerror(errno));
		} else {
			wi_touch_pages(buf, 100 * osum);
			sys_set_mempolicy(MPOL_DEFAULT, NULL, 0);
			if (wi_count_pages_per_node(buf, 100 * osum, counts)) {
				perror("wi-demo: move_pages");
				return 1;
			}
			ok &= show("Own weights (set_mempolicy2, BWAP), global table unchanged",
				   nodes, ow, n, counts, 100 * osum);
		}
		munmap(buf, 100 * osum * getpagesize());
		ok &= show_rebalance(nodes, ow, n, 100 * osum);
	}

	for (i = 0; i < n; i++)
		wi_sysfs_weight_set(nodes[i], saved[i]);
	printf("\n%s\n", ok ? "Every node got exactly its weighted share."
			    : "Placement differs from the weighted share.");
	return ok ? 0 : 1;
}
