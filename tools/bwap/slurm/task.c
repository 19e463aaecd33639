// SPDX-License-Identifier: GPL-2.0
/*
 * One Slurm task's placement, in the task before it execs the program:
 * worker nodes from the CPUs Slurm bound it to, weights from the node's
 * saved matrix (the file bwapctl and bwapd keep), then the best policy
 * the running kernel offers:
 *   BWAP series      set_mempolicy2 with the weights as the task's own;
 *   stock, mode 6    MPOL_WEIGHTED_INTERLEAVE over the global table, but
 *                    only when that table equals the weights (in ratio);
 *   otherwise        portable mode: uniform interleave, and bwapd places
 *                    the task's pages at the weighted shares with
 *                    move_pages (bwapd(8)), starting at these weights.
 * Explicit weights cannot go through bwapd (it starts every target at
 * canonical weights), so on a stock kernel they need an equal global
 * table.  Everything goes through libbwap, as bwapctl run does.
 *
 * Slurm's decisions come first: the weights cover only the nodes the
 * task's cpuset allows (Mems_allowed), so the shares reported are the
 * ones the kernel gives; a memory policy the task already has (task/
 * affinity applies --mem-bind before task_init) is never replaced, and
 * nothing here ever resets a policy to MPOL_DEFAULT.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "bwap_slurm.h"

/*
 * A request to bwapd with SIGPIPE blocked in the calling thread, and one
 * it raised taken back: slurmstepd (task exit) and the task (task_init)
 * must not die because bwapd closed the socket first (libbwap writes with
 * write(), not send(MSG_NOSIGNAL)).  A SIGPIPE from a write is sent to
 * the thread that wrote, so blocking it here touches no other thread.
 */
struct sigpipe_guard {
	sigset_t old;
	int was_pending;
};

static void sigpipe_hold(struct sigpipe_guard *g)
{
	sigset_t pipe, pending;

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	sigpending(&pending);
	g->was_pending = sigismember(&pending, SIGPIPE);
	pthread_sigmask(SIG_BLOCK, &pipe, &g->old);
}

static void sigpipe_release(const struct sigpipe_guard *g)
{
	sigset_t pipe, pending;
	struct timespec zero = { 0 };

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	sigpending(&pending);
	/* ours (raised while held): taken back, so it never reaches the thread */
	if (!g->was_pending && sigismember(&pending, SIGPIPE))
		while (sigtimedwait(&pipe, NULL, &zero) < 0 && errno == EINTR)
			;
	pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

static char *ctl_request(const char *state_dir, const char *req, int ms, char *err, size_t errlen)
{
	struct sigpipe_guard g;
	char *reply;

	sigpipe_hold(&g);
	reply = bwap_ctl_request_timeout(state_dir, req, ms, err, errlen);
	sigpipe_release(&g);
	return reply;
}

static int ctl_send(const char *state_dir, const char *req, int ms, char *err, size_t errlen)
{
	struct sigpipe_guard g;
	int r;

	sigpipe_hold(&g);
	r = bwap_ctl_send(state_dir, req, ms, err, errlen);
	sigpipe_release(&g);
	return r;
}

/* Nodes whose CPUs the calling task may run on, as bwapd reads a target's. */
static bwap_nodeset workers_from_affinity(const struct bwap_topology *t)
{
	size_t size = CPU_ALLOC_SIZE(BWAP_MAX_CPUS);
	cpu_set_t *set = CPU_ALLOC(BWAP_MAX_CPUS);
	bwap_nodeset w = 0;

	if (!set)
		return 0;
	if (!sched_getaffinity(0, size, set))
		for (int n = 0; n < BWAP_MAX_NODES; n++)
			for (int c = 0; c < BWAP_MAX_CPUS && bwap_nodeset_has(t->has_cpu, n); c++)
				if (t->node[n].cpus[c] && CPU_ISSET_S(c, size, set))
					w |= BWAP_NODE_BIT(n);
	CPU_FREE(set);
	return w;
}

static const char *policy_name(int mode)
{
	static const char *const names[] = { "MPOL_DEFAULT", "MPOL_PREFERRED", "MPOL_BIND", "MPOL_INTERLEAVE",
					     "MPOL_LOCAL", "MPOL_PREFERRED_MANY", "MPOL_WEIGHTED_INTERLEAVE" };

	return mode >= 0 && mode < (int)(sizeof(names) / sizeof(names[0])) ? names[mode] : "a memory policy";
}

/* The calling task's policy (get_mempolicy): its mode, and its nodes into buf. */
static int own_policy(char *buf, size_t len)
{
	/* room for every node the kernel may have (get_mempolicy wants maxnode >= nr_node_ids) */
	unsigned long mask[1024 / (8 * sizeof(unsigned long))] = { 0 };
	bwap_nodeset s = 0;
	int mode = 0;

	if (syscall(SYS_get_mempolicy, &mode, mask, 1024UL, NULL, 0UL))
		return -1;
	for (int n = 0; n < BWAP_MAX_NODES; n++)
		if (mask[n / (8 * sizeof(unsigned long))] & (1UL << (n % (8 * sizeof(unsigned long)))))
			s |= BWAP_NODE_BIT(n);
	if (s)
		bwap_nodeset_format(s, buf, len);
	else
		snprintf(buf, len, "local");
	return mode;
}

/* The global table equals w over w's nodes, in ratio (mode 6 then gives exactly w's shares). */
static int global_table_equals(const struct bwap_weights *w)
{
	int g[BWAP_MAX_NODES];
	int ref = -1;
	char err[256];

	if (bwap_sysfs_weights_read(g, w->nr_nodes, w->nodes, err, sizeof(err)))
		return 0;
	for (int i = 0; i < w->nr_nodes; i++) {
		if (!bwap_nodeset_has(w->nodes, i))
			continue;
		if (ref < 0)
			ref = i;
		/* g[i] / g[ref] == w[i] / w[ref] */
		if ((long)g[i] * w->w[ref] != (long)w->w[i] * g[ref] || !g[i])
			return 0;
	}
	return ref >= 0;
}

static void weights_text(const struct bwap_weights *w, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < w->nr_nodes && n < len; i++)
		if (bwap_nodeset_has(w->nodes, i))
			n += snprintf(buf + n, len - n, "%s%d:%u", n ? "," : "", i, w->w[i]);
}

/* Explicit weights as a bwap_weights over the nodes with a non-zero weight. */
static int explicit_weights(const struct bwap_slurm_request *r, const struct bwap_topology *t,
			    bwap_nodeset allowed, struct bwap_weights *w, char *err, size_t errlen)
{
	char buf[256], have[256];
	bwap_nodeset outside = r->nodes & ~allowed;

	if (r->nodes & ~t->has_memory) {
		snprintf(err, errlen, "--bwap names node%s %s, which this machine does not have as memory nodes "
			 "(it has %s); give weights for those nodes only",
			 bwap_nodeset_count(r->nodes & ~t->has_memory) > 1 ? "s" : "",
			 bwap_nodeset_format(r->nodes & ~t->has_memory, buf, sizeof(buf)),
			 bwap_nodeset_format(t->has_memory, have, sizeof(have)));
		return -1;
	}
	/* a weight of 0 names a node without asking for pages there */
	for (int i = 0; i < BWAP_MAX_NODES; i++)
		if (bwap_nodeset_has(outside, i) && !r->w[i])
			outside &= ~BWAP_NODE_BIT(i);
	if (outside) {
		snprintf(err, errlen, "--bwap names node%s %s, which this task's cpuset does not allow (it may use "
			 "%s, cpuset.mems); give weights for those nodes only", bwap_nodeset_count(outside) > 1 ? "s" : "",
			 bwap_nodeset_format(outside, buf, sizeof(buf)), bwap_nodeset_format(allowed, have, sizeof(have)));
		return -1;
	}
	memset(w, 0, sizeof(*w));
	for (int i = 0; i < BWAP_MAX_NODES; i++)
		if (bwap_nodeset_has(r->nodes, i) && r->w[i]) {
			w->nodes |= BWAP_NODE_BIT(i);
			w->w[i] = r->w[i];
			w->nr_nodes = i + 1;
		}
	return 0;
}

/* A part this node lacks: the task fails, or runs untouched with missing=run. */
static int lacking(const struct bwap_slurm_conf *c, char *msg, size_t msglen, const char *host, const char *what)
{
	snprintf(msg, msglen, "bwap: %s: %s; %s", host, what,
		 c->missing == BWAP_MISSING_RUN ? "the task runs without BWAP (plugstack.conf: missing=run)" :
		 "the task fails (plugstack.conf: missing=fail; missing=run lets it run without BWAP)");
	return c->missing == BWAP_MISSING_RUN ? 1 : -1;
}

int bwap_slurm_task_apply(const struct bwap_slurm_request *r, const struct bwap_slurm_conf *c,
			  struct bwap_slurm_outcome *o, char *msg, size_t msglen)
{
	struct bwap_topology *t = malloc(sizeof(*t));
	struct bwap_matrix *m = malloc(sizeof(*m));
	char host[64] = "?", err[1024], what[1400], ws[512], wk[128], al[128], pn[128], note[1700] = "";
	int portable = 0, ret = -1, mode, note_warns = 1;
	bwap_nodeset allowed;

	memset(o, 0, sizeof(*o));
	gethostname(host, sizeof(host) - 1);
	if (!t || !m) {
		snprintf(msg, msglen, "bwap: %s: out of memory", host);
		goto out;
	}
	/* A binding the task already has is Slurm's (--mem-bind) or its launcher's: never replaced. */
	mode = own_policy(pn, sizeof(pn));
	if (mode > 0) {
		snprintf(msg, msglen, "bwap: %s: the task already has a memory binding (%s over nodes %s, from "
			 "--mem-bind or its launcher) that --bwap would replace; the task does not run: give "
			 "--mem-bind or --bwap, not both", host, policy_name(mode), pn);
		goto out;
	}
	/* BWAP_SYSFS_ROOT: another machine's sysfs, for the tests, as bwapctl and bwapd take it */
	if (bwap_topology_read(t, getenv("BWAP_SYSFS_ROOT"), err, sizeof(err))) {
		snprintf(msg, msglen, "bwap: %s: %s", host, err);
		goto out;
	}
	o->kernel = bwap_kernel_mode();
	o->workers = workers_from_affinity(t);
	if (!o->workers) {
		snprintf(msg, msglen, "bwap: %s: cannot tell the task's worker nodes from its CPU affinity", host);
		goto out;
	}
	/* the kernel gives pages only on the cpuset's nodes: the weights are over those */
	allowed = bwap_mems_allowed(0);
	allowed = allowed ? allowed & t->has_memory : t->has_memory;
	o->allowed = allowed;
	bwap_nodeset_format(allowed, al, sizeof(al));
	if (!allowed) {
		snprintf(msg, msglen, "bwap: %s: the task's cpuset allows no memory node of this machine", host);
		goto out;
	}
	if (r->kind == BWAP_SLURM_EXPLICIT) {
		if (explicit_weights(r, t, allowed, &o->w, err, sizeof(err))) {
			snprintf(msg, msglen, "bwap: %s: %s", host, err);
			goto out;
		}
	} else {
		double cap[BWAP_MAX_NODES];

		if (access(c->matrix, R_OK)) {
			snprintf(what, sizeof(what), "no bandwidth matrix (%s: %s); save one with 'bwapctl measure' "
				 "(or copy one there), see slurm-bwap(8)", c->matrix, strerror(errno));
			ret = lacking(c, msg, msglen, host, what);
			goto out;
		}
		if (bwap_matrix_load(m, c->matrix, err, sizeof(err)) ||
		    bwap_canonical_capacity(m, o->workers, allowed, cap, err, sizeof(err)) ||
		    bwap_weights_from_capacity(&o->w, cap, m->nr_nodes, allowed, err, sizeof(err))) {
			snprintf(msg, msglen, "bwap: %s: %s", host, err);
			goto out;
		}
		if (r->kind == BWAP_SLURM_DWP && r->dwp > 0)
			bwap_weights_apply_dwp(&o->w, o->workers, r->dwp);
		bwap_weights_quantise(&o->w, c->max_weight, 0.005);
	}
	weights_text(&o->w, ws, sizeof(ws));
	snprintf(o->weights, sizeof(o->weights), "%s", ws);
	bwap_nodeset_format(o->workers, wk, sizeof(wk));

	if (o->kernel == BWAP_KERNEL_SERIES) {
		snprintf(o->how, sizeof(o->how), "set_mempolicy2 with own weights");
	} else if (o->kernel == BWAP_KERNEL_STOCK_WI && global_table_equals(&o->w)) {
		snprintf(o->how, sizeof(o->how), "mode 6 over the global table, which equals these weights");
	} else if (r->kind == BWAP_SLURM_EXPLICIT || r->kind == BWAP_SLURM_DWP) {
		snprintf(msg, msglen, "bwap: %s: %s weights %s need the BWAP kernel series, or on this %s kernel "
			 "a global table equal to them ('bwapctl weights --apply-sysfs', as root); only canonical "
			 "weights (--bwap) can be placed by bwapd in portable mode",
			 host, r->kind == BWAP_SLURM_DWP ? "fixed-DWP" : "explicit", ws, bwap_kernel_mode_name(o->kernel));
		goto out;
	} else {
		portable = 1;
		snprintf(o->how, sizeof(o->how), "portable mode: uniform interleave, bwapd places the pages "
			 "with move_pages (%s kernel, global table differs)", bwap_kernel_mode_name(o->kernel));
	}

	/*
	 * Portable mode needs bwapd before anything changes, so that a node
	 * without it leaves the task untouched with missing=run.  On the BWAP
	 * series the policy comes first: bwapd's first push
	 * (process_mpol_reweight) must find it.  Tuning is a bonus: if bwapd
	 * does not take the task, it keeps these weights and is told so.
	 */
	if (o->kernel == BWAP_KERNEL_SERIES && bwap_set_own_weights(&o->w)) {
		snprintf(msg, msglen, "bwap: %s: set_mempolicy2 failed: %s", host, strerror(errno));
		goto out;
	}
	if (r->tune || portable) {
		char req[320], ids[96] = "", *reply;
		const char *pre = "";
		int fixed = !r->tune;	/* placed at these weights, not tuned (plain --bwap, or tune=deny) */

		if (r->job > 0)
			snprintf(ids, sizeof(ids), " job %lld step %lld task %ld", r->job, r->step, r->task);
		/*
		 * children 1: what the task starts (a wrapper's program, mpirun's
		 * ranks) is placed too.  tune 0: bwapd places the pages at the
		 * starting weights and never searches the DWP (bwapd(8)); a task
		 * is tuned only when the user asked and the site allows it.
		 */
		snprintf(req, sizeof(req), "attach %d how slurm workers %s children 1%s%s", (int)getpid(), wk, ids,
			 fixed ? " tune 0" : "");
		reply = ctl_request(c->state_dir, req, BWAP_SLURM_ATTACH_MS, err, sizeof(err));
		if (fixed && reply && strstr(reply, "unknown attach argument 'tune'")) {
			/*
			 * A bwapd older than tune 0: it would tune the task.  Where
			 * the site forbids that, the task is placed by nobody (as if
			 * bwapd were missing); else it is tuned, and told so.
			 */
			free(reply);
			reply = NULL;
			if (c->tune_denied) {
				snprintf(what, sizeof(what), "portable placement without tuning (plugstack.conf: "
					 "tune=deny) needs a bwapd that takes 'tune 0', and this node's does not "
					 "(upgrade bwap-tools)");
				ret = lacking(c, msg, msglen, host, what);
				goto out;
			}
			snprintf(req, sizeof(req), "attach %d how slurm workers %s children 1%s", (int)getpid(), wk, ids);
			reply = ctl_request(c->state_dir, req, BWAP_SLURM_ATTACH_MS, err, sizeof(err));
			fixed = 0;
			/* as before tune 0 existed: said in the log, not on every task's stderr */
			snprintf(note, sizeof(note), "; bwapd tunes it (this node's bwapd cannot place without tuning)");
			note_warns = 0;
		}
		if (reply && strncmp(reply, "ok\n", 3)) {
			reply[strcspn(reply, "\n")] = '\0';
			snprintf(err, sizeof(err), "%s", reply);
			free(reply);
			reply = NULL;
			pre = "did not take the task";
		} else if (!reply) {
			pre = "does not answer";
		}
		if (!reply && portable) {
			snprintf(what, sizeof(what), "portable placement needs bwapd, which %s (%s)", pre, err);
			ret = lacking(c, msg, msglen, host, what);
			goto out;
		}
		if (!reply) {
			snprintf(note, sizeof(note), "; --bwap-tune: bwapd %s (%s): the task keeps these weights, "
				 "not tuned", pre, err);
		} else {
			o->registered = 1;
			o->tuned = !fixed;
		}
		free(reply);
	}
	if (o->kernel != BWAP_KERNEL_SERIES && bwap_set_own_interleave(o->w.nodes, !portable)) {
		snprintf(msg, msglen, "bwap: %s: set_mempolicy failed: %s", host, strerror(errno));
		if (o->registered)
			bwap_slurm_task_forget(c, getpid());
		goto out;
	}
	snprintf(msg, msglen, "bwap: %s: pid %d, workers %s, allowed nodes %s, weights %s (%s), kernel: %s: %s%s%s",
		 host, (int)getpid(), wk, al, ws, r->kind == BWAP_SLURM_EXPLICIT ? "explicit" :
		 r->kind == BWAP_SLURM_DWP ? "canonical at fixed DWP" : "canonical", bwap_kernel_mode_name(o->kernel),
		 o->how, o->tuned && r->tune ? "; bwapd tunes it" : "", note);
	o->warning = note[0] != '\0' && note_warns;
	ret = 0;
out:
	free(t);
	free(m);
	return ret;
}

/*
 * slurmstepd calls this for each task of its step, one after another.
 * The detach is handed to bwapd without waiting for its answer: bwapd,
 * busy or stalled, then delays no step's end, and still logs every
 * request when it reads it.  Only the hand-over has a bound, for a full
 * queue; once one missed it, the step's other tasks do not try (bwapd
 * drops exited tasks through their pidfd anyway), so a stalled bwapd
 * costs a whole step BWAP_SLURM_DETACH_MS, not that much per task.
 */
static int detach_gave_up;

int bwap_slurm_task_forget(const struct bwap_slurm_conf *c, pid_t pid)
{
	char req[64], err[512];

	if (detach_gave_up)
		return -1;
	snprintf(req, sizeof(req), "detach %d", (int)pid);
	if (ctl_send(c->state_dir, req, BWAP_SLURM_DETACH_MS, err, sizeof(err))) {
		detach_gave_up = 1;
		return -1;
	}
	return 0;
}
