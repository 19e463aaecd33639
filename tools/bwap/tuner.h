/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The DWP tuner of bwapd, as a library: a hill climber on data-to-worker
 * proximity that is fed one sample at a time and says what to do next.
 * It has no clock, does no I/O and knows nothing about processes, so the
 * host unit tests drive it with the placement model and a fake clock,
 * and bwapd drives it with real signals.  Also here: the per-node page
 * distribution of a process (/proc/PID/numa_maps), largest-remainder
 * shares as the kernel computes them, the signal sources, and the DWP
 * search curve as a PNG.
 */
#ifndef BWAP_TUNER_H
#define BWAP_TUNER_H

#include <sys/types.h>

#include "bwap.h"

/* ---- tuner.c: hill climbing on DWP ----------------------------------- */

/*
 * The knobs.  bwapd.conf and bwapd's options set them; every one is
 * explained (meaning and trade-off) at its default in tuner.c.
 */
struct bwap_tuner_params {
	double step;		/* DWP step, 0 < step <= 1 (default 0.10) */
	int samples;		/* n: samples per measurement (default 20) */
	int trim;		/* c: samples dropped at each end (default 5); 2c < n */
	double interval;	/* t: seconds per sample (default 0.2); used by the driver */
	double min_gain;	/* relative improvement that counts as better (default 0.002) */
	double drift;		/* relative change at the optimum that restarts (default 0.10) */
	double lo, hi;		/* DWP bounds, 0 <= lo <= hi <= 1 (default 0, 1) */
};

#define BWAP_TUNER_MAX_SAMPLES 1000
#define BWAP_TUNER_MAX_HISTORY 512

enum bwap_tuner_action {
	BWAP_TUNER_SAMPLE,	/* keep sampling at the current DWP */
	BWAP_TUNER_MOVE,	/* a search step: push the weights for the new current DWP */
	BWAP_TUNER_CONVERGED,	/* local optimum found: push it (may be a step back), then monitor */
	BWAP_TUNER_RESTART,	/* the metric drifted at the optimum: a new search starts there; push t->cur, its first step */
};

enum bwap_tuner_phase { BWAP_TUNER_SEARCHING, BWAP_TUNER_SETTLED };

/* One finished measurement, for logs and the search curve. */
struct bwap_tuner_point {
	double dwp;
	double metric;		/* trimmed mean of the samples; lower is better */
	int search;		/* which search (0, then one more per restart) */
	int settled;		/* measured while monitoring the optimum */
};

struct bwap_tuner {
	struct bwap_tuner_params p;
	enum bwap_tuner_phase phase;
	double cur;		/* DWP being measured (and pushed) now */
	double samples[BWAP_TUNER_MAX_SAMPLES];
	int nr_samples;
	int have_best;
	double best_dwp, best_metric;
	int dir;		/* +1 towards the workers, -1 away */
	int gains_in_dir;	/* improvements since dir was chosen */
	int tried_other;	/* the other direction was tried from best */
	int searches;		/* 1 + restarts */
	double last_metric;	/* of the latest measurement */
	struct bwap_tuner_point hist[BWAP_TUNER_MAX_HISTORY];
	int nr_hist;		/* entries in hist (ring after it fills: the latest win) */
	long nr_points;		/* measurements ever */
};

void bwap_tuner_defaults(struct bwap_tuner_params *p);
/* Check p; 0, or -1 with what is wrong and how to fix it in err. */
int bwap_tuner_check(const struct bwap_tuner_params *p, char *err, size_t errlen);
/* Start a search at start (clamped to [lo, hi]). */
void bwap_tuner_init(struct bwap_tuner *t, const struct bwap_tuner_params *p, double start);
/* One sample (lower is better) taken at t->cur; what to do next. */
enum bwap_tuner_action bwap_tuner_feed(struct bwap_tuner *t, double sample);
/* Drop the samples of the measurement under way (the signal had a gap). */
void bwap_tuner_discard(struct bwap_tuner *t);
/* Mean of samples without the c lowest and c highest (n > 2c); sorts v. */
double bwap_trimmed_mean(double *v, int n, int c);
const char *bwap_tuner_action_name(enum bwap_tuner_action a);

/*
 * Co-scheduled mode (--protect), BWAP's two-stage search.  Stage 1 tunes
 * the target's DWP on the *protected* process's signal, starting at
 * start: the DWP where it settles is the lowest that is best for the
 * protected process.  Stage 2 tunes on the target's own signal within
 * [that floor, hi], starting at the floor.  Without protection it is
 * stage 2 from the start.
 */
struct bwap_cosched {
	struct bwap_tuner t;
	struct bwap_tuner_params p;
	int stage;		/* 1: feed the protected process's signal; 2: the target's */
	double floor;		/* stage 2's lower bound */
};

void bwap_cosched_init(struct bwap_cosched *c, const struct bwap_tuner_params *p, double start,
		       int protect);
/*
 * One sample of the signal c->stage names.  When stage 1 settles it
 * returns BWAP_TUNER_MOVE with c->stage == 2 and c->t.cur == c->floor:
 * push that, then feed the target's signal.
 */
enum bwap_tuner_action bwap_cosched_feed(struct bwap_cosched *c, double sample);
/* The protected process is gone: stage 2 starts at the current DWP. */
void bwap_cosched_end_stage1(struct bwap_cosched *c);

/* ---- pages.c: where a process's pages are ------------------------------ */

#define BWAP_MAX_VMAS 4096

/*
 * Resident pages per node of the VMAs the kernel's rebalance handles
 * (anonymous, as /proc/PID/numa_maps lists them: no file=), summed, and
 * each VMA's own counts for largest-remainder targets.
 */
struct bwap_pagedist {
	int nr_nodes;
	long pages[BWAP_MAX_NODES];	/* summed over the VMAs below */
	long total;
	int nr_vmas;
	struct bwap_vma_pages {
		unsigned long start;
		long pages[BWAP_MAX_NODES];
	} *vma;				/* malloc()ed, nr_vmas entries */
};

/* Read /proc/PID/numa_maps; 0 or -1 (err set; errno ENOENT/ESRCH if gone). */
int bwap_pagedist_read(pid_t pid, int nr_nodes, struct bwap_pagedist *d, char *err, size_t errlen);
/* Same from numa_maps text; file-backed VMAs count if is_shmem(path) says they are on tmpfs. */
int bwap_pagedist_parse(const char *text, int nr_nodes, struct bwap_pagedist *d);	/* no files */
int bwap_pagedist_parse_ex(const char *text, int nr_nodes, struct bwap_pagedist *d,
			   int (*is_shmem)(const char *path));
int bwap_path_is_shmem(const char *path);
void bwap_pagedist_free(struct bwap_pagedist *d);
/*
 * Largest-remainder shares of total pages over nr nodes with weights w,
 * ties to the node with more cur pages, then the lower id: exactly what
 * the kernel's mpol_rebalance_targets() computes.
 */
void bwap_largest_remainder(long total, const unsigned char *w, const long *cur, int nr, long *target);
/*
 * Per-node targets summed over d's VMAs for weights w, and the pages the
 * kernel must move to reach them (sum of max(0, current - target)).
 */
long bwap_pagedist_targets(const struct bwap_pagedist *d, const unsigned char *w, long *target);

/* ---- curve.c: the DWP search curve ------------------------------------ */

/*
 * Plot metric against DWP, in measurement order, into a PNG; settled (if
 * not NULL) is where the search settled, ringed in black.
 */
int bwap_curve_png(const char *path, const struct bwap_tuner_point *pts, int n,
		   const struct bwap_tuner_point *settled, char *err, size_t errlen);
/*
 * Read a bwapd search log: "point DWP METRIC SEARCH SETTLED" per
 * measurement, "settle DWP METRIC" when a search converges (the latest is
 * put in *settled, settled->search = -1 if none), "# metric: NAME".
 */
int bwap_curve_read_log(const char *path, struct bwap_tuner_point *pts, int max,
			struct bwap_tuner_point *settled, char *metric_name, size_t namelen,
			char *err, size_t errlen);

#endif /* BWAP_TUNER_H */
