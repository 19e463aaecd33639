// SPDX-License-Identifier: GPL-2.0
/*
 * The coupled placement search behind 'bwapctl search': the space of
 * thread node set x scatter/contiguous x thread count x page policy x
 * page node set (Popov et al., ICS'19, with BWAP's weighted interleave as
 * extra page policies), pruned by their Table 1 rules, predicted by the
 * placement model, and the order in which to run its points.
 *
 * Pruning (Table 1, made exact):
 *  - thread node sets: for each degree, the rational (best-connected) sets
 *    of sets.c, one per symmetry class: the sets 'measure --all-sets' keeps;
 *  - TND <= NT <= TND x CPUs per node; contiguous only when it uses every
 *    node of the set (NT > (TND - 1) x CPUs per node) and differs from
 *    scatter (not TND 1, not all CPUs of the set);
 *  - pages of degree PND are the PND memory nodes the thread nodes read
 *    fastest (canonical capacity), so a set is never one a user would skip;
 *  - two points that place threads and pages identically (same threads per
 *    node, same policy mode and weights) are one point.
 *
 * Order (bwap_search_next): the baseline first, then in turn the point the
 * model ranks best, an unmeasured neighbour of the best measured point (one
 * coordinate changed), the model's next, and an exploration point whose
 * coordinates have been measured least.  Neighbours and exploration follow
 * the measurements, not the model, so a wrong model slows the search down
 * but cannot hide the best point.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bwap.h"

const char *const bwap_page_policy_name[BWAP_NR_PAGE_POLICIES] = {
	"first-touch", "locality", "interleave", "bwap-dwp0", "bwap-dwp0.5", "bwap-dwp1",
};

static const double policy_dwp[BWAP_NR_PAGE_POLICIES] = { 0, 0, 0, 0, 0.5, 1 };

void bwap_search_opts_defaults(struct bwap_search_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->thread_degrees = ~(bwap_nodeset)0;
	o->page_degrees = ~(bwap_nodeset)0;
	o->policies = (1u << BWAP_NR_PAGE_POLICIES) - 1;
	o->mlp = 12;
	o->shared = 0.5;
}

/* Per-node thread counts of nt threads over the nodes of set (id order). */
static int place_threads(const struct bwap_search_space *s, bwap_nodeset set, int nt, int contiguous,
			 int *per_node)
{
	int left = nt;

	memset(per_node, 0, sizeof(int) * BWAP_MAX_NODES);
	if (contiguous) {
		for (int n = 0; n < s->nr_nodes && left; n++)
			if (bwap_nodeset_has(set, n)) {
				int take = left < s->nr_cpus[n] ? left : s->nr_cpus[n];

				per_node[n] = take;
				left -= take;
			}
	} else {
		while (left) {
			int placed = 0;

			for (int n = 0; n < s->nr_nodes && left; n++)
				if (bwap_nodeset_has(set, n) && per_node[n] < s->nr_cpus[n]) {
					per_node[n]++;
					left--;
					placed = 1;
				}
			if (!placed)
				return -1;
		}
	}
	return left ? -1 : 0;
}

int bwap_search_point_cpus(const struct bwap_search_space *s, const struct bwap_search_point *p,
			   int *cpus)
{
	int k = 0, taken[BWAP_MAX_NODES] = { 0 }, more = 1;

	/* scatter: one CPU of each node in turn; contiguous: node by node */
	if (p->contiguous) {
		for (int n = 0; n < s->nr_nodes; n++)
			for (int i = 0; i < p->per_node[n]; i++)
				cpus[k++] = s->cpu[n][i];
		return k;
	}
	while (more) {
		more = 0;
		for (int n = 0; n < s->nr_nodes; n++)
			if (taken[n] < p->per_node[n]) {
				cpus[k++] = s->cpu[n][taken[n]++];
				more = 1;
			}
	}
	return k;
}

/* Memory nodes in order of canonical capacity to the workers (highest first). */
static int capacity_order(const struct bwap_matrix *m, bwap_nodeset mem, bwap_nodeset workers, int *order)
{
	double cap[BWAP_MAX_NODES];
	char err[256];
	int k = 0;

	if (bwap_canonical_capacity(m, workers, mem, cap, err, sizeof(err)))
		return -1;
	for (int n = 0; n < m->nr_nodes; n++)
		if (bwap_nodeset_has(mem, n))
			order[k++] = n;
	/* insertion sort: higher capacity first, workers before others on ties, then id */
	for (int i = 1; i < k; i++)
		for (int j = i; j > 0; j--) {
			int a = order[j - 1], b = order[j];
			int swap = cap[b] > cap[a] * (1 + 1e-9) ||
				   (fabs(cap[b] - cap[a]) <= cap[a] * 1e-9 &&
				    bwap_nodeset_has(workers, b) && !bwap_nodeset_has(workers, a));

			if (!swap)
				break;
			order[j - 1] = b;
			order[j] = a;
		}
	return k;
}

static int same_placement(const struct bwap_search_point *a, const struct bwap_search_point *b, int n)
{
	int ia = a->policy >= BWAP_PAGES_INTERLEAVE, ib = b->policy >= BWAP_PAGES_INTERLEAVE;

	if (memcmp(a->per_node, b->per_node, sizeof(a->per_node)) || ia != ib)
		return 0;
	if (!ia)
		return a->policy == b->policy;
	/* interleave: the same shares (weights up to a common factor) */
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			if ((long)a->weights[i] * b->weights[j] != (long)a->weights[j] * b->weights[i])
				return 0;
	return 1;
}

static int add_point(struct bwap_search_space *s, const struct bwap_search_point *p)
{
	for (int i = 0; i < s->nr; i++)
		if (same_placement(&s->pt[i], p, s->nr_nodes)) {
			s->nr_duplicates++;
			return i;
		}
	if (s->nr == s->cap) {
		int cap = s->cap ? 2 * s->cap : 256;
		struct bwap_search_point *n = realloc(s->pt, cap * sizeof(*n));

		if (!n)
			return -1;
		s->pt = n;
		s->cap = cap;
	}
	s->pt[s->nr] = *p;
	s->pt[s->nr].id = s->nr;
	return s->nr++;
}

static int set_weights(struct bwap_search_point *p, const struct bwap_matrix *m, bwap_nodeset workers,
		       bwap_nodeset pages, char *err, size_t errlen)
{
	struct bwap_weights w;
	double cap[BWAP_MAX_NODES];

	memset(p->weights, 0, sizeof(p->weights));
	if (p->policy == BWAP_PAGES_INTERLEAVE) {
		for (int n = 0; n < m->nr_nodes; n++)
			if (bwap_nodeset_has(pages, n))
				p->weights[n] = 1;
		p->page_nodes = pages;
		return 0;
	}
	if (bwap_canonical_capacity(m, workers, pages, cap, err, errlen) ||
	    bwap_weights_from_capacity(&w, cap, m->nr_nodes, pages, err, errlen))
		return -1;
	if (policy_dwp[p->policy] > 0)
		bwap_weights_apply_dwp(&w, workers, policy_dwp[p->policy]);
	/* the same quantisation as 'bwapctl run', so its flags reproduce these weights */
	bwap_weights_quantise(&w, 255, 0.005);
	for (int n = 0; n < m->nr_nodes; n++)
		p->weights[n] = bwap_nodeset_has(w.nodes, n) ? w.w[n] : 0;
	p->page_nodes = w.nodes;
	return 0;
}

static void predict(struct bwap_search_point *p, const struct bwap_machine *mc,
		    const struct bwap_search_opts *o)
{
	struct bwap_workload wl;
	struct bwap_prediction pr;
	double dist[BWAP_MAX_NODES] = { 0 }, sum = 0;

	memset(&wl, 0, sizeof(wl));
	memcpy(wl.threads, p->per_node, sizeof(wl.threads));
	wl.first_node = __builtin_ctzll(p->thread_nodes);
	wl.mlp = o->mlp;
	wl.shared = o->shared;
	wl.demand = o->demand;
	for (int n = 0; n < mc->nr_nodes; n++)
		sum += p->weights[n];
	for (int n = 0; n < mc->nr_nodes; n++)
		dist[n] = sum > 0 ? p->weights[n] / sum : 0;
	/* locality binds to the thread nodes, where first touch puts pages anyway */
	bwap_model_predict(mc, &wl, dist, p->policy < BWAP_PAGES_INTERLEAVE, &pr);
	p->predicted = pr.throughput;
}

int bwap_search_predict(struct bwap_search_space *s, const struct bwap_matrix *model,
			const struct bwap_search_opts *o, char *err, size_t errlen)
{
	struct bwap_machine *mc = malloc(sizeof(*mc));

	if (!mc || bwap_machine_from_matrix(mc, model, err, errlen)) {
		free(mc);
		return -1;
	}
	for (int i = 0; i < s->nr; i++)
		predict(&s->pt[i], mc, o);
	free(mc);
	return 0;
}

int bwap_search_space_build(struct bwap_search_space *s, const struct bwap_matrix *m,
			    const struct bwap_search_opts *o, char *err, size_t errlen)
{
	static struct bwap_set_class classes[BWAP_MAX_SETS];
	int nr_classes, order[BWAP_MAX_NODES], total_cpus = 0;
	bwap_nodeset all_cpu = 0;
	struct bwap_search_point base;

	s->pt = NULL;
	s->nr = s->cap = 0;
	s->nr_duplicates = s->nr_pruned = 0;
	s->nr_nodes = m->nr_nodes;
	s->mem_nodes = 0;
	for (int n = 0; n < m->nr_nodes; n++) {
		for (int c = 0; c < m->nr_nodes; c++)
			if (m->bw[c][n] > 0)
				s->mem_nodes |= BWAP_NODE_BIT(n);
		if (s->nr_cpus[n] > 0) {
			all_cpu |= BWAP_NODE_BIT(n);
			total_cpus += s->nr_cpus[n];
		}
	}
	if (!all_cpu) {
		snprintf(err, errlen, "no node has CPUs to run threads on");
		return -1;
	}
	nr_classes = bwap_rational_sets_matrix(m, classes, BWAP_MAX_SETS);
	if (nr_classes <= 0) {
		snprintf(err, errlen, "no worker sets from the matrix (does it have full CPU rows?)");
		return -1;
	}
	/* the baseline: first-touch, scatter, every CPU */
	memset(&base, 0, sizeof(base));
	base.thread_nodes = all_cpu;
	base.nr_threads = total_cpus;
	base.policy = BWAP_PAGES_FIRST_TOUCH;
	base.set_class = -1;
	base.page_degree = bwap_nodeset_count(all_cpu);
	place_threads(s, all_cpu, total_cpus, 0, base.per_node);
	s->baseline = add_point(s, &base);
	if (s->baseline < 0)
		goto nomem;
	for (int ci = 0; ci < nr_classes; ci++) {
		bwap_nodeset set = classes[ci].rep & all_cpu;
		int tnd = bwap_nodeset_count(set), set_cpus = 0, min_cpus = BWAP_MAX_CPUS;
		int counts[64], nr_counts = 0, nr_mem;

		if (!set || set != classes[ci].rep || !(o->thread_degrees & BWAP_NODE_BIT(tnd % 64)))
			continue;
		for (int n = 0; n < s->nr_nodes; n++)
			if (bwap_nodeset_has(set, n)) {
				set_cpus += s->nr_cpus[n];
				if (s->nr_cpus[n] < min_cpus)
					min_cpus = s->nr_cpus[n];
			}
		if (o->nr_thread_counts) {
			for (int i = 0; i < o->nr_thread_counts && nr_counts < 64; i++) {
				if (o->thread_counts[i] >= tnd && o->thread_counts[i] <= set_cpus)
					counts[nr_counts++] = o->thread_counts[i];
				else
					s->nr_pruned++;
			}
		} else {
			/* TND x 1, 2, 4, ... threads per node, and every CPU of the set */
			for (int per = 1; per < min_cpus && nr_counts < 63; per *= 2)
				counts[nr_counts++] = per * tnd;
			counts[nr_counts++] = set_cpus;
		}
		nr_mem = capacity_order(m, s->mem_nodes, set, order);
		if (nr_mem < 0) {
			snprintf(err, errlen, "the matrix lacks bandwidths from the memory nodes to nodes %llx",
				 (unsigned long long)set);
			return -1;
		}
		for (int ti = 0; ti < nr_counts; ti++)
			for (int contiguous = 0; contiguous < 2; contiguous++) {
				struct bwap_search_point p;
				int scatter[BWAP_MAX_NODES];

				memset(&p, 0, sizeof(p));
				p.thread_nodes = set;
				p.set_class = ci;
				p.contiguous = contiguous;
				p.nr_threads = counts[ti];
				if (place_threads(s, set, p.nr_threads, contiguous, p.per_node))
					continue;
				if (contiguous) {
					int used = 0;

					place_threads(s, set, p.nr_threads, 0, scatter);
					for (int n = 0; n < s->nr_nodes; n++)
						used += p.per_node[n] > 0;
					/* Table 1: contiguous must use every node and differ from scatter */
					if (used < tnd || !memcmp(scatter, p.per_node, sizeof(scatter))) {
						s->nr_pruned++;
						continue;
					}
				}
				for (int pol = 0; pol < BWAP_NR_PAGE_POLICIES; pol++) {
					if (!(o->policies & (1u << pol)))
						continue;
					p.policy = pol;
					if (pol < BWAP_PAGES_INTERLEAVE) {
						p.page_nodes = set;
						p.page_degree = tnd;
						memset(p.weights, 0, sizeof(p.weights));
						if (add_point(s, &p) < 0)
							goto nomem;
						continue;
					}
					for (int d = 1; d <= nr_mem; d++) {
						bwap_nodeset pages = 0;

						if (!(o->page_degrees & BWAP_NODE_BIT(d % 64)))
							continue;
						for (int i = 0; i < d; i++)
							pages |= BWAP_NODE_BIT(order[i]);
						p.page_degree = d;
						if (set_weights(&p, m, set, pages, err, errlen))
							return -1;
						if (add_point(s, &p) < 0)
							goto nomem;
					}
				}
			}
	}
	return 0;
nomem:
	snprintf(err, errlen, "out of memory for the search space");
	return -1;
}

void bwap_search_space_free(struct bwap_search_space *s)
{
	free(s->pt);
	s->pt = NULL;
	s->nr = s->cap = 0;
}

int bwap_search_better(const struct bwap_search_space *s, double a, double b)
{
	return s->higher_is_better ? a > b : a < b;
}

double bwap_search_speedup(const struct bwap_search_space *s, const struct bwap_search_point *p)
{
	const struct bwap_search_point *b = &s->pt[s->baseline];

	if (p->state != BWAP_POINT_DONE || b->state != BWAP_POINT_DONE || p->score <= 0 || b->score <= 0)
		return NAN;
	return s->higher_is_better ? p->score / b->score : b->score / p->score;
}

int bwap_search_best(const struct bwap_search_space *s)
{
	int best = -1;

	for (int i = 0; i < s->nr; i++)
		if (s->pt[i].state == BWAP_POINT_DONE &&
		    (best < 0 || bwap_search_better(s, s->pt[i].score, s->pt[best].score)))
			best = i;
	return best;
}

/* Which coordinates of a and b differ: thread set, placement, count, policy, page degree. */
static int differences(const struct bwap_search_point *a, const struct bwap_search_point *b)
{
	int ta = bwap_nodeset_count(a->thread_nodes), tb = bwap_nodeset_count(b->thread_nodes);
	int paged = a->policy >= BWAP_PAGES_INTERLEAVE && b->policy >= BWAP_PAGES_INTERLEAVE;

	/* threads per node, not NT: a neighbouring set of another size keeps the density */
	return (a->thread_nodes != b->thread_nodes) + (a->contiguous != b->contiguous) +
	       (a->nr_threads * tb != b->nr_threads * ta) + (a->policy != b->policy) +
	       (paged && a->page_degree != b->page_degree);
}

static int model_pick(const struct bwap_search_space *s)
{
	int best = -1;

	for (int i = 0; i < s->nr; i++)
		if (s->pt[i].state == BWAP_POINT_NEW &&
		    (best < 0 || s->pt[i].predicted > s->pt[best].predicted))
			best = i;
	return best;
}

/*
 * Does the model rank the measured points as they measured?  The fraction
 * of measured pairs it orders right; 1 before there are 8 to judge by.
 */
double bwap_search_model_trust(const struct bwap_search_space *s)
{
	long right = 0, pairs = 0;
	int nd = 0;

	for (int i = 0; i < s->nr; i++) {
		const struct bwap_search_point *a = &s->pt[i];

		if (a->state != BWAP_POINT_DONE)
			continue;
		nd++;
		for (int j = 0; j < i; j++) {
			const struct bwap_search_point *b = &s->pt[j];

			if (b->state != BWAP_POINT_DONE || a->score == b->score || a->predicted == b->predicted)
				continue;
			pairs++;
			right += bwap_search_better(s, a->score, b->score) == (a->predicted > b->predicted);
		}
	}
	return nd < 8 || !pairs ? 1 : (double)right / pairs;
}

/* An unmeasured point one coordinate away from the best measured (then the next best). */
static int neighbour_pick(const struct bwap_search_space *s, int trusted)
{
	int done[4096], nd = 0;

	for (int i = 0; i < s->nr && nd < 4096; i++)
		if (s->pt[i].state == BWAP_POINT_DONE)
			done[nd++] = i;
	/* measured points from best to worst (selection, nd is small) */
	for (int r = 0; r < nd; r++) {
		int top = r, pick = -1;

		for (int j = r + 1; j < nd; j++)
			if (bwap_search_better(s, s->pt[done[j]].score, s->pt[done[top]].score))
				top = j;
		int t = done[r];

		done[r] = done[top];
		done[top] = t;
		for (int i = 0; i < s->nr; i++)
			if (s->pt[i].state == BWAP_POINT_NEW && differences(&s->pt[i], &s->pt[done[r]]) == 1 &&
			    (pick < 0 || (trusted && s->pt[i].predicted > s->pt[pick].predicted)))
				pick = i;
		if (pick >= 0)
			return pick;
	}
	return -1;
}

/* The unmeasured point whose coordinate values have been measured least often. */
static int explore_pick(const struct bwap_search_space *s)
{
	int best = -1;
	long best_cov = 0;

	for (int i = 0; i < s->nr; i++) {
		const struct bwap_search_point *p = &s->pt[i];
		long cov = 0;

		if (p->state != BWAP_POINT_NEW)
			continue;
		for (int j = 0; j < s->nr; j++) {
			const struct bwap_search_point *q = &s->pt[j];

			if (q->state != BWAP_POINT_DONE)
				continue;
			cov += (q->thread_nodes == p->thread_nodes) + (q->nr_threads == p->nr_threads) +
			       (q->policy == p->policy) + (q->page_degree == p->page_degree) +
			       (q->contiguous == p->contiguous);
		}
		if (best < 0 || cov < best_cov || (cov == best_cov && p->predicted > s->pt[best].predicted)) {
			best = i;
			best_cov = cov;
		}
	}
	return best;
}

int bwap_search_next(struct bwap_search_space *s, enum bwap_search_reason *why)
{
	/* the turn: model, neighbour, model, explore */
	static const enum bwap_search_reason turn[4] = {
		BWAP_WHY_MODEL, BWAP_WHY_NEIGHBOUR, BWAP_WHY_MODEL, BWAP_WHY_EXPLORE,
	};

	if (s->pt[s->baseline].state == BWAP_POINT_NEW) {
		*why = BWAP_WHY_BASELINE;
		return s->baseline;
	}
	/* a model that orders the measurements no better than a coin loses its turns */
	int trusted = bwap_search_model_trust(s) >= BWAP_SEARCH_MIN_TRUST;

	for (int k = 0; k < 4; k++) {
		enum bwap_search_reason r = turn[(s->turn + k) % 4];
		int i;

		if (r == BWAP_WHY_MODEL && !trusted)
			r = BWAP_WHY_NEIGHBOUR;
		i = r == BWAP_WHY_MODEL ? model_pick(s) : r == BWAP_WHY_NEIGHBOUR ? neighbour_pick(s, trusted) :
			explore_pick(s);

		if (i >= 0) {
			s->turn++;
			*why = r;
			return i;
		}
	}
	return -1;
}

const char *bwap_search_reason_name(enum bwap_search_reason r)
{
	static const char *const names[] = { "baseline", "model", "neighbour", "explore" };

	return r >= 0 && r <= BWAP_WHY_EXPLORE ? names[r] : "?";
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double bwap_median(const double *v, int n)
{
	double tmp[BWAP_SEARCH_MAX_SAMPLES];

	if (n <= 0)
		return NAN;
	if (n > BWAP_SEARCH_MAX_SAMPLES)
		n = BWAP_SEARCH_MAX_SAMPLES;
	memcpy(tmp, v, n * sizeof(*v));
	qsort(tmp, n, sizeof(*tmp), cmp_double);
	return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}
