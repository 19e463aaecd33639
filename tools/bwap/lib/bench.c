// SPDX-License-Identifier: GPL-2.0
/*
 * The engine of 'bwapctl bench': STREAM-style kernels (copy, scale, add,
 * triad, and a read-only sum) run by threads pinned one per worker CPU,
 * over three arrays whose pages were placed by one policy and counted
 * before any timing.
 *
 * Each thread owns the same slice of every array, a whole number of
 * pages: it first-touches that slice and every kernel works on it, as
 * STREAM's OpenMP loops do with a static schedule.  Placement happens on
 * fresh arrays, so no placement inherits the pages of the one before.
 *
 * Exact counts.  A VMA interleave policy (MPOL_INTERLEAVE, mode 6, or the
 * series' own weights) puts the page at address A on the node that
 * interleave index A >> PAGE_SHIFT selects (anonymous VMAs have vm_pgoff
 * = vm_start >> PAGE_SHIFT): the nodes in id order, each taking as many
 * consecutive indexes as its weight.  bwap_bench_place() computes that
 * for every page, asks move_pages(2) where each page is, and fails on
 * any difference.  Transparent huge pages are off for the arrays, so each
 * 4 KiB page is placed on its own.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "bwap.h"

#define MAXNODE (BWAP_MAX_NODES + 1)
#define MASK_LONGS ((MAXNODE + 63) / 64)
#define SCALAR 3.0

const char *const bwap_bench_kernel_name[BWAP_BENCH_NR_KERNELS] = {
	"copy", "scale", "add", "triad", "sum",
};

/* Bytes each kernel moves per element, as STREAM counts them (no write-allocate). */
static const int kernel_bytes[BWAP_BENCH_NR_KERNELS] = { 16, 16, 24, 24, 8 };

const char *const bwap_bench_method_name[BWAP_BENCH_NR_METHODS] = {
	[BWAP_BENCH_FIRST_TOUCH] = "first-touch",
	[BWAP_BENCH_INTERLEAVE] = "mbind-interleave",
	[BWAP_BENCH_GLOBAL_WI] = "mbind-mode6-global",
	[BWAP_BENCH_OWN_WEIGHTS] = "mbind2-own-weights",
	[BWAP_BENCH_MOVE_PAGES] = "move_pages-portable",
};

enum { CMD_NONE = -1, CMD_TOUCH = -2, CMD_EXIT = -3 };

struct bench_thread {
	pthread_t thread;
	struct bwap_bench *b;
	int index;
	int pin_error;
	double t0, t1;		/* when this thread started and ended its slice */
	volatile double sum;	/* the read kernel's result, kept so it is not optimised away */
};

static double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void run_slice(struct bwap_bench *b, struct bench_thread *t, int cmd)
{
	size_t lo = (size_t)t->index * b->chunk, hi = lo + b->chunk;
	double *restrict a = b->a, *restrict bb = b->b, *restrict c = b->c, s = 0;

	switch (cmd) {
	case CMD_TOUCH:
		for (size_t i = lo; i < hi; i++) {
			a[i] = 1.0;
			bb[i] = 2.0;
			c[i] = 0.0;
		}
		break;
	case BWAP_BENCH_COPY:
		for (size_t i = lo; i < hi; i++)
			c[i] = a[i];
		break;
	case BWAP_BENCH_SCALE:
		for (size_t i = lo; i < hi; i++)
			bb[i] = SCALAR * c[i];
		break;
	case BWAP_BENCH_ADD:
		for (size_t i = lo; i < hi; i++)
			c[i] = a[i] + bb[i];
		break;
	case BWAP_BENCH_TRIAD:
		for (size_t i = lo; i < hi; i++)
			a[i] = bb[i] + SCALAR * c[i];
		break;
	case BWAP_BENCH_SUM: {
		/* four independent sums: the loop waits on memory, not on one add chain */
		double s1 = 0, s2 = 0, s3 = 0;

		for (size_t i = lo; i < hi; i += 4) {
			s += a[i];
			s1 += a[i + 1];
			s2 += a[i + 2];
			s3 += a[i + 3];
		}
		t->sum = s + s1 + s2 + s3;
		break;
	}
	}
}

static void *bench_thread_main(void *arg)
{
	struct bench_thread *t = arg;
	struct bwap_bench *b = t->b;
	unsigned char cpus[BWAP_MAX_CPUS] = { 0 };

	cpus[b->cpu[t->index]] = 1;
	t->pin_error = bwap_pin_to_cpus(0, cpus) ? errno : 0;
	for (;;) {
		int cmd;

		pthread_barrier_wait(&b->start);
		cmd = b->cmd;
		if (cmd == CMD_EXIT)
			return NULL;
		t->t0 = now_sec();
		if (cmd != CMD_NONE)
			run_slice(b, t, cmd);
		t->t1 = now_sec();
		pthread_barrier_wait(&b->done);
	}
}

/*
 * Every thread does cmd on its slice; returns the seconds from the first
 * thread's start to the last one's end, as the threads clocked them (the
 * coordinating thread may run late, so its own clock would not do).
 */
static double run_all(struct bwap_bench *b, int cmd)
{
	struct bench_thread *t = b->threads;
	double t0, t1;

	b->cmd = cmd;
	pthread_barrier_wait(&b->start);
	pthread_barrier_wait(&b->done);
	t0 = t[0].t0;
	t1 = t[0].t1;
	for (int i = 1; i < b->nr_threads; i++) {
		t0 = t[i].t0 < t0 ? t[i].t0 : t0;
		t1 = t[i].t1 > t1 ? t[i].t1 : t1;
	}
	return t1 - t0;
}

int bwap_bench_start(struct bwap_bench *b, const int *cpus, int nr_threads, size_t array_bytes,
		     const int *cpu_node, char *err, size_t errlen)
{
	size_t psz = sysconf(_SC_PAGESIZE), per_page = psz / sizeof(double);
	struct bench_thread *t;

	memset(b, 0, sizeof(*b));
	if (nr_threads < 1 || nr_threads > BWAP_MAX_CPUS) {
		snprintf(err, errlen, "%d threads: give 1 to %d", nr_threads, BWAP_MAX_CPUS);
		return -1;
	}
	b->nr_threads = nr_threads;
	for (int i = 0; i < nr_threads; i++) {
		b->cpu[i] = cpus[i];
		b->thread_node[i] = cpu_node[cpus[i]];
	}
	/* each thread's slice: a whole number of pages, at least one */
	b->chunk = (array_bytes / sizeof(double) + nr_threads - 1) / nr_threads;
	b->chunk = (b->chunk + per_page - 1) / per_page * per_page;
	b->elems = b->chunk * nr_threads;
	b->array_bytes = b->elems * sizeof(double);
	pthread_barrier_init(&b->start, NULL, nr_threads + 1);
	pthread_barrier_init(&b->done, NULL, nr_threads + 1);
	t = calloc(nr_threads, sizeof(*t));
	if (!t) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	b->threads = t;
	for (int i = 0; i < nr_threads; i++) {
		t[i].b = b;
		t[i].index = i;
		if (pthread_create(&t[i].thread, NULL, bench_thread_main, &t[i])) {
			snprintf(err, errlen, "cannot start thread %d", i);
			abort();	/* the barriers would never open */
		}
	}
	run_all(b, CMD_NONE);	/* every thread has pinned itself */
	for (int i = 0; i < nr_threads; i++)
		if (t[i].pin_error) {
			snprintf(err, errlen, "cannot pin thread %d to CPU %d: %s", i, b->cpu[i],
				 strerror(t[i].pin_error));
			bwap_bench_stop(b);
			return -1;
		}
	return 0;
}

void bwap_bench_stop(struct bwap_bench *b)
{
	struct bench_thread *t = b->threads;

	if (!t)
		return;
	b->cmd = CMD_EXIT;
	pthread_barrier_wait(&b->start);
	for (int i = 0; i < b->nr_threads; i++)
		pthread_join(t[i].thread, NULL);
	pthread_barrier_destroy(&b->start);
	pthread_barrier_destroy(&b->done);
	free(t);
	b->threads = NULL;
	if (b->region)
		munmap(b->region, 3 * b->array_bytes);
	b->region = NULL;
}

double bwap_bench_run(struct bwap_bench *b, enum bwap_bench_kernel k)
{
	double s = run_all(b, k);

	return (double)kernel_bytes[k] * b->elems / s / 1e9;
}

/* The node a VMA interleave policy over nodes with weights w gives interleave index ilx. */
static int interleave_node(bwap_nodeset nodes, const unsigned char *w, unsigned long total,
			   unsigned long ilx)
{
	unsigned long target = ilx % total;

	for (int n = 0; n < BWAP_MAX_NODES; n++) {
		if (!bwap_nodeset_has(nodes, n))
			continue;
		if (target < w[n])
			return n;
		target -= w[n];
	}
	return -1;
}

static long apply_policy(struct bwap_bench *b, const struct bwap_bench_place *p, const unsigned char *w)
{
	unsigned long mask[MASK_LONGS] = { 0 };
	size_t len = 3 * b->array_bytes;

	for (int n = 0; n < BWAP_MAX_NODES; n++)
		if (bwap_nodeset_has(p->nodes, n) && (p->method != BWAP_BENCH_MOVE_PAGES || w[n]))
			mask[n / 64] |= 1UL << (n % 64);
	switch (p->method) {
	case BWAP_BENCH_FIRST_TOUCH:
		return 0;
	case BWAP_BENCH_INTERLEAVE:
	case BWAP_BENCH_MOVE_PAGES:	/* a mixed start: what moves is spread over the arrays */
		return bwap_sys_mbind(b->region, len, MPOL_INTERLEAVE, mask, MAXNODE, 0);
	case BWAP_BENCH_GLOBAL_WI:
		return bwap_sys_mbind(b->region, len, BWAP_MPOL_WEIGHTED_INTERLEAVE, mask, MAXNODE, 0);
	case BWAP_BENCH_OWN_WEIGHTS:
		return bwap_mbind_own_weights(b->region, len, p->nodes, w);
	default:
		errno = EINVAL;
		return -1;
	}
}

/* Pages of the arrays per node, from a move_pages query; -1 if one is not present. */
static int count_pages(struct bwap_bench *b, long *actual, char *err, size_t errlen)
{
	size_t psz = sysconf(_SC_PAGESIZE), n = 3 * b->array_bytes / psz;
	void **pages = malloc(n * sizeof(*pages));
	int *status = malloc(n * sizeof(*status)), ret = -1;

	memset(actual, 0, BWAP_MAX_NODES * sizeof(*actual));
	if (!pages || !status) {
		snprintf(err, errlen, "out of memory for %zu pages", n);
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		pages[i] = b->region + i * psz;
	if (syscall(SYS_move_pages, 0, n, pages, NULL, status, 0)) {
		snprintf(err, errlen, "move_pages query: %s", strerror(errno));
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		if (status[i] < 0 || status[i] >= BWAP_MAX_NODES) {
			snprintf(err, errlen, "page %zu of the arrays is not resident (%s)", i, strerror(-status[i]));
			goto out;
		}
		actual[status[i]]++;
	}
	ret = 0;
out:
	free(pages);
	free(status);
	return ret;
}

char *bwap_bench_counts_text(const long *v, char *buf, size_t len)
{
	size_t k = 0;

	snprintf(buf, len, "-");
	for (int i = 0; i < BWAP_MAX_NODES && k + 24 < len; i++)
		if (v[i])
			k += snprintf(buf + k, len - k, "%s%d:%ld", k ? " " : "", i, v[i]);
	return buf;
}

int bwap_bench_place(struct bwap_bench *b, const struct bwap_bench_place *p, long *expected, long *actual,
		     long *moved, char *err, size_t errlen)
{
	size_t psz = sysconf(_SC_PAGESIZE), len, npages;
	unsigned char w[BWAP_MAX_NODES] = { 0 };
	unsigned long total = 0;
	char buf[256];

	memset(expected, 0, BWAP_MAX_NODES * sizeof(*expected));
	*moved = 0;
	if (b->region)
		munmap(b->region, 3 * b->array_bytes);
	len = 3 * b->array_bytes;
	npages = len / psz;
	b->region = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->region == MAP_FAILED) {
		b->region = NULL;
		snprintf(err, errlen, "cannot map 3 arrays of %zu bytes: %s", b->array_bytes, strerror(errno));
		return -1;
	}
	b->a = (double *)b->region;
	b->b = (double *)(b->region + b->array_bytes);
	b->c = (double *)(b->region + 2 * b->array_bytes);
	/* 4 KiB pages, each placed by the policy on its own */
	madvise(b->region, len, MADV_NOHUGEPAGE);
	for (int n = 0; n < BWAP_MAX_NODES; n++) {
		if (!bwap_nodeset_has(p->nodes, n))
			continue;
		w[n] = p->method == BWAP_BENCH_INTERLEAVE ? 1 :
		       p->method == BWAP_BENCH_GLOBAL_WI && !p->w[n] ? 1 : p->w[n];	/* the kernel reads 0 as 1 */
		total += w[n];
	}
	if (p->method != BWAP_BENCH_FIRST_TOUCH && !total) {
		snprintf(err, errlen, "no node of %s has a weight", bwap_nodeset_format(p->nodes, buf, sizeof(buf)));
		return -1;
	}
	if (apply_policy(b, p, w)) {
		snprintf(err, errlen, "%s over nodes %s: %s%s", bwap_bench_method_name[p->method],
			 bwap_nodeset_format(p->nodes, buf, sizeof(buf)), strerror(errno),
			 errno == ENOSYS ? " (this kernel lacks the BWAP series)" : "");
		return -1;
	}
	run_all(b, CMD_TOUCH);
	switch (p->method) {
	case BWAP_BENCH_FIRST_TOUCH: {
		size_t slice_pages = b->chunk * sizeof(double) / psz;

		/* each array: thread i's slice on thread i's node */
		for (int i = 0; i < b->nr_threads; i++)
			expected[b->thread_node[i]] += 3 * slice_pages;
		break;
	}
	case BWAP_BENCH_MOVE_PAGES: {
		struct bwap_weights bw = { .nr_nodes = BWAP_MAX_NODES };
		struct bwap_place_stats st;

		for (int n = 0; n < BWAP_MAX_NODES; n++)
			if (w[n]) {
				bw.nodes |= BWAP_NODE_BIT(n);
				bw.w[n] = w[n];
			}
		if (bwap_place_range(b->region, len, &bw, &st, err, errlen))
			return -1;
		if (st.failed) {
			snprintf(err, errlen, "move_pages could not move %ld of %ld pages", st.failed,
				 st.moved + st.failed);
			return -1;
		}
		*moved = st.moved;
		memcpy(expected, st.target, BWAP_MAX_NODES * sizeof(*expected));
		break;
	}
	default:
		for (size_t i = 0; i < npages; i++) {
			int n = interleave_node(p->nodes, w, total, ((uintptr_t)b->region + i * psz) / psz);

			if (n >= 0)
				expected[n]++;
		}
	}
	if (count_pages(b, actual, err, errlen))
		return -1;
	for (int n = 0; n < BWAP_MAX_NODES; n++)
		if (expected[n] != actual[n]) {
			char e[256], a[256];

			snprintf(err, errlen, "%s did not happen: pages per node expected %s, actual %s",
				 bwap_bench_method_name[p->method], bwap_bench_counts_text(expected, e, sizeof(e)),
				 bwap_bench_counts_text(actual, a, sizeof(a)));
			return -1;
		}
	return 0;
}

size_t bwap_llc_bytes(const unsigned char *cpus, int *level)
{
	char seen[64][256], path[256], buf[256];
	int nr_seen = 0, best = 0;
	size_t total = 0;

	/* two passes: find the last level, then add up its distinct instances */
	for (int pass = 0; pass < 2; pass++)
		for (int c = 0; c < BWAP_MAX_CPUS; c++) {
			if (!cpus[c])
				continue;
			for (int k = 0; k < 16; k++) {
				char *text;
				int lv;
				long kb;

				snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cache/index%d/level", c, k);
				text = bwap_read_file(path, NULL);
				if (!text)
					break;
				lv = atoi(text);
				free(text);
				snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cache/index%d/type", c, k);
				text = bwap_read_file(path, NULL);
				if (!text)
					continue;
				if (!strncmp(text, "Instruction", 11)) {
					free(text);
					continue;
				}
				free(text);
				if (pass == 0) {
					if (lv > best)
						best = lv;
					continue;
				}
				if (lv != best)
					continue;
				snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list",
					 c, k);
				text = bwap_read_file(path, NULL);
				snprintf(buf, sizeof(buf), "%s", text ? text : "");
				free(text);
				int dup = 0;

				for (int s = 0; s < nr_seen; s++)
					dup |= !strcmp(seen[s], buf);
				if (dup || nr_seen == 64)
					continue;
				snprintf(seen[nr_seen++], sizeof(seen[0]), "%s", buf);
				snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/cache/index%d/size", c, k);
				text = bwap_read_file(path, NULL);
				if (!text)
					continue;
				kb = strtol(text, NULL, 10);
				if (strchr(text, 'M'))
					kb *= 1024;
				free(text);
				total += (size_t)kb * 1024;
			}
		}
	if (level)
		*level = best;
	return total;
}

int bwap_cpu_is_emulated(char *why, size_t len)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned int a, b, c, d;
	char sig[13];

	/* QEMU's TCG answers the hypervisor leaf with "TCGTCGTCGTCG" */
	__cpuid(1, a, b, c, d);
	if (!(c & (1u << 31)))
		return 0;
	__cpuid(0x40000000, a, b, c, d);
	memcpy(sig, &b, 4);
	memcpy(sig + 4, &c, 4);
	memcpy(sig + 8, &d, 4);
	sig[12] = '\0';
	if (!strcmp(sig, "TCGTCGTCGTCG")) {
		snprintf(why, len, "QEMU TCG: every node is the same host memory");
		return 1;
	}
#endif
	return 0;
}
