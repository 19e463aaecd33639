/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bwapctl's charts, drawn with cairo as PNG or SVG (from the file name):
 * the matrix and weights report, bwapd's DWP search curve, the coupled
 * search, the bench, and rebalance-bench --peers' report.  The dynamic bwapctl links librender.a; the
 * static one links nochart.o instead, whose functions say that charts
 * need the dynamic bwapctl (the JSON it writes draws anywhere with
 * 'bwapctl report --from').  format.c and peers_parse.c are in both.
 */
#ifndef BWAP_RENDER_H
#define BWAP_RENDER_H

#include "../lib/bwap.h"

struct json_object;

enum bwap_chart_format { BWAP_CHART_PNG, BWAP_CHART_SVG };

/* ---- format.c ------------------------------------------------------------ */

/* From the file name: FILE.png or FILE.svg; -1 with err for anything else. */
int bwap_chart_format(const char *path, char *err, size_t errlen);

/* ---- chart.c (nochart.c) -------------------------------------------------- */

/* 0 where this bwapctl draws charts; -1 with why not (the static build). */
int bwap_charts_available(char *err, size_t errlen);

/* ---- report.c: the matrix heatmap and the canonical weights ------------- */

int bwap_chart_report(const char *path, const struct bwap_matrix *m, const struct bwap_weights *w,
		      bwap_nodeset workers, char *err, size_t errlen);

/* ---- curve.c: bwapd's DWP search curve -------------------------------------- */

/*
 * The metric against DWP, in measurement order; settled (if not NULL,
 * search >= 0) is where the search settled, ringed.
 */
int bwap_chart_curve(const char *path, const struct bwap_tuner_point *pts, int n,
		     const struct bwap_tuner_point *settled, const char *metric, const char *source,
		     char *err, size_t errlen);

/* ---- search.c: bwapctl search's result ------------------------------------ */

/* Best speedup over the baseline per page policy x page NUMA degree, from search's JSON. */
int bwap_chart_search(const char *path, struct json_object *result, char *err, size_t errlen);
/* A score's readable name: "wall time, s" or the text before a regex's capture group. */
char *bwap_score_name(const char *score, char *buf, size_t len);

/* ---- bench.c: bwapctl bench's result ---------------------------------------- */

/* GB/s per kernel and placement, from bench's JSON. */
int bwap_chart_bench(const char *path, struct json_object *bench, char *err, size_t errlen);

/* ---- peers_parse.c: rebalance-bench --peers' text report (both builds) ------ */

#define BWAP_PEERS_MAX_SCENARIOS 16
#define BWAP_PEERS_MAX_METHODS 8
#define BWAP_PEERS_MAX_NODES 64

/* One method's row in one scenario; have = 0 where it printed "n/a" or no row. */
struct bwap_peers_row {
	int have;
	int na;			/* printed "n/a" (no DAMON in that kernel) */
	long moved, refault;
	long off;		/* pages away from the per-node shares at the end ("shares") */
	long layout;		/* pages not where a fresh fault under NEW puts them */
	char goal[8];		/* the method's own goal: "shares" or "layout" */
	/*
	 * The fewest moves that reach this method's own goal from its own
	 * start state, and moved / it: the report's "min" and "/min" columns.
	 * A report from before the "min" column divided every row by the
	 * shares' minimum: there a shares row gets the scenario's minimum (or
	 * DAMON shr's own, from its note), and a layout row (DAMON) -1 for
	 * both, not comparable.
	 */
	long goal_min;
	double per_min;
	int folio_blind;	/* the bench's note: this row planned in base pages, blind to folio sizes */
	long long instr;	/* guest instructions (or ns, see unit) */
	double per_kernel;	/* instr / the kernel's, as printed */
	double per_moved;
	double reached_ms;	/* until the end state met its goal; -1: never */
	double win[2];		/* window balance over 64 and 512 pages */
	long final[BWAP_PEERS_MAX_NODES];
};

struct bwap_peers_scenario {
	char name[64], what[128], old_w[128], new_w[128];
	long pages, minimum;
	int thp;		/* ", THP always" */
	struct bwap_peers_row row[BWAP_PEERS_MAX_METHODS];	/* by method index */
};

struct bwap_peers_report {
	char source_name[256];	/* the file (or name) it was parsed from */
	/* "# kernel base 7.3 (SRC VER), variant V, topology T" from run-bench; "" without it */
	char base[64], source[128], variant[64], topology[64];
	int nodes, worker_cpu, worker_node, repeats;
	char unit[8];		/* "instr" (run-vm --icount) or "ns" */
	int goal_min_column;	/* the rows have "min": /min against each method's own goal */
	int nr_methods, nr_scenarios;
	char method[BWAP_PEERS_MAX_METHODS][16];	/* in the report's order; "kernel" first */
	struct bwap_peers_scenario sc[BWAP_PEERS_MAX_SCENARIOS];
	int tap_plan, tap_ok, tap_not_ok;	/* the TAP plan (1..N) and its ok and not ok lines */
};

/*
 * Parse a report (text, named name in messages) strictly: every line is
 * one the bench prints; any other, or a number that is not finite or out
 * of range or disagrees with its row, is an error naming the line.
 * 0, or -1 with err.
 */
int bwap_peers_parse(const char *text, const char *name, struct bwap_peers_report *r, char *err,
		     size_t errlen);
/* The same from a file. */
int bwap_peers_read(const char *path, struct bwap_peers_report *r, char *err, size_t errlen);

/* ---- peers.c: its chart ------------------------------------------------------ */

/*
 * Two panels, pages moved / the minimum to each method's own goal (rows
 * without one, per_min < 0, drawn n/a) over instructions / the kernel's:
 * grouped bars per scenario, a colour per method, log scale when the
 * values span more than a factor of 10.
 */
int bwap_chart_peers(const char *path, const struct bwap_peers_report *r, char *err, size_t errlen);

#endif /* BWAP_RENDER_H */
