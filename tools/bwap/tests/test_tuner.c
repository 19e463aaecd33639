// SPDX-License-Identifier: GPL-2.0
/*
 * The DWP tuner against the placement model.  The sample source is the
 * real model (model.c) evaluated on the page distribution the kernel
 * would produce for the weights at the tuner's DWP (quantised, as pushed);
 * only the clock is fake: every sample advances it by the interval.
 * From DWP 0 and from DWP 1 the search must end within one step of the
 * model's optimum (scanned at 0.01), for workloads whose optimum is at 0,
 * in the interior and at 1.
 */
#include <math.h>
#include <string.h>

#include "bwap.h"
#include "bwap.h"
#include "tap.h"

struct model_source {
	struct bwap_matrix m;
	struct bwap_machine mc;
	struct bwap_workload wl;
	bwap_nodeset workers;
	double clock;		/* fake seconds */
	long evaluations;
};

static int source_init(struct model_source *s, const char *topo, bwap_nodeset workers,
		       int threads, double mlp)
{
	char path[256], err[256];

	memset(s, 0, sizeof(*s));
	snprintf(path, sizeof(path), "%s/%s.topo", test_data("topologies"), topo);
	if (bwap_matrix_load(&s->m, path, err, sizeof(err)) ||
	    bwap_machine_from_matrix(&s->mc, &s->m, err, sizeof(err))) {
		printf("# %s\n", err);
		return -1;
	}
	s->workers = workers;
	for (int i = 0; i < BWAP_MAX_NODES; i++)
		if (bwap_nodeset_has(workers, i))
			s->wl.threads[i] = threads;
	s->wl.first_node = __builtin_ctzll(workers);
	s->wl.mlp = mlp;
	s->wl.shared = 0.5;
	return 0;
}

/* Weights at dwp as bwapd computes them, quantised to u8. */
static void weights_at(const struct model_source *s, double dwp, struct bwap_weights *w)
{
	bwap_nodeset all = (1ULL << s->m.nr_nodes) - 1;
	double cap[BWAP_MAX_NODES];
	char err[256];

	bwap_canonical_capacity(&s->m, s->workers, all, cap, err, sizeof(err));
	bwap_weights_from_capacity(w, cap, s->m.nr_nodes, all, err, sizeof(err));
	bwap_weights_apply_dwp(w, s->workers, dwp);
	bwap_weights_quantise(w, 255, 0.005);
}

/* Modelled stall at the distribution the quantised weights give. */
static double stall_at(struct model_source *s, double dwp)
{
	struct bwap_weights w;
	struct bwap_prediction p;
	double dist[BWAP_MAX_NODES];

	weights_at(s, dwp, &w);
	for (int i = 0; i < BWAP_MAX_NODES; i++)
		dist[i] = i < w.nr_nodes ? w.qshare[i] : 0;
	bwap_model_predict(&s->mc, &s->wl, dist, 0, &p);
	s->evaluations++;
	return p.stall;
}

static double scan_optimum(struct model_source *s)
{
	double best = 0, best_stall = INFINITY;

	for (int i = 0; i <= 100; i++) {
		double st = stall_at(s, i / 100.0);

		if (st < best_stall - 1e-12) {
			best_stall = st;
			best = i / 100.0;
		}
	}
	return best;
}

/* Run a search to convergence; returns the DWP it settled at (-1: it never did). */
static double search(struct model_source *s, const struct bwap_tuner_params *p, double start,
		     int *moves)
{
	struct bwap_tuner t;
	double cache_dwp = -1, cache = 0;

	bwap_tuner_init(&t, p, start);
	*moves = 0;
	for (int i = 0; i < 100000; i++) {
		enum bwap_tuner_action a;

		if (t.cur != cache_dwp) {
			cache = stall_at(s, t.cur);
			cache_dwp = t.cur;
		}
		s->clock += p->interval;
		a = bwap_tuner_feed(&t, cache);
		if (a == BWAP_TUNER_MOVE)
			(*moves)++;
		if (a == BWAP_TUNER_CONVERGED)
			return t.cur;
	}
	return -1;
}

static void test_optimum_within_one_step(const char *topo, bwap_nodeset workers, int threads,
					 double mlp, const char *where)
{
	struct model_source s;
	struct bwap_tuner_params p;
	double opt;

	bwap_tuner_defaults(&p);
	if (source_init(&s, topo, workers, threads, mlp)) {
		CHECK(0, "%s: model source for %s", where, topo);
		return;
	}
	opt = scan_optimum(&s);
	if (!strcmp(where, "optimum 0"))
		CHECK(opt == 0, "%s %s mlp %g threads %d: model optimum is 0 (scan says %.2f)",
		      topo, where, mlp, threads, opt);
	else if (!strcmp(where, "optimum 1"))
		CHECK(opt == 1, "%s %s mlp %g threads %d: model optimum is 1 (scan says %.2f)",
		      topo, where, mlp, threads, opt);
	else
		CHECK(opt >= 0.15 && opt <= 0.85, "%s %s mlp %g threads %d: model optimum is interior "
		      "(scan says %.2f)", topo, where, mlp, threads, opt);
	for (int from = 0; from <= 1; from++) {
		int moves;
		double t0 = s.clock, got = search(&s, &p, from, &moves);

		CHECK(got >= 0 && fabs(got - opt) <= p.step + 1e-9,
		      "%s %s from DWP %d: settled at %.2f, optimum %.2f (%d moves, %.0f s of fake clock)",
		      topo, where, from, got, opt, moves, s.clock - t0);
	}
}

/* Outliers at both ends of every measurement are trimmed away. */
static void test_outliers_are_trimmed(void)
{
	struct model_source s;
	struct bwap_tuner_params p;
	struct bwap_tuner t;
	double opt, got = -1;
	unsigned int seed = 12345;

	bwap_tuner_defaults(&p);
	source_init(&s, "4node-asymmetric", BWAP_NODE_BIT(0), 8, 6);
	opt = scan_optimum(&s);
	bwap_tuner_init(&t, &p, 0);
	for (int i = 0; i < 100000; i++) {
		double v = stall_at(&s, t.cur);
		int k = i % p.samples;

		/* c wild samples low and c high in every measurement, plus jitter */
		seed = seed * 1103515245 + 12345;
		if (k < p.trim)
			v = 0;
		else if (k < 2 * p.trim)
			v = 10;
		else
			v *= 1 + ((seed >> 16) % 1000) * 1e-7;
		if (bwap_tuner_feed(&t, v) == BWAP_TUNER_CONVERGED) {
			got = t.cur;
			break;
		}
	}
	CHECK(got >= 0 && fabs(got - opt) <= p.step + 1e-9,
	      "with %d outliers at each end of every measurement: settled at %.2f, optimum %.2f",
	      p.trim, got, opt);
}

static void test_trimmed_mean(void)
{
	double v[10] = { 100, 1, 2, 3, 4, 5, 6, 7, 8, -50 };

	CHECK(bwap_trimmed_mean(v, 10, 2) == 4.5, "trimmed mean drops c=2 from each end: 4.5");
	CHECK(bwap_trimmed_mean(v, 10, 0) == 8.6, "c=0 is the plain mean: 8.6");
}

/* The workload changes after convergence: the tuner restarts and finds the new optimum. */
static void test_drift_restarts(void)
{
	struct model_source s;
	struct bwap_tuner_params p;
	struct bwap_tuner t;
	double opt_a, opt_b, settled_a = -1, settled_b = -1;
	int restarts = 0, phase = 0;

	bwap_tuner_defaults(&p);
	source_init(&s, "4node-asymmetric", BWAP_NODE_BIT(0), 8, 24);
	opt_a = scan_optimum(&s);
	s.wl.mlp = 1;
	opt_b = scan_optimum(&s);
	s.wl.mlp = 24;
	bwap_tuner_init(&t, &p, 0);
	for (int i = 0; i < 200000 && settled_b < 0; i++) {
		enum bwap_tuner_action a = bwap_tuner_feed(&t, stall_at(&s, t.cur));

		if (a == BWAP_TUNER_CONVERGED && phase == 0) {
			settled_a = t.cur;
			s.wl.mlp = 1;	/* the workload turns latency-bound */
			phase = 1;
		} else if (a == BWAP_TUNER_RESTART) {
			restarts++;
		} else if (a == BWAP_TUNER_CONVERGED && phase == 1) {
			settled_b = t.cur;
		}
	}
	CHECK(fabs(settled_a - opt_a) <= p.step + 1e-9, "drift: first search settles at %.2f (optimum %.2f)",
	      settled_a, opt_a);
	CHECK(restarts == 1, "drift: the changed workload restarts the search once (%d)", restarts);
	CHECK(settled_b >= 0 && fabs(settled_b - opt_b) <= p.step + 1e-9,
	      "drift: second search settles at %.2f (new optimum %.2f)", settled_b, opt_b);
	CHECK(t.searches == 2, "drift: two searches in all (%d)", t.searches);
}

/* A flat signal: no step is better, the search tries both sides and stays. */
static void test_flat_stays_put(void)
{
	struct bwap_tuner_params p;
	struct bwap_tuner t;
	int moves = 0;
	enum bwap_tuner_action a;

	bwap_tuner_defaults(&p);
	p.samples = 3;
	p.trim = 1;
	bwap_tuner_init(&t, &p, 0.5);
	do {
		a = bwap_tuner_feed(&t, 1.0);
		moves += a == BWAP_TUNER_MOVE;
	} while (a != BWAP_TUNER_CONVERGED);
	CHECK(t.cur == 0.5 && moves == 2, "flat metric from 0.5: tries 0.6 and 0.4, steps back to 0.5 (%.2f, %d moves)",
	      t.cur, moves);
	CHECK(t.nr_points == 3 && t.hist[1].dwp == 0.6 && t.hist[2].dwp == 0.4,
	      "history records 0.5, 0.6, 0.4");
	a = bwap_tuner_feed(&t, 1.05);
	a = bwap_tuner_feed(&t, 1.05);
	a = bwap_tuner_feed(&t, 1.05);
	CHECK(a == BWAP_TUNER_SAMPLE, "settled: a 5%% change is below drift 10%%, no restart");
	a = bwap_tuner_feed(&t, 1.5);
	a = bwap_tuner_feed(&t, 1.5);
	a = bwap_tuner_feed(&t, 1.5);
	CHECK(a == BWAP_TUNER_RESTART && t.cur == 0.6, "settled: a 50%% change restarts, first step 0.6 (%.2f)",
	      t.cur);
}

/* Bounds (co-scheduled mode raises lo): the search never leaves [lo, hi]. */
static void test_bounds(void)
{
	struct model_source s;
	struct bwap_tuner_params p;
	double got;
	int moves;

	bwap_tuner_defaults(&p);
	source_init(&s, "4node-asymmetric", BWAP_NODE_BIT(0), 8, 24);	/* optimum 0 */
	p.lo = 0.3;
	got = search(&s, &p, 0, &moves);
	CHECK(fabs(got - 0.3) < 1e-9, "lo 0.3, optimum 0: start clamps to 0.3 and stays (%.2f)", got);
}

/* Co-scheduled mode: the protected process gains up to DWP 0.3, then nothing. */
static double protected_metric(double dwp)
{
	return 1 - 0.5 * fmin(dwp, 0.3);
}

static double cosched(struct model_source *s, double *lowest)
{
	struct bwap_tuner_params p;
	struct bwap_cosched c;

	bwap_tuner_defaults(&p);
	bwap_cosched_init(&c, &p, 0, 1);
	*lowest = 1;
	for (int i = 0; i < 100000; i++) {
		enum bwap_tuner_action a;

		if (c.stage == 2)
			*lowest = fmin(*lowest, c.t.cur);
		a = bwap_cosched_feed(&c, c.stage == 1 ? protected_metric(c.t.cur) : stall_at(s, c.t.cur));
		if (a == BWAP_TUNER_CONVERGED && c.stage == 2)
			return c.floor == 0.3 ? c.t.cur : -1;
	}
	return -1;
}

static void test_cosched_two_stages(void)
{
	struct model_source s;
	double got, lowest;

	source_init(&s, "4node-asymmetric", BWAP_NODE_BIT(0), 8, 24);	/* target's optimum: 0 */
	got = cosched(&s, &lowest);
	CHECK(fabs(got - 0.3) < 1e-9 && lowest >= 0.3 - 1e-9,
	      "co-scheduled: stage 1 floor 0.3 (protected gains stop there); target with optimum 0 "
	      "settles at the floor (%.2f, never below: %.2f)", got, lowest);
	source_init(&s, "4node-asymmetric", BWAP_NODE_BIT(0), 8, 6);	/* target's optimum: 0.44 */
	got = cosched(&s, &lowest);
	CHECK(fabs(got - 0.4) < 1e-9 && lowest >= 0.3 - 1e-9,
	      "co-scheduled: target with optimum 0.44 settles at 0.40 above the floor 0.3 (%.2f)", got);
}

static void test_check_params(void)
{
	struct bwap_tuner_params p;
	char err[256];

	bwap_tuner_defaults(&p);
	CHECK(!bwap_tuner_check(&p, err, sizeof(err)) && p.samples == 20 && p.trim == 5 &&
	      p.interval == 0.2 && p.step == 0.1, "defaults: n=20, c=5, t=0.2 s, step 0.10, and valid");
	p.trim = 10;
	CHECK(bwap_tuner_check(&p, err, sizeof(err)) && strstr(err, "less than half"),
	      "trim 10 of 20 samples is refused: %s", err);
	bwap_tuner_defaults(&p);
	p.step = 0;
	CHECK(bwap_tuner_check(&p, err, sizeof(err)) && strstr(err, "step"), "step 0 is refused: %s", err);
}

int main(void)
{
	bwap_nodeset n0 = BWAP_NODE_BIT(0);

	test_trimmed_mean();
	test_check_params();
	/* 4-node machine, one worker node: optimum 0, interior, 1 (mlp 24, 6, 1) */
	test_optimum_within_one_step("4node-asymmetric", n0, 8, 24, "optimum 0");
	test_optimum_within_one_step("4node-asymmetric", n0, 8, 6, "interior");
	test_optimum_within_one_step("4node-asymmetric", n0, 8, 1, "optimum 1");
	/* 8-node machine, two worker nodes */
	test_optimum_within_one_step("8node-opteron", BWAP_NODE_BIT(0) | BWAP_NODE_BIT(1), 8, 24, "optimum 0");
	test_optimum_within_one_step("8node-opteron", BWAP_NODE_BIT(0) | BWAP_NODE_BIT(1), 8, 3, "interior");
	test_optimum_within_one_step("8node-opteron", BWAP_NODE_BIT(0) | BWAP_NODE_BIT(1), 8, 1, "optimum 1");
	test_outliers_are_trimmed();
	test_drift_restarts();
	test_flat_stays_put();
	test_bounds();
	test_cosched_two_stages();
	return tap_done();
}
