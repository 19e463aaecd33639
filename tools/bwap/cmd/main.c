// SPDX-License-Identifier: GPL-2.0
/* bwapctl: the entry point; hands each subcommand its own argv. */
#include <stdio.h>
#include <string.h>

#include "bwapctl.h"

static const struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *what;
} commands[] = {
	{ "topology", cmd_topology, "nodes, CPUs, memory, distances, HMAT bandwidth and latency" },
	{ "measure", cmd_measure, "measure bandwidth from every node to a worker set" },
	{ "weights", cmd_weights, "canonical weights for a worker set; apply them to sysfs" },
	{ "run", cmd_run, "run a program on the workers with its own canonical weights" },
	{ "place", cmd_place, "move a process's pages to its weighted shares (move_pages)" },
	{ "bench", cmd_bench, "STREAM-style bandwidth under each placement: does BWAP help here?" },
	{ "search", cmd_search, "find the best thread and page placement for a command" },
	{ "model", cmd_model, "predict throughput of placements (MODELLED, not measured)" },
	{ "report", cmd_report, "charts: matrix and weights, bwapd's DWP search, a result JSON, a --peers report" },
	{ "attach", cmd_attach, "ask bwapd to tune a running process" },
	{ "detach", cmd_detach, "ask bwapd to stop tuning a process" },
	{ "status", cmd_status, "what bwapd tunes: DWP, weights, pages per node" },
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: bwapctl COMMAND [OPTIONS]\n\n"
		   "Bandwidth-aware page placement for NUMA machines: what the node-to-node\n"
		   "bandwidth looks like, which weighted-interleave weights get the most of it\n"
		   "for the nodes an application runs on, and applying them.\n\nCommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].what);
	fprintf(f, "\n'bwapctl COMMAND --help' explains a command; man bwapctl has the rest.\n"
		   "'bwapctl --version' prints the version.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("bwapctl %s\n", BWAP_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "bwapctl: unknown command '%s'\n\n", argv[1]);
	usage(stderr);
	return 2;
}
