// SPDX-License-Identifier: GPL-2.0
/*
 * bwapctl search: run a command under configurations of thread nodes,
 * scatter/contiguous, thread count, page policy and page nodes (the space
 * and order of lib/search.c), score each run, and report the best with
 * the command line that reproduces it.  Options and output only.
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

#include "bwapctl.h"

#define MAX_OUTPUT (1 << 20)	/* bytes of a run's stdout kept for --metric */

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

static volatile sig_atomic_t interrupted;
static volatile pid_t running_child;

static void on_signal(int sig)
{
	interrupted = 1;
	if (running_child > 0)
		kill(running_child, sig);
}

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

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static char *cpus_text(const struct search_ctx *x, const struct bwap_search_point *p, int places,
		       char *buf, size_t len)
{
	int cpus[BWAP_MAX_CPUS], n = bwap_search_point_cpus(&x->s, p, cpus);
	size_t k = 0;

	buf[0] = 0;
	for (int i = 0; i < n && k < len; i++)
		k += snprintf(buf + k, len - k, places ? "%s{%d}" : "%s%d", i ? "," : "", cpus[i]);
	return buf;
}

static void point_weights(const struct search_ctx *x, const struct bwap_search_point *p, struct bwap_weights *w)
{
	memset(w, 0, sizeof(*w));
	w->nr_nodes = x->s.nr_nodes;
	w->nodes = p->page_nodes;
	for (int n = 0; n < x->s.nr_nodes; n++)
		w->w[n] = p->weights[n];
}

/* In the child: CPU mask, OpenMP environment, page policy; then exec. */
static void child_exec(const struct search_ctx *x, const struct bwap_search_point *p)
{
	unsigned char mask[BWAP_MAX_CPUS] = { 0 };
	unsigned long nodes[2] = { 0 };
	int cpus[BWAP_MAX_CPUS], n = bwap_search_point_cpus(&x->s, p, cpus);
	char buf[8192], **argv = calloc(x->nr_cmd + 1, sizeof(char *));
	long r = 0;

	for (int i = 0; i < n; i++)
		mask[cpus[i]] = 1;
	if (bwap_pin_to_cpus(0, mask)) {
		fprintf(stderr, "bwapctl search: cannot set the CPU mask %s: %s\n",
			cpus_text(x, p, 0, buf, sizeof(buf)), strerror(errno));
		_exit(126);
	}
	snprintf(buf, sizeof(buf), "%d", p->nr_threads);
	setenv("OMP_NUM_THREADS", buf, 1);
	setenv("OMP_PLACES", cpus_text(x, p, 1, buf, sizeof(buf)), 1);
	setenv("OMP_PROC_BIND", "close", 1);
	snprintf(buf, sizeof(buf), "%d", p->id);
	setenv("BWAP_SEARCH_POINT", buf, 1);
	if (x->phases)
		setenv("BWAP_PHASE", x->fifo, 1);
	switch (p->policy) {
	case BWAP_PAGES_FIRST_TOUCH:
		r = syscall(SYS_set_mempolicy, 0 /* MPOL_DEFAULT */, NULL, 0UL);
		break;
	case BWAP_PAGES_LOCALITY:
		nodes[0] = p->thread_nodes;
		r = syscall(SYS_set_mempolicy, 2 /* MPOL_BIND */, nodes, (unsigned long)BWAP_MAX_NODES + 1);
		break;
	case BWAP_PAGES_INTERLEAVE:
		r = bwap_set_own_interleave(p->page_nodes, 0);
		break;
	default:
		if (x->mode == BWAP_KERNEL_SERIES) {
			struct bwap_weights w;

			point_weights(x, p, &w);
			r = bwap_set_own_weights(&w);
		} else {
			/* portable: interleave now, the parent moves pages to the weights' shares */
			r = bwap_set_own_interleave(p->page_nodes, 0);
		}
	}
	if (r) {
		fprintf(stderr, "bwapctl search: cannot set the %s policy: %s\n", bwap_page_policy_name[p->policy],
			strerror(errno));
		_exit(126);
	}
	snprintf(buf, sizeof(buf), "%d", p->nr_threads);
	for (int i = 0; i < x->nr_cmd; i++) {
		const char *at = strstr(x->cmd[i], "{threads}");

		if (!at) {
			argv[i] = x->cmd[i];
			continue;
		}
		if (asprintf(&argv[i], "%.*s%s%s", (int)(at - x->cmd[i]), x->cmd[i], buf, at + 9) < 0)
			_exit(126);
	}
	execvp(argv[0], argv);
	fprintf(stderr, "bwapctl search: cannot run '%s': %s\n", argv[0], strerror(errno));
	_exit(127);
}

/* The number the metric matches in out (last match), or NAN. */
static double metric_value(const struct search_ctx *x, const char *out)
{
	regmatch_t mt[2];
	double v = NAN;
	const char *at = out;

	while (*at && !regexec(&x->re, at, 2, mt, at == out ? 0 : REG_NOTBOL)) {
		int g = mt[1].rm_so >= 0 ? 1 : 0;
		char num[64], *end;
		int len = mt[g].rm_eo - mt[g].rm_so;

		if (len > 0 && len < (int)sizeof(num)) {
			memcpy(num, at + mt[g].rm_so, len);
			num[len] = 0;
			double d = strtod(num, &end);

			v = end != num && isfinite(d) ? d : NAN;
		}
		if (mt[0].rm_eo == 0)
			break;
		at += mt[0].rm_eo;
	}
	return v;
}

/*
 * --keep-output: what this point applies, in search-probe's words, so a
 * test can hold the probe's report against it (guest/bwapctl-guest-search).
 */
static void write_claim(const struct search_ctx *x, const struct bwap_search_point *p)
{
	int cpus[BWAP_MAX_CPUS], n = bwap_search_point_cpus(&x->s, p, cpus), sorted[BWAP_MAX_CPUS];
	char path[4200], a[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/out/%d.claim", x->dir, p->id);
	f = fopen(path, "w");
	if (!f)
		return;
	memcpy(sorted, cpus, n * sizeof(int));
	for (int i = 1; i < n; i++)
		for (int j = i; j > 0 && sorted[j - 1] > sorted[j]; j--) {
			int t = sorted[j];

			sorted[j] = sorted[j - 1];
			sorted[j - 1] = t;
		}
	fprintf(f, "probe cpus ");
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%d", i ? "," : "", sorted[i]);
	fprintf(f, "\nprobe threads %d\nprobe thread-cpus ", p->nr_threads);
	for (int i = 0; i < n; i++)
		fprintf(f, "%s%d", i ? "," : "", cpus[i]);
	fprintf(f, "\n");
	switch (p->policy) {
	case BWAP_PAGES_FIRST_TOUCH:
		fprintf(f, "probe policy default\n");
		break;
	case BWAP_PAGES_LOCALITY:
		fprintf(f, "probe policy bind nodes %s\n", bwap_nodeset_format(p->thread_nodes, a, sizeof(a)));
		break;
	default:
		if (p->policy == BWAP_PAGES_INTERLEAVE || x->mode != BWAP_KERNEL_SERIES) {
			fprintf(f, "probe policy interleave nodes %s\n", bwap_nodeset_format(p->page_nodes, a, sizeof(a)));
		} else {
			fprintf(f, "probe policy weighted nodes %s weights", bwap_nodeset_format(p->page_nodes, a, sizeof(a)));
			for (int i = 0; i < x->s.nr_nodes; i++)
				fprintf(f, "%s%d", i ? "," : " ", p->weights[i]);
			fprintf(f, "\n");
		}
	}
	/* where pages may be (first-touch, bind), or the interleave weights */
	fprintf(f, "claim pages %s %s ", p->policy == BWAP_PAGES_FIRST_TOUCH ? "on" :
		p->policy == BWAP_PAGES_LOCALITY ? "on" : "weights",
		bwap_nodeset_format(p->policy < BWAP_PAGES_INTERLEAVE ? p->thread_nodes : p->page_nodes, a, sizeof(a)));
	for (int i = 0; i < x->s.nr_nodes; i++)
		fprintf(f, "%s%d", i ? "," : "", p->policy < BWAP_PAGES_INTERLEAVE ?
			bwap_nodeset_has(p->thread_nodes, i) : p->weights[i]);
	fprintf(f, "\n");
	fclose(f);
}

/* The index of phase name, added if new; -1 when there are too many. */
static int phase_index(struct search_ctx *x, const char *name)
{
	for (int k = 0; k < x->s.nr_phases; k++)
		if (!strcmp(x->s.phase[k], name))
			return k;
	if (x->s.nr_phases == BWAP_SEARCH_MAX_PHASES) {
		fprintf(stderr, "bwapctl search: phase '%s' ignored: at most %d phases\n", name,
			BWAP_SEARCH_MAX_PHASES);
		return -1;
	}
	snprintf(x->s.phase[x->s.nr_phases], BWAP_PHASE_NAME_MAX, "%s", name);
	return x->s.nr_phases++;
}

/* Phase lines read so far from the FIFO: each "NAME\n" ends the current phase at t. */
static void phase_lines(struct search_ctx *x, char *buf, size_t *len, double t, int *cur, double *since,
			double *phase_secs)
{
	char *nl;

	while ((nl = memchr(buf, '\n', *len))) {
		*nl = 0;
		if (*cur >= 0)
			phase_secs[*cur] += t - *since;
		*cur = buf[0] ? phase_index(x, buf) : -1;
		if (*cur >= 0 && isnan(phase_secs[*cur]))
			phase_secs[*cur] = 0;
		*since = t;
		*len -= nl + 1 - buf;
		memmove(buf, nl + 1, *len);
	}
	if (*len >= BWAP_PHASE_NAME_MAX)
		*len = 0;	/* a line too long for a phase name: dropped */
}

/* One run of the point; its score into *score.  0, or -1 (a message printed). */
static int run_once(struct search_ctx *x, struct bwap_search_point *p, double *score, double *secs,
		    double *phase_secs)
{
	int rfd = -1, wfd = -1, cur = -1;
	char pbuf[BWAP_PHASE_NAME_MAX + 2];
	size_t plen = 0;
	double since = 0;
	int fds[2], status;
	char *out = malloc(MAX_OUTPUT + 1), err[512];
	size_t len = 0;
	double t0;
	pid_t pid;
	struct bwap_weights w;
	int portable = p->policy >= BWAP_PAGES_DWP0 && x->mode != BWAP_KERNEL_SERIES;

	if (!out || pipe2(fds, O_CLOEXEC)) {
		free(out);
		cli_error("search", "pipe: %s", strerror(errno));
		return -1;
	}
	point_weights(x, p, &w);
	if (x->keep_output)
		write_claim(x, p);
	for (int k = 0; k < BWAP_SEARCH_MAX_PHASES; k++)
		phase_secs[k] = NAN;
	if (x->phases) {
		/* our own writer end keeps the FIFO from hanging up between the program's opens */
		rfd = open(x->fifo, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		wfd = rfd < 0 ? -1 : open(x->fifo, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
		if (wfd < 0) {
			cli_error("search", "cannot open the phase FIFO %s: %s", x->fifo, strerror(errno));
			if (rfd >= 0)
				close(rfd);
			free(out);
			return -1;
		}
	}
	t0 = now();
	pid = fork();
	if (pid < 0) {
		cli_error("search", "fork: %s", strerror(errno));
		free(out);
		return -1;
	}
	if (!pid) {
		dup2(fds[1], 1);
		child_exec(x, p);
	}
	running_child = pid;
	close(fds[1]);
	for (;;) {
		struct pollfd pf[2] = { { fds[0], POLLIN, 0 }, { rfd, POLLIN, 0 } };
		int timeout = portable ? (int)(x->place_interval * 1000) : -1;
		int r = poll(pf, rfd >= 0 ? 2 : 1, timeout);
		ssize_t got;

		if (r < 0 && errno == EINTR)
			continue;
		if (r > 0 && rfd >= 0 && (pf[1].revents & POLLIN)) {
			got = read(rfd, pbuf + plen, sizeof(pbuf) - 1 - plen);
			if (got > 0) {
				plen += got;
				if (cur < 0 && since == 0)
					since = t0;
				phase_lines(x, pbuf, &plen, now(), &cur, &since, phase_secs);
			}
			if (!(pf[0].revents & (POLLIN | POLLHUP)))
				continue;
		}
		if (r == 0) {
			struct bwap_place_stats st;

			bwap_place_pages(pid, &w, 0, &st, err, sizeof(err));
			continue;
		}
		got = read(fds[0], out + len, len < MAX_OUTPUT ? MAX_OUTPUT - len : 0);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			if (len >= MAX_OUTPUT && got == 0 && r > 0) {
				char sink[4096];

				if (read(fds[0], sink, sizeof(sink)) > 0)
					continue;
			}
			break;
		}
		len += got;
	}
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	running_child = 0;
	*secs = now() - t0;
	if (rfd >= 0) {
		ssize_t got;

		while ((got = read(rfd, pbuf + plen, sizeof(pbuf) - 1 - plen)) > 0) {
			plen += got;
			phase_lines(x, pbuf, &plen, t0 + *secs, &cur, &since, phase_secs);
		}
		if (cur >= 0)
			phase_secs[cur] += t0 + *secs - since;
		close(rfd);
		close(wfd);
	}
	out[len] = 0;
	if (x->keep_output) {
		char path[4200];
		FILE *f;

		snprintf(path, sizeof(path), "%s/out/%d-%d.txt", x->dir, p->id, p->nr_samples);
		f = fopen(path, "w");
		if (f) {
			fwrite(out, 1, len, f);
			fclose(f);
		}
	}
	if (interrupted) {
		free(out);
		return -1;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "bwapctl search: point %d: '%s' %s %d\n", p->id, x->cmd[0],
			WIFEXITED(status) ? "exited with status" : "was killed by signal",
			WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		free(out);
		return -1;
	}
	if (x->metric) {
		*score = metric_value(x, out);
		if (isnan(*score)) {
			fprintf(stderr, "bwapctl search: point %d: no number matching --metric '%s' in the output\n",
				p->id, x->metric);
			free(out);
			return -1;
		}
	} else {
		*score = *secs;
	}
	free(out);
	return 0;
}

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
	cpus_text(x, p, 0, cpus, sizeof(cpus));
	cpus_text(x, p, 1, places, sizeof(places));
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
	json_object_object_add(o, "cpus", json_object_new_string(cpus_text(x, p, 0, buf, sizeof(buf))));
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

static json_object *result_json(const struct search_ctx *x, int all)
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
	json_object_object_add(o, "interrupted", json_object_new_boolean(interrupted));
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
static int save_state(const struct search_ctx *x)
{
	struct bwap_atomic_file af;
	char path[4200], err[512];
	json_object *o;

	snprintf(path, sizeof(path), "%s/results.json", x->dir);
	if (bwap_atomic_open(&af, path, err, sizeof(err))) {
		cli_error("search", "%s", err);
		return -1;
	}
	o = result_json(x, 0);
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
static int save_phase_weights(const struct search_ctx *x)
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

static void describe(const struct search_ctx *x, const struct bwap_search_point *p, char *buf, size_t len)
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

static void print_table(const struct search_ctx *x, FILE *f)
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
		interrupted ? "; INTERRUPTED" : "");
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

		describe(x, &x->s.pt[best], c, sizeof(c));
		fprintf(f, "best: point %d, %s: %.6g (%.3fx the baseline)\nreproduce: %s\n", best, c,
			x->s.pt[best].score, bwap_search_speedup(&x->s, &x->s.pt[best]), rep ? rep : "?");
		free(rep);
	}
	for (int k = 0; k < x->s.nr_phases; k++) {
		int b = phase_best(x, k, 0), w = phase_best(x, k, 1);

		if (b < 0)
			continue;
		describe(x, &x->s.pt[b], c, sizeof(c));
		fprintf(f, "phase %s: best point %d, %s: %.4g s in the phase (the best point: %.4g s)", x->s.phase[k],
			b, c, x->s.pt[b].phase_score[k], x->s.pt[best].phase_score[k]);
		if (w >= 0 && w != b)
			fprintf(f, "; best weighted: point %d, %.4g s", w, x->s.pt[w].phase_score[k]);
		fprintf(f, "\n");
	}
	free(idx);
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

	x->started = now();
	while (!interrupted && x->runs_done < x->budget && (i = bwap_search_next(&x->s, &why)) >= 0) {
		struct bwap_search_point *p = &x->s.pt[i];
		double spent = now() - x->started, per, left, score, secs, total = 0;
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
			if (run_once(x, p, &score, &secs, phase_secs)) {
				ok = 0;
				break;
			}
			for (int k = 0; k < BWAP_SEARCH_MAX_PHASES; k++)
				p->phase_samples[k][p->nr_samples] = phase_secs[k];
			p->samples[p->nr_samples++] = score;
			total += secs;
		}
		p->seconds = total;
		if (interrupted) {
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
		if (save_state(x))
			return -1;
		best = bwap_search_best(&x->s);
		spent = now() - x->started;
		per = spent / x->runs_done;
		left = x->budget - x->runs_done;
		if (x->s.nr - x->runs_done < left)
			left = x->s.nr - x->runs_done;
		if (x->time_limit > 0 && x->time_limit - spent < per * left)
			left = (x->time_limit - spent) / per;
		fmt_duration(per * left, eta, sizeof(eta));
		describe(x, p, d, sizeof(d));
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
			json_object *o = result_json(&x, 1);

			puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
			json_object_put(o);
		} else {
			print_table(&x, stdout);
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
	if (save_state(&x))
		ret = 1;
	if (x.s.nr_phases && save_phase_weights(&x))
		ret = 1;
	if (x.png) {
		json_object *o = result_json(&x, 0);

		if (bwap_chart_search(x.png, o, err, sizeof(err))) {
			cli_error("search", "%s", err);
			ret = 1;
		}
		json_object_put(o);
	}
	if (x.json) {
		json_object *o = result_json(&x, 0);

		puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(o);
	} else {
		print_table(&x, stdout);
	}
	if (interrupted) {
		fprintf(stderr, "bwapctl search: interrupted; %d points measured, kept in %s/results.json\n",
			x.runs_done, x.dir);
		return 130;
	}
	return ret;
}
