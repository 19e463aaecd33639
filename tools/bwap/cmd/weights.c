// SPDX-License-Identifier: GPL-2.0
/* bwapctl weights: canonical weights for a worker set, and the global sysfs table. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwapctl.h"

static void help(FILE *f)
{
	fprintf(f, "Usage: bwapctl weights --workers SET [OPTIONS]\n"
		   "       bwapctl weights --capacities LIST [OPTIONS]\n"
		   "       bwapctl weights --restore-sysfs [--state-dir DIR]\n\n"
		   "Computes BWAP's canonical weights for an application whose threads run\n"
		   "on the worker nodes SET: node i gets a share of the pages proportional to\n"
		   "min over workers w of bw(i -> w).  Shares are quantised to the kernel's\n"
		   "weights 1..255, preferring small weights, with each node's quantisation\n"
		   "error reported (goal: under 0.5%% of its share).\n\n"
		   "  --workers SET      worker nodes, e.g. 0,1 or 0-3\n"
		   "  --nodes SET        nodes that may hold pages (default: every memory\n"
		   "                     node of the matrix)\n"
		   "  --capacities LIST  skip the matrix: per-node capacities to the workers,\n"
		   "                     node 0 first, e.g. 4.4,4.2,1.7 (any unit)\n"
		   "  --dwp X            data-to-worker proximity 0..1: scale non-worker shares\n"
		   "                     by 1-X (0 = canonical, 1 = workers only)\n"
		   "  --max-weight N     largest weight to use, 1..255 (default 255)\n"
		   "  --apply-sysfs      write the weights to " BWAP_SYSFS_WEIGHTS "/nodeN\n"
		   "                     (root); the table from before is saved in the state dir\n"
		   "  --restore-sysfs    write the saved table back and forget it\n"
		   "%s"
		   "  -h, --help         this text\n\n"
		   "Example: bwapctl weights --workers 0,1 --matrix mlc.txt\n", matrix_opts_help);
}

static int parse_capacities(const char *text, double *cap, int *n)
{
	char *copy = strdup(text), *tok, *save;

	*n = 0;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n >= BWAP_MAX_NODES ||
		    cli_parse_double("weights", "--capacities", tok, 0, 1e12, &cap[*n])) {
			free(copy);
			return -1;
		}
		(*n)++;
	}
	free(copy);
	return 0;
}

int cmd_weights(int argc, char **argv)
{
	struct matrix_opts mo;
	struct bwap_matrix *m = NULL;
	struct bwap_weights w;
	bwap_nodeset workers = 0, nodes = 0;
	const char *caps = NULL, *v;
	double dwp = 0, maxw = 255, cap[BWAP_MAX_NODES];
	int apply = 0, restore = 0, have_workers = 0, have_nodes = 0, ret = 1, nr;
	char err[512], buf[256];

	matrix_opts_init(&mo);
	for (int i = 1; i < argc; i++) {
		int r = matrix_opts_parse(&mo, argc, argv, &i);

		if (r < 0)
			return 2;
		if (r)
			continue;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			help(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--workers")) {
			if (!(v = cli_value("weights", argc, argv, &i)) || cli_parse_workers("weights", v, &workers))
				return 2;
			have_workers = 1;
		} else if (!strcmp(argv[i], "--nodes")) {
			if (!(v = cli_value("weights", argc, argv, &i)) ||
			    bwap_nodeset_parse(v, &nodes, err, sizeof(err))) {
				if (v)
					cli_error("weights", "--nodes: %s", err);
				return 2;
			}
			have_nodes = 1;
		} else if (!strcmp(argv[i], "--capacities")) {
			if (!(caps = cli_value("weights", argc, argv, &i)))
				return 2;
		} else if (!strcmp(argv[i], "--dwp")) {
			if (!(v = cli_value("weights", argc, argv, &i)) ||
			    cli_parse_double("weights", "--dwp", v, 0, 1, &dwp))
				return 2;
		} else if (!strcmp(argv[i], "--max-weight")) {
			if (!(v = cli_value("weights", argc, argv, &i)) ||
			    cli_parse_double("weights", "--max-weight", v, 1, 255, &maxw))
				return 2;
		} else if (!strcmp(argv[i], "--apply-sysfs")) {
			apply = 1;
		} else if (!strcmp(argv[i], "--restore-sysfs")) {
			restore = 1;
		} else {
			cli_error("weights", "unknown option '%s'; see 'bwapctl weights --help'", argv[i]);
			return 2;
		}
	}
	if (restore) {
		if (have_workers || caps || apply) {
			cli_error("weights", "--restore-sysfs takes no other options but --state-dir");
			return 2;
		}
		if (bwap_sysfs_weights_restore(mo.state_dir, err, sizeof(err))) {
			cli_error("weights", "%s", err);
			return 1;
		}
		printf("restored the global weighted-interleave table saved in %s\n", mo.state_dir);
		return 0;
	}
	if (caps) {
		if (parse_capacities(caps, cap, &nr))
			return 2;
		if (!have_nodes)
			nodes = nr >= 64 ? ~0ULL : BWAP_NODE_BIT(nr) - 1;
		if (bwap_weights_from_capacity(&w, cap, nr, nodes, err, sizeof(err))) {
			cli_error("weights", "%s", err);
			return 1;
		}
		if (dwp > 0)
			bwap_weights_apply_dwp(&w, workers, dwp);
		bwap_weights_quantise(&w, (int)maxw, 0.005);
		printf("capacities given on the command line\n");
	} else {
		if (!have_workers) {
			cli_error("weights", "--workers SET is required (or --capacities LIST); "
				  "see 'bwapctl weights --help'");
			return 2;
		}
		m = malloc(sizeof(*m));
		if (!m || matrix_opts_load(&mo, m))
			goto out;
		if (!have_nodes) {
			for (int i = 0; i < m->nr_nodes; i++)
				for (int c = 0; c < m->nr_nodes; c++)
					if (m->bw[c][i] >= 0)
						nodes |= BWAP_NODE_BIT(i);
		}
		if (canonical_weights("weights", m, workers, nodes, dwp, (int)maxw, &w))
			goto out;
		bwap_matrix_print(m, stdout);
		printf("workers: %s", bwap_nodeset_format(workers, buf, sizeof(buf)));
		if (dwp > 0)
			printf("  dwp: %.3f", dwp);
		printf("\n");
	}
	bwap_weights_print(&w, stdout);
	printf("nodes: %s   (numactl -w %s uses the global table)\n",
	       bwap_nodeset_format(w.nodes, buf, sizeof(buf)), buf);
	if (apply) {
		if (bwap_sysfs_weights_apply(&w, mo.state_dir, err, sizeof(err))) {
			cli_error("weights", "%s", err);
			goto out;
		}
		printf("applied to %s (old table saved in %s; undo with --restore-sysfs)\n",
		       BWAP_SYSFS_WEIGHTS, mo.state_dir);
	}
	ret = 0;
out:
	free(m);
	return ret;
}
