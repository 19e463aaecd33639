// SPDX-License-Identifier: GPL-2.0
/* Option helpers and the choice of bandwidth matrix, shared by the subcommands. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bwapctl.h"

const char matrix_opts_help[] =
	"Matrix source (first that applies):\n"
	"  --matrix FILE      a bwap-matrix file, Intel MLC --bandwidth_matrix output,\n"
	"                     or a topologies/NAME.topo file (format detected)\n"
	"  --hmat             HMAT from sysfs, even if a measured matrix exists\n"
	"  --hmat-estimate    with HMAT, estimate the entries sysfs does not report\n"
	"                     from SLIT distances (marked ~ in output)\n"
	"  --state-dir DIR    measured matrix is DIR/matrix (default " BWAP_STATE_DIR ")\n"
	"  (default: DIR/matrix if 'bwapctl measure' wrote one, else HMAT)\n";

void cli_error(const char *subcmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "bwapctl %s: ", subcmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void cli_parser_init(struct cli_parser *p, const char *subcmd, const char *optstring,
		     const struct option *longopts)
{
	memset(p, 0, sizeof(*p));
	p->subcmd = subcmd;
	p->optstring = optstring;
	p->longopts = longopts;
	optind = 1;
	opterr = 0;
}

static const char *opt_name(const struct cli_parser *p, int c, char *buf, size_t len)
{
	for (const struct option *o = p->longopts; o->name; o++)
		if (o->val == c) {
			snprintf(buf, len, "--%s", o->name);
			return buf;
		}
	snprintf(buf, len, "-%c", c);
	return buf;
}

int cli_next(struct cli_parser *p, int argc, char **argv)
{
	char optstring[64], name[64];
	int c;

	/* a leading ':' makes getopt tell a missing value from an unknown option */
	snprintf(optstring, sizeof(optstring), "%s%s", p->optstring[0] == '+' ? "+:" : ":",
		 p->optstring + (p->optstring[0] == '+'));
	c = getopt_long(argc, argv, optstring, p->longopts, NULL);
	if (c == -1)
		return -1;
	if (c == '?') {
		cli_error(p->subcmd, "unknown option '%s'; see 'bwapctl %s --help'",
			  optopt && optopt < 256 && optopt != '?' ? (snprintf(name, sizeof(name), "-%c", optopt), name) :
			  argv[optind - 1], p->subcmd);
		return -2;
	}
	if (c == ':') {
		cli_error(p->subcmd, "option %s needs a value; see 'bwapctl %s --help'",
			  optopt ? opt_name(p, optopt, name, sizeof(name)) : argv[optind - 1], p->subcmd);
		return -2;
	}
	if (c > 0 && c < OPT_END && c != p->repeatable && p->seen[c]++) {
		cli_error(p->subcmd, "option %s given twice; give it once", opt_name(p, c, name, sizeof(name)));
		return -2;
	}
	return c;
}

void matrix_opts_init(struct matrix_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->state_dir = BWAP_STATE_DIR;
	o->sysfs_root = getenv("BWAP_SYSFS_ROOT");
}

int matrix_opts_take(struct matrix_opts *o, int c, const char *arg)
{
	switch (c) {
	case OPT_MATRIX:
		o->file = arg;
		return 1;
	case OPT_STATE_DIR:
		o->state_dir = arg;
		return 1;
	case OPT_HMAT_ESTIMATE:
		o->hmat_estimate = 1;
		/* fall through */
	case OPT_HMAT:
		o->hmat = 1;
		return 1;
	}
	return 0;
}

void place_opts_init(struct place_opts *o, double dwp)
{
	memset(o, 0, sizeof(*o));
	o->dwp = dwp;
	o->max_weight = 255;
}

int place_opts_take(struct place_opts *o, const char *subcmd, int c, const char *arg)
{
	switch (c) {
	case OPT_WORKERS:
		o->have_workers = 1;
		return cli_parse_workers(subcmd, arg, &o->workers) ? -1 : 1;
	case OPT_NODES:
		o->have_nodes = 1;
		return cli_parse_nodes(subcmd, "--nodes", arg, &o->nodes) ? -1 : 1;
	case OPT_DWP:
		return cli_parse_double(subcmd, "--dwp", arg, 0, 1, &o->dwp) ? -1 : 1;
	case OPT_MAX_WEIGHT:
		return cli_parse_long(subcmd, "--max-weight", arg, 1, 255, &o->max_weight) ? -1 : 1;
	}
	return 0;
}

int matrix_opts_load(const struct matrix_opts *o, struct bwap_matrix *m)
{
	char err[512], path[4096];
	struct bwap_topology *t;
	int ret;

	if (o->file) {
		if (bwap_matrix_load(m, o->file, err, sizeof(err))) {
			fprintf(stderr, "bwapctl: %s\n", err);
			return -1;
		}
		return 0;
	}
	bwap_state_path(o->state_dir, "matrix", path, sizeof(path));
	if (!o->hmat && !access(path, R_OK)) {
		if (bwap_matrix_load(m, path, err, sizeof(err))) {
			fprintf(stderr, "bwapctl: %s\n", err);
			return -1;
		}
		return 0;
	}
	t = malloc(sizeof(*t));
	if (!t)
		return -1;
	ret = bwap_topology_read(t, o->sysfs_root, err, sizeof(err));
	if (!ret)
		ret = bwap_matrix_from_hmat(m, t, o->hmat_estimate, err, sizeof(err));
	if (ret)
		fprintf(stderr, "bwapctl: %s\n", err);
	free(t);
	return ret;
}

int canonical_weights(const char *subcmd, const struct bwap_matrix *m, bwap_nodeset workers,
		      bwap_nodeset nodes, double dwp, int max_weight, struct bwap_weights *w)
{
	double cap[BWAP_MAX_NODES];
	char err[512];

	if (bwap_canonical_capacity(m, workers, nodes, cap, err, sizeof(err)) ||
	    bwap_weights_from_capacity(w, cap, m->nr_nodes, nodes, err, sizeof(err))) {
		cli_error(subcmd, "%s", err);
		return -1;
	}
	if (dwp > 0)
		bwap_weights_apply_dwp(w, workers, dwp);
	bwap_weights_quantise(w, max_weight, 0.005);
	return 0;
}

int cli_parse_workers(const char *subcmd, const char *text, bwap_nodeset *out)
{
	return cli_parse_nodes(subcmd, "--workers", text, out);
}

int cli_parse_double(const char *subcmd, const char *opt, const char *text, double lo, double hi,
		     double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (end == text || *end || isspace((unsigned char)*text)) {
		cli_error(subcmd, "%s '%s' is not a number; give one from %g to %g", opt, text, lo, hi);
		return -1;
	}
	if (!isfinite(v) || (errno == ERANGE && fabs(v) > 1)) {
		cli_error(subcmd, "%s '%s' is not a finite number; give one from %g to %g", opt, text, lo, hi);
		return -1;
	}
	if (v < lo || v > hi) {
		cli_error(subcmd, "%s %s is %s %g; give one from %g to %g", opt, text, v < lo ? "below" : "above",
			  v < lo ? lo : hi, lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

int cli_parse_long(const char *subcmd, const char *opt, const char *text, long lo, long hi, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(text, &end, 10);
	if (end == text || *end || isspace((unsigned char)*text)) {
		cli_error(subcmd, "%s '%s' is not a whole number; give one from %ld to %ld", opt, text, lo, hi);
		return -1;
	}
	if (errno == ERANGE || v < lo || v > hi) {
		int below = errno == ERANGE ? *text == '-' : v < lo;

		cli_error(subcmd, "%s %s is %s %ld; give one from %ld to %ld", opt, text,
			  below ? "below" : "above", below ? lo : hi, lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

int cli_parse_nodes(const char *subcmd, const char *opt, const char *text, bwap_nodeset *out)
{
	char err[256];

	if (bwap_nodeset_parse(text, out, err, sizeof(err))) {
		cli_error(subcmd, "%s: %s", opt, err);
		return -1;
	}
	return 0;
}
