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
#include <sys/statfs.h>
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

/* Each attach's own number: a push that finishes later finds whether its target is still there. */
static unsigned long generation;

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
			t->waiter_uid[kept] = t->waiter_uid[i];
			t->waiter_deadline[kept] = t->waiter_deadline[i];
			t->waiter_pushes[kept++] = want;
		}
	}
	t->nr_waiters = kept;
}

int waiters_of_user(uid_t uid)
{
	struct target *t;
	int n = 0;

	for_each_target(t, i)
		for (int k = 0; k < t->nr_waiters; k++)
			n += t->waiter_uid[k] == uid;
	return n;
}

/* Answer the waits past wait_timeout with an error; the earliest deadline left. */
double expire_waiters(double tnow)
{
	static const char msg[] = "error: the wait timed out (bwapd.conf wait_timeout); ask again\n";
	double due = tnow + 3600;
	struct target *t;

	for_each_target(t, i) {
		int kept = 0;

		for (int k = 0; k < t->nr_waiters; k++) {
			if (tnow >= t->waiter_deadline[k]) {
				send_reply(t->waiters[k], msg, sizeof(msg) - 1);
				close(t->waiters[k]);
				continue;
			}
			if (t->waiter_deadline[k] < due)
				due = t->waiter_deadline[k];
			t->waiters[kept] = t->waiters[k];
			t->waiter_uid[kept] = t->waiter_uid[k];
			t->waiter_deadline[kept] = t->waiter_deadline[k];
			t->waiter_pushes[kept++] = t->waiter_pushes[k];
		}
		t->nr_waiters = kept;
	}
	return due;
}

static void refresh_comm(struct target *t);
static unsigned long long start_time(pid_t pid);

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
	if (t->log) {
		char path[512];

		fclose(t->log);
		if (!bwapd.conf.keep_search_logs) {
			snprintf(path, sizeof(path), "%s/search-%d.log", bwapd.conf.state_dir, t->pid);
			unlink(path);
		}
	}
	if (t->phase_fd >= 0)
		close(t->phase_fd);
	close(t->pidfd);
	memset(t, 0, sizeof(*t));
	targets_changed();
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

/* Slurm's named steps, in the order of their ids from SLURM_STEP_SPECIAL_FIRST on */
#define SLURM_STEP_SPECIAL_FIRST 0xfffffffaLL
static const char *const slurm_special_steps[] = { "interactive", "batch", "extern", "pending" };

/* "4242.3", "4242.batch": a step as Slurm prints it. */
static char *job_step_str(const struct target *t, char *buf, size_t len)
{
	if (t->step >= SLURM_STEP_SPECIAL_FIRST && t->step <= SLURM_STEP_SPECIAL_FIRST + 3)
		snprintf(buf, len, "%lld.%s", t->job, slurm_special_steps[t->step - SLURM_STEP_SPECIAL_FIRST]);
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
 * process_mpol_reweight's flags for a push: MPOL_REWEIGHT_REBALANCE, as every push moves the
 * pages to the new shares; MPOL_REWEIGHT_GLOBAL, as a target placed with
 * the global weights (or one whose policy bwapd did not set) must be tuned
 * too, not left alone: its policies then own the pushed weights.  Not
 * MPOL_REWEIGHT_SHARED: bwapd tunes the target's own memory, and shared
 * memory (shmem, memfd, SysV) belongs to every process mapping it, as the
 * progress counter a target maps MAP_SHARED does; its policies and pages
 * are left alone (bwapd(8)).
 */
#define BWAPD_PUSH_FLAGS (MPOL_REWEIGHT_REBALANCE | MPOL_REWEIGHT_GLOBAL)
/*
 * The same on a kernel with the series' parts 1-2 (bwapd.user_moves),
 * which refuses MPOL_REWEIGHT_REBALANCE with EINVAL: the call sets the
 * weights only, so that later faults follow them, and the worker then
 * moves the resident pages with move_pages (worker.c).
 */
#define BWAPD_PUSH_FLAGS_USER_MOVES MPOL_REWEIGHT_GLOBAL

/*
 * Queue a push of w for the worker thread (worker.c): a portable
 * placement with move_pages, or process_mpol_reweight.  If one is already
 * on its way, w waits as the pending push (the newest wins) and goes when
 * that one is done.  0, or -1 (out of memory: this push is skipped).
 */
static int queue_push(struct target *t, enum push_job_kind kind, double dwp, const char *why,
		      const struct bwap_weights *w, int after)
{
	struct push_job *j;

	if (t->busy) {
		t->have_pending = 1;
		t->pending_w = *w;
		t->pending_dwp = dwp;
		t->pending_after = after;
		snprintf(t->pending_why, sizeof(t->pending_why), "%s", why);
		return 0;
	}
	j = calloc(1, sizeof(*j));
	if (!j || (j->pidfd = fcntl(t->pidfd, F_DUPFD_CLOEXEC, 0)) < 0) {
		logmsg("pid %d: push (%s) skipped: %s", t->pid, why, j ? strerror(errno) : "out of memory");
		free(j);
		return -1;
	}
	j->t = t;
	j->gen = t->gen;
	j->kind = kind;
	j->pid = t->pid;
	j->nr_nodes = bwapd.matrix->nr_nodes;
	j->w = *w;
	j->flags = bwapd.user_moves ? BWAPD_PUSH_FLAGS_USER_MOVES : BWAPD_PUSH_FLAGS;
	j->dwp = dwp;
	j->after = after;
	snprintf(j->why, sizeof(j->why), "%s", why);
	t->busy = 1;
	worker_queue(j);
	return 0;
}

static void keep_counts(struct target *t, const struct push_job *j)
{
	if (!j->have_counts)
		return;
	memcpy(t->cnt_now, j->now, sizeof(t->cnt_now));
	memcpy(t->cnt_target, j->target, sizeof(t->cnt_target));
	t->cnt_total = j->total;
	t->cnt_time = now();
	t->have_counts = 1;
}

/* The push as the log tells it: "dwp 0.300" or "phase" (a phase's weights have no DWP). */
static const char *dwp_text(double dwp, char *buf, size_t len)
{
	snprintf(buf, len, dwp >= 0 ? "dwp %.3f" : "phase", dwp);
	return buf;
}

/*
 * A finished move_pages placement, after how ("" in portable mode, or
 * "process_mpol_reweight set them, then " on parts 1-2); -1 if the target
 * is gone.
 */
static int placed(struct target *t, const struct push_job *j, const char *how)
{
	const struct bwap_place_stats *st = &j->st;
	char ws[256], b1[256] = "", b2[256] = "", b3[128], dt[32];
	size_t n1 = 0, n2 = 0;

	if (j->rc) {
		logmsg("pid %d: placing pages for %s (weights %s) failed: %s%s", t->pid, dwp_text(j->dwp, dt, sizeof(dt)),
		       weights_str(&j->w, ws, sizeof(ws)), j->err, how[0] ?
		       " (process_mpol_reweight had set the weights: new pages follow them)" : "");
		return j->gone ? -1 : 0;
	}
	t->pushes++;
	refresh_comm(t);
	t->moved += st->moved;
	t->not_moved += st->failed;
	for (int i = 0; i < st->nr_nodes; i++) {
		n1 += snprintf(b1 + n1, sizeof(b1) - n1, "%s%ld", i ? "," : "", st->after[i]);
		n2 += snprintf(b2 + n2, sizeof(b2) - n2, "%s%ld", i ? "," : "", st->target[i]);
	}
	logmsg("pid %d: push #%ld (%s) %s weights %s: %smove_pages moved %ld of %ld pages (minimum %ld), "
	       "not moved %ld; pages now %s, shares %s; %ld large folio(s) of %ld pages, %ld moved whole%s%s%s%s",
	       t->pid, t->pushes, j->why, dwp_text(j->dwp, dt, sizeof(dt)), weights_str(&j->w, ws, sizeof(ws)),
	       how, st->moved, st->pages, st->minimum, st->failed, b1, b2, st->large_folios, st->large_size,
	       st->large_moved, st->folios_known == BWAP_FOLIOS_ALL ? "" : " (folios not all known: ",
	       st->folios_known == BWAP_FOLIOS_ALL ? "" : st->why,
	       st->folios_known == BWAP_FOLIOS_ALL ? "" : "; the rest planned page by page)",
	       st->kept_mappings ? (snprintf(b3, sizeof(b3), "; %ld mapping(s) under the program's own bind, prefer "
				       "or local policy left alone", st->kept_mappings), b3) : "");
	return 0;
}

/* ---- the DAMON backend ------------------------------------------------ */

const char *bwapd_backend_name(enum bwapd_backend b)
{
	return b == BWAPD_BACKEND_REWEIGHT ? "process_mpol_reweight" : b == BWAPD_BACKEND_DAMON ? "damon" :
	       b == BWAPD_BACKEND_REWEIGHT_USER ? "process_mpol_reweight+move_pages" :
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
	if (!bwapd.portable_mode && bwapd.user_moves) {
		b = BWAPD_BACKEND_REWEIGHT_USER;
		snprintf(why, sizeof(why), "the kernel has the BWAP series without its rebalance (%s): "
			 "process_mpol_reweight sets the weights, move_pages moves the pages",
			 bwap_rebalance_name(bwap_kernel_rebalance()));
	} else if (!bwapd.portable_mode) {
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
		/* status shows these: DAMON's goal is the interleave layout of the committed dests */
		memcpy(t->cnt_now, now_, sizeof(t->cnt_now));
		memcpy(t->cnt_target, layout, sizeof(t->cnt_target));
		t->cnt_total = 0;
		for (int n = 0; n < bwapd.matrix->nr_nodes; n++)
			t->cnt_total += now_[n];
		t->cnt_time = now();
		t->have_counts = 1;
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

static int push_weights(struct target *t, double dwp, const char *why, struct bwap_weights w, int after);

/*
 * Push the weights of DWP dwp.  Returns 1 when the push went to the
 * worker (its result comes through push_done()), 0 when it is done
 * already (DAMON), -1 when the target is gone.
 */
static int push(struct target *t, double dwp, const char *why, int after)
{
	struct bwap_weights w;

	weights_at(t, dwp, &w);
	return push_weights(t, dwp, why, w, after);
}

/*
 * Push weights w (for DWP dwp, or a phase's, dwp < 0).  The work (a
 * placement, a rebalance) runs on the worker thread; only the DAMON
 * backend's push, a few sysfs writes, runs here.  As push().
 */
static int push_weights(struct target *t, double dwp, const char *why, struct bwap_weights w, int after)
{
	if (bwapd.portable_mode) {
		struct bwap_range r[BWAP_DAMON_MAX_RANGES];
		char err[1024];
		int nr;

		if (!t->busy && choose_backend(t, r, &nr) == BWAPD_BACKEND_DAMON) {
			if (!push_damon(t, dwp, why, &w, r, nr, err, sizeof(err)))
				return 0;
			if (kill(t->pid, 0) && errno == ESRCH)
				return -1;
			logmsg("pid %d: DAMON push failed: %s; this push uses move_pages", t->pid, err);
			damon_backend_release("its push failed");
			t->backend = BWAPD_BACKEND_MOVE_PAGES;
			snprintf(t->backend_why, sizeof(t->backend_why), "the DAMON push failed: %.250s", err);
		}
		return queue_push(t, PUSH_JOB_PLACE, dwp, why, &w, after) ? 0 : 1;
	}
	if (!t->pushes && !t->busy)
		choose_backend(t, NULL, &(int){ 0 });
	return queue_push(t, PUSH_JOB_REWEIGHT, dwp, why, &w, after) ? 0 : 1;
}

/* A finished process_mpol_reweight push; -1 if the target is gone, -2 if the kernel refused it. */
static int reweighted(struct target *t, const struct push_job *j)
{
	char ws[256], dt[32];

	/* parts 1-2: the call set the weights (no rebalance); move_pages moved the pages after it */
	if (j->placed)
		return placed(t, j, "process_mpol_reweight set them (MPOL_REWEIGHT_GLOBAL), then ");
	if (j->rc) {
		int e = j->errnum;

		if (e == ESRCH)
			return -1;
		logmsg("pid %d: process_mpol_reweight(%s, weights %s) failed: %s%s", t->pid,
		       dwp_text(j->dwp, dt, sizeof(dt)), weights_str(&j->w, ws, sizeof(ws)), strerror(e),
		       e == EPERM ? " (bwapd needs ptrace access to the target, and CAP_SYS_NICE for other users)" :
		       e == EINVAL ? " (weights outside the target's cpuset or nodemask?)" : "");
		return e == EPERM || e == EINVAL ? -2 : 0;
	}
	t->pushes++;
	refresh_comm(t);
	t->moved += j->vm_after - j->vm_before;
	t->not_moved += j->ret;
	logmsg("pid %d: push #%ld (%s) %s weights %s: expected moves %ld, "
	       "vmstat mpol_rebalance_moved +%ld, not moved %ld", t->pid, t->pushes, j->why,
	       dwp_text(j->dwp, dt, sizeof(dt)), weights_str(&j->w, ws, sizeof(ws)), j->expect,
	       j->vm_after - j->vm_before, j->ret);
	if (getenv("BWAPD_DEBUG_PAGES") && j->have_counts) {
		/* for tests: the pages per node after the push against the targets */
		char b1[256], b2[256];

		logmsg("pid %d: after push #%ld: pages %s, targets before the push %s", t->pid, t->pushes,
		       counts_str(j->now, j->nr_nodes, b1, sizeof(b1)),
		       counts_str(j->before_target, j->nr_nodes, b2, sizeof(b2)));
	}
	return 0;
}

/*
 * A push the worker finished: its counts and log line, the waiters it
 * answers, the pending push it lets go.  The target may have been dropped
 * (or its slot reused) meanwhile: then the result only closes the pidfd.
 */
void push_done(struct push_job *j)
{
	struct target *t = j->t;
	char ws[256];
	int r;

	close(j->pidfd);
	if (!t->used || t->gen != j->gen) {
		logmsg("pid %d: a push (%s) finished after the target was dropped, in %.3f s", j->pid, j->why,
		       j->seconds);
		free(j);
		return;
	}
	t->busy = 0;
	bwapd.stats.push_seconds += j->seconds;
	if (j->seconds > bwapd.stats.push_seconds_max)
		bwapd.stats.push_seconds_max = j->seconds;
	{
		long moved = t->moved;

		r = j->kind == PUSH_JOB_PLACE ? placed(t, j, "") : reweighted(t, j);
		if (!j->rc) {
			bwapd.stats.pushes++;
			bwapd.stats.pages_moved += t->moved - moved;
		}
	}
	bwap_signal_invalidate(&t->sig);
	if (t->protect_pid)
		bwap_signal_invalidate(&t->psig);
	if (r < 0) {
		drop_target(t, r == -1 ? "exited" : "the kernel refused its weights (see the log)");
		free(j);
		return;
	}
	if (!j->rc) {
		t->pushed = j->w;
		t->pushed_dwp = j->dwp;
		t->have_pushed = 1;
		keep_counts(t, j);
		reply_waiters_if(t, 0, t->pushes, "ok\npushed pid %d dwp %.3f pushes %ld moved %ld state %s weights %s\n",
				 t->pid, j->dwp, t->pushes, t->moved,
				 t->cs.t.phase == BWAP_TUNER_SETTLED ? "settled" : "searching",
				 weights_str(&t->pushed, ws, sizeof(ws)));
	}
	if (j->after == PUSH_AFTER_CONVERGED)
		reply_waiters_if(t, 0, 0, "ok\nconverged pid %d dwp %.3f pushes %ld moved %ld\n", t->pid,
				 t->cs.t.cur, t->pushes, t->moved);
	free(j);
	if (t->have_pending) {
		t->have_pending = 0;
		if (push_weights(t, t->pending_dwp, t->pending_why, t->pending_w, t->pending_after) == -1)
			drop_target(t, "exited");
	}
}

static int open_signal(struct target *t, struct bwap_signal *s, pid_t pid, enum bwap_signal_kind kind,
		       int progress_fd, char *err, size_t errlen)
{
	struct bwap_signal_opts o = {
		.kind = kind, .ev = bwapd.stall_event, .progress_fd = progress_fd, .mc = bwapd.machine,
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

/* Up to len - 1 bytes of fd from off, NUL-terminated; the count, or -1. */
static ssize_t pread_text(int fd, char *buf, size_t len, off_t off)
{
	size_t n = 0;

	while (n < len - 1) {
		ssize_t got = pread(fd, buf + n, len - 1 - n, off + n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return -1;
		if (!got)
			break;
		n += got;
	}
	buf[n] = '\0';
	return n;
}

/*
 * The phase weights 'bwapctl search --phases' writes, from the file the
 * client passed: "NAME W0,W1,..." per line.  An error names the line by
 * its number, never by its text: the file is the client's, but an answer
 * that echoes what it read is how a root daemon leaks a file.  0 or -1.
 */
static int load_phase_weights(struct target *t, int fd, char *err, size_t errlen)
{
	char *text = malloc(64 << 10), *save = NULL;
	int lineno = 0;

	if (!text || pread_text(fd, text, 64 << 10, 0) < 0) {
		snprintf(err, errlen, "phase-weights: %s", text ? strerror(errno) : "out of memory");
		free(text);
		return -1;
	}
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct bwap_weights *w = &t->phase_w[t->nr_phases];
		char name[32], list[512], *lsave = NULL, *end;
		int n = 0;

		lineno++;
		if (sscanf(line, "%31s %511s", name, list) != 2 || t->nr_phases == 8) {
			snprintf(err, errlen, "phase-weights: line %d is not 'NAME W0,W1,...' (at most 8 phases)",
				 lineno);
			free(text);
			return -1;
		}
		memset(w, 0, sizeof(*w));
		w->nr_nodes = bwapd.matrix->nr_nodes;
		for (char *v = strtok_r(list, ",", &lsave); v; v = strtok_r(NULL, ",", &lsave), n++) {
			long x;

			errno = 0;
			x = strtol(v, &end, 10);
			if (n >= bwapd.matrix->nr_nodes || errno || end == v || *end || x < 0 || x > 255) {
				snprintf(err, errlen, "phase-weights: line %d: weight %d is not a whole number 0..255, "
					 "or the machine has fewer nodes", lineno, n + 1);
				free(text);
				return -1;
			}
			w->w[n] = x;
			if (x)
				w->nodes |= BWAP_NODE_BIT(n);
		}
		if (!w->nodes) {
			snprintf(err, errlen, "phase-weights: line %d has no node with a weight", lineno);
			free(text);
			return -1;
		}
		snprintf(t->phase_name[t->nr_phases++], 32, "%s", name);
	}
	free(text);
	return 0;
}

/*
 * The last complete line of the phase file (the fd the client passed), or
 * "" if none.  Only its last 4 KiB are read, whatever its size.
 */
static void read_phase(const struct target *t, char *name, size_t len)
{
	char text[4096], *end, *start;
	struct stat st;
	off_t off;

	name[0] = 0;
	if (t->phase_fd < 0 || fstat(t->phase_fd, &st))
		return;
	off = st.st_size > (off_t)sizeof(text) - 1 ? st.st_size - (off_t)sizeof(text) + 1 : 0;
	if (pread_text(t->phase_fd, text, sizeof(text), off) <= 0)
		return;
	end = strrchr(text, '\n');
	if (end) {
		*end = 0;
		start = strrchr(text, '\n');
		snprintf(name, len, "%.63s", start ? start + 1 : text);
	}
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
	if (push_weights(t, -1, why, t->phase_w[k], PUSH_AFTER_NONE) == -1)
		drop_target(t, "exited");
}

/*
 * Slurm's ids in an attach request against the ones the kernel keeps for
 * the process: with task/cgroup, Slurm puts each step's tasks in
 * .../job_N/step_S/... of cgroup v2, which a user cannot leave for
 * another job's.  A mismatch is refused; a process in no such cgroup
 * (no task/cgroup, or not a Slurm task) keeps the ids marked unverified,
 * and status says so.  0, or -1 with err.
 */
static int check_slurm_ids(struct target *t, pid_t pid, char *err, size_t errlen)
{
	char path[64], *text, *p;
	long long job = -1, step = -1;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	text = bwap_read_file(path, NULL);
	p = text ? strstr(text, "/job_") : NULL;
	if (p)
		job = strtoll(p + 5, NULL, 10);
	p = p ? strstr(p, "/step_") : NULL;
	if (p) {
		p += 6;
		if (*p >= '0' && *p <= '9')
			step = strtoll(p, NULL, 10);
		for (int i = 0; i < 4; i++)
			if (!strncmp(p, slurm_special_steps[i], strlen(slurm_special_steps[i])))
				step = SLURM_STEP_SPECIAL_FIRST + i;
	}
	free(text);
	if (job < 0) {
		t->ids_unverified = 1;
		return 0;
	}
	if (job != t->job || (t->step >= 0 && step >= 0 && step != t->step)) {
		snprintf(err, errlen, "job %lld step %lld: pid %d's cgroup says job %lld step %lld", t->job, t->step,
			 (int)pid, job, step);
		return -1;
	}
	return 0;
}

/*
 * The next file a client passed for key (attach ... KEY fd): a regular
 * file of at most max bytes, not on FUSE (whose reads the client's own
 * daemon answers: it could hold bwapd's thread for good).  bwapd opens
 * no path a client names; the client opens the file with its own rights
 * and passes it (SCM_RIGHTS).  The fd stays the caller's; -1 with err.
 */
#define FUSE_SUPER_MAGIC 0x65735546
static int passed_file(struct passed_fds *pf, const char *key, int idx, off_t max, char *err, size_t errlen)
{
	struct statfs sfs;
	struct stat st;
	int fd;

	if (!pf || idx < 0 || idx >= pf->nr) {
		snprintf(err, errlen, "%s fd: no file descriptor came with the request for it", key);
		return -1;
	}
	fd = pf->fd[idx];
	if (fstat(fd, &st) || fstatfs(fd, &sfs)) {
		snprintf(err, errlen, "%s fd: %s", key, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s fd: not a regular file (FIFOs, devices and sockets are refused)", key);
		return -1;
	}
	if (sfs.f_type == FUSE_SUPER_MAGIC) {
		snprintf(err, errlen, "%s fd: a file on FUSE is refused (its reads could block bwapd); use a local "
			 "file system such as /tmp or /dev/shm", key);
		return -1;
	}
	if (st.st_size > max) {
		snprintf(err, errlen, "%s fd: %lld bytes, more than the %lld bwapd takes", key,
			 (long long)st.st_size, (long long)max);
		return -1;
	}
	return fd;
}

/* attach PID with a (parsed by request.c); the files it names come from pf */
int target_attach(pid_t pid, int pidfd, const struct attach_args *a, struct passed_fds *pf, char *err,
		  size_t errlen)
{
	struct target *t = NULL;
	enum bwap_signal_kind kind = a->kind_given ? a->kind : bwapd.conf.signal;
	char ws[256], val[32], path[512];
	bwap_nodeset workers = a->workers;
	double cap[BWAP_MAX_NODES];
	pid_t protect = a->protect;
	int mine, progress_fd = -1;
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
	t->gen = ++generation;
	t->phase_fd = -1;
	t->pidfd = -1;
	t->sig.progress_fd = -1;
	t->uid = st.st_uid;
	t->job = a->job;
	t->step = a->step;
	t->task = a->task;
	t->follow = a->follow;
	t->no_tune = !a->tune;
	t->parent = a->parent;
	snprintf(t->how, sizeof(t->how), "%s", a->how);
	if (a->progress >= 0) {
		progress_fd = passed_file(pf, "progress", a->progress, 1 << 20, err, errlen);
		if (progress_fd < 0)
			goto fail;
		/* a target that reports progress is tuned on it, unless told otherwise */
		if (!a->kind_given)
			kind = BWAP_SIGNAL_PROGRESS;
	}
	if (a->phases >= 0) {
		int fd = passed_file(pf, "phases", a->phases, 1 << 20, err, errlen);

		if (fd < 0 || (t->phase_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0)) < 0)
			goto fail;
		fd = passed_file(pf, "phase-weights", a->phase_weights, 64 << 10, err, errlen);
		if (fd < 0 || load_phase_weights(t, fd, err, errlen))
			goto fail;
	}
	if (t->job >= 0 && check_slurm_ids(t, pid, err, errlen))
		goto fail;
	t->cur_phase = -1;
	t->pid = pid;
	t->start = start_time(pid);
	/* the client's pidfd names this very process, whatever became of the number since */
	t->pidfd = pidfd >= 0 ? fcntl(pidfd, F_DUPFD_CLOEXEC, 0) : syscall(SYS_pidfd_open, pid, 0);
	/*
	 * The pid's owner again, now that the pidfd holds the process: a pid
	 * reused since the check is another process, and maybe another
	 * user's (the client's right was checked against the first).
	 */
	if (t->pidfd >= 0 && (stat(path, &st) || st.st_uid != t->uid)) {
		snprintf(err, errlen, "pid %d changed hands while it was registered; ask again", pid);
		goto fail;
	}
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
	if (open_signal(t, &t->sig, pid, kind, progress_fd, err, errlen))
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
				-1, err, errlen)) {
			bwap_signal_close(&t->sig);
			t->used = 0;
			goto fail;
		}
		t->protect_pid = protect;
		if (t->sig.kind == BWAP_SIGNAL_MODEL)
			logmsg("pid %d: note: the model sees each process alone, so with the MODELLED signal "
			       "stage 1 cannot see interference and keeps the floor where it starts", pid);
	}
	/* the log is root's alone (a user's pid, command and workers are theirs) and goes with the target */
	snprintf(path, sizeof(path), "%s/search-%d.log", bwapd.conf.state_dir, pid);
	{
		int lfd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);

		t->log = lfd >= 0 ? fdopen(lfd, "w") : NULL;
		if (lfd >= 0 && !t->log)
			close(lfd);
	}
	if (t->log)
		fprintf(t->log, "# bwapd search log: pid %d (%s), workers %s\n# metric: %s\n", pid, t->comm,
			bwap_nodeset_format(t->workers, ws, sizeof(ws)), t->sig.label);
	logmsg("pid %d (%s): attached (%s), workers %s, signal: %s%s%s%s", pid, t->comm, t->how,
	       bwap_nodeset_format(t->workers, ws, sizeof(ws)), t->sig.label,
	       protect ? ", stage 1 protects pid " : "", protect ? (snprintf(val, sizeof(val), "%d", protect), val) : "",
	       t->no_tune ? ", not tuned (tune 0)" : "");
	/*
	 * A Slurm task registers in task_init, before its exec, which
	 * discards every page it has now: reading and moving them (a push
	 * reads every resident page, and slurmstepd's child has its many)
	 * only made the attaches of a large job's start storm wait for each
	 * other past the task's bound.  Its first push comes at its first
	 * steady sample, after the exec; until then it shows the weights it
	 * starts at.
	 */
	weights_at(t, t->cs.t.cur, &t->pushed);
	t->pushed_dwp = t->cs.t.cur;
	t->next = now() + bwapd.conf.tuner.interval;
	targets_changed();
	/* bwapctl run registers before its exec too: what it has now, exec discards */
	if (!strcmp(t->how, "slurm") || !strcmp(t->how, "run"))
		return 0;
	/* the start push goes to the worker: the client's answer does not wait for it */
	if (push(t, t->cs.t.cur, "start", PUSH_AFTER_NONE) == -1) {
		snprintf(err, errlen, "pid %d exited", pid);
		drop_target(t, "exited at start");
		return -1;
	}
	return 0;
fail:
	if (t->pidfd >= 0)
		close(t->pidfd);
	if (t->phase_fd >= 0)
		close(t->phase_fd);
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
	if (t->no_tune) {
		/* placed at its start weights once a measurement's time, never searched (tune 0) */
		t->next = tnow + bwapd.conf.tuner.interval * bwapd.conf.tuner.samples;
		if (!t->busy && !t->damon_push && kill(t->pid, 0) && errno == ESRCH)
			drop_target(t, "exited");
		else if (!t->busy && !t->damon_push && push(t, t->cs.t.cur, "place", PUSH_AFTER_NONE) == -1)
			drop_target(t, "exited");
		return;
	}
	if (t->damon_push || t->busy) {
		/* DAMON or the worker is still placing the last push: measure from where it ends */
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
			if (push(t, t->cs.t.cur, "stage 2", PUSH_AFTER_NONE) == -1)
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
		if (push(t, t->cs.t.cur, "steady", PUSH_AFTER_NONE) == -1)
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
	r = push(t, t->cs.t.cur, stage != t->cs.stage ? "stage 2" : bwap_tuner_action_name(a),
		 a == BWAP_TUNER_CONVERGED ? PUSH_AFTER_CONVERGED : PUSH_AFTER_NONE);
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
		/* a queued push answers when it is done (push_done()), DAMON's once placed (damon_tick()) */
		if (r == 0 && !t->damon_push)
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
	json_object_object_add(o, "tuned", json_object_new_boolean(!t->no_tune));
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
		int counted;
		const char *idle;

		if (!t->used || (uid != 0 && t->uid != uid))
			continue;
		refresh_comm(t);
		for (int n = 0; n < t->pushed.nr_nodes; n++)
			wb[n] = bwap_nodeset_has(t->pushed.nodes, n) ? t->pushed.w[n] : 0;
		/*
		 * The pages as the last push left them (its worker counted them):
		 * a status request walks no target's memory, so it is answered
		 * at once whatever the targets' sizes.
		 */
		counted = t->have_counts;
		d.nr_nodes = bwapd.matrix->nr_nodes;
		d.total = t->cnt_total;
		memcpy(d.pages, t->cnt_now, sizeof(d.pages));
		memcpy(tgt, t->cnt_target, sizeof(tgt));
		if (!counted)
			idle = t->busy ? "pages not counted yet: the first push is on its way" : "";
		else if (bwapd.portable_mode || bwapd.damon_target == t)
			idle = !d.total ? "no resident anonymous memory yet" : "";
		else
			idle = idle_reason(t, &d, 1);
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
	}
	if (json) {
		json_object_object_add(root, "targets", list);
		fprintf(f, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_SPACED |
								   JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(root);
	}
}

/*
 * The counters since bwapd started, then one line per Slurm job of the
 * live targets uid may see (all for root): what a site graphs or alerts
 * on (refused or late attaches, push times), read without any scan.
 */
void stats_print(FILE *f, int json, uid_t uid)
{
	struct { long long job; uid_t uid; long targets, pushes, moved; } jobs[256];
	int nj = 0;
	struct target *t;

	for_each_target(t, i) {
		int k;

		if (t->job < 0 || (uid != 0 && t->uid != uid))
			continue;
		for (k = 0; k < nj && jobs[k].job != t->job; k++)
			;
		if (k == nj) {
			if (nj == 256)
				continue;
			memset(&jobs[nj], 0, sizeof(jobs[0]));
			jobs[nj].job = t->job;
			jobs[nj++].uid = t->uid;
		}
		jobs[k].targets++;
		jobs[k].pushes += t->pushes;
		jobs[k].moved += t->moved;
	}
	if (json) {
		struct json_object *o = json_object_new_object(), *list = json_object_new_array();

#define NUM64(k, v) json_object_object_add(o, k, json_object_new_int64(v))
		NUM64("attaches", bwapd.stats.attaches);
		NUM64("refused_limit", bwapd.stats.refused_limit);
		NUM64("refused_owner", bwapd.stats.refused_owner);
		NUM64("refused_noproc", bwapd.stats.refused_noproc);
		NUM64("refused_other", bwapd.stats.refused_other);
		NUM64("late", bwapd.stats.late);
		NUM64("detaches", bwapd.stats.detaches);
		NUM64("pushes", bwapd.stats.pushes);
		NUM64("pages_moved", bwapd.stats.pages_moved);
#undef NUM64
		json_object_object_add(o, "push_s_total", json_object_new_double(bwapd.stats.push_seconds));
		json_object_object_add(o, "push_s_max", json_object_new_double(bwapd.stats.push_seconds_max));
		for (int k = 0; k < nj; k++) {
			struct json_object *j = json_object_new_object();

			json_object_object_add(j, "job", json_object_new_int64(jobs[k].job));
			json_object_object_add(j, "uid", json_object_new_int64(jobs[k].uid));
			json_object_object_add(j, "targets", json_object_new_int64(jobs[k].targets));
			json_object_object_add(j, "pushes", json_object_new_int64(jobs[k].pushes));
			json_object_object_add(j, "pages_moved", json_object_new_int64(jobs[k].moved));
			json_object_array_add(list, j);
		}
		json_object_object_add(o, "jobs", list);
		fprintf(f, "%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_SPACED));
		json_object_put(o);
		return;
	}
	fprintf(f, "attaches ok %ld refused %ld late %ld\n", bwapd.stats.attaches,
		bwapd.stats.refused_limit + bwapd.stats.refused_owner + bwapd.stats.refused_noproc +
		bwapd.stats.refused_other, bwapd.stats.late);
	fprintf(f, "refused limit %ld owner %ld noproc %ld other %ld\n", bwapd.stats.refused_limit,
		bwapd.stats.refused_owner, bwapd.stats.refused_noproc, bwapd.stats.refused_other);
	fprintf(f, "detaches %ld pushes %ld push_s_total %.3f push_s_max %.3f pages_moved %ld\n", bwapd.stats.detaches,
		bwapd.stats.pushes, bwapd.stats.push_seconds, bwapd.stats.push_seconds_max, bwapd.stats.pages_moved);
	for (int k = 0; k < nj; k++)
		fprintf(f, "job %lld uid %u targets %ld pushes %ld pages_moved %ld\n", jobs[k].job,
			(unsigned int)jobs[k].uid, jobs[k].targets, jobs[k].pushes, jobs[k].moved);
}

/* An attach of bwapd's own (cgroup, a descendant, a restart) with the arguments in args; 0 or -1 with err. */
static int attach_own(pid_t pid, const char *args, char *err, size_t errlen)
{
	struct attach_args a;
	int next_fd = 0;

	attach_args_init(&a);
	if (attach_args_parse(args, 0, &a, &next_fd, err, errlen))
		return -1;
	if (next_fd) {
		snprintf(err, errlen, "files cannot come back: their descriptors are gone");
		return -1;
	}
	return target_attach(pid, -1, &a, NULL, err, errlen);
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
		if (attach_own(pid, "how cgroup", err, sizeof(err)))
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

/*
 * May a followed target's descendant kid be taken?  Only a process of the
 * target's own user, with every uid (real, effective, saved, file) that
 * user's: a setuid helper the job runs (root's, or another user's) is
 * not that user's to place.
 */
static int same_user(pid_t kid, uid_t uid)
{
	char path[64], *text, *p;
	unsigned long u[4];
	int ok;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)kid);
	text = bwap_read_file(path, NULL);
	p = text ? strstr(text, "\nUid:") : NULL;
	ok = p && sscanf(p + 5, "%lu %lu %lu %lu", &u[0], &u[1], &u[2], &u[3]) == 4 &&
	     u[0] == uid && u[1] == uid && u[2] == uid && u[3] == uid;
	free(text);
	return ok;
}

/* Take kid, a descendant of target parent; its start push goes to the worker like any other. */
static void follow_one(struct target *parent, pid_t kid)
{
	char args[256], err[512], ws[128];

	if (kid == getpid() || find_target(kid))
		return;
	if (!same_user(kid, parent->uid)) {
		/* said once per parent, not at every scan */
		if (parent->refused_kid != kid)
			logmsg("pid %d: descendant %d not followed: not uid %u's alone (a setuid helper?)",
			       parent->pid, (int)kid, (unsigned int)parent->uid);
		parent->refused_kid = kid;
		return;
	}
	snprintf(args, sizeof(args), " how child parent %d workers %s children 1%s", parent->pid,
		 bwap_nodeset_format(parent->workers, ws, sizeof(ws)), parent->no_tune ? " tune 0" : "");
	if (parent->job >= 0)
		snprintf(args + strlen(args), sizeof(args) - strlen(args), " job %lld step %lld task %ld",
			 parent->job, parent->step < 0 ? 0 : parent->step, parent->task < 0 ? 0 : parent->task);
	if (attach_own(kid, args, err, sizeof(err)))
		logmsg("pid %d: descendant %d not followed: %s", parent->pid, (int)kid, err);
}

void follow_children(void)
{
	struct target *t;

	/* slots may be added while this runs: each new one is itself scanned later in the loop */
	for (int i = 0; i < bwapd.nr_slots; i++) {
		pid_t kids[256];
		int n;

		t = bwapd.targets[i];
		if (!t->used || !t->follow)
			continue;
		n = children_of(t->pid, kids, 0, 256);
		for (int k = 0; k < n; k++)
			follow_one(bwapd.targets[i], kids[k]);	/* the array may move: look again */
	}
}

/*
 * pid, if it is a followed target's child not yet taken: the one process
 * a waiter asks about, found without scanning every target (a wrapper's
 * program may ask before the next scan).  Its target, or NULL.
 */
struct target *follow_pid(pid_t pid)
{
	struct bwap_proc_stat st;
	struct target *parent;

	parent = !bwap_proc_stat(pid, &st) && st.ppid > 0 ? find_target((pid_t)st.ppid) : NULL;
	if (!parent || !parent->follow)
		return NULL;
	follow_one(parent, pid);
	return find_target(pid);
}

/* ---- what a restart keeps ---------------------------------------------- */

static int targets_dirty;

/* When the process started (/proc/PID/stat), in clock ticks after boot; 0 if gone. */
static unsigned long long start_time(pid_t pid)
{
	struct bwap_proc_stat st;

	return bwap_proc_stat(pid, &st) ? 0 : st.start_time;
}

void targets_changed(void)
{
	targets_dirty = 1;
}

/*
 * STATE_DIR/targets (0600): one line per target, "PID START UID ARGS",
 * replaced all at once (temp file, rename) when the targets changed, so
 * that the next bwapd (a package upgrade's restart, or systemd's after a
 * failure) takes the live ones back.  START (the process's start time)
 * tells a live target from a new process that got its pid.
 */
void targets_save(void)
{
	struct bwap_atomic_file a;
	char path[4096], err[512], ws[128];
	struct target *t;

	if (!targets_dirty)
		return;
	targets_dirty = 0;
	bwap_state_path(bwapd.conf.state_dir, BWAPD_TARGETS_FILE, path, sizeof(path));
	if (bwap_atomic_open(&a, path, err, sizeof(err))) {
		logmsg("cannot record the targets for a restart: %s", err);
		return;
	}
	fchmod(fileno(a.f), 0600);
	fprintf(a.f, "# bwapd's targets, taken back after a restart: PID START UID ARGS\n");
	for_each_target(t, i) {
		fprintf(a.f, "%d %llu %u how %s workers %s children %d tune %d", (int)t->pid, t->start,
			(unsigned int)t->uid, t->how, bwap_nodeset_format(t->workers, ws, sizeof(ws)), t->follow,
			!t->no_tune);
		if (t->job >= 0)
			fprintf(a.f, " job %lld", t->job);
		if (t->step >= 0)
			fprintf(a.f, " step %lld", t->step);
		if (t->task >= 0)
			fprintf(a.f, " task %ld", t->task);
		if (t->parent)
			fprintf(a.f, " parent %d", (int)t->parent);
		fprintf(a.f, "\n");
	}
	if (bwap_atomic_commit(&a, err, sizeof(err)))
		logmsg("cannot record the targets for a restart: %s", err);
}

/*
 * At start: the targets the last bwapd recorded that still run (same pid,
 * same start time, same owner) are taken back, their search started
 * over from its start DWP.  A progress file or phase file cannot come
 * back (its descriptor went with the old bwapd): such a target is taken
 * back on the default signal (bwapd(8) says so).
 */
void targets_adopt(void)
{
	char path[4096], err[512], *text, *save = NULL;
	int taken = 0, gone = 0;

	bwap_state_path(bwapd.conf.state_dir, BWAPD_TARGETS_FILE, path, sizeof(path));
	text = bwap_read_file(path, NULL);
	if (!text)
		return;
	for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		unsigned long long st;
		unsigned int uid;
		int pid, n = 0;
		char proc[64];
		struct stat sb;

		if (line[0] == '#' || sscanf(line, "%d %llu %u %n", &pid, &st, &uid, &n) != 3 || !n)
			continue;
		snprintf(proc, sizeof(proc), "/proc/%d", pid);
		if (pid <= 0 || start_time(pid) != st || stat(proc, &sb) || sb.st_uid != uid) {
			gone++;
			continue;
		}
		if (attach_own(pid, line + n, err, sizeof(err))) {
			logmsg("pid %d: not taken back after the restart: %s", pid, err);
			continue;
		}
		logmsg("pid %d: taken back after a restart (%s); its search starts over", pid, line + n);
		taken++;
	}
	free(text);
	if (taken || gone)
		logmsg("restart: %d target(s) taken back, %d recorded target(s) gone", taken, gone);
	targets_dirty = 1;
}
