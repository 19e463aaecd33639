/* SPDX-License-Identifier: GPL-2.0 */
/* What the bwapctl subcommands share: option parsing helpers and matrix choice. */
#ifndef BWAP_CLI_H
#define BWAP_CLI_H

#include "../lib/bwap.h"
#include "../render/render.h"

/* Options every matrix-using subcommand takes. */
struct matrix_opts {
	const char *file;	/* --matrix FILE */
	int hmat;		/* --hmat: HMAT from sysfs even when a measured matrix exists */
	int hmat_estimate;	/* --hmat-estimate: fill HMAT gaps from SLIT */
	const char *state_dir;	/* --state-dir DIR */
	const char *sysfs_root;	/* BWAP_SYSFS_ROOT, for tests */
};

void matrix_opts_init(struct matrix_opts *o);
/* Consume one matrix option at argv[*i]; returns 1 if it was one, -1 on error. */
int matrix_opts_parse(struct matrix_opts *o, int argc, char **argv, int *i);
/* --matrix, else STATE_DIR/matrix (from measure), else HMAT; 0 or -1 (printed). */
int matrix_opts_load(const struct matrix_opts *o, struct bwap_matrix *m);
extern const char matrix_opts_help[];

/* Errors for the user: "bwapctl SUBCMD: message". */
void cli_error(const char *subcmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Value of an option that needs one, or NULL after printing an error. */
const char *cli_value(const char *subcmd, int argc, char **argv, int *i);
int cli_parse_double(const char *subcmd, const char *opt, const char *text, double lo, double hi,
		     double *out);
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
