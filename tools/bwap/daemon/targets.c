// SPDX-License-Identifier: GPL-2.0
/*
 * bwapd's targets: registration (run, attach, cgroup), one sample at a
 * time into the tuner, the pushes with process_mpol_reweight, the waiters
 * on a search, and the status report.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "bwapd.h"
#include "../lib/mempolicy2.h"

char *weights_str(const struct bwap_weights *w, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < w->nr_nodes && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%u", i ? "," : "",
			      bwap_nodeset_has(w->nodes, i) ? w->w[i] : 0);
	return buf;
}

/* ---- targets ---------------------------------------------------------- */

/*
 * Answer the clients waiting on t: all of them (all != 0: the target is
 * gone), or those waiting for convergence (pushes == 0), or those whose
 * push count has been reached (pushes > 0).
 */
static void reply_waiters_if(struct target *t, int all, long pushes, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void reply_waiters_if(struct target *t, int all, long pushes, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n, kept = 0;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (int i = 0; i < t->nr_waiters; i++) {
		long want = t->waiter_pushes[i];

		if (all || (!pushes && !want) || (pushes && want && pushes >= want)) {
			send_reply(t->waiters[i], buf, n);
			close(t->waiters[i]);
		} else {
			t->waiters[kept] = t->waiters[i];
			t->waiter_pushes[kept++] = want;
		}
	}
	t->nr_waiters = kept;
}

static void refresh_comm(struct target *t);

void drop_target(struct target *t, const char *why)
{
	if (strcmp(why, "exited"))
		refresh_comm(t);
	logmsg("pid %d (%s): %s; dropped after %ld pushes (%ld pages moved)", t->pid, t->comm, why,
	       t->pushes, t->moved);
	reply_waiters_if(t, 1, 0, "ok\nexited pid %d: %s\n", t->pid, why);
	if (bwapd.damon_target == t)
		damon_backend_release(why);
	bwap_signal_close(&t->sig);
	if (t->protect_pid)
		bwap_signal_close(&t->psig);
	if (t->log)
		fclose(t->log);
	close(t->pidfd);
	memset(t, 0, sizeof(*t));
}

struct target *find_target(pid_t pid)
{
	struct target *t;

	for_each_target(t, i)
		if (t->pid == pid)
			return t;
	return NULL;
}

int targets_of_user(uid_t uid)
{
	struct target *t;
	int n = 0;

	for_each_target(t, i)
		n += t->uid == uid;
	return n;
}

/* A cleared target to fill: a dropped one, else a new one up to max_targets; NULL with err. */
static struct target *free_slot(char *err, size_t errlen)
{
	struct target **more;

	for (int i = 0; i < bwapd.nr_slots; i++)
		if (!bwapd.targets[i]->used)
			return bwapd.targets[i];
	if (bwapd.nr_slots >= bwapd.conf.max_targets) {
		snprintf(err, errlen, "bwapd already has %d targets, its max_targets (bwapd.conf); raise it there "
			 "and restart bwapd", bwapd.nr_slots);
		return NULL;
	}
	more = realloc(bwapd.targets, (bwapd.nr_slots + 1) * sizeof(*more));
	if (!more) {
		snprintf(err, errlen, "out of memory for target %d", bwapd.nr_slots + 1);
		return NULL;
	}
	bwapd.targets = more;
	more[bwapd.nr_slots] = calloc(1, sizeof(struct target));
	if (!more[bwapd.nr_slots]) {
		snprintf(err, errlen, "out of memory for target %d", bwapd.nr_slots + 1);
		return NULL;
	}
	return more[bwapd.nr_slots++];
}

/* A Slurm id from an attach request: 0 .. 2^32-1 (steps use the top values: batch, extern). */
static int slurm_id(const char *key, const char *val, long long *out, char *err, size_t errlen)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(val, &end, 10);
	if (val[0] < '0' || val[0] > '9' || *end || errno || v > 4294967295ULL) {
		snprintf(err, errlen, "%s '%s' is not a Slurm id (a whole number from 0 to 4294967295)", key, val);
		return -1;
	}
	*out = (long long)v;
	return 0;
}

/* "4242.3", "4242.batch": a step as Slurm prints it. */
static char *job_step_str(const struct target *t, char *buf, size_t len)
{
	static const char *const special[] = { "interactive", "batch", "extern", "pending" };

	if (t->step >= 0xfffffffaLL && t->step <= 0xfffffffdLL)
		snprintf(buf, len, "%lld.%s", t->job, special[t->step - 0xfffffffaLL]);
	else if (t->step >= 0)
		snprintf(buf, len, "%lld.%lld", t->job, t->step);
	else
		snprintf(buf, len, "%lld", t->job);
	return buf;
}

static int weights_at(struct target *t, double dwp, struct bwap_weights *w)
{
	*w = t->canon;
	if (dwp > 0)
		bwap_weights_apply_dwp(w, t->workers, dwp);
	bwap_weights_quantise(w, bwapd.conf.max_weight, 0.005);
	return 0;
}

/*
 * Portable mode's push: the target's pages go to the weights' exact shares
 * with move_pages (lib/place.c), moving the minimum.
 */
static int push_portable(struct target *t, double dwp, const char *why, const struct bwap_weights *w)
{
	struct bwap_place_stats st;
	char err[512], ws[256], b1[256] = "", b2[256] = "";
	size_t n1 = 0, n2 = 0;

	if (bwap_place_pages(t->pid, w, 0, &st, err, sizeof(err))) {
		logmsg("pid %d: placing pages for dwp %.3f (weights %s) failed: %s", t->pid, dwp,
		       weights_str(w, ws, sizeof(ws)), err);
		return kill(t->pid, 0) && errno == ESRCH ? -1 : 0;
	}
	bwap_signal_invalidate(&t->sig);
	if (t->protect_pid)
		bwap_signal_invalidate(&t->psig);
	t->pushes++;
	refresh_comm(t);
	t->moved += st.moved;
	t->not_moved += st.failed;
	t->pushed = *w;
	t->pushed_dwp = dwp;
	t->have_pushed = 1;
	for (int i = 0; i < st.nr_nodes; i++) {
		n1 += snprintf(b1 + n1, sizeof(b1) - n1, "%s%ld", i ? "," : "", st.after[i]);
		n2 += snprintf(b2 + n2, sizeof(b2) - n2, "%s%ld", i ? "," : "", st.target[i]);
	}
	logmsg("pid %d: push #%ld (%s) dwp %.3f weights %s: move_pages moved %ld of %ld pages (minimum %ld), "
	       "not moved %ld; pages now %s, shares %s; %ld large folio(s) of %ld pages, %ld moved whole%s%s%s",
	       t->pid, t->pushes, why, dwp, weights_str(w, ws, sizeof(ws)), st.moved, st.pages, st.minimum,
	       st.failed, b1, b2, st.large_folios, st.large_size, st.large_moved,
	       st.folios_known == BWAP_FOLIOS_ALL ? "" : " (folios not all known: ",
	       st.folios_known == BWAP_FOLIOS_ALL ? "" : st.why,
	       st.folios_known == BWAP_FOLIOS_ALL ? "" : "; the rest planned page by page)");
	reply_waiters_if(t, 0, t->pushes, "ok\npushed pid %d dwp %.3f pushes %ld moved %ld state %s weights %s\n",
			 t->pid, dwp, t->pushes, t->moved, t->cs.t.phase == BWAP_TUNER_SETTLED ? "settled" : "searching",
			 weights_str(&t->pushed, ws, sizeof(ws)));
	return 0;
}

/* ---- the DAMON backend ------------------------------------------------ */

const char *bwapd_backend_name(enum bwapd_backend b)
{
	return b == BWAPD_BACKEND_REWEIGHT ? "process_mpol_reweight" : b == BWAPD_BACKEND_DAMON ? "damon" :
	       "move_pages";
}

void damon_backend_probe(void)
{
	char why[512];

	bwapd.damon_usable = 0;
	if (!bwapd.conf.write_global_weights) {
		snprintf(bwapd.damon_why, sizeof(bwapd.damon_why),
			 "DAMON backend off: it writes the global weighted-interleave table, which every process with "
			 "a global weighted-interleave policy shares, and bwapd.conf has write_global_weights = no "
			 "(the default); set it to yes to allow it");
		return;
	}
	if (bwap_kernel_mode() != BWAP_KERNEL_STOCK_WI) {
		snprintf(bwapd.damon_why, sizeof(bwapd.damon_why),
			 "DAMON backend off: the kernel has no global weighted-interleave table (%s, Linux 6.9+)",
			 BWAP_SYSFS_WEIGHTS);
		return;
	}
	bwapd.damon_usable = bwap_damon_probe(why, sizeof(why));
	snprintf(bwapd.damon_why, sizeof(bwapd.damon_why), "DAMON backend %s: %.480s",
		 bwapd.damon_usable ? "available" : "off", why);
}

static void damon_mark_path(char *path, size_t len)
{
	bwap_state_path(bwapd.conf.state_dir, BWAPD_DAMON_MARK, path, len);
}

void damon_backend_clean_left(void)
{
	char path[4096], saved[4096], err[1024], *text;
	int kd = 0, pid = 0, r;

	damon_mark_path(path, sizeof(path));
	text = bwap_read_file(path, NULL);
	if (text) {
		if (sscanf(text, "%d %d", &kd, &pid) == 2) {
			r = bwap_damon_remove_left(kd, pid, err, sizeof(err));
			if (r > 0)
				logmsg("removed the kdamond a previous bwapd left (kdamond %d on pid %d)", kd, pid);
			else if (r < 0)
				logmsg("removing the kdamond a previous bwapd left (kdamond %d on pid %d) failed: %s; "
				       "check %s by hand", kd, pid, err, BWAP_DAMON_ADMIN);
		}
		free(text);
		unlink(path);
	}
	/* a bwapd that was killed left the global table as it wrote it */
	bwap_state_path(bwapd.conf.state_dir, BWAPD_SYSFS_SAVED, saved, sizeof(saved));
	if (!access(saved, F_OK)) {
		if (bwap_sysfs_weights_restore_as(bwapd.conf.state_dir, BWAPD_SYSFS_SAVED, err, sizeof(err)))
			logmsg("putting back the global weighted-interleave table a previous bwapd changed: %s", err);
		else
			logmsg("the global weighted-interleave table a previous bwapd changed is back as it was (%s)",
			       saved);
	}
}

void damon_backend_release(const char *why)
{
	struct target *t = bwapd.damon_target;
	char err[1024], path[4096];

	if (!t)
		return;
	damon_mark_path(path, sizeof(path));
	unlink(path);
	if (bwap_damon_stop(&bwapd.damon, err, sizeof(err)))
		logmsg("pid %d: DAMON: removing kdamond 0 failed: %s; check %s by hand", t->pid, err,
		       BWAP_DAMON_ADMIN);
	else
		logmsg("pid %d: DAMON: kdamond 0 off and removed (%s)", t->pid, why);
	if (bwap_sysfs_weights_restore_as(bwapd.conf.state_dir, BWAPD_SYSFS_SAVED, err, sizeof(err)))
		logmsg("pid %d: putting back the global weighted-interleave table failed: %s", t->pid, err);
	else
		logmsg("pid %d: the global weighted-interleave table is back as it was before bwapd wrote it",
		       t->pid);
	bwapd.damon_target = NULL;
	t->damon_push = 0;
}

/*
 * The target's anonymous mappings (those portable mode places) if every
 * one of them is under weighted interleave over the global table, as
 * numa_maps shows it; their number, 0 (why says which is not) or -1.
 */
static int global_wi_mappings(const struct target *t, struct bwap_range *r, int max, char *why, size_t len)
{
	char path[64], *text;
	int n = bwap_anon_mappings(t->pid, r, max, why, len);

	if (n < 0)
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/numa_maps", (int)t->pid);
	text = bwap_read_file(path, NULL);
	if (!text) {
		snprintf(why, len, "cannot read %s: %s", path, strerror(errno));
		return -1;
	}
	for (int i = 0; i < n; i++) {
		char key[32], *line, *eol;

		snprintf(key, sizeof(key), "%lx ", r[i].start);
		for (line = text; line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
			if (!strncmp(line, key, strlen(key)))
				break;
		if (!line)
			continue;	/* gone since maps was read */
		eol = strchrnul(line, '\n');
		if (strncmp(line + strlen(key), "weighted interleave", 19) ||
		    memmem(line, eol - line, " il_weights=", 12)) {
			snprintf(why, len, "its mapping at 0x%lx is not under weighted interleave over the global table "
				 "(numa_maps: %.*s); 'bwapctl run --global' or 'numactl -w' starts a program so",
				 r[i].start, (int)(strchrnul(line + strlen(key), ' ') - line - strlen(key)) + 24,
				 line + strlen(key));
			free(text);
			return 0;
		}
	}
	free(text);
	if (!n)
		snprintf(why, len, "it has no anonymous mapping yet");
	return n;
}

/* Which backend places t's pages now, and why (t->backend, t->backend_why); ranges for DAMON. */
static enum bwapd_backend choose_backend(struct target *t, struct bwap_range *r, int *nr)
{
	char why[512];
	enum bwapd_backend b = BWAPD_BACKEND_MOVE_PAGES;

	*nr = 0;
	/* a new target looks again: the administrator may have freed DAMON since */
	if (bwapd.portable_mode && !t->pushes && !bwapd.damon_usable && !bwapd.damon_target &&
	    bwapd.conf.write_global_weights) {
		damon_backend_probe();
		if (bwapd.damon_usable)
			logmsg("%s", bwapd.damon_why);
	}
	if (!bwapd.portable_mode) {
		b = BWAPD_BACKEND_REWEIGHT;
		snprintf(why, sizeof(why), "the kernel has the BWAP series");
	} else if (!bwapd.damon_usable) {
		snprintf(why, sizeof(why), "%s", bwapd.damon_why);
	} else if (bwapd.damon_target && bwapd.damon_target != t) {
		snprintf(why, sizeof(why), "DAMON and the global weighted-interleave table place pid %d's pages "
			 "(one target at a time: the table is one for all)", bwapd.damon_target->pid);
	} else {
		*nr = global_wi_mappings(t, r, BWAP_DAMON_MAX_RANGES, why, sizeof(why));
		if (*nr > 0) {
			b = BWAPD_BACKEND_DAMON;
			snprintf(why, sizeof(why), "stock kernel with DAMON weighted dests, write_global_weights = yes, "
				 "memory under weighted interleave over the global table");
		} else if (*nr == 0 || bwapd.damon_target == t) {
			char w2[512];

			snprintf(w2, sizeof(w2), "%s", why);
			snprintf(why, sizeof(why), "DAMON not used: %.490s", w2);
		}
	}
	if (b != t->backend || strcmp(why, t->backend_why) || !t->pushes)
		logmsg("pid %d: backend %s: %s", t->pid, bwapd_backend_name(b), why);
	t->backend = b;
	snprintf(t->backend_why, sizeof(t->backend_why), "%s", why);
	return b;
}

/* "a,b,c" of nr longs into buf */
static char *counts_str(const long *v, int nr, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < nr && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%ld", i ? "," : "", v[i]);
	return buf;
}

/* Where t's pages are and where DAMON's committed dests put them; pages off that layout, or -1. */
/*
 * The target's units (listed into l, which the caller frees), where they
 * are and where DAMON's committed dests put them; the pages off it, or -1.
 */
static long damon_layout(const struct target *t, struct bwap_unit_list *l, long *now, long *layout, char *err,
			 size_t errlen)
{
	int known;

	memset(now, 0, BWAP_MAX_NODES * sizeof(*now));
	memset(layout, 0, BWAP_MAX_NODES * sizeof(*layout));
	if (bwap_units_of(t->pid, bwapd.damon.range, bwapd.damon.nr_ranges, l, &known, err, errlen))
		return -1;
	return bwap_damon_layout(&bwapd.damon, bwapd.damon.range, bwapd.damon.nr_ranges, l, now, layout);
}

/*
 * After DAMON settled: log what the LRU-batch drain found and why pages
 * are still off DAMON's layout (lib/damon.c).  Nothing is moved behind
 * DAMON's back: the off pages count as not moved.  Returns off.
 */
static long damon_finish(struct target *t, long off)
{
	char why[1024];

	t->not_moved += off > 0 ? off : 0;
	bwap_damon_off_why(&bwapd.damon, off, why, sizeof(why));
	logmsg("pid %d: push #%ld: DAMON settled: %s", t->pid, t->damon_push, why);
	return off;
}

/*
 * The DAMON backend's push: w to the global table (so later faults follow
 * it) and as the dests weights of the target's kdamond (started at the
 * first push, then sent by commit), which moves the resident pages to w's
 * interleave layout over the next aggregation intervals; damon_tick()
 * says when it settled.  All or nothing: if DAMON takes nothing, the
 * table gets its old weights back.  0, or -1 with err (the caller falls
 * back to move_pages).
 */
static int push_damon(struct target *t, double dwp, const char *why, const struct bwap_weights *w,
		      const struct bwap_range *r, int nr, char *err, size_t errlen)
{
	struct bwap_weights old = *w;
	int oldw[BWAP_MAX_NODES], started = !bwapd.damon.on;
	char ws[256], e2[512];

	if (t->damon_push && bwapd.damon_target == t) {
		/* a phase change can come before DAMON placed the last push */
		struct bwap_damon_stats st;

		if (!bwap_damon_stats(&bwapd.damon, &st, e2, sizeof(e2))) {
			long moved = (st.sz_applied - bwapd.damon.applied_at_commit) / sysconf(_SC_PAGESIZE);

			t->moved += moved;
			logmsg("pid %d: push #%ld: superseded while DAMON was moving (%ld pages moved for it)", t->pid,
			       t->damon_push, moved);
		}
	}
	if (bwap_sysfs_weights_read(oldw, w->nr_nodes, w->nodes, err, errlen))
		return -1;
	for (int i = 0; i < w->nr_nodes; i++)
		old.w[i] = oldw[i];
	if (bwap_sysfs_weights_apply_as(w, bwapd.conf.state_dir, BWAPD_SYSFS_SAVED, err, errlen))
		return -1;
	if (bwapd.damon.on ? bwap_damon_commit(&bwapd.damon, r, nr, w, err, errlen) :
	    bwap_damon_start(&bwapd.damon, t->pid, r, nr, w, err, errlen)) {
		if (bwap_sysfs_weights_apply_as(&old, bwapd.conf.state_dir, BWAPD_SYSFS_SAVED, e2, sizeof(e2)))
			snprintf(err + strlen(err), errlen - strlen(err), "; and putting the global table back: %.200s", e2);
		else
			snprintf(err + strlen(err), errlen - strlen(err), "; the global table is back as it was");
		return -1;
	}
	if (started) {
		char path[4096];
		FILE *f;

		damon_mark_path(path, sizeof(path));
		f = fopen(path, "w");
		if (!f || fprintf(f, "%d %d\n", (int)bwapd.damon.kdamond_pid, (int)t->pid) < 0)
			logmsg("cannot write %s: %s; a bwapd killed now would leave kdamond %d to remove by hand",
			       path, strerror(errno), (int)bwapd.damon.kdamond_pid);
		if (f)
			fclose(f);
	}
	bwapd.damon_target = t;
	t->pushes++;
	t->damon_push = t->pushes;
	t->pushed = *w;
	t->pushed_dwp = dwp;
	t->have_pushed = 1;
	bwap_signal_invalidate(&t->sig);
	if (t->protect_pid)
		bwap_signal_invalidate(&t->psig);
	logmsg("pid %d: push #%ld (%s) %s%.3f weights %s: global table written, DAMON kdamond %d %s with these "
	       "dests over %d mapping(s); moving", t->pid, t->pushes, why, dwp >= 0 ? "dwp " : "phase ",
	       dwp >= 0 ? dwp : 0, weights_str(w, ws, sizeof(ws)), (int)bwapd.damon.kdamond_pid,
	       started ? "started" : "committed", nr);
	return 0;
}

/*
 * A DAMON push still moving: once a whole pass moved nothing, log what it
 * moved and where the pages are against DAMON's layout, answer the
 * waiters, and let the scheme idle.
 */
static void damon_tick(struct target *t)
{
	struct bwap_unit_list l = { 0 };
	long moved, now_[BWAP_MAX_NODES], layout[BWAP_MAX_NODES], off;
	char err[512], b1[256], b2[256], ws[256];
	int r;

	r = bwap_damon_settled(&bwapd.damon, &moved, err, sizeof(err));
	if (r == 0)
		return;
	if (r < 0) {
		logmsg("pid %d: DAMON: %s", t->pid, err);
		return;
	}
	t->moved += moved;
	bwap_signal_invalidate(&t->sig);
	off = damon_layout(t, &l, now_, layout, err, sizeof(err));
	if (off >= 0)
		off = damon_finish(t, off);
	bwap_unit_list_free(&l);
	if (off < 0) {
		logmsg("pid %d: push #%ld: DAMON moved %ld pages; counting them: %s", t->pid, t->damon_push, moved,
		       err);
	} else {
		struct bwap_place_stats st;
		char b3[256] = "?";

		/*
		 * The shares move_pages would meet, for comparison: DAMON sends
		 * a THP by its huge-page index, so memory of few THPs can end
		 * far from the weights' shares.
		 */
		if (!bwap_place_pages(t->pid, &t->pushed, 1, &st, err, sizeof(err)))
			counts_str(st.target, bwapd.matrix->nr_nodes, b3, sizeof(b3));
		logmsg("pid %d: push #%ld: DAMON moved %ld pages; pages now %s, DAMON's layout %s, %ld off it "
		       "(the weights' shares in folio units: %s)", t->pid, t->damon_push, moved,
		       counts_str(now_, bwapd.matrix->nr_nodes, b1, sizeof(b1)),
		       counts_str(layout, bwapd.matrix->nr_nodes, b2, sizeof(b2)), off, b3);
	}
	t->damon_push = 0;
	reply_waiters_if(t, 0, t->pushes, "ok\npushed pid %d dwp %.3f pushes %ld moved %ld state %s weights %s\n",
			 t->pid, t->pushed_dwp, t->pushes, t->moved,
			 t->cs.t.phase == BWAP_TUNER_SETTLED ? "settled" : "searching",
			 weights_str(&t->pushed, ws, sizeof(ws)));
	if (t->cs.t.phase == BWAP_TUNER_SETTLED && t->cs.stage == 2 && !t->nr_phases)
		reply_waiters_if(t, 0, 0, "ok\nconverged pid %d dwp %.3f pushes %ld moved %ld\n", t->pid,
				 t->cs.t.cur, t->pushes, t->moved);
}

static int push_weights(struct target *t, double dwp, const char *why, struct bwap_weights w);

static int push(struct target *t, double dwp, const char *why)
{
	struct bwap_weights w;

	weights_at(t, dwp, &w);
	return push_weights(t, dwp, why, w);
}

/*
 * Push weights w (for DWP dwp, or a phase's) and rebalance; -1 drops the
 * target.  The flags: MPOL_REWEIGHT_REBALANCE, as every push moves the
 * pages to the new shares; MPOL_REWEIGHT_GLOBAL, as a target placed with
 * the global weights (or one whose policy bwapd did not set) must be tuned
 * too, not left alone: its policies then own the pushed weights.  Not
 * MPOL_REWEIGHT_SHARED: bwapd tunes the target's own memory, and shared
 * memory (shmem, memfd, SysV) belongs to every process mapping it, as the
 * progress counter a target maps MAP_SHARED does; its policies and pages
 * are left alone (bwapd(8)).
 */
#define BWAPD_PUSH_FLAGS (MPOL_REWEIGHT_REBALANCE | MPOL_REWEIGHT_GLOBAL)
static int push_weights(struct target *t, double dwp, const char *why, struct bwap_weights w)
{
	struct bwap_pagedist d;
	long target[BWAP_MAX_NODES], expect = -1, before, after, ret;
	char err[1024], ws[256];

	if (bwapd.portable_mode) {
		struct bwap_range r[BWAP_DAMON_MAX_RANGES];
		int nr;

		if (choose_backend(t, r, &nr) == BWAPD_BACKEND_DAMON) {
			if (!push_damon(t, dwp, why, &w, r, nr, err, sizeof(err)))
				return 0;
			if (kill(t->pid, 0) && errno == ESRCH)
				return -1;
			logmsg("pid %d: DAMON push failed: %s; this push uses move_pages", t->pid, err);
			damon_backend_release("its push failed");
			t->backend = BWAPD_BACKEND_MOVE_PAGES;
			snprintf(t->backend_why, sizeof(t->backend_why), "the DAMON push failed: %.250s", err);
		}
		return push_portable(t, dwp, why, &w);
	}
	if (!t->pushes)
		choose_backend(t, NULL, &(int){ 0 });
	if (!bwap_pagedist_read(t->pid, bwapd.matrix->nr_nodes, &d, err, sizeof(err))) {
		unsigned char wb[BWAP_MAX_NODES] = { 0 };

		for (int i = 0; i < w.nr_nodes; i++)
			wb[i] = bwap_nodeset_has(w.nodes, i) ? w.w[i] : 0;
		expect = bwap_pagedist_targets(&d, wb, target);
		bwap_pagedist_free(&d);
	}
	before = bwap_vmstat_moved();
	ret = bwap_process_mpol_reweight(t->pidfd, &w, BWAPD_PUSH_FLAGS);
	after = bwap_vmstat_moved();
	bwap_signal_invalidate(&t->sig);
	if (t->protect_pid)
		bwap_signal_invalidate(&t->psig);
	if (ret < 0) {
		int e = errno;

		if (e == ESRCH)
			return -1;
		logmsg("pid %d: process_mpol_reweight(dwp %.3f, weights %s) failed: %s%s", t->pid, dwp,
		       weights_str(&w, ws, sizeof(ws)), strerror(e),
		       e == EPERM ? " (bwapd needs ptrace access to the target, and CAP_SYS_NICE for other users)" :
		       e == EINVAL ? " (weights outside the target's cpuset or nodemask?)" : "");
		return e == EPERM || e == EINVAL ? -2 : 0;
	}
	t->pushes++;
	refresh_comm(t);
	t->moved += after - before;
	t->not_moved += ret;
	t->pushed = w;
	t->pushed_dwp = dwp;
	t->have_pushed = 1;
	{
		char dtext[32];

		/* a phase's weights have no DWP */
		snprintf(dtext, sizeof(dtext), dwp >= 0 ? "dwp %.3f" : "phase", dwp);
		logmsg("pid %d: push #%ld (%s) %s weights %s: expected moves %ld, "
		       "vmstat mpol_rebalance_moved +%ld, not moved %ld", t->pid, t->pushes, why, dtext,
		       weights_str(&w, ws, sizeof(ws)), expect, after - before, ret);
	}
	if (getenv("BWAPD_DEBUG_PAGES")) {
		/* for tests: the pages per node after the push against the targets */
		char b1[256] = "", b2[256] = "";
		size_t n1 = 0, n2 = 0;

		if (!bwap_pagedist_read(t->pid, bwapd.matrix->nr_nodes, &d, err, sizeof(err))) {
			for (int i = 0; i < d.nr_nodes; i++) {
				n1 += snprintf(b1 + n1, sizeof(b1) - n1, "%s%ld", i ? "," : "", d.pages[i]);
				n2 += snprintf(b2 + n2, sizeof(b2) - n2, "%s%ld", i ? "," : "", target[i]);
			}
			bwap_pagedist_free(&d);
		}
		logmsg("pid %d: after push #%ld: pages %s, targets before the push %s", t->pid, t->pushes, b1, b2);
	}
	reply_waiters_if(t, 0, t->pushes, "ok\npushed pid %d dwp %.3f pushes %ld moved %ld state %s weights %s\n",
			 t->pid, dwp, t->pushes, t->moved, t->cs.t.phase == BWAP_TUNER_SETTLED ? "settled" : "searching",
			 weights_str(&t->pushed, ws, sizeof(ws)));
	return 0;
}

static int open_signal(struct target *t, struct bwap_signal *s, pid_t pid, enum bwap_signal_kind kind,
		       const char *progress, char *err, size_t errlen)
{
	struct bwap_signal_opts o = {
		.kind = kind, .ev = bwapd.stall_event, .progress_file = progress, .mc = bwapd.machine,
		.model_mlp = bwapd.conf.model_mlp, .model_shared = bwapd.conf.model_shared,
		.model_threads = bwapd.conf.model_threads, .model_refresh = bwapd.conf.model_refresh,
	};
	char note[256];

	if (bwap_signal_open(s, pid, t->workers, bwapd.matrix->nr_nodes, &o, note, sizeof(note), err, errlen))
		return -1;
	if (note[0]) {
		logmsg("pid %d: %s", pid, note);
		snprintf(t->note, sizeof(t->note), "%s", note);
	}
	return 0;
}

static bwap_nodeset workers_from_affinity(pid_t pid)
{
	cpu_set_t *set = CPU_ALLOC(BWAP_MAX_CPUS);
	size_t size = CPU_ALLOC_SIZE(BWAP_MAX_CPUS);
	bwap_nodeset w = 0;

	if (!set)
		return 0;
	if (!sched_getaffinity(pid, size, set))
		for (int n = 0; n < BWAP_MAX_NODES; n++)
			for (int c = 0; c < BWAP_MAX_CPUS && bwap_nodeset_has(bwapd.topo->has_cpu, n); c++)
				if (bwapd.topo->node[n].cpus[c] && CPU_ISSET_S(c, size, set))
					w |= BWAP_NODE_BIT(n);
	CPU_FREE(set);
	return w;
}

static void log_point(struct target *t)
{
	const struct bwap_tuner_point *p = &t->cs.t.hist[(t->cs.t.nr_points - 1) % BWAP_TUNER_MAX_HISTORY];

	if (t->log) {
		fprintf(t->log, "point %.6f %.9g %d %d%s\n", p->dwp, p->metric, p->search, p->settled,
			t->cs.stage == 1 ? " protect" : "");
		fflush(t->log);
	}
}

/*
 * The phase weights file 'bwapctl search --phases' writes: "NAME W0,W1,..."
 * per line.  0 or -1 (err).
 */
static int load_phase_weights(struct target *t, const char *path, char *err, size_t errlen)
{
	char *text = bwap_read_file(path, NULL), *save = NULL;

	if (!text) {
		snprintf(err, errlen, "phase-weights %s: %s", path, strerror(errno));
		return -1;
	}
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct bwap_weights *w = &t->phase_w[t->nr_phases];
		char name[32], list[512], *lsave = NULL;
		int n = 0;

		if (sscanf(line, "%31s %511s", name, list) != 2 || t->nr_phases == 8) {
			snprintf(err, errlen, "phase-weights %s: '%s' is not 'NAME W0,W1,...' (at most 8 phases)",
				 path, line);
			free(text);
			return -1;
		}
		memset(w, 0, sizeof(*w));
		w->nr_nodes = bwapd.matrix->nr_nodes;
		for (char *v = strtok_r(list, ",", &lsave); v; v = strtok_r(NULL, ",", &lsave), n++) {
			int x = atoi(v);

			if (n >= bwapd.matrix->nr_nodes || x < 0 || x > 255) {
				snprintf(err, errlen, "phase-weights %s: phase %s: weight '%s' for node %d is not 0..255 "
					 "or the machine has fewer nodes", path, name, v, n);
				free(text);
				return -1;
			}
			w->w[n] = x;
			if (x)
				w->nodes |= BWAP_NODE_BIT(n);
		}
		if (!w->nodes) {
			snprintf(err, errlen, "phase-weights %s: phase %s has no node with a weight", path, name);
			free(text);
			return -1;
		}
		snprintf(t->phase_name[t->nr_phases++], 32, "%s", name);
	}
	free(text);
	return 0;
}

/* The last complete line of the phase file, or "" if none. */
static void read_phase(const struct target *t, char *name, size_t len)
{
	char *text = bwap_read_file(t->phase_file, NULL), *end, *start;

	name[0] = 0;
	if (!text)
		return;
	end = strrchr(text, '\n');
	if (end) {
		*end = 0;
		start = strrchr(text, '\n');
		snprintf(name, len, "%s", start ? start + 1 : text);
	}
	free(text);
}

/* At a phase change: push that phase's weights (the kernel moves the minimum). */
static void phase_tick(struct target *t)
{
	char name[64], why[96];
	int k;

	read_phase(t, name, sizeof(name));
	if (!name[0])
		return;
	for (k = 0; k < t->nr_phases; k++)
		if (!strcmp(t->phase_name[k], name))
			break;
	if (k == t->nr_phases || k == t->cur_phase)
		return;
	t->cur_phase = k;
	t->phase_changes++;
	snprintf(why, sizeof(why), "phase %s", name);
	if (push_weights(t, -1, why, t->phase_w[k]) == -1)
		drop_target(t, "exited");
}

/* attach PID [workers SET] [signal KIND] [progress FILE] [protect PID] [how WORD]
 *            [phases FILE phase-weights FILE] */
int target_attach(pid_t pid, const char *args, char *err, size_t errlen)
{
	struct target *t = NULL;
	enum bwap_signal_kind kind = bwapd.conf.signal;
	char progress[256] = "", ws[256], key[32], val[256], path[512];
	bwap_nodeset workers = 0;
	double cap[BWAP_MAX_NODES];
	pid_t protect = 0;
	int pos = 0, n, r, kind_given = 0, mine;
	struct stat st;

	if (find_target(pid)) {
		snprintf(err, errlen, "pid %d is already a target", pid);
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d", pid);
	if (stat(path, &st)) {
		snprintf(err, errlen, "pid %d: no such process", pid);
		return -1;
	}
	mine = targets_of_user(st.st_uid);
	if (mine >= bwapd.conf.max_targets_per_user) {
		snprintf(err, errlen, "uid %u already has %d targets, its max_targets_per_user (bwapd.conf); pid %d "
			 "is not taken: let some end, or ask the administrator to raise the limit",
			 (unsigned int)st.st_uid, mine, pid);
		return -1;
	}
	t = free_slot(err, errlen);
	if (!t)
		return -1;
	memset(t, 0, sizeof(*t));
	t->uid = st.st_uid;
	t->job = t->step = t->task = -1;
	snprintf(t->how, sizeof(t->how), "attach");
	while (args && sscanf(args + pos, " %31s %255s%n", key, val, &n) == 2) {
		pos += n;
		if (!strcmp(key, "workers")) {
			if (bwap_nodeset_parse(val, &workers, err, errlen))
				return -1;
		} else if (!strcmp(key, "signal")) {
			if (bwap_signal_kind_parse(val, &kind)) {
				snprintf(err, errlen, "signal '%s': expected auto, perf, model or progress", val);
				return -1;
			}
			kind_given = 1;
		} else if (!strcmp(key, "progress")) {
			snprintf(progress, sizeof(progress), "%s", val);
			/* a target that reports progress is tuned on it, unless told otherwise */
			if (!kind_given)
				kind = BWAP_SIGNAL_PROGRESS;
		} else if (!strcmp(key, "protect")) {
			protect = atoi(val);
		} else if (!strcmp(key, "phases")) {
			snprintf(t->phase_file, sizeof(t->phase_file), "%s", val);
		} else if (!strcmp(key, "phase-weights")) {
			if (load_phase_weights(t, val, err, errlen))
				return -1;
		} else if (!strcmp(key, "how")) {
			snprintf(t->how, sizeof(t->how), "%.15s", val);
		} else if (!strcmp(key, "children")) {
			if (strcmp(val, "0") && strcmp(val, "1")) {
				snprintf(err, errlen, "children '%s': expected 0 or 1", val);
				return -1;
			}
			t->follow = val[0] == '1';
		} else if (!strcmp(key, "parent")) {
			t->parent = atoi(val);
		} else if (!strcmp(key, "job") || !strcmp(key, "step") || !strcmp(key, "task")) {
			long long id;

			if (slurm_id(key, val, &id, err, errlen))
				return -1;
			if (key[0] == 'j')
				t->job = id;
			else if (key[0] == 's')
				t->step = id;
			else
				t->task = (long)id;
		} else {
			snprintf(err, errlen, "unknown attach argument '%s'", key);
			return -1;
		}
	}
	if (!t->phase_file[0] != !t->nr_phases) {
		snprintf(err, errlen, "give phases FILE and phase-weights FILE together");
		return -1;
	}
	t->cur_phase = -1;
	t->pid = pid;
	t->pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (t->pidfd < 0) {
		snprintf(err, errlen, "pidfd_open(%d): %s", pid, errno == ESRCH ? "no such process" : strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	{
		char *c = bwap_read_file(path, NULL);

		snprintf(t->comm, sizeof(t->comm), "%s", c ? c : "?");
		t->comm[strcspn(t->comm, "\n")] = '\0';
		free(c);
	}
	if (!workers)
		workers = workers_from_affinity(pid);
	if (!workers) {
		snprintf(err, errlen, "cannot tell pid %d's worker nodes from its CPU affinity; give workers SET",
			 pid);
		goto fail;
	}
	t->workers = workers & bwapd.topo->has_cpu;
	/* the nodes its cpuset allows: the kernel would skip others, and their shares would be wrong */
	t->nodes = bwapd.topo->has_memory & (bwap_mems_allowed(pid) ? bwap_mems_allowed(pid) : ~0ULL);
	if (!t->nodes) {
		snprintf(err, errlen, "pid %d's cpuset allows no memory node of this machine", pid);
		goto fail;
	}
	if (bwap_canonical_capacity(bwapd.matrix, t->workers, t->nodes, cap, err, errlen) ||
	    bwap_weights_from_capacity(&t->canon, cap, bwapd.matrix->nr_nodes, t->nodes, err, errlen))
		goto fail;
	if (protect && !find_target(protect) && kill(protect, 0) && errno == ESRCH) {
		snprintf(err, errlen, "protected pid %d does not exist", protect);
		goto fail;
	}
	if (open_signal(t, &t->sig, pid, kind, progress[0] ? progress : NULL, err, errlen))
		goto fail;
	t->used = 1;
	bwap_cosched_init(&t->cs, &bwapd.conf.tuner, bwapd.conf.start_dwp, protect != 0);
	if (protect) {
		/*
		 * Co-scheduled mode, stage 1: raise the target's DWP while the
		 * protected process's signal improves; where it stops is the
		 * floor for stage 2, which tunes the target's own signal.
		 */
		if (open_signal(t, &t->psig, protect, kind == BWAP_SIGNAL_PROGRESS ? BWAP_SIGNAL_AUTO : kind,
				NULL, err, errlen)) {
			bwap_signal_close(&t->sig);
			t->used = 0;
			goto fail;
		}
		t->protect_pid = protect;
		if (t->sig.kind == BWAP_SIGNAL_MODEL)
			logmsg("pid %d: note: the model sees each process alone, so with the MODELLED signal "
			       "stage 1 cannot see interference and keeps the floor where it starts", pid);
	}
	snprintf(path, sizeof(path), "%s/search-%d.log", bwapd.conf.state_dir, pid);
	t->log = fopen(path, "w");
	if (t->log)
		fprintf(t->log, "# bwapd search log: pid %d (%s), workers %s\n# metric: %s\n", pid, t->comm,
			bwap_nodeset_format(t->workers, ws, sizeof(ws)), t->sig.label);
	logmsg("pid %d (%s): attached (%s), workers %s, signal: %s%s%s", pid, t->comm, t->how,
	       bwap_nodeset_format(t->workers, ws, sizeof(ws)), t->sig.label,
	       protect ? ", stage 1 protects pid " : "", protect ? (snprintf(val, sizeof(val), "%d", protect), val) : "");
	/*
	 * A Slurm task registers in task_init, before its exec, which
	 * discards every page it has now: reading and moving them (a push
	 * reads every resident page, and slurmstepd's child has its many)
	 * only made the attaches of a large job's start storm wait for each
	 * other past the task's bound.  Its first push comes at its first
	 * steady sample, after the exec; until then it shows the weights it
	 * starts at.
	 */
	if (!strcmp(t->how, "slurm")) {
		weights_at(t, t->cs.t.cur, &t->pushed);
		t->pushed_dwp = t->cs.t.cur;
		t->next = now() + bwapd.conf.tuner.interval;
		return 0;
	}
	r = push(t, t->cs.t.cur, "start");
	if (r < 0) {
		snprintf(err, errlen, r == -1 ? "pid %d exited" :
			 "the kernel refused the weights for pid %d (see bwapd's log)", pid);
		drop_target(t, "refused at start");
		return -1;
	}
	t->next = now() + bwapd.conf.tuner.interval;
	return 0;
fail:
	close(t->pidfd);
	memset(t, 0, sizeof(*t));
	return -1;
}

/* The name, again: 'bwapctl run' registers itself before it execs the program. */
static void refresh_comm(struct target *t)
{
	char path[64], *c;

	snprintf(path, sizeof(path), "/proc/%d/comm", t->pid);
	c = bwap_read_file(path, NULL);
	if (c) {
		c[strcspn(c, "\n")] = '\0';
		snprintf(t->comm, sizeof(t->comm), "%s", c);
		free(c);
	}
}

void sample_target(struct target *t, double tnow)
{
	struct bwap_signal *s = t->cs.stage == 1 ? &t->psig : &t->sig;
	enum bwap_tuner_action a;
	double v;
	char err[256];
	int r, stage = t->cs.stage;

	t->next = tnow + bwapd.conf.tuner.interval;
	if (t->damon_push && bwapd.damon_target == t)
		damon_tick(t);
	if (t->nr_phases) {
		/* phase mode: the weights come from the phase, not from the DWP search */
		if (kill(t->pid, 0) && errno == ESRCH) {
			drop_target(t, "exited");
			return;
		}
		phase_tick(t);
		return;
	}
	if (t->damon_push) {
		/* DAMON is still placing the last push: measure from where it ends */
		bwap_tuner_discard(&t->cs.t);
		return;
	}
	r = bwap_signal_sample(s, tnow, &v, err, sizeof(err));
	if (r < 0) {
		if (s == &t->psig) {
			logmsg("pid %d: protected pid %d is gone (%s); stage 2 starts at DWP %.3f", t->pid,
			       t->protect_pid, err, t->cs.t.cur);
			bwap_signal_close(&t->psig);
			bwap_cosched_end_stage1(&t->cs);
			if (push(t, t->cs.t.cur, "stage 2") == -1)
				drop_target(t, "exited");
			return;
		}
		drop_target(t, errno == ESRCH ? "exited" : err);
		return;
	}
	if (r > 0) {
		/* no value (target not running, still faulting in): this measurement starts over */
		t->skipped++;
		bwap_tuner_discard(&t->cs.t);
		return;
	}
	if (!t->placed) {
		/*
		 * The first steady sample: the start push may have come before
		 * the target faulted its memory in (bwapctl run registers before
		 * the exec), so place its pages once more and measure from there.
		 */
		t->placed = 1;
		bwap_tuner_discard(&t->cs.t);
		if (push(t, t->cs.t.cur, "steady") == -1)
			drop_target(t, "exited");
		return;
	}
	t->samples++;
	a = bwap_cosched_feed(&t->cs, v);
	if (a == BWAP_TUNER_SAMPLE)
		return;
	refresh_comm(t);
	if (stage == 1 && t->cs.stage == 2) {
		logmsg("pid %d: stage 1, measured protected pid %d: settled -> stage 1 done: the protected "
		       "process is best off at DWP >= %.3f; stage 2 tunes pid %d from there", t->pid,
		       t->protect_pid, t->cs.floor, t->pid);
		bwap_signal_close(&t->psig);
	} else {
		log_point(t);
		logmsg("pid %d: %smeasured at dwp %.3f: metric %.6g (best %.6g at %.3f) -> %s to %.3f", t->pid,
		       stage == 1 ? "stage 1, " : "",
		       t->cs.t.hist[(t->cs.t.nr_points - 1) % BWAP_TUNER_MAX_HISTORY].dwp, t->cs.t.last_metric,
		       t->cs.t.best_metric, t->cs.t.best_dwp, bwap_tuner_action_name(a), t->cs.t.cur);
	}
	r = push(t, t->cs.t.cur, stage != t->cs.stage ? "stage 2" : bwap_tuner_action_name(a));
	if (r == -1) {
		drop_target(t, "exited");
		return;
	}
	if (a == BWAP_TUNER_CONVERGED) {
		t->settled_once = 1;
		if (t->log) {
			fprintf(t->log, "settle %.6f %.9g %d\n", t->cs.t.best_dwp, t->cs.t.best_metric,
				t->cs.t.searches - 1);
			fflush(t->log);
		}
		/* DAMON's push is answered once it is placed (damon_tick()) */
		if (!t->damon_push)
			reply_waiters_if(t, 0, 0, "ok\nconverged pid %d dwp %.3f pushes %ld moved %ld\n", t->pid,
					 t->cs.t.cur, t->pushes, t->moved);
	}
}

/* ---- status ----------------------------------------------------------- */

double cpu_seconds(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

static const char *state_name(const struct target *t)
{
	if (t->cs.stage == 1)
		return "protect-stage1";
	return t->cs.t.phase == BWAP_TUNER_SETTLED ? "settled" : "searching";
}

/*
 * Why a target has nothing to tune, or "": bwapd moves only memory under
 * a weighted-interleave policy, which numa_maps lists as such.
 */
static const char *idle_reason(const struct target *t, const struct bwap_pagedist *d, int have_pages)
{
	if (have_pages && !d->total)
		return "no weighted-interleave memory: bwapd moves only memory under such a policy; start the "
		       "program with 'bwapctl run' or 'numactl -w', or give it one with set_mempolicy";
	return "";
}

static struct json_object *target_json(struct target *t, const unsigned char *wb, const long *tgt,
				       const struct bwap_pagedist *d, int have_pages, const char *idle)
{
	struct json_object *o = json_object_new_object(), *w = json_object_new_array(),
			   *pages = json_object_new_array();
	char buf[256];

	json_object_object_add(o, "pid", json_object_new_int(t->pid));
	json_object_object_add(o, "comm", json_object_new_string(t->comm));
	json_object_object_add(o, "how", json_object_new_string(t->how));
	json_object_object_add(o, "uid", json_object_new_int64(t->uid));
	json_object_object_add(o, "children", json_object_new_boolean(t->follow));
	if (t->parent)
		json_object_object_add(o, "parent", json_object_new_int(t->parent));
	if (t->job >= 0) {
		json_object_object_add(o, "job", json_object_new_int64(t->job));
		json_object_object_add(o, "step", t->step >= 0 ? json_object_new_int64(t->step) : NULL);
		json_object_object_add(o, "task", t->task >= 0 ? json_object_new_int64(t->task) : NULL);
		json_object_object_add(o, "job_step", json_object_new_string(job_step_str(t, buf, sizeof(buf))));
	}
	json_object_object_add(o, "workers",
			       json_object_new_string(bwap_nodeset_format(t->workers, buf, sizeof(buf))));
	json_object_object_add(o, "state", json_object_new_string(state_name(t)));
	json_object_object_add(o, "signal", json_object_new_string(t->sig.label));
	json_object_object_add(o, "modelled", json_object_new_boolean(t->sig.kind == BWAP_SIGNAL_MODEL));
	json_object_object_add(o, "note", json_object_new_string(t->note));
	json_object_object_add(o, "idle_reason", json_object_new_string(idle));
	json_object_object_add(o, "backend", json_object_new_string(bwapd_backend_name(t->backend)));
	json_object_object_add(o, "backend_reason", json_object_new_string(t->backend_why));
	json_object_object_add(o, "dwp", json_object_new_double(t->pushed_dwp));
	json_object_object_add(o, "best_dwp", json_object_new_double(t->cs.t.best_dwp));
	json_object_object_add(o, "best_metric", json_object_new_double(t->cs.t.best_metric));
	json_object_object_add(o, "last_metric", json_object_new_double(t->cs.t.last_metric));
	json_object_object_add(o, "searches", json_object_new_int(t->cs.t.searches));
	json_object_object_add(o, "measurements", json_object_new_int64(t->cs.t.nr_points));
	json_object_object_add(o, "pushes", json_object_new_int64(t->pushes));
	json_object_object_add(o, "pages_moved", json_object_new_int64(t->moved));
	json_object_object_add(o, "pages_not_moved", json_object_new_int64(t->not_moved));
	json_object_object_add(o, "protect_pid", json_object_new_int(t->protect_pid));
	json_object_object_add(o, "dwp_floor", json_object_new_double(t->cs.floor));
	for (int n = 0; n < bwapd.matrix->nr_nodes; n++) {
		struct json_object *p = json_object_new_object();

		json_object_array_add(w, json_object_new_int(wb[n]));
		json_object_object_add(p, "node", json_object_new_int(n));
		json_object_object_add(p, "target", json_object_new_int64(tgt[n]));
		json_object_object_add(p, "actual", json_object_new_int64(have_pages ? d->pages[n] : 0));
		json_object_array_add(pages, p);
	}
	json_object_object_add(o, "weights", w);
	json_object_object_add(o, "pages", pages);
	return o;
}

void status_print(FILE *f, int json, uid_t uid)
{
	double up = now() - bwapd.t_start, cpu = cpu_seconds();
	struct json_object *root = NULL, *list = NULL;
	struct target *t;
	int nr = 0, others = 0;
	char buf[256];

	/* a user sees their own processes; others' pids and commands are theirs */
	for_each_target(t, i) {
		nr++;
		others += uid != 0 && t->uid != uid;
	}
	if (json) {
		root = json_object_new_object();
		list = json_object_new_array();
		json_object_object_add(root, "pid", json_object_new_int(getpid()));
		json_object_object_add(root, "kernel", json_object_new_string(bwap_kernel_mode_name(bwap_kernel_mode())));
		json_object_object_add(root, "uptime_s", json_object_new_double(up));
		json_object_object_add(root, "cpu_s", json_object_new_double(cpu));
		json_object_object_add(root, "state_dir", json_object_new_string(bwapd.conf.state_dir));
		json_object_object_add(root, "matrix", json_object_new_string(bwapd.matrix->source));
		json_object_object_add(root, "samples", json_object_new_int(bwapd.conf.tuner.samples));
		json_object_object_add(root, "trim", json_object_new_int(bwapd.conf.tuner.trim));
		json_object_object_add(root, "interval_s", json_object_new_double(bwapd.conf.tuner.interval));
		json_object_object_add(root, "step", json_object_new_double(bwapd.conf.tuner.step));
		json_object_object_add(root, "stall_event",
				       bwapd.stall_event ? json_object_new_string(bwapd.stall_event->name) : NULL);
		json_object_object_add(root, "modelled_fallback", json_object_new_boolean(!bwapd.stall_event));
		json_object_object_add(root, "fallback_reason", json_object_new_string(bwapd.stall_fallback));
		json_object_object_add(root, "damon_backend", json_object_new_boolean(bwapd.damon_usable));
		json_object_object_add(root, "damon_reason", json_object_new_string(bwapd.portable_mode ?
						       bwapd.damon_why : "the kernel has the BWAP series"));
		json_object_object_add(root, "nr_targets", json_object_new_int(nr));
		json_object_object_add(root, "other_users_targets", json_object_new_int(others));
		json_object_object_add(root, "max_targets", json_object_new_int(bwapd.conf.max_targets));
		json_object_object_add(root, "max_targets_per_user", json_object_new_int(bwapd.conf.max_targets_per_user));
	} else {
		fprintf(f, "bwapd pid %d, up %.1f s, cpu %.3f s (%.2f%% of one core), %d target%s\n"
			   "kernel: %s\n"
			   "tuner: step %g, n=%d samples of t=%g s, trim c=%d, drift %g; matrix: %s\n",
			getpid(), up, cpu, up > 0 ? 100 * cpu / up : 0, nr, nr == 1 ? "" : "s",
			bwap_kernel_mode_name(bwap_kernel_mode()), bwapd.conf.tuner.step,
			bwapd.conf.tuner.samples, bwapd.conf.tuner.interval, bwapd.conf.tuner.trim, bwapd.conf.tuner.drift, bwapd.matrix->source);
		if (bwapd.stall_event)
			fprintf(f, "stall event: %s (MEASURED)\n", bwapd.stall_event->name);
		else
			fprintf(f, "stall event: none, FALLBACK TO MODELLED for signal = auto: %s\n", bwapd.stall_fallback);
		if (bwapd.portable_mode)
			fprintf(f, "damon: %s\n", bwapd.damon_why);
		fprintf(f, "limits: %d targets, %d per user\n", bwapd.conf.max_targets, bwapd.conf.max_targets_per_user);
		if (others)
			fprintf(f, "%d target%s of other users not shown\n", others, others == 1 ? "" : "s");
	}
	for (int i = 0; i < bwapd.nr_slots; i++) {
		struct target *t = bwapd.targets[i];
		struct bwap_pagedist d = { 0 };
		long tgt[BWAP_MAX_NODES] = { 0 };
		unsigned char wb[BWAP_MAX_NODES] = { 0 };
		int have_pages, counted;
		char err[512];
		const char *idle;

		if (!t->used || (uid != 0 && t->uid != uid))
			continue;
		refresh_comm(t);
		for (int n = 0; n < t->pushed.nr_nodes; n++)
			wb[n] = bwap_nodeset_has(t->pushed.nodes, n) ? t->pushed.w[n] : 0;
		if (bwapd.damon_target == t) {
			/* DAMON's goal: the interleave layout of the committed dests */
			struct bwap_unit_list l = { 0 };

			have_pages = damon_layout(t, &l, d.pages, tgt, err, sizeof(err)) >= 0;
			bwap_unit_list_free(&l);
			d.nr_nodes = bwapd.matrix->nr_nodes;
			for (int n = 0; n < d.nr_nodes; n++)
				d.total += d.pages[n];
			idle = have_pages && !d.total ? "no resident anonymous memory yet" : "";
			counted = have_pages;
			have_pages = 0;
		} else if (bwapd.portable_mode) {
			struct bwap_place_stats st;

			/* a dry run of the placement: where the pages are and their shares */
			have_pages = !bwap_place_pages(t->pid, &t->pushed, 1, &st, err, sizeof(err));
			d.nr_nodes = bwapd.matrix->nr_nodes;
			d.total = st.pages;
			memcpy(d.pages, st.before, sizeof(d.pages));
			memcpy(tgt, st.target, sizeof(st.target));
			idle = have_pages && !st.pages ? "no resident anonymous memory yet" : "";
			counted = have_pages;
			have_pages = 0;		/* nothing to free */
		} else {
			have_pages = !bwap_pagedist_read(t->pid, bwapd.matrix->nr_nodes, &d, err, sizeof(err));
			if (have_pages)
				bwap_pagedist_targets(&d, wb, tgt);
			idle = idle_reason(t, &d, have_pages);
			counted = have_pages;
		}
		if (json) {
			json_object_array_add(list, target_json(t, wb, tgt, &d, counted, idle));
		} else {
			fprintf(f, "\npid %d (%s, %s): workers %s, %s, DWP %.3f (best %.3f, metric %.6g), "
				   "search %d, %ld measurements, %ld pushes, %ld pages moved\n  signal: %s\n",
				t->pid, t->comm, t->how, bwap_nodeset_format(t->workers, buf, sizeof(buf)), state_name(t),
				t->pushed_dwp, t->cs.t.best_dwp, t->cs.t.best_metric, t->cs.t.searches,
				t->cs.t.nr_points, t->pushes, t->moved, t->sig.label);
			fprintf(f, "  backend: %s: %s%s\n", bwapd_backend_name(t->backend), t->backend_why,
				t->damon_push ? " (DAMON still moving)" : "");
			if (t->job >= 0)
				fprintf(f, "  slurm job %s task %ld\n", job_step_str(t, buf, sizeof(buf)), t->task);
			if (t->parent)
				fprintf(f, "  descendant of target %d\n", t->parent);
			else if (t->follow)
				fprintf(f, "  its descendants are targets too\n");
			if (idle[0])
				fprintf(f, "  hint: %s\n", idle);
			if (t->protect_pid)
				fprintf(f, "  protects pid %d, DWP floor %.3f\n", t->protect_pid, t->cs.floor);
			fprintf(f, "  %-6s %7s %10s %10s\n", "node", "weight", "target", "actual");
			for (int n = 0; n < bwapd.matrix->nr_nodes; n++)
				fprintf(f, "  %-6d %7u %10ld %10ld\n", n, wb[n], tgt[n], counted ? d.pages[n] : 0);
		}
		if (have_pages)
			bwap_pagedist_free(&d);
	}
	if (json) {
		json_object_object_add(root, "targets", list);
		fprintf(f, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_SPACED |
								   JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(root);
	}
}

/* ---- cgroup ----------------------------------------------------------- */

void scan_cgroup(void)
{
	char path[512], *text, *p, err[512];

	snprintf(path, sizeof(path), "%s/cgroup.procs", bwapd.conf.cgroup);
	text = bwap_read_file(path, NULL);
	if (!text) {
		static int warned;

		if (!warned++)
			logmsg("cannot read %s: %s (cgroup = should name a cgroup v2 directory)", path,
			       strerror(errno));
		return;
	}
	for (p = text; *p;) {
		pid_t pid = strtol(p, &p, 10);

		while (*p == '\n')
			p++;
		if (pid <= 0 || pid == getpid() || find_target(pid))
			continue;
		if (target_attach(pid, "how cgroup", err, sizeof(err)))
			logmsg("cgroup %s: pid %d not attached: %s", bwapd.conf.cgroup, pid, err);
	}
	free(text);
}


/* The children of every thread of pid, appended to kids (up to max); their number. */
static int children_of(pid_t pid, pid_t *kids, int n, int max)
{
	char path[64], *text, *p;
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	d = opendir(path);
	while (d && (de = readdir(d)) && n < max) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/children", pid, de->d_name);
		text = bwap_read_file(path, NULL);
		for (p = text; p && *p && n < max;) {
			long k = strtol(p, &p, 10);

			if (k > 0)
				kids[n++] = (pid_t)k;
			p += strspn(p, " \n");
		}
		free(text);
	}
	if (d)
		closedir(d);
	return n;
}

void follow_children(void)
{
	struct target *t;

	/* slots may be added while this runs: each new one is itself scanned later in the loop */
	for (int i = 0; i < bwapd.nr_slots; i++) {
		pid_t kids[256];
		char args[256], err[512], ws[128];
		int n;

		t = bwapd.targets[i];
		if (!t->used || !t->follow)
			continue;
		n = children_of(t->pid, kids, 0, 256);
		for (int k = 0; k < n; k++) {
			struct target *parent = bwapd.targets[i];	/* the array may move: look again */

			if (kids[k] == getpid() || find_target(kids[k]))
				continue;
			snprintf(args, sizeof(args), " how child parent %d workers %s children 1", parent->pid,
				 bwap_nodeset_format(parent->workers, ws, sizeof(ws)));
			if (parent->job >= 0)
				snprintf(args + strlen(args), sizeof(args) - strlen(args), " job %lld step %lld task %ld",
					 parent->job, parent->step < 0 ? 0 : parent->step, parent->task < 0 ? 0 : parent->task);
			if (target_attach(kids[k], args, err, sizeof(err)))
				logmsg("pid %d: descendant %d not followed: %s", parent->pid, kids[k], err);
		}
	}
}
