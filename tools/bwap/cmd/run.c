// SPDX-License-Identifier: GPL-2.0
/*
 * bwapctl run: pin to the worker nodes' CPUs, give the process its own
 * canonical weights (set_mempolicy2, task policy, inherited across fork
 * and kept across exec), then exec the application.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/stat.h>

#include "bwapctl.h"

static void help(FILE *f)
{
	fprintf(f, "Usage: bwapctl run --workers SET [OPTIONS] -- PROGRAM [ARGS...]\n\n"
		   "Runs PROGRAM with its threads pinned to the CPUs of the worker nodes SET\n"
		   "and with BWAP's canonical weights for SET as its own weighted-interleave\n"
		   "policy (set_mempolicy2; the global sysfs table is not touched).  The\n"
		   "policy and the CPU mask are inherited by the program's threads and\n"
		   "children.  Needs a kernel with the BWAP mempolicy2 series.\n\n"
		   "  --workers SET     worker nodes, e.g. 0,1\n"
		   "  --dwp X           data-to-worker proximity 0..1: non-worker shares are\n"
		   "                    scaled by 1-X, keeping ratios within each group\n"
		   "                    (0 = canonical, the default; 1 = workers only)\n"
		   "  --nodes SET       nodes that may hold pages (default: all memory nodes)\n"
		   "  --max-weight N    largest weight, 1..255 (default 255)\n"
		   "  --no-pin          do not restrict CPUs, only set the weights\n"
		   "  --quiet           do not print the weights on stderr\n"
		   "  --tune            bwapd must tune the program (an error if bwapd is\n"
		   "                    not running); without it the program is registered\n"
		   "                    with bwapd only when bwapd is running\n"
		   "  --no-tune         never register with bwapd\n"
		   "  --signal KIND     bwapd's signal for it: auto, perf, model, progress\n"
		   "  --progress FILE   the program counts its work in FILE (8-byte counter,\n"
		   "                    see bwapd(8)); exported to it as BWAP_PROGRESS\n"
		   "  --protect PID     bwapd's co-scheduled mode: protect PID first\n"
		   "%s"
		   "  -h, --help        this text\n\n"
		   "Example: bwapctl run --workers 0,1 -- ./stream\n", matrix_opts_help);
}

/* Make sure FILE holds the 8-byte counter bwapd reads, and tell the program where it is. */
static int progress_file(const char *path)
{
	struct stat st;
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0 || fstat(fd, &st) || (st.st_size < 8 && ftruncate(fd, 8))) {
		cli_error("run", "--progress %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return setenv("BWAP_PROGRESS", path, 1);
}

int cmd_run(int argc, char **argv)
{
	struct matrix_opts mo;
	struct bwap_topology *t = NULL;
	struct bwap_matrix *m = NULL;
	struct bwap_weights w;
	bwap_nodeset workers = 0, nodes = 0;
	double dwp = 0;
	long maxw = 255;
	int quiet = 0, pin = 1, have_nodes = 0, prog = -1, tune = 0;
	char extra[512] = "";
	size_t nextra = 0;
	unsigned char cpus[BWAP_MAX_CPUS];
	char err[512], buf[256];

	matrix_opts_init(&mo);
	static const struct option longopts[] = {
		{ "workers", required_argument, NULL, OPT_WORKERS },
		{ "nodes", required_argument, NULL, OPT_NODES },
		{ "dwp", required_argument, NULL, OPT_DWP },
		{ "max-weight", required_argument, NULL, OPT_MAX_WEIGHT },
		{ "no-pin", no_argument, NULL, OPT_NO_PIN },
		{ "quiet", no_argument, NULL, OPT_QUIET },
		{ "tune", no_argument, NULL, OPT_TUNE },
		{ "no-tune", no_argument, NULL, OPT_NO_TUNE },
		{ "signal", required_argument, NULL, OPT_SIGNAL },
		{ "progress", required_argument, NULL, OPT_PROGRESS },
		{ "protect", required_argument, NULL, OPT_PROTECT },
		CLI_MATRIX_OPTIONS,
		CLI_HELP_OPTION,
		{ 0 }
	};
	struct cli_parser p;
	int c;

	/* '+': the program and its own options start at the first non-option */
	cli_parser_init(&p, "run", "+h", longopts);
	while ((c = cli_next(&p, argc, argv)) != -1) {
		if (matrix_opts_take(&mo, c, optarg))
			continue;
		switch (c) {
		case -2:
			return 2;
		case 'h':
			help(stdout);
			return 0;
		case OPT_WORKERS:
			if (cli_parse_workers("run", optarg, &workers))
				return 2;
			break;
		case OPT_NODES:
			if (cli_parse_nodes("run", "--nodes", optarg, &nodes))
				return 2;
			have_nodes = 1;
			break;
		case OPT_DWP:
			if (cli_parse_double("run", "--dwp", optarg, 0, 1, &dwp))
				return 2;
			break;
		case OPT_MAX_WEIGHT:
			if (cli_parse_long("run", "--max-weight", optarg, 1, 255, &maxw))
				return 2;
			break;
		case OPT_NO_PIN:
			pin = 0;
			break;
		case OPT_QUIET:
			quiet = 1;
			break;
		case OPT_TUNE:
		case OPT_NO_TUNE:
			if (tune) {
				cli_error("run", "give one of --tune and --no-tune");
				return 2;
			}
			tune = c == OPT_TUNE ? 1 : -1;
			break;
		case OPT_SIGNAL:
		case OPT_PROGRESS:
		case OPT_PROTECT: {
			const char *key = c == OPT_SIGNAL ? "signal" : c == OPT_PROGRESS ? "progress" : "protect";

			if (strchr(optarg, ' ') || !*optarg) {
				cli_error("run", "--%s '%s': give a value without spaces", key, optarg);
				return 2;
			}
			nextra += snprintf(extra + nextra, sizeof(extra) - nextra, "%s%s %s",
					   nextra ? " " : "", key, optarg);
			if (c == OPT_PROGRESS && progress_file(optarg))
				return 1;
			break;
		}
		}
	}
	prog = optind;
	if (!workers) {
		cli_error("run", "--workers SET is required; see 'bwapctl run --help'");
		return 2;
	}
	if (prog < 0 || prog >= argc) {
		cli_error("run", "no program given; write it after '--', e.g. bwapctl run --workers 0 -- ./app");
		return 2;
	}
	t = malloc(sizeof(*t));
	m = malloc(sizeof(*m));
	if (!t || !m)
		return 1;
	if (bwap_topology_read(t, mo.sysfs_root, err, sizeof(err))) {
		cli_error("run", "%s", err);
		return 1;
	}
	if (matrix_opts_load(&mo, m))
		return 1;
	if (workers & ~t->has_cpu) {
		cli_error("run", "worker nodes %s have no CPUs (nodes with CPUs: %s)",
			  bwap_nodeset_format(workers & ~t->has_cpu, buf, sizeof(buf)),
			  bwap_nodeset_format(t->has_cpu, err, sizeof(err)));
		return 1;
	}
	if (!have_nodes)
		nodes = t->has_memory;
	if (canonical_weights("run", m, workers, nodes, dwp, (int)maxw, &w))
		return 1;
	if (pin) {
		if (!bwap_topology_cpus_of(t, workers, cpus)) {
			cli_error("run", "worker nodes %s have no CPUs to run on",
				  bwap_nodeset_format(workers, buf, sizeof(buf)));
			return 1;
		}
		if (bwap_pin_to_cpus(0, cpus)) {
			cli_error("run", "cannot pin to the CPUs of nodes %s: %s",
				  bwap_nodeset_format(workers, buf, sizeof(buf)), strerror(errno));
			return 1;
		}
	}
	if (bwap_set_own_weights(&w)) {
		int e = errno;

		cli_error("run", "set_mempolicy2 failed: %s%s", strerror(e),
			  e == ENOSYS ? " (this kernel lacks the BWAP mempolicy2 series; use "
					"'bwapctl weights --apply-sysfs' with 'numactl -w NODES' instead)" : "");
		return 1;
	}
	if (!quiet) {
		fprintf(stderr, "bwapctl run: workers %s, dwp %.3f, weights",
			bwap_nodeset_format(workers, buf, sizeof(buf)), dwp);
		for (int i = 0; i < w.nr_nodes; i++)
			fprintf(stderr, "%s%u", i ? "," : " ", w.w[i]);
		fprintf(stderr, " (matrix: %s)\n", m->source);
	}
	/* bwapd tunes this pid; exec keeps it, and the pidfd bwapd opens */
	if (tune >= 0 && daemon_register(mo.state_dir, tune > 0, extra) < 0)
		return 1;
	free(t);
	free(m);
	execvp(argv[prog], argv + prog);
	cli_error("run", "cannot run '%s': %s", argv[prog], strerror(errno));
	return 127;
}
