// SPDX-License-Identifier: GPL-2.0
/*
 * fault-bench: page-fault cost of weighted interleave with a policy's own
 * weights, side by side with the global sysfs weights, MPOL_INTERLEAVE and
 * the default policy, in one guest.  The four run in rotating order in
 * every repetition; the report gives each one's median cost per fault and
 * the ratios between them.  Run the guest with -icount (run-vm --icount)
 * so the guest clock counts instructions and runs repeat exactly.
 *
 * The bulk allocator is measured the same way, through the debugfs knob
 * /sys/kernel/debug/mempolicy/bulk_alloc (CONFIG_NUMA_POLICY_BULK_DEBUGFS),
 * which allocates N pages in one bulk call under the writer's policy.
 */
#include <getopt.h>
#include <time.h>

#include "bulk_alloc_debugfs.h"

enum { OWN, GLOBAL, INTERLEAVE, DEFAULT, NR_POLICIES };
static const char *const names[NR_POLICIES] = {
	"weighted, own weights", "weighted, global weights",
	"MPOL_INTERLEAVE", "default (local)",
};

static int nodes[WI_MAX_NODES], nr_nodes;
static unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
static unsigned char weights[WI_MAXNODE];

static int set_policy(int which)
{
	struct mpol_args args;
	unsigned long m[WI_MAX_NODES / (8 * sizeof(long))];

	switch (which) {
	case OWN:
		wi_args(&args, m, nodes, nr_nodes, weights);
		return sys_set_mempolicy2(&args, sizeof(args), 0);
	case GLOBAL:
		return sys_set_mempolicy(MPOL_WEIGHTED_INTERLEAVE, mask, WI_MAXNODE);
	case INTERLEAVE:
		return sys_set_mempolicy(MPOL_INTERLEAVE, mask, WI_MAXNODE);
	default:
		return sys_set_mempolicy(MPOL_DEFAULT, NULL, 0);
	}
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Nanoseconds per fault for @npages faults under policy @which. */
static double measure(int which, size_t npages)
{
	char *buf = wi_map_prefaulted(npages);
	double t0, t1;

	if (!buf || set_policy(which)) {
		perror("fault-bench: setting up");
		exit(1);
	}
	t0 = now_ns();
	wi_touch_pages(buf, npages);
	t1 = now_ns();
	set_policy(DEFAULT);
	munmap(buf, npages * getpagesize());
	return (t1 - t0) / npages;
}

static int cmp_double(const void *a, const void *b);

static void report(const char *title, double (*t)[NR_POLICIES], int reps)
{
	double med[NR_POLICIES], lo[NR_POLICIES], hi[NR_POLICIES];
	int i, r;

	for (i = 0; i < NR_POLICIES; i++) {
		double v[reps];

		for (r = 0; r < reps; r++)
			v[r] = t[r][i];
		qsort(v, reps, sizeof(double), cmp_double);
		med[i] = reps % 2 ? v[reps / 2] : (v[reps / 2 - 1] + v[reps / 2]) / 2;
		lo[i] = v[0];
		hi[i] = v[reps - 1];
	}
	printf("\n%s\n", title);
	printf("  %-26s %10s %10s %10s %14s\n", "policy", "median", "min", "max",
	       "vs global wts");
	for (i = 0; i < NR_POLICIES; i++)
		printf("  %-26s %10.1f %10.1f %10.1f %13.3fx\n", names[i], med[i],
		       lo[i], hi[i], med[GLOBAL] / med[i]);
	printf("  throughput ratio own/global weights: %.3f (goal >= 0.97)\n",
	       med[GLOBAL] / med[OWN]);
	printf("  throughput ratio own weights/MPOL_INTERLEAVE: %.3f\n",
	       med[INTERLEAVE] / med[OWN]);
	printf("  throughput ratio own weights/default: %.3f\n", med[DEFAULT] / med[OWN]);
}

/* Nanoseconds per page of one bulk allocation of @npages under @which. */
static double measure_bulk(int fd, int which, size_t npages)
{
	char buf[32];
	int len = snprintf(buf, sizeof(buf), "%zu", npages);
	double t0, t1;

	if (set_policy(which)) {
		perror("fault-bench: setting policy");
		exit(1);
	}
	t0 = now_ns();
	if (write(fd, buf, len) != len) {
		perror("fault-bench: " WI_BULK_ALLOC);
		exit(1);
	}
	t1 = now_ns();
	set_policy(DEFAULT);
	return (t1 - t0) / npages;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "reps", required_argument, NULL, 'r' },
		{ "pages", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	int saved[WI_MAX_NODES], reps = 7, i, r, c;
	double (*t)[NR_POLICIES], (*tb)[NR_POLICIES];
	char title[128];
	int bulk_fd;
	size_t npages = 4000;

	while ((c = getopt_long(argc, argv, "r:p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			reps = atoi(optarg);
			break;
		case 'p':
			npages = strtoul(optarg, NULL, 0);
			break;
		default:
			printf("Usage: fault-bench [--reps N (7)] [--pages N (4000)]\n"
			       "Compares page-fault cost under four policies; needs root.\n");
			return c == 'h' ? 0 : 2;
		}
	}
	if (reps < 1 || npages < 1) {
		fprintf(stderr, "fault-bench: --reps and --pages must be positive\n");
		return 2;
	}
	nr_nodes = wi_memory_nodes(nodes, WI_MAX_NODES);
	if (nr_nodes < 2) {
		fprintf(stderr, "fault-bench: needs at least 2 memory nodes\n");
		return 1;
	}
	/* Same weights both ways: own table and global sysfs table. */
	for (i = 0; i < nr_nodes; i++) {
		weights[nodes[i]] = (unsigned char[]){ 5, 3, 1, 1 }[i % 4];
		saved[i] = wi_sysfs_weight_get(nodes[i]);
		if (wi_sysfs_weight_set(nodes[i], weights[nodes[i]])) {
			fprintf(stderr, "fault-bench: cannot set sysfs weights (root?)\n");
			return 1;
		}
		wi_nodemask_set(mask, nodes[i]);
	}
	t = calloc(reps, sizeof(*t));
	tb = calloc(reps, sizeof(*tb));
	if (!t || !tb)
		return 1;
	bulk_fd = open(WI_BULK_ALLOC, O_WRONLY);
	measure(DEFAULT, npages);	/* warm-up, not counted */
	if (bulk_fd >= 0)
		measure_bulk(bulk_fd, DEFAULT, npages);
	for (r = 0; r < reps; r++)
		for (i = 0; i < NR_POLICIES; i++) {
			int which = (r + i) % NR_POLICIES;	/* rotate order */

			t[r][which] = measure(which, npages);
			if (bulk_fd >= 0)
				tb[r][which] = measure_bulk(bulk_fd, which, npages);
		}
	for (i = 0; i < nr_nodes; i++)
		wi_sysfs_weight_set(nodes[i], saved[i]);

	printf("fault-bench: %d runs per policy, rotating order, %d nodes, weights 5,3,1,1...\n",
	       reps, nr_nodes);
	printf("guest ns (instructions when run with --icount)\n");
	snprintf(title, sizeof(title), "Page faults: ns per fault, %zu faults per run", npages);
	report(title, t, reps);
	if (bulk_fd >= 0) {
		snprintf(title, sizeof(title),
			 "Bulk allocator: ns per page, %zu pages per call", npages);
		report(title, tb, reps);
		close(bulk_fd);
	} else {
		printf("\nBulk allocator: not measured, %s is missing\n"
		       "(needs CONFIG_NUMA_POLICY_BULK_DEBUGFS and debugfs mounted)\n",
		       WI_BULK_ALLOC);
	}
	free(tb);
	free(t);
	return 0;
}
