// SPDX-License-Identifier: GPL-2.0
/*
 * bwapctl search, one point: the command run with the point's CPU mask,
 * OpenMP environment and page policy (BWAP weights through the series or
 * portable placement), its output kept for --metric, its phases timed,
 * and what was applied written as a claim for the tests (--keep-output).
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

char *search_cpus_text(const struct search_ctx *x, const struct bwap_search_point *p, int places,
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
			search_cpus_text(x, p, 0, buf, sizeof(buf)), strerror(errno));
		_exit(126);
	}
	snprintf(buf, sizeof(buf), "%d", p->nr_threads);
	setenv("OMP_NUM_THREADS", buf, 1);
	setenv("OMP_PLACES", search_cpus_text(x, p, 1, buf, sizeof(buf)), 1);
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
int search_run_once(struct search_ctx *x, struct bwap_search_point *p, double *score, double *secs,
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
	t0 = search_now();
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
	search_running_child = pid;
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
				phase_lines(x, pbuf, &plen, search_now(), &cur, &since, phase_secs);
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
	search_running_child = 0;
	*secs = search_now() - t0;
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
	if (search_interrupted) {
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
