// SPDX-License-Identifier: GPL-2.0
/*
 * One DAMON kdamond driven through /sys/kernel/mm/damon/admin, for
 * bwapd's DAMON backend on stock kernels (Linux 6.17+: a DAMOS
 * migrate_hot scheme with weighted destinations, schemes/0/dests/).
 *
 * DAMON's weighted dests send each folio of the monitored regions to the
 * node the weighted-interleave pattern of the dests' weights picks for its
 * interleave index (7.3 mm/damon/vaddr.c, damos_va_migrate_dests_add()):
 * the layout a fresh fault of a VMA policy would give, folios already in
 * place left alone.  The kdamond is built once per target, and each new
 * set of weights (and the target's current regions) goes to it by
 * "commit".  Between pushes it does nothing: paused (contexts/0/pause,
 * Linux 7.3) where the kernel has the file, else turned off with its
 * sysfs tree kept for the next push's "on".
 *
 * Settings, and why:
 *  - sample_us 5 ms, aggr_us 100 ms (DAMON's defaults): a scheme applies
 *    once per aggregation interval, so a push starts moving within 100 ms;
 *    smaller costs a walk of every region more often while migrating.
 *  - update_us DAMON_NO_UPDATE_US: the vaddr update would rebuild the
 *    regions from every mapping ("three regions"), stack and libraries
 *    included; the regions are the target's mappings bwapd places, sent
 *    again at every commit.
 *  - nr_regions: DAMON's defaults, as a user leaves them; DAMON splits and
 *    merges the mappings as it likes.  Where the vaddr migration takes a
 *    THP's interleave index from the walk's address (7.3; the first patch
 *    of patches/damon-fixes-7.3), a THP of a mapping that does not start
 *    2 MiB aligned can go back and forth between two nodes while regions
 *    start inside it: bwap_damon_settled() stops waiting after
 *    BWAP_DAMON_MAX_PASSES passes that still moved pages.
 *  - every size, access count and age qualifies; no quota; watermarks
 *    off: every folio is looked at in every apply.
 * bwapd uses kdamond 0 only when no kdamond is configured: writing
 * nr_kdamonds rebuilds the whole kdamonds/ tree, so another program's
 * DAMON setup would be lost.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "bwap.h"

#define DAMON_NO_UPDATE_US "1000000000000000"	/* about 31 years */
#define KD "kdamonds/0"
#define CTX KD "/contexts/0"
#define SCHEME CTX "/schemes/0"

static const char *admin_dir(void)
{
	const char *d = getenv("BWAP_DAMON_ADMIN");	/* tests point this elsewhere */

	return d && *d ? d : BWAP_DAMON_ADMIN;
}

static void admin_path(char *path, size_t len, const char *rel)
{
	snprintf(path, len, "%s/%s", admin_dir(), rel);
}

/* Write one file under the admin directory; 0, or -1 with err saying which, what and why. */
static int damon_write(char *err, size_t errlen, const char *rel, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int damon_write(char *err, size_t errlen, const char *rel, const char *fmt, ...)
{
	char path[512], buf[64];
	va_list ap;
	int fd, len;

	va_start(ap, fmt);
	len = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	admin_path(path, sizeof(path), rel);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0 || write(fd, buf, len) != len) {
		int e = errno;

		snprintf(err, errlen, "writing '%s' to %s: %s", buf, path, strerror(e));
		if (fd >= 0)
			close(fd);
		errno = e;
		return -1;
	}
	close(fd);
	return 0;
}

static long damon_read(const char *rel)
{
	char path[512], buf[32];
	int fd, len;

	admin_path(path, sizeof(path), rel);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	buf[len] = '\0';
	return strtol(buf, NULL, 10);
}

int bwap_damon_probe(char *why, size_t len)
{
	char path[512], err[512];
	long n;

	admin_path(path, sizeof(path), "kdamonds/nr_kdamonds");
	if (access(path, F_OK)) {
		snprintf(why, len, "the kernel has no DAMON sysfs interface (%s: CONFIG_DAMON_SYSFS)", path);
		return 0;
	}
	if (access(path, W_OK)) {
		snprintf(why, len, "%s is not writable: DAMON needs root", path);
		return 0;
	}
	/* DAMON's modules that run a context exclusively keep sysfs kdamonds from starting (EBUSY) */
	for (int i = 0; i < 3; i++) {
		static const char *const mod[] = { "damon_stat", "damon_reclaim", "damon_lru_sort" };
		const char *md = getenv("BWAP_SYS_MODULE");	/* tests point this elsewhere */
		char buf[8] = "", param[512];
		FILE *f;

		snprintf(param, sizeof(param), "%s/%s/parameters/enabled", md && *md ? md : "/sys/module", mod[i]);
		f = fopen(param, "r");
		if (!f)
			continue;
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
		if (buf[0] == 'Y' || buf[0] == 'y' || buf[0] == '1') {
			snprintf(why, len, "DAMON is held exclusively by %s (%s is Y; Debian's kernels turn "
				 "damon_stat on), and no sysfs kdamond can start beside it; to let bwapd use DAMON, "
				 "turn it off: %s.enabled=N on the kernel command line, or echo N > %s", mod[i], param,
				 mod[i], param);
			return 0;
		}
	}
	n = damon_read("kdamonds/nr_kdamonds");
	if (n != 0) {
		snprintf(why, len, "DAMON is in use: %ld kdamond(s) set up by another program (%s); bwapd leaves "
			 "them alone", n, path);
		return 0;
	}
	/* weighted dests (6.17+): build a scheme, look for its dests/, take it down again */
	if (damon_write(err, sizeof(err), "kdamonds/nr_kdamonds", "1") ||
	    damon_write(err, sizeof(err), KD "/contexts/nr_contexts", "1") ||
	    damon_write(err, sizeof(err), CTX "/schemes/nr_schemes", "1")) {
		snprintf(why, len, "cannot set up a DAMON scheme: %s", err);
		damon_write(err, sizeof(err), "kdamonds/nr_kdamonds", "0");
		return 0;
	}
	admin_path(path, sizeof(path), SCHEME "/dests/nr_dests");
	n = access(path, F_OK);
	damon_write(err, sizeof(err), "kdamonds/nr_kdamonds", "0");
	if (n) {
		snprintf(why, len, "DAMON has no weighted migration destinations (%s: Linux 6.17+)", path);
		return 0;
	}
	snprintf(why, len, "DAMON with weighted migration destinations (migrate_hot, dests)");
	return 1;
}

/*
 * The regions DAMON gets: d's mappings, adjacent ones joined (DAMON wants
 * them sorted and apart).  Returns their number and their total size in
 * *span.
 */
static int damon_regions(const struct bwap_damon *d, struct bwap_range *r, unsigned long *span)
{
	unsigned long total = 0;
	int n = 0;

	for (int i = 0; i < d->nr_ranges; i++) {
		total += d->range[i].end - d->range[i].start;
		if (n && r[n - 1].end == d->range[i].start)
			r[n - 1].end = d->range[i].end;
		else
			r[n++] = d->range[i];
	}
	*span = total;
	return n;
}

/* The regions and dests of d into the staging files (read by "on" and "commit"). */
static int write_targets(const struct bwap_damon *d, char *err, size_t errlen)
{
	struct bwap_range r[BWAP_DAMON_MAX_RANGES];
	unsigned long span;
	int n = damon_regions(d, r, &span);
	char rel[128];

	if (damon_write(err, errlen, CTX "/targets/0/regions/nr_regions", "%d", n))
		return -1;
	for (int i = 0; i < n; i++) {
		/* checked by the kernel only at "on" and "commit" */
		snprintf(rel, sizeof(rel), CTX "/targets/0/regions/%d/start", i);
		if (damon_write(err, errlen, rel, "%lu", r[i].start))
			return -1;
		snprintf(rel, sizeof(rel), CTX "/targets/0/regions/%d/end", i);
		if (damon_write(err, errlen, rel, "%lu", r[i].end))
			return -1;
	}
	if (damon_write(err, errlen, SCHEME "/dests/nr_dests", "%d", d->nr_dests))
		return -1;
	for (int i = 0; i < d->nr_dests; i++) {
		snprintf(rel, sizeof(rel), SCHEME "/dests/%d/id", i);
		if (damon_write(err, errlen, rel, "%d", d->node[i]))
			return -1;
		snprintf(rel, sizeof(rel), SCHEME "/dests/%d/weight", i);
		if (damon_write(err, errlen, rel, "%u", d->weight[i]))
			return -1;
	}
	/* paused while idle, where the kernel can pause; running while a push moves */
	return d->can_pause ? damon_write(err, errlen, CTX "/pause", "%s", d->migrating ? "N" : "Y") : 0;
}

/* Fill d's dests from w: every node of w, in id order, with its weight. */
static void set_dests(struct bwap_damon *d, const struct bwap_weights *w)
{
	d->nr_dests = 0;
	for (int i = 0; i < w->nr_nodes; i++) {
		if (!bwap_nodeset_has(w->nodes, i))
			continue;
		d->node[d->nr_dests] = i;
		d->weight[d->nr_dests++] = w->w[i];
	}
}

static int set_ranges(struct bwap_damon *d, const struct bwap_range *r, int n, char *err, size_t errlen)
{
	if (n < 1 || n > BWAP_DAMON_MAX_RANGES) {
		snprintf(err, errlen, "%d mappings to place: DAMON's backend takes 1 to %d", n, BWAP_DAMON_MAX_RANGES);
		return -1;
	}
	memcpy(d->range, r, n * sizeof(*r));
	d->nr_ranges = n;
	return 0;
}

int bwap_damon_start(struct bwap_damon *d, pid_t pid, const struct bwap_range *r, int nr_ranges,
		     const struct bwap_weights *w, char *err, size_t errlen)
{
	struct bwap_damon_stats st;
	char e2[256], path[512];

	memset(d, 0, sizeof(*d));
	d->pid = pid;
	d->migrating = 1;
	set_dests(d, w);
	if (set_ranges(d, r, nr_ranges, err, errlen))
		return -1;
	if (damon_read("kdamonds/nr_kdamonds") != 0) {
		snprintf(err, errlen, "DAMON is in use by another program (kdamonds/nr_kdamonds is not 0)");
		return -1;
	}
	if (damon_write(err, errlen, "kdamonds/nr_kdamonds", "1") ||
	    damon_write(err, errlen, KD "/contexts/nr_contexts", "1") ||
	    damon_write(err, errlen, CTX "/operations", "vaddr") ||
	    damon_write(err, errlen, CTX "/monitoring_attrs/intervals/sample_us", "5000") ||
	    damon_write(err, errlen, CTX "/monitoring_attrs/intervals/aggr_us", "100000") ||
	    damon_write(err, errlen, CTX "/monitoring_attrs/intervals/update_us", DAMON_NO_UPDATE_US) ||
	    damon_write(err, errlen, CTX "/targets/nr_targets", "1") ||
	    damon_write(err, errlen, CTX "/targets/0/pid_target", "%d", (int)pid) ||
	    damon_write(err, errlen, CTX "/schemes/nr_schemes", "1") ||
	    damon_write(err, errlen, SCHEME "/apply_interval_us", "0") ||
	    damon_write(err, errlen, SCHEME "/access_pattern/sz/min", "0") ||
	    damon_write(err, errlen, SCHEME "/access_pattern/sz/max", "%lu", ~0UL) ||
	    damon_write(err, errlen, SCHEME "/access_pattern/nr_accesses/min", "0") ||
	    damon_write(err, errlen, SCHEME "/access_pattern/nr_accesses/max", "%u", ~0U) ||
	    damon_write(err, errlen, SCHEME "/access_pattern/age/min", "0") ||
	    damon_write(err, errlen, SCHEME "/access_pattern/age/max", "%u", ~0U) ||
	    damon_write(err, errlen, SCHEME "/quotas/ms", "0") ||
	    damon_write(err, errlen, SCHEME "/quotas/bytes", "0") ||
	    damon_write(err, errlen, SCHEME "/watermarks/metric", "none") ||
	    damon_write(err, errlen, SCHEME "/action", "migrate_hot"))
		goto undo;
	admin_path(path, sizeof(path), CTX "/pause");
	d->can_pause = !access(path, W_OK);
	if (write_targets(d, err, errlen))
		goto undo;
	if (damon_write(err, errlen, KD "/state", "on")) {
		if (errno == EBUSY)
			snprintf(err + strlen(err), errlen - strlen(err), " (a DAMON user that runs exclusively, such as "
				 "damon_stat, damon_reclaim or damon_lru_sort, holds DAMON)");
		goto undo;
	}
	d->kdamond_pid = damon_read(KD "/pid");
	if (d->kdamond_pid <= 0) {
		snprintf(err, errlen, "kdamond 0 has no pid after 'on'");
		goto undo;
	}
	d->on = 1;
	if (bwap_damon_stats(d, &st, err, errlen))
		goto undo;
	d->tried_at_commit = d->tried_seen = st.sz_tried;
	return 0;
undo:
	/* all or nothing: no half-built kdamond stays behind */
	damon_write(e2, sizeof(e2), KD "/state", "off");
	damon_write(e2, sizeof(e2), "kdamonds/nr_kdamonds", "0");
	return -1;
}

int bwap_damon_stats(struct bwap_damon *d, struct bwap_damon_stats *st, char *err, size_t errlen)
{
	if (damon_write(err, errlen, KD "/state", "update_schemes_stats"))
		return -1;
	st->sz_tried = damon_read(SCHEME "/stats/sz_tried");
	st->sz_applied = damon_read(SCHEME "/stats/sz_applied");
	st->nr_applied = damon_read(SCHEME "/stats/nr_applied");
	if (st->sz_tried < 0 || st->sz_applied < 0 || st->nr_applied < 0) {
		snprintf(err, errlen, "cannot read %s/" SCHEME "/stats/", admin_dir());
		return -1;
	}
	return 0;
}

/*
 * Send what d holds now to the kdamond: "commit" when it runs (paused or
 * not), "on" when it was turned off between pushes (no pause file).  On
 * failure the staging files get old's back, so a later commit sends no
 * half.
 */
static int commit(struct bwap_damon *d, const struct bwap_damon *old, char *err, size_t errlen)
{
	int running = damon_read(KD "/pid") > 0;
	char e2[256];

	if (!write_targets(d, err, errlen) && !damon_write(err, errlen, KD "/state", running ? "commit" : "on")) {
		if (!running)
			d->kdamond_pid = damon_read(KD "/pid");
		return 0;
	}
	*d = *old;
	if (write_targets(d, e2, sizeof(e2)))
		snprintf(err + strlen(err), errlen - strlen(err), "; putting back the committed values failed too: %s",
			 e2);
	return -1;
}

int bwap_damon_commit(struct bwap_damon *d, const struct bwap_range *r, int nr_ranges,
		      const struct bwap_weights *w, char *err, size_t errlen)
{
	struct bwap_damon old = *d;
	struct bwap_damon_stats st, before = { 0 };

	if (!d->on) {
		snprintf(err, errlen, "no kdamond running for pid %d", (int)d->pid);
		return -1;
	}
	/*
	 * A paused kdamond applies nothing, so pages moved from here on are
	 * this push's; a kdamond turned off starts again with zeroed stats.
	 */
	if (damon_read(KD "/pid") > 0 && bwap_damon_stats(d, &before, err, errlen))
		return -1;
	set_dests(d, w);
	if (set_ranges(d, r, nr_ranges, err, errlen)) {
		*d = old;
		return -1;
	}
	d->migrating = 1;
	d->drained = 0;
	d->batch_pages = 0;
	d->unsettled = 0;
	if (commit(d, &old, err, errlen))
		return -1;
	/*
	 * The passes from here on: "commit" returns once the kdamond took the
	 * new scheme, so every pass counted after it is the new one's.  The
	 * pages it moved count from before: it may apply before this read.
	 */
	if (bwap_damon_stats(d, &st, err, errlen))
		return -1;
	d->applied_at_commit = d->applied_seen = before.sz_applied;
	d->tried_at_commit = d->tried_seen = st.sz_tried;
	return 0;
}

/*
 * Drain every CPU's LRU batches: move_pages(2) with target nodes does,
 * before it looks at any page (lru_cache_disable()).  The one page asked
 * for is asked to stay where it is, so nothing moves.
 */
static void drain_lru_batches(const struct bwap_damon *d)
{
	void *page = (void *)d->range[0].start;
	int node = d->node[0], status = -1;

	if (!syscall(SYS_move_pages, d->pid, 1, &page, NULL, &status, 0) && status >= 0)
		node = status;
	syscall(SYS_move_pages, d->pid, 1, &page, &node, &status, 0);
}

/* Idle until the next push: paused where the kernel can, else off. */
static int idle(struct bwap_damon *d, const struct bwap_damon *old, char *err, size_t errlen)
{
	if (d->can_pause)
		return commit(d, old, err, errlen);
	return damon_write(err, errlen, KD "/state", "off");
}

int bwap_damon_settled(struct bwap_damon *d, long *moved, char *err, size_t errlen)
{
	struct bwap_range r[BWAP_DAMON_MAX_RANGES];
	struct bwap_damon_stats st;
	struct bwap_damon old = *d;
	unsigned long span;
	long page = sysconf(_SC_PAGESIZE);

	if (!d->migrating) {
		*moved = 0;
		return 1;
	}
	if (bwap_damon_stats(d, &st, err, errlen))
		return -1;
	damon_regions(d, r, &span);
	/* settled: a whole pass over the regions since the last look, and nothing moved in it */
	if (st.sz_applied != d->applied_seen || st.sz_tried < d->tried_seen + (long)span) {
		if (st.sz_applied != d->applied_seen)
			d->tried_seen = st.sz_tried;
		d->applied_seen = st.sz_applied;
		if (st.sz_tried < d->tried_at_commit + BWAP_DAMON_MAX_PASSES * (long)span)
			return 0;
		/* still moving after that many passes: pages going back and forth */
		d->unsettled = 1;
	} else if (!d->drained) {
		/*
		 * A pass moved nothing.  Folios in a per-CPU LRU batch cannot be
		 * isolated, and DAMON's vaddr migration does not drain the
		 * batches (7.3; the second patch of patches/damon-fixes-7.3
		 * drains the kdamond's CPU's): drain every CPU's and wait for
		 * one more quiet pass.  What DAMON moves in between were such
		 * folios.
		 */
		drain_lru_batches(d);
		d->drained = 1;
		d->applied_at_drain = st.sz_applied;
		d->tried_seen = st.sz_tried;
		return 0;
	}
	*moved = (st.sz_applied - d->applied_at_commit) / page;
	d->batch_pages = d->drained ? (st.sz_applied - d->applied_at_drain) / page : 0;
	d->migrating = 0;
	if (idle(d, &old, err, errlen))
		return -1;
	return 1;
}

int bwap_damon_stop(struct bwap_damon *d, char *err, size_t errlen)
{
	int ret = 0;

	if (!d->on)
		return 0;
	if (damon_read(KD "/pid") > 0)
		ret = damon_write(err, errlen, KD "/state", "off");
	if (damon_write(ret ? err + strlen(err) : err, ret ? errlen - strlen(err) : errlen,
			"kdamonds/nr_kdamonds", "0"))
		ret = -1;
	d->on = 0;
	return ret;
}

int bwap_damon_remove_left(pid_t kdamond_pid, pid_t target_pid, char *err, size_t errlen)
{
	long kd = damon_read(KD "/pid");

	/* only kdamond 0 as bwapd made it: the same kdamond, or the same target */
	if (damon_read("kdamonds/nr_kdamonds") != 1 ||
	    (kd != kdamond_pid && damon_read(CTX "/targets/0/pid_target") != target_pid))
		return 0;
	if (kd > 0 && damon_write(err, errlen, KD "/state", "off"))
		return -1;
	return damon_write(err, errlen, "kdamonds/nr_kdamonds", "0") ? -1 : 1;
}

/* The node d's committed dests put unit u of mappings r at; -1 if the dests' weights add to 0. */
static int layout_node(const struct bwap_damon *d, const struct bwap_range *r, const struct bwap_unit *u)
{
	unsigned long vm_start = r[u->vma - 1].start, ilx, order = 0, t;
	unsigned int total = 0;
	int i;

	for (i = 0; i < d->nr_dests; i++)
		total += d->weight[i];
	if (!total)
		return -1;
	if (u->whole && u->pages > 1)
		for (order = 0; (1L << order) < u->pages; order++)
			;
	/* an anonymous VMA's pgoff is its start's page number (not after mremap()) */
	ilx = ((vm_start / 4096) >> order) + (((u->addr - vm_start) / 4096) >> order);
	t = ilx % total;
	for (i = 0; i < d->nr_dests && t >= d->weight[i]; i++)
		t -= d->weight[i];
	return d->node[i];
}

int bwap_damon_layout(const struct bwap_damon *d, const struct bwap_range *r, int nr_ranges,
		      const struct bwap_unit_list *l, long *now, long *layout)
{
	long off = 0;

	for (long k = 0; k < l->n; k++) {
		const struct bwap_unit *u = &l->u[k];
		int node;

		if (u->node < 0 || u->node >= BWAP_MAX_NODES)
			continue;
		now[u->node] += u->pages;
		node = layout_node(d, r, u);
		if (node < 0) {
			layout[u->node] += u->pages;
			continue;
		}
		layout[node] += u->pages;
		off += node != u->node ? u->pages : 0;
	}
	return off;
}

int bwap_damon_off_why(const struct bwap_damon *d, long off, char *buf, size_t len)
{
	int n = 0;

	if (d->batch_pages)
		n += snprintf(buf + n, len - n, "%ld pages moved only after bwapd drained every CPU's LRU batches (this "
			      "kernel's DAMON does not drain them before isolating); ", d->batch_pages);
	if (d->unsettled)
		snprintf(buf + n, len - n, "DAMON still moved pages after %d passes (THPs of a mapping that does not "
			 "start 2 MiB aligned go back and forth where DAMON takes a THP's interleave index from the "
			 "walk's address); bwapd stopped waiting, %ld pages off its layout", BWAP_DAMON_MAX_PASSES, off);
	else if (off > 0)
		snprintf(buf + n, len - n, "%ld pages off its layout, left where they are: not in an LRU batch "
			 "(drained after a quiet pass), so DAMON's allocation on the destination node failed (it "
			 "allocates with GFP_NOWAIT and __GFP_THISNODE), or the folio was pinned or busy, or it was "
			 "faulted after DAMON's last pass", off);
	else
		snprintf(buf + n, len - n, "no page off its layout");
	return 0;
}
