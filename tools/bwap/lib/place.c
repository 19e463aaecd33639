// SPDX-License-Identifier: GPL-2.0
/*
 * Portable mode: a process's pages placed at exact weighted shares from
 * user space, for kernels without the BWAP series (as the BWAP paper's
 * user-level variant did).  A move_pages(2) query says where each
 * resident anonymous page is; the largest-remainder shares of the weights
 * say how many each node should hold, per mapping as the kernel's own
 * rebalance counts them; then exactly the pages on nodes above their
 * share move, to nodes below theirs, so the number moved is the minimum:
 * the sum over mappings and nodes of max(0, now - share).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/mempolicy.h>

#include "bwap.h"

#define BATCH 4096

struct page_list {
	void **addr;
	int *node;
	int *vma;		/* which mapping, in address order */
	long n, cap;
};

static int add_page(struct page_list *l, void *addr, int vma)
{
	if (l->n == l->cap) {
		long cap = l->cap ? 2 * l->cap : 65536;
		void **a = realloc(l->addr, cap * sizeof(*a));
		int *nd, *v;

		if (!a)
			return -1;
		l->addr = a;
		nd = realloc(l->node, cap * sizeof(*nd));
		if (!nd)
			return -1;
		l->node = nd;
		v = realloc(l->vma, cap * sizeof(*v));
		if (!v)
			return -1;
		l->vma = v;
		l->cap = cap;
	}
	l->vma[l->n] = vma;
	l->addr[l->n++] = addr;
	return 0;
}

/*
 * The pages of [start, end) that are present and mapped by this process
 * alone, from /proc/PID/pagemap (bits 63 and 56 of each 8-byte entry;
 * readable without privileges): pages shared after a fork cannot be moved
 * with MPOL_MF_MOVE, so they are not counted either, and a large sparse
 * mapping costs a read, not a move_pages entry per page.
 */
static int add_present(struct page_list *l, int pagemap, unsigned long start, unsigned long end, long psz,
		       int vma)
{
	uint64_t ent[512];

	for (unsigned long a = start; a < end;) {
		size_t want = (end - a) / psz < 512 ? (end - a) / psz : 512;
		ssize_t got = pagemap < 0 ? -1 : pread(pagemap, ent, want * 8, (off_t)(a / psz) * 8);

		if (got < 8) {
			/* no pagemap: list every page, the move_pages query sorts them out */
			for (size_t i = 0; i < want; i++)
				if (add_page(l, (void *)(a + i * psz), vma))
					return -1;
			a += want * psz;
			continue;
		}
		/* present (bit 63) and mapped by this process alone (bit 56): what MPOL_MF_MOVE moves */
		for (size_t i = 0; i < (size_t)got / 8; i++)
			if ((ent[i] >> 63) & 1 && (ent[i] >> 56) & 1 && add_page(l, (void *)(a + i * psz), vma))
				return -1;
		a += (got / 8) * psz;
	}
	return 0;
}

static int query_nodes(pid_t pid, struct page_list *l, char *err, size_t errlen);

/*
 * Every page of pid's private anonymous writable mappings (the heap and
 * anonymous mmaps: what an interleave policy places), with its node from
 * a move_pages query; pages not present are left out.
 */
static int query_pages(pid_t pid, struct page_list *l, char *err, size_t errlen)
{
	char path[64], line[4096];
	long psz = sysconf(_SC_PAGESIZE);
	int nvma = 0, pagemap;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	pagemap = open(path, O_RDONLY | O_CLOEXEC);	/* without it, every page is asked about */
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		if (pagemap >= 0)
			close(pagemap);
		return -1;
	}
	l->n = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end, inode;
		char perms[8], name[4096] = "";

		if (sscanf(line, "%lx-%lx %7s %*s %*s %lu %4095s", &start, &end, perms, &inode, name) < 4)
			continue;
		if (perms[1] != 'w' || perms[3] != 'p' || inode || (name[0] && strcmp(name, "[heap]")))
			continue;
		nvma++;
		if (add_present(l, pagemap, start, end, psz, nvma)) {
			fclose(f);
			if (pagemap >= 0)
				close(pagemap);
			snprintf(err, errlen, "out of memory listing the pages of pid %d", (int)pid);
			return -1;
		}
	}
	if (pagemap >= 0)
		close(pagemap);
	fclose(f);
	return query_nodes(pid, l, err, errlen);
}

/* Where each page of l is (a move_pages query); pages not present leave l. */
static int query_nodes(pid_t pid, struct page_list *l, char *err, size_t errlen)
{
	int status[BATCH];
	long kept = 0;

	for (long i = 0; i < l->n; i += BATCH) {
		long k = l->n - i < BATCH ? l->n - i : BATCH;

		if (syscall(SYS_move_pages, pid, k, l->addr + i, NULL, status, 0)) {
			snprintf(err, errlen, "move_pages query of pid %d: %s", (int)pid, strerror(errno));
			return -1;
		}
		for (long j = 0; j < k; j++) {
			if (status[j] < 0 || status[j] >= BWAP_MAX_NODES)
				continue;	/* not present (-ENOENT) or not ours to see */
			l->addr[kept] = l->addr[i + j];
			l->vma[kept] = l->vma[i + j];
			l->node[kept++] = status[j];
		}
	}
	l->n = kept;
	return 0;
}

/*
 * Plan and make the moves for the pages in l (grouped by mapping), then
 * query where they are; requery(l) lists them again for that query.
 */
static int place_list(pid_t pid, struct page_list *l, const struct bwap_weights *w, int dry_run,
		      struct bwap_place_stats *st, int (*list)(pid_t, struct page_list *, void *, char *, size_t),
		      void *arg, char *err, size_t errlen)
{
	unsigned char wb[BWAP_MAX_NODES] = { 0 };
	long excess[BWAP_MAX_NODES], deficit[BWAP_MAX_NODES];
	void **mv_addr = NULL;
	int *mv_dest = NULL, status[BATCH], nr = w->nr_nodes, ret = -1;
	long nmv = 0;
	struct timespec t0, t1;

	memset(st, 0, sizeof(*st));
	st->nr_nodes = nr;
	for (int i = 0; i < nr; i++)
		wb[i] = bwap_nodeset_has(w->nodes, i) ? w->w[i] : 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (list(pid, l, arg, err, errlen))
		goto out;
	mv_addr = malloc((l->n + 1) * sizeof(*mv_addr));
	mv_dest = malloc((l->n + 1) * sizeof(*mv_dest));
	if (!mv_addr || !mv_dest) {
		snprintf(err, errlen, "out of memory for %ld pages", l->n);
		goto out;
	}
	/* one mapping at a time: its pages sit together in l, in address order */
	for (long s0 = 0, s1; s0 < l->n; s0 = s1) {
		long before[BWAP_MAX_NODES] = { 0 }, target[BWAP_MAX_NODES], total = 0;
		int d = 0;

		for (s1 = s0; s1 < l->n && l->vma[s1] == l->vma[s0]; s1++)
			if (l->node[s1] < nr) {
				before[l->node[s1]]++;
				total++;
			}
		bwap_largest_remainder(total, wb, before, nr, target);
		for (int i = 0; i < nr; i++) {
			excess[i] = before[i] > target[i] ? before[i] - target[i] : 0;
			deficit[i] = target[i] > before[i] ? target[i] - before[i] : 0;
			st->before[i] += before[i];
			st->target[i] += target[i];
			st->minimum += excess[i];
		}
		st->pages += total;
		/* each page on a node above its share goes to the next node below its share */
		for (long i = s0; i < s1; i++) {
			int from = l->node[i];

			if (from >= nr || !excess[from])
				continue;
			while (d < nr && !deficit[d])
				d++;
			if (d == nr)
				break;
			excess[from]--;
			deficit[d]--;
			mv_addr[nmv] = l->addr[i];
			mv_dest[nmv++] = d;
		}
	}
	memcpy(st->after, st->before, sizeof(st->after));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	st->seconds = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
	if (dry_run || !nmv) {
		ret = 0;
		goto out;
	}
	for (long i = 0; i < nmv; i += BATCH) {
		long k = nmv - i < BATCH ? nmv - i : BATCH;

		if (syscall(SYS_move_pages, pid, k, mv_addr + i, mv_dest + i, status, MPOL_MF_MOVE) < 0 &&
		    errno != ENOENT) {
			snprintf(err, errlen, "move_pages of pid %d: %s", (int)pid, strerror(errno));
			goto out;
		}
		for (long j = 0; j < k; j++) {
			if (status[j] == mv_dest[i + j])
				st->moved++;
			else
				st->failed++;
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	st->seconds = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
	/* where the pages are now, by a second query */
	if (list(pid, l, arg, err, errlen))
		goto out;
	memset(st->after, 0, sizeof(st->after));
	for (long i = 0; i < l->n; i++)
		if (l->node[i] < nr)
			st->after[l->node[i]]++;
	ret = 0;
out:
	free(mv_addr);
	free(mv_dest);
	return ret;
}

static int list_process(pid_t pid, struct page_list *l, void *arg, char *err, size_t errlen)
{
	return query_pages(pid, l, err, errlen);
}

int bwap_place_pages(pid_t pid, const struct bwap_weights *w, int dry_run, struct bwap_place_stats *st,
		     char *err, size_t errlen)
{
	struct page_list l = { 0 };
	int ret;

	ret = place_list(pid, &l, w, dry_run, st, list_process, NULL, err, errlen);
	free(l.addr);
	free(l.node);
	free(l.vma);
	return ret;
}

struct range {
	char *start;
	size_t len;
};

/* Every page of the range, one mapping as far as the shares go, then where each is. */
static int list_range(pid_t pid, struct page_list *l, void *arg, char *err, size_t errlen)
{
	const struct range *r = arg;
	long psz = sysconf(_SC_PAGESIZE);

	l->n = 0;
	for (size_t off = 0; off < r->len; off += psz)
		if (add_page(l, r->start + off, 1)) {
			snprintf(err, errlen, "out of memory listing %zu pages", r->len / psz);
			return -1;
		}
	return query_nodes(pid, l, err, errlen);
}

int bwap_place_range(void *start, size_t len, const struct bwap_weights *w, struct bwap_place_stats *st,
		     char *err, size_t errlen)
{
	struct range r = { start, len };
	struct page_list l = { 0 };
	int ret;

	ret = place_list(0, &l, w, 0, st, list_range, &r, err, errlen);
	free(l.addr);
	free(l.node);
	free(l.vma);
	return ret;
}

long bwap_set_own_interleave(bwap_nodeset nodes, int weighted)
{
	unsigned long mask[(BWAP_MAX_NODES + 64) / 64] = { 0 };

	mask[0] = nodes;
	/* mode 6 is MPOL_WEIGHTED_INTERLEAVE (6.9+), weighted by the global table */
	return syscall(SYS_set_mempolicy, weighted ? 6 : MPOL_INTERLEAVE, mask, (unsigned long)BWAP_MAX_NODES + 1);
}
