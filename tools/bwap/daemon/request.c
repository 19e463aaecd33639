// SPDX-License-Identifier: GPL-2.0
/*
 * A control request's text, parsed and checked, nothing done: the verb,
 * the process it names (a pid, or "fd": a pidfd passed with it), and an
 * attach's arguments, each value in range.  Every byte here comes from a
 * client that may mean harm, so this file only reads the line; it opens
 * nothing, reads no /proc file and changes no state, which is also what
 * lets fuzz/bwapd_request.c (libFuzzer) run it on any input.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwapd.h"

const char *bwap_signal_kind_name(enum bwap_signal_kind k)
{
	switch (k) {
	case BWAP_SIGNAL_AUTO: return "auto";
	case BWAP_SIGNAL_PERF: return "perf";
	case BWAP_SIGNAL_MODEL: return "model";
	case BWAP_SIGNAL_PROGRESS: return "progress";
	}
	return "?";
}

int bwap_signal_kind_parse(const char *s, enum bwap_signal_kind *k)
{
	for (int i = BWAP_SIGNAL_AUTO; i <= BWAP_SIGNAL_PROGRESS; i++)
		if (!strcmp(s, bwap_signal_kind_name(i))) {
			*k = i;
			return 0;
		}
	return -1;
}

/* A whole number lo..hi, all of s; 0 or -1. */
static int whole(const char *s, long long lo, long long hi, long long *out)
{
	char *end;
	long long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -1;
	*out = v;
	return 0;
}

void attach_args_init(struct attach_args *a)
{
	memset(a, 0, sizeof(*a));
	a->progress = a->phases = a->phase_weights = -1;
	a->tune = 1;
	a->job = a->step = a->task = -1;
	snprintf(a->how, sizeof(a->how), "attach");
}

/*
 * "KEY VALUE ..." after an attach's target.  *next_fd counts the "fd"
 * values taken so far (the passed descriptors go in that order).
 * from_client: a request (how is attach, run or slurm; no parent).
 */
int attach_args_parse(const char *args, int from_client, struct attach_args *a, int *next_fd, char *err,
		      size_t errlen)
{
	char key[32], val[256];
	int pos = 0, n;

	while (args && sscanf(args + pos, " %31s%n", key, &n) == 1) {
		long long v;
		int *fdslot = NULL;

		pos += n;
		if (sscanf(args + pos, " %255s%n", val, &n) != 1) {
			snprintf(err, errlen, "attach argument '%.31s' has no value", key);
			return -1;
		}
		pos += n;
		if (!strcmp(key, "workers")) {
			if (bwap_nodeset_parse(val, &a->workers, err, errlen))
				return -1;
		} else if (!strcmp(key, "signal")) {
			if (bwap_signal_kind_parse(val, &a->kind)) {
				snprintf(err, errlen, "signal '%.32s': expected auto, perf, model or progress", val);
				return -1;
			}
			a->kind_given = 1;
		} else if (!strcmp(key, "progress")) {
			fdslot = &a->progress;
		} else if (!strcmp(key, "phases")) {
			fdslot = &a->phases;
		} else if (!strcmp(key, "phase-weights")) {
			fdslot = &a->phase_weights;
		} else if (!strcmp(key, "protect")) {
			if (whole(val, 1, 4194304, &v)) {
				snprintf(err, errlen, "protect '%.32s': expected a pid", val);
				return -1;
			}
			a->protect = (pid_t)v;
		} else if (!strcmp(key, "how")) {
			/* a client says how it registers; "child" and "cgroup" are bwapd's own */
			if (strlen(val) >= sizeof(a->how) || (from_client && strcmp(val, "attach") && strcmp(val, "run") &&
							       strcmp(val, "slurm"))) {
				snprintf(err, errlen, "how '%.32s': expected attach, run or slurm", val);
				return -1;
			}
			snprintf(a->how, sizeof(a->how), "%s", val);
		} else if (!strcmp(key, "children") || !strcmp(key, "tune")) {
			if (strcmp(val, "0") && strcmp(val, "1")) {
				snprintf(err, errlen, "%s '%.32s': expected 0 or 1", key, val);
				return -1;
			}
			*(key[0] == 'c' ? &a->follow : &a->tune) = val[0] == '1';
		} else if (!strcmp(key, "parent") && !from_client) {
			if (whole(val, 1, 4194304, &v)) {
				snprintf(err, errlen, "parent '%.32s': expected a pid", val);
				return -1;
			}
			a->parent = (pid_t)v;
		} else if (!strcmp(key, "job") || !strcmp(key, "step") || !strcmp(key, "task")) {
			/* Slurm's ids: 0 .. 2^32-1 (steps use the top values: batch, extern) */
			if (whole(val, 0, 4294967295LL, &v)) {
				snprintf(err, errlen, "%s '%.32s' is not a Slurm id (a whole number from 0 to 4294967295)",
					 key, val);
				return -1;
			}
			*(key[0] == 'j' ? &a->job : key[0] == 's' ? &a->step : &a->task) = v;
		} else {
			snprintf(err, errlen, "unknown attach argument '%.32s'", key);
			return -1;
		}
		if (fdslot) {
			if (strcmp(val, "fd")) {
				snprintf(err, errlen, "%s takes no path: bwapd opens no file a client names; pass the "
					 "open file over the socket ('%s fd' with SCM_RIGHTS), as bwapctl does for --%s FILE",
					 key, key, key);
				return -1;
			}
			if (*fdslot >= 0) {
				snprintf(err, errlen, "%s given twice", key);
				return -1;
			}
			*fdslot = (*next_fd)++;
		}
	}
	if ((a->phases < 0) != (a->phase_weights < 0)) {
		snprintf(err, errlen, "give phases and phase-weights together");
		return -1;
	}
	return 0;
}

int bwapd_request_parse(const char *line, int from_client, struct bwapd_request *r, char *err, size_t errlen)
{
	static const struct { const char *text; enum bwapd_verb verb; } plain[] = {
		{ "status", REQ_STATUS }, { "status json", REQ_STATUS_JSON }, { "stats", REQ_STATS },
		{ "stats json", REQ_STATS_JSON }, { "ping", REQ_PING },
	};
	char verb[16], word[32];
	int n = 0, next_fd = 0;
	const char *rest;

	memset(r, 0, sizeof(*r));
	attach_args_init(&r->a);
	r->pid = -1;
	for (unsigned int i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		if (!strcmp(line, plain[i].text)) {
			r->verb = plain[i].verb;
			return 0;
		}
	if (sscanf(line, "%15s %31s%n", verb, word, &n) != 2) {
		snprintf(err, errlen, "unknown request");
		return -1;
	}
	if (!strcmp(verb, "attach"))
		r->verb = REQ_ATTACH;
	else if (!strcmp(verb, "detach"))
		r->verb = REQ_DETACH;
	else if (!strcmp(verb, "wait"))
		r->verb = REQ_WAIT;
	else {
		snprintf(err, errlen, "unknown request");
		return -1;
	}
	if (!strcmp(word, "fd")) {
		r->target_fd = 1;
		next_fd = 1;
	} else {
		long long v;

		if (whole(word, 1, 4194304, &v)) {
			snprintf(err, errlen, "'%.16s' is not a pid (or fd, with a pidfd passed)", word);
			return -1;
		}
		r->pid = (long)v;
	}
	rest = line + n;
	if (r->verb == REQ_ATTACH) {
		if (attach_args_parse(rest, from_client, &r->a, &next_fd, err, errlen))
			return -1;
	} else if (r->verb == REQ_WAIT) {
		char key[16], val[32];
		int m = 0;
		long long v;

		if (sscanf(rest, " %15s %31s%n", key, val, &m) == 2) {
			if (strcmp(key, "pushes") || whole(val, 0, 1000000000, &v) || rest[m]) {
				snprintf(err, errlen, "wait PID takes only 'pushes N'");
				return -1;
			}
			r->pushes = (long)v;
		} else if (rest[strspn(rest, " ")]) {
			snprintf(err, errlen, "wait PID takes only 'pushes N'");
			return -1;
		}
	} else if (rest[strspn(rest, " ")]) {
		snprintf(err, errlen, "detach takes only the pid");
		return -1;
	}
	r->nr_fds = next_fd;
	return 0;
}
