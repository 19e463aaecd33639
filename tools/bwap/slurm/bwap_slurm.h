/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Slurm SPANK plugin bwap.so: what its parts share.  option.c reads
 * the user's --bwap value and the plugstack.conf arguments (no Slurm
 * needed, so the host unit tests link it alone); task.c gives one task
 * its weights and registers it with bwapd; spank.c is the glue to Slurm.
 */
#ifndef BWAP_SLURM_H
#define BWAP_SLURM_H

#include <stddef.h>
#include <sys/types.h>

#include "../lib/bwap.h"

/* What --bwap asked for. */
enum bwap_slurm_kind {
	BWAP_SLURM_OFF,		/* no --bwap: the task is left alone */
	BWAP_SLURM_CANONICAL,	/* canonical weights for the task's worker nodes (DWP 0) */
	BWAP_SLURM_DWP,		/* the same at a fixed DWP (--bwap=dwp:X) */
	BWAP_SLURM_TUNED,	/* canonical to start, then bwapd tunes DWP (--bwap=dwp) */
	BWAP_SLURM_EXPLICIT,	/* the user's own weights, node by node */
};

struct bwap_slurm_request {
	enum bwap_slurm_kind kind;
	double dwp;				/* BWAP_SLURM_DWP: 0..1 */
	bwap_nodeset nodes;			/* BWAP_SLURM_EXPLICIT: nodes named */
	unsigned char w[BWAP_MAX_NODES];	/* and their weights, 0..255 */
	int tune;				/* --bwap-tune (or --bwap=dwp): register with bwapd */
	/*
	 * --bwap=off given: the user refuses --bwap, so no default= applies
	 * (kind is BWAP_SLURM_OFF); it clears a --bwap inherited from
	 * sbatch/salloc's environment, which srun reads before its command line.
	 */
	int off_given;
	/* Slurm's ids, sent to bwapd with the registration (spank.c fills them); job 0: none */
	long long job, step;
	long task;
};

/*
 * Parse a --bwap value into r (NULL, "" or "(null)" = canonical):
 *   canonical            canonical weights for the task's worker nodes
 *   dwp                  canonical, then bwapd tunes the DWP (as --bwap-tune)
 *   dwp:X                canonical at a fixed DWP X, 0 <= X <= 1
 *   N:W[,N:W]...         weight W (0..255) for node N (0..63), numactl -w style
 *   W:W:W[:W]...         weights of nodes 0, 1, 2, ... in order (three or more)
 *   off                  no BWAP for this job or step (refuses a partition's default=,
 *                        clears --bwap and --bwap-tune inherited or given before it)
 * 0, or -1 with what is wrong and what to write instead in err.
 */
int bwap_slurm_parse_option(const char *text, struct bwap_slurm_request *r, char *err, size_t errlen);
/* "canonical", "dwp 0.250", "explicit 0:5,1:3" into buf. */
char *bwap_slurm_request_text(const struct bwap_slurm_request *r, char *buf, size_t len);

/* What a node without a matrix or without bwapd does (plugstack.conf missing=). */
enum bwap_slurm_missing { BWAP_MISSING_FAIL, BWAP_MISSING_RUN };

#define BWAP_SLURM_MAX_DEFAULTS 16

/* default=PARTITION:VALUE: what jobs of a partition get when they do not give --bwap. */
struct bwap_slurm_default {
	char partition[64];			/* "*": every partition without its own */
	struct bwap_slurm_request r;		/* kind OFF: default=PART:off */
};

/* The plugstack.conf arguments: the site's policy. */
struct bwap_slurm_conf {
	enum bwap_slurm_missing missing;	/* missing=fail (default) or missing=run */
	char state_dir[512];			/* state_dir=DIR: bwapd's (default /var/lib/bwap) */
	char matrix[512];			/* matrix=FILE (default STATE_DIR/matrix) */
	int max_weight;				/* max_weight=N, 1..255 (default 255) */
	int tune_denied;			/* tune=deny: --bwap-tune refused */
	int report_stderr;			/* report=stderr: each task's placement line on its stderr */
	char deny[1024];			/* deny=P,Q: ",P,Q," partitions where --bwap is refused */
	struct bwap_slurm_default defaults[BWAP_SLURM_MAX_DEFAULTS];
	int nr_defaults;
};

/* Parse plugstack.conf's arguments; 0, or -1 with err naming the bad one. */
int bwap_slurm_parse_conf(int argc, char **argv, struct bwap_slurm_conf *c, char *err, size_t errlen);
/*
 * Where the bwap.so line with exactly these arguments is: "FILE:LINE"
 * into where, from the first of files (NULL-ended) that has it; 0, or -1.
 * Slurm hands a plugin its arguments but not their place.
 */
int bwap_slurm_conf_locate(const char *const *files, int argc, char **argv, char *where, size_t len);
/*
 * The first bwap.so line Slurm would read from the plugstack file
 * plugstack, following its "include" lines as Slurm does (globs;
 * relative to plugstack's directory; under configless Slurm an include
 * that names nothing is looked for by its base name beside plugstack,
 * where slurmd keeps the files it fetched).  Its arguments into args
 * (space-separated), "FILE:LINE" into where; 1 if found, 0 if not, -1
 * with err if plugstack cannot be read.
 */
int bwap_slurm_plugstack_find(const char *plugstack, char *args, size_t argslen, char *where, size_t wherelen,
			      char *err, size_t errlen);
/*
 * A job of partition that gave no --bwap (and not --bwap=off) gets the
 * partition's default=: the entry naming the partition itself if there is
 * one, else the "*" entry, wherever each stands; 1 if r was set so.
 */
int bwap_slurm_partition_default(const struct bwap_slurm_conf *c, const char *partition,
				 struct bwap_slurm_request *r);
/*
 * May this job's request run here?  partition (may be NULL) against
 * deny=, --bwap-tune against tune=deny and the weights it cannot tune,
 * mem_bind (srun's SLURM_MEM_BIND_TYPE, may be NULL) against --bwap.
 * 0, or -1 with what to do in err.
 */
int bwap_slurm_job_check(const struct bwap_slurm_request *r, const struct bwap_slurm_conf *c,
			 const char *partition, const char *mem_bind, char *err, size_t errlen);

/*
 * The --mem-bind value among srun's (or sbatch's, salloc's) own options
 * in argv, for refusing --bwap beside it before an allocation is made:
 * --mem-bind=V, --mem-bind V (and --mem_bind).  The scan stops where the
 * launcher stops taking options (its first word that is not one, or
 * "--"); an option it does not know to take a separate value is taken as
 * a flag, so it may stop early (and slurmstepd still refuses) but never
 * reads the program's own arguments.  V into buf, or NULL.
 */
const char *bwap_slurm_cmdline_mem_bind(int argc, char **argv, char *buf, size_t len);

/* ---- task.c ----------------------------------------------------------- */

/* What bwap_slurm_task_apply did, for the job's output and the tests. */
struct bwap_slurm_outcome {
	enum bwap_kernel_mode kernel;
	bwap_nodeset workers;
	struct bwap_weights w;		/* the weights wanted */
	bwap_nodeset allowed;		/* memory nodes the task's cpuset allows: the weights cover these */
	char weights[512];		/* "0:5,1:3" */
	char how[160];			/* what placed the pages: "set_mempolicy2 (own weights)", ... */
	int registered;			/* bwapd tunes or places this task */
	int tuned;			/* bwapd searches its DWP (BWAP_TUNED=1): --bwap-tune, allowed */
	int warning;			/* it runs, but not all was done (bwapd did not take it for tuning) */
};

/*
 * How long the task waits for bwapd to take it, and slurmstepd, at a
 * task's exit, to hand bwapd the detach (it does not wait for the answer;
 * the step's end waits on every task's): a bwapd that is stopped or
 * stalled costs no more.  bwapd drops an exited task on its own (pidfd),
 * so a missed detach loses nothing.
 */
#define BWAP_SLURM_ATTACH_MS 5000
#define BWAP_SLURM_DETACH_MS 250

/*
 * In the task, before exec: its worker nodes from its CPU affinity, the
 * weights r asks for (canonical from the node's saved matrix), then the
 * best policy this kernel has (see task.c); registers with bwapd when
 * tuning or portable placement needs it.  Returns 0; 1 when something
 * this node lacks (matrix, bwapd) stopped it and conf says missing=run
 * (the task runs untouched); -1 when the task must fail.  msg says what
 * happened, for the job's output, either way.
 */
int bwap_slurm_task_apply(const struct bwap_slurm_request *r, const struct bwap_slurm_conf *c,
			  struct bwap_slurm_outcome *o, char *msg, size_t msglen);
/* In slurmstepd at task exit: bwapd is told to forget pid (0; -1 if the request could not be handed over). */
int bwap_slurm_task_forget(const struct bwap_slurm_conf *c, pid_t pid);

#endif /* BWAP_SLURM_H */
