/* SPDX-License-Identifier: GPL-2.0 */
/* What the bwapctl subcommands share: option parsing helpers and matrix choice. */
#ifndef BWAP_BWAPCTL_H
#define BWAP_BWAPCTL_H

#include "../lib/bwap.h"
#include "../render/render.h"

#include <getopt.h>

/* Long option codes of every subcommand (getopt_long's val); short ones are their letter. */
enum cli_opt {
	OPT_WORKERS = 256, OPT_NODES, OPT_DWP, OPT_MAX_WEIGHT, OPT_CAPACITIES, OPT_APPLY_SYSFS,
	OPT_RESTORE_SYSFS, OPT_MATRIX, OPT_HMAT, OPT_HMAT_ESTIMATE, OPT_STATE_DIR, OPT_JSON,
	OPT_ALL_SETS, OPT_SECONDS, OPT_SIZE, OPT_THREADS, OPT_ROUNDS, OPT_QUIET, OPT_NO_PIN,
	OPT_TUNE, OPT_NO_TUNE, OPT_SIGNAL, OPT_PROGRESS, OPT_PROTECT, OPT_BENCH, OPT_MLP,
	OPT_SHARED, OPT_DEMAND, OPT_SEARCH, OPT_WAIT, OPT_PUSHES, OPT_TIMEOUT, OPT_CPU_WINDOW,
	OPT_GLOBAL, OPT_DRY_RUN, OPT_PLACE_INTERVAL, OPT_VIA_KERNEL, OPT_METRIC, OPT_BETTER, OPT_MIN_TIME,
	OPT_BUDGET, OPT_THREAD_DEGREES, OPT_PAGE_DEGREES, OPT_POLICIES, OPT_MODEL_MATRIX, OPT_KEEP_OUTPUT,
	OPT_TOP, OPT_PHASES, OPT_PHASE_WEIGHTS, OPT_SAVE, OPT_FROM, OPT_MODEL_THREADS, OPT_PEERS, OPT_END
};

#define CLI_HELP_OPTION { "help", no_argument, NULL, 'h' }
#define CLI_MATRIX_OPTIONS						\
	{ "matrix", required_argument, NULL, OPT_MATRIX },		\
	{ "hmat", no_argument, NULL, OPT_HMAT },			\
	{ "hmat-estimate", no_argument, NULL, OPT_HMAT_ESTIMATE },	\
	{ "state-dir", required_argument, NULL, OPT_STATE_DIR }

/*
 * getopt_long for one subcommand.  cli_next() returns the next option's
 * code with its value in optarg, -1 at the end, or -2 after printing what
 * is wrong: an unknown option, a missing value, or an option given twice
 * (except the code in .repeatable).  optstring "+h" stops at the first
 * non-option (bwapctl run's program).
 */
struct cli_parser {
	const char *subcmd;
	const char *optstring;
	const struct option *longopts;
	int repeatable;
	unsigned char seen[OPT_END];
};

void cli_parser_init(struct cli_parser *p, const char *subcmd, const char *optstring,
		     const struct option *longopts);
int cli_next(struct cli_parser *p, int argc, char **argv);

/* Options every matrix-using subcommand takes. */
struct matrix_opts {
	const char *file;	/* --matrix FILE */
	int hmat;		/* --hmat: HMAT from sysfs even when a measured matrix exists */
	int hmat_estimate;	/* --hmat-estimate: fill HMAT gaps from SLIT */
	const char *state_dir;	/* --state-dir DIR */
	const char *sysfs_root;	/* BWAP_SYSFS_ROOT, for tests */
};

void matrix_opts_init(struct matrix_opts *o);
/* Take option code c (with optarg) if it is a matrix option: 1, else 0. */
int matrix_opts_take(struct matrix_opts *o, int c, const char *arg);
/* --matrix, else STATE_DIR/matrix (from measure), else HMAT; 0 or -1 (printed). */
int matrix_opts_load(const struct matrix_opts *o, struct bwap_matrix *m);
extern const char matrix_opts_help[];

/* What to place and how: the options of the subcommands that compute canonical weights. */
struct place_opts {
	bwap_nodeset workers;	/* --workers SET */
	bwap_nodeset nodes;	/* --nodes SET, if have_nodes */
	int have_workers, have_nodes;
	double dwp;		/* --dwp D in [0, 1] */
	long max_weight;	/* --max-weight W in [1, 255] */
};

#define CLI_PLACE_OPTIONS						\
	{ "workers", required_argument, NULL, OPT_WORKERS },		\
	{ "nodes", required_argument, NULL, OPT_NODES },		\
	{ "dwp", required_argument, NULL, OPT_DWP },			\
	{ "max-weight", required_argument, NULL, OPT_MAX_WEIGHT }

/* No sets, --max-weight 255, and --dwp's default (model's -1: not given). */
void place_opts_init(struct place_opts *o, double dwp);
/*
 * Take option code c (with optarg) if it is a placement option: 1 taken,
 * 0 not one, -1 a bad value (printed).  A subcommand lists only the
 * options it has, so it never sees the others.
 */
int place_opts_take(struct place_opts *o, const char *subcmd, int c, const char *arg);

/* Errors for the user: "bwapctl SUBCMD: message". */
void cli_error(const char *subcmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A finite number in [lo, hi]; -1 after printing why not. */
int cli_parse_double(const char *subcmd, const char *opt, const char *text, double lo, double hi,
		     double *out);
/* A whole number in [lo, hi] ("2.5" and "1e3" are refused); -1 after printing why not. */
int cli_parse_long(const char *subcmd, const char *opt, const char *text, long lo, long hi, long *out);
/* A node set for option opt; -1 after printing why not. */
int cli_parse_nodes(const char *subcmd, const char *opt, const char *text, bwap_nodeset *out);
int cli_parse_workers(const char *subcmd, const char *text, bwap_nodeset *out);

int cmd_topology(int argc, char **argv);
int cmd_weights(int argc, char **argv);
int cmd_measure(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_detach(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_place(int argc, char **argv);
int cmd_search(int argc, char **argv);
int cmd_bench(int argc, char **argv);
/* The per-node table of a placement, for place and run. */
void place_print(FILE *f, const struct bwap_place_stats *st, long pid);

/*
 * Register the calling process (about to exec) with bwapd; extra is more of
 * the attach request ("signal model ...").  1 registered, 0 no daemon (fine
 * unless required), -1 error (printed).
 */
int daemon_register(const char *state_dir, int required, const char *extra);

/* Canonical weights for workers from m, quantised; shared by weights, run, report. */
int canonical_weights(const char *subcmd, const struct bwap_matrix *m, bwap_nodeset workers,
		      bwap_nodeset nodes, double dwp, int max_weight, struct bwap_weights *w);

#endif
