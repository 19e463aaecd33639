// SPDX-License-Identifier: GPL-2.0
/*
 * Where a process's pages are, from /proc/PID/numa_maps, and where the
 * kernel's rebalance will put them: the largest-remainder share of each
 * VMA, computed as mm/mempolicy_rebalance.c computes it.
 *
 * Only VMAs the rebalance handles count: private anonymous ones (numa_maps
 * shows anon= and no file= for them) under a weighted-interleave policy,
 * their own or the task's (numa_maps shows the task policy for VMAs
 * without one), which numa_maps spells "weighted interleave:NODES"; and
 * files on tmpfs (shmem) under a shared policy of their own.  A shmem VMA
 * without one shows the task policy too, but rebalance leaves its pages
 * alone (they belong to the file); numa_maps cannot tell the two apart, so
 * a tmpfs VMA whose policy reads exactly like the stack's is taken to be
 * under the task policy.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/vfs.h>

#include "bwap.h"

void bwap_pagedist_free(struct bwap_pagedist *d)
{
	free(d->vma);
	d->vma = NULL;
	d->nr_vmas = 0;
}

/* Is path on tmpfs (shmem), whose pages rebalance moves like anonymous ones? */
int bwap_path_is_shmem(const char *path)
{
	struct statfs sf;

	return !statfs(path, &sf) && sf.f_type == TMPFS_MAGIC;
}

/*
 * The policy of a numa_maps line, for comparing two lines: the words after
 * the address up to the first field (a word with '=', or a marker such as
 * "heap"), then its il_weights= field.  @sig has @size bytes.
 */
static void policy_signature(const char *line, char *sig, size_t size)
{
	const char *p = strchr(line, ' '), *w = strstr(line, " il_weights=");
	size_t n = 0;

	sig[0] = '\0';
	while (p && *p == ' ') {
		const char *e = strchrnul(p + 1, ' ');
		const char *eq = memchr(p + 1, '=', e - p - 1);

		if (eq || e == p + 1 || !strncmp(p + 1, "heap ", 5) || !strncmp(p + 1, "stack ", 6) ||
		    !strncmp(p + 1, "huge ", 5))
			break;
		n += snprintf(sig + n, n < size ? size - n : 0, "%.*s", (int)(e - p), p);
		p = *e ? e : NULL;
	}
	if (w)
		snprintf(sig + (n < size ? n : size - 1), n < size ? size - n : 1, "%.*s",
			 (int)(strchrnul(w + 1, ' ') - w), w);
}

int bwap_pagedist_parse(const char *text, int nr_nodes, struct bwap_pagedist *d)
{
	return bwap_pagedist_parse_ex(text, nr_nodes, d, NULL);
}

/*
 * Portable mode: memory under plain interleave (bwapctl run's start) or
 * the default policy counts too, since pages are placed from user space.
 */
static int count_interleave;

void bwap_pagedist_portable(int on)
{
	count_interleave = on;
}

int bwap_pagedist_parse_ex(const char *text, int nr_nodes, struct bwap_pagedist *d,
			   int (*is_shmem)(const char *path))
{
	char shmem_path[512] = "", task_sig[512] = "", sig[512];
	int shmem_cached = 0;
	const char *line = text, *st;

	/* The task policy, as the stack's line shows it. */
	for (st = strstr(text, " stack "); st; st = NULL) {
		const char *bol = st;
		char buf[1024];
		size_t len;

		while (bol > text && bol[-1] != '\n')
			bol--;
		len = strchrnul(st, '\n') - bol;
		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
		memcpy(buf, bol, len);
		buf[len] = '\0';
		policy_signature(buf, task_sig, sizeof(task_sig));
	}

	memset(d, 0, sizeof(*d));
	d->nr_nodes = nr_nodes;
	d->vma = calloc(BWAP_MAX_VMAS, sizeof(*d->vma));
	if (!d->vma)
		return -1;
	while (line && *line) {
		const char *end = strchrnul(line, '\n');
		char buf[1024], *save = NULL, *tok;
		size_t len = end - line < (long)sizeof(buf) - 1 ? (size_t)(end - line) : sizeof(buf) - 1;
		struct bwap_vma_pages v;
		int wi = 0, file = 0, any = 0, anon = 0, shmem = 0;

		memcpy(buf, line, len);
		buf[len] = '\0';
		line = *end ? end + 1 : NULL;
		policy_signature(buf, sig, sizeof(sig));
		memset(&v, 0, sizeof(v));
		/* "ADDR weighted interleave:0-3 anon=... N0=... il_weights=0:5,..." */
		v.start = strtoul(buf, &tok, 16);
		if (!strncmp(tok, " weighted interleave", 20) ||
		    (count_interleave && (!strncmp(tok, " interleave", 11) || !strncmp(tok, " default", 8))))
			wi = 1;
		tok = strtok_r(buf, " ", &save);
		if (!tok)
			continue;
		while ((tok = strtok_r(NULL, " ", &save))) {
			int node;
			long n;

			if (!strncmp(tok, "file=", 5)) {
				file = 1;
				/* consecutive lines mostly name the same file: ask once */
				if (is_shmem && strcmp(shmem_path, tok + 5)) {
					snprintf(shmem_path, sizeof(shmem_path), "%s", tok + 5);
					shmem_cached = is_shmem(shmem_path);
				}
				shmem = is_shmem && shmem_cached;
			}
			else if (!strncmp(tok, "anon=", 5))
				anon = 1;
			else if (sscanf(tok, "N%d=%ld", &node, &n) == 2 && node >= 0 && node < nr_nodes) {
				v.pages[node] += n;
				any = 1;
			}
		}
		/*
		 * Private anonymous memory (anon=, no file=; without anon= it is a
		 * special mapping such as the vdso, which rebalance skips), and
		 * files on tmpfs, which are shmem, under a policy of their own.
		 */
		if (file && shmem && task_sig[0] && !strcmp(sig, task_sig))
			shmem = 0;
		if (!wi || !any || (file ? !shmem : !anon) || d->nr_vmas >= BWAP_MAX_VMAS)
			continue;
		for (int i = 0; i < nr_nodes; i++) {
			d->pages[i] += v.pages[i];
			d->total += v.pages[i];
		}
		d->vma[d->nr_vmas++] = v;
	}
	return 0;
}

int bwap_pagedist_read(pid_t pid, int nr_nodes, struct bwap_pagedist *d, char *err, size_t errlen)
{
	char path[64], *text;
	int ret;

	snprintf(path, sizeof(path), "/proc/%d/numa_maps", (int)pid);
	text = bwap_read_file(path, NULL);
	if (!text) {
		int e = errno;

		snprintf(err, errlen, "cannot read %s: %s%s", path, strerror(e),
			 e == ENOENT ? " (the process has exited, or the kernel lacks CONFIG_NUMA)" : "");
		memset(d, 0, sizeof(*d));
		errno = e;
		return -1;
	}
	ret = bwap_pagedist_parse_ex(text, nr_nodes, d, bwap_path_is_shmem);
	free(text);
	if (ret)
		snprintf(err, errlen, "out of memory reading %s", path);
	return ret;
}

void bwap_largest_remainder(long total, const unsigned char *w, const long *cur, int nr, long *target)
{
	unsigned long long wsum = 0, rem[BWAP_MAX_NODES];
	unsigned char extra[BWAP_MAX_NODES] = { 0 };
	long given = 0;

	for (int i = 0; i < nr; i++) {
		wsum += w[i];
		target[i] = 0;
	}
	if (!wsum)
		return;
	for (int i = 0; i < nr; i++) {
		target[i] = (unsigned long long)total * w[i] / wsum;
		rem[i] = (unsigned long long)total * w[i] % wsum;
		given += target[i];
	}
	while (given < total) {
		int best = -1;

		for (int i = 0; i < nr; i++) {
			if (!w[i] || extra[i])
				continue;
			if (best < 0 || rem[i] > rem[best] || (rem[i] == rem[best] && cur[i] > cur[best]))
				best = i;
		}
		if (best < 0)
			break;
		extra[best] = 1;
		target[best]++;
		given++;
	}
}

long bwap_pagedist_targets(const struct bwap_pagedist *d, const unsigned char *w, long *target)
{
	long move = 0;

	for (int i = 0; i < d->nr_nodes; i++)
		target[i] = 0;
	for (int v = 0; v < d->nr_vmas; v++) {
		long t[BWAP_MAX_NODES], total = 0;

		for (int i = 0; i < d->nr_nodes; i++)
			total += d->vma[v].pages[i];
		bwap_largest_remainder(total, w, d->vma[v].pages, d->nr_nodes, t);
		for (int i = 0; i < d->nr_nodes; i++) {
			target[i] += t[i];
			if (d->vma[v].pages[i] > t[i])
				move += d->vma[v].pages[i] - t[i];
		}
	}
	return move;
}

/*
 * Pages a node sends away if it keeps or receives units large folios of
 * unit pages, with avail = goal - fixed pages to fill: the large folios it
 * has beyond units, and the base pages it has beyond what is left of avail.
 */
static long split_cost(long unit, long base, long large, long avail, long units)
{
	long have = large / unit, left = avail - units * unit, over = have - units;

	return (over > 0 ? over : 0) * unit + (base - (left > 0 ? left : 0) > 0 ? base - (left > 0 ? left : 0) : 0);
}

/*
 * The base pages' part of bwap_folio_split(): each node's room, goal -
 * fixed - large_to, filled with base pages; where they fall short, the
 * shortfall comes off the nodes that receive base pages, evenly, the last
 * pages from the lowest node ids (mm/mempolicy_rebalance.c's split_base()).
 */
static void split_base(int nr, const long *base, const long *fixed, const long *goal, const long *large_to,
		       long *base_to)
{
	long excess = 0, step, least;
	int active;

	for (int i = 0; i < nr; i++) {
		base_to[i] = goal[i] - fixed[i] - large_to[i];
		if (base_to[i] < 0)
			base_to[i] = 0;
		excess += base_to[i] - base[i];
	}
	while (excess > 0) {
		active = 0;
		least = 0;
		for (int i = 0; i < nr; i++) {
			if (base_to[i] <= base[i])
				continue;
			if (!active++ || base_to[i] - base[i] < least)
				least = base_to[i] - base[i];
		}
		if (!active)
			break;	/* cannot happen: the rooms exceed the base pages by excess */
		step = excess / active < least ? excess / active : least;
		for (int i = 0; i < nr && excess > 0; i++) {
			if (base_to[i] <= base[i])
				continue;
			base_to[i] -= step ? step : 1;
			excess -= step ? step : 1;
		}
	}
}

void bwap_folio_split(long unit, int nr, const long *base, const long *large, const long *fixed,
		      const long *goal, long *base_to, long *large_to)
{
	long units = 0;

	for (int i = 0; i < nr; i++) {
		large_to[i] = 0;
		if (unit)
			units += large[i] / unit;
	}
	for (; units > 0; units--) {
		long best_cost = 0, best_room = 0;
		int best = -1, best_tier = 0;

		for (int i = 0; i < nr; i++) {
			long avail = goal[i] - fixed[i], given = large_to[i] / unit;
			long room = avail - large_to[i], cost;
			int tier = room < unit;

			if (room <= 0)
				continue;
			cost = split_cost(unit, base[i], large[i], avail, given + 1) -
			       split_cost(unit, base[i], large[i], avail, given);
			if (best < 0 || tier < best_tier ||
			    (tier == best_tier && (cost < best_cost || (cost == best_cost && room > best_room)))) {
				best = i;
				best_tier = tier;
				best_cost = cost;
				best_room = room;
			}
		}
		if (best < 0) {
			/* cannot happen: the goals add up to every page; leave the large folios be */
			for (int i = 0; i < nr; i++)
				large_to[i] = large[i];
			break;
		}
		large_to[best] += unit;
	}
	split_base(nr, base, fixed, goal, large_to, base_to);
}
