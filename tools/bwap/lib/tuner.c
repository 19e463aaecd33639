// SPDX-License-Identifier: GPL-2.0
/*
 * Hill climbing on data-to-worker proximity (DWP), as BWAP's online tuner
 * does it, plus two things the paper leaves out: the search may go either
 * way from where it starts, and it starts again when the metric at the
 * optimum drifts.
 *
 * The caller samples its signal every `interval` seconds at DWP t->cur and
 * feeds each sample in.  After `samples` of them the trimmed mean is the
 * metric for that DWP (lower is better: a stall rate, or the inverse of a
 * progress rate), and the tuner decides:
 *  - the first measurement of a search is the baseline; step towards the
 *    workers (away from them at the upper bound);
 *  - better than the best so far by more than min_gain: keep going;
 *  - not better: if this was the first step in this direction, try one
 *    step the other way from the best; otherwise step back to the best and
 *    stop there (a local optimum);
 *  - once settled, keep measuring at the optimum; a metric more than
 *    `drift` away from the optimum's restarts the search from there.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwap.h"

void bwap_tuner_defaults(struct bwap_tuner_params *p)
{
	/*
	 * step: how far one move shifts DWP.  The search ends within one step
	 * of a local optimum, so a smaller step lands closer to it but needs
	 * more measurements (and more page migration) to get there; 0.10 is
	 * BWAP's choice and crosses the whole range in ten steps.
	 */
	p->step = 0.10;
	/*
	 * samples (n) and trim (c): each measurement takes n samples and
	 * averages the middle n - 2c, so up to c outliers at each end (a GC
	 * pause, a burst of other work) do not steer the search.  More
	 * samples make the mean steadier but every step slower (n * t
	 * seconds); a larger c rejects more outliers but wastes more samples.
	 * BWAP uses n = 20, c = 5.
	 */
	p->samples = 20;
	p->trim = 5;
	/*
	 * interval (t): seconds per sample.  Short samples react faster but
	 * see more noise and wake the daemon more often (CPU use); 0.2 s is
	 * BWAP's value, 4 s per step with n = 20.
	 */
	p->interval = 0.2;
	/*
	 * min_gain: a step counts as better only if it lowers the metric by
	 * more than this fraction.  Too small and noise walks the search
	 * around; too large and it stops short on a flat slope.  0.2%.
	 */
	p->min_gain = 0.002;
	/*
	 * drift: once settled, a measurement that differs from the optimum's
	 * metric by more than this fraction means the workload changed, and
	 * the search starts again from the current DWP.  Lower re-tunes
	 * sooner but may chase noise, costing migrations; 10%.
	 */
	p->drift = 0.10;
	/*
	 * lo, hi: the DWP range searched.  0 is canonical weights, 1 puts
	 * nothing on non-worker nodes.  --protect raises lo (co-scheduled
	 * mode); otherwise the whole range.
	 */
	p->lo = 0;
	p->hi = 1;
}

int bwap_tuner_check(const struct bwap_tuner_params *p, char *err, size_t errlen)
{
	if (!(p->step > 0 && p->step <= 1))
		snprintf(err, errlen, "step %g is outside (0, 1]; BWAP's default is 0.10", p->step);
	else if (p->samples < 1 || p->samples > BWAP_TUNER_MAX_SAMPLES)
		snprintf(err, errlen, "samples %d is outside 1..%d", p->samples, BWAP_TUNER_MAX_SAMPLES);
	else if (p->trim < 0 || 2 * p->trim >= p->samples)
		snprintf(err, errlen, "trim %d must be at least 0 and less than half of samples (%d); "
			 "BWAP uses samples 20, trim 5", p->trim, p->samples);
	else if (!(p->interval >= 0.001 && p->interval <= 3600))
		snprintf(err, errlen, "interval %g s is outside 0.001..3600", p->interval);
	else if (!(p->min_gain >= 0 && p->min_gain < 1))
		snprintf(err, errlen, "min_gain %g is outside [0, 1)", p->min_gain);
	else if (!(p->drift > 0))
		snprintf(err, errlen, "drift %g must be above 0 (0.10 = restart on a 10%% change)", p->drift);
	else if (!(p->lo >= 0 && p->lo <= p->hi && p->hi <= 1))
		snprintf(err, errlen, "DWP bounds [%g, %g] must satisfy 0 <= lo <= hi <= 1", p->lo, p->hi);
	else
		return 0;
	return -1;
}

/* Keep DWP values on a clean grid, so that 0.1 + 0.2 prints as 0.3. */
static double snap(double x, const struct bwap_tuner_params *p)
{
	x = round(x * 1e6) / 1e6;
	if (x < p->lo)
		x = p->lo;
	if (x > p->hi)
		x = p->hi;
	return x;
}

static int in_range(double x, const struct bwap_tuner_params *p)
{
	return x >= p->lo - 1e-9 && x <= p->hi + 1e-9;
}

static void start_search(struct bwap_tuner *t, double start)
{
	t->phase = BWAP_TUNER_SEARCHING;
	t->cur = snap(start, &t->p);
	t->nr_samples = 0;
	t->have_best = 0;
	t->dir = 0;
	t->gains_in_dir = 0;
	t->tried_other = 0;
	t->searches++;
}

void bwap_tuner_init(struct bwap_tuner *t, const struct bwap_tuner_params *p, double start)
{
	memset(t, 0, sizeof(*t));
	t->p = *p;
	start_search(t, start);
}

void bwap_tuner_discard(struct bwap_tuner *t)
{
	t->nr_samples = 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double bwap_trimmed_mean(double *v, int n, int c)
{
	double sum = 0;

	qsort(v, n, sizeof(*v), cmp_double);
	for (int i = c; i < n - c; i++)
		sum += v[i];
	return sum / (n - 2 * c);
}

const char *bwap_tuner_action_name(enum bwap_tuner_action a)
{
	switch (a) {
	case BWAP_TUNER_SAMPLE: return "sample";
	case BWAP_TUNER_MOVE: return "move";
	case BWAP_TUNER_CONVERGED: return "converged";
	case BWAP_TUNER_RESTART: return "restart";
	}
	return "?";
}

static void record(struct bwap_tuner *t, double metric)
{
	struct bwap_tuner_point *pt = &t->hist[t->nr_points % BWAP_TUNER_MAX_HISTORY];

	pt->dwp = t->cur;
	pt->metric = metric;
	pt->search = t->searches - 1;
	pt->settled = t->phase == BWAP_TUNER_SETTLED;
	t->nr_points++;
	if (t->nr_hist < BWAP_TUNER_MAX_HISTORY)
		t->nr_hist++;
}

/* Is a better than b by more than min_gain (relative to b's size)? */
static int better(const struct bwap_tuner *t, double a, double b)
{
	return a < b - t->p.min_gain * fabs(b) - 1e-12;
}

static enum bwap_tuner_action settle(struct bwap_tuner *t)
{
	t->phase = BWAP_TUNER_SETTLED;
	t->cur = t->best_dwp;
	return BWAP_TUNER_CONVERGED;
}

/* Move one step from the best in dir, or settle if that leaves the range. */
static enum bwap_tuner_action step_from_best(struct bwap_tuner *t)
{
	double next = t->best_dwp + t->dir * t->p.step;

	if (!in_range(next, &t->p) || fabs(snap(next, &t->p) - t->best_dwp) < 1e-9)
		return settle(t);
	t->cur = snap(next, &t->p);
	return BWAP_TUNER_MOVE;
}

enum bwap_tuner_action bwap_tuner_feed(struct bwap_tuner *t, double sample)
{
	double m;

	t->samples[t->nr_samples++] = sample;
	if (t->nr_samples < t->p.samples)
		return BWAP_TUNER_SAMPLE;
	m = bwap_trimmed_mean(t->samples, t->nr_samples, t->p.trim);
	t->nr_samples = 0;
	t->last_metric = m;
	record(t, m);

	if (t->phase == BWAP_TUNER_SETTLED) {
		double ref = fmax(fabs(t->best_metric), 1e-9);

		if (fabs(m - t->best_metric) > t->p.drift * ref) {
			start_search(t, t->cur);
			/* this measurement is the new baseline */
			t->have_best = 1;
			t->best_dwp = t->cur;
			t->best_metric = m;
			t->dir = in_range(t->cur + t->p.step, &t->p) ? 1 : -1;
			/* t->cur is now the first step of the new search (to push) */
			step_from_best(t);
			return BWAP_TUNER_RESTART;
		}
		return BWAP_TUNER_SAMPLE;
	}

	if (!t->have_best) {
		t->have_best = 1;
		t->best_dwp = t->cur;
		t->best_metric = m;
		t->dir = in_range(t->cur + t->p.step, &t->p) ? 1 : -1;
		return step_from_best(t);
	}
	if (better(t, m, t->best_metric)) {
		t->best_dwp = t->cur;
		t->best_metric = m;
		t->gains_in_dir++;
		return step_from_best(t);
	}
	/* Not better.  Only a failed first step leaves the other side unknown. */
	if (!t->gains_in_dir && !t->tried_other) {
		t->tried_other = 1;
		t->dir = -t->dir;
		return step_from_best(t);
	}
	return settle(t);
}

static void start_stage2(struct bwap_cosched *c, double floor)
{
	struct bwap_tuner_params p = c->p;

	c->stage = 2;
	c->floor = floor < p.lo ? p.lo : floor;
	p.lo = c->floor;
	bwap_tuner_init(&c->t, &p, c->floor);
}

void bwap_cosched_init(struct bwap_cosched *c, const struct bwap_tuner_params *p, double start,
		       int protect)
{
	memset(c, 0, sizeof(*c));
	c->p = *p;
	if (protect) {
		c->stage = 1;
		c->floor = p->lo;
		bwap_tuner_init(&c->t, p, start);
	} else {
		c->stage = 2;
		c->floor = p->lo;
		bwap_tuner_init(&c->t, p, start);
	}
}

enum bwap_tuner_action bwap_cosched_feed(struct bwap_cosched *c, double sample)
{
	enum bwap_tuner_action a = bwap_tuner_feed(&c->t, sample);

	if (c->stage == 1 && a == BWAP_TUNER_CONVERGED) {
		start_stage2(c, c->t.cur);
		return BWAP_TUNER_MOVE;
	}
	return a;
}

void bwap_cosched_end_stage1(struct bwap_cosched *c)
{
	if (c->stage == 1)
		start_stage2(c, c->t.cur);
}
