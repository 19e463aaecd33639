// SPDX-License-Identifier: GPL-2.0
/*
 * rebalance-bench: pages moved, and time per moved page, when interleave
 * weights change, for the kernel's rebalance against two user-space ways.
 *
 * Each scenario changes the weights of one range of --pages pages from OLD
 * to NEW.  The range starts every time in the same state: mapped at the
 * same address, with an mbind2() weighted-interleave policy of weights OLD,
 * and every page faulted, so each node holds the pages OLD's interleave
 * pattern gives it.  Then one of three methods applies NEW:
 *
 *  (i) BWAP: process_mpol_reweight(own pidfd, NEW, MPOL_REWEIGHT_REBALANCE).
 *  (a) BWAP paper, Algorithm 1 (Gureya et al., "Bandwidth-Aware Page
 *      Placement in NUMA", IPDPS 2020), the user-level weighted interleave
 *      of the BWAP runtime (see bwap_algorithm1() for our reading of it).
 *  (b) move_pages(2) of every page whose weighted-interleave target node
 *      (by its interleave index, as the kernel computes it) differs under
 *      NEW from where the page is.
 *
 * For each, the pages that changed node are counted from move_pages(2)
 * queries before and after (and, for (i), from /proc/vmstat
 * mpol_rebalance_moved), and set against the theoretical minimum
 * sum over nodes of max(0, current - target), the target being each
 * node's largest-remainder share of the range's resident pages.  "off"
 * is how many pages are still away from that target afterwards.
 *
 * Timing: per moved page, (i) against one move_pages(2) batch that moves
 * the very same pages to the very same nodes, median ratio over
 * --repeats.  Run under `scripts/run-vm --icount` the guest clock counts
 * instructions, so the figures are instruction counts, not seconds: they
 * repeat exactly and leave out cache and memory effects.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include "numa_util.h"
#include "damon_migrate.h"
#include "mpol_reweight.h"

/*
 * The kernel method's flags.  Its range has an mbind2() policy with
 * weights of its own (the start state), which a reweight always changes;
 * the range is private.  So MPOL_REWEIGHT_REBALANCE alone: not
 * MPOL_REWEIGHT_GLOBAL, which would also convert policies on the global
 * weights (the DAMON method's start state, never the kernel's), nor
 * MPOL_REWEIGHT_SHARED, as nothing here is shared.  A change that left the
 * range alone would show as pages not moved against the minimum.
 */
#define KERNEL_REWEIGHT_FLAGS MPOL_REWEIGHT_REBALANCE


#define NN 8			/* most nodes a scenario uses: the arrays hold this many */
#define PG 4096UL
#define MAX_REPEATS 101

struct scenario {
	const char *name;
	const char *what;
	unsigned char old_w[NN], new_w[NN];
};

/* The workers run on node 0 (CPU 0). */
static const struct scenario scenarios[] = {
	{ "small-change", "one node one step up", { 4, 2, 1, 1 }, { 5, 2, 1, 1 } },
	{ "large-change", "weights reversed", { 4, 2, 1, 1 }, { 1, 1, 2, 4 } },
	{ "toward-workers", "uniform to canonical", { 1, 1, 1, 1 }, { 4, 2, 1, 1 } },
	{ "away-from-workers", "pages leave node 0", { 6, 1, 1, 1 }, { 3, 2, 2, 2 } },
	{ "drain-node", "node 3 to weight 0", { 4, 2, 1, 1 }, { 4, 2, 1, 0 } },
	{ "back-to-uniform", "refill the drained node", { 4, 2, 1, 0 }, { 1, 1, 1, 1 } },
};
#define NR_SCENARIOS (sizeof(scenarios) / sizeof(scenarios[0]))

static int nodes[NN];
/* nodes the scenarios in use have: 4, or 8 for --peers on an 8-node machine */
static int nn = 4;
static long npages = 4096;
static int repeats = 5;
static int icount;
static char *base_hint;		/* every start state is mapped here */
static int thp;			/* start states: 0 base pages, 1 MADV_HUGEPAGE, 2 no madvise */
#define HPAGE_PAGES 512
#define FIXED_BASE ((char *)0x600000000000UL)
static int self_pidfd;

/* ---- helpers -------------------------------------------------------------- */
static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void die(const char *fmt, const char *arg)
{
	fprintf(stderr, "rebalance-bench: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n");
	exit(2);
}

static void weights_table(const unsigned char *w, unsigned char *table)
{
	int i;

	memset(table, 0, WI_MAXNODE);
	for (i = 0; i < nn; i++)
		table[nodes[i]] = w[i];
}

static void fmt_w(char *buf, const unsigned char *w)
{
	int i;

	for (i = 0; i < nn; i++)
		buf += sprintf(buf, "%s%u", i ? "," : "", w[i]);
}

/* Pages per node, "a/b/c/d". */
static const char *fmt_counts(char *buf, size_t len, const long *c)
{
	size_t at = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < nn && at < len; i++)
		at += snprintf(buf + at, len - at, "%s%ld", i ? "/" : "", c[i]);
	return buf;
}

/* Index of @node among nodes[], or -1. */
static int node_index(int node)
{
	int i;

	for (i = 0; i < nn; i++)
		if (nodes[i] == node)
			return i;
	return -1;
}

/* Node of every page, by move_pages(2) query; per-node counts. */
static void where(char *p, int *status, long *count)
{
	static void **pages;
	static long have;
	long i;

	if (have < npages) {
		free(pages);
		pages = malloc(npages * sizeof(*pages));
		have = npages;
		if (!pages)
			die("out of memory for %s pages", "the query's");
	}
	for (i = 0; i < npages; i++)
		pages[i] = p + i * PG;
	if (sys_move_pages(0, npages, pages, NULL, status, 0)) {
		perror("rebalance-bench: move_pages query");
		exit(2);
	}
	memset(count, 0, NN * sizeof(*count));
	for (i = 0; i < npages; i++) {
		int k = node_index(status[i]);

		if (k < 0) {
			fprintf(stderr, "rebalance-bench: page %ld is on node %d (status), not a test node\n",
				i, status[i]);
			exit(2);
		}
		count[k]++;
	}
}

static long min_moves(const long *cur, const long *target)
{
	long m = 0;
	int i;

	for (i = 0; i < nn; i++)
		if (cur[i] > target[i])
			m += cur[i] - target[i];
	return m;
}

/*
 * Node a weighted-interleave VMA policy gives the page at @addr: the
 * interleave index of an anonymous page is its virtual page number
 * (vm_pgoff of an anonymous VMA is vm_start >> PAGE_SHIFT), taken modulo
 * the total weight and walked over the nodes in id order.
 */
static int wi_target(unsigned long addr, const unsigned char *w)
{
	unsigned long sum = 0, r;
	int i;

	for (i = 0; i < nn; i++)
		sum += w[i];
	r = (addr / PG) % sum;
	for (i = 0; i < nn; i++) {
		if (r < w[i])
			return i;
		r -= w[i];
	}
	return nn - 1;
}

/*
 * The global table, as a DAMON user on upstream changes it: nodeN files
 * of the nodes in use.  0 or -1.
 */
static int set_global_weights(const unsigned char *w)
{
	int i;

	for (i = 0; i < nn; i++)
		if (wi_sysfs_weight_set(nodes[i], w[i]))
			return -1;
	return 0;
}

/*
 * 1: start states get upstream's policy instead, mbind(MPOL_WEIGHTED_INTERLEAVE)
 * following the global table, with the table set to the OLD weights (the
 * DAMON method: an upstream user has no own weights).
 */
static int start_global;

/* Give the whole range weighted interleave with weights @w (mbind2()). */
static int bind_range_weights(char *p, const unsigned char *w)
{
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))] = { 0 };
	int i;

	if (!start_global)
		return wi_mbind2_nodes(p, npages * PG, nodes, nn, w, 0);
	for (i = 0; i < nn; i++)
		wi_nodemask_set(mask, nodes[i]);
	if (set_global_weights(w))
		return -1;
	return sys_mbind(p, npages * PG, MPOL_WEIGHTED_INTERLEAVE, mask, WI_MAXNODE, 0);
}

/*
 * The end of both user-space methods: send the @n pages to @dest with one
 * move_pages(2) call, then give the range @new_w so that new faults follow
 * it.  Returns the pages that did not move.
 */
static long move_then_bind(char *p, long n, void **pages, int *dest, int *status,
			   const unsigned char *new_w)
{
	long i, failed = 0;

	if (n && sys_move_pages(0, n, pages, dest, status, MPOL_MF_MOVE) < 0)
		failed = n;
	for (i = 0; i < n && !failed; i++)
		failed += status[i] != dest[i];
	bind_range_weights(p, new_w);
	return failed;
}

/* ---- the start state ---------------------------------------------------------- */
static char *start_state(const unsigned char *old_w)
{
	char *p;
	long i;

	/*
	 * Always the same address: the interleave pattern depends on the
	 * virtual page number, so the same address makes the same counts in
	 * every run, whatever the address-space randomisation did.
	 */
	if (!base_hint) {
		p = mmap(FIXED_BASE, npages * PG, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p != MAP_FAILED)
			munmap(p, npages * PG);
		base_hint = p == FIXED_BASE ? p : NULL;
	}
	p = mmap(base_hint, npages * PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | (base_hint ? MAP_FIXED_NOREPLACE : 0), -1, 0);
	if (p == MAP_FAILED || (base_hint && p != base_hint)) {
		perror("rebalance-bench: mmap of the range");
		exit(2);
	}
	base_hint = p;
	if (thp != 2)	/* 2: THP "always" decides alone */
		madvise(p, npages * PG, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	/* build the page tables first, so later faults allocate data pages only */
	for (i = 0; i < npages; i++)
		p[i * PG] = 1;
	madvise(p, npages * PG, MADV_DONTNEED);
	if (bind_range_weights(p, old_w)) {
		perror("rebalance-bench: mbind2 of the start policy");
		exit(2);
	}
	/*
	 * Never a page of zeros: when a THP is split (an mbind() of part of
	 * it), subpages that are all zero are remapped to the shared zero
	 * page, which move_pages(2) then reports as -EFAULT.
	 */
	for (i = 0; i < npages; i++)
		memset(p + i * PG, (int)(i % 255) + 1, 64);
	return p;
}

static void end_state(char *p)
{
	munmap(p, npages * PG);
}

/* ---- the methods ------------------------------------------------------------------ */
static long method_bwap(char *p, const unsigned char *new_w, long long *ns)
{
	unsigned char table[WI_MAXNODE];
	long long t0;
	long ret;

	(void)p;
	weights_table(new_w, table);
	t0 = now_ns();
	ret = mpol_reweight(self_pidfd, table, WI_MAXNODE, KERNEL_REWEIGHT_FLAGS);
	*ns = now_ns() - t0;
	return ret;
}

/*
 * BWAP paper, Algorithm 1, as we read it (paper and the authors' runtime,
 * place_pages_weighted()): weighted interleave built from plain
 * MPOL_INTERLEAVE.  Sort the nodes by weight, ascending; with a nodes
 * still in the set and w_prev the weight of the node last removed, the
 * next contiguous sub-range holds a * (w_i - w_prev) / W of the pages and
 * is mbind()ed MPOL_INTERLEAVE over the whole remaining set, with
 * MPOL_MF_MOVE | MPOL_MF_STRICT; then node i leaves the set.  Summed
 * over the sub-ranges, node i gets w_i / W of the pages.  Sub-range sizes
 * are rounded up to whole pages and the last one is cut at the end of the
 * range.  mbind(MPOL_MF_MOVE) only moves pages that sit on a node outside
 * the sub-range's set, so pages already on a node of the set stay where
 * they are, even if that node now holds more than its share.
 */
static long method_algorithm1(char *p, const unsigned char *new_w, long long *ns)
{
	int order[NN], i, j, a = nn;
	long wsum = 0, done = 0, failed = 0, w_prev = 0;
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))] = { 0 };
	long long t0;

	for (i = 0; i < nn; i++) {
		order[i] = i;
		wsum += new_w[i];
		wi_nodemask_set(mask, nodes[i]);
	}
	for (i = 1; i < nn; i++)	/* insertion sort, ascending weight, stable */
		for (j = i; j > 0 && new_w[order[j - 1]] > new_w[order[j]]; j--) {
			int t = order[j];

			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	t0 = now_ns();
	for (i = 0; i < nn && done < npages; i++) {
		long b = new_w[order[i]] - w_prev;
		long seg = (a * b * npages + wsum - 1) / wsum;

		if (seg > npages - done)
			seg = npages - done;
		if (seg > 0 && sys_mbind(p + done * PG, seg * PG, MPOL_INTERLEAVE, mask,
					  WI_MAXNODE, MPOL_MF_MOVE | MPOL_MF_STRICT))
			failed++;	/* EIO: some pages did not move */
		done += seg;
		a--;
		w_prev = new_w[order[i]];
		mask[nodes[order[i]] / (8 * sizeof(long))] &=
			~(1UL << (nodes[order[i]] % (8 * sizeof(long))));
	}
	*ns = now_ns() - t0;
	return failed;
}

static long method_move_pages(char *p, const unsigned char *new_w, long long *ns)
{
	static void **pages;
	static int *dest, *status, *cur;
	long count[NN], i, n = 0, failed = 0;
	long long t0;

	if (!pages) {
		pages = malloc(npages * sizeof(*pages));
		dest = malloc(npages * sizeof(*dest));
		status = malloc(npages * sizeof(*status));
		cur = malloc(npages * sizeof(*cur));
	}
	t0 = now_ns();
	where(p, cur, count);
	for (i = 0; i < npages; i++) {
		int t = nodes[wi_target((unsigned long)(p + i * PG), new_w)];

		if (cur[i] != t) {
			pages[n] = p + i * PG;
			dest[n++] = t;
		}
	}
	failed = move_then_bind(p, n, pages, dest, status, new_w);
	*ns = now_ns() - t0;
	return failed;
}

/* ---- one run of one method ---------------------------------------------------------- */
struct result {
	long min, moved, off, failed, vm_moved;
	long off_pattern;	/* start pages not where OLD's pattern puts them */
	long cur[NN], final[NN];
	double wb[2];		/* window balance after, WINDOWS[] pages */
	int ok;			/* the method ran (not ENOSYS) */
};

/* Window sizes of the window-balance figure. */
static const long windows[2] = { 64, 512 };

static int *before_st, *after_st;

typedef long (*method_fn)(char *p, const unsigned char *new_w, long long *ns);

static void run_method(const struct scenario *sc, method_fn fn, struct result *r)
{
	long target[NN], mig0, rb0, i;
	long long ns;
	char *p = start_state(sc->old_w);

	memset(r, 0, sizeof(*r));
	where(p, before_st, r->cur);
	/* the start must be the OLD pattern that (b) assumes */
	for (i = 0; i < npages; i++)
		r->off_pattern += before_st[i] != nodes[wi_target((unsigned long)(p + i * PG),
								   sc->old_w)];
	wi_lr_targets(npages, r->cur, sc->new_w, nn, target);
	r->min = min_moves(r->cur, target);
	mig0 = wi_vmstat("pgmigrate_success");
	rb0 = wi_vmstat("mpol_rebalance_moved");
	errno = 0;
	r->failed = fn(p, sc->new_w, &ns);
	r->ok = !(r->failed == -1 && errno == ENOSYS);
	if (r->ok && r->failed < 0) {
		fprintf(stderr, "rebalance-bench: %s: method failed: %s\n", sc->name, strerror(errno));
		exit(2);
	}
	where(p, after_st, r->final);
	for (i = 0; i < npages; i++)
		r->moved += before_st[i] != after_st[i];
	for (i = 0; i < nn; i++)
		r->off += labs(r->final[i] - target[i]);
	r->off /= 2;
	for (i = 0; i < 2; i++)
		r->wb[i] = wi_window_balance(after_st, npages, nodes, sc->new_w,
					       nn, windows[i]);
	r->vm_moved = fn == method_bwap ? wi_vmstat("mpol_rebalance_moved") - rb0
					: wi_vmstat("pgmigrate_success") - mig0;
	end_state(p);
}

static void print_ratio(const struct result *r)
{
	if (!r->ok) {
		printf(" %6s %6s %5s |", "n/a", "", "");
		return;
	}
	if (r->min)
		printf(" %6ld %5.2fx %5ld |", r->moved, (double)r->moved / r->min, r->off);
	else
		printf(" %6ld %6s %5ld |", r->moved, r->moved ? "inf" : "1.00x", r->off);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Time (i) per moved page, then a move_pages(2) batch moving the same pages
 * from the same start state to the same nodes; returns the median ratio.
 */
static int time_scenario(const struct scenario *sc, double *med, double *lo, double *hi,
			 double *bwap_pp, double *mp_pp, long *moved_out)
{
	double ratio[MAX_REPEATS], bpp[MAX_REPEATS], mpp[MAX_REPEATS];
	void **pages = malloc(npages * sizeof(*pages));
	int *dest = malloc(npages * sizeof(*dest)), *status = malloc(npages * sizeof(*status));
	long count[NN];
	int rep;

	for (rep = 0; rep < repeats; rep++) {
		long long t_bwap, t0, t_mp;
		long i, n = 0;
		char *p = start_state(sc->old_w);

		where(p, before_st, count);
		if (method_bwap(p, sc->new_w, &t_bwap) < 0)
			return -1;
		where(p, after_st, count);
		end_state(p);
		for (i = 0; i < npages; i++)
			if (before_st[i] != after_st[i]) {
				pages[n] = base_hint + i * PG;
				dest[n++] = after_st[i];
			}
		*moved_out = n;
		if (!n)
			return 0;
		p = start_state(sc->old_w);
		t0 = now_ns();
		if (sys_move_pages(0, n, pages, dest, status, MPOL_MF_MOVE) < 0) {
			perror("rebalance-bench: move_pages batch");
			exit(2);
		}
		t_mp = now_ns() - t0;
		end_state(p);
		bpp[rep] = (double)t_bwap / n;
		mpp[rep] = (double)t_mp / n;
		ratio[rep] = bpp[rep] / mpp[rep];
	}
	qsort(ratio, repeats, sizeof(double), cmp_double);
	qsort(bpp, repeats, sizeof(double), cmp_double);
	qsort(mpp, repeats, sizeof(double), cmp_double);
	*med = ratio[repeats / 2];
	*lo = ratio[0];
	*hi = ratio[repeats - 1];
	*bwap_pp = bpp[repeats / 2];
	*mp_pp = mpp[repeats / 2];
	free(pages);
	free(dest);
	free(status);
	return 1;
}

/* ---- window balance of a fresh fault ---------------------------------------- */
/* Fault the range afresh under @w and score its window balance. */
static void fresh_balance(const unsigned char *w, double *wb)
{
	long count[NN];
	char *p = start_state(w);
	int i;

	where(p, after_st, count);
	for (i = 0; i < 2; i++)
		wb[i] = wi_window_balance(after_st, npages, nodes, w, nn, windows[i]);
	end_state(p);
}

/* ---- cost at scale ----------------------------------------------------------- */
/*
 * The user-space equivalent of the kernel's rebalance: ask move_pages(2)
 * where every page is, work out the same minimal plan (largest-remainder
 * targets; the surplus of each node taken spread evenly over the range;
 * destinations in weighted round robin by what they lack), move it with
 * one move_pages(2) call, and give the range the new weights with
 * mbind2().  With THP the unit is a huge page: one query, one plan entry
 * and one move per 2 MiB, as a tool that knows the range is all THPs
 * would do (moving any page of a THP moves all of it).  Returns the pages
 * that did not move; *@moved the pages sent.
 */
static long long user_move_ns;	/* the move_pages(2) batch and mbind2() of the last call */

static long user_rebalance(char *p, const unsigned char *new_w, long *moved)
{
	static void **pages;
	static int *dest, *status, *st;
	static long have;
	/* huge-page units only where the range is all huge pages */
	long unit = thp && npages % HPAGE_PAGES == 0 ? HPAGE_PAGES : 1, nu = npages / unit;
	long count[NN], target[NN], share[NN], left[NN], seen[NN] = { 0 };
	long i, n = 0, failed = 0;
	long long t0;
	int k, d, best;

	if (have < nu) {
		free(pages);
		free(dest);
		free(status);
		free(st);
		pages = malloc(nu * sizeof(*pages));
		dest = malloc(nu * sizeof(*dest));
		status = malloc(nu * sizeof(*status));
		st = malloc(nu * sizeof(*st));
		if (!pages || !dest || !status || !st)
			die("out of memory for %s", "the user-space plan");
		have = nu;
	}
	for (i = 0; i < nu; i++)
		pages[i] = p + i * unit * PG;
	if (sys_move_pages(0, nu, pages, NULL, st, 0))
		die("move_pages query: %s", strerror(errno));
	memset(count, 0, sizeof(count));
	for (i = 0; i < nu; i++) {
		k = node_index(st[i]);
		if (k < 0)
			die("a page is on %s", "a node the test does not use");
		count[k]++;
	}
	wi_lr_targets(nu, count, new_w, nn, target);
	for (k = 0; k < nn; k++)
		left[k] = share[k] = count[k] - target[k];
	for (i = 0; i < nu; i++) {
		k = node_index(st[i]);
		seen[k]++;
		if (share[k] <= 0 || left[k] <= 0 ||
		    (share[k] - left[k] + 1) * count[k] > seen[k] * share[k])
			continue;
		best = -1;
		for (d = 0; d < nn; d++) {
			if (share[d] >= 0 || left[d] >= 0)
				continue;
			/* least served: smallest (got + 1) / room */
			if (best < 0 || (left[d] - share[d] + 1) * -share[best] <
					(left[best] - share[best] + 1) * -share[d])
				best = d;
		}
		if (best < 0)
			continue;
		pages[n] = p + i * unit * PG;
		dest[n++] = nodes[best];
		left[k]--;
		left[best]++;
	}
	t0 = now_ns();
	failed = move_then_bind(p, n, pages, dest, status, new_w);
	user_move_ns = now_ns() - t0;
	*moved = n * unit;
	return failed * unit;
}

/* A thread of the target faulting on its own VMA while the call runs. */
struct faulter {
	char *buf;
	long npages;
	volatile int run, in_call, rearm;
	volatile long faults, faults_in_call;
	long long gap_idle, gap_in_call;	/* longest gap between faults */
	int exhausted;				/* ran out of fresh pages in the call */
};

static void *faulter_main(void *arg)
{
	struct faulter *f = arg;
	long long last = now_ns(), t, gap;
	cpu_set_t cpus;
	long i = 0;

	CPU_ZERO(&cpus);
	CPU_SET(1, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	while (f->run) {
		if (f->rearm) {
			/* Fresh pages for the whole call: start over now. */
			madvise(f->buf, f->npages * PG, MADV_DONTNEED);
			i = 0;
			last = now_ns();
			f->rearm = 0;
		}
		if (i == f->npages) {
			if (f->in_call) {
				f->exhausted = 1;
				continue;
			}
			/* Recycle outside the call: MADV_DONTNEED takes mmap_lock. */
			madvise(f->buf, f->npages * PG, MADV_DONTNEED);
			i = 0;
			last = now_ns();
		}
		f->buf[i++ * PG] = 1;
		t = now_ns();
		gap = t - last;
		last = t;
		if (f->in_call) {
			f->faults_in_call++;
			if (gap > f->gap_in_call)
				f->gap_in_call = gap;
		} else if (gap > f->gap_idle) {
			f->gap_idle = gap;
		}
		f->faults++;
	}
	return NULL;
}

/*
 * A thread that maps and unmaps one page in a loop on CPU 2: mmap(2) and
 * munmap(2) take mmap_lock for writing, so its longest gap during the call
 * is the longest the call kept the address space from changing.
 */
struct mapper {
	volatile int run, in_call;
	volatile long pairs, pairs_in_call;
	long long gap_in_call;
};

static void *mapper_main(void *arg)
{
	struct mapper *m = arg;
	long long last = now_ns(), t;
	cpu_set_t cpus;
	void *q;

	CPU_ZERO(&cpus);
	CPU_SET(2, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	while (m->run) {
		q = mmap(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (q != MAP_FAILED)
			munmap(q, PG);
		t = now_ns();
		if (m->in_call) {
			m->pairs_in_call++;
			if (t - last > m->gap_in_call)
				m->gap_in_call = t - last;
		}
		last = t;
		m->pairs++;
	}
	return NULL;
}

/*
 * One table of the sweep, base pages or (with thp set) 2 MiB THPs:
 * appends each size's kernel / user-space ratio to @ratios.  Returns 0 if
 * a rebalance left pages or the two moved different amounts.
 */
static int sweep_table(long max_mib, const unsigned char *from,
		       const unsigned char *to, double *ratios, int *nratios)
{
	unsigned char table[WI_MAXNODE];
	int ok = 1;
	long mib;

	printf("#\n# %s: 1,1,1,1 -> 4,2,1,1, the range fully resident, %s\n",
	       thp ? "With THP (MADV_HUGEPAGE; every share a whole number of huge pages)"
		   : "Base pages (MADV_NOHUGEPAGE)",
	       icount ? "instructions (run-vm --icount)" : "guest ns");
	printf("# kernel = process_mpol_reweight(MPOL_REWEIGHT_REBALANCE); user = move_pages(2) query of\n"
	       "# every %s + the same minimal plan + one move_pages(2) call + mbind2();\n"
	       "# move = that move_pages(2) call and mbind2() alone\n",
	       thp ? "huge page" : "page");
	printf("# %6s %8s %8s %8s %12s %9s %9s %12s %7s %7s\n", "MiB", "pages", "scanned",
	       "moved", "kernel", "/scanned", "/moved", "user", "k/user", "k/move");
	weights_table(to, table);
	for (mib = 16; mib <= max_mib; mib *= 2) {
		long sc0, mv0, scanned, moved, moved_u, left;
		long long t0, tk, tu;
		char *p;

		npages = mib * (1L << 20) / PG;
		p = start_state(from);
		sc0 = wi_vmstat("mpol_rebalance_scanned");
		mv0 = wi_vmstat("mpol_rebalance_moved");
		t0 = now_ns();
		left = mpol_reweight(self_pidfd, table, WI_MAXNODE, KERNEL_REWEIGHT_FLAGS);
		tk = now_ns() - t0;
		scanned = wi_vmstat("mpol_rebalance_scanned") - sc0;
		moved = wi_vmstat("mpol_rebalance_moved") - mv0;
		end_state(p);
		if (left) {
			fprintf(stderr, "rebalance-bench: sweep %ld MiB: %ld pages not moved (%s)\n",
				mib, left, left < 0 ? strerror(errno) : "left");
			return 0;
		}

		p = start_state(from);
		t0 = now_ns();
		left = user_rebalance(p, to, &moved_u);
		tu = now_ns() - t0;
		end_state(p);
		if (left || moved_u != moved)
			ok = 0;
		ratios[(*nratios)++] = (double)tk / tu;
		printf("  %6ld %8ld %8ld %8ld %12lld %9.0f %9.0f %12lld %6.3fx %6.3fx\n", mib,
		       npages, scanned, moved, tk, (double)tk / scanned, (double)tk / moved,
		       tu, (double)tk / tu, (double)tk / user_move_ns);
	}
	return ok;
}

/*
 * Size sweep from 16 MiB to @max_mib resident, 1,1,1,1 -> 4,2,1,1, in
 * base pages and in THPs: the kernel's rebalance per page scanned and per
 * page moved, against the user-space equivalent and its move alone; then,
 * at the largest size, the longest stalls of a thread faulting on another
 * VMA and of one mapping and unmapping during the call.
 */
static int sweep(long max_mib)
{
	static const unsigned char w1111[NN] = { 1, 1, 1, 1 }, w4211[NN] = { 4, 2, 1, 1 };
	unsigned char table[WI_MAXNODE];
	double ratios[32];
	int nratios = 0, nbase, ok;

	ok = sweep_table(max_mib, w1111, w4211, ratios, &nratios);
	nbase = nratios;
	thp = 1;
	ok = sweep_table(max_mib, w1111, w4211, ratios, &nratios) && ok;
	thp = 0;
	weights_table(w4211, table);
	/*
	 * Where the difference comes from, at 16 MiB (the costs per page are
	 * flat in size): the kernel's counting walk alone (a rebalance to the
	 * weights the range already has, which moves nothing), and the
	 * user-space query alone.  The rest of each is the move, common to
	 * both, plus the kernel's pass over what its walk recorded or the
	 * user-space plan.
	 */
	{
		long count[NN], sc0;
		long long t0, tc, tq;
		unsigned char same[WI_MAXNODE];
		int *st;
		char *p;

		npages = 16 * (1L << 20) / PG;
		weights_table(w1111, same);
		p = start_state(w1111);
		sc0 = wi_vmstat("mpol_rebalance_scanned");
		t0 = now_ns();
		mpol_reweight(self_pidfd, same, WI_MAXNODE, KERNEL_REWEIGHT_FLAGS);
		tc = now_ns() - t0;
		sc0 = wi_vmstat("mpol_rebalance_scanned") - sc0;
		end_state(p);
		st = malloc(npages * sizeof(*st));
		if (!st)
			die("out of memory for %s", "the query");
		p = start_state(w1111);
		t0 = now_ns();
		where(p, st, count);
		tq = now_ns() - t0;
		end_state(p);
		free(st);
		printf("# at 16 MiB, per page: kernel counting walk alone %.0f (%ld pages, nothing to move),\n"
		       "#   user-space query alone %.0f; the rest of each is the move, common to both\n",
		       (double)tc / npages, sc0, (double)tq / npages);
	}
	if (nbase && nratios > nbase) {
		qsort(ratios, nbase, sizeof(double), cmp_double);
		qsort(ratios + nbase, nratios - nbase, sizeof(double), cmp_double);
		printf("# kernel / user-space equivalent: base pages median %.3fx, largest %.3fx;\n"
		       "#   THP median %.3fx, largest %.3fx (goal: <= 0.80x)\n",
		       ratios[nbase / 2], ratios[nbase - 1],
		       ratios[nbase + (nratios - nbase) / 2], ratios[nratios - 1]);
		ok = ok && ratios[nbase - 1] <= 0.8 && ratios[nratios - 1] <= 0.8;
	}

	/*
	 * The stalls: a thread faulting on another VMA, and one mapping and
	 * unmapping, during the largest call.
	 */
	{
		struct faulter f = { .run = 1 };
		struct mapper m = { .run = 1 };
		pthread_t t, tm;
		long long t0, tk;
		char *p;

		f.npages = 65536;	/* 256 MiB of fresh pages */
		f.buf = mmap(NULL, f.npages * PG, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (f.buf == MAP_FAILED)
			die("mmap of the faulting thread's range: %s", strerror(errno));
		madvise(f.buf, f.npages * PG, MADV_NOHUGEPAGE);
		npages = max_mib * (1L << 20) / PG;
		p = start_state(w1111);
		if (pthread_create(&t, NULL, faulter_main, &f) ||
		    pthread_create(&tm, NULL, mapper_main, &m))
			die("pthread_create: %s", strerror(errno));
		/* Let it fault a while first, for its gap when nothing else runs. */
		while (f.faults < 20000 || m.pairs < 100)
			;
		/* Recycle its range now, so it has fresh pages through the call. */
		f.rearm = 1;
		while (f.rearm)
			;
		f.in_call = 1;
		m.in_call = 1;
		t0 = now_ns();
		mpol_reweight(self_pidfd, table, WI_MAXNODE, KERNEL_REWEIGHT_FLAGS);
		tk = now_ns() - t0;
		f.in_call = 0;
		m.in_call = 0;
		f.run = 0;
		m.run = 0;
		pthread_join(t, NULL);
		pthread_join(tm, NULL);
		end_state(p);
		munmap(f.buf, f.npages * PG);
		printf("#\n# A thread faulting on another VMA (CPU 1) during the %ld MiB call:\n", max_mib);
		printf("#   call %lld, faults during it %ld, longest stall %lld (%.2f%% of the call)%s;\n"
		       "#   longest gap between its faults before the call %lld\n",
		       tk, f.faults_in_call, f.gap_in_call, 100.0 * f.gap_in_call / tk,
		       f.exhausted ? ", ran out of fresh pages" : "", f.gap_idle);
		printf("# A thread mapping and unmapping a page (CPU 2) during the same call:\n"
		       "#   mmap+munmap pairs during it %ld, longest stall %lld (%.2f%% of the call)\n",
		       m.pairs_in_call, m.gap_in_call, 100.0 * m.gap_in_call / tk);
		if (!f.faults_in_call || f.gap_in_call * 2 > tk ||
		    !m.pairs_in_call || m.gap_in_call * 2 > tk)
			ok = 0;
	}
	return ok;
}

/* ---- THP scenarios ------------------------------------------------------------ */
/*
 * Rebalances of ranges in 2 MiB THPs, with THP "madvise" and "always",
 * checked exactly against the rule of process_mpol_reweight.rst (the same
 * cases as mempolicy2_thp_rebalance_test): pages per node, pages moved,
 * and every huge page still whole.
 */
struct thp_scenario {
	const char *name, *enabled;
	long huge, base;		/* 2 MiB THPs, then base pages */
	unsigned char from[NN], to[NN];
	long after[NN], moved;
};

static const struct thp_scenario thp_scenarios[] = {
	{ "all-thp 5,3,1,1", "madvise", 32, 0, { 4, 2, 1, 1 }, { 5, 3, 1, 1 },
	  { 8192, 4608, 2048, 1536 }, 512 },
	{ "all-thp 5,3,1,1", "always", 32, 0, { 4, 2, 1, 1 }, { 5, 3, 1, 1 },
	  { 8192, 4608, 2048, 1536 }, 512 },
	{ "all-thp 4,2,1,1", "madvise", 32, 0, { 1, 1, 1, 1 }, { 4, 2, 1, 1 },
	  { 8192, 4096, 2048, 2048 }, 4096 },
	{ "mixed 5,3,1,1", "madvise", 8, 400, { 1, 1, 1, 1 }, { 5, 3, 1, 1 },
	  { 2185, 1287, 512, 512 }, 1224 },
	{ "mixed 5,3,1,1", "always", 8, 400, { 1, 1, 1, 1 }, { 5, 3, 1, 1 },
	  { 2185, 1287, 512, 512 }, 1224 },
};
#define THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"

static int thp_scenarios_run(void)
{
	char saved[64];
	int i, k, ok = 1, *st;

	if (wi_read_selected(THP_ENABLED, saved, sizeof(saved))) {
		printf("#\n# THP scenarios: no %s, skipped\n", THP_ENABLED);
		return -1;
	}
	st = malloc(32 * HPAGE_PAGES * sizeof(*st));
	if (!st)
		die("out of memory for %s", "the THP scenarios");
	printf("#\n# THP scenarios (mempolicy2_thp_rebalance_test's cases): pages per node after\n"
	       "# the rebalance, pages moved (mpol_rebalance_moved), huge pages still whole\n");
	printf("# %-16s %-8s %5s %5s | %-24s %-24s %6s %6s %5s\n", "scenario", "THP", "huge",
	       "base", "after", "expected", "moved", "expect", "whole");
	for (i = 0; i < (int)(sizeof(thp_scenarios) / sizeof(thp_scenarios[0])); i++) {
		const struct thp_scenario *t = &thp_scenarios[i];
		unsigned char table[WI_MAXNODE];
		long count[NN], mv, left, kb, huge_kb = t->huge * 2048;
		char got[32], want[32];
		int exact = 1;
		char *p;

		if (wi_write_file(THP_ENABLED, t->enabled))
			die("cannot write %s", THP_ENABLED);
		npages = t->huge * HPAGE_PAGES + t->base;
		thp = strcmp(t->enabled, "madvise") ? 2 : 1;
		p = start_state(t->from);
		weights_table(t->to, table);
		mv = wi_vmstat("mpol_rebalance_moved");
		left = mpol_reweight(self_pidfd, table, WI_MAXNODE, KERNEL_REWEIGHT_FLAGS);
		mv = wi_vmstat("mpol_rebalance_moved") - mv;
		where(p, st, count);
		kb = wi_anon_huge_kb(p);
		end_state(p);
		thp = 0;
		for (k = 0; k < nn; k++)
			exact &= count[k] == t->after[k];
		snprintf(got, sizeof(got), "%ld/%ld/%ld/%ld", count[0], count[1], count[2],
			 count[3]);
		snprintf(want, sizeof(want), "%ld/%ld/%ld/%ld", t->after[0], t->after[1],
			 t->after[2], t->after[3]);
		printf("  %-16s %-8s %5ld %5ld | %-24s %-24s %6ld %6ld %5s%s\n", t->name,
		       t->enabled, t->huge, t->base, got, want, mv, t->moved,
		       kb == huge_kb ? "yes" : "NO", left ? "  (pages not moved)" : "");
		ok &= exact && mv == t->moved && kb == huge_kb && !left;
	}
	wi_write_file(THP_ENABLED, saved);
	free(st);
	return ok;
}

/* ---- the counting walk's cost ---------------------------------------------- */
/*
 * Instructions per resident page of a rebalance that finds nothing to move:
 * mbind2() with MPOL_ARGS_REBALANCE of the weights the range already has, so the
 * call is the counting walk alone.  In base pages, and in 64 KiB mTHPs
 * (16 PTEs of one folio, which the walk takes together).
 */
#define MTHP_64K "/sys/kernel/mm/transparent_hugepage/hugepages-64kB/enabled"

/* 64 KiB folios faulted so far, from the size's own statistics. */
static long mthp_faults(void)
{
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/hugepages-64kB/stats/anon_fault_alloc", "r");
	long n = 0;

	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = 0;
		fclose(f);
	}
	return n;
}

static int walk_cost_one(const char *label, const char *mthp)
{
	static const unsigned char w[NN] = { 1, 1, 1, 1 };
	long long t[MAX_REPEATS];
	long mthps, i;
	int r;
	char *p;

	if (mthp && wi_write_file(MTHP_64K, mthp)) {
		printf("# walk %-14s skipped: cannot write %s\n", label, MTHP_64K);
		return -1;
	}
	thp = mthp ? 2 : 0;
	mthps = mthp_faults();
	p = start_state(w);
	/* start_state() faults every page twice (page tables, then data) */
	mthps = (mthp_faults() - mthps) / 2;
	for (r = 0; r < repeats; r++) {
		long long t0 = now_ns();

		if (wi_mbind2_nodes(p, npages * PG, nodes, nn, w, WI_REBALANCE)) {
			perror("rebalance-bench: mbind2 rebalance");
			exit(2);
		}
		t[r] = now_ns() - t0;
	}
	end_state(p);
	thp = 0;
	for (i = 1; i < repeats; i++) {
		long long v = t[i];
		long j;

		for (j = i; j > 0 && t[j - 1] > v; j--)
			t[j] = t[j - 1];
		t[j] = v;
	}
	printf("  walk %-14s %7ld pages %6ld 64 KiB folios  %8.1f %s/page (median of %d)\n",
	       label, npages, mthps, (double)t[repeats / 2] / npages,
	       icount ? "instructions" : "guest ns", repeats);
	return 0;
}

static int walk_cost(void)
{
	char saved_top[64], saved_64k[64];
	int have_64k = !wi_read_selected(MTHP_64K, saved_64k, sizeof(saved_64k));

	printf("# rebalance-bench --walk: the counting walk alone (a rebalance with nothing to move)\n");
	walk_cost_one("base pages", NULL);
	if (have_64k && !wi_read_selected(THP_ENABLED, saved_top, sizeof(saved_top))) {
		/* 64 KiB folios only: the PMD size off, so no 2 MiB THP */
		wi_write_file(THP_ENABLED, "never");
		walk_cost_one("64 KiB mTHP", "always");
		wi_write_file(MTHP_64K, saved_64k);
		wi_write_file(THP_ENABLED, saved_top);
	} else {
		printf("# walk 64 KiB mTHP skipped: no %s\n", MTHP_64K);
	}
	return 0;
}

/* ---- peers: DAMON, user space and Algorithm 1 beside the kernel ------------ */
/*
 * --peers: each scenario's change applied by every method to the same
 * process and the same pages (the same start state, mapped at the same
 * address, every folio on the LRU), one method at a time:
 *   kernel      process_mpol_reweight(own pidfd, NEW, MPOL_REWEIGHT_REBALANCE);
 *   DAMON       as an upstream user runs it: the range under
 *               mbind(MPOL_WEIGHTED_INTERLEAVE) following the global
 *               table; one resident kdamond on this process, one
 *               migrate_hot scheme whose dests are the nodes; a reweight
 *               writes NEW to the global table and to the dests, and
 *               commits (damon_migrate.h);
 *   DAMON shr   the same with dests/mode "shares" (patches/damon-7.3):
 *               the fewest moves to the weights' shares of each region;
 *   move_pages  user_rebalance(): move_pages(2) query, the minimal plan,
 *               one move_pages(2) call, mbind2() with NEW;
 *   Alg. 1      the BWAP paper's Algorithm 1 (method_algorithm1()).
 * Instructions (run-vm --icount; guest ns otherwise): the guest clock
 * across the call for the kernel, move_pages and Algorithm 1 (the other
 * CPUs are idle, so that is every instruction the call causes, kworkers
 * included); for DAMON, this thread's CPU time writing the weights and
 * committing, plus the kdamond's CPU time (pinned to this CPU so that it
 * is its own) up to the poll that first saw the final placement; its
 * cold start (building the sysfs tree, turning it on) and turning it off
 * are reported apart, as CPU time too.
 */
struct peer_scenario {
	const char *name, *what;
	const char *thp_enabled;	/* NULL: base pages (MADV_NOHUGEPAGE) */
	long huge, base;		/* 2 MiB THPs, then base pages */
	unsigned char old_w[NN], new_w[NN];
	/* huge > 0: the rule's result (process_mpol_reweight.rst) and its moves */
	long after[NN], min;
};

static const struct peer_scenario peer_scenarios[] = {
	/* canonical weights of 4node-asymmetric, workers on node 0, DWP 0 -> 0.1 */
	{ "dwp-step", "DWP 0 -> 0.1", NULL, 0, 4096, { 20, 10, 8, 5 }, { 67, 30, 24, 15 }, { 0 }, 0 },
	{ "small-change", "one node one step", NULL, 0, 4096, { 4, 2, 1, 1 }, { 5, 2, 1, 1 }, { 0 }, 0 },
	{ "large-reweight", "uniform to 5,3,1,1", NULL, 0, 4096, { 1, 1, 1, 1 }, { 5, 3, 1, 1 },
	  { 0 }, 0 },
	{ "thp-always", "32 THPs", "always", 32, 0, { 4, 2, 1, 1 }, { 5, 3, 1, 1 },
	  { 8192, 4608, 2048, 1536 }, 512 },
	{ "thp-mixed", "8 THPs + 400 pages", "always", 8, 400, { 1, 1, 1, 1 }, { 5, 3, 1, 1 },
	  { 2185, 1287, 512, 512 }, 1224 },
};
#define NR_PEER_SCENARIOS (sizeof(peer_scenarios) / sizeof(peer_scenarios[0]))

/* On 8 nodes (8node-opteron). */
static const struct peer_scenario peer_scenarios8[] = {
	/* canonical weights of 8node-opteron, workers on node 0, DWP 0 -> 0.1 */
	{ "dwp-step-8", "DWP 0 -> 0.1", NULL, 0, 4096, { 12, 6, 4, 2, 4, 2, 3, 2 },
	  { 40, 18, 12, 6, 12, 6, 9, 6 }, { 0 }, 0 },
	{ "canonical-8", "uniform to canonical", NULL, 0, 4096, { 1, 1, 1, 1, 1, 1, 1, 1 },
	  { 12, 6, 4, 2, 4, 2, 3, 2 }, { 0 }, 0 },
	/* huge pages: the rule's result is computed (thp_rule()) */
	{ "thp-canonical-8", "32 THPs, uniform to canonical", "always", 32, 0,
	  { 1, 1, 1, 1, 1, 1, 1, 1 }, { 12, 6, 4, 2, 4, 2, 3, 2 }, { 0 }, 0 },
};
#define NR_PEER_SCENARIOS8 (sizeof(peer_scenarios8) / sizeof(peer_scenarios8[0]))

/* DAMON shr: DAMON with dests/mode "shares", on a kernel with patches/damon-7.3 */
enum { P_KERNEL, P_DAMON, P_DAMON_SHARES, P_USER, P_ALG1, NR_PEERS };
static const char *const peer_names[NR_PEERS] = { "kernel", "DAMON", "DAMON shr", "move_pages", "Alg. 1" };
#define IS_DAMON(m) ((m) == P_DAMON || (m) == P_DAMON_SHARES)

/*
 * DAMON runs asynchronously: the placement is polled every PEER_POLL_NS
 * of guest time (/proc/self/numa_maps, cheap), DAMON counts as settled
 * when PEER_SETTLE_POLLS polls in a row saw no page change node, and as
 * "never" converged (converged()) if it has not got there after
 * PEER_BOUND_NS.
 */
#define PEER_POLL_NS 2000000LL
#define PEER_SETTLE_POLLS 25
#define PEER_BOUND_NS 5000000000LL

struct peer_result {
	long moved, off, not_moved, refault_off;
	/*
	 * The minimum from this method's own start state: a shares-mode
	 * kdamond settling under OLD can move a few base pages to OLD's exact
	 * shares first; -1 with huge pages (the scenario's minimum holds)
	 */
	long min;
	long final[NN];
	double wb[2];
	long long instr;	/* median over the repeats */
	long long conv;		/* guest ns until converged(); -1 never */
	long long kdamond;	/* DAMON: the kdamond's part of instr (median) */
	long long settle;	/* DAMON: guest ns until the last page moved */
	double idle_walk;	/* DAMON: kdamond instructions per ms once settled */
	long layout_off;	/* pages not where a fresh fault under NEW puts them */
	/*
	 * The same in the start state: the fewest moves that reach the layout
	 * goal (each such page moves at least once, a THP as its 512 pages)
	 */
	long layout_min;
	int maps_match;		/* numa_maps counts of the range == move_pages(2)'s */
	int kdamond_pid;	/* DAMON: the kdamond that did this reweight */
	long long cpu_caller;	/* DAMON: this thread's CPU time in instr */
	long long cpu_kdamond;	/* DAMON: the kdamond's CPU time in instr */
	long long kd_at_commit;	/* DAMON: the kdamond's part until the commit returned */
	long long t_global;	/* DAMON: guest ns the global table's writes took (before the charge) */
	long long kd_global;	/* DAMON: the kdamond's CPU time meanwhile, not charged */
	double applies;		/* DAMON: applies of the scheme until the end of the polls */
	long sz_applied;	/* DAMON: bytes the scheme migrated, its stats say */
};

/* Node of every page after a fresh fault under NEW: the layout DAMON aims at. */
static int *fresh_st;

static long long thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_ns(long long ns)
{
	struct timespec ts = { ns / 1000000000LL, ns % 1000000000LL };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/*
 * Pages per node of the range at @p (npages pages), from
 * /proc/self/numa_maps: the sum over every mapping that starts inside the
 * range, since an mbind() of a sub-range (Algorithm 1) splits the VMA
 * into pieces, each a line of its own.
 */
static void numa_maps_counts(char *p, long *count)
{
	unsigned long lo = (unsigned long)p, hi = lo + npages * PG, start;
	char line[1024];
	FILE *f = fopen("/proc/self/numa_maps", "r");

	memset(count, 0, NN * sizeof(*count));
	if (!f)
		die("cannot open %s", "/proc/self/numa_maps");
	while (fgets(line, sizeof(line), f)) {
		char *t;

		if (sscanf(line, "%lx ", &start) != 1 || start < lo || start >= hi)
			continue;
		for (t = strstr(line, " N"); t; t = strstr(t + 1, " N")) {
			int nid, k;
			long n;

			if (sscanf(t, " N%d=%ld", &nid, &n) == 2 && (k = node_index(nid)) >= 0)
				count[k] += n;
		}
	}
	fclose(f);
}

/*
 * Converged: every node within 1% of its target (exactly 0 where the
 * target is 0).  With huge pages (@huge) a node can be off its exact share
 * by up to one huge page whichever way the pages are placed, so there it
 * is every node within one huge page of its exact share @w: the rule's
 * result and any other placement as good count alike.
 */
static int converged(const long *count, const long *target, const unsigned char *w, int huge)
{
	long wsum = 0;
	int k;

	for (k = 0; k < nn; k++)
		wsum += w[k];
	for (k = 0; k < nn; k++) {
		double share = (double)npages * w[k] / wsum;

		if (huge ? fabs(count[k] - share) > HPAGE_PAGES
			 : labs(count[k] - target[k]) * 100 > target[k])
			return 0;
	}
	return 1;
}

/*
 * Empty every CPU's LRU-add batch, so every folio of the start state is on
 * an LRU list, as in a process that has been running a while: a no-op
 * move_pages(2) of one page to the node it is on (it drains all CPUs
 * first).  DAMON cannot isolate a folio still in such a batch; the other
 * methods drain themselves.
 */
static void drain_lru(char *p, int node)
{
	void *page = p;
	int status;

	sys_move_pages(0, 1, &page, &node, &status, MPOL_MF_MOVE);
}

/*
 * The DAMON method's kdamond, resident as a user runs it: built and
 * turned on once per scenario (damon_start(), its cost reported apart as
 * the cold start), then every reweight is a commit of new dests weights
 * to it, and it is turned off after the scenario's repeats, before the
 * other methods run on the same range.
 */
static int kdamond_pid;
static long long kd_cold_caller, kd_cold_kdamond, kd_off_caller;
/*
 * 1: the reweight starts a kdamond with the NEW dests and stops it after
 * (what the bench did before), for the cold figure printed beside the
 * resident one; charged CPU time only, the start and the off included.
 */
static int damon_cold;
/* the dests mode damon_start() sets: NULL (DAMON's default) or "shares" */
static const char *damon_mode;
/* --damon-default-regions: DAMON's own region settings, no pads (damon_migrate.h) */
static int damon_default_regions;
/*
 * --damon-intervals SAMPLE_US,AGGR_US: DAMON's sampling and aggregation
 * intervals; 1 ms each by default (damon_migrate.h says why), 5000,100000
 * are DAMON's defaults and bwapd's.
 */
static unsigned long damon_sample_us = 1000, damon_aggr_us = 1000;
/*
 * --damon-trace (issue 50, item 9): each DAMON reweight of the first
 * repeat also prints, per poll, the scheme's stats (refreshed by
 * update_schemes_stats, a damon_call() of its own, so the charge of a
 * traced run is not the table's), the kdamond's CPU time and the pages
 * per node, and when the commit returned.  @damon_trace_name: the
 * scenario the lines belong to.
 */
static int damon_trace;
static const char *damon_trace_name;
static int damon_trace_rep;
static int settle_polls(void);
/* the dests' weights while the start state faults: no moves in either mode */
static const unsigned char zero_w[NN];

static void damon_start(const unsigned char *old_w)
{
	struct damon_migrate d = {
		.pid = getpid(), .start = (unsigned long)base_hint,
		.end = (unsigned long)base_hint + npages * PG, .nr_dests = nn,
		.node = nodes, .weight = old_w, .action = "migrate_hot",
		.sample_us = damon_sample_us, .aggr_us = damon_aggr_us, .update_us = 1000000000UL,
		.dests_mode = damon_mode, .default_regions = damon_default_regions,
	};
	long long cpu0 = thread_cpu_ns();
	cpu_set_t cpus;

	if (damon_setup(&d))
		die("DAMON setup failed (see above); is this the %s kernel?", "damon");
	kdamond_pid = damon_on();
	if (kdamond_pid < 0)
		die("DAMON did not start (see above)%s", "");
	kd_cold_caller = thread_cpu_ns() - cpu0;
	/* on this CPU, so that its CPU time is its own instructions */
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	if (sched_setaffinity(kdamond_pid, sizeof(cpus), &cpus))
		printf("# WARNING: cannot pin kdamond %d to CPU 0 (%s): its time includes other CPUs'\n",
		       kdamond_pid, strerror(errno));
	/* a commit returns once the kdamond took it: its start-up is done by then */
	if (damon_commit_weights(nn, old_w))
		die("DAMON commit failed (see above)%s", "");
	kd_cold_kdamond = task_cpu_ns(kdamond_pid);
}

static void damon_stop(void)
{
	long long cpu0 = thread_cpu_ns();

	if (damon_off())
		die("DAMON did not stop (see above)%s", "");
	kd_off_caller = thread_cpu_ns() - cpu0;
	kdamond_pid = 0;
}

/*
 * One reweight by the resident kdamond, as an upstream user makes it:
 * write the NEW weights to the global table (which the range's policy
 * follows, so later faults get them) and to the scheme's dests, commit,
 * then wait for the pages to settle.  Charged: this thread's CPU time for
 * the writes and the commit, plus the kdamond's CPU time from after the
 * global table's writes to the poll that first saw the final placement;
 * "reached" counts from there too.  CPU time, not the guest clock: the
 * kdamond sleeps between sample intervals, and that idle time is no work.
 *
 * Why not from the first write (issue 50, item 9): each write of a node's
 * global weight waits for an RCU grace period (synchronize_rcu() in
 * weighted_interleave's node store, mm/mempolicy.c), about 8 ms each in
 * the -icount guests, 31-40 ms for four nodes in every scenario.  The
 * resident kdamond meanwhile applies the OLD dests about nine times,
 * walking the range and moving nothing: its steady walk, reported apart
 * (r->kd_global, and the walk per ms once settled), not this change's
 * work, and a kdamond started for the change (damon_cold) is not running
 * then.  Charging it made every shares-mode change "reach" its goal at
 * 42-44 ms on 4 nodes whatever it moved, and the resident kdamond cost
 * 1.2-1.5x the cold one.
 */
static long long method_damon(char *p, const unsigned char *new_w, struct peer_result *r)
{
	long long cpu0, kd0, t_on, t, kd, kd_settled, t_settled = 0, t_global, kd_global;
	long cur[NN], prev[NN];
	int same = 0;

	long tried0, applied0, tried, applied;
	int trace;

	tried0 = applied0 = 0;
	if (!damon_cold && damon_scheme_stats(&tried0, &applied0))
		die("cannot read DAMON's scheme stats (see above)%s", "");
	/* before the writes: a kdamond that moves everything while the commit waits still counts */
	numa_maps_counts(p, prev);
	t_on = now_ns();
	cpu0 = thread_cpu_ns();
	kd0 = damon_cold ? 0 : task_cpu_ns(kdamond_pid);
	if (set_global_weights(new_w))
		die("cannot write the global weights: %s", strerror(errno));
	t_global = now_ns() - t_on;
	{	/* reading the kdamond's CPU time is the bench's work: not the caller's charge */
		long long c1 = thread_cpu_ns();

		kd_global = damon_cold ? 0 : task_cpu_ns(kdamond_pid) - kd0;
		cpu0 += thread_cpu_ns() - c1;
	}
	r->t_global = t_global;
	r->kd_global = kd_global;
	/* the change's own time and the kdamond's charge start here */
	t_on += t_global;
	kd0 += kd_global;
	if (damon_cold)
		damon_start(new_w);
	else if (damon_commit_weights(nn, new_w))
		die("DAMON commit failed (see above)%s", "");
	r->cpu_caller = thread_cpu_ns() - cpu0;
	/* this thread and the kdamond share CPU 0: the commit returns when it yields */
	r->kd_at_commit = task_cpu_ns(kdamond_pid) - kd0;
	kd = kd_settled = task_cpu_ns(kdamond_pid);
	trace = damon_trace && !damon_cold && !damon_trace_rep;
	if (trace) {
		long long t_commit = now_ns() - t_on, ts = now_ns();
		char c[96];

		if (damon_scheme_stats(&tried, &applied))
			die("cannot read DAMON's scheme stats (see above)%s", "");
		ts = now_ns() - ts;
		printf("#   trace %s %s: global table written in %.3f ms (kdamond %lld %s meanwhile); from\n"
		       "#   trace   then the commit returned at %.3f ms (kdamond %lld), caller %lld; then (stats read\n"
		       "#   trace   in %.3f ms)\n"
		       "#   trace   %.2f applies, %ld pages migrated; before: %s pages per node\n"
		       "#   trace   t ms | kdamond since | applies | migrated (stats) | pages per node | stats read\n",
		       damon_trace_name, damon_mode ? "DAMON shr" : "DAMON", t_global / 1e6, kd_global,
		       icount ? "instr" : "ns", t_commit / 1e6, r->kd_at_commit, r->cpu_caller, ts / 1e6,
		       (double)(tried - tried0) / ((damon_default_regions ? 1 : 3) * npages * PG),
		       (applied - applied0) / (long)PG, fmt_counts(c, sizeof(c), prev));
	}
	for (t = 0;;) {
		sleep_ns(PEER_POLL_NS);
		numa_maps_counts(p, cur);
		t = now_ns() - t_on;
		kd = task_cpu_ns(kdamond_pid);
		if (trace) {
			long long ts = now_ns();
			char c[96];

			if (damon_scheme_stats(&tried, &applied))
				die("cannot read DAMON's scheme stats (see above)%s", "");
			ts = now_ns() - ts;
			printf("#   trace %8.3f | %lld | %.2f | %ld | %s | %.3f ms\n", t / 1e6, kd - kd0,
			       (double)(tried - tried0) / ((damon_default_regions ? 1 : 3) * npages * PG),
			       (applied - applied0) / (long)PG, fmt_counts(c, sizeof(c), cur), ts / 1e6);
		}
		if (memcmp(cur, prev, sizeof(cur))) {
			memcpy(prev, cur, sizeof(cur));
			same = 0;
			kd_settled = kd;
			t_settled = t;
		} else if (++same >= settle_polls()) {
			break;
		}
		if (t > PEER_BOUND_NS)
			break;
	}
	r->idle_walk = t > t_settled ? (double)(kd - kd_settled) / ((t - t_settled) / 1e6) : 0;
	r->settle = t_settled;
	r->cpu_kdamond = r->kdamond = kd_settled - kd0;
	r->kdamond_pid = kdamond_pid;
	if (damon_scheme_stats(&tried, &applied))
		die("cannot read DAMON's scheme stats (see above)%s", "");
	/* each apply tries the range and, unless DAMON has its default regions, its two pads of the same size */
	r->applies = (double)(tried - tried0) / ((damon_default_regions ? 1 : 3) * npages * PG);
	r->sz_applied = applied - applied0;
	if (damon_cold) {
		damon_stop();
		r->cpu_caller += kd_off_caller;
	}
	return r->cpu_caller + r->cpu_kdamond;
}

/*
 * The polls in a row without a change that count as settled: at least
 * PEER_SETTLE_POLLS, and two aggregation intervals (a scheme applies once
 * per interval: with bwapd's 100 ms, 50 ms of quiet is no evidence).
 */
static int settle_polls(void)
{
	long long n = 2 * (long long)damon_aggr_us * 1000 / PEER_POLL_NS + 1;

	return n > PEER_SETTLE_POLLS ? (int)n : PEER_SETTLE_POLLS;
}

/* Poll the range's pages per node until none moved for settle_polls() polls, or the bound. */
static void damon_wait_settled(char *p)
{
	long cur[NN], prev[NN];
	long long t0 = now_ns();
	int same = 0;

	numa_maps_counts(p, prev);
	while (same < settle_polls() && now_ns() - t0 < PEER_BOUND_NS) {
		sleep_ns(PEER_POLL_NS);
		numa_maps_counts(p, cur);
		same = memcmp(cur, prev, sizeof(cur)) ? 0 : same + 1;
		memcpy(prev, cur, sizeof(cur));
	}
}

/* Drop every page of the range and fault it again: pages per node. */
static void refault(char *p, long *count)
{
	long i;

	madvise(p, npages * PG, MADV_DONTNEED);
	for (i = 0; i < npages; i++)
		memset(p + i * PG, 2, 64);
	numa_maps_counts(p, count);
}

/*
 * The rule of process_mpol_reweight.rst ("Huge pages") for a range of
 * THPs only, one size, nothing fixed: give the H huge pages to the nodes
 * one at a time, each to the node where keeping one of its own saves a
 * move, among the nodes with a huge page's room left under their
 * largest-remainder share while any is, then among those with any room
 * (ties: more room, then the lower node).  @cur: pages per node now;
 * @after: pages per node after; returns the pages moved.
 */
static long thp_rule(const long *cur, const unsigned char *w, long *after)
{
	long t[NN], got[NN] = { 0 }, moved = 0, f;
	int k, best;

	wi_lr_targets(npages, cur, w, nn, t);
	for (f = 0; f < npages / HPAGE_PAGES; f++) {
		int need = HPAGE_PAGES;	/* room wanted: a huge page, then any */

		for (best = -1; best < 0 && need; need = need > 1 ? 1 : 0)
			for (k = 0; k < nn; k++) {
				long room = t[k] - got[k] * HPAGE_PAGES;
				long saves = got[k] < cur[k] / HPAGE_PAGES;

				if (room < need)
					continue;
				if (best < 0 || saves > (got[best] < cur[best] / HPAGE_PAGES) ||
				    (saves == (got[best] < cur[best] / HPAGE_PAGES) &&
				     room > t[best] - got[best] * HPAGE_PAGES))
					best = k;
			}
		if (best < 0)
			die("the huge-page rule found no node for a huge page%s", "");
		got[best]++;
	}
	for (k = 0; k < nn; k++) {
		after[k] = got[k] * HPAGE_PAGES;
		if (cur[k] > after[k])
			moved += cur[k] - after[k];
	}
	return moved;
}

/* THP scenarios: the per-node pages of the rule's result, the kernel's target. */
static long thp_after[NN];

/*
 * The scenario's minimum moves, from its start state: largest-remainder
 * shares for base pages; for huge pages the rule's result, computed for an
 * all-THP range (and checked against the one written in the scenario) or,
 * on a mix, as written.
 */
static long peer_target(const struct peer_scenario *sc)
{
	long cur[NN], target[NN], min;
	char *p = start_state(sc->old_w);
	int k;

	where(p, before_st, cur);
	end_state(p);
	if (!sc->huge) {
		wi_lr_targets(npages, cur, sc->new_w, nn, target);
		return min_moves(cur, target);
	}
	if (sc->base) {
		memcpy(thp_after, sc->after, sizeof(thp_after));
		return sc->min;
	}
	min = thp_rule(cur, sc->new_w, thp_after);
	for (k = 0; sc->min && k < nn; k++)
		if (thp_after[k] != sc->after[k] || min != sc->min)
			die("%s: the huge-page rule computed here differs from the scenario's", sc->name);
	return min;
}

static void peer_run(const struct peer_scenario *sc, int m, const long *fresh_new,
		     struct peer_result *r)
{
	unsigned char table[WI_MAXNODE];
	long cur[NN], target[NN], refaulted[NN], i, mv = 0;
	long long t0, ns = 0;
	char *p;
	int k;

	/*
	 * The state before: no weights while the range faults (so that the
	 * shares mode does not even out each partial count as it grows), then
	 * OLD committed and settled, all untimed.
	 */
	if (IS_DAMON(m) && !damon_cold && damon_commit_weights(nn, zero_w))
		die("DAMON commit failed (see above)%s", "");
	start_global = IS_DAMON(m);
	p = start_state(sc->old_w);
	start_global = 0;
	if (IS_DAMON(m) && !damon_cold) {
		if (damon_commit_weights(nn, sc->old_w))
			die("DAMON commit failed (see above)%s", "");
		damon_wait_settled(p);
	}
	where(p, before_st, cur);
	if (sc->huge)
		memcpy(target, thp_after, sizeof(target));
	else
		wi_lr_targets(npages, cur, sc->new_w, nn, target);
	r->min = sc->huge ? -1 : min_moves(cur, target);
	r->layout_min = 0;
	for (i = 0; i < npages; i++)
		r->layout_min += before_st[i] != fresh_st[i];
	drain_lru(p, before_st[0]);
	weights_table(sc->new_w, table);
	t0 = now_ns();
	switch (m) {
	case P_KERNEL:
		r->not_moved = mpol_reweight(self_pidfd, table, WI_MAXNODE, KERNEL_REWEIGHT_FLAGS);
		if (r->not_moved < 0)
			die("process_mpol_reweight: %s", strerror(errno));
		r->instr = now_ns() - t0;
		break;
	case P_DAMON:
	case P_DAMON_SHARES:
		r->not_moved = 0;
		r->instr = method_damon(p, sc->new_w, r);
		break;
	case P_USER:
		r->not_moved = user_rebalance(p, sc->new_w, &mv);
		r->instr = now_ns() - t0;
		break;
	case P_ALG1:
		r->not_moved = method_algorithm1(p, sc->new_w, &ns);
		r->instr = now_ns() - t0;
		break;
	}
	where(p, after_st, r->final);
	/* goal reached when the call returns (DAMON: when it settled), or never */
	r->conv = converged(r->final, target, sc->new_w, sc->huge > 0) ? r->instr : -1;
	r->moved = r->off = 0;
	for (i = 0; i < npages; i++)
		r->moved += before_st[i] != after_st[i];
	for (k = 0; k < nn; k++)
		r->off += labs(r->final[k] - target[k]);
	r->off /= 2;
	for (k = 0; k < 2; k++)
		r->wb[k] = wi_window_balance(after_st, npages, nodes, sc->new_w, nn, windows[k]);
	r->layout_off = 0;
	for (i = 0; i < npages; i++)
		r->layout_off += after_st[i] != fresh_st[i];
	/* DAMON's goal is the layout a fresh fault gives, within 1% of the pages */
	if (m == P_DAMON)
		r->conv = r->layout_off * 100 <= npages ? r->settle : -1;
	/* the shares mode's goal is the kernel's, reached when DAMON settled */
	if (m == P_DAMON_SHARES)
		r->conv = r->conv >= 0 ? r->settle : -1;
	numa_maps_counts(p, cur);
	r->maps_match = !memcmp(cur, r->final, sizeof(cur));
	/* later faults follow the policy: no kdamond evening them out meanwhile */
	if (IS_DAMON(m) && !damon_cold && damon_commit_weights(nn, zero_w))
		die("DAMON commit failed (see above)%s", "");
	refault(p, refaulted);
	r->refault_off = 0;
	for (k = 0; k < nn; k++)
		r->refault_off += labs(refaulted[k] - fresh_new[k]);
	r->refault_off /= 2;
	end_state(p);
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

static void fmt_conv(char *buf, size_t len, long long ns)
{
	if (ns < 0)
		snprintf(buf, len, "never");
	else
		snprintf(buf, len, "%.2f ms", ns / 1e6);
}

/*
 * The rows that say the comparison is fair to DAMON and to Algorithm 1
 * (issue 42): DAMON judged by its own goal, given the new policy as an
 * upstream user gives it, run as a user runs it (one resident kdamond,
 * updated by commit) and charged CPU time only; and every method's
 * counts read over the whole range, however its VMA was split.
 */
static int peer_fairness_rows(const struct peer_scenario *sc, const struct peer_result *res,
			      int have_damon, int one_kdamond, int cpu_only, const char *maps_bad, int *t)
{
	const struct peer_result *d = &res[P_DAMON];
	char conv[24];
	int pass, ok = 1;

	if (!have_damon) {
		for (int i = 0; i < 4; i++)
			printf("ok %d %s: DAMON fairness row %d # SKIP no DAMON\n", ++*t, sc->name, i + 1);
	} else {
		fmt_conv(conv, sizeof(conv), d->conv);
		pass = !d->layout_off && d->conv >= 0;
		ok &= pass;
		printf("%s %d %s: DAMON reached its own goal, the fresh-fault layout (%ld pages off it, reached %s)\n",
		       pass ? "ok" : "not ok", ++*t, sc->name, d->layout_off, conv);
		pass = !d->refault_off;
		ok &= pass;
		printf("%s %d %s: after DAMON later faults follow the new weights (%ld pages off a fresh fault)\n",
		       pass ? "ok" : "not ok", ++*t, sc->name, d->refault_off);
		ok &= one_kdamond;
		printf("%s %d %s: DAMON's %d reweights went to one resident kdamond, by commit\n",
		       one_kdamond ? "ok" : "not ok", ++*t, sc->name, repeats);
		ok &= cpu_only;
		printf("%s %d %s: DAMON was charged CPU time only, caller's and kdamond's, no idle time\n",
		       cpu_only ? "ok" : "not ok", ++*t, sc->name);
	}
	pass = !maps_bad[0];
	ok &= pass;
	printf("%s %d %s: numa_maps counts over the whole range equal move_pages(2)'s after every method%s%s\n",
	       pass ? "ok" : "not ok", ++*t, sc->name, pass ? "" : "; not after ", maps_bad);
	return ok;
}

/* A method's minimum to the shares: from its own start state, or the scenario's. */
static long own_min(const struct peer_result *r, long scenario_min)
{
	return r->min >= 0 ? r->min : scenario_min;
}

/*
 * The fewest moves that reach method @m's own goal from its own start
 * state: the layout for DAMON, the shares for the others.  The "/min"
 * column divides by this, so that no method is scored against a goal it
 * does not have.
 */
static long goal_min(const struct peer_result *r, int m, long scenario_min)
{
	return m == P_DAMON ? r->layout_min : own_min(r, scenario_min);
}

/*
 * DAMON's dests in the shares mode aim at the kernel's goal: the fewest
 * moves to the per-node shares.  Within 5% of the minimum from its own
 * start state (large folios move whole, so a node can end up to half of
 * one off its share), and every node at its target as converged()
 * counts it.
 */
static int peer_shares_row(const struct peer_scenario *sc, const struct peer_result *r, int have_shares,
			   long min, int *t)
{
	char conv[24];
	int pass;

	if (!have_shares) {
		printf("ok %d %s: DAMON shr moved within 1.05x of the minimum # SKIP no dests/mode\n",
		       ++*t, sc->name);
		return 1;
	}
	fmt_conv(conv, sizeof(conv), r->conv);
	pass = r->moved * 100 <= min * 105 && r->conv >= 0;
	printf("%s %d %s: DAMON shr moved within 1.05x of the minimum (%ld of %ld, %.3fx) and reached the "
	       "shares (%ld pages off them, reached %s)\n", pass ? "ok" : "not ok", ++*t, sc->name, r->moved,
	       min, min ? (double)r->moved / min : 0.0, r->off, conv);
	return pass;
}

static int peers(const char *only)
{
	static struct peer_result res[NR_PEER_SCENARIOS][NR_PEERS];
	const struct peer_scenario *list = nn == 8 ? peer_scenarios8 : peer_scenarios;
	int nr_list = nn == 8 ? (int)NR_PEER_SCENARIOS8 : (int)NR_PEER_SCENARIOS;
	char saved[64], ow[48], nw[48], conv[24], buf[96];
	long min[NR_PEER_SCENARIOS], fresh[NN];
	double fresh_wb[NR_PEER_SCENARIOS][2];
	/* per scenario: DAMON's kdamond pids differed, its charge was not CPU time alone */
	int kd_pids[NR_PEER_SCENARIOS] = { 0 }, kd_cpu_only[NR_PEER_SCENARIOS];
	/* methods after which numa_maps' counts of the range were not move_pages(2)'s */
	char maps_bad[NR_PEER_SCENARIOS][64];
	int have_thp = !wi_read_selected(THP_ENABLED, saved, sizeof(saved));
	int have_damon = damon_available();
	int have_shares = have_damon && damon_dests_mode_available();
	/* the global table the DAMON method writes, put back at the end */
	int saved_w[NN], saved_auto = wi_auto_get();
	long long cold[NR_PEER_SCENARIOS][3] = { { 0 } };	/* caller, kdamond, off */
	long long cold_run[NR_PEER_SCENARIOS][2] = { { 0 } };	/* a cold reweight: all, kdamond */
	int thp_mixed_note = 0;	/* the folio-blind move_pages row was printed */
	int s, m, rep, ok = 1, t = 0;
	const char *unit = icount ? "instr" : "ns";

	if (!have_damon)
		printf("# no %s (CONFIG_DAMON_SYSFS, DAMON_VADDR): DAMON is n/a;\n"
		       "# scripts/run-bench --peers boots the 7.3 damon variant that has it\n",
		       DAMON_ADMIN);
	else if (!have_shares)
		printf("# no dests/mode in DAMON's sysfs: DAMON shr (patches/damon-7.3) is n/a\n");
	for (s = 0; s < nn; s++)
		saved_w[s] = wi_sysfs_weight_get(nodes[s]);
	free(before_st);
	free(after_st);
	before_st = malloc(32 * HPAGE_PAGES * sizeof(int));
	after_st = malloc(32 * HPAGE_PAGES * sizeof(int));
	fresh_st = malloc(32 * HPAGE_PAGES * sizeof(int));
	printf("# rebalance-bench --peers: %d nodes, workers on CPU 0 (node %d), %d repeats,\n"
	       "# %s (median); DAMON as an upstream user runs it: the range follows\n"
	       "# the global weights, NEW is written there and to the dests of one resident\n"
	       "# kdamond per scenario, then committed; vaddr, migrate_hot, dests = the nodes,\n"
	       "# sample %g ms, aggr %g ms, update 1000 s, %s,\n"
	       "# no quota, every access pattern; polled every %lld ms; DAMON shr: the same,\n"
	       "# its own kdamond, with dests/mode \"shares\" (patches/damon-7.3)\n",
	       nn, nodes[0], repeats,
	       icount ? "instructions (run-vm --icount)" : "guest ns", damon_sample_us / 1000.0,
	       damon_aggr_us / 1000.0, damon_default_regions ?
	       "DAMON's own min_nr_regions and max_nr_regions, no pads" : "3 regions: the range whole, 2 pads",
	       PEER_POLL_NS / 1000000);
	for (s = 0; s < nr_list; s++) {
		const struct peer_scenario *sc = &list[s];
		long long v[MAX_REPEATS], kdv[MAX_REPEATS], cv[MAX_REPEATS];

		if (only && strcmp(only, sc->name))
			continue;
		if (sc->thp_enabled) {
			if (!have_thp) {
				printf("# %s skipped: no %s\n", sc->name, THP_ENABLED);
				continue;
			}
			if (wi_write_file(THP_ENABLED, sc->thp_enabled))
				die("cannot write %s", THP_ENABLED);
			thp = 2;
		} else {
			thp = 0;
		}
		npages = sc->huge * HPAGE_PAGES + sc->base;
		{	/* a fresh fault under NEW: later faults should look like it */
			char *p = start_state(sc->new_w);

			where(p, fresh_st, fresh);
			for (m = 0; m < 2; m++)
				fresh_wb[s][m] = wi_window_balance(fresh_st, npages, nodes, sc->new_w,
								     nn, windows[m]);
			end_state(p);
		}
		maps_bad[s][0] = '\0';
		kd_cpu_only[s] = 1;
		min[s] = peer_target(sc);
		for (m = 0; m < NR_PEERS; m++) {
			int first_pid = 0, bad = 0;

			if ((m == P_DAMON && !have_damon) || (m == P_DAMON_SHARES && !have_shares))
				continue;
			if (IS_DAMON(m)) {
				damon_mode = m == P_DAMON_SHARES ? "shares" : NULL;
				damon_start(sc->old_w);
			}
			for (rep = 0; rep < repeats; rep++) {
				struct peer_result r;

				memset(&r, 0, sizeof(r));
				damon_trace_name = sc->name;
				damon_trace_rep = rep;
				peer_run(sc, m, fresh, &r);
				if (!rep)
					res[s][m] = r;
				bad |= !r.maps_match;
				if (IS_DAMON(m)) {
					if (!rep)
						first_pid = r.kdamond_pid;
					/* 1: one kdamond for every reweight of each DAMON method */
					if (m == P_DAMON && !rep)
						kd_pids[s] = 1;
					kd_pids[s] = kd_pids[s] && r.kdamond_pid == first_pid;
					kd_cpu_only[s] &= r.instr == r.cpu_caller + r.cpu_kdamond;
				}
				v[rep] = r.instr;
				kdv[rep] = r.kdamond;
				cv[rep] = r.conv < 0 ? LLONG_MAX : r.conv;
			}
			if (m == P_DAMON_SHARES)
				damon_stop();
			if (m == P_DAMON) {
				struct peer_result r;

				damon_stop();
				cold[s][0] = kd_cold_caller;
				cold[s][1] = kd_cold_kdamond;
				cold[s][2] = kd_off_caller;
				/* once more with a kdamond started for the change, for comparison */
				memset(&r, 0, sizeof(r));
				damon_cold = 1;
				peer_run(sc, m, fresh, &r);
				damon_cold = 0;
				cold_run[s][0] = r.instr;
				cold_run[s][1] = r.cpu_kdamond;
			}
			if (bad)
				snprintf(maps_bad[s] + strlen(maps_bad[s]), sizeof(maps_bad[s]) - strlen(maps_bad[s]),
					 "%s%s", maps_bad[s][0] ? ", " : "", peer_names[m]);
			qsort(v, repeats, sizeof(v[0]), cmp_ll);
			qsort(kdv, repeats, sizeof(kdv[0]), cmp_ll);
			qsort(cv, repeats, sizeof(cv[0]), cmp_ll);
			res[s][m].instr = v[repeats / 2];
			res[s][m].kdamond = kdv[repeats / 2];
			res[s][m].conv = cv[repeats / 2] == LLONG_MAX ? -1 : cv[repeats / 2];
		}
		fmt_w(ow, sc->old_w);
		fmt_w(nw, sc->new_w);
		printf("#\n# %s (%s): %s -> %s, %ld pages%s, minimum %ld moved; fresh fault under NEW:\n"
		       "#   windows %.1f / %.1f, pages per node %s\n",
		       sc->name, sc->what, ow, nw, npages,
		       sc->huge ? ", THP always" : "", min[s], fresh_wb[s][0], fresh_wb[s][1],
		       fmt_counts(buf, sizeof(buf), fresh));
		printf("# %-10s %6s %6s %6s %6s %6s %10s %7s %6s %-6s %10s %13s %9s %-19s\n", "method",
		       "moved", "min", "/min", "shares", "layout", unit, "/kernel", "/moved", "goal", "reached",
		       "win 64 / 512", "refault", "final per node");
		for (m = 0; m < NR_PEERS; m++) {
			const struct peer_result *r = &res[s][m];
			long gmin = goal_min(r, m, min[s]);
			char fin[96];

			if ((m == P_DAMON && !have_damon) || (m == P_DAMON_SHARES && !have_shares)) {
				printf("  %-10s %6s\n", peer_names[m], "n/a");
				continue;
			}
			fmt_conv(conv, sizeof(conv), r->conv);
			fmt_counts(fin, sizeof(fin), r->final);
			printf("  %-10s %6ld %6ld %5.2fx %6ld %6ld %10lld %6.2fx %6.0f %-6s %10s %5.1f / %5.1f %5ld %-3s %s\n",
			       peer_names[m], r->moved, gmin, gmin ? (double)r->moved / gmin : 0.0,
			       r->off, r->layout_off, r->instr, (double)r->instr / res[s][P_KERNEL].instr,
			       r->moved ? (double)r->instr / r->moved : 0.0,
			       m == P_DAMON ? "layout" : "shares", conv,
			       r->wb[0], r->wb[1], r->refault_off,
			       r->refault_off * 100 <= npages ? "yes" : "no", fin);
		}
		if (sc->huge && sc->base) {
			printf("#   move_pages: folio-blind on this mix, it ignores folio sizes, see (*) below\n");
			thp_mixed_note = 1;
		}
		if (have_damon)
			printf("#   DAMON: one resident kdamond, a commit per reweight: kdamond %lld of its %lld %s\n"
			       "#   (%lld of them before the commit returned); %.1f applies of the scheme over the\n"
			       "#   range, %ld pages migrated by its stats; last page moved after %.2f ms; once\n"
			       "#   settled the kdamond kept walking the range at %.0f %s per ms; apart: cold\n"
			       "#   start %lld %s (sysfs tree and on: caller %lld, kdamond to its first commit\n"
			       "#   %lld), off %lld %s (caller); the same change by a kdamond started for it\n"
			       "#   with the NEW dests and stopped after: %lld %s (kdamond %lld); before the change\n"
			       "#   the global table's writes took %.2f ms, the kdamond %lld %s meanwhile, not charged\n",
			       res[s][P_DAMON].kdamond, res[s][P_DAMON].instr, unit,
			       res[s][P_DAMON].kd_at_commit, res[s][P_DAMON].applies,
			       res[s][P_DAMON].sz_applied / (long)PG,
			       res[s][P_DAMON].settle / 1e6, res[s][P_DAMON].idle_walk, unit,
			       cold[s][0] + cold[s][1], unit, cold[s][0], cold[s][1], cold[s][2], unit,
			       cold_run[s][0], unit, cold_run[s][1], res[s][P_DAMON].t_global / 1e6,
			       res[s][P_DAMON].kd_global, unit);
		if (have_shares)
			printf("#   DAMON shr (dests mode shares), its own resident kdamond: kdamond %lld of its\n"
			       "#   %lld %s; %.1f applies of the scheme over the range, %ld pages migrated by its\n"
			       "#   stats; last page moved after %.2f ms; once settled it kept walking the range\n"
			       "#   at %.0f %s per ms; minimum from its own start state %ld (%.3fx): settling\n"
			       "#   under OLD, the kdamond first brings the fault's pattern to OLD's exact shares;\n"
			       "#   before the change the global table's writes took %.2f ms, the kdamond %lld %s\n"
			       "#   meanwhile, not charged\n",
			       res[s][P_DAMON_SHARES].kdamond, res[s][P_DAMON_SHARES].instr, unit,
			       res[s][P_DAMON_SHARES].applies, res[s][P_DAMON_SHARES].sz_applied / (long)PG,
			       res[s][P_DAMON_SHARES].settle / 1e6, res[s][P_DAMON_SHARES].idle_walk, unit,
			       own_min(&res[s][P_DAMON_SHARES], min[s]),
			       own_min(&res[s][P_DAMON_SHARES], min[s]) ?
			       (double)res[s][P_DAMON_SHARES].moved / own_min(&res[s][P_DAMON_SHARES], min[s]) : 0.0,
			       res[s][P_DAMON_SHARES].t_global / 1e6, res[s][P_DAMON_SHARES].kd_global, unit);
		thp = 0;
	}
	if (have_thp)
		wi_write_file(THP_ENABLED, saved);
	wi_restore(nodes, saved_w, nn, saved_auto);
	printf("#\n# moved: pages that changed node (THP: 512 each); min: the fewest moves that\n"
	       "# reach the method's own goal (goal) from its own start state: shares: base\n"
	       "# pages sum(max(0, current - largest-remainder target)), THP the moves of the\n"
	       "# rule that keeps huge pages whole and every node within one of its share (the\n"
	       "# scenario's header gives this minimum); layout: the pages not on the node a\n"
	       "# fresh fault under NEW puts them on; /min: moved / min, so against the method's\n"
	       "# own goal only; /kernel: instructions against the kernel's; /moved: instructions\n"
	       "# per page moved.\n"
	       "# Each method's end state, against both goals: shares: pages away from the\n"
	       "# per-node target (largest-remainder shares; THP: the rule's result, and another\n"
	       "# placement with every node within one huge page of its share is as good);\n"
	       "# layout: pages not on the node a fresh fault under NEW puts them on.  goal: what\n"
	       "# the method aims at (DAMON's dests reproduce the fresh-fault layout; the others,\n"
	       "# DAMON shr among them, aim at the shares); reached: guest time until its end\n"
	       "# state met that goal (shares: every node within 1%% of its target, THP within one\n"
	       "# huge page of its exact share; layout: within 1%% of the pages), the call for\n"
	       "# synchronous methods, for DAMON's from the dests' writes (after the global\n"
	       "# table's, whose RCU waits are reported apart) to the poll after which no page\n"
	       "# moved for %d polls (bound %lld s); never if the end state misses the goal.\n"
	       "# DAMON's instructions: the caller's CPU time for every write and the commit,\n"
	       "# and the kdamond's from the dests' writes to that poll.  win: worst deviation from the weighted share in\n"
	       "# any 64 / 512-page window (the fresh fault's is in the scenario's header).\n"
	       "# refault: pages away from a fresh fault under NEW after dropping and faulting the\n"
	       "# range again (yes: within 1%% of the range: later faults follow the new weights)\n",
	       PEER_SETTLE_POLLS, PEER_BOUND_NS / 1000000000LL);
	if (thp_mixed_note)
		printf("# (*) thp-mixed, move_pages: the bench's equivalent plans in base pages, as a tool\n"
		       "# blind to folios would; each request for a subpage moves its whole THP, later\n"
		       "# ones in the same THP move it again.  bwapctl's portable mode plans in folio\n"
		       "# units; this row says what a folio-blind tool costs, not what ours does.\n");

	/* TAP: the goal rows */
	for (s = 0; s < nr_list; s++)
		if (!only || !strcmp(only, list[s].name))
			t += 2 + NR_PEERS - 1 + 6;
	printf("1..%d\n", t);
	t = 0;
	for (s = 0; s < nr_list; s++) {
		const struct peer_scenario *sc = &list[s];
		const struct peer_result *k = &res[s][P_KERNEL];
		int pass;

		if (only && strcmp(only, sc->name))
			continue;
		pass = k->moved == min[s] && !k->off && !k->not_moved;
		ok &= pass;
		printf("%s %d %s: kernel moved the minimum (%ld of %ld) to an exact result\n",
		       pass ? "ok" : "not ok", ++t, sc->name, k->moved, min[s]);
		pass = !k->refault_off;
		ok &= pass;
		printf("%s %d %s: after the kernel's rebalance later faults follow the new weights\n",
		       pass ? "ok" : "not ok", ++t, sc->name);
		for (m = P_DAMON; m < NR_PEERS; m++) {
			if ((m == P_DAMON && !have_damon) || (m == P_DAMON_SHARES && !have_shares)) {
				printf("ok %d %s: kernel used no more instructions than %s # SKIP no %s\n",
				       ++t, sc->name, peer_names[m], have_damon ? "dests/mode" : "DAMON");
				continue;
			}
			pass = k->instr <= res[s][m].instr;
			ok &= pass;
			printf("%s %d %s: kernel used no more instructions than %s (%lld vs %lld, %.2fx)\n",
			       pass ? "ok" : "not ok", ++t, sc->name, peer_names[m], k->instr,
			       res[s][m].instr, (double)k->instr / res[s][m].instr);
		}
		ok &= peer_fairness_rows(sc, res[s], have_damon, kd_pids[s], kd_cpu_only[s],
					 maps_bad[s], &t);
		ok &= peer_shares_row(sc, &res[s][P_DAMON_SHARES], have_shares, own_min(&res[s][P_DAMON_SHARES], min[s]),
				      &t);
	}
	return ok ? 0 : 1;
}

static void usage(FILE *out)
{
	fprintf(out,
"Usage: rebalance-bench [--pages N] [--repeats N] [--icount] [--scenario NAME]\n"
"       rebalance-bench --sweep MAX_MIB [--icount]\n"
"       rebalance-bench --walk [--pages N] [--repeats N] [--icount]\n"
"       rebalance-bench --peers [--repeats N] [--icount] [--scenario NAME]\n"
"\n"
"Compares, over weight-change scenarios on 4 nodes, the pages moved by the\n"
"kernel's rebalance (process_mpol_reweight with MPOL_REWEIGHT_REBALANCE), by the\n"
"BWAP paper's Algorithm 1 in user space and by move_pages(2) of every page\n"
"whose interleave target changed, each against the theoretical minimum;\n"
"then the time per moved page of the kernel's rebalance against a\n"
"move_pages(2) batch of the same pages.  Also the window balance after each\n"
"method: the worst deviation of any node from its weighted share in any\n"
"64- or 512-page window, against a fresh weighted fault.  Needs 4 memory\n"
"nodes and root.\n"
"\n"
"  --pages N       pages in the range (default 4096)\n"
"  --repeats N     timing repeats; the median is reported (default 5, max %d)\n"
"  --icount        label times as instructions: use under scripts/run-vm --icount\n"
"  --walk          instead, the cost per page of the counting walk alone (a\n"
"                  rebalance that finds nothing to move), in base pages and\n"
"                  in 64 KiB mTHPs\n"
"  --sweep MAX_MIB instead, the cost at scale: 1,1,1,1 -> 4,2,1,1 on 16 MiB,\n"
"                  32 MiB, ... up to MAX_MIB (16..65536) resident, per page\n"
"                  scanned and moved, against a user-space equivalent\n"
"                  (move_pages(2) query, same plan, move_pages(2)); then the\n"
"                  longest stalls of a thread faulting and of one mapping and\n"
"                  unmapping during the largest call\n"
"  --peers         instead, the same changes by the kernel, by DAMON (the\n"
"                  global weights and a resident kdamond's migrate_hot scheme\n"
"                  with weighted dests on this process, updated by commit,\n"
"                  through /sys/kernel/mm/damon/admin; needs DAMON_VADDR and\n"
"                  DAMON_SYSFS), by DAMON with its dests in the shares mode\n"
"                  (the fewest moves to the shares: patches/damon-7.3; n/a\n"
"                  without dests/mode), by the move_pages(2) equivalent and by\n"
"                  Algorithm 1, on the same pages: moves against the minimum,\n"
"                  instructions, distance from the per-node shares and from a\n"
"                  fresh fault's layout, time until the method's own goal,\n"
"                  window deviation, and whether later faults follow the new\n"
"                  weights; TAP: the kernel moves the minimum to an exact\n"
"                  result, its later faults follow, no peer uses fewer\n"
"                  instructions, and the comparison is fair to each peer\n"
"  --damon-default-regions  with --peers: DAMON's own region settings (the\n"
"                  range as one region, min/max_nr_regions as DAMON has them,\n"
"                  no pads), so DAMON splits and merges the range at will\n"
"  --damon-intervals SAMPLE_US,AGGR_US  with --peers: DAMON's sampling and\n"
"                  aggregation intervals (default 1000,1000; DAMON's own and\n"
"                  bwapd's are 5000,100000)\n"
"  --damon-trace   with --peers: per poll of each DAMON reweight (first\n"
"                  repeat), the scheme's stats, the kdamond's CPU time and\n"
"                  the pages per node, as '#   trace' lines (the stats reads\n"
"                  are damon_call()s: a traced run's charges are not the\n"
"                  table's)\n"
"  --scenario NAME run only this scenario; NAME is one of:\n",
		MAX_REPEATS);
	for (size_t i = 0; i < NR_SCENARIOS; i++)
		fprintf(out, "                    %-18s %u,%u,%u,%u -> %u,%u,%u,%u  %s\n",
			scenarios[i].name, scenarios[i].old_w[0], scenarios[i].old_w[1],
			scenarios[i].old_w[2], scenarios[i].old_w[3], scenarios[i].new_w[0],
			scenarios[i].new_w[1], scenarios[i].new_w[2], scenarios[i].new_w[3],
			scenarios[i].what);
	fprintf(out, "                  with --peers:\n");
	for (size_t i = 0; i < NR_PEER_SCENARIOS; i++)
		fprintf(out, "                    %-18s %u,%u,%u,%u -> %u,%u,%u,%u  %s%s\n",
			peer_scenarios[i].name, peer_scenarios[i].old_w[0], peer_scenarios[i].old_w[1],
			peer_scenarios[i].old_w[2], peer_scenarios[i].old_w[3],
			peer_scenarios[i].new_w[0], peer_scenarios[i].new_w[1],
			peer_scenarios[i].new_w[2], peer_scenarios[i].new_w[3],
			peer_scenarios[i].what, peer_scenarios[i].thp_enabled ? ", THP always" : "");
	fprintf(out, "                  with --peers on 8 nodes (8node-opteron):\n");
	for (size_t i = 0; i < NR_PEER_SCENARIOS8; i++) {
		char ow[48], nw[48];

		nn = 8;
		fmt_w(ow, peer_scenarios8[i].old_w);
		fmt_w(nw, peer_scenarios8[i].new_w);
		nn = 4;
		fprintf(out, "                    %-18s %s -> %s  %s%s\n", peer_scenarios8[i].name,
			ow, nw, peer_scenarios8[i].what, peer_scenarios8[i].thp_enabled ? ", THP always" : "");
	}
	fprintf(out, "  --help          this text\n"
		"\n"
		"Exit status: 0 if the kernel's rebalance moved exactly the minimum to an\n"
		"exact result, with windows within 2 pages of a fresh fault, in every\n"
		"scenario (or the kernel lacks it: reported as a skip); with --sweep, if\n"
		"it moved what the user-space plan moves at <= 0.8x its cost and the\n"
		"faulting thread kept going; with --peers, if every TAP line is ok.\n"
		"1 if not, 2 on bad options or errors.\n");
}

static long parse_num(const char *opt, const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max) {
		fprintf(stderr, "rebalance-bench: %s '%s' is not a number in %ld..%ld; see --help\n",
			opt, s, min, max);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "pages", required_argument, NULL, 'p' },
		{ "repeats", required_argument, NULL, 'r' },
		{ "icount", no_argument, NULL, 'i' },
		{ "scenario", required_argument, NULL, 's' },
		{ "sweep", required_argument, NULL, 'S' },
		{ "walk", no_argument, NULL, 'w' },
		{ "peers", no_argument, NULL, 'P' },
		{ "damon-default-regions", no_argument, NULL, 'D' },
		{ "damon-intervals", required_argument, NULL, 'I' },
		{ "damon-trace", no_argument, NULL, 'T' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	const char *only = NULL, *unit;
	struct result res[NR_SCENARIOS][3];
	int ids[WI_MAX_NODES], opt, have_kernel, all_min = 1, all_wb = 1, thp_ok;
	double fresh_wb[NR_SCENARIOS][2];
	long sweep_mib = 0;
	int walk = 0, peers_mode = 0, have;
	size_t s;
	cpu_set_t cpus;

	while ((opt = getopt_long(argc, argv, "p:r:is:S:wPDI:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			npages = parse_num("--pages", optarg, 1, 1 << 20);
			break;
		case 'r':
			repeats = parse_num("--repeats", optarg, 1, MAX_REPEATS);
			break;
		case 'i':
			icount = 1;
			break;
		case 's':
			only = optarg;
			break;
		case 'S':
			sweep_mib = parse_num("--sweep", optarg, 16, 65536);
			break;
		case 'w':
			walk = 1;
			break;
		case 'P':
			peers_mode = 1;
			break;
		case 'D':
			damon_default_regions = 1;
			break;
		case 'T':
			damon_trace = 1;
			break;
		case 'I':
			if (sscanf(optarg, "%lu,%lu", &damon_sample_us, &damon_aggr_us) != 2 || !damon_sample_us ||
			    damon_aggr_us < damon_sample_us)
				die("--damon-intervals '%s': give SAMPLE_US,AGGR_US, e.g. 5000,100000", optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc)
		die("unexpected argument '%s'; see --help", argv[optind]);
	if (only && peers_mode) {
		int found = 0;

		for (s = 0; s < NR_PEER_SCENARIOS; s++)
			found |= !strcmp(only, peer_scenarios[s].name);
		for (s = 0; s < NR_PEER_SCENARIOS8; s++)
			found |= !strcmp(only, peer_scenarios8[s].name);
		if (!found)
			die("no --peers scenario '%s'; --help lists them", only);
	} else if (only) {
		for (s = 0; s < NR_SCENARIOS; s++)
			if (!strcmp(only, scenarios[s].name))
				break;
		if (s == NR_SCENARIOS)
			die("no scenario '%s'; --help lists them", only);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	have = wi_memory_nodes(ids, WI_MAX_NODES);
	if (have < 4)
		die("needs %s memory nodes; boot it with --topology 4node-asymmetric", "4");
	/* --peers on 8 nodes runs the 8-node scenarios; everything else uses 4 */
	if (peers_mode && have >= 8)
		nn = 8;
	memcpy(nodes, ids, sizeof(nodes));
	/* the workers: this process, on CPU 0 of node 0 */
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	self_pidfd = sys_pidfd_open(getpid());
	if (self_pidfd < 0)
		die("pidfd_open(getpid()): %s", strerror(errno));
	errno = 0;
	have_kernel = have_mpol_reweight();
	before_st = malloc(npages * sizeof(int));
	after_st = malloc(npages * sizeof(int));
	unit = icount ? "instructions" : "guest ns";
	if (walk)
		return have_kernel ? walk_cost() : 0;
	if (peers_mode) {
		if (!have_kernel) {
			printf("1..1\nok 1 peers # SKIP no process_mpol_reweight (ENOSYS)\n");
			return 0;
		}
		return peers(only);
	}
	if (sweep_mib) {
		int ok;

		if (!have_kernel) {
			printf("1..1\nok 1 cost at scale # SKIP no process_mpol_reweight (ENOSYS)\n");
			return 0;
		}
		printf("# rebalance-bench --sweep: nodes %d,%d,%d,%d, the caller on CPU 0 (node %d)\n",
		       nodes[0], nodes[1], nodes[2], nodes[3], nodes[0]);
		ok = sweep(sweep_mib);
		printf("1..1\n%s 1 kernel rebalance moves the same pages at <= 0.80x the user-space cost, and a faulting thread keeps going\n",
		       ok ? "ok" : "not ok");
		return ok ? 0 : 1;
	}

	printf("# rebalance-bench: %ld pages, nodes %d,%d,%d,%d, workers on CPU 0 (node %d)\n",
	       npages, nodes[0], nodes[1], nodes[2], nodes[3], nodes[0]);
	if (!have_kernel)
		printf("# process_mpol_reweight is not in this kernel (ENOSYS): BWAP columns are n/a\n");
	printf("#\n# Pages moved, against the minimum sum(max(0, current - target)); off = pages\n"
	       "# left away from the largest-remainder target afterwards (0 = exact result).\n"
	       "# A ratio below 1.00x comes with off > 0: the method stopped short of the target.\n#\n");
	printf("# %-18s %-8s %-8s %5s | %-20s | %-20s | %-20s\n", "scenario", "old", "new",
	       "min", "   (i) BWAP rebal.", " (a) paper Alg. 1", "(b) move_pages diff");
	printf("# %-18s %-8s %-8s %5s | %6s %6s %5s | %6s %6s %5s | %6s %6s %5s\n", "", "", "", "",
	       "moved", "ratio", "off", "moved", "ratio", "off", "moved", "ratio", "off");
	for (s = 0; s < NR_SCENARIOS; s++) {
		const struct scenario *sc = &scenarios[s];
		char ow[48], nw[48];

		if (only && strcmp(only, sc->name))
			continue;
		run_method(sc, method_bwap, &res[s][0]);
		run_method(sc, method_algorithm1, &res[s][1]);
		run_method(sc, method_move_pages, &res[s][2]);
		fresh_balance(sc->new_w, fresh_wb[s]);
		fmt_w(ow, sc->old_w);
		fmt_w(nw, sc->new_w);
		printf("  %-18s %-8s %-8s %5ld |", sc->name, ow, nw, res[s][0].min);
		print_ratio(&res[s][0]);
		print_ratio(&res[s][1]);
		print_ratio(&res[s][2]);
		printf("\n");
		for (int m = 0; m < 3; m++)
			if (res[s][m].off_pattern)
				printf("# WARNING: %s: %ld start pages are not where the OLD interleave pattern puts them\n",
				       sc->name, res[s][m].off_pattern);
		if (res[s][0].ok && (res[s][0].moved != res[s][0].min || res[s][0].off ||
				     res[s][0].vm_moved != res[s][0].min || res[s][0].failed))
			all_min = 0;
		if (res[s][0].ok && (res[s][0].wb[0] > fresh_wb[s][0] + 2 ||
				     res[s][0].wb[1] > fresh_wb[s][1] + 2))
			all_wb = 0;
	}
	printf("#\n# Window balance: the worst deviation, in pages, of any node's count from its\n"
	       "# weighted share in any window of %ld / %ld consecutive pages of the range,\n"
	       "# after each method and after a fresh weighted fault of the range under NEW.\n",
	       windows[0], windows[1]);
	printf("# %-18s %13s | %13s | %13s | %13s\n", "scenario", "fresh fault", "(i) BWAP",
	       "(a) Alg. 1", "(b) move_pages");
	for (s = 0; s < NR_SCENARIOS; s++) {
		if (only && strcmp(only, scenarios[s].name))
			continue;
		printf("  %-18s %5.1f / %5.1f |", scenarios[s].name, fresh_wb[s][0], fresh_wb[s][1]);
		for (int m = 0; m < 3; m++) {
			if (res[s][m].ok)
				printf(" %5.1f / %5.1f |", res[s][m].wb[0], res[s][m].wb[1]);
			else
				printf(" %13s |", "n/a");
		}
		printf("\n");
	}
	printf("#\n# Per-node pages (node %d,%d,%d,%d): start, target, and after each method;\n"
	       "# vmstat = mpol_rebalance_moved delta for (i), pgmigrate_success delta for (a) and (b)\n",
	       nodes[0], nodes[1], nodes[2], nodes[3]);
	for (s = 0; s < NR_SCENARIOS; s++) {
		const struct scenario *sc = &scenarios[s];
		long target[NN];
		int m;

		if (only && strcmp(only, sc->name))
			continue;
		wi_lr_targets(npages, res[s][1].cur, sc->new_w, nn, target);
		printf("# %-18s start %ld/%ld/%ld/%ld target %ld/%ld/%ld/%ld\n", sc->name,
		       res[s][1].cur[0], res[s][1].cur[1], res[s][1].cur[2], res[s][1].cur[3],
		       target[0], target[1], target[2], target[3]);
		for (m = 0; m < 3; m++) {
			const struct result *r = &res[s][m];

			if (!r->ok)
				continue;
			printf("#   %-22s %ld/%ld/%ld/%ld  vmstat %ld  not moved %ld\n",
			       m == 0 ? "(i) BWAP" : m == 1 ? "(a) Algorithm 1" : "(b) move_pages",
			       r->final[0], r->final[1], r->final[2], r->final[3], r->vm_moved,
			       r->failed);
		}
	}

	if (!have_kernel) {
		printf("#\n# Timing needs process_mpol_reweight: skipped on this kernel\n");
		printf("1..3\nok 1 rebalance moves the minimum # SKIP no process_mpol_reweight (ENOSYS)\n");
		printf("ok 2 rebalance keeps the interleave layout # SKIP no process_mpol_reweight (ENOSYS)\n");
		printf("ok 3 THP scenarios # SKIP no process_mpol_reweight (ENOSYS)\n");
		return 0;
	}
	printf("#\n# Time per moved page, %s (%s), median of %d repeats:\n"
	       "# (i) rebalance call / pages it moved, against one move_pages(2) batch of the same pages\n",
	       unit, icount ? "guest clock under run-vm --icount: 1 ns = 1 instruction" :
	       "wall clock of an emulated guest; use --icount under run-vm --icount for repeatable counts",
	       repeats);
	printf("# %-18s %6s %14s %14s %8s %17s\n", "scenario", "moved", "(i) per page",
	       "move_pages/pg", "ratio", "ratio min..max");
	{
		double meds[NR_SCENARIOS];
		int nmeds = 0;

		for (s = 0; s < NR_SCENARIOS; s++) {
			const struct scenario *sc = &scenarios[s];
			double med, lo, hi, bpp, mpp;
			long moved = 0;
			int rc;

			if (only && strcmp(only, sc->name))
				continue;
			rc = time_scenario(sc, &med, &lo, &hi, &bpp, &mpp, &moved);
			if (rc < 0) {
				fprintf(stderr, "rebalance-bench: process_mpol_reweight: %s\n", strerror(errno));
				return 2;
			}
			if (!rc) {
				printf("  %-18s %6ld %14s\n", sc->name, moved, "nothing moved");
				continue;
			}
			printf("  %-18s %6ld %14.0f %14.0f %7.3fx %8.3f..%.3f\n", sc->name, moved,
			       bpp, mpp, med, lo, hi);
			meds[nmeds++] = med;
		}
		if (nmeds) {
			qsort(meds, nmeds, sizeof(double), cmp_double);
			printf("# median over scenarios of the median ratio: %.3fx (goal: <= 1.00x)\n",
			       meds[nmeds / 2]);
		}
	}
	thp_ok = only ? -1 : thp_scenarios_run();
	printf("1..3\n%s 1 rebalance moved exactly the minimum, all of it, to an exact result, in every scenario\n",
	       all_min ? "ok" : "not ok");
	printf("%s 2 rebalance kept every %ld- and %ld-page window within 2 pages of a fresh fault, in every scenario\n",
	       all_wb ? "ok" : "not ok", windows[0], windows[1]);
	if (thp_ok < 0)
		printf("ok 3 THP scenarios # SKIP %s\n", only ? "--scenario given" : "no THP");
	else
		printf("%s 3 THP scenarios: exact pages per node, pages moved as the rule says, huge pages whole\n",
		       thp_ok ? "ok" : "not ok");
	return all_min && all_wb && thp_ok ? 0 : 1;
}
