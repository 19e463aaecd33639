/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the three files of 'bwapctl search' share: search.c (options, the
 * loop over points, the progress line), search_run.c (applying one point
 * to a run of the command and scoring it) and search_output.c (the table,
 * the reproduce line, JSON and the state files).
 */
#ifndef BWAP_CMD_SEARCH_H
#define BWAP_CMD_SEARCH_H

#include <regex.h>
#include <signal.h>
#include <json-c/json.h>

#include "bwapctl.h"

#define MAX_OUTPUT (1 << 20)	/* bytes of a run's stdout kept for --metric */

struct search_ctx {
	struct bwap_search_space s;
	struct bwap_search_opts o;
	struct bwap_matrix *m;
	enum bwap_kernel_mode mode;
	char **cmd;
	int nr_cmd;
	const char *metric;
	regex_t re;
	long repeats;
	double min_time, time_limit, place_interval;
	long budget;
	int keep_output, dry_run, json, top;
	int phases;			/* --phases: BWAP_PHASE is a FIFO in dir */
	char fifo[4200];
	const char *png, *state_dir, *matrix_file, *model_file;
	int hmat, hmat_estimate;
	char dir[4096];
	int runs_done;
	double started;
};

/* Set by SIGINT/SIGTERM (search.c); the run under way gets the signal too. */
extern volatile sig_atomic_t search_interrupted;
extern volatile pid_t search_running_child;

/* Monotonic seconds. */
double search_now(void);

/* ---- search_run.c ---------------------------------------------------- */

/* The CPUs of p as a list, or as OMP_PLACES ({0},{1},...) if places. */
char *search_cpus_text(const struct search_ctx *x, const struct bwap_search_point *p, int places,
		       char *buf, size_t len);
/*
 * Run the command once at p: its score, wall seconds and (--phases)
 * seconds per phase.  0, or -1 if the run failed or gave no score.
 */
int search_run_once(struct search_ctx *x, struct bwap_search_point *p, double *score, double *secs,
		    double *phase_secs);

/* ---- search_output.c ------------------------------------------------- */

json_object *search_result_json(const struct search_ctx *x, int all);
/* STATE_DIR/search/results.json, replaced whole. */
int search_save_state(const struct search_ctx *x);
int search_save_phase_weights(const struct search_ctx *x);
void search_describe(const struct search_ctx *x, const struct bwap_search_point *p, char *buf, size_t len);
void search_print_table(const struct search_ctx *x, FILE *f);

#endif
