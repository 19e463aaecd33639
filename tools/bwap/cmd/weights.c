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

/* "4.4,4.2,1.7": one finite, positive-or-zero number per node, node 0 first, no empty items. */
static int parse_capacities(const char *text, double *cap, int *n)
{
	const char *p = text;
	char item[64], opt[48];

	*n = 0;
	for (;;) {
		size_t len = strcspn(p, ",");

		if (!len) {
			cli_error("weights", "--capacities '%s': item %d is empty; give one number per node, "
				  "e.g. 4.4,4.2,1.7", text, *n + 1);
			return -1;
		}
		if (*n >= BWAP_MAX_NODES) {
			cli_error("weights", "--capacities: more than %d nodes", BWAP_MAX_NODES);
			return -1;
		}
		snprintf(item, sizeof(item), "%.*s", (int)(len < sizeof(item) - 1 ? len : sizeof(item) - 1), p);
		snprintf(opt, sizeof(opt), "--capacities (node %d)", *n);
		if (cli_parse_double("weights", opt, item, 0, 1e12, &cap[*n]))
			return -1;
		(*n)++;
		p += len;
		if (!*p)
			return 0;
		p++;	/* the comma: an item must follow */
	}
}

int cmd_weights(int argc, char **argv)
{
	struct matrix_opts mo;
	struct bwap_matrix *m = NULL;
	struct bwap_weights w;
	struct place_opts po;
	const char *caps = NULL;
	double cap[BWAP_MAX_NODES];
	int apply = 0, restore = 0, ret = 1, nr;
	char err[512], buf[256];

	matrix_opts_init(&mo);
	place_opts_init(&po, 0);
	static const struct option longopts[] = {
		CLI_PLACE_OPTIONS,
		{ "capacities", required_argument, NULL, OPT_CAPACITIES },
		{ "apply-sysfs", no_argument, NULL, OPT_APPLY_SYSFS },
		{ "restore-sysfs", no_argument, NULL, OPT_RESTORE_SYSFS },
		CLI_MATRIX_OPTIONS,
		CLI_HELP_OPTION,
		{ 0 }
	};
	struct cli_parser p;
	int c, ok;

	cli_parser_init(&p, "weights", "h", longopts);
	while ((c = cli_next(&p, argc, argv)) != -1) {
		if (c == -2)
			return 2;
		if (matrix_opts_take(&mo, c, optarg))
			continue;
		ok = place_opts_take(&po, "weights", c, optarg);
		if (ok < 0)
			return 2;
		if (ok)
			continue;
		switch (c) {
		case 'h':
			help(stdout);
			return 0;
		case OPT_CAPACITIES:
			caps = optarg;
			break;
		case OPT_APPLY_SYSFS:
			apply = 1;
			break;
		case OPT_RESTORE_SYSFS:
			restore = 1;
			break;
		}
	}
	if (optind < argc) {
		cli_error("weights", "unexpected argument '%s'; see 'bwapctl weights --help'", argv[optind]);
		return 2;
	}
	if (restore) {
		if (po.have_workers || caps || apply) {
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
		if (!po.have_nodes)
			po.nodes = nr >= 64 ? ~0ULL : BWAP_NODE_BIT(nr) - 1;
		if (bwap_weights_from_capacity(&w, cap, nr, po.nodes, err, sizeof(err))) {
			cli_error("weights", "%s", err);
			return 1;
		}
		if (po.dwp > 0)
			bwap_weights_apply_dwp(&w, po.workers, po.dwp);
		bwap_weights_quantise(&w, (int)po.max_weight, 0.005);
		printf("capacities given on the command line\n");
	} else {
		if (!po.have_workers) {
			cli_error("weights", "--workers SET is required (or --capacities LIST); "
				  "see 'bwapctl weights --help'");
			return 2;
		}
		m = malloc(sizeof(*m));
		if (!m || matrix_opts_load(&mo, m))
			goto out;
		if (!po.have_nodes) {
			for (int i = 0; i < m->nr_nodes; i++)
				for (int c = 0; c < m->nr_nodes; c++)
					if (m->bw[c][i] >= 0)
						po.nodes |= BWAP_NODE_BIT(i);
		}
		if (canonical_weights("weights", m, po.workers, po.nodes, po.dwp, (int)po.max_weight, &w))
			goto out;
		bwap_matrix_print(m, stdout);
		printf("workers: %s", bwap_nodeset_format(po.workers, buf, sizeof(buf)));
		if (po.dwp > 0)
			printf("  dwp: %.3f", po.dwp);
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
