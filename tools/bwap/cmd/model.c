// SPDX-License-Identifier: GPL-2.0
/*
 * bwapctl model: predicted throughput of page placements, from the
 * placement model (model.c, MODEL.md).  Every figure is MODELLED.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwapctl.h"

#define MAX_BENCH 8
#define DWP_STEP 0.05

static void help(FILE *f)
{
	fprintf(f, "Usage: bwapctl model --workers SET [OPTIONS]\n"
		   "       bwapctl model --bench [--matrix FILE]... [OPTIONS]\n\n"
		   "Predicts, with the placement model of MODEL.md, the memory throughput of\n"
		   "an application on the worker nodes SET under these placements:\n"
		   "  first-touch      private data local, shared data on the first worker\n"
		   "  uniform-workers  equal interleave over the worker nodes\n"
		   "  uniform-all      equal interleave over every memory node\n"
		   "  auto-bw          weights from each node's own best bandwidth, in the\n"
		   "                   style of upstream's weighted_interleave 'auto' mode\n"
		   "  canonical        BWAP canonical weights for SET\n"
		   "  canonical+dwp    canonical with the best DWP (scanned in steps of %.2f)\n"
		   "All results are MODELLED, not measured.\n\n"
		   "  --workers SET    worker nodes\n"
		   "  --bench          compare the placements on each --matrix FILE given\n"
		   "                   (repeatable) for worker sets of 1, 2 and 4 nodes and\n"
		   "                   both workload presets; ratios to uniform-workers\n"
		   "  --threads N      threads per worker node (default 8)\n"
		   "  --mlp X          outstanding cache-line misses per thread (default 12,\n"
		   "                   'bandwidth' preset; 'latency' preset uses 3)\n"
		   "  --shared F       fraction of accesses to shared data, 0..1 (default 0.5)\n"
		   "  --demand GBS     per-thread compute limit, GB/s (default: none)\n"
		   "  --dwp X          also show canonical with this DWP\n"
		   "%s"
		   "  -h, --help       this text\n", DWP_STEP, matrix_opts_help);
}

enum { FIRST_TOUCH, UNIFORM_WORKERS, UNIFORM_ALL, AUTO_BW, CANONICAL, CANONICAL_DWP, NR_STRATEGIES };
static const char *const strategy_name[NR_STRATEGIES] = {
	"first-touch", "uniform-workers", "uniform-all", "auto-bw", "canonical", "canonical+dwp",
};

struct outcome {
	struct bwap_prediction p[NR_STRATEGIES];
	double best_dwp;
};

static bwap_nodeset memory_nodes(const struct bwap_matrix *m)
{
	bwap_nodeset s = 0;

	for (int i = 0; i < m->nr_nodes; i++)
		for (int c = 0; c < m->nr_nodes; c++)
			if (m->bw[c][i] > 0)
				s |= BWAP_NODE_BIT(i);
	return s;
}

static void uniform(double *dist, int n, bwap_nodeset set)
{
	int k = bwap_nodeset_count(set);

	for (int i = 0; i < BWAP_MAX_NODES; i++)
		dist[i] = i < n && bwap_nodeset_has(set, i) ? 1.0 / k : 0;
}

static int evaluate(const struct bwap_matrix *m, const struct bwap_workload *wl, bwap_nodeset workers,
		    struct outcome *o)
{
	struct bwap_machine mc;
	struct bwap_weights w;
	double dist[BWAP_MAX_NODES], cap[BWAP_MAX_NODES];
	bwap_nodeset mem = memory_nodes(m);
	char err[512];

	if (bwap_machine_from_matrix(&mc, m, err, sizeof(err))) {
		cli_error("model", "%s", err);
		return -1;
	}
	memset(dist, 0, sizeof(dist));
	bwap_model_predict(&mc, wl, dist, 1, &o->p[FIRST_TOUCH]);
	uniform(dist, m->nr_nodes, workers & mem);
	bwap_model_predict(&mc, wl, dist, 0, &o->p[UNIFORM_WORKERS]);
	uniform(dist, m->nr_nodes, mem);
	bwap_model_predict(&mc, wl, dist, 0, &o->p[UNIFORM_ALL]);
	for (int i = 0; i < m->nr_nodes; i++) {
		cap[i] = 0;
		for (int c = 0; c < m->nr_nodes; c++)
			cap[i] = fmax(cap[i], m->bw[c][i]);
	}
	if (bwap_weights_from_capacity(&w, cap, m->nr_nodes, mem, err, sizeof(err))) {
		cli_error("model", "%s", err);
		return -1;
	}
	bwap_weights_quantise(&w, 255, 0.005);
	bwap_weights_to_dist(&w, dist);
	bwap_model_predict(&mc, wl, dist, 0, &o->p[AUTO_BW]);
	if (canonical_weights("model", m, workers, mem, 0, 255, &w))
		return -1;
	bwap_weights_to_dist(&w, dist);
	bwap_model_predict(&mc, wl, dist, 0, &o->p[CANONICAL]);
	o->p[CANONICAL_DWP] = o->p[CANONICAL];
	o->best_dwp = 0;
	for (double d = DWP_STEP; d <= 1 + 1e-9; d += DWP_STEP) {
		struct bwap_prediction p;

		if (canonical_weights("model", m, workers, mem, d, 255, &w))
			return -1;
		bwap_weights_to_dist(&w, dist);
		bwap_model_predict(&mc, wl, dist, 0, &p);
		if (p.throughput > o->p[CANONICAL_DWP].throughput * (1 + 1e-9)) {
			o->p[CANONICAL_DWP] = p;
			o->best_dwp = d;
		}
	}
	return 0;
}

static void workload_for(struct bwap_workload *wl, bwap_nodeset workers, int threads, double mlp,
			 double shared, double demand)
{
	memset(wl, 0, sizeof(*wl));
	for (int i = 0; i < BWAP_MAX_NODES; i++)
		if (bwap_nodeset_has(workers, i))
			wl->threads[i] = threads;
	wl->first_node = __builtin_ctzll(workers);
	wl->mlp = mlp;
	wl->shared = shared;
	wl->demand = demand;
}

/* The lowest-numbered rational worker set of size k (see sets.c). */
static bwap_nodeset rational_set(const struct bwap_matrix *m, int k)
{
	static struct bwap_set_class classes[BWAP_MAX_SETS];
	int n = bwap_rational_sets_matrix(m, classes, BWAP_MAX_SETS);

	for (int i = 0; i < n; i++)
		if (bwap_nodeset_count(classes[i].rep) == k)
			return classes[i].rep;
	return 0;
}

static int bench(const char **files, int nr_files, int threads, double shared, double demand)
{
	static const struct { const char *name; double mlp; } presets[] = {
		{ "bandwidth", 12 }, { "latency", 3 },
	};
	static const int sizes[] = { 1, 2, 4 };
	struct bwap_matrix *m = malloc(sizeof(*m));
	char err[512], buf[64];

	if (!m)
		return 1;
	printf("MODELLED throughput (placement model, tools/bwap/MODEL.md), ratio to uniform-workers;\n"
	       "%d threads per worker node, shared fraction %.2f.  Not a measurement.\n\n",
	       threads, shared);
	printf("%-22s %-8s %-9s %6s %6s %6s %6s %6s %6s  %5s %8s\n", "machine", "workers", "workload",
	       "f-t", "uni-w", "uni-a", "auto", "canon", "c+dwp", "dwp", "GB/s c+d");
	for (int f = 0; f < nr_files; f++) {
		const char *base = strrchr(files[f], '/');

		if (bwap_matrix_load(m, files[f], err, sizeof(err))) {
			cli_error("model", "%s", err);
			free(m);
			return 1;
		}
		for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
			bwap_nodeset workers = rational_set(m, sizes[s]);

			if (!workers)
				continue;
			for (size_t p = 0; p < sizeof(presets) / sizeof(presets[0]); p++) {
				struct bwap_workload wl;
				struct outcome o;
				double ref;

				workload_for(&wl, workers, threads, presets[p].mlp, shared, demand);
				if (evaluate(m, &wl, workers, &o)) {
					free(m);
					return 1;
				}
				ref = o.p[UNIFORM_WORKERS].throughput;
				printf("%-22.22s %-8s %-9s", base ? base + 1 : files[f],
				       bwap_nodeset_format(workers, buf, sizeof(buf)), presets[p].name);
				for (int k = 0; k < NR_STRATEGIES; k++)
					printf(" %6.2f", o.p[k].throughput / ref);
				printf("  %5.2f %8.1f\n", o.best_dwp, o.p[CANONICAL_DWP].throughput);
			}
		}
	}
	printf("\nf-t = first-touch, uni-w/uni-a = uniform over workers/all nodes, auto = per-node\n"
	       "bandwidth weights (upstream 'auto' style), canon = BWAP canonical, c+dwp = canonical\n"
	       "with the best DWP; dwp = that DWP.  All MODELLED.\n");
	free(m);
	return 0;
}

int cmd_model(int argc, char **argv)
{
	struct matrix_opts mo;
	struct bwap_matrix *m;
	struct bwap_workload wl;
	struct outcome o;
	struct place_opts po;
	const char *files[MAX_BENCH];
	long threads = 8;
	double mlp = 12, shared = 0.5, demand = 0;
	int do_bench = 0, nr_files = 0;
	char buf[256];

	matrix_opts_init(&mo);
	place_opts_init(&po, -1);
	static const struct option longopts[] = {
		{ "bench", no_argument, NULL, OPT_BENCH },
		{ "workers", required_argument, NULL, OPT_WORKERS },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "mlp", required_argument, NULL, OPT_MLP },
		{ "shared", required_argument, NULL, OPT_SHARED },
		{ "demand", required_argument, NULL, OPT_DEMAND },
		{ "dwp", required_argument, NULL, OPT_DWP },
		CLI_MATRIX_OPTIONS,
		CLI_HELP_OPTION,
		{ 0 }
	};
	struct cli_parser p;
	int c, ok;

	cli_parser_init(&p, "model", "h", longopts);
	p.repeatable = OPT_MATRIX;	/* --bench compares several */
	while ((c = cli_next(&p, argc, argv)) != -1) {
		if (c == OPT_MATRIX) {
			if (nr_files >= MAX_BENCH) {
				cli_error("model", "at most %d --matrix files with --bench", MAX_BENCH);
				return 2;
			}
			files[nr_files++] = optarg;
		}
		if (matrix_opts_take(&mo, c, optarg))
			continue;
		ok = place_opts_take(&po, "model", c, optarg);
		if (ok < 0)
			return 2;
		if (ok)
			continue;
		switch (c) {
		case -2:
			return 2;
		case 'h':
			help(stdout);
			return 0;
		case OPT_BENCH:
			do_bench = 1;
			break;
		case OPT_THREADS:
			if (cli_parse_long("model", "--threads", optarg, 1, 1024, &threads))
				return 2;
			break;
		case OPT_MLP:
			if (cli_parse_double("model", "--mlp", optarg, 0.1, 1000, &mlp))
				return 2;
			break;
		case OPT_SHARED:
			if (cli_parse_double("model", "--shared", optarg, 0, 1, &shared))
				return 2;
			break;
		case OPT_DEMAND:
			if (cli_parse_double("model", "--demand", optarg, 0.001, 1e6, &demand))
				return 2;
			break;
		}
	}
	if (optind < argc) {
		cli_error("model", "unexpected argument '%s'; see 'bwapctl model --help'", argv[optind]);
		return 2;
	}
	if (!do_bench && nr_files > 1) {
		cli_error("model", "--matrix given %d times; only --bench compares several", nr_files);
		return 2;
	}
	if (do_bench) {
		if (!nr_files) {
			cli_error("model", "--bench needs at least one --matrix FILE");
			return 2;
		}
		return bench(files, nr_files, (int)threads, shared, demand);
	}
	if (!po.workers) {
		cli_error("model", "--workers SET is required (or --bench); see 'bwapctl model --help'");
		return 2;
	}
	m = malloc(sizeof(*m));
	if (!m || matrix_opts_load(&mo, m))
		return 1;
	workload_for(&wl, po.workers, (int)threads, mlp, shared, demand);
	if (evaluate(m, &wl, po.workers, &o)) {
		free(m);
		return 1;
	}
	printf("MODELLED (placement model, not a measurement); matrix: %s\n", m->source);
	printf("workers %s, %d threads/node, mlp %.1f, shared %.2f\n",
	       bwap_nodeset_format(po.workers, buf, sizeof(buf)), (int)threads, mlp, shared);
	printf("%-16s %10s %8s %10s %8s %8s\n", "placement", "GB/s", "ratio", "lat ns", "mc util", "stall");
	for (int k = 0; k < NR_STRATEGIES; k++)
		printf("%-16s %10.2f %8.3f %10.1f %8.2f %8.2f\n", strategy_name[k], o.p[k].throughput,
		       o.p[k].throughput / o.p[UNIFORM_WORKERS].throughput, o.p[k].mean_latency,
		       o.p[k].max_mc_util, o.p[k].stall);
	printf("best DWP: %.2f\n", o.best_dwp);
	if (po.dwp >= 0) {
		struct bwap_machine mc;
		struct bwap_weights w;
		struct bwap_prediction p;
		double dist[BWAP_MAX_NODES];
		char err[256];

		if (bwap_machine_from_matrix(&mc, m, err, sizeof(err)) ||
		    canonical_weights("model", m, po.workers, memory_nodes(m), po.dwp, 255, &w)) {
			free(m);
			return 1;
		}
		bwap_weights_to_dist(&w, dist);
		bwap_model_predict(&mc, &wl, dist, 0, &p);
		printf("canonical, dwp %.2f: %.2f GB/s (%.3f of uniform-workers)\n", po.dwp, p.throughput,
		       p.throughput / o.p[UNIFORM_WORKERS].throughput);
	}
	free(m);
	return 0;
}
