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
#include <time.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "bwapctl.h"

static void help(FILE *f)
{
	fprintf(f, "Usage: bwapctl run --workers SET [OPTIONS] -- PROGRAM [ARGS...]\n\n"
		   "Runs PROGRAM with its threads pinned to the CPUs of the worker nodes SET\n"
		   "and with BWAP's canonical weights for SET as its own weighted-interleave\n"
		   "policy (set_mempolicy2; the global sysfs table is not touched).  The\n"
		   "policy and the CPU mask are inherited by the program's threads and\n"
		   "children.\n\n"
		   "On a kernel without the BWAP series (portable mode) the program starts\n"
		   "under uniform interleave (or, with --global, weighted interleave over the\n"
		   "global table set to the weights), and bwapctl stays as its parent to move\n"
		   "its pages to the exact weighted shares with move_pages(2), moving only\n"
		   "the pages above their node's share.  'bwapctl topology' says which\n"
		   "kernel this is.\n\n"
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
		   "  --phases FILE     the program writes each new phase's name as a line to\n"
		   "                    FILE (exported as BWAP_PHASE); with --phase-weights,\n"
		   "                    bwapd pushes that phase's weights at each change\n"
		   "  --phase-weights F 'NAME W0,W1,..' per phase, as 'bwapctl search --phases'\n"
		   "                    writes to STATE_DIR/search/phase-weights\n"
		   "  --global          portable mode: set the global weighted-interleave table\n"
		   "                    (saved; 'bwapctl weights --restore-sysfs' puts it back)\n"
		   "  --place-interval S  portable mode: place the pages every S seconds\n"
		   "                    (default 1; 0 = leave it to bwapd or 'bwapctl place')\n"
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

/*
 * Portable mode, for kernels without the BWAP series: the program starts
 * under uniform interleave over the weights' nodes (or, with --global,
 * mode 6 over the global table set to the weights), and this process
 * stays as its parent to place its pages at the exact weighted shares
 * with move_pages every interval seconds (0: never; bwapd or 'bwapctl
 * place' do it).  If bwapd tunes the program, bwapd places its pages and
 * this process only waits.  Returns the program's exit status.
 */
static int run_portable(const struct bwap_weights *w, char **prog, const char *state_dir, int global,
			double interval, int quiet, int tune, const char *extra, const char *source)
{
	int sync[2], status, registered = 0;
	char err[4500], flag;
	pid_t child;

	if (global && bwap_sysfs_weights_apply(w, state_dir, err, sizeof(err))) {
		cli_error("run", "--global: %s", err);
		return 1;
	}
	if (bwap_set_own_interleave(w->nodes, global)) {
		cli_error("run", "set_mempolicy(%s): %s", global ? "MPOL_WEIGHTED_INTERLEAVE" : "MPOL_INTERLEAVE",
			  strerror(errno));
		return 1;
	}
	if (!quiet)
		fprintf(stderr, "bwapctl run: kernel without the BWAP series: portable mode, %s, then pages "
			"placed with move_pages%s\n", global ? "weighted interleave over the global table" :
			"uniform interleave", interval > 0 ? " every interval" : " by bwapd or 'bwapctl place'");
	/* the child says 'r' if bwapd took it; the pipe closes at its exec */
	if (pipe2(sync, O_CLOEXEC)) {
		cli_error("run", "pipe: %s", strerror(errno));
		return 1;
	}
	child = fork();
	if (child < 0) {
		cli_error("run", "fork: %s", strerror(errno));
		return 1;
	}
	if (!child) {
		int r;

		close(sync[0]);
		r = tune >= 0 ? daemon_register(state_dir, tune > 0, extra) : 0;
		if (r < 0)
			_exit(1);
		if (r > 0 && write(sync[1], "r", 1) != 1)
			_exit(1);
		execvp(prog[0], prog);
		cli_error("run", "cannot run '%s': %s", prog[0], strerror(errno));
		_exit(127);
	}
	close(sync[1]);
	while (read(sync[0], &flag, 1) == 1)
		registered = flag == 'r';
	close(sync[0]);
	for (;;) {
		struct bwap_place_stats st;
		pid_t r;

		if (interval > 0 && !registered) {
			struct timespec ts = { (time_t)interval, (long)((interval - (time_t)interval) * 1e9) };

			nanosleep(&ts, NULL);
		}
		r = waitpid(child, &status, interval > 0 && !registered ? WNOHANG : 0);
		if (r == child)
			break;
		if (r < 0 && errno != EINTR) {
			cli_error("run", "waitpid: %s", strerror(errno));
			return 1;
		}
		if (r == 0 && !bwap_place_pages(child, w, 0, &st, err, sizeof(err)) && !quiet && st.minimum)
			fprintf(stderr, "bwapctl run: placed pid %d: %ld pages, moved %ld (minimum %ld), matrix %s\n",
				(int)child, st.pages, st.moved, st.minimum, source);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The phase file bwapd reads (bwapd(8), PHASES), empty, and BWAP_PHASE naming it. */
static int phase_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0) {
		cli_error("run", "--phases %s: %s", path, strerror(errno));
		return -1;
	}
	close(fd);
	return setenv("BWAP_PHASE", path, 1);
}

int cmd_run(int argc, char **argv)
{
	struct matrix_opts mo;
	struct bwap_topology *t = NULL;
	struct bwap_matrix *m = NULL;
	struct bwap_weights w;
	struct place_opts po;
	double interval = 1;
	enum bwap_kernel_mode mode;
	int global = 0, ret;
	int quiet = 0, pin = 1, prog = -1, tune = 0;
	char extra[512] = "";
	size_t nextra = 0;
	unsigned char cpus[BWAP_MAX_CPUS];
	char err[512], buf[256];

	matrix_opts_init(&mo);
	place_opts_init(&po, 0);
	static const struct option longopts[] = {
		CLI_PLACE_OPTIONS,
		{ "no-pin", no_argument, NULL, OPT_NO_PIN },
		{ "quiet", no_argument, NULL, OPT_QUIET },
		{ "tune", no_argument, NULL, OPT_TUNE },
		{ "no-tune", no_argument, NULL, OPT_NO_TUNE },
		{ "signal", required_argument, NULL, OPT_SIGNAL },
		{ "progress", required_argument, NULL, OPT_PROGRESS },
		{ "protect", required_argument, NULL, OPT_PROTECT },
		{ "phases", required_argument, NULL, OPT_PHASES },
		{ "phase-weights", required_argument, NULL, OPT_PHASE_WEIGHTS },
		{ "global", no_argument, NULL, OPT_GLOBAL },
		{ "place-interval", required_argument, NULL, OPT_PLACE_INTERVAL },
		CLI_MATRIX_OPTIONS,
		CLI_HELP_OPTION,
		{ 0 }
	};
	struct cli_parser p;
	int c, ok;

	/* '+': the program and its own options start at the first non-option */
	cli_parser_init(&p, "run", "+h", longopts);
	while ((c = cli_next(&p, argc, argv)) != -1) {
		if (matrix_opts_take(&mo, c, optarg))
			continue;
		ok = place_opts_take(&po, "run", c, optarg);
		if (ok < 0)
			return 2;
		if (ok)
			continue;
		switch (c) {
		case -2:
			return 2;
		case 'h':
			help(stdout);
			return 0;
		case OPT_NO_PIN:
			pin = 0;
			break;
		case OPT_GLOBAL:
			global = 1;
			break;
		case OPT_PLACE_INTERVAL:
			if (cli_parse_double("run", "--place-interval", optarg, 0, 3600, &interval))
				return 2;
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
		case OPT_PHASES:
		case OPT_PHASE_WEIGHTS:
		case OPT_PROTECT: {
			const char *key = c == OPT_SIGNAL ? "signal" : c == OPT_PROGRESS ? "progress" :
					  c == OPT_PHASES ? "phases" : c == OPT_PHASE_WEIGHTS ? "phase-weights" : "protect";

			if (strchr(optarg, ' ') || !*optarg) {
				cli_error("run", "--%s '%s': give a value without spaces", key, optarg);
				return 2;
			}
			nextra += snprintf(extra + nextra, sizeof(extra) - nextra, "%s%s %s",
					   nextra ? " " : "", key, optarg);
			if (c == OPT_PROGRESS && progress_file(optarg))
				return 1;
			if (c == OPT_PHASES && phase_file(optarg))
				return 1;
			break;
		}
		}
	}
	prog = optind;
	if (!po.workers) {
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
	if (po.workers & ~t->has_cpu) {
		cli_error("run", "worker nodes %s have no CPUs (nodes with CPUs: %s)",
			  bwap_nodeset_format(po.workers & ~t->has_cpu, buf, sizeof(buf)),
			  bwap_nodeset_format(t->has_cpu, err, sizeof(err)));
		return 1;
	}
	if (!po.have_nodes)
		po.nodes = t->has_memory;
	if (canonical_weights("run", m, po.workers, po.nodes, po.dwp, (int)po.max_weight, &w))
		return 1;
	if (pin) {
		if (!bwap_topology_cpus_of(t, po.workers, cpus)) {
			cli_error("run", "worker nodes %s have no CPUs to run on",
				  bwap_nodeset_format(po.workers, buf, sizeof(buf)));
			return 1;
		}
		if (bwap_pin_to_cpus(0, cpus)) {
			cli_error("run", "cannot pin to the CPUs of nodes %s: %s",
				  bwap_nodeset_format(po.workers, buf, sizeof(buf)), strerror(errno));
			return 1;
		}
	}
	mode = bwap_kernel_mode();
	if (global && mode != BWAP_KERNEL_STOCK_WI) {
		cli_error("run", "--global needs a stock kernel with weighted interleave (6.9+); this one is: %s",
			  bwap_kernel_mode_name(mode));
		return 2;
	}
	if (mode != BWAP_KERNEL_SERIES) {
		free(t);
		ret = run_portable(&w, argv + prog, mo.state_dir, global, interval, quiet, tune, extra, m->source);
		free(m);
		return ret;
	}
	if (bwap_set_own_weights(&w)) {
		cli_error("run", "set_mempolicy2 failed: %s", strerror(errno));
		return 1;
	}
	if (!quiet) {
		fprintf(stderr, "bwapctl run: workers %s, dwp %.3f, weights",
			bwap_nodeset_format(po.workers, buf, sizeof(buf)), po.dwp);
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
