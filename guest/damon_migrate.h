/* SPDX-License-Identifier: GPL-2.0 */
/*
 * damon_migrate.h: one DAMON kdamond driven through
 * /sys/kernel/mm/damon/admin from C (the busybox guests have no Python, so
 * no damo): a "vaddr" context on one process, one monitored region, and
 * one DAMOS scheme migrate_hot (or migrate_cold) with weighted
 * destinations (Linux 6.17+, schemes/0/dests/).  Used by rebalance-bench
 * --peers to set DAMON's weighted migration beside the kernel's rebalance
 * (process_mpol_reweight() with MPOL_REWEIGHT_REBALANCE).
 *
 * What DAMON does with the scheme (7.3, mm/damon/vaddr.c
 * damos_va_migrate_dests_add()): at each apply interval it walks every
 * region the access pattern admits and, for each folio, takes
 * ilx = (vma pgoff + offset in the VMA) >> folio order, picks the
 * destination by ilx % (sum of the weights) walked over the dests in
 * order -- the weighted-interleave pattern of the new weights -- and
 * migrates the folio there if it is elsewhere (MIGRATE_ASYNC, GFP_NOWAIT,
 * folios it cannot isolate from the LRU are left for the next interval).
 * So it moves every page whose pattern node changed, not the minimum: it
 * reaches the layout a fresh fault under the new weights gives, not the
 * fewest moves to per-node shares.  It never changes the memory policy, so
 * a user writes the new weights to the global table too (which a range
 * under MPOL_WEIGHTED_INTERLEAVE follows), and keeps the kdamond running,
 * sending each new set of weights with damon_commit_weights().
 * migrate_hot and migrate_cold differ only in how a quota ranks regions;
 * with no quota and an access pattern that admits every region, both move
 * every page regardless of access, which is what a reweight needs.
 */
#ifndef DAMON_MIGRATE_H
#define DAMON_MIGRATE_H

#include <stdarg.h>

#define DAMON_ADMIN "/sys/kernel/mm/damon/admin"
#define DAMON_KDAMOND DAMON_ADMIN "/kdamonds/0"
#define DAMON_CTX DAMON_KDAMOND "/contexts/0"
#define DAMON_SCHEME DAMON_CTX "/schemes/0"
/* the pads' addresses: above any user address, so never a page */
#define DAMON_PAD_BASE (1UL << 63)

/*
 * The tuning, for the fastest convergence DAMON allows on one process:
 *
 * sample_us, aggr_us: the sampling and aggregation intervals.  A scheme
 *	applies once per aggregation interval (apply_interval_us 0 = the
 *	aggregation interval), the first time after one full interval, so
 *	the interval bounds how soon migration starts and how soon a folio
 *	that could not be isolated is retried.  1 ms each: the migration of
 *	one 16 MiB range takes far longer than that in the guest, so a
 *	shorter interval would not converge sooner, only walk the range more
 *	often once it has converged (each apply walks every page table entry
 *	of the range again while the kdamond is on).
 * update_us: the vaddr ops update rebuilds the monitored regions from the
 *	process's mappings ("three regions"), throwing away the region set
 *	below; 1000 s, so it never runs in a measurement and DAMON looks at
 *	the benchmark's range only, as mbind2() and process_mpol_reweight()
 *	do (without it DAMON would also move the process's heap and stack).
 * min/max_nr_regions: 3, the smallest DAMON accepts.  Regions only steer
 *	access sampling, which this scheme does not use; fewer regions, less
 *	sampling work.
 * regions: the range, whole, and two pads of its size far above any user
 *	address (with a gap, so never merged): DAMON splits a region larger
 *	than the total over min_nr_regions, and the pads keep the range one
 *	region.  Both modes of the dests work per region: the shares mode
 *	reaches each region's shares (split in three, a THP range ends up to
 *	half a THP per node and region off the range's), and the interleave
 *	mode gives a THP two regions share two nodes on 7.3 (the first
 *	patch of patches/damon-fixes-7.3 fixes that).  This is a workaround
 *	that depends on DAMON's internals; --damon-default-regions
 *	(default_regions) runs without it.
 * access pattern: every size, every access count, every age, so every
 *	region qualifies at the first apply whatever its accesses.
 * quotas: none (ms 0, bytes 0): migrate everything in one apply.
 * watermarks: metric none, always active.
 */
struct damon_migrate {
	int pid;			/* the target process */
	unsigned long start, end;	/* the one region, [start, end) */
	int nr_dests;
	const int *node;		/* destination node ids */
	const unsigned char *weight;	/* their weights */
	const char *action;		/* "migrate_hot" or "migrate_cold" */
	unsigned long sample_us, aggr_us, update_us;
	/*
	 * dests/mode (patches/damon-7.3): "shares" for the fewest moves to
	 * the weights' per-node shares; NULL leaves DAMON's default, the
	 * interleave layout, and works on kernels without the file.
	 */
	const char *dests_mode;
	/*
	 * 1: DAMON's default region settings, as users leave them: the range
	 * as one region, no pads, min/max_nr_regions not written (10 and
	 * 1000), so DAMON splits and merges the range at will (issue 50: the
	 * shares mode measured without the workaround above).
	 */
	int default_regions;
};

static int damon_writef(const char *path, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Write one DAMON sysfs file; on failure say which and why, return -1. */
static int damon_writef(const char *path, const char *fmt, ...)
{
	char buf[64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (wi_write_file(path, buf)) {
		fprintf(stderr, "damon: writing '%s' to %s: %s\n", buf, path, strerror(errno));
		return -1;
	}
	return 0;
}

static int damon_available(void)
{
	return access(DAMON_ADMIN "/kdamonds/nr_kdamonds", W_OK) == 0;
}

/*
 * Build kdamond 0 from scratch (writing nr_kdamonds drops any previous
 * tree) with the scheme of @d.  Returns 0 or -1.
 */
static int damon_setup(const struct damon_migrate *d)
{
	char path[160];
	int i;

	if (damon_writef(DAMON_ADMIN "/kdamonds/nr_kdamonds", "0") ||
	    damon_writef(DAMON_ADMIN "/kdamonds/nr_kdamonds", "1") ||
	    damon_writef(DAMON_KDAMOND "/contexts/nr_contexts", "1") ||
	    damon_writef(DAMON_CTX "/operations", "vaddr") ||
	    damon_writef(DAMON_CTX "/monitoring_attrs/intervals/sample_us", "%lu", d->sample_us) ||
	    damon_writef(DAMON_CTX "/monitoring_attrs/intervals/aggr_us", "%lu", d->aggr_us) ||
	    damon_writef(DAMON_CTX "/monitoring_attrs/intervals/update_us", "%lu", d->update_us) ||
	    (!d->default_regions &&
	     (damon_writef(DAMON_CTX "/monitoring_attrs/nr_regions/min", "3") ||
	      damon_writef(DAMON_CTX "/monitoring_attrs/nr_regions/max", "3"))) ||
	    damon_writef(DAMON_CTX "/targets/nr_targets", "1") ||
	    damon_writef(DAMON_CTX "/targets/0/pid_target", "%d", d->pid) ||
	    damon_writef(DAMON_CTX "/targets/0/regions/nr_regions", "%d", d->default_regions ? 1 : 3) ||
	    damon_writef(DAMON_CTX "/targets/0/regions/0/start", "%lu", d->start) ||
	    damon_writef(DAMON_CTX "/targets/0/regions/0/end", "%lu", d->end) ||
	    (!d->default_regions &&
	     (damon_writef(DAMON_CTX "/targets/0/regions/1/start", "%lu", DAMON_PAD_BASE) ||
	      damon_writef(DAMON_CTX "/targets/0/regions/1/end", "%lu", DAMON_PAD_BASE + (d->end - d->start)) ||
	      damon_writef(DAMON_CTX "/targets/0/regions/2/start", "%lu", DAMON_PAD_BASE + 2 * (d->end - d->start)) ||
	      damon_writef(DAMON_CTX "/targets/0/regions/2/end", "%lu", DAMON_PAD_BASE + 3 * (d->end - d->start)))) ||
	    damon_writef(DAMON_CTX "/schemes/nr_schemes", "1") ||
	    damon_writef(DAMON_SCHEME "/action", "%s", d->action) ||
	    damon_writef(DAMON_SCHEME "/apply_interval_us", "0") ||
	    damon_writef(DAMON_SCHEME "/access_pattern/sz/min", "0") ||
	    damon_writef(DAMON_SCHEME "/access_pattern/sz/max", "%lu", ~0UL) ||
	    damon_writef(DAMON_SCHEME "/access_pattern/nr_accesses/min", "0") ||
	    damon_writef(DAMON_SCHEME "/access_pattern/nr_accesses/max", "%u", ~0U) ||
	    damon_writef(DAMON_SCHEME "/access_pattern/age/min", "0") ||
	    damon_writef(DAMON_SCHEME "/access_pattern/age/max", "%u", ~0U) ||
	    damon_writef(DAMON_SCHEME "/quotas/ms", "0") ||
	    damon_writef(DAMON_SCHEME "/quotas/bytes", "0") ||
	    damon_writef(DAMON_SCHEME "/watermarks/metric", "none") ||
	    damon_writef(DAMON_SCHEME "/dests/nr_dests", "%d", d->nr_dests) ||
	    (d->dests_mode && damon_writef(DAMON_SCHEME "/dests/mode", "%s", d->dests_mode)))
		return -1;
	for (i = 0; i < d->nr_dests; i++) {
		snprintf(path, sizeof(path), DAMON_SCHEME "/dests/%d/id", i);
		if (damon_writef(path, "%d", d->node[i]))
			return -1;
		snprintf(path, sizeof(path), DAMON_SCHEME "/dests/%d/weight", i);
		if (damon_writef(path, "%u", d->weight[i]))
			return -1;
	}
	return 0;
}

/*
 * Has this kernel the dests mode file (patches/damon-7.3)?  A scheme is
 * built to see, and the tree is dropped again.  1 or 0.
 */
static int damon_dests_mode_available(void)
{
	int yes;

	if (damon_writef(DAMON_ADMIN "/kdamonds/nr_kdamonds", "1") ||
	    damon_writef(DAMON_KDAMOND "/contexts/nr_contexts", "1") ||
	    damon_writef(DAMON_CTX "/schemes/nr_schemes", "1"))
		return 0;
	yes = access(DAMON_SCHEME "/dests/mode", W_OK) == 0;
	damon_writef(DAMON_ADMIN "/kdamonds/nr_kdamonds", "0");
	return yes;
}

static int damon_off(void);

/* A program that exits while the kdamond runs turns it off first. */
static void damon_off_at_exit(void)
{
	if (wi_read_long(DAMON_KDAMOND "/pid") > 0)
		damon_off();
}

/* Start kdamond 0; returns its pid, or -1. */
static int damon_on(void)
{
	static int registered;
	long pid;

	if (!registered && !atexit(damon_off_at_exit))
		registered = 1;
	if (damon_writef(DAMON_KDAMOND "/state", "on"))
		return -1;
	pid = wi_read_long(DAMON_KDAMOND "/pid");
	if (pid <= 0) {
		fprintf(stderr, "damon: kdamond 0 has no pid after 'on'\n");
		return -1;
	}
	return (int)pid;
}

static int damon_off(void)
{
	return damon_writef(DAMON_KDAMOND "/state", "off");
}

/*
 * New weights for the running kdamond's dests (the same nodes, in the same
 * order), then "commit": the write returns once the kdamond has taken the
 * new parameters (damon_call() waits for it), so no polling is needed.
 */
static int damon_commit_weights(int nr_dests, const unsigned char *weight)
{
	char path[160];
	int i;

	for (i = 0; i < nr_dests; i++) {
		snprintf(path, sizeof(path), DAMON_SCHEME "/dests/%d/weight", i);
		if (damon_writef(path, "%u", weight[i]))
			return -1;
	}
	return damon_writef(DAMON_KDAMOND "/state", "commit");
}

/*
 * The scheme's cumulative stats (schemes/0/stats/, refreshed by
 * "update_schemes_stats"): bytes of regions the action was tried on (the
 * range once per apply) and bytes it applied to (migrated).  0 or -1.
 */
static int damon_scheme_stats(long *sz_tried, long *sz_applied)
{
	if (damon_writef(DAMON_KDAMOND "/state", "update_schemes_stats"))
		return -1;
	*sz_tried = wi_read_long(DAMON_SCHEME "/stats/sz_tried");
	*sz_applied = wi_read_long(DAMON_SCHEME "/stats/sz_applied");
	return *sz_tried < 0 || *sz_applied < 0 ? -1 : 0;
}

/*
 * CPU time of a task in ns: se.sum_exec_runtime from /proc/PID/sched
 * (ms with six decimals there).  Under run-vm --icount the guest clock
 * counts instructions, so this is the instructions the task ran.
 * Returns -1 if the task is gone.
 */
static long long task_cpu_ns(int pid)
{
	char path[64], line[256];
	long long ms, frac;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/sched", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *colon = strchr(line, ':');

		if (!strstr(line, "se.sum_exec_runtime") || !colon)
			continue;
		fclose(f);
		if (sscanf(colon + 1, " %lld.%lld", &ms, &frac) != 2)
			return -1;
		return ms * 1000000 + frac;
	}
	fclose(f);
	return -1;
}

#endif /* DAMON_MIGRATE_H */
