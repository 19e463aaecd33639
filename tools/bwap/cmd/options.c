// SPDX-License-Identifier: GPL-2.0
/* Option helpers and the choice of bandwidth matrix, shared by the subcommands. */
#include <errno.h>
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

const char *cli_value(const char *subcmd, int argc, char **argv, int *i)
{
	if (*i + 1 >= argc) {
		cli_error(subcmd, "option %s needs a value; see 'bwapctl %s --help'", argv[*i], subcmd);
		return NULL;
	}
	return argv[++*i];
}

int cli_parse_double(const char *subcmd, const char *opt, const char *text, double lo, double hi,
		     double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(text, &end);
	if (errno || end == text || *end || v < lo || v > hi) {
		cli_error(subcmd, "%s '%s' is not a number from %g to %g", opt, text, lo, hi);
		return -1;
	}
	*out = v;
	return 0;
}

int cli_parse_workers(const char *subcmd, const char *text, bwap_nodeset *out)
{
	char err[256];

	if (bwap_nodeset_parse(text, out, err, sizeof(err))) {
		cli_error(subcmd, "--workers: %s", err);
		return -1;
	}
	return 0;
}

void matrix_opts_init(struct matrix_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->state_dir = BWAP_STATE_DIR;
	o->sysfs_root = getenv("BWAP_SYSFS_ROOT");
}

int matrix_opts_parse(struct matrix_opts *o, int argc, char **argv, int *i)
{
	const char *a = argv[*i];

	if (!strcmp(a, "--matrix")) {
		o->file = cli_value(argv[0], argc, argv, i);
		return o->file ? 1 : -1;
	}
	if (!strcmp(a, "--state-dir")) {
		o->state_dir = cli_value(argv[0], argc, argv, i);
		return o->state_dir ? 1 : -1;
	}
	if (!strcmp(a, "--hmat")) {
		o->hmat = 1;
		return 1;
	}
	if (!strcmp(a, "--hmat-estimate")) {
		o->hmat = o->hmat_estimate = 1;
		return 1;
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
