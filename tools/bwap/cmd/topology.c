// SPDX-License-Identifier: GPL-2.0
/* bwapctl topology: the machine as sysfs shows it, as a table or JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwapctl.h"

static void help(FILE *f)
{
	fprintf(f, "Usage: bwapctl topology [--json]\n\n"
		   "Shows every online node with its CPUs and memory, the SLIT distance\n"
		   "table, and the HMAT performance attributes of both access classes\n"
		   "(access0: best initiators of any kind; access1: best CPU initiators):\n"
		   "read/write bandwidth in MiB/s and latency in ns.  HMAT reports each\n"
		   "target only from its best initiators; other pairs are not shown\n"
		   "because the kernel does not publish them.\n\n"
		   "  --json     one JSON object instead of tables\n"
		   "  -h, --help this text\n");
}

int cmd_topology(int argc, char **argv)
{
	struct bwap_topology *t;
	char err[512];
	int json = 0;

	static const struct option longopts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		CLI_HELP_OPTION,
		{ 0 }
	};
	struct cli_parser p;
	int c;

	cli_parser_init(&p, "topology", "h", longopts);
	while ((c = cli_next(&p, argc, argv)) != -1) {
		if (c == -2)
			return 2;
		if (c == 'h') {
			help(stdout);
			return 0;
		}
		json = 1;
	}
	if (optind < argc) {
		cli_error("topology", "unexpected argument '%s'; see 'bwapctl topology --help'", argv[optind]);
		return 2;
	}
	t = malloc(sizeof(*t));
	if (!t)
		return 1;
	if (bwap_topology_read(t, getenv("BWAP_SYSFS_ROOT"), err, sizeof(err))) {
		cli_error("topology", "%s", err);
		free(t);
		return 1;
	}
	if (json)
		bwap_topology_print_json(t, stdout);
	else
		bwap_topology_print(t, stdout);
	free(t);
	return 0;
}
