// SPDX-License-Identifier: GPL-2.0
/*
 * bwapctl search's space and order (lib/search.c): Table 1 pruning, the
 * baseline, duplicate folding, and the search against a MODELLED workload
 * on the 8-node machine with 4 CPUs per node: it must reach the
 * exhaustive optimum within 2% in at most a quarter of the points, with
 * the right model and with a deliberately wrong one.
 */
#include <stdlib.h>

#include "tap.h"
#include "bwap.h"

static struct bwap_matrix *topo(const char *name)
{
	static struct bwap_matrix m;
	char path[PATH_MAX + 64], err[256];

	snprintf(path, sizeof(path), "%s/%s.topo", test_data("topologies"), name);
	if (bwap_matrix_load(&m, path, err, sizeof(err))) {
		printf("# %s\n", err);
		exit(1);
	}
	return &m;
}

static void cpus(struct bwap_search_space *s, int nodes, int per)
{
	memset(s, 0, sizeof(*s));
	for (int n = 0; n < nodes; n++) {
		s->nr_cpus[n] = per;
		for (int i = 0; i < per; i++)
			s->cpu[n][i] = n * per + i;
	}
}

/* The "true" score of a point: MODELLED throughput of a latency-sensitive workload. */
static double truth(const struct bwap_machine *mc, const struct bwap_search_point *p)
{
	struct bwap_workload wl = { .mlp = 6, .shared = 0.8, .demand = 1.0 };
	struct bwap_prediction pr;
	double dist[BWAP_MAX_NODES] = { 0 }, sum = 0;

	memcpy(wl.threads, p->per_node, sizeof(wl.threads));
	wl.first_node = __builtin_ctzll(p->thread_nodes);
	for (int n = 0; n < mc->nr_nodes; n++)
		sum += p->weights[n];
	for (int n = 0; n < mc->nr_nodes; n++)
		dist[n] = sum ? p->weights[n] / sum : 0;
	bwap_model_predict(mc, &wl, dist, p->policy < BWAP_PAGES_INTERLEAVE, &pr);
	/* a thread costs a little overhead each: more threads are not free */
	int nt = p->nr_threads;

	return pr.throughput / (1 + 0.04 * nt);
}

/* Run the search for budget points; returns the best truth found. */
static double search(struct bwap_search_space *s, const struct bwap_machine *mc, int budget, int *runs)
{
	enum bwap_search_reason why;
	int i, n = 0;

	while (n < budget && (i = bwap_search_next(s, &why)) >= 0) {
		s->pt[i].score = truth(mc, &s->pt[i]);
		s->pt[i].state = BWAP_POINT_DONE;
		s->pt[i].why = why;
		s->pt[i].order = ++n;
	}
	*runs = n;
	i = bwap_search_best(s);
	if (i >= 0)
		printf("# best found at run %d (%s): threads %llx x%d %s %s pnd %d\n", s->pt[i].order,
		       bwap_search_reason_name(s->pt[i].why), (unsigned long long)s->pt[i].thread_nodes,
		       s->pt[i].nr_threads, s->pt[i].contiguous ? "contiguous" : "scatter",
		       bwap_page_policy_name[s->pt[i].policy], s->pt[i].page_degree);
	return i >= 0 ? s->pt[i].score : 0;
}

int main(void)
{
	struct bwap_matrix *m = topo("8node-opteron");
	struct bwap_matrix *wrong = malloc(sizeof(*wrong));
	struct bwap_machine mc;
	struct bwap_search_space s;
	struct bwap_search_opts o;
	char err[256];
	double exhaustive = 0, found;
	int runs, contiguous_1 = 0, base_ok;

	bwap_machine_from_matrix(&mc, m, err, sizeof(err));
	bwap_search_opts_defaults(&o);

	/* the 4-node guest's shape: one CPU per node, so NT = TND and no contiguous */
	cpus(&s, 8, 1);
	CHECK(!bwap_search_space_build(&s, m, &o, err, sizeof(err)), "8 nodes x 1 CPU: space built");
	for (int i = 0; i < s.nr; i++)
		contiguous_1 += s.pt[i].contiguous || s.pt[i].nr_threads != bwap_nodeset_count(s.pt[i].thread_nodes);
	printf("# 8 nodes x 1 CPU: %d points, %d folded, %d pruned\n", s.nr, s.nr_duplicates, s.nr_pruned);
	CHECK(contiguous_1 == 0, "1 CPU per node: every point has NT = TND and scatter (%d do not)", contiguous_1);
	bwap_search_space_free(&s);

	cpus(&s, 8, 4);
	CHECK(!bwap_search_space_build(&s, m, &o, err, sizeof(err)), "8 nodes x 4 CPUs: space built: %s",
	      s.nr ? "" : err);
	s.higher_is_better = 1;	/* throughput */
	CHECK(!bwap_search_predict(&s, m, &o, err, sizeof(err)), "predicted by the model");
	printf("# space: %d points, %d duplicates folded, %d pruned by Table 1\n", s.nr, s.nr_duplicates,
	       s.nr_pruned);
	base_ok = s.pt[s.baseline].policy == BWAP_PAGES_FIRST_TOUCH && s.pt[s.baseline].nr_threads == 32 &&
		  !s.pt[s.baseline].contiguous && s.pt[s.baseline].thread_nodes == 0xff;
	CHECK(base_ok, "baseline is first-touch, scatter, all 32 CPUs");
	{
		int bad = 0, dwp1_foreign = 0;

		for (int i = 0; i < s.nr; i++) {
			struct bwap_search_point *p = &s.pt[i];
			int tnd = bwap_nodeset_count(p->thread_nodes), sum = 0, used = 0;

			for (int n = 0; n < 8; n++) {
				sum += p->per_node[n];
				used += p->per_node[n] > 0;
				if (p->per_node[n] && !bwap_nodeset_has(p->thread_nodes, n))
					bad++;
			}
			if (sum != p->nr_threads || p->nr_threads < tnd || p->nr_threads > 4 * tnd || used != tnd)
				bad++;
			if (p->policy == BWAP_PAGES_DWP1 && (p->page_nodes & ~p->thread_nodes))
				dwp1_foreign++;
			for (int j = 0; j < i; j++)
				if (!memcmp(p->per_node, s.pt[j].per_node, sizeof(p->per_node)) &&
				    p->policy == s.pt[j].policy && p->policy < BWAP_PAGES_INTERLEAVE)
					bad++;
		}
		CHECK(bad == 0, "Table 1: TND <= NT <= 4 TND, every thread node used, no duplicate (%d bad)", bad);
		CHECK(dwp1_foreign == 0, "DWP 1 keeps pages on thread nodes only");
	}
	/* the scatter order of 8 threads on nodes 0,1: alternating nodes */
	{
		struct bwap_search_point p = { .thread_nodes = 3, .nr_threads = 4, .per_node = { 2, 2 } };
		int c[8], k = bwap_search_point_cpus(&s, &p, c);

		CHECK(k == 4 && c[0] == 0 && c[1] == 4 && c[2] == 1 && c[3] == 5, "scatter CPUs 0,4,1,5");
		p.contiguous = 1;
		k = bwap_search_point_cpus(&s, &p, c);
		CHECK(k == 4 && c[0] == 0 && c[1] == 1 && c[2] == 4 && c[3] == 5, "contiguous CPUs 0,1,4,5");
	}

	for (int i = 0; i < s.nr; i++)
		if (truth(&mc, &s.pt[i]) > exhaustive)
			exhaustive = truth(&mc, &s.pt[i]);
	{
		int top = 0;
		char a[64], b[64];

		for (int i = 0; i < s.nr; i++)
			if (truth(&mc, &s.pt[i]) > truth(&mc, &s.pt[top]))
				top = i;
		printf("# optimum: threads %s x%d %s, %s over %s; baseline %.3f of it\n",
		       bwap_nodeset_format(s.pt[top].thread_nodes, a, sizeof(a)), s.pt[top].nr_threads,
		       s.pt[top].contiguous ? "contiguous" : "scatter", bwap_page_policy_name[s.pt[top].policy],
		       bwap_nodeset_format(s.pt[top].page_nodes, b, sizeof(b)),
		       truth(&mc, &s.pt[s.baseline]) / exhaustive);
	}
	found = search(&s, &mc, s.nr / 4, &runs);
	printf("# right model: best %.3f of exhaustive %.3f after %d of %d points\n", found, exhaustive, runs, s.nr);
	CHECK(runs <= s.nr / 4 && found >= 0.98 * exhaustive,
	      "search finds the exhaustive optimum within 2%% in a quarter of the points (%.4f)", found / exhaustive);

	/* a deliberately wrong model: bandwidths turned upside down, and its ranking reversed */
	*wrong = *m;
	for (int c = 0; c < 8; c++)
		for (int n = 0; n < 8; n++)
			wrong->bw[c][n] = 1e6 / m->bw[c][n];
	for (int i = 0; i < s.nr; i++) {
		s.pt[i].state = BWAP_POINT_NEW;
		s.pt[i].nr_samples = 0;
	}
	s.turn = 0;
	CHECK(!bwap_search_predict(&s, wrong, &o, err, sizeof(err)), "wrong model predicted");
	for (int i = 0; i < s.nr; i++)
		s.pt[i].predicted = -s.pt[i].predicted;
	{
		int worst_first = 0, top = -1;

		for (int i = 0; i < s.nr; i++)
			if (top < 0 || s.pt[i].predicted > s.pt[top].predicted)
				top = i;
		worst_first = truth(&mc, &s.pt[top]) < 0.8 * exhaustive;
		CHECK(worst_first, "the wrong model's favourite is far from the optimum (%.3f)",
		      truth(&mc, &s.pt[top]) / exhaustive);
	}
	found = search(&s, &mc, s.nr / 4, &runs);
	printf("# wrong model: best %.3f of exhaustive %.3f after %d of %d points\n", found, exhaustive, runs, s.nr);
	CHECK(found >= 0.98 * exhaustive, "a wrong model still finds the optimum within 2%% (%.4f)",
	      found / exhaustive);

	/* the lower-is-better direction */
	s.higher_is_better = 0;
	CHECK(bwap_search_better(&s, 1, 2) && !bwap_search_better(&s, 2, 1), "lower is better for wall time");
	CHECK_NEAR(bwap_median((double[]){ 5, 1, 3, 100 }, 4), 4, 1e-12, "median of an even count");
	bwap_search_space_free(&s);
	free(wrong);
	return tap_done();
}
