// SPDX-License-Identifier: GPL-2.0
/*
 * bwapd.conf: "key = value" lines, '#' comments.  The tuner's knobs are
 * explained where their defaults are set (tuner.c); the rest here and in
 * bwapd.conf, the commented example.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bwapd.h"

void bwapd_conf_defaults(struct bwapd_conf *c)
{
	memset(c, 0, sizeof(*c));
	snprintf(c->state_dir, sizeof(c->state_dir), "%s", BWAP_STATE_DIR);
	bwap_tuner_defaults(&c->tuner);
	/* cgroup_scan: how soon a new process of the cgroup is picked up, against wakeups */
	c->cgroup_scan = 2.0;
	c->start_dwp = 0;
	c->max_weight = 255;
	c->signal = BWAP_SIGNAL_AUTO;
	snprintf(c->perf_event, sizeof(c->perf_event), "auto");
	/*
	 * The modelled workload (MODEL.md): mlp = misses in flight per thread.
	 * 3 is the model's "latency" preset: DWP matters, with an interior
	 * optimum on most machines.  Only used by the modelled signal.
	 */
	c->model_mlp = 3;
	c->model_shared = 0.5;
	c->model_threads = 0;
	/*
	 * model_refresh: the modelled signal reads the target's page counts
	 * (/proc/PID/numa_maps, a walk of all its page tables) at most this
	 * often, and right after every push.  Pages bwapd moves are always
	 * seen at once; pages the target itself faults or frees are seen
	 * within this time.  Lower notices such drift sooner and costs more
	 * CPU; 4 s is one measurement at the default n * t.
	 */
	c->model_refresh = 4.0;
	/*
	 * max_targets: every task of a node's jobs can be a target (a
	 * 128-rank MPI job on a stock kernel is 128); each costs bwapd about
	 * 20 KiB and a little CPU per sample.  max_targets_per_user keeps one
	 * user (a runaway script, a full node of one job) from taking every
	 * slot; it is counted by the owner of the target process.
	 */
	c->max_targets = 4096;
	c->max_targets_per_user = 1024;
	/*
	 * client_timeout: a control client sends one line and reads one
	 * reply; one that takes longer is closed.  bwapd serves the others
	 * meanwhile, so this only bounds how long a stuck client holds a fd.
	 * 5 s, the Slurm plugin's own bound on an attach: a task slow to
	 * send its line on a loaded node (128 starting at once) is still
	 * heard, where a shorter one closed it and failed the task.
	 */
	c->client_timeout = 5.0;
	/*
	 * write_global_weights: on a kernel without the BWAP series, bwapd's
	 * DAMON backend (kernel-side migration by a DAMON scheme) writes each
	 * push's weights to the global table in
	 * /sys/kernel/mm/mempolicy/weighted_interleave/, so that the
	 * target's later faults follow them.  Every process with a global
	 * weighted-interleave policy shares that table, so this is off
	 * unless the administrator says yes; off, pushes use move_pages.
	 */
	c->write_global_weights = 0;
	/*
	 * keep_search_logs: each target's search log (STATE_DIR/search-PID.log,
	 * mode 0600: a user's pid, command and workers are theirs) is removed
	 * when the target ends, unless yes: then they stay for 'bwapctl report
	 * --search' by root, and the administrator rotates them.
	 */
	c->keep_search_logs = 0;
	/*
	 * max_clients_per_user: connections one uid may hold open at once,
	 * waits included; a user past it is closed at once, and the others
	 * are served as before.  A Slurm task holds two at its start (its
	 * attach, and a wait for its first push): 1024 covers 512 tasks of
	 * one user on a node.  A fd each (LimitNOFILE 65536 in the unit).
	 */
	c->max_clients_per_user = 1024;
	/*
	 * wait_timeout: the longest a "wait" request (bwapctl status --wait)
	 * is held; then bwapd answers "error: wait ... timed out" and frees
	 * the slot.  The client's own --timeout is usually shorter.
	 */
	c->wait_timeout = 3600;
}

static int num(const char *key, const char *v, double lo, double hi, double *out, char *err, size_t errlen)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(v, &end);
	if (end == v || *end || errno || !(x >= lo && x <= hi)) {
		snprintf(err, errlen, "%s = '%s': expected a number from %g to %g", key, v, lo, hi);
		return -1;
	}
	*out = x;
	return 0;
}

static const char *const keys =
	"state_dir, matrix, cgroup, cgroup_scan, step, samples, trim, interval, min_gain, drift, "
	"start_dwp, max_weight, signal, perf_event, perf_raw_event, model_mlp, model_shared, model_threads, "
	"model_refresh, max_targets, max_targets_per_user, client_timeout, write_global_weights, keep_search_logs, "
	"max_clients_per_user, wait_timeout";

int bwapd_conf_set(struct bwapd_conf *c, const char *key, const char *v, char *err, size_t errlen)
{
	double x;

	if (!strcmp(key, "state_dir") || !strcmp(key, "matrix") || !strcmp(key, "cgroup")) {
		char *dst = !strcmp(key, "state_dir") ? c->state_dir : !strcmp(key, "matrix") ? c->matrix : c->cgroup;

		if (strlen(v) >= sizeof(c->state_dir)) {
			snprintf(err, errlen, "%s: path longer than %zu characters", key, sizeof(c->state_dir) - 1);
			return -1;
		}
		strcpy(dst, v);
		return 0;
	}
	if (!strcmp(key, "signal")) {
		if (bwap_signal_kind_parse(v, &c->signal)) {
			snprintf(err, errlen, "signal = '%s': expected auto, perf, model or progress", v);
			return -1;
		}
		return 0;
	}
	if (!strcmp(key, "perf_event")) {
		if (!*v || strlen(v) >= sizeof(c->perf_event) || strchr(v, ' ')) {
			snprintf(err, errlen, "perf_event = '%s': expected auto, generic or one libpfm4 event name "
				 "such as CYCLE_ACTIVITY:STALLS_L3_MISS", v);
			return -1;
		}
		strcpy(c->perf_event, v);
		return 0;
	}
#define YES_NO(name, field)							\
	if (!strcmp(key, name)) {						\
		if (strcmp(v, "yes") && strcmp(v, "no")) {			\
			snprintf(err, errlen, "%s = '%s': expected yes or no", key, v); \
			return -1;						\
		}								\
		field = v[0] == 'y';						\
		return 0;							\
	}
	YES_NO("keep_search_logs", c->keep_search_logs)
	YES_NO("write_global_weights", c->write_global_weights)
#undef YES_NO
	if (!strcmp(key, "perf_raw_event")) {
		char *end;

		errno = 0;
		c->perf_raw = strtoull(v, &end, 0);
		if (end == v || *end || errno) {
			snprintf(err, errlen, "perf_raw_event = '%s': expected a raw PMU config such as 0x14a3", v);
			return -1;
		}
		return 0;
	}
#define NUM(name, lo, hi, field, conv)                                         \
	if (!strcmp(key, name)) {                                              \
		if (num(key, v, lo, hi, &x, err, errlen))                      \
			return -1;                                             \
		field = conv x;                                                \
		return 0;                                                      \
	}
	NUM("cgroup_scan", 0.1, 3600, c->cgroup_scan, (double))
	NUM("step", 0.001, 1, c->tuner.step, (double))
	NUM("samples", 1, BWAP_TUNER_MAX_SAMPLES, c->tuner.samples, (int))
	NUM("trim", 0, BWAP_TUNER_MAX_SAMPLES, c->tuner.trim, (int))
	NUM("interval", 0.001, 3600, c->tuner.interval, (double))
	NUM("min_gain", 0, 0.99, c->tuner.min_gain, (double))
	NUM("drift", 0.0001, 100, c->tuner.drift, (double))
	NUM("start_dwp", 0, 1, c->start_dwp, (double))
	NUM("max_weight", 1, 255, c->max_weight, (int))
	NUM("model_mlp", 0.1, 1000, c->model_mlp, (double))
	NUM("model_shared", 0, 1, c->model_shared, (double))
	NUM("model_threads", 0, 4096, c->model_threads, (int))
	NUM("model_refresh", 0, 3600, c->model_refresh, (double))
#define WHOLE(name, lo, hi, field)						\
	if (!strcmp(key, name)) {						\
		if (num(key, v, lo, hi, &x, err, errlen))			\
			return -1;						\
		if (x != (double)(long)x) {					\
			snprintf(err, errlen, "%s = '%s': expected a whole number from %d to %d", key, v, lo, hi); \
			return -1;						\
		}								\
		field = (int)x;							\
		return 0;							\
	}
	WHOLE("max_targets", 1, 65536, c->max_targets)
	WHOLE("max_targets_per_user", 1, 65536, c->max_targets_per_user)
	WHOLE("max_clients_per_user", 1, 65536, c->max_clients_per_user)
#undef WHOLE
	NUM("client_timeout", 0.05, 60, c->client_timeout, (double))
	NUM("wait_timeout", 0.1, 86400, c->wait_timeout, (double))
#undef NUM
	snprintf(err, errlen, "unknown key '%s' (keys: %s)", key, keys);
	return -1;
}

static char *trim_space(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

int bwapd_conf_load(struct bwapd_conf *c, const char *path, int missing_ok, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char line[1024], why[512];
	struct stat st;
	int lineno = 0;

	if (!f) {
		if (missing_ok && errno == ENOENT)
			return 0;
		snprintf(err, errlen, "cannot read config %s: %s", path, strerror(errno));
		return -1;
	}
	if (!fstat(fileno(f), &st) && !S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "config %s is not a regular file (%s); give a file such as %s", path,
			 S_ISDIR(st.st_mode) ? "a directory" : "a special file", BWAPD_CONF);
		fclose(f);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s, *eq;

		lineno++;
		line[strcspn(line, "#")] = '\0';
		s = trim_space(line);
		if (!*s)
			continue;
		eq = strchr(s, '=');
		if (!eq) {
			snprintf(err, errlen, "%s:%d: expected 'key = value', got '%s'", path, lineno, s);
			fclose(f);
			return -1;
		}
		*eq = '\0';
		if (bwapd_conf_set(c, trim_space(s), trim_space(eq + 1), why, sizeof(why))) {
			snprintf(err, errlen, "%s:%d: %s", path, lineno, why);
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	return 0;
}

int bwapd_conf_check(const struct bwapd_conf *c, char *err, size_t errlen)
{
	char why[400];

	if (bwap_tuner_check(&c->tuner, why, sizeof(why))) {
		snprintf(err, errlen, "tuner settings: %s", why);
		return -1;
	}
	if (c->max_targets_per_user > c->max_targets) {
		snprintf(err, errlen, "max_targets_per_user = %d is above max_targets = %d; give at most %d",
			 c->max_targets_per_user, c->max_targets, c->max_targets);
		return -1;
	}
	if (!c->state_dir[0]) {
		snprintf(err, errlen, "state_dir is empty");
		return -1;
	}
	return 0;
}

void bwapd_conf_print(const struct bwapd_conf *c, FILE *f)
{
	fprintf(f, "state_dir = %s\nmatrix = %s\ncgroup = %s\ncgroup_scan = %g\n"
		   "step = %g\nsamples = %d\ntrim = %d\ninterval = %g\nmin_gain = %g\ndrift = %g\n"
		   "start_dwp = %g\nmax_weight = %d\nsignal = %s\nperf_event = %s\nperf_raw_event = %#llx\n"
		   "model_mlp = %g\nmodel_shared = %g\nmodel_threads = %d\nmodel_refresh = %g\n"
		   "max_targets = %d\nmax_targets_per_user = %d\nclient_timeout = %g\nwrite_global_weights = %s\n"
		   "keep_search_logs = %s\nmax_clients_per_user = %d\nwait_timeout = %g\n",
		c->state_dir, c->matrix, c->cgroup, c->cgroup_scan, c->tuner.step, c->tuner.samples,
		c->tuner.trim, c->tuner.interval, c->tuner.min_gain, c->tuner.drift, c->start_dwp,
		c->max_weight, bwap_signal_kind_name(c->signal), c->perf_event, (unsigned long long)c->perf_raw,
		c->model_mlp, c->model_shared, c->model_threads, c->model_refresh, c->max_targets,
		c->max_targets_per_user, c->client_timeout, c->write_global_weights ? "yes" : "no",
		c->keep_search_logs ? "yes" : "no", c->max_clients_per_user, c->wait_timeout);
}
