// SPDX-License-Identifier: GPL-2.0
/*
 * bwapctl bench: does BWAP help on this machine?  STREAM-style kernels
 * (lib/bench.c) under each page placement, from first-touch to BWAP with a
 * tuned DWP; every placement's pages per node are checked exactly before
 * it is timed.  A table, JSON (--json, --save) and a chart (-o).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "bwapctl.h"

#define MAX_REPEATS 100
#define NR_K BWAP_BENCH_NR_KERNELS
/* Nodes whose read bandwidths are within this ratio "measure alike": no real asymmetry. */
#define ALIKE_RATIO 1.10

static void help(FILE *f)
{
	fprintf(f, "Usage: bwapctl bench [--workers SET] [OPTIONS]\n\n"
		   "Measures memory bandwidth, GB/s, of STREAM-style kernels (copy, scale, add,\n"
		   "triad, and a read-only sum) run by threads pinned to the CPUs of the worker\n"
		   "nodes, under each page placement:\n"
		   "  first-touch         the default policy: each thread's slice on its node\n"
		   "  interleave-all      uniform interleave over all memory nodes\n"
		   "  interleave-workers  uniform interleave over the worker nodes (the baseline)\n"
		   "  upstream-wi         weighted interleave (mode 6) with the global sysfs table\n"
		   "                      as it is (auto weights where the kernel has them)\n"
		   "  upstream-auto       the weights upstream's auto mode gives this machine: read\n"
		   "                      from the kernel where auto is on (Linux 6.16+), else\n"
		   "                      computed from HMAT with 7.3's rule\n"
		   "  hmsdk-bwactl        the weights hmsdk's bwactl.py derives from the first\n"
		   "                      worker's row of the bandwidth matrix (or the probe)\n"
		   "  bwap-canonical      BWAP's canonical weights for the worker set\n"
		   "  bwap-dwp            the same with the DWP a short triad sweep found best\n"
		   "Pages per node are checked against the exact expected counts before each\n"
		   "placement is timed; a placement that did not happen is an error.  On a\n"
		   "kernel without the BWAP series, the weighted rows but upstream-wi are\n"
		   "applied with move_pages (portable mode); the made-by column says what\n"
		   "placed each row.\n\n"
		   "  --workers SET       worker nodes (default: the first node with CPUs)\n"
		   "  --threads N         threads, pinned in turn to the workers' CPUs\n"
		   "                      (default: one per CPU)\n"
		   "  --size MIB          bytes per array, in MiB (default: 4x the last-level\n"
		   "                      cache of the workers' CPUs, at least 1 MiB per thread)\n"
		   "  --repeats N         timed passes per kernel, 1..%d; the median is shown\n"
		   "                      with min-max (default 5)\n"
		   "  --dwp-step X        DWP sweep step, 0.05..1 (default 0.25: 0, .25 ... 1)\n"
		   "  --probe-seconds X   per-node read probe, 0.01..10 s (default 0.2)\n"
		   "  --max-weight N      largest weight, 1..255 (default 255)\n"
		   "  --model-threads N   threads per worker node in the MODELLED figures of an\n"
		   "                      emulated machine, 1..1024 (default 8)\n"
		   "  --json              the result as JSON on stdout instead of the table\n"
		   "  --save FILE         also write the JSON to FILE (send it to us)\n"
		   "  -o, --output FILE   chart: FILE.png or FILE.svg (dynamic bwapctl only;\n"
		   "                      else 'bwapctl report --from FILE.json -o FILE.png')\n"
		   "  --quiet             no progress on stderr\n"
		   "%s"
		   "  (without a matrix, canonical weights come from the probe)\n"
		   "  -h, --help          this text\n\n"
		   "Inside an emulated machine (QEMU TCG), or where every memory node reads\n"
		   "alike within %.0f%%, every figure is labelled EMULATED: the nodes are the\n"
		   "same memory and no placement can win real bandwidth there; each placement\n"
		   "then also gets a MODELLED figure, the placement model (MODEL.md) on the\n"
		   "machine's matrix.\n",
		MAX_REPEATS, matrix_opts_help, (ALIKE_RATIO - 1) * 100);
}

struct bench_row {
	const char *name;
	struct bwap_bench_place place;
	double dwp;		/* BWAP rows; -1 elsewhere */
	char from[800];		/* where the weights came from; "" for the rows that need no word */
	long expected[BWAP_MAX_NODES], actual[BWAP_MAX_NODES], moved;
	double samples[NR_K][MAX_REPEATS];
	double median[NR_K], lo[NR_K], hi[NR_K], ratio[NR_K];
};

struct bench_ctx {
	struct bwap_topology *t;
	struct bwap_bench b;
	enum bwap_kernel_mode mode;
	bwap_nodeset workers, mem;
	int repeats, quiet;
	double dwp_step, probe_seconds;
	long max_weight;
	size_t llc;
	int llc_level;
	char cpus_text[256];
	/* EMULATED and why; tcg: the CPU itself is emulated, so no measurement says anything */
	int emulated, tcg;
	char emulated_why[256];
	double probe[BWAP_MAX_NODES];	/* read GB/s from each memory node to the workers, -1 = none */
	/* canonical weights and where their capacities came from */
	double capacity[BWAP_MAX_NODES];
	char weights_source[700];
	int auto_weights;		/* weighted_interleave/auto says true */
	/* the matrix the canonical weights came from, if any; explicit: --matrix, --hmat */
	struct bwap_matrix *m;
	int have_matrix, matrix_explicit;
	struct bench_row row[10];
	int nr_rows;
	/* MODELLED GB/s of each row (EMULATED machines), or why there are none */
	int have_model;
	double model_gbs[10], model_ratio[10];
	int model_threads[BWAP_MAX_NODES];
	long model_threads_per_node;	/* --model-threads */
	char model_why[600];
	char skipped[6][700];
	int nr_skipped;
	double sweep_dwp[32], sweep_triad[32];
	unsigned char sweep_w[32][BWAP_MAX_NODES];
	int nr_sweep;
	double best_dwp;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void progress(const struct bench_ctx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(const struct bench_ctx *x, const char *fmt, ...)
{
	va_list ap;

	if (x->quiet)
		return;
	fprintf(stderr, "bench: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static const char *weights_text(const struct bwap_bench_place *p, char *buf, size_t len)
{
	size_t k = 0;

	if (p->method == BWAP_BENCH_FIRST_TOUCH || p->method == BWAP_BENCH_INTERLEAVE)
		return "-";
	buf[0] = '\0';
	for (int i = 0; i < BWAP_MAX_NODES && k + 8 < len; i++)
		if (bwap_nodeset_has(p->nodes, i))
			k += snprintf(buf + k, len - k, "%s%d:%d", k ? " " : "", i, p->w[i]);
	return buf;
}

/*
 * Read bandwidth from each memory node to the workers: it tells whether
 * the nodes differ at all (else every figure is EMULATED), and gives
 * canonical capacities where no matrix is at hand.
 */
static int probe_nodes(struct bench_ctx *x, const unsigned char *cpus)
{
	struct bwap_measure_opts o = { .seconds = x->probe_seconds, .threads = x->b.nr_threads, .rounds = 1,
				       .quiet = 1 };
	double lo = INFINITY, hi = 0;
	char err[512];
	int n = 0;

	o.bytes = x->b.array_bytes < ((size_t)64 << 20) ? x->b.array_bytes : (size_t)64 << 20;
	for (int i = 0; i < BWAP_MAX_NODES; i++) {
		double v[3];

		x->probe[i] = -1;
		if (!bwap_nodeset_has(x->mem, i))
			continue;
		for (int k = 0; k < 3; k++) {
			v[k] = bwap_measure_read_bw(cpus, i, &o, err, sizeof(err));
			if (v[k] < 0) {
				cli_error("bench", "probing memory node %d: %s", i, err);
				return -1;
			}
		}
		qsort(v, 3, sizeof(double), cmp_double);
		x->probe[i] = v[1] / 1000;
		progress(x, "probe: node %d -> workers %.2f GB/s", i, x->probe[i]);
		lo = fmin(lo, x->probe[i]);
		hi = fmax(hi, x->probe[i]);
		n++;
	}
	if (!x->emulated && (n < 2 || hi / lo < ALIKE_RATIO)) {
		x->emulated = 1;
		if (n < 2)
			snprintf(x->emulated_why, sizeof(x->emulated_why),
				 "one memory node: no asymmetry to measure");
		else
			snprintf(x->emulated_why, sizeof(x->emulated_why),
				 "every memory node reads alike (max/min %.3f < %.2f)", hi / lo, ALIKE_RATIO);
	}
	return 0;
}

/*
 * Canonical capacities from the matrix the options name, else HMAT, else
 * the probe.  The matrix stays in x->m for the peers' weights and the model.
 */
static int load_capacity(struct bench_ctx *x, const struct matrix_opts *mo, int explicit)
{
	struct bwap_matrix *m = x->m;
	char err[512], path[4096];
	int ok = 0;

	if (explicit) {
		if (matrix_opts_load(mo, m))
			return -1;
		ok = 1;
	} else {
		bwap_state_path(mo->state_dir, "matrix", path, sizeof(path));
		ok = !access(path, R_OK) ? !bwap_matrix_load(m, path, err, sizeof(err)) :
		     !bwap_matrix_from_hmat(m, x->t, 0, err, sizeof(err));
	}
	x->have_matrix = ok;
	x->matrix_explicit = explicit;
	if (ok && !bwap_canonical_capacity(m, x->workers, x->mem, x->capacity, err, sizeof(err))) {
		snprintf(x->weights_source, sizeof(x->weights_source), "%s", m->source);
		return 0;
	}
	if (explicit) {
		cli_error("bench", "%s", err);
		return -1;
	}
	for (int i = 0; i < BWAP_MAX_NODES; i++)
		x->capacity[i] = x->probe[i] > 0 ? x->probe[i] * 1000 : 0;
	snprintf(x->weights_source, sizeof(x->weights_source),
		 "the read probe from each node to the workers (no matrix: %s)", err);
	return 0;
}

static size_t weights_list(const unsigned char *w, bwap_nodeset nodes, char *buf, size_t len)
{
	size_t k = 0;

	buf[0] = '\0';
	for (int i = 0; i < BWAP_MAX_NODES && k + 8 < len; i++)
		if (bwap_nodeset_has(nodes, i))
			k += snprintf(buf + k, len - k, "%s%d:%d", k ? " " : "", i, w[i]);
	return k;
}

/*
 * upstream-auto: the weights upstream's auto mode gives this machine.
 * Where the kernel has the auto file and it is on, they are the global
 * table as it is; otherwise the same rule (7.3's reduce_interleave_weights())
 * on the HMAT/CDAT bandwidth sysfs reports, and the row says so.
 */
static int upstream_auto_row(struct bench_ctx *x, struct bench_row *r)
{
	unsigned int bw[BWAP_MAX_NODES];
	unsigned char rule[BWAP_MAX_NODES];
	char err[512], list[512], bwtext[512];
	int have = bwap_auto_bandwidth_from_hmat(x->t, bw), on = bwap_sysfs_weights_auto();
	size_t k = 0;

	bwap_auto_weights(bw, x->mem, x->t->nr_nodes, rule);
	bwtext[0] = '\0';
	for (int i = 0; i < x->t->nr_nodes && k + 16 < sizeof(bwtext); i++)
		if (bwap_nodeset_has(x->mem, i))
			k += snprintf(bwtext + k, sizeof(bwtext) - k, "%s%d:%u", k ? " " : "", i, bw[i]);
	weights_list(rule, x->mem, list, sizeof(list));
	if (on == 1 && x->mode != BWAP_KERNEL_STOCK) {
		int gw[BWAP_MAX_NODES], same = 1;

		if (bwap_sysfs_weights_read(gw, x->t->nr_nodes, x->mem, err, sizeof(err))) {
			cli_error("bench", "upstream-auto: the kernel's auto weights: %s", err);
			return -1;
		}
		for (int i = 0; i < x->t->nr_nodes; i++) {
			r->place.w[i] = bwap_nodeset_has(x->mem, i) ? (unsigned char)gw[i] : 0;
			same &= r->place.w[i] == rule[i];
		}
		snprintf(r->from, sizeof(r->from), "read from the kernel (weighted_interleave/auto is true); "
			 "7.3's rule on the HMAT bandwidth sysfs shows (%s) gives %s%s", have ? bwtext : "none",
			 same ? "the same" : list, same ? "" : ", not what the kernel holds");
		return 0;
	}
	memcpy(r->place.w, rule, BWAP_MAX_NODES);
	if (!have)
		snprintf(r->from, sizeof(r->from), "computed from HMAT with 7.3's rule: this machine reports no "
			 "HMAT/CDAT bandwidth (nodeN/access1), so auto mode leaves every weight 1");
	else
		snprintf(r->from, sizeof(r->from), "computed from HMAT with 7.3's rule (floor of %d x bw / sum, "
			 "at least 1, over the gcd) on the access1 bandwidth, min of read and write: %s%s",
			 BWAP_AUTO_WEIGHTINESS, bwtext,
			 on == 0 ? "; auto is off on this kernel, its table holds manual weights" :
			 on < 0 ? "; this kernel has no auto mode (before 6.16)" : "");
	return 0;
}

/*
 * hmsdk-bwactl: bwactl.py's rule on the row of the first worker node,
 * the CPUs that read.  Real hardware: a matrix the user named (MLC's, as
 * bwactl takes it), else the probe, both measured.  Under QEMU TCG the
 * measurements say nothing, so the row comes from the machine's matrix:
 * MODELLED.  1 if the row exists, 0 if skipped (said why), -1 on error.
 */
static int hmsdk_row(struct bench_ctx *x, struct bench_row *r)
{
	int first = __builtin_ctzll(x->workers);
	double row[BWAP_MAX_NODES];
	char err[512], what[400];

	if (x->have_matrix && (x->matrix_explicit || x->tcg)) {
		for (int i = 0; i < BWAP_MAX_NODES; i++)
			row[i] = i < x->m->nr_nodes ? x->m->bw[first][i] : -1;
		snprintf(what, sizeof(what), "%s row %d of the machine's matrix (%.200s)",
			 x->tcg ? "MODELLED: from" : "on", first, x->m->source);
	} else if (!x->tcg) {
		for (int i = 0; i < BWAP_MAX_NODES; i++)
			row[i] = x->probe[i] >= 0 ? x->probe[i] * 1000 : -1;
		snprintf(what, sizeof(what), "on measured bandwidth: the read probe from each node to the "
			 "workers' CPUs");
	} else {
		snprintf(x->skipped[x->nr_skipped++], sizeof(x->skipped[0]),
			 "hmsdk-bwactl: under emulation the probe says nothing, and there is no matrix to model "
			 "the machine from; give it with --matrix FILE");
		return 0;
	}
	if (bwap_hmsdk_weights(row, x->mem, x->t->nr_nodes, r->place.w, err, sizeof(err))) {
		snprintf(x->skipped[x->nr_skipped++], sizeof(x->skipped[0]), "hmsdk-bwactl: %s (%.80s)", err, what);
		return 0;
	}
	snprintf(r->from, sizeof(r->from), "hmsdk bwactl's rule (halved to at most %d, rounded, over the gcd) "
		 "%s", BWAP_HMSDK_SOFT_MAX, what);
	return 1;
}

/*
 * MODELLED GB/s of every row, where the measurements say nothing: the
 * placement model (MODEL.md) on the machine's matrix, at the pages each
 * placement really made, for MODEL.md's bandwidth preset over private
 * arrays (STREAM's): --model-threads per worker node (8, the real
 * machine's cores rather than the emulated one's), 12 misses in flight.
 */
static void model_rows(struct bench_ctx *x)
{
	struct bwap_machine *mc = malloc(sizeof(*mc));
	struct bwap_workload wl;
	char err[512];
	int base = -1;

	if (!mc)
		return;
	if (!x->have_matrix) {
		snprintf(x->model_why, sizeof(x->model_why), "no matrix to model the machine from; give it with "
			 "--matrix FILE");
		free(mc);
		return;
	}
	if (bwap_machine_from_matrix(mc, x->m, err, sizeof(err))) {
		snprintf(x->model_why, sizeof(x->model_why), "%s", err);
		free(mc);
		return;
	}
	memset(&wl, 0, sizeof(wl));
	for (int n = 0; n < BWAP_MAX_NODES; n++)
		if (bwap_nodeset_has(x->workers, n))
			wl.threads[n] = (int)x->model_threads_per_node;
	memcpy(x->model_threads, wl.threads, sizeof(x->model_threads));
	wl.mlp = 12;
	wl.shared = 0;
	wl.first_node = __builtin_ctzll(x->workers);
	for (int i = 0; i < x->nr_rows; i++) {
		const struct bench_row *r = &x->row[i];
		struct bwap_prediction p;
		double dist[BWAP_MAX_NODES] = { 0 };
		long total = 0;

		for (int n = 0; n < BWAP_MAX_NODES; n++)
			total += r->expected[n];
		for (int n = 0; n < BWAP_MAX_NODES && total; n++)
			dist[n] = (double)r->expected[n] / total;
		bwap_model_predict(mc, &wl, dist, r->place.method == BWAP_BENCH_FIRST_TOUCH, &p);
		x->model_gbs[i] = p.throughput;
		if (!strcmp(r->name, "interleave-workers"))
			base = i;
	}
	for (int i = 0; i < x->nr_rows; i++)
		x->model_ratio[i] = base >= 0 ? x->model_gbs[i] / x->model_gbs[base] : NAN;
	x->have_model = 1;
	snprintf(x->model_why, sizeof(x->model_why), "the placement model (tools/bwap/MODEL.md) on %s",
		 x->m->source);
	free(mc);
}

static int weights_at_dwp(struct bench_ctx *x, double dwp, unsigned char *w)
{
	struct bwap_weights bw;
	char err[512];

	if (bwap_weights_from_capacity(&bw, x->capacity, x->t->nr_nodes, x->mem, err, sizeof(err))) {
		cli_error("bench", "canonical weights: %s", err);
		return -1;
	}
	if (dwp > 0)
		bwap_weights_apply_dwp(&bw, x->workers, dwp);
	bwap_weights_quantise(&bw, (int)x->max_weight, 0.005);
	memset(w, 0, BWAP_MAX_NODES);
	for (int i = 0; i < x->t->nr_nodes; i++)
		w[i] = bwap_nodeset_has(bw.nodes, i) ? bw.w[i] : 0;
	return 0;
}

static int place(struct bench_ctx *x, struct bench_row *r)
{
	char err[1024], buf[512];

	if (bwap_bench_place(&x->b, &r->place, r->expected, r->actual, &r->moved, err, sizeof(err))) {
		cli_error("bench", "%s: %s", r->name, err);
		return -1;
	}
	progress(x, "%s: pages per node %s, as expected%s", r->name, bwap_bench_counts_text(r->actual, buf, sizeof(buf)),
		 r->place.method == BWAP_BENCH_MOVE_PAGES ? " (after move_pages)" : "");
	return 0;
}

static void measure_row(struct bench_ctx *x, struct bench_row *r)
{
	for (int k = 0; k < NR_K; k++)
		bwap_bench_run(&x->b, k);	/* warm up: caches, TLB */
	for (int i = 0; i < x->repeats; i++)
		for (int k = 0; k < NR_K; k++)
			r->samples[k][i] = bwap_bench_run(&x->b, k);
	for (int k = 0; k < NR_K; k++) {
		double v[MAX_REPEATS];

		memcpy(v, r->samples[k], x->repeats * sizeof(double));
		r->median[k] = bwap_median(v, x->repeats);
		qsort(v, x->repeats, sizeof(double), cmp_double);
		r->lo[k] = v[0];
		r->hi[k] = v[x->repeats - 1];
	}
	progress(x, "%s: triad %.2f GB/s", r->name, r->median[BWAP_BENCH_TRIAD]);
}

static struct bench_row *add_row(struct bench_ctx *x, const char *name, enum bwap_bench_method m,
				 bwap_nodeset nodes)
{
	struct bench_row *r = &x->row[x->nr_rows++];

	memset(r, 0, sizeof(*r));
	r->name = name;
	r->dwp = -1;
	r->place.method = m;
	r->place.nodes = nodes;
	return r;
}

/* The DWP sweep: triad under BWAP weights at each step; the best DWP is kept. */
static int sweep_dwp(struct bench_ctx *x, enum bwap_bench_method m)
{
	struct bench_row tmp;
	double best = -1;

	for (double d = 0; d <= 1 + 1e-9 && x->nr_sweep < 32; d += x->dwp_step) {
		double dwp = d > 1 ? 1 : d, v[MAX_REPEATS];
		int i = x->nr_sweep;

		memset(&tmp, 0, sizeof(tmp));
		tmp.name = "bwap-dwp sweep";
		tmp.place.method = m;
		tmp.place.nodes = x->mem;
		if (weights_at_dwp(x, dwp, tmp.place.w) || place(x, &tmp))
			return -1;
		bwap_bench_run(&x->b, BWAP_BENCH_TRIAD);
		for (int k = 0; k < x->repeats; k++)
			v[k] = bwap_bench_run(&x->b, BWAP_BENCH_TRIAD);
		x->sweep_dwp[i] = dwp;
		x->sweep_triad[i] = bwap_median(v, x->repeats);
		memcpy(x->sweep_w[i], tmp.place.w, BWAP_MAX_NODES);
		x->nr_sweep++;
		progress(x, "DWP sweep: DWP %.2f triad %.2f GB/s", dwp, x->sweep_triad[i]);
		if (x->sweep_triad[i] > best) {
			best = x->sweep_triad[i];
			x->best_dwp = dwp;
		}
	}
	return 0;
}

static json_object *json_nodes_long(const struct bench_ctx *x, const long *v)
{
	json_object *a = json_object_new_array();

	for (int i = 0; i < x->t->nr_nodes; i++)
		json_object_array_add(a, json_object_new_int64(v[i]));
	return a;
}

static json_object *bench_json(const struct bench_ctx *x)
{
	json_object *o = json_object_new_object(), *a, *p, *k, *s;
	char buf[512];

	json_object_object_add(o, "bwapctl", json_object_new_string("bench"));
	json_object_object_add(o, "format", json_object_new_int(1));
	json_object_object_add(o, "version", json_object_new_string(BWAP_VERSION));
	json_object_object_add(o, "kernel_mode", json_object_new_string(bwap_kernel_mode_name(x->mode)));
	json_object_object_add(o, "label", json_object_new_string(x->emulated ? "EMULATED" : "measured"));
	if (x->emulated)
		json_object_object_add(o, "emulated_why", json_object_new_string(x->emulated_why));
	json_object_object_add(o, "workers",
			       json_object_new_string(bwap_nodeset_format(x->workers, buf, sizeof(buf))));
	json_object_object_add(o, "cpus", json_object_new_string(x->cpus_text));
	json_object_object_add(o, "threads", json_object_new_int(x->b.nr_threads));
	json_object_object_add(o, "array_bytes", json_object_new_int64(x->b.array_bytes));
	json_object_object_add(o, "llc_bytes", json_object_new_int64(x->llc));
	json_object_object_add(o, "llc_level", json_object_new_int(x->llc_level));
	json_object_object_add(o, "repeats", json_object_new_int(x->repeats));
	json_object_object_add(o, "unit", json_object_new_string("GB/s (10^9 bytes/s), STREAM byte counts"));
	a = json_object_new_array();
	for (int i = 0; i < x->t->nr_nodes; i++)
		json_object_array_add(a, x->probe[i] >= 0 ? json_object_new_double(x->probe[i]) : NULL);
	json_object_object_add(o, "probe_read_gbs", a);
	json_object_object_add(o, "weights_source", json_object_new_string(x->weights_source));
	json_object_object_add(o, "auto_weights", json_object_new_boolean(x->auto_weights));
	a = json_object_new_array();
	for (int i = 0; i < x->nr_sweep; i++) {
		json_object *e = json_object_new_object(), *w = json_object_new_array();

		json_object_object_add(e, "dwp", json_object_new_double(x->sweep_dwp[i]));
		json_object_object_add(e, "triad_gbs", json_object_new_double(x->sweep_triad[i]));
		for (int n = 0; n < x->t->nr_nodes; n++)
			json_object_array_add(w, json_object_new_int(x->sweep_w[i][n]));
		json_object_object_add(e, "weights", w);
		json_object_array_add(a, e);
	}
	json_object_object_add(o, "dwp_sweep", a);
	if (x->nr_sweep)
		json_object_object_add(o, "best_dwp", json_object_new_double(x->best_dwp));
	a = json_object_new_array();
	for (int i = 0; i < x->nr_rows; i++) {
		const struct bench_row *r = &x->row[i];
		json_object *w = json_object_new_array();

		p = json_object_new_object();
		json_object_object_add(p, "name", json_object_new_string(r->name));
		json_object_object_add(p, "made_by", json_object_new_string(bwap_bench_method_name[r->place.method]));
		json_object_object_add(p, "label", json_object_new_string(x->emulated ? "EMULATED" : "measured"));
		json_object_object_add(p, "nodes", json_object_new_string(r->place.method == BWAP_BENCH_FIRST_TOUCH ?
				       "" : bwap_nodeset_format(r->place.nodes, buf, sizeof(buf))));
		for (int n = 0; n < x->t->nr_nodes; n++)
			json_object_array_add(w, json_object_new_int(
				r->place.method == BWAP_BENCH_FIRST_TOUCH ? 0 :
				r->place.method == BWAP_BENCH_INTERLEAVE ? bwap_nodeset_has(r->place.nodes, n) :
				bwap_nodeset_has(r->place.nodes, n) ? r->place.w[n] : 0));
		json_object_object_add(p, "weights", w);
		if (r->dwp >= 0)
			json_object_object_add(p, "dwp", json_object_new_double(r->dwp));
		if (r->from[0])
			json_object_object_add(p, "weights_from", json_object_new_string(r->from));
		if (x->have_model) {
			json_object_object_add(p, "modelled_gbs", json_object_new_double(x->model_gbs[i]));
			json_object_object_add(p, "modelled_ratio_to_interleave_workers",
					       json_object_new_double(x->model_ratio[i]));
		}
		json_object_object_add(p, "pages_expected", json_nodes_long(x, r->expected));
		json_object_object_add(p, "pages_actual", json_nodes_long(x, r->actual));
		json_object_object_add(p, "pages_moved", json_object_new_int64(r->moved));
		k = json_object_new_array();
		for (int j = 0; j < NR_K; j++) {
			json_object *e = json_object_new_object();

			json_object_object_add(e, "kernel", json_object_new_string(bwap_bench_kernel_name[j]));
			json_object_object_add(e, "gbs", json_object_new_double(r->median[j]));
			json_object_object_add(e, "min", json_object_new_double(r->lo[j]));
			json_object_object_add(e, "max", json_object_new_double(r->hi[j]));
			json_object_object_add(e, "ratio_to_interleave_workers", json_object_new_double(r->ratio[j]));
			s = json_object_new_array();
			for (int q = 0; q < x->repeats; q++)
				json_object_array_add(s, json_object_new_double(r->samples[j][q]));
			json_object_object_add(e, "samples", s);
			json_object_array_add(k, e);
		}
		json_object_object_add(p, "kernels", k);
		json_object_array_add(a, p);
	}
	json_object_object_add(o, "placements", a);
	if (x->emulated) {
		json_object *mo = json_object_new_object(), *th = json_object_new_array();

		json_object_object_add(mo, "label", json_object_new_string("MODELLED"));
		json_object_object_add(mo, "available", json_object_new_boolean(x->have_model));
		json_object_object_add(mo, x->have_model ? "from" : "why_not", json_object_new_string(x->model_why));
		for (int n = 0; n < x->t->nr_nodes; n++)
			json_object_array_add(th, json_object_new_int(x->model_threads[n]));
		json_object_object_add(mo, "threads_per_node", th);
		json_object_object_add(mo, "mlp", json_object_new_double(12));
		json_object_object_add(mo, "shared", json_object_new_double(0));
		json_object_object_add(o, "modelled", mo);
	}
	a = json_object_new_array();
	for (int i = 0; i < x->nr_skipped; i++)
		json_object_array_add(a, json_object_new_string(x->skipped[i]));
	json_object_object_add(o, "skipped", a);
	json_object_object_add(o, "topology", bwap_topology_json(x->t));
	return o;
}

static void print_table(const struct bench_ctx *x)
{
	const char *label = x->emulated ? "EMULATED" : "measured";
	char buf[512], wb[512], db[64];

	printf("bwapctl bench: kernel %s; workers %s (CPUs %s, %d threads); 3 arrays of %.1f MiB; "
	       "median of %d\n", bwap_kernel_mode_name(x->mode), bwap_nodeset_format(x->workers, buf, sizeof(buf)),
	       x->cpus_text, x->b.nr_threads, x->b.array_bytes / 1048576.0, x->repeats);
	if (x->emulated)
		printf("EMULATED: %s; no figure below is a real bandwidth difference\n", x->emulated_why);
	printf("canonical weights from %s\n", x->weights_source);
	if (x->nr_sweep) {
		printf("DWP sweep (triad GB/s):");
		for (int i = 0; i < x->nr_sweep; i++)
			printf(" %.2f:%.2f", x->sweep_dwp[i], x->sweep_triad[i]);
		printf("; best DWP %.2f\n", x->best_dwp);
	}
	for (int i = 0; i < x->nr_skipped; i++)
		printf("skipped: %s\n", x->skipped[i]);
	printf("\n%-19s %-20s %-6s %9s %9s %9s %8s  %s\n", "placement", "made-by", "kernel", "GB/s", "min",
	       "max", "ratio", "label");
	for (int i = 0; i < x->nr_rows; i++) {
		const struct bench_row *r = &x->row[i];

		printf("# %s: weights %s%s; pages per node %s (verified)", r->name,
		       weights_text(&r->place, wb, sizeof(wb)),
		       r->dwp >= 0 ? (snprintf(db, sizeof(db), " at DWP %.2f", r->dwp), db) : "",
		       bwap_bench_counts_text(r->actual, buf, sizeof(buf)));
		if (r->place.method == BWAP_BENCH_MOVE_PAGES)
			printf("; %ld moved", r->moved);
		printf("\n");
		if (r->from[0])
			printf("#   %s weights: %s\n", r->name, r->from);
		for (int k = 0; k < NR_K; k++)
			printf("%-19s %-20s %-6s %9.3f %9.3f %9.3f %8.3f  %s\n", r->name,
			       bwap_bench_method_name[r->place.method], bwap_bench_kernel_name[k], r->median[k],
			       r->lo[k], r->hi[k], r->ratio[k], label);
	}
	printf("\nratio: GB/s over interleave-workers' for the same kernel (above 1 is faster)\n");
	if (!x->emulated)
		return;
	if (!x->have_model) {
		printf("\nMODELLED: none: %s\n", x->model_why);
		return;
	}
	{
		size_t k = 0;

		for (int n = 0; n < x->t->nr_nodes && k + 16 < sizeof(buf); n++)
			if (x->model_threads[n])
				k += snprintf(buf + k, sizeof(buf) - k, "%s%d:%d", k ? " " : "", n, x->model_threads[n]);
	}
	printf("\nMODELLED, not measured: %s; threads per node %s, 12 misses in flight each, private "
	       "arrays\n", x->model_why, buf);
	printf("%-19s %-24s %9s %8s  %s\n", "placement", "weights", "GB/s", "ratio", "label");
	for (int i = 0; i < x->nr_rows; i++)
		printf("%-19s %-24s %9.3f %8.3f  %s\n", x->row[i].name, weights_text(&x->row[i].place, wb, sizeof(wb)),
		       x->model_gbs[i], x->model_ratio[i], "modelled");
	printf("ratio: modelled GB/s over interleave-workers' modelled GB/s\n");
}

int cmd_bench(int argc, char **argv)
{
	static struct bench_ctx x;
	struct matrix_opts mo;
	int json = 0, explicit_matrix = 0, cpu_node[BWAP_MAX_CPUS], cpus[BWAP_MAX_CPUS], nr_cpus = 0, ret = 1;
	long threads = 0, repeats = 5;
	double size_mib = 0;
	const char *save = NULL, *out = NULL;
	unsigned char cpumap[BWAP_MAX_CPUS];
	char err[1024], buf[256];
	enum bwap_bench_method bwap_method;
	static const struct option longopts[] = {
		{ "workers", required_argument, NULL, OPT_WORKERS },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "repeats", required_argument, NULL, OPT_ROUNDS },
		{ "dwp-step", required_argument, NULL, OPT_DWP },
		{ "probe-seconds", required_argument, NULL, OPT_SECONDS },
		{ "max-weight", required_argument, NULL, OPT_MAX_WEIGHT },
		{ "model-threads", required_argument, NULL, OPT_MODEL_THREADS },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "save", required_argument, NULL, OPT_SAVE },
		{ "output", required_argument, NULL, 'o' },
		{ "quiet", no_argument, NULL, OPT_QUIET },
		CLI_MATRIX_OPTIONS,
		CLI_HELP_OPTION,
		{ 0 }
	};
	struct cli_parser p;
	int c;

	memset(&x, 0, sizeof(x));
	x.dwp_step = 0.25;
	x.probe_seconds = 0.2;
	x.max_weight = 255;
	x.model_threads_per_node = 8;
	matrix_opts_init(&mo);
	cli_parser_init(&p, "bench", "ho:", longopts);
	while ((c = cli_next(&p, argc, argv)) != -1) {
		if (matrix_opts_take(&mo, c, optarg)) {
			explicit_matrix |= c != OPT_STATE_DIR;
			continue;
		}
		switch (c) {
		case -2:
			return 2;
		case 'h':
			help(stdout);
			return 0;
		case OPT_WORKERS:
			if (cli_parse_workers("bench", optarg, &x.workers))
				return 2;
			if (!x.workers) {
				cli_error("bench", "--workers: the set is empty; name at least one node");
				return 2;
			}
			break;
		case OPT_THREADS:
			if (cli_parse_long("bench", "--threads", optarg, 1, BWAP_MAX_CPUS, &threads))
				return 2;
			break;
		case OPT_SIZE:
			if (cli_parse_double("bench", "--size", optarg, 0.0625, 1 << 20, &size_mib))
				return 2;
			break;
		case OPT_ROUNDS:
			if (cli_parse_long("bench", "--repeats", optarg, 1, MAX_REPEATS, &repeats))
				return 2;
			break;
		case OPT_DWP:
			if (cli_parse_double("bench", "--dwp-step", optarg, 0.05, 1, &x.dwp_step))
				return 2;
			break;
		case OPT_SECONDS:
			if (cli_parse_double("bench", "--probe-seconds", optarg, 0.01, 10, &x.probe_seconds))
				return 2;
			break;
		case OPT_MAX_WEIGHT:
			if (cli_parse_long("bench", "--max-weight", optarg, 1, 255, &x.max_weight))
				return 2;
			break;
		case OPT_MODEL_THREADS:
			if (cli_parse_long("bench", "--model-threads", optarg, 1, 1024, &x.model_threads_per_node))
				return 2;
			break;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_SAVE:
			save = optarg;
			break;
		case 'o':
			out = optarg;
			break;
		case OPT_QUIET:
			x.quiet = 1;
			break;
		}
	}
	if (optind < argc) {
		cli_error("bench", "unexpected argument '%s'; see 'bwapctl bench --help'", argv[optind]);
		return 2;
	}
	if (out && (bwap_chart_format(out, err, sizeof(err)) < 0 || bwap_charts_available(err, sizeof(err)) < 0)) {
		cli_error("bench", "%s", err);
		return 2;
	}
	x.repeats = (int)repeats;
	x.t = malloc(sizeof(*x.t));
	x.m = malloc(sizeof(*x.m));
	if (!x.t || !x.m) {
		free(x.t);
		free(x.m);
		return 1;
	}
	if (bwap_topology_read(x.t, mo.sysfs_root, err, sizeof(err))) {
		cli_error("bench", "%s", err);
		goto out;
	}
	x.mode = bwap_kernel_mode();
	x.mem = x.t->has_memory;
	if (!x.workers) {
		if (!x.t->has_cpu) {
			cli_error("bench", "no node has CPUs");
			goto out;
		}
		x.workers = BWAP_NODE_BIT(__builtin_ctzll(x.t->has_cpu));
	}
	if (x.workers & ~x.t->has_cpu) {
		cli_error("bench", "worker nodes %s have no CPUs (nodes with CPUs: %s)",
			  bwap_nodeset_format(x.workers & ~x.t->has_cpu, buf, sizeof(buf)),
			  bwap_nodeset_format(x.t->has_cpu, err, sizeof(err)));
		goto out;
	}
	if (!(x.workers & x.mem)) {
		cli_error("bench", "worker nodes %s have no memory, so interleave-workers, the baseline, "
			  "cannot exist; add a node with memory", bwap_nodeset_format(x.workers, buf, sizeof(buf)));
		goto out;
	}
	bwap_topology_cpus_of(x.t, x.workers, cpumap);
	for (int i = 0; i < BWAP_MAX_CPUS; i++)
		cpu_node[i] = 0;
	for (int n = 0; n < x.t->nr_nodes; n++)
		for (int i = 0; i < BWAP_MAX_CPUS; i++)
			if (x.t->node[n].cpus[i])
				cpu_node[i] = n;
	for (int i = 0; i < BWAP_MAX_CPUS; i++)
		if (cpumap[i])
			cpus[nr_cpus++] = i;
	if (!threads)
		threads = nr_cpus;
	for (int i = nr_cpus; i < threads; i++)
		cpus[i] = cpus[i % nr_cpus];
	{
		size_t k = 0;

		for (int i = 0; i < nr_cpus && k + 8 < sizeof(x.cpus_text); i++)
			k += snprintf(x.cpus_text + k, sizeof(x.cpus_text) - k, "%s%d", i ? "," : "", cpus[i]);
	}
	x.llc = bwap_llc_bytes(cpumap, &x.llc_level);
	if (!size_mib) {
		/* STREAM's rule: each array 4x the caches the threads use */
		size_mib = 4.0 * x.llc / 1048576;
		if (size_mib < threads)
			size_mib = threads;
	}
	if (bwap_bench_start(&x.b, cpus, (int)threads, (size_t)(size_mib * 1048576), cpu_node, err, sizeof(err))) {
		cli_error("bench", "%s", err);
		goto out;
	}
	progress(&x, "kernel %s; workers %s, %ld threads on CPUs %s; 3 arrays of %.1f MiB (%s)",
		 bwap_kernel_mode_name(x.mode), bwap_nodeset_format(x.workers, buf, sizeof(buf)), threads,
		 x.cpus_text, x.b.array_bytes / 1048576.0,
		 x.llc ? "4x the last-level cache" : "no cache size in sysfs");
	x.emulated = x.tcg = bwap_cpu_is_emulated(x.emulated_why, sizeof(x.emulated_why));
	if (probe_nodes(&x, cpumap) || load_capacity(&x, &mo, explicit_matrix))
		goto stop;

	/* the placements this kernel can make, in order */
	add_row(&x, "first-touch", BWAP_BENCH_FIRST_TOUCH, 0);
	add_row(&x, "interleave-all", BWAP_BENCH_INTERLEAVE, x.mem);
	add_row(&x, "interleave-workers", BWAP_BENCH_INTERLEAVE, x.workers & x.mem);
	if (x.mode != BWAP_KERNEL_STOCK) {
		struct bench_row *r = add_row(&x, "upstream-wi", BWAP_BENCH_GLOBAL_WI, x.mem);
		int gw[BWAP_MAX_NODES];

		if (bwap_sysfs_weights_read(gw, x.t->nr_nodes, x.mem, err, sizeof(err))) {
			cli_error("bench", "the global weighted-interleave table: %s", err);
			goto stop;
		}
		for (int i = 0; i < x.t->nr_nodes; i++)
			r->place.w[i] = bwap_nodeset_has(x.mem, i) ? (unsigned char)gw[i] : 0;
		x.auto_weights = bwap_sysfs_weights_auto() == 1;
	} else {
		snprintf(x.skipped[x.nr_skipped++], sizeof(x.skipped[0]),
			 "upstream-wi: this kernel has no weighted interleave (mode 6, Linux 6.9+)");
	}
	bwap_method = x.mode == BWAP_KERNEL_SERIES ? BWAP_BENCH_OWN_WEIGHTS : BWAP_BENCH_MOVE_PAGES;
	/* the weights a user could pick instead, placed as BWAP's are */
	if (upstream_auto_row(&x, add_row(&x, "upstream-auto", bwap_method, x.mem)))
		goto stop;
	{
		int k = hmsdk_row(&x, add_row(&x, "hmsdk-bwactl", bwap_method, x.mem));

		if (k < 0)
			goto stop;
		if (!k)
			x.nr_rows--;
	}
	{
		struct bench_row *r = add_row(&x, "bwap-canonical", bwap_method, x.mem);

		r->dwp = 0;
		if (weights_at_dwp(&x, 0, r->place.w))
			goto stop;
	}
	for (int i = 0; i < x.nr_rows; i++) {
		if (place(&x, &x.row[i]))
			goto stop;
		measure_row(&x, &x.row[i]);
	}
	if (sweep_dwp(&x, bwap_method))
		goto stop;
	{
		struct bench_row *r = add_row(&x, "bwap-dwp", bwap_method, x.mem);

		r->dwp = x.best_dwp;
		if (weights_at_dwp(&x, x.best_dwp, r->place.w) || place(&x, r))
			goto stop;
		measure_row(&x, r);
	}
	for (int i = 0; i < x.nr_rows; i++)
		for (int k = 0; k < NR_K; k++)
			x.row[i].ratio[k] = x.row[i].median[k] / x.row[2].median[k];
	if (x.emulated)
		model_rows(&x);
	{
		json_object *o = bench_json(&x);
		const char *text = json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY |
								  JSON_C_TO_STRING_SPACED |
								  JSON_C_TO_STRING_NOSLASHESCAPE);

		if (json)
			puts(text);
		else
			print_table(&x);
		if (save) {
			struct bwap_atomic_file af;

			if (bwap_atomic_open(&af, save, err, sizeof(err))) {
				cli_error("bench", "%s", err);
				json_object_put(o);
				goto stop;
			}
			fprintf(af.f, "%s\n", text);
			if (bwap_atomic_commit(&af, err, sizeof(err))) {
				cli_error("bench", "%s", err);
				json_object_put(o);
				goto stop;
			}
			if (!json)
				printf("saved: %s\n", save);
		}
		if (out) {
			if (bwap_chart_bench(out, o, err, sizeof(err))) {
				cli_error("bench", "%s", err);
				json_object_put(o);
				goto stop;
			}
			if (!json)
				printf("wrote %s\n", out);
		}
		json_object_put(o);
	}
	ret = 0;
stop:
	bwap_bench_stop(&x.b);
out:
	free(x.t);
	free(x.m);
	return ret;
}
