// SPDX-License-Identifier: GPL-2.0
/*
 * bwapctl search: run a command under configurations of thread nodes,
 * scatter/contiguous, thread count, page policy and page nodes (the space
 * and order of lib/search.c), score each run, and report the best with
 * the command line that reproduces it.  This file: options, the loop over
 * the points and its progress line; search_run.c runs one point,
 * search_output.c writes what was found.
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

static void help(FILE *f)
{
	fprintf(f, "Usage: bwapctl search [OPTIONS] -- COMMAND [ARGS...]\n\n"
		   "Runs COMMAND under configurations of where its threads run and where its\n"
		   "pages go, and ranks them (Popov et al., ICS'19, with BWAP's weighted\n"
		   "interleave among the page policies):\n"
		   "  thread nodes    the best-connected node set of each size (the sets\n"
		   "                  'measure --all-sets' keeps), scatter or contiguous\n"
		   "  thread count    NT from TND to TND x CPUs per node\n"
		   "  page policy     first-touch, locality (bind to the thread nodes),\n"
		   "                  interleave, bwap-dwp0, bwap-dwp0.5, bwap-dwp1 (canonical\n"
		   "                  weights at that DWP), each over the PND nodes the threads\n"
		   "                  read fastest\n"
		   "Threads get a CPU mask and OMP_NUM_THREADS, OMP_PLACES, OMP_PROC_BIND;\n"
		   "'{threads}' in COMMAND becomes NT.  The baseline is first-touch, scatter,\n"
		   "all CPUs.  Points run in the model's order (bwapctl model), with neighbours\n"
		   "of the best measured point and unexplored points in between, until the\n"
		   "budget is spent.  Ctrl-C stops and keeps what was measured.\n\n"
		   "  --metric REGEX      score = the number REGEX matches in COMMAND's output\n"
		   "                      (its first group if it has one; the last match);\n"
		   "                      default: wall time of the run\n"
		   "  --better higher|lower  which scores win (default: lower for wall time,\n"
		   "                      higher for --metric)\n"
		   "  --repeats N         runs per point, the median counts (default 1)\n"
		   "  --min-time S        and at least S seconds of runs per point (default 0)\n"
		   "  --budget N|all      points to run (default: a quarter of the space)\n"
		   "  --time S            stop starting points after S seconds\n"
		   "  --threads LIST      thread counts to try (default TND x 1, 2, 4.. and all)\n"
		   "  --thread-degrees L  TND values to try (default all)\n"
		   "  --page-degrees L    PND values to try (default all)\n"
		   "  --policies LIST     page policies to try (default all six)\n"
		   "  --model-matrix FILE the model predicts from this matrix instead\n"
		   "  --mlp X, --shared F the model's workload (as 'bwapctl model')\n"
		   "  --dry-run           print the space in the model's order; run nothing\n"
		   "  --keep-output       keep each run's output in STATE_DIR/search/out/\n"
		   "  --top N             rows of the table (default 20; 0 = all run)\n"
		   "  -o, --output F.png  chart (.png or .svg): best speedup per page policy x\n"
		   "                      page NUMA degree (dynamic bwapctl; else 'bwapctl\n"
		   "                      report --from STATE_DIR/search/results.json')\n"
		   "  --json              the whole result as JSON on stdout\n"
		   "  --place-interval S  portable mode: place pages every S seconds (0.1)\n"
		   "  --phases            COMMAND marks its phases: it writes each new phase's\n"
		   "                      name as one line to the FIFO named by $BWAP_PHASE;\n"
		   "                      seconds per phase are scored, the best page placement\n"
		   "                      per phase reported and its weights written to\n"
		   "                      STATE_DIR/search/phase-weights for bwapd\n"
		   "%s"
		   "  -h, --help          this text\n\n"
		   "Results go to STATE_DIR/search/results.json after every point.\n"
		   "Example: bwapctl search --metric 'rate: ([0-9.]+)' -- ./stream -t {threads}\n",
		matrix_opts_help);
}

volatile sig_atomic_t search_interrupted;
volatile pid_t search_running_child;

static void on_signal(int sig)
{
	search_interrupted = 1;
	if (search_running_child > 0)
		kill(search_running_child, sig);
}

double search_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void fmt_duration(double s, char *buf, size_t len)
{
	if (!isfinite(s) || s < 0)
		snprintf(buf, len, "?");
	else if (s < 60)
		snprintf(buf, len, "%.0fs", s);
	else if (s < 3600)
		snprintf(buf, len, "%dm%02ds", (int)s / 60, (int)s % 60);
	else
		snprintf(buf, len, "%dh%02dm", (int)s / 3600, (int)s % 3600 / 60);
}

static int run_search(struct search_ctx *x)
{
	enum bwap_search_reason why;
	int i;

	x->started = search_now();
	while (!search_interrupted && x->runs_done < x->budget && (i = bwap_search_next(&x->s, &why)) >= 0) {
		struct bwap_search_point *p = &x->s.pt[i];
		double spent = search_now() - x->started, per, left, score, secs, total = 0;
		double phase_secs[BWAP_SEARCH_MAX_PHASES];
		char d[512], eta[32], score_text[32], best_text[64];
		int best, ok = 1;

		if (x->time_limit > 0 && x->runs_done &&
		    spent + spent / x->runs_done > x->time_limit) {
			fprintf(stderr, "bwapctl search: --time %.0f s reached after %d points\n", x->time_limit,
				x->runs_done);
			break;
		}
		p->why = why;
		p->order = ++x->runs_done;
		while (p->nr_samples < BWAP_SEARCH_MAX_SAMPLES &&
		       (p->nr_samples < x->repeats || total < x->min_time)) {
			if (search_run_once(x, p, &score, &secs, phase_secs)) {
				ok = 0;
				break;
			}
			for (int k = 0; k < BWAP_SEARCH_MAX_PHASES; k++)
				p->phase_samples[k][p->nr_samples] = phase_secs[k];
			p->samples[p->nr_samples++] = score;
			total += secs;
		}
		p->seconds = total;
		if (search_interrupted) {
			/* a point cut short is not a measurement */
			p->state = BWAP_POINT_NEW;
			p->nr_samples = 0;
			x->runs_done--;
			break;
		}
		p->state = ok ? BWAP_POINT_DONE : BWAP_POINT_FAILED;
		if (ok)
			p->score = bwap_median(p->samples, p->nr_samples);
		for (int k = 0; k < BWAP_SEARCH_MAX_PHASES; k++) {
			double v[BWAP_SEARCH_MAX_SAMPLES];
			int nv = 0;

			for (int j = 0; j < p->nr_samples; j++)
				if (isfinite(p->phase_samples[k][j]))
					v[nv++] = p->phase_samples[k][j];
			p->phase_score[k] = ok && nv ? bwap_median(v, nv) : NAN;
		}
		if (search_save_state(x))
			return -1;
		best = bwap_search_best(&x->s);
		spent = search_now() - x->started;
		per = spent / x->runs_done;
		left = x->budget - x->runs_done;
		if (x->s.nr - x->runs_done < left)
			left = x->s.nr - x->runs_done;
		if (x->time_limit > 0 && x->time_limit - spent < per * left)
			left = (x->time_limit - spent) / per;
		fmt_duration(per * left, eta, sizeof(eta));
		search_describe(x, p, d, sizeof(d));
		if (ok)
			snprintf(score_text, sizeof(score_text), "%.6g", p->score);
		else
			snprintf(score_text, sizeof(score_text), "failed");
		if (best >= 0 && isfinite(bwap_search_speedup(&x->s, &x->s.pt[best])))
			snprintf(best_text, sizeof(best_text), "best %.3fx (point %d)",
				 bwap_search_speedup(&x->s, &x->s.pt[best]), best);
		else
			snprintf(best_text, sizeof(best_text), "no best yet");
		fprintf(stderr, "bwapctl search: [%d/%ld] %-9s %s: %s; %s; %s left\n", x->runs_done, x->budget,
			bwap_search_reason_name(why), d, score_text, best_text, eta);
		if (i == x->s.baseline && !ok) {
			cli_error("search", "the baseline run failed; fix the command first (see its errors above)");
			return -1;
		}
	}
	return 0;
}

static int parse_degrees(const char *opt, const char *text, bwap_nodeset *out)
{
	return cli_parse_nodes("search", opt, text, out);
}

static int parse_policies(const char *text, unsigned *out)
{
	char *dup = strdup(text), *save = NULL;

	*out = 0;
	for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		int k;

		for (k = 0; k < BWAP_NR_PAGE_POLICIES; k++)
			if (!strcmp(t, bwap_page_policy_name[k]))
				break;
		if (k == BWAP_NR_PAGE_POLICIES) {
			cli_error("search", "--policies: unknown policy '%s'; give some of first-touch, locality, "
				  "interleave, bwap-dwp0, bwap-dwp0.5, bwap-dwp1", t);
			free(dup);
			return -1;
		}
		*out |= 1u << k;
	}
	free(dup);
	if (!*out) {
		cli_error("search", "--policies: give at least one policy");
		return -1;
	}
	return 0;
}

static int parse_counts(const char *text, struct bwap_search_opts *o)
{
	char *dup = strdup(text), *save = NULL;

	for (char *t = strtok_r(dup, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		long v;

		if (o->nr_thread_counts >= 64) {
			cli_error("search", "--threads: at most 64 counts");
			free(dup);
			return -1;
		}
		if (cli_parse_long("search", "--threads", t, 1, BWAP_MAX_CPUS, &v)) {
			free(dup);
			return -1;
		}
		o->thread_counts[o->nr_thread_counts++] = (int)v;
	}
	free(dup);
	return 0;
}

int cmd_search(int argc, char **argv)
{
	static struct search_ctx x;
	struct matrix_opts mo;
	struct bwap_topology *t = malloc(sizeof(*t));
	struct bwap_matrix *model = NULL;
	const char *better = NULL, *budget = NULL;
	char err[4500];
	int c, ret = 0;

	memset(&x, 0, sizeof(x));
	bwap_search_opts_defaults(&x.o);
	x.repeats = 1;
	x.place_interval = 0.1;
	x.top = 20;
	matrix_opts_init(&mo);
	static const struct option longopts[] = {
		{ "metric", required_argument, NULL, OPT_METRIC },
		{ "better", required_argument, NULL, OPT_BETTER },
		{ "repeats", required_argument, NULL, OPT_ROUNDS },
		{ "min-time", required_argument, NULL, OPT_MIN_TIME },
		{ "budget", required_argument, NULL, OPT_BUDGET },
		{ "time", required_argument, NULL, OPT_TIMEOUT },
		{ "threads", required_argument, NULL, OPT_THREADS },
		{ "thread-degrees", required_argument, NULL, OPT_THREAD_DEGREES },
		{ "page-degrees", required_argument, NULL, OPT_PAGE_DEGREES },
		{ "policies", required_argument, NULL, OPT_POLICIES },
		{ "model-matrix", required_argument, NULL, OPT_MODEL_MATRIX },
		{ "mlp", required_argument, NULL, OPT_MLP },
		{ "shared", required_argument, NULL, OPT_SHARED },
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "keep-output", no_argument, NULL, OPT_KEEP_OUTPUT },
		{ "top", required_argument, NULL, OPT_TOP },
		{ "output", required_argument, NULL, 'o' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "place-interval", required_argument, NULL, OPT_PLACE_INTERVAL },
		{ "phases", no_argument, NULL, OPT_PHASES },
		CLI_MATRIX_OPTIONS,
		CLI_HELP_OPTION,
		{ 0 }
	};
	struct cli_parser p;

	cli_parser_init(&p, "search", "+ho:", longopts);
	while ((c = cli_next(&p, argc, argv)) != -1) {
		long v;

		if (matrix_opts_take(&mo, c, optarg))
			continue;
		switch (c) {
		case -2:
			return 2;
		case 'h':
			help(stdout);
			return 0;
		case OPT_METRIC:
			x.metric = optarg;
			break;
		case OPT_BETTER:
			if (strcmp(optarg, "higher") && strcmp(optarg, "lower")) {
				cli_error("search", "--better '%s': give higher or lower", optarg);
				return 2;
			}
			better = optarg;
			break;
		case OPT_ROUNDS:
			if (cli_parse_long("search", "--repeats", optarg, 1, BWAP_SEARCH_MAX_SAMPLES, &x.repeats))
				return 2;
			break;
		case OPT_MIN_TIME:
			if (cli_parse_double("search", "--min-time", optarg, 0, 86400, &x.min_time))
				return 2;
			break;
		case OPT_BUDGET:
			budget = optarg;
			if (strcmp(optarg, "all") && cli_parse_long("search", "--budget", optarg, 1, 1000000, &v))
				return 2;
			break;
		case OPT_TIMEOUT:
			if (cli_parse_double("search", "--time", optarg, 1, 30 * 86400.0, &x.time_limit))
				return 2;
			break;
		case OPT_THREADS:
			if (parse_counts(optarg, &x.o))
				return 2;
			break;
		case OPT_THREAD_DEGREES:
			if (parse_degrees("--thread-degrees", optarg, &x.o.thread_degrees))
				return 2;
			break;
		case OPT_PAGE_DEGREES:
			if (parse_degrees("--page-degrees", optarg, &x.o.page_degrees))
				return 2;
			break;
		case OPT_POLICIES:
			if (parse_policies(optarg, &x.o.policies))
				return 2;
			break;
		case OPT_MODEL_MATRIX:
			x.model_file = optarg;
			break;
		case OPT_MLP:
			if (cli_parse_double("search", "--mlp", optarg, 0.1, 1000, &x.o.mlp))
				return 2;
			break;
		case OPT_SHARED:
			if (cli_parse_double("search", "--shared", optarg, 0, 1, &x.o.shared))
				return 2;
			break;
		case OPT_DRY_RUN:
			x.dry_run = 1;
			break;
		case OPT_KEEP_OUTPUT:
			x.keep_output = 1;
			break;
		case OPT_TOP:
			if (cli_parse_long("search", "--top", optarg, 0, 1000000, &v))
				return 2;
			x.top = (int)v;
			break;
		case 'o':
			x.png = optarg;
			if (bwap_chart_format(optarg, err, sizeof(err)) < 0 ||
			    bwap_charts_available(err, sizeof(err)) < 0) {
				cli_error("search", "%s", err);
				return 2;
			}
			break;
		case OPT_JSON:
			x.json = 1;
			break;
		case OPT_PHASES:
			x.phases = 1;
			break;
		case OPT_PLACE_INTERVAL:
			if (cli_parse_double("search", "--place-interval", optarg, 0.01, 60, &x.place_interval))
				return 2;
			break;
		}
	}
	if (optind >= argc && !x.dry_run) {
		cli_error("search", "no command given; write it after '--', e.g. bwapctl search -- ./app");
		return 2;
	}
	x.cmd = argv + optind;
	x.nr_cmd = argc - optind;
	if (better && !x.metric && !strcmp(better, "higher")) {
		cli_error("search", "--better higher needs --metric: a shorter wall time is always better");
		return 2;
	}
	x.s.higher_is_better = better ? !strcmp(better, "higher") : !!x.metric;
	if (x.metric) {
		int r = regcomp(&x.re, x.metric, REG_EXTENDED);

		if (r) {
			regerror(r, &x.re, err, sizeof(err));
			cli_error("search", "--metric '%s': %s", x.metric, err);
			return 2;
		}
	}
	x.state_dir = mo.state_dir;
	x.matrix_file = mo.file;
	x.hmat = mo.hmat;
	x.hmat_estimate = mo.hmat_estimate;
	x.m = malloc(sizeof(*x.m));
	if (!t || !x.m || matrix_opts_load(&mo, x.m))
		return 1;
	if (bwap_topology_read(t, mo.sysfs_root, err, sizeof(err))) {
		cli_error("search", "%s", err);
		return 1;
	}
	for (int n = 0; n < x.m->nr_nodes && n < BWAP_MAX_NODES; n++)
		for (int cpu = 0; cpu < BWAP_MAX_CPUS && x.s.nr_cpus[n] < 256; cpu++)
			if (n < t->nr_nodes && t->node[n].cpus[cpu])
				x.s.cpu[n][x.s.nr_cpus[n]++] = cpu;
	free(t);
	x.mode = bwap_kernel_mode();
	if (bwap_search_space_build(&x.s, x.m, &x.o, err, sizeof(err))) {
		cli_error("search", "%s", err);
		return 1;
	}
	model = x.m;
	if (x.model_file) {
		model = malloc(sizeof(*model));
		if (!model || bwap_matrix_load(model, x.model_file, err, sizeof(err))) {
			cli_error("search", "--model-matrix: %s", err);
			return 1;
		}
	}
	if (bwap_search_predict(&x.s, model, &x.o, err, sizeof(err))) {
		cli_error("search", "the model cannot use the matrix: %s", err);
		return 1;
	}
	if (!budget)
		x.budget = x.s.nr / 4 > 8 ? x.s.nr / 4 : (x.s.nr < 8 ? x.s.nr : 8);
	else
		x.budget = strcmp(budget, "all") ? strtol(budget, NULL, 10) : x.s.nr;
	if (x.dry_run) {
		x.top = x.top ? x.top : x.s.nr;
		if (x.json) {
			json_object *o = search_result_json(&x, 1);

			puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
			json_object_put(o);
		} else {
			search_print_table(&x, stdout);
		}
		return 0;
	}
	snprintf(x.dir, sizeof(x.dir), "%s/search", x.state_dir);
	if (bwap_state_writable(x.state_dir, err, sizeof(err)) || bwap_state_mkdir(x.dir, err, sizeof(err))) {
		cli_error("search", "%s", err);
		return 1;
	}
	if (x.phases) {
		snprintf(x.fifo, sizeof(x.fifo), "%s/phase.fifo", x.dir);
		if ((unlink(x.fifo) && errno != ENOENT) || mkfifo(x.fifo, 0600)) {
			cli_error("search", "cannot make the phase FIFO %s: %s", x.fifo, strerror(errno));
			return 1;
		}
	}
	if (x.keep_output) {
		char out[4200];

		snprintf(out, sizeof(out), "%s/out", x.dir);
		if (bwap_state_mkdir(out, err, sizeof(err))) {
			cli_error("search", "%s", err);
			return 1;
		}
	}
	{
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
	}
	fprintf(stderr, "bwapctl search: %d points after pruning; running up to %ld%s (%s)\n", x.s.nr, x.budget,
		x.time_limit > 0 ? " within --time" : "", bwap_kernel_mode_name(x.mode));
	if (run_search(&x))
		ret = 1;
	if (search_save_state(&x))
		ret = 1;
	if (x.s.nr_phases && search_save_phase_weights(&x))
		ret = 1;
	if (x.png) {
		json_object *o = search_result_json(&x, 0);

		if (bwap_chart_search(x.png, o, err, sizeof(err))) {
			cli_error("search", "%s", err);
			ret = 1;
		}
		json_object_put(o);
	}
	if (x.json) {
		json_object *o = search_result_json(&x, 0);

		puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
	} else {
		search_print_table(&x, stdout);
	}
	if (search_interrupted) {
		fprintf(stderr, "bwapctl search: interrupted; %d points measured, kept in %s/results.json\n",
			x.runs_done, x.dir);
		return 130;
	}
	return ret;
}
