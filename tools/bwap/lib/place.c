// SPDX-License-Identifier: GPL-2.0
/*
 * Portable mode: a process's pages placed at exact weighted shares from
 * user space, for kernels without the BWAP series (as the BWAP paper's
 * user-level variant did).  The plan is made in folio units as the
 * kernel's rebalance makes it (mm/mempolicy_rebalance.c): the present
 * pages are listed as base pages, whole large folios and parts of folios
 * (lib/folios.c), a move_pages query says where each is, and per mapping
 * the largest-remainder shares of all its pages are met with whole large
 * folios where they cost the fewest moves and with base pages for the
 * rest (bwap_folio_split()).  Exactly the units on nodes above their plan
 * move, each to a node below it, a large folio whole through one
 * move_pages entry, so the number moved is the minimum: the sum over
 * mappings, kinds and nodes of max(0, now - plan).
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

int bwap_anon_mappings(pid_t pid, struct bwap_range *r, int max, char *err, size_t errlen)
{
	char path[64], line[4096];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f) && n < max) {
		unsigned long start, end, inode;
		char perms[8], name[4096] = "";

		if (sscanf(line, "%lx-%lx %7s %*s %*s %lu %4095s", &start, &end, perms, &inode, name) < 4)
			continue;
		if (perms[1] != 'w' || perms[3] != 'p' || inode || (name[0] && strcmp(name, "[heap]")))
			continue;
		r[n].start = start;
		r[n++].end = end;
	}
	fclose(f);
	return n;
}

#define MAX_MAPPINGS 65536

/*
 * Does the mapping at start carry a policy the program chose for where
 * its pages go (bind, prefer, prefer (many), local), as numa_maps shows
 * it?  Portable mode leaves such mappings alone: a program or library
 * that binds its memory has said where it wants it, and moving it back
 * at every push would fight it.  Interleave, weighted interleave and
 * default (no policy) are what a placement is for.  numa_maps shows the
 * task policy for a mapping without one of its own, so a task that binds
 * itself keeps all its pages.
 */
static int own_binding(const char *numa_maps, unsigned long start)
{
	char key[32];
	const char *line, *pol;

	if (!numa_maps)
		return 0;
	snprintf(key, sizeof(key), "%lx ", start);
	for (line = numa_maps; line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		if (!strncmp(line, key, strlen(key)))
			break;
	if (!line)
		return 0;
	pol = line + strlen(key);
	return !strncmp(pol, "bind", 4) || !strncmp(pol, "prefer", 6) || !strncmp(pol, "local", 5);
}

/*
 * Is the mapping at start under weighted interleave, as numa_maps shows
 * it (its own VMA policy, or the task policy)?  Only such memory moves
 * when the kernel rebalances (MPOL_REWEIGHT_REBALANCE), so the placement
 * that stands in for it on the series' parts 1-2 moves only that too.
 */
static int weighted_interleave(const char *numa_maps, unsigned long start)
{
	char key[32];
	const char *line;

	if (!numa_maps)
		return 0;
	snprintf(key, sizeof(key), "%lx ", start);
	for (line = numa_maps; line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
		if (!strncmp(line, key, strlen(key)))
			return !strncmp(line + strlen(key), "weighted interleave", 19);
	return 0;
}

/* What list_process() is given and counts. */
struct process_scope {
	int only_wi;		/* only weighted-interleave mappings (bwap_place_pages_wi()) */
	long kept;		/* mappings under the program's own bind, prefer or local policy */
	long not_wi;		/* with only_wi: mappings under another policy, left alone */
};

/*
 * Every present page of pid's private anonymous writable mappings (the
 * heap and anonymous mmaps: what an interleave policy places) that this
 * process maps alone (shared pages after a fork cannot move with
 * MPOL_MF_MOVE), as units (lib/folios.c), without their nodes yet.
 */
static int list_mappings(pid_t pid, struct bwap_unit_list *l, struct bwap_folio_reader *r,
			 struct process_scope *sc, char *err, size_t errlen)
{
	struct bwap_range *rg = malloc(MAX_MAPPINGS * sizeof(*rg));
	char path[64], *numa_maps;
	int n = rg ? bwap_anon_mappings(pid, rg, MAX_MAPPINGS, err, errlen) : -1;

	if (!rg)
		snprintf(err, errlen, "out of memory listing the mappings of pid %d", (int)pid);
	if (n < 0) {
		free(rg);
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d/numa_maps", (int)pid);
	numa_maps = bwap_read_file(path, NULL);
	bwap_folio_reader_open(pid, r);	/* without pagemap, every page is asked about */
	l->n = 0;
	for (int i = 0; i < n; i++) {
		if (own_binding(numa_maps, rg[i].start)) {
			sc->kept++;
			continue;
		}
		if (sc->only_wi && !weighted_interleave(numa_maps, rg[i].start)) {
			sc->not_wi++;
			continue;
		}
		if (bwap_folio_scan(r, rg[i].start, rg[i].end, i + 1, 1, l)) {
			bwap_folio_reader_close(r);
			free(rg);
			free(numa_maps);
			snprintf(err, errlen, "out of memory listing the pages of pid %d", (int)pid);
			return -1;
		}
	}
	bwap_folio_reader_close(r);
	free(rg);
	free(numa_maps);
	return 0;
}

/* Where each unit of l is (a move_pages query of its first page); units not present leave l. */
static int query_nodes(pid_t pid, struct bwap_unit_list *l, char *err, size_t errlen)
{
	void *addr[BATCH];
	int status[BATCH];
	long kept = 0;

	for (long i = 0; i < l->n; i += BATCH) {
		long k = l->n - i < BATCH ? l->n - i : BATCH;

		for (long j = 0; j < k; j++)
			addr[j] = (void *)l->u[i + j].addr;
		if (syscall(SYS_move_pages, pid, k, addr, NULL, status, 0)) {
			snprintf(err, errlen, "move_pages query of pid %d: %s", (int)pid, strerror(errno));
			return -1;
		}
		for (long j = 0; j < k; j++) {
			if (status[j] < 0 || status[j] >= BWAP_MAX_NODES)
				continue;	/* not present (-ENOENT) or not ours to see */
			l->u[kept] = l->u[i + j];
			l->u[kept++].node = status[j];
		}
	}
	l->n = kept;
	return 0;
}

long bwap_place_plan(const struct bwap_unit_list *l, const unsigned char *w, int nr, struct bwap_place_stats *st,
		     struct bwap_move *mv)
{
	long nmv = 0;

	/* one mapping at a time: its units sit together in l, in address order */
	for (long s0 = 0, s1; s0 < l->n; s0 = s1) {
		long cur[BWAP_MAX_NODES] = { 0 }, base[BWAP_MAX_NODES] = { 0 }, large[BWAP_MAX_NODES] = { 0 };
		long fixed[BWAP_MAX_NODES] = { 0 }, goal[BWAP_MAX_NODES], base_to[BWAP_MAX_NODES];
		long large_to[BWAP_MAX_NODES], sb[BWAP_MAX_NODES], sl[BWAP_MAX_NODES], total = 0, unit = 0;

		/* the largest whole large folio is the one planned; smaller ones stay, as parts do */
		for (s1 = s0; s1 < l->n && l->u[s1].vma == l->u[s0].vma; s1++)
			if (l->u[s1].node >= 0 && l->u[s1].node < nr && l->u[s1].whole && l->u[s1].pages > unit)
				unit = l->u[s1].pages;
		unit = unit > 1 ? unit : 0;
		for (long i = s0; i < s1; i++) {
			const struct bwap_unit *u = &l->u[i];

			if (u->node < 0 || u->node >= nr)
				continue;
			cur[u->node] += u->pages;
			total += u->pages;
			if (u->whole && u->pages == 1)
				base[u->node]++;
			else if (u->whole && u->pages == unit) {
				large[u->node] += u->pages;
				st->large_folios++;
			} else
				fixed[u->node] += u->pages;
		}
		st->large_size = unit > st->large_size ? unit : st->large_size;
		bwap_largest_remainder(total, w, cur, nr, goal);
		bwap_folio_split(unit, nr, base, large, fixed, goal, base_to, large_to);
		for (int i = 0; i < nr; i++) {
			sb[i] = base[i] - base_to[i];
			sl[i] = large[i] - large_to[i];
			st->before[i] += cur[i];
			st->target[i] += fixed[i] + base_to[i] + large_to[i];
			st->minimum += (sb[i] > 0 ? sb[i] : 0) + (sl[i] > 0 ? sl[i] : 0);
			st->fixed += fixed[i];
		}
		st->pages += total;
		/* each unit of a node above its plan goes to the first node below it with room for it */
		for (long i = s0; i < s1; i++) {
			const struct bwap_unit *u = &l->u[i];
			long *s = u->pages == 1 ? sb : sl;
			int d;

			if (u->node < 0 || u->node >= nr || !u->whole || (u->pages != 1 && u->pages != unit) ||
			    s[u->node] < u->pages)
				continue;
			for (d = 0; d < nr && -s[d] < u->pages; d++)
				;
			if (d == nr)
				continue;
			s[u->node] -= u->pages;
			s[d] += u->pages;
			mv[nmv].unit = i;
			mv[nmv++].dest = d;
		}
	}
	return nmv;
}

int bwap_place_moves(pid_t pid, const struct bwap_unit_list *l, const struct bwap_move *mv, long nmv,
		     struct bwap_place_stats *st, char *err, size_t errlen)
{
	void *addr[BATCH];
	int dest[BATCH], status[BATCH];

	/* one address per unit: a large folio moves whole when its first page is asked to */
	for (long i = 0; i < nmv; i += BATCH) {
		long k = nmv - i < BATCH ? nmv - i : BATCH;

		for (long j = 0; j < k; j++) {
			addr[j] = (void *)l->u[mv[i + j].unit].addr;
			dest[j] = mv[i + j].dest;
		}
		if (syscall(SYS_move_pages, pid, k, addr, dest, status, MPOL_MF_MOVE) < 0 && errno != ENOENT) {
			snprintf(err, errlen, "move_pages of pid %d: %s", (int)pid, strerror(errno));
			return -1;
		}
		for (long j = 0; j < k; j++) {
			long pages = l->u[mv[i + j].unit].pages;

			if (status[j] == dest[j]) {
				st->moved += pages;
				st->large_moved += pages > 1;
			} else {
				st->failed += pages;
			}
		}
	}
	return 0;
}

/*
 * Plan and make the moves for the units list() gives (grouped by
 * mapping, nodes queried), then list them again for where they are.
 */
static int place_list(pid_t pid, struct bwap_unit_list *l, const struct bwap_weights *w, int dry_run,
		      struct bwap_place_stats *st,
		      int (*list)(pid_t, struct bwap_unit_list *, struct bwap_folio_reader *, void *, char *, size_t),
		      void *arg, char *err, size_t errlen)
{
	unsigned char wb[BWAP_MAX_NODES] = { 0 };
	struct bwap_folio_reader r;
	struct bwap_move *mv = NULL;
	int nr = w->nr_nodes, ret = -1;
	long nmv;
	struct timespec t0, t1;

	memset(st, 0, sizeof(*st));
	st->nr_nodes = nr;
	for (int i = 0; i < nr; i++)
		wb[i] = bwap_nodeset_has(w->nodes, i) ? w->w[i] : 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	if (list(pid, l, &r, arg, err, errlen) || query_nodes(pid, l, err, errlen))
		goto out;
	st->folios_known = r.folios_known;
	snprintf(st->why, sizeof(st->why), "%s", r.why);
	mv = malloc((l->n + 1) * sizeof(*mv));
	if (!mv) {
		snprintf(err, errlen, "out of memory for %ld pages", l->n);
		goto out;
	}
	nmv = bwap_place_plan(l, wb, nr, st, mv);
	memcpy(st->after, st->before, sizeof(st->after));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	st->seconds = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
	if (dry_run || !nmv) {
		ret = 0;
		goto out;
	}
	if (bwap_place_moves(pid, l, mv, nmv, st, err, errlen))
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	st->seconds = (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
	/* where the pages are now, by a second query */
	if (list(pid, l, &r, arg, err, errlen) || query_nodes(pid, l, err, errlen))
		goto out;
	memset(st->after, 0, sizeof(st->after));
	for (long i = 0; i < l->n; i++)
		if (l->u[i].node < nr)
			st->after[l->u[i].node] += l->u[i].pages;
	ret = 0;
out:
	free(mv);
	return ret;
}

int bwap_units_of(pid_t pid, const struct bwap_range *rg, int n, struct bwap_unit_list *l, int *folios_known,
		  char *err, size_t errlen)
{
	struct bwap_folio_reader r;

	bwap_folio_reader_open(pid, &r);
	l->n = 0;
	for (int i = 0; i < n; i++) {
		if (bwap_folio_scan(&r, rg[i].start, rg[i].end, i + 1, 1, l)) {
			bwap_folio_reader_close(&r);
			snprintf(err, errlen, "out of memory listing the pages of pid %d", (int)pid);
			return -1;
		}
	}
	*folios_known = r.folios_known;
	bwap_folio_reader_close(&r);
	return query_nodes(pid, l, err, errlen);
}

static int list_process(pid_t pid, struct bwap_unit_list *l, struct bwap_folio_reader *r, void *arg, char *err,
			size_t errlen)
{
	return list_mappings(pid, l, r, arg, err, errlen);
}

static int place_process(pid_t pid, const struct bwap_weights *w, int dry_run, int only_wi,
			 struct bwap_place_stats *st, char *err, size_t errlen)
{
	struct bwap_unit_list l = { 0 };
	struct process_scope sc = { .only_wi = only_wi };
	int ret;

	ret = place_list(pid, &l, w, dry_run, st, list_process, &sc, err, errlen);
	st->kept_mappings = sc.kept;
	st->not_wi_mappings = sc.not_wi;
	bwap_unit_list_free(&l);
	return ret;
}

int bwap_place_pages(pid_t pid, const struct bwap_weights *w, int dry_run, struct bwap_place_stats *st,
		     char *err, size_t errlen)
{
	return place_process(pid, w, dry_run, 0, st, err, errlen);
}

int bwap_place_pages_wi(pid_t pid, const struct bwap_weights *w, int dry_run, struct bwap_place_stats *st,
			char *err, size_t errlen)
{
	return place_process(pid, w, dry_run, 1, st, err, errlen);
}

struct range {
	char *start;
	size_t len;
};

/* The present pages of the caller's range, as one mapping as far as the shares go. */
static int list_range(pid_t pid, struct bwap_unit_list *l, struct bwap_folio_reader *r, void *arg, char *err,
		      size_t errlen)
{
	const struct range *rg = arg;
	int ret;

	l->n = 0;
	bwap_folio_reader_open(0, r);
	ret = bwap_folio_scan(r, (unsigned long)rg->start, (unsigned long)rg->start + rg->len, 1, 0, l);
	bwap_folio_reader_close(r);
	if (ret)
		snprintf(err, errlen, "out of memory listing %zu pages", rg->len / sysconf(_SC_PAGESIZE));
	return ret;
}

int bwap_place_range(void *start, size_t len, const struct bwap_weights *w, struct bwap_place_stats *st,
		     char *err, size_t errlen)
{
	struct range r = { start, len };
	struct bwap_unit_list l = { 0 };
	int ret;

	ret = place_list(0, &l, w, 0, st, list_range, &r, err, errlen);
	bwap_unit_list_free(&l);
	return ret;
}

long bwap_set_own_interleave(bwap_nodeset nodes, int weighted)
{
	unsigned long mask[(BWAP_MAX_NODES + 64) / 64] = { 0 };

	mask[0] = nodes;
	/* mode 6 is MPOL_WEIGHTED_INTERLEAVE (6.9+), weighted by the global table */
	return syscall(SYS_set_mempolicy, weighted ? 6 : MPOL_INTERLEAVE, mask, (unsigned long)BWAP_MAX_NODES + 1);
}
