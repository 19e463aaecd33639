// SPDX-License-Identifier: GPL-2.0
/*
 * bwapctl search, what was found: the ranked table, the command line that
 * reproduces the best point, the JSON (stdout and STATE_DIR/search/
 * results.json after every point) and the per-phase weights file.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <regex.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <json-c/json.h>

#include "search.h"

static const char *shell_quote(const char *s, char *buf, size_t len)
{
	size_t k = 0;

	if (*s && strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.,/:=+@%") == strlen(s))
		return s;
	buf[k++] = '\'';
	for (; *s && k + 5 < len; s++) {
		if (*s == '\'') {
			memcpy(buf + k, "'\\''", 4);
			k += 4;
		} else {
			buf[k++] = *s;
		}
	}
	buf[k++] = '\'';
	buf[k] = 0;
	return buf;
}

/* The command line that gives the point's configuration outside bwapctl search. */
static char *reproduce(const struct search_ctx *x, const struct bwap_search_point *p)
{
	char *out = NULL, cpus[4096], places[8192], a[512], b[4200], q[4300];
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	if (!f)
		return NULL;
	search_cpus_text(x, p, 0, cpus, sizeof(cpus));
	search_cpus_text(x, p, 1, places, sizeof(places));
	fprintf(f, "env OMP_NUM_THREADS=%d OMP_PLACES='%s' OMP_PROC_BIND=close ", p->nr_threads, places);
	switch (p->policy) {
	case BWAP_PAGES_FIRST_TOUCH:
		fprintf(f, "numactl --physcpubind=%s --", cpus);
		break;
	case BWAP_PAGES_LOCALITY:
		fprintf(f, "numactl --physcpubind=%s --membind=%s --", cpus,
			bwap_nodeset_format(p->thread_nodes, a, sizeof(a)));
		break;
	case BWAP_PAGES_INTERLEAVE:
		fprintf(f, "numactl --physcpubind=%s --interleave=%s --", cpus,
			bwap_nodeset_format(p->page_nodes, a, sizeof(a)));
		break;
	default:
		fprintf(f, "taskset -c %s bwapctl run --no-pin --no-tune --workers %s --nodes %s --dwp %s", cpus,
			bwap_nodeset_format(p->thread_nodes, a, sizeof(a)),
			bwap_nodeset_format(p->page_nodes, b, sizeof(b)),
			p->policy == BWAP_PAGES_DWP0 ? "0" : p->policy == BWAP_PAGES_DWP05 ? "0.5" : "1");
		if (x->matrix_file)
			fprintf(f, " --matrix %s", shell_quote(x->matrix_file, q, sizeof(q)));
		else if (x->hmat)
			fprintf(f, x->hmat_estimate ? " --hmat-estimate" : " --hmat");
		else
			fprintf(f, " --state-dir %s", shell_quote(x->state_dir, q, sizeof(q)));
		fprintf(f, " --");
	}
	for (int i = 0; i < x->nr_cmd; i++) {
		const char *at = strstr(x->cmd[i], "{threads}");
		char arg[4096];

		if (at)
			snprintf(arg, sizeof(arg), "%.*s%d%.2000s", (int)(at - x->cmd[i]) & 1023, x->cmd[i],
				 p->nr_threads, at + 9);
		else
			snprintf(arg, sizeof(arg), "%s", x->cmd[i]);
		fprintf(f, " %s", shell_quote(arg, q, sizeof(q)));
	}
	fclose(f);
	return out;
}

/*
 * Per phase, the page placement with the fewest seconds in that phase
 * among the points that place threads as the best point does (threads
 * cannot move at a phase change; pages can).  weighted: only points whose
 * policy is an interleave, the ones bwapd can push as weights.
 */
static int phase_best(const struct search_ctx *x, int k, int weighted)
{
	int best = bwap_search_best(&x->s), pick = -1;

	if (best < 0)
		return -1;
	for (int i = 0; i < x->s.nr; i++) {
		const struct bwap_search_point *p = &x->s.pt[i], *b = &x->s.pt[best];

		if (p->state != BWAP_POINT_DONE || !isfinite(p->phase_score[k]) ||
		    memcmp(p->per_node, b->per_node, sizeof(p->per_node)) || p->contiguous != b->contiguous ||
		    (weighted && p->policy < BWAP_PAGES_INTERLEAVE))
			continue;
		if (pick < 0 || p->phase_score[k] < x->s.pt[pick].phase_score[k])
			pick = i;
	}
	return pick;
}

static const char *placement_name(const struct bwap_search_point *p)
{
	return p->contiguous ? "contiguous" : "scatter";
}

static json_object *point_json(const struct search_ctx *x, const struct bwap_search_point *p)
{
	json_object *o = json_object_new_object(), *a;
	char buf[8192];
	double sp = bwap_search_speedup(&x->s, p);
	static const char *const state[] = { "new", "done", "failed" };

	json_object_object_add(o, "id", json_object_new_int(p->id));
	json_object_object_add(o, "thread_nodes",
			       json_object_new_string(bwap_nodeset_format(p->thread_nodes, buf, sizeof(buf))));
	json_object_object_add(o, "tnd", json_object_new_int(bwap_nodeset_count(p->thread_nodes)));
	json_object_object_add(o, "placement", json_object_new_string(placement_name(p)));
	json_object_object_add(o, "threads", json_object_new_int(p->nr_threads));
	a = json_object_new_array();
	for (int n = 0; n < x->s.nr_nodes; n++)
		json_object_array_add(a, json_object_new_int(p->per_node[n]));
	json_object_object_add(o, "threads_per_node", a);
	json_object_object_add(o, "cpus", json_object_new_string(search_cpus_text(x, p, 0, buf, sizeof(buf))));
	json_object_object_add(o, "policy", json_object_new_string(bwap_page_policy_name[p->policy]));
	json_object_object_add(o, "pnd", json_object_new_int(p->page_degree));
	json_object_object_add(o, "page_nodes", json_object_new_string(
		bwap_nodeset_format(p->policy == BWAP_PAGES_FIRST_TOUCH ? 0 : p->policy == BWAP_PAGES_LOCALITY ?
				    p->thread_nodes : p->page_nodes, buf, sizeof(buf))));
	a = json_object_new_array();
	for (int n = 0; n < x->s.nr_nodes; n++)
		json_object_array_add(a, json_object_new_int(p->weights[n]));
	json_object_object_add(o, "weights", a);
	json_object_object_add(o, "predicted_gbs_modelled", json_object_new_double(p->predicted));
	json_object_object_add(o, "state", json_object_new_string(state[p->state]));
	if (p->state != BWAP_POINT_NEW) {
		json_object_object_add(o, "why", json_object_new_string(bwap_search_reason_name(p->why)));
		json_object_object_add(o, "order", json_object_new_int(p->order));
		a = json_object_new_array();
		for (int i = 0; i < p->nr_samples; i++)
			json_object_array_add(a, json_object_new_double(p->samples[i]));
		json_object_object_add(o, "samples", a);
	}
	if (p->state == BWAP_POINT_DONE && x->s.nr_phases) {
		json_object *ph = json_object_new_object();

		for (int k = 0; k < x->s.nr_phases; k++)
			if (isfinite(p->phase_score[k]))
				json_object_object_add(ph, x->s.phase[k], json_object_new_double(p->phase_score[k]));
		json_object_object_add(o, "phase_seconds", ph);
	}
	if (p->state == BWAP_POINT_DONE) {
		json_object_object_add(o, "score", json_object_new_double(p->score));
		if (isfinite(sp))
			json_object_object_add(o, "speedup", json_object_new_double(sp));
	}
	return o;
}

json_object *search_result_json(const struct search_ctx *x, int all)
{
	json_object *o = json_object_new_object(), *a = json_object_new_array();
	int best = bwap_search_best(&x->s);

	json_object_object_add(o, "bwapctl", json_object_new_string("search"));
	json_object_object_add(o, "kernel", json_object_new_string(bwap_kernel_mode_name(x->mode)));
	json_object_object_add(o, "matrix", json_object_new_string(x->m->source));
	if (x->model_file)
		json_object_object_add(o, "model_matrix", json_object_new_string(x->model_file));
	for (int i = 0; i < x->nr_cmd; i++)
		json_object_array_add(a, json_object_new_string(x->cmd[i]));
	json_object_object_add(o, "command", a);
	json_object_object_add(o, "score", json_object_new_string(x->metric ? x->metric : "wall seconds"));
	json_object_object_add(o, "better", json_object_new_string(x->s.higher_is_better ? "higher" : "lower"));
	json_object_object_add(o, "space_points", json_object_new_int(x->s.nr));
	json_object_object_add(o, "duplicates_folded", json_object_new_int(x->s.nr_duplicates));
	json_object_object_add(o, "pruned_table1", json_object_new_int(x->s.nr_pruned));
	json_object_object_add(o, "budget", json_object_new_int(x->budget));
	json_object_object_add(o, "runs", json_object_new_int(x->runs_done));
	json_object_object_add(o, "interrupted", json_object_new_boolean(search_interrupted));
	json_object_object_add(o, "model_trust", json_object_new_double(bwap_search_model_trust(&x->s)));
	json_object_object_add(o, "baseline", json_object_new_int(x->s.baseline));
	json_object_object_add(o, "best", best >= 0 ? json_object_new_int(best) : NULL);
	if (best >= 0) {
		char *r = reproduce(x, &x->s.pt[best]);

		json_object_object_add(o, "reproduce", json_object_new_string(r ? r : ""));
		free(r);
	}
	if (x->s.nr_phases) {
		json_object *ph = json_object_new_array();

		for (int k = 0; k < x->s.nr_phases; k++) {
			json_object *e = json_object_new_object();
			int b = phase_best(x, k, 0), w = phase_best(x, k, 1);

			json_object_object_add(e, "name", json_object_new_string(x->s.phase[k]));
			json_object_object_add(e, "best", b >= 0 ? json_object_new_int(b) : NULL);
			if (b >= 0)
				json_object_object_add(e, "seconds", json_object_new_double(x->s.pt[b].phase_score[k]));
			json_object_object_add(e, "best_weighted", w >= 0 ? json_object_new_int(w) : NULL);
			json_object_array_add(ph, e);
		}
		json_object_object_add(o, "phases", ph);
	}
	a = json_object_new_array();
	for (int i = 0; i < x->s.nr; i++)
		if (all || x->s.pt[i].state != BWAP_POINT_NEW)
			json_object_array_add(a, point_json(x, &x->s.pt[i]));
	json_object_object_add(o, "points", a);
	return o;
}

/* STATE_DIR/search/results.json, replaced whole after every point. */
int search_save_state(const struct search_ctx *x)
{
	struct bwap_atomic_file af;
	char path[4200], err[512];
	json_object *o;

	snprintf(path, sizeof(path), "%s/results.json", x->dir);
	if (bwap_atomic_open(&af, path, err, sizeof(err))) {
		cli_error("search", "%s", err);
		return -1;
	}
	o = search_result_json(x, 0);
	fputs(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE), af.f);
	fputc('\n', af.f);
	json_object_put(o);
	if (bwap_atomic_commit(&af, err, sizeof(err))) {
		cli_error("search", "%s", err);
		return -1;
	}
	return 0;
}

/*
 * STATE_DIR/search/phase-weights: "NAME W0,W1,..." per phase, the weights
 * of the best interleave placement for the phase with the best point's
 * threads: what bwapd pushes at each phase change (bwapd(8), PHASES).
 */
int search_save_phase_weights(const struct search_ctx *x)
{
	struct bwap_atomic_file af;
	char path[4200], err[512];

	snprintf(path, sizeof(path), "%s/phase-weights", x->dir);
	if (bwap_atomic_open(&af, path, err, sizeof(err))) {
		cli_error("search", "%s", err);
		return -1;
	}
	for (int k = 0; k < x->s.nr_phases; k++) {
		int w = phase_best(x, k, 1);

		if (w < 0)
			continue;
		fprintf(af.f, "%s ", x->s.phase[k]);
		for (int n = 0; n < x->s.nr_nodes; n++)
			fprintf(af.f, "%s%d", n ? "," : "", x->s.pt[w].weights[n]);
		fprintf(af.f, "\n");
	}
	if (bwap_atomic_commit(&af, err, sizeof(err))) {
		cli_error("search", "%s", err);
		return -1;
	}
	return 0;
}

void search_describe(const struct search_ctx *x, const struct bwap_search_point *p, char *buf, size_t len)
{
	char a[256], b[256];

	snprintf(buf, len, "threads %s x%d %s, %s%s%s", bwap_nodeset_format(p->thread_nodes, a, sizeof(a)),
		 p->nr_threads, placement_name(p), bwap_page_policy_name[p->policy],
		 p->policy >= BWAP_PAGES_INTERLEAVE ? " over " : "",
		 p->policy >= BWAP_PAGES_INTERLEAVE ? bwap_nodeset_format(p->page_nodes, b, sizeof(b)) : "");
}

static int by_score(const void *a, const void *b, void *arg)
{
	const struct search_ctx *x = arg;
	const struct bwap_search_point *p = &x->s.pt[*(const int *)a], *q = &x->s.pt[*(const int *)b];

	if (p->state != q->state)
		return p->state == BWAP_POINT_DONE ? -1 : q->state == BWAP_POINT_DONE ? 1 : p->state - q->state;
	if (p->state != BWAP_POINT_DONE || p->score == q->score)
		return p->id - q->id;
	return bwap_search_better(&x->s, p->score, q->score) ? -1 : 1;
}

static int by_prediction(const void *a, const void *b, void *arg)
{
	const struct search_ctx *x = arg;
	double p = x->s.pt[*(const int *)a].predicted, q = x->s.pt[*(const int *)b].predicted;

	return p > q ? -1 : p < q;
}

void search_print_table(const struct search_ctx *x, FILE *f)
{
	int *idx = malloc(x->s.nr * sizeof(int)), rows = 0, best = bwap_search_best(&x->s);
	char a[256], b[256], c[256];

	if (!idx)
		return;
	for (int i = 0; i < x->s.nr; i++)
		idx[i] = i;
	qsort_r(idx, x->s.nr, sizeof(int), x->dry_run ? by_prediction : by_score, (void *)x);
	fprintf(f, "%s; score: %s (%s is better); matrix: %s%s\n", bwap_kernel_mode_name(x->mode),
		x->metric ? x->metric : "wall seconds", x->s.higher_is_better ? "higher" : "lower", x->m->source,
		search_interrupted ? "; INTERRUPTED" : "");
	fprintf(f, "space: %d points (%d folded as duplicates, %d cut by Table 1); run: %d%s\n", x->s.nr,
		x->s.nr_duplicates, x->s.nr_pruned, x->runs_done, x->dry_run ? " (dry run, model order)" : "");
	fprintf(f, "%4s %4s %12s %7s %3s %-10s %-10s %3s %-11s %3s %-10s %8s %-9s\n", "rank", "id", "score",
		"speedup", "TND", "threads", "placement", "NT", "policy", "PND", "pages", "model", "why");
	for (int r = 0; r < x->s.nr; r++) {
		const struct bwap_search_point *p = &x->s.pt[idx[r]];
		double sp = bwap_search_speedup(&x->s, p);
		char score[32], speed[16];

		if (!x->dry_run && p->state == BWAP_POINT_NEW)
			break;
		if (x->top && rows >= x->top)
			break;
		rows++;
		if (p->state == BWAP_POINT_DONE)
			snprintf(score, sizeof(score), "%.6g", p->score);
		else
			snprintf(score, sizeof(score), "%s", p->state == BWAP_POINT_FAILED ? "failed" : "-");
		if (isfinite(sp))
			snprintf(speed, sizeof(speed), "%.3fx", sp);
		else
			snprintf(speed, sizeof(speed), "-");
		fprintf(f, "%4d %4d %12s %7s %3d %-10s %-10s %3d %-11s %3d %-10s %8.2f %-9s%s\n", r + 1, p->id, score,
			speed, bwap_nodeset_count(p->thread_nodes),
			bwap_nodeset_format(p->thread_nodes, a, sizeof(a)), placement_name(p), p->nr_threads,
			bwap_page_policy_name[p->policy], p->page_degree,
			p->policy == BWAP_PAGES_FIRST_TOUCH ? "(touch)" :
			bwap_nodeset_format(p->policy == BWAP_PAGES_LOCALITY ? p->thread_nodes : p->page_nodes, b,
					    sizeof(b)),
			p->predicted, p->state == BWAP_POINT_NEW ? "" : bwap_search_reason_name(p->why),
			idx[r] == x->s.baseline ? "  <- baseline" : "");
	}
	fprintf(f, "model = MODELLED GB/s (placement model; a prediction, not a measurement); "
		   "model trust %.2f\n", bwap_search_model_trust(&x->s));
	if (best >= 0) {
		char *rep = reproduce(x, &x->s.pt[best]);

		search_describe(x, &x->s.pt[best], c, sizeof(c));
		fprintf(f, "best: point %d, %s: %.6g (%.3fx the baseline)\nreproduce: %s\n", best, c,
			x->s.pt[best].score, bwap_search_speedup(&x->s, &x->s.pt[best]), rep ? rep : "?");
		free(rep);
	}
	for (int k = 0; k < x->s.nr_phases; k++) {
		int b = phase_best(x, k, 0), w = phase_best(x, k, 1);

		if (b < 0)
			continue;
		search_describe(x, &x->s.pt[b], c, sizeof(c));
		fprintf(f, "phase %s: best point %d, %s: %.4g s in the phase (the best point: %.4g s)", x->s.phase[k],
			b, c, x->s.pt[b].phase_score[k], x->s.pt[best].phase_score[k]);
		if (w >= 0 && w != b)
			fprintf(f, "; best weighted: point %d, %.4g s", w, x->s.pt[w].phase_score[k]);
		fprintf(f, "\n");
	}
	free(idx);
}
