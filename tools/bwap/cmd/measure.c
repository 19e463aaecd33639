// SPDX-License-Identifier: GPL-2.0
/*
 * bwapctl measure: bandwidth from every memory node to a worker set, with
 * the built-in read benchmark.  Single-node sets give rows of the matrix
 * (STATE_DIR/matrix); larger sets give one vector each (STATE_DIR/sets/SET).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwapctl.h"

static void help(FILE *f)
{
	fprintf(f, "Usage: bwapctl measure (--workers SET | --all-sets) [OPTIONS]\n\n"
		   "Measures bw(memory of node i -> threads on SET) for every memory node i:\n"
		   "one reader thread per CPU of SET, pinned, streams a buffer bound to node i\n"
		   "for the given time.  A single-node SET {w} gives row w of the bandwidth\n"
		   "matrix, saved in STATE_DIR/matrix (merged with rows measured before) for\n"
		   "'bwapctl weights'.  Each SET also goes to STATE_DIR/sets/SET.\n\n"
		   "  --workers SET    measure this worker set (and each of its nodes alone)\n"
		   "  --all-sets       measure every rational worker set, one per symmetry\n"
		   "                   class (see bwapctl(1), WORKER SETS)\n"
		   "  --seconds X      time per (set, node) pair (default 1; 0.01..60)\n"
		   "  --size MIB       buffer per pair in MiB (default 256)\n"
		   "  --threads N      reader threads (default: one per CPU of the set)\n"
		   "  --rounds N       measure each pair N times, keep the median (default 3)\n"
		   "  --state-dir DIR  where results go (default " BWAP_STATE_DIR ")\n"
		   "  --quiet          no progress on stderr\n"
		   "  -h, --help       this text\n\n"
		   "Runtime is about (number of sets) x (memory nodes) x X seconds.\n");
}

struct measure_run {
	struct bwap_topology *t;
	struct bwap_measure_opts o;
	int total, done;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * Measure set into vec[] (median MB/s per memory node), lo[] and hi[] (the
 * extremes); 0 or -1.  Rounds go over all nodes in turn, so that a change
 * in background load hits every node alike rather than one node's figure.
 */
static int measure_set(struct measure_run *r, bwap_nodeset set, double *vec, double *lo, double *hi)
{
	static double runs[BWAP_MAX_NODES][64];
	unsigned char cpus[BWAP_MAX_CPUS];
	char err[512], buf[256];

	bwap_nodeset_format(set, buf, sizeof(buf));
	if (!bwap_topology_cpus_of(r->t, set, cpus)) {
		cli_error("measure", "worker set %s has no CPUs; pick nodes from has_cpu", buf);
		return -1;
	}
	for (int k = 0; k < r->o.rounds; k++) {
		for (int i = 0; i < r->t->nr_nodes; i++) {
			double v;

			if (!bwap_nodeset_has(r->t->has_memory, i))
				continue;
			r->done++;
			v = bwap_measure_read_bw(cpus, i, &r->o, err, sizeof(err));
			if (v < 0) {
				cli_error("measure", "workers %s, memory node %d: %s", buf, i, err);
				return -1;
			}
			runs[i][k] = v;
			if (!r->o.quiet)
				fprintf(stderr, "measure: [%d/%d] workers %-8s <- node %-2d %10.0f MB/s\n",
					r->done, r->total, buf, i, v);
		}
	}
	for (int i = 0; i < r->t->nr_nodes; i++) {
		vec[i] = lo[i] = hi[i] = -1;
		if (!bwap_nodeset_has(r->t->has_memory, i))
			continue;
		qsort(runs[i], r->o.rounds, sizeof(double), cmp_double);
		lo[i] = runs[i][0];
		hi[i] = runs[i][r->o.rounds - 1];
		vec[i] = r->o.rounds % 2 ? runs[i][r->o.rounds / 2] :
			 (runs[i][r->o.rounds / 2 - 1] + runs[i][r->o.rounds / 2]) / 2;
	}
	return 0;
}

static int save_set(const char *dir, bwap_nodeset set, const double *vec, int n, double seconds)
{
	char path[4096], name[300], buf[256], err[4400];
	struct bwap_atomic_file af;

	bwap_state_path(dir, "sets", path, sizeof(path));
	if (bwap_state_mkdir(path, err, sizeof(err))) {
		cli_error("measure", "%s", err);
		return -1;
	}
	snprintf(name, sizeof(name), "sets/%s", bwap_nodeset_format(set, buf, sizeof(buf)));
	bwap_state_path(dir, name, path, sizeof(path));
	if (bwap_atomic_open(&af, path, err, sizeof(err))) {
		cli_error("measure", "%s", err);
		return -1;
	}
	fprintf(af.f, "# bwapctl measure: read bandwidth, MB/s, from each memory node to the\n"
		      "# threads of worker set %s (%.2f s per node)\nworkers %s\n", buf, seconds, buf);
	for (int i = 0; i < n; i++)
		if (vec[i] >= 0)
			fprintf(af.f, "node %d %.1f\n", i, vec[i]);
	if (bwap_atomic_commit(&af, err, sizeof(err))) {
		cli_error("measure", "%s", err);
		return -1;
	}
	return 0;
}

int cmd_measure(int argc, char **argv)
{
	struct measure_run r;
	struct bwap_matrix *m;
	struct bwap_set_class *classes = NULL;
	const char *state = BWAP_STATE_DIR;
	bwap_nodeset workers = 0;
	int all = 0, nr_classes = 0, ret = 1;
	long threads = 0, rounds = 3;
	double size_mib = 256, vec[BWAP_MAX_NODES], lo[BWAP_MAX_NODES],
	       hi[BWAP_MAX_NODES];
	char err[4400], path[4096], buf[256];
	struct bwap_atomic_file af;

	memset(&r, 0, sizeof(r));
	r.o.seconds = 1;
	static const struct option longopts[] = {
		{ "workers", required_argument, NULL, OPT_WORKERS },
		{ "all-sets", no_argument, NULL, OPT_ALL_SETS },
		{ "seconds", required_argument, NULL, OPT_SECONDS },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "rounds", required_argument, NULL, OPT_ROUNDS },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "quiet", no_argument, NULL, OPT_QUIET },
		CLI_HELP_OPTION,
		{ 0 }
	};
	struct cli_parser p;
	int c;

	cli_parser_init(&p, "measure", "h", longopts);
	while ((c = cli_next(&p, argc, argv)) != -1) {
		switch (c) {
		case -2:
			return 2;
		case 'h':
			help(stdout);
			return 0;
		case OPT_WORKERS:
			if (cli_parse_workers("measure", optarg, &workers))
				return 2;
			break;
		case OPT_ALL_SETS:
			all = 1;
			break;
		case OPT_SECONDS:
			if (cli_parse_double("measure", "--seconds", optarg, 0.01, 60, &r.o.seconds))
				return 2;
			break;
		case OPT_SIZE:
			if (cli_parse_double("measure", "--size", optarg, 1, 1 << 20, &size_mib))
				return 2;
			break;
		case OPT_THREADS:
			if (cli_parse_long("measure", "--threads", optarg, 1, 4096, &threads))
				return 2;
			break;
		case OPT_ROUNDS:
			if (cli_parse_long("measure", "--rounds", optarg, 1, 64, &rounds))
				return 2;
			break;
		case OPT_STATE_DIR:
			state = optarg;
			break;
		case OPT_QUIET:
			r.o.quiet = 1;
			break;
		}
	}
	if (optind < argc) {
		cli_error("measure", "unexpected argument '%s'; see 'bwapctl measure --help'", argv[optind]);
		return 2;
	}
	if (!workers == !all) {
		cli_error("measure", "give exactly one of --workers SET or --all-sets");
		return 2;
	}
	r.o.bytes = (size_t)(size_mib * 1048576);
	r.o.threads = (int)threads;
	r.o.rounds = (int)rounds;
	r.t = malloc(sizeof(*r.t));
	m = malloc(sizeof(*m));
	classes = calloc(BWAP_MAX_SETS, sizeof(*classes));
	if (!r.t || !m || !classes)
		goto out;
	if (bwap_topology_read(r.t, getenv("BWAP_SYSFS_ROOT"), err, sizeof(err))) {
		cli_error("measure", "%s", err);
		goto out;
	}
	/* before measuring: a result that cannot be saved is lost */
	if (bwap_state_writable(state, err, sizeof(err))) {
		cli_error("measure", "%s", err);
		goto out;
	}
	bwap_state_path(state, "sets", path, sizeof(path));
	if (bwap_state_writable(path, err, sizeof(err))) {
		cli_error("measure", "%s", err);
		goto out;
	}
	/* Start from the matrix measured before, if any, and add rows to it. */
	bwap_state_path(state, "matrix", path, sizeof(path));
	if (bwap_matrix_load(m, path, err, sizeof(err)) || m->nr_nodes != r.t->nr_nodes)
		bwap_matrix_init(m, r.t->nr_nodes);
	/* keep the SLIT table with the figures, for worker-set symmetry later */
	for (int a = 0; a < r.t->nr_nodes; a++)
		for (int b = 0; b < r.t->nr_nodes; b++) {
			m->dist[a][b] = r.t->node[a].distance[b];
			m->has_dist |= m->dist[a][b] > 0;
		}
	if (all) {
		nr_classes = bwap_rational_sets(r.t, NULL, classes, BWAP_MAX_SETS);
		if (nr_classes < 0)
			goto out;
	} else {
		if (workers & ~r.t->has_cpu) {
			cli_error("measure", "worker nodes %s have no CPUs (nodes with CPUs: %s)",
				  bwap_nodeset_format(workers & ~r.t->has_cpu, buf, sizeof(buf)),
				  bwap_nodeset_format(r.t->has_cpu, err, sizeof(err)));
			goto out;
		}
		/* each worker node alone (matrix rows), then the set if it is larger */
		for (int w = 0; w < r.t->nr_nodes; w++) {
			if (!bwap_nodeset_has(workers, w))
				continue;
			classes[nr_classes].rep = BWAP_NODE_BIT(w);
			classes[nr_classes].nr_members = 1;
			classes[nr_classes].members[0] = BWAP_NODE_BIT(w);
			for (int i = 0; i < BWAP_MAX_NODES; i++)
				classes[nr_classes].perm[0][i] = i;
			nr_classes++;
		}
		if (bwap_nodeset_count(workers) > 1) {
			classes[nr_classes] = classes[0];
			classes[nr_classes].rep = classes[nr_classes].members[0] = workers;
			nr_classes++;
		}
	}
	r.total = nr_classes * bwap_nodeset_count(r.t->has_memory) * r.o.rounds;
	if (!r.o.quiet)
		fprintf(stderr, "measure: %d worker set(s) x %d memory node(s) x %d round(s), %.2f s each, "
			"about %.0f s\n", nr_classes, bwap_nodeset_count(r.t->has_memory), r.o.rounds,
			r.o.seconds, r.total * r.o.seconds);
	printf("%-12s %-7s", "workers", "stands");
	for (int i = 0; i < r.t->nr_nodes; i++)
		if (bwap_nodeset_has(r.t->has_memory, i))
			printf(" %9s", (snprintf(buf, sizeof(buf), "node%d", i), buf));
	printf("   (MB/s, median of %d, measured)\n", r.o.rounds);
	for (int k = 0; k < nr_classes; k++) {
		struct bwap_set_class *c = &classes[k];

		if (measure_set(&r, c->rep, vec, lo, hi))
			goto out;
		printf("%-12s %-7d", bwap_nodeset_format(c->rep, buf, sizeof(buf)), c->nr_members);
		for (int i = 0; i < r.t->nr_nodes; i++)
			if (vec[i] >= 0)
				printf(" %9.0f", vec[i]);
		printf("\n%-12s %-7s", "  min-max", "");
		for (int i = 0; i < r.t->nr_nodes; i++)
			if (vec[i] >= 0)
				printf(" %9s", (snprintf(buf, sizeof(buf), "%.1f-%.1f", lo[i] / 1000, hi[i] / 1000), buf));
		printf("   (GB/s)\n");
		/* Symmetric images get the same figures with nodes renamed. */
		for (int j = 0; j < c->nr_members && j < BWAP_MAX_MEMBERS; j++) {
			double img[BWAP_MAX_NODES];

			for (int i = 0; i < BWAP_MAX_NODES; i++)
				img[i] = -1;
			for (int i = 0; i < r.t->nr_nodes; i++)
				img[c->perm[j][i]] = vec[i];
			if (save_set(state, c->members[j], img, r.t->nr_nodes, r.o.seconds))
				goto out;
			if (bwap_nodeset_count(c->members[j]) == 1) {
				int w = __builtin_ctzll(c->members[j]);

				for (int i = 0; i < r.t->nr_nodes; i++)
					m->bw[w][i] = img[i];
			}
		}
	}
	snprintf(m->source, sizeof(m->source), "bwapctl measure, %.2f s per pair", r.o.seconds);
	if (bwap_atomic_open(&af, path, err, sizeof(err))) {
		cli_error("measure", "%s", err);
		goto out;
	}
	bwap_matrix_write_text(m, af.f);
	if (bwap_atomic_commit(&af, err, sizeof(err))) {
		cli_error("measure", "%s", err);
		goto out;
	}
	printf("saved: %s and %s/sets/\n", path, state);
	ret = 0;
out:
	free(r.t);
	free(m);
	free(classes);
	return ret;
}
