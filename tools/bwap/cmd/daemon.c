// SPDX-License-Identifier: GPL-2.0
/*
 * bwapctl attach, detach and status: requests to bwapd over its control
 * socket (ctl.c), plus run's registration of the program it starts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "bwapctl.h"

/* Print a reply's body; 0 if it said ok. */
static int show_reply(const char *subcmd, char *reply)
{
	char *body = strchr(reply, '\n');

	body = body ? body + 1 : reply + strlen(reply);
	if (strncmp(reply, "ok\n", 3)) {
		reply[strcspn(reply, "\n")] = '\0';
		cli_error(subcmd, "bwapd says: %s", !strncmp(reply, "error: ", 7) ? reply + 7 : reply);
		return 1;
	}
	fputs(body, stdout);
	return 0;
}

/*
 * The request words "KEY PATH" for the files bwapd reads (progress,
 * phases, phase-weights) become "KEY fd", and the file, opened here with
 * this user's rights, goes with the request: bwapd opens no path a client
 * names.  extra is " KEY VALUE ..."; the rewritten words go to out, the
 * descriptors after the nfds already in fds.  0, or -1 after saying why.
 */
static int pass_files(const char *subcmd, const char *extra, char *out, size_t outlen, int *fds, int *nfds)
{
	char key[32], val[512];
	size_t n = 0;
	int pos = 0, used;

	out[0] = '\0';
	while (sscanf(extra + pos, " %31s %511s%n", key, val, &used) == 2) {
		pos += used;
		if (!strcmp(key, "progress") || !strcmp(key, "phases") || !strcmp(key, "phase-weights")) {
			int fd = open(val, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

			if (fd < 0) {
				cli_error(subcmd, "--%s %s: %s", key, val, strerror(errno));
				return -1;
			}
			if (*nfds >= BWAP_CTL_MAX_FDS) {
				close(fd);
				cli_error(subcmd, "too many files for one request");
				return -1;
			}
			fds[(*nfds)++] = fd;
			snprintf(val, sizeof(val), "fd");
		}
		n += snprintf(out + n, outlen - n, " %s %s", key, val);
		if (n >= outlen) {
			cli_error(subcmd, "the request is too long");
			return -1;
		}
	}
	return 0;
}

static void close_fds(const int *fds, int nfds)
{
	for (int i = 0; i < nfds; i++)
		close(fds[i]);
}

static int request_fds(const char *subcmd, const char *state_dir, const char *req, const int *fds, int nfds,
		       int timeout_ms)
{
	char err[1024], *reply = bwap_ctl_request_fds(state_dir, req, fds, nfds, timeout_ms, err, sizeof(err));
	int rc;

	if (!reply) {
		cli_error(subcmd, "%s", err);
		return 1;
	}
	rc = show_reply(subcmd, reply);
	free(reply);
	return rc;
}

/*
 * PID as a pidfd (in fds[0]) and the word "fd" for the request, so that
 * bwapd acts on this very process, whatever PID namespace this client
 * runs in; the number itself if PID is gone (bwapd then says so).
 */
static void pid_word(long pid, char *word, size_t len, int *fds, int *nfds)
{
	int fd = (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);

	if (fd >= 0) {
		fds[(*nfds)++] = fd;
		snprintf(word, len, "fd");
	} else {
		snprintf(word, len, "%ld", pid);
	}
}

static int request_timeout(const char *subcmd, const char *state_dir, const char *req, int timeout_ms)
{
	return request_fds(subcmd, state_dir, req, NULL, 0, timeout_ms);
}

static int request(const char *subcmd, const char *state_dir, const char *req)
{
	return request_timeout(subcmd, state_dir, req, 30000);
}

int daemon_register(const char *state_dir, int required, const char *extra)
{
	char req[1024], err[1024], *reply;

	char words[600];
	int fds[BWAP_CTL_MAX_FDS], nfds = 0;

	if (pass_files("run", extra, words, sizeof(words), fds, &nfds)) {
		close_fds(fds, nfds);
		return required ? -1 : 0;
	}
	/* this process registers itself, before its exec: bwapd checks that against SO_PEERCRED */
	snprintf(req, sizeof(req), "attach %d how run%s", getpid(), words);
	reply = bwap_ctl_request_fds(state_dir, req, fds, nfds, 30000, err, sizeof(err));
	close_fds(fds, nfds);
	if (!reply) {
		/* no daemon is fine, unless --tune asked for one */
		if (required)
			cli_error("run", "--tune: %s", err);
		return required ? -1 : 0;
	}
	if (strncmp(reply, "ok\n", 3)) {
		reply[strcspn(reply, "\n")] = '\0';
		cli_error("run", "bwapd did not take the program: %s", reply);
		free(reply);
		return required ? -1 : 0;
	}
	fprintf(stderr, "bwapctl run: %s", reply + 3);
	free(reply);
	return 1;
}

static void attach_help(FILE *f)
{
	fprintf(f, "Usage: bwapctl attach PID [OPTIONS]\n\n"
		   "Asks bwapd to tune process PID: it searches the DWP with the lowest stall\n"
		   "rate and pushes each step's weights with process_mpol_reweight.  The\n"
		   "worker nodes come from PID's CPU affinity; the search starts from the\n"
		   "canonical weights for them.  Only weighted-interleave memory moves: start\n"
		   "the program with 'bwapctl run' (or numactl -w: a policy on the global\n"
		   "weights takes bwapd's weights too) so that it has such a policy.  Shared\n"
		   "memory (shmem, memfd, SysV) keeps its policy and pages.\n\n"
		   "  --workers SET     worker nodes instead of the affinity's\n"
		   "  --signal KIND     auto (perf counters, else the MODELLED signal), perf,\n"
		   "                    model, progress\n"
		   "  --progress FILE   the target counts its work in FILE (see bwapd(8))\n"
		   "  --protect PID2    co-scheduled mode: first find the lowest DWP that is\n"
		   "                    best for PID2, then tune PID at or above it\n"
		   "  --state-dir DIR   bwapd's state directory (default %s)\n"
		   "  -h, --help        this text\n", BWAP_STATE_DIR);
}

/* A PID operand: a whole number from 1 up; -1 after printing why not. */
static int parse_pid(const char *subcmd, const char *what, const char *text, long *pid)
{
	return cli_parse_long(subcmd, what, text, 1, 4194304, pid);
}

int cmd_attach(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "workers", required_argument, NULL, OPT_WORKERS },
		{ "signal", required_argument, NULL, OPT_SIGNAL },
		{ "progress", required_argument, NULL, OPT_PROGRESS },
		{ "protect", required_argument, NULL, OPT_PROTECT },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		CLI_HELP_OPTION,
		{ 0 }
	};
	const char *state_dir = BWAP_STATE_DIR;
	struct cli_parser p;
	char req[1024], extra[900] = "";
	size_t n = 0;
	long pid = 0;
	int c;

	cli_parser_init(&p, "attach", "h", longopts);
	while ((c = cli_next(&p, argc, argv)) != -1) {
		const char *key = c == OPT_WORKERS ? "workers" : c == OPT_SIGNAL ? "signal" :
				  c == OPT_PROGRESS ? "progress" : c == OPT_PROTECT ? "protect" : NULL;

		if (c == -2)
			return 2;
		if (c == 'h') {
			attach_help(stdout);
			return 0;
		}
		if (c == OPT_STATE_DIR) {
			state_dir = optarg;
			continue;
		}
		if (strchr(optarg, ' ') || !*optarg) {
			cli_error("attach", "--%s '%s': give a value without spaces", key, optarg);
			return 2;
		}
		n += snprintf(extra + n, sizeof(extra) - n, " %s %s", key, optarg);
	}
	if (optind != argc - 1) {
		cli_error("attach", optind >= argc ? "give the PID of the process to tune, e.g. bwapctl attach 1234" :
			  "give one PID; see 'bwapctl attach --help'");
		return 2;
	}
	if (parse_pid("attach", "PID", argv[optind], &pid))
		return 2;
	{
		char words[900], pw[32];
		int fds[BWAP_CTL_MAX_FDS], nfds = 0, rc;

		pid_word(pid, pw, sizeof(pw), fds, &nfds);
		if (pass_files("attach", extra, words, sizeof(words), fds, &nfds)) {
			close_fds(fds, nfds);
			return 1;
		}
		snprintf(req, sizeof(req), "attach %s%s", pw, words);
		rc = request_fds("attach", state_dir, req, fds, nfds, 30000);
		close_fds(fds, nfds);
		return rc;
	}
}

int cmd_detach(int argc, char **argv)
{
	const char *state_dir = BWAP_STATE_DIR;
	char req[64];
	long pid = 0;

	static const struct option longopts[] = {
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		CLI_HELP_OPTION,
		{ 0 }
	};
	struct cli_parser p;
	int c;

	cli_parser_init(&p, "detach", "h", longopts);
	while ((c = cli_next(&p, argc, argv)) != -1) {
		if (c == -2)
			return 2;
		if (c == 'h') {
			printf("Usage: bwapctl detach PID [--state-dir DIR]\n\n"
			       "bwapd stops tuning PID; its weights stay as last pushed.\n");
			return 0;
		}
		state_dir = optarg;
	}
	if (optind != argc - 1) {
		cli_error("detach", "give one PID, e.g. bwapctl detach 1234");
		return 2;
	}
	if (parse_pid("detach", "PID", argv[optind], &pid))
		return 2;
	if (pid <= 0) {
		cli_error("detach", "give the PID to stop tuning");
		return 2;
	}
	{
		char pw[32];
		int fds[1], nfds = 0, rc;

		pid_word(pid, pw, sizeof(pw), fds, &nfds);
		snprintf(req, sizeof(req), "detach %s", pw);
		rc = request_fds("detach", state_dir, req, fds, nfds, 30000);
		close_fds(fds, nfds);
		return rc;
	}
}

/* utime + stime of pid in seconds, from /proc/PID/stat; -1 if gone. */
static double proc_cpu(long pid)
{
	struct bwap_proc_stat st;

	return bwap_proc_stat((pid_t)pid, &st) ? -1 : st.cpu_seconds;
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void status_help(FILE *f)
{
	fprintf(f, "Usage: bwapctl status [--json] [--wait PID [--pushes N] [--timeout S]] [--cpu-window S]\n"
		   "                      [--state-dir DIR]\n\n"
		   "Shows what bwapd tunes: per target its state (searching, settled), DWP,\n"
		   "weights, the backend that places its pages and why (process_mpol_reweight,\n"
		   "damon or move_pages), and per node the pages it should hold for those\n"
		   "weights (largest-remainder shares, as the kernel's rebalance computes them;\n"
		   "with damon, the layout DAMON's weighted dests give) against the pages it\n"
		   "holds now (/proc/PID/numa_maps).  A signal marked MODELLED comes from the\n"
		   "placement model, not from hardware counters.\n\n"
		   "  --json              machine-readable\n"
		   "  --wait PID          first wait until bwapd's search for PID converges (or\n"
		   "                      PID exits), print that, then the status\n"
		   "  --pushes N          with --wait: wait only until bwapd has pushed weights\n"
		   "                      for PID N times (1 = the start) and they are placed\n"
		   "  --timeout S         give up waiting after S seconds (default 300)\n"
		   "  --cpu-window S      also measure bwapd's CPU use over S seconds\n"
		   "                      (/proc/BWAPD/stat), as a percentage of one core\n"
		   "  --state-dir DIR     bwapd's state directory (default %s)\n"
		   "  -h, --help          this text\n", BWAP_STATE_DIR);
}

int cmd_status(int argc, char **argv)
{
	const char *state_dir = BWAP_STATE_DIR;
	double window = 0, timeout = 300;
	long wait_pid = 0, wait_pushes = 0;
	int json = 0, rc;

	static const struct option longopts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "wait", required_argument, NULL, OPT_WAIT },
		{ "pushes", required_argument, NULL, OPT_PUSHES },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "cpu-window", required_argument, NULL, OPT_CPU_WINDOW },
		CLI_HELP_OPTION,
		{ 0 }
	};
	struct cli_parser p;
	int c;

	cli_parser_init(&p, "status", "h", longopts);
	while ((c = cli_next(&p, argc, argv)) != -1) {
		switch (c) {
		case -2:
			return 2;
		case 'h':
			status_help(stdout);
			return 0;
		case OPT_JSON:
			json = 1;
			break;
		case OPT_STATE_DIR:
			state_dir = optarg;
			break;
		case OPT_WAIT:
			if (parse_pid("status", "--wait", optarg, &wait_pid))
				return 2;
			break;
		case OPT_PUSHES:
			if (cli_parse_long("status", "--pushes", optarg, 1, 1000000, &wait_pushes))
				return 2;
			break;
		case OPT_TIMEOUT:
			if (cli_parse_double("status", "--timeout", optarg, 1, 86400, &timeout))
				return 2;
			break;
		case OPT_CPU_WINDOW:
			if (cli_parse_double("status", "--cpu-window", optarg, 0.1, 3600, &window))
				return 2;
			break;
		}
	}
	if (optind < argc) {
		cli_error("status", "unexpected argument '%s'; see 'bwapctl status --help'", argv[optind]);
		return 2;
	}
	if (wait_pushes && !wait_pid) {
		cli_error("status", "--pushes needs --wait PID");
		return 2;
	}
	if (wait_pid) {
		char req[64];

		char pw[32];
		int fds[1], nfds = 0;

		pid_word(wait_pid, pw, sizeof(pw), fds, &nfds);
		snprintf(req, sizeof(req), "wait %s pushes %ld", pw, wait_pushes);
		rc = request_fds("status", state_dir, req, fds, nfds, (int)(timeout * 1000));
		close_fds(fds, nfds);
		if (rc)
			return 1;
	}
	if (window > 0) {
		char err[1024], *reply = bwap_ctl_request(state_dir, "status json", err, sizeof(err)), *p;
		long dpid = reply && (p = strstr(reply, "\"pid\": ")) ? atol(p + 7) : 0;
		double c0, c1, t0, t1;
		struct timespec ts = { (time_t)window, (long)((window - (time_t)window) * 1e9) };

		free(reply);
		if (dpid <= 0) {
			cli_error("status", "%s", reply ? "bwapd did not say its pid" : err);
			return 1;
		}
		c0 = proc_cpu(dpid);
		t0 = mono();
		/* a measurement window, not synchronisation */
		nanosleep(&ts, NULL);
		c1 = proc_cpu(dpid);
		t1 = mono();
		if (c0 < 0 || c1 < 0) {
			cli_error("status", "cannot read /proc/%ld/stat (bwapd exited?)", dpid);
			return 1;
		}
		printf("bwapd pid %ld CPU use over %.2f s: %.3f s = %.2f%% of one core\n", dpid, t1 - t0,
		       c1 - c0, 100 * (c1 - c0) / (t1 - t0));
	}
	rc = request("status", state_dir, json ? "status json" : "status");
	return rc;
}
