// SPDX-License-Identifier: GPL-2.0
/*
 * bwapd: BWAP's online DWP tuner.  For every target process it searches
 * the data-to-worker proximity that minimises the target's stall signal
 * (tuner.c), and at each step pushes the weights for that DWP into the
 * kernel with process_mpol_reweight(pidfd, &args, sizeof(args),
 * MPOL_REWEIGHT_REBALANCE | MPOL_REWEIGHT_GLOBAL), which migrates the pages
 * to match (targets.c says why these flags).  On a kernel with the series'
 * parts 1-2 only (no rebalance) the push sets the weights with
 * MPOL_REWEIGHT_GLOBAL and then moves the pages with move_pages; without
 * process_mpol_reweight, portable mode places them with move_pages alone.
 *
 * One thread, one poll() loop: the control socket, its clients, a pidfd per
 * target (readable when the target exits), a self-pipe for SIGTERM/SIGINT,
 * and a timeout to the earliest sample due.  Every decision is logged on
 * stderr (the journal under systemd); each target's measurements also go
 * to STATE_DIR/search-PID.log for 'bwapctl report --search'.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "bwapd.h"
#include "../lib/mempolicy2.h"

static struct bwap_stall_event the_stall_event;	/* what bwapd.stall_event points to */
static int sig_pipe[2] = { -1, -1 };	/* the signal handler's self-pipe */

static void on_signal(int sig)
{
	unsigned char c = sig;

	if (write(sig_pipe[1], &c, 1) < 0)
		return;	/* the pipe is full: a stop is already pending */
}

/* ---- main ------------------------------------------------------------- */

static void usage(FILE *f)
{
	fprintf(f, "Usage: bwapd [OPTIONS]\n\n"
		   "BWAP's online tuner: for each target process, searches the data-to-worker\n"
		   "proximity (DWP) with the lowest stall rate and pushes the weights for each\n"
		   "step into the kernel (process_mpol_reweight with MPOL_REWEIGHT_REBALANCE and\n"
		   "MPOL_REWEIGHT_GLOBAL), which moves the pages; shared memory (shmem, memfd,\n"
		   "SysV) is left alone.  On a kernel with the series' parts 1-2 only (no kernel\n"
		   "rebalance) each push sets the weights with process_mpol_reweight and then\n"
		   "moves the pages itself with move_pages.  On a kernel without the BWAP series\n"
		   "(or with its part 1 only: no process_mpol_reweight) it places the pages\n"
		   "itself with move_pages, or, where the kernel has DAMON with weighted dests\n"
		   "and bwapd.conf says write_global_weights = yes, through the global table and\n"
		   "a DAMON scheme (bwapd(8), Backends).  Targets come from 'bwapctl run',\n"
		   "'bwapctl attach PID' and the optional cgroup; 'bwapctl status' shows them\n"
		   "and which backend places each.  Runs in the foreground; logs every decision\n"
		   "on stderr.\n\n"
		   "  -c, --config FILE     config file (default %s; missing is fine\n"
		   "                        unless given here)\n"
		   "  --state-dir DIR       socket, pid file, search logs (default %s)\n"
		   "  --matrix FILE         bandwidth matrix (default: STATE_DIR/matrix, else HMAT)\n"
		   "  --signal KIND         auto (perf, else model), perf, model, progress\n"
		   "  --set KEY=VALUE       any config key, after the file (repeatable)\n"
		   "  --check-config        check the config, print it, exit\n"
		   "  --ready-fd N          write \"ready\" to fd N and close it once the socket\n"
		   "                        listens (for scripts; no polling needed)\n"
		   "  -h, --help            this text\n"
		   "  --version             bwapd's version\n"
		   "  --list-signals        the stall events this CPU offers (libpfm4), and which\n"
		   "                        signal 'auto' takes and why\n\n"
		   "Config keys and the tuner's knobs are in bwapd(8) and bwapd.conf.\n",
		BWAPD_CONF, BWAP_STATE_DIR);
}

static int load_matrix(char *err, size_t errlen)
{
	char path[512];

	bwapd.topo = calloc(1, sizeof(*bwapd.topo));
	bwapd.matrix = calloc(1, sizeof(*bwapd.matrix));
	bwapd.machine = calloc(1, sizeof(*bwapd.machine));
	if (!bwapd.topo || !bwapd.matrix || !bwapd.machine) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (bwap_topology_read(bwapd.topo, getenv("BWAP_SYSFS_ROOT"), err, errlen))
		return -1;
	snprintf(path, sizeof(path), "%s/matrix", bwapd.conf.state_dir);
	if (bwapd.conf.matrix[0]) {
		if (bwap_matrix_load(bwapd.matrix, bwapd.conf.matrix, err, errlen))
			return -1;
	} else if (!access(path, R_OK)) {
		if (bwap_matrix_load(bwapd.matrix, path, err, errlen))
			return -1;
	} else if (bwap_matrix_from_hmat(bwapd.matrix, bwapd.topo, 1, err, errlen)) {
		return -1;
	}
	if (bwap_machine_from_matrix(bwapd.machine, bwapd.matrix, err, errlen)) {
		logmsg("the model cannot use this matrix (%s); only the perf and progress signals work", err);
		free(bwapd.machine);
		bwapd.machine = NULL;
	}
	return 0;
}

/*
 * The stall event for perf_event (or perf_raw_event); without one,
 * signal = auto falls back to MODELLED, and says so everywhere.
 * list: say what was tried.  0, or -1 if a named event cannot be had.
 */
static int resolve_stall_event(FILE *list)
{
	char err[512], why[256];

	bwapd.stall_event = NULL;
	bwapd.stall_fallback[0] = '\0';
	if (bwapd.conf.perf_raw) {
		memset(&the_stall_event, 0, sizeof(the_stall_event));
		snprintf(the_stall_event.name, sizeof(the_stall_event.name), "raw %#llx",
			 (unsigned long long)bwapd.conf.perf_raw);
		the_stall_event.type = 4;	/* PERF_TYPE_RAW */
		the_stall_event.config = bwapd.conf.perf_raw;
		bwapd.stall_event = &the_stall_event;
	} else if (bwap_stall_event_resolve(bwapd.conf.perf_event, &the_stall_event, list, err, sizeof(err))) {
		snprintf(bwapd.stall_fallback, sizeof(bwapd.stall_fallback), "%s", err);
		if (strcmp(bwapd.conf.perf_event, "auto"))
			return -1;
	} else {
		bwapd.stall_event = &the_stall_event;
	}
	if (bwapd.stall_event && bwap_perf_probe(getpid(), bwapd.stall_event, why, sizeof(why))) {
		snprintf(bwapd.stall_fallback, sizeof(bwapd.stall_fallback), "%s", why);
		bwapd.stall_event = NULL;
	}
	return 0;
}

/* bwapd --list-signals: what this machine offers and what signal = auto takes. */
static int list_signals(void)
{
	printf("stall event (perf_event = %s%s):\n", bwapd.conf.perf_event, bwapd.conf.perf_raw ? ", perf_raw_event set" : "");
	if (resolve_stall_event(stdout)) {
		fprintf(stderr, "bwapd: %s\n", bwapd.stall_fallback);
		return 2;
	}
	if (bwapd.stall_event)
		printf("perf_event_open(%s) on this process: works\n"
		       "signal = auto will use: perf, %s / cycles (MEASURED)\n", bwapd.stall_event->name, bwapd.stall_event->name);
	else
		printf("perf_event_open: not usable: %s\n"
		       "signal = auto will use: MODELLED (the placement model fed with each target's real page "
		       "counts), because %s\n", bwapd.stall_fallback, bwapd.stall_fallback);
	printf("other signals: model (MODELLED), progress (the target's own counter)\n");
	return 0;
}

/* What the command line asked for besides config keys. */
struct options {
	const char *conf_path;
	int conf_given, check_only, ready_fd, list_signals;
};

/*
 * The config file first (-c may come anywhere), then every option over
 * it in order.  Returns -1 to go on, else the exit status.
 */
static int parse_options(int argc, char **argv, struct options *o)
{
	enum { OPT_STATE_DIR = 256, OPT_MATRIX, OPT_SIGNAL, OPT_SET, OPT_CHECK, OPT_READY, OPT_VERSION,
	       OPT_LIST_SIGNALS };
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "state-dir", required_argument, NULL, OPT_STATE_DIR },
		{ "matrix", required_argument, NULL, OPT_MATRIX },
		{ "signal", required_argument, NULL, OPT_SIGNAL },
		{ "set", required_argument, NULL, OPT_SET },
		{ "check-config", no_argument, NULL, OPT_CHECK },
		{ "ready-fd", required_argument, NULL, OPT_READY },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, OPT_VERSION },
		{ "list-signals", no_argument, NULL, OPT_LIST_SIGNALS },
		{ 0 }
	};
	char err[1024];
	int c, idx, seen_state = 0, seen_matrix = 0, seen_signal = 0;

	memset(o, 0, sizeof(*o));
	o->conf_path = BWAPD_CONF;
	o->ready_fd = -1;
	opterr = 0;
	/* pass 1: help, version, the config file and errors in the options themselves */
	while ((c = getopt_long(argc, argv, ":c:h", longopts, &idx)) != -1) {
		int *seen = c == OPT_STATE_DIR ? &seen_state : c == OPT_MATRIX ? &seen_matrix :
			    c == OPT_SIGNAL ? &seen_signal : c == 'c' ? &o->conf_given : NULL;

		if (c == 'h') {
			usage(stdout);
			return 0;
		} else if (c == OPT_VERSION) {
			printf("bwapd %s\n", BWAP_VERSION);
			return 0;
		} else if (c == '?') {
			fprintf(stderr, "bwapd: unknown option '%s'; see 'bwapd --help'\n", argv[optind - 1]);
			return 2;
		} else if (c == ':') {
			fprintf(stderr, "bwapd: %s needs a value; see 'bwapd --help'\n", argv[optind - 1]);
			return 2;
		}
		if (seen && (*seen)++) {
			fprintf(stderr, "bwapd: --%s given twice; give it once\n", c == 'c' ? "config" : longopts[idx].name);
			return 2;
		}
		if (c == 'c')
			o->conf_path = optarg;
	}
	if (optind < argc) {
		fprintf(stderr, "bwapd: unexpected argument '%s'; see 'bwapd --help'\n", argv[optind]);
		return 2;
	}
	if (bwapd_conf_load(&bwapd.conf, o->conf_path, !o->conf_given, err, sizeof(err))) {
		fprintf(stderr, "bwapd: %s\n", err);
		return 2;
	}
	/* pass 2: options over the file, in order */
	optind = 1;
	while ((c = getopt_long(argc, argv, ":c:h", longopts, NULL)) != -1) {
		const char *key = c == OPT_STATE_DIR ? "state_dir" : c == OPT_MATRIX ? "matrix" :
				  c == OPT_SIGNAL ? "signal" : NULL;
		char *end;

		if (key && bwapd_conf_set(&bwapd.conf, key, optarg, err, sizeof(err))) {
			fprintf(stderr, "bwapd: --%s: %s\n", c == OPT_STATE_DIR ? "state-dir" : key, err);
			return 2;
		} else if (c == OPT_CHECK) {
			o->check_only = 1;
		} else if (c == OPT_LIST_SIGNALS) {
			o->list_signals = 1;
		} else if (c == OPT_READY) {
			long fd;

			errno = 0;
			fd = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || fd < 0 || fd > INT_MAX || fcntl((int)fd, F_GETFD) < 0) {
				fprintf(stderr, "bwapd: --ready-fd '%s' is not an open file descriptor\n", optarg);
				return 2;
			}
			o->ready_fd = (int)fd;
		} else if (c == OPT_SET) {
			char kv[512], *eq = strchr(optarg, '=');

			if (!eq || eq == optarg) {
				fprintf(stderr, "bwapd: --set needs KEY=VALUE, e.g. --set samples=10\n");
				return 2;
			}
			snprintf(kv, sizeof(kv), "%s", optarg);
			kv[eq - optarg] = '\0';
			if (bwapd_conf_set(&bwapd.conf, kv, kv + (eq - optarg) + 1, err, sizeof(err))) {
				fprintf(stderr, "bwapd: --set %s: %s\n", optarg, err);
				return 2;
			}
		}
	}
	if (bwapd_conf_check(&bwapd.conf, err, sizeof(err))) {
		fprintf(stderr, "bwapd: bad config: %s\n", err);
		return 2;
	}
	if (o->check_only) {
		bwapd_conf_print(&bwapd.conf, stdout);
		return 0;
	}
	if (o->list_signals)
		return list_signals();
	return -1;
}

/*
 * Descriptors: each client, waiter and target holds some (a pidfd, a
 * perf signal two per thread, up to BWAP_SIGNAL_MAX_THREADS threads), so
 * take the hard limit the service manager gives (LimitNOFILE in the
 * unit) rather than the soft 1024 default.
 */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl))
			logmsg("cannot raise the descriptor limit to %llu: %s", (unsigned long long)rl.rlim_max,
			       strerror(errno));
	}
}

/* The kernel, the state dir, the matrix and the socket; 0 or the exit status. */
static int start_up(void)
{
	char err[1024];

	/* first: a start that fails below must not leave a killed bwapd's kdamond and table */
	damon_backend_clean_left();
	if (resolve_stall_event(NULL)) {
		fprintf(stderr, "bwapd: %s\n", bwapd.stall_fallback);
		return 2;
	}
	/* Without the series every push is a user-space placement with move_pages. */
	bwapd.portable_mode = bwap_kernel_mode() != BWAP_KERNEL_SERIES;
	/* Parts 1-2 of the series: the weights go to the kernel, the pages move from user space. */
	bwapd.user_moves = !bwapd.portable_mode && bwap_kernel_rebalance() != BWAP_REBALANCE_KERNEL;
	/* portable mode places default and interleave memory too, so it counts them */
	bwap_pagedist_portable(bwapd.portable_mode);
	/* nothing the loop opens needs them; the worker raises its own where it must (worker.c) */
	bwapd_drop_dac();
	raise_fd_limit();
	if (bwap_state_mkdir(bwapd.conf.state_dir, err, sizeof(err)) || load_matrix(err, sizeof(err)) ||
	    open_socket(err, sizeof(err)) || worker_start(err, sizeof(err))) {
		fprintf(stderr, "bwapd: %s\n", err);
		return 1;
	}
	if (bwapd.portable_mode)
		damon_backend_probe();
	if (!bwapd.machine && bwapd.conf.signal == BWAP_SIGNAL_MODEL) {
		fprintf(stderr, "bwapd: signal = model, but the matrix cannot feed the model (see above)\n");
		return 1;
	}
	return 0;
}

/* SIGTERM, SIGINT and SIGHUP end the loop through a self-pipe; returns its read end or -1. */
static int catch_signals(void)
{
	struct sigaction sa;

	/* a self-pipe, not signalfd: small kernels (the test guests) lack CONFIG_SIGNALFD */
	if (pipe2(sig_pipe, O_CLOEXEC | O_NONBLOCK)) {
		fprintf(stderr, "bwapd: pipe: %s\n", strerror(errno));
		return -1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return sig_pipe[0];
}

/* Log what bwapd runs with, take the cgroup's processes, then say "ready". */
static void announce(int ready_fd, double *next_scan)
{
	char perr[256];

	logmsg("pid %d listening on %s; matrix: %s; tuner: step %g, n=%d x t=%g s, trim c=%d, drift %g",
	       getpid(), control_path(), bwapd.matrix->source, bwapd.conf.tuner.step, bwapd.conf.tuner.samples,
	       bwapd.conf.tuner.interval, bwapd.conf.tuner.trim, bwapd.conf.tuner.drift);
	logmsg("kernel: %s; %s", bwap_kernel_mode_name(bwap_kernel_mode()), bwapd.portable_mode ?
	       "portable mode: each push places the target's pages with move_pages (the minimum moves)" :
	       bwapd.user_moves ? "pushes set the weights with process_mpol_reweight (MPOL_REWEIGHT_GLOBAL, "
				  "no MPOL_REWEIGHT_REBALANCE), then move the pages with move_pages (the minimum moves)" :
	       "pushes with process_mpol_reweight");
	(void)perr;
	if (bwapd.portable_mode)
		logmsg("%s", bwapd.damon_why);
	if (bwapd.stall_event)
		logmsg("stall signal: %s%s%s (MEASURED)", bwapd.stall_event->name, bwapd.stall_event->pmu[0] ? " on PMU " : "",
		       bwapd.stall_event->pmu);
	else
		logmsg("WARNING: FALLBACK TO MODELLED: no usable stall counter: %s; signal = auto targets use the "
		       "MODELLED signal (placement model fed with their real page counts); 'bwapd --list-signals' "
		       "says what this machine offers", bwapd.stall_fallback);
	/* what the last bwapd tuned, then the cgroup's processes, before anyone is told we are ready */
	targets_adopt();
	if (bwapd.conf.cgroup[0]) {
		scan_cgroup();
		*next_scan = now() + bwapd.conf.cgroup_scan;
	}
	if (ready_fd >= 0) {
		send_reply(ready_fd, "ready\n", 6);
		close(ready_fd);
	}
}

/*
 * The poll loop: signals, the listening socket, its clients, exited
 * targets, samples due.  Nothing in it waits on one client.
 */
/* Seconds of sampling before bwapd looks at its clients again. */
#define SAMPLE_SLICE 0.02

static int serve(int sfd, double next_scan)
{
	struct pollfd *pf = NULL;
	struct target **pft = NULL;
	int cap = 0, next_sample = 0;

	for (;;) {
		double tnow = now(), due = tnow + 3600, paused;
		int nfds = 0, timeout, nc = nr_clients(), first_target;
		struct target *t;

		/* the cgroup's processes and followed targets' descendants, every cgroup_scan s */
		if (tnow >= next_scan) {
			if (bwapd.conf.cgroup[0])
				scan_cgroup();
			follow_children();
			next_scan = tnow + bwapd.conf.cgroup_scan;
		}
		due = fmin(due, next_scan);
		if (cap < 3 + nc + bwapd.nr_slots) {
			cap = 3 + nc + bwapd.nr_slots + 64;
			free(pf);
			free(pft);
			pf = calloc(cap, sizeof(*pf));
			pft = calloc(cap, sizeof(*pft));
			if (!pf || !pft) {
				logmsg("out of memory for %d poll entries", cap);
				return 1;
			}
		}
		pf[nfds].fd = sfd;
		pf[nfds++].events = POLLIN;
		/* after EMFILE the listening socket rests (fd -1: poll skips it) */
		pf[nfds].fd = accept_paused(&paused) ? -1 : control_fd();
		pf[nfds++].events = POLLIN;
		if (pf[1].fd < 0)
			due = fmin(due, paused);
		pf[nfds].fd = worker_fd();
		pf[nfds++].events = POLLIN;
		due = fmin(due, expire_waiters(tnow));
		due = fmin(due, clients_poll_setup(pf + nfds));
		nfds += nc;
		first_target = nfds;
		for_each_target(t, i) {
			due = fmin(due, t->next);
			pft[nfds] = t;
			pf[nfds].fd = t->pidfd;
			pf[nfds++].events = POLLIN;
		}
		timeout = due <= tnow ? 0 : (int)ceil((due - tnow) * 1000);
		if (poll(pf, nfds, timeout) < 0 && errno != EINTR) {
			logmsg("poll: %s", strerror(errno));
			return 1;
		}
		if (pf[0].revents) {
			unsigned char sig = 0;

			if (read(sfd, &sig, 1) == 1)
				logmsg("signal %d: shutting down", sig);
			free(pf);
			free(pft);
			return 0;
		}
		for (int i = first_target; i < nfds; i++)
			if (pf[i].revents && pft[i]->used && pft[i]->pidfd == pf[i].fd)
				drop_target(pft[i], "exited");
		/* pushes the worker finished: their counts, logs and waiters */
		if (pf[2].revents) {
			struct push_job *j = worker_reap();

			while (j) {
				struct push_job *next = j->next;

				push_done(j);
				j = next;
			}
		}
		tnow = now();
		clients_poll_done(pf + 3, tnow);
		if (pf[1].fd >= 0 && (pf[1].revents & POLLIN))
			accept_clients();
		targets_save();
		/*
		 * The samples due, for at most SAMPLE_SLICE seconds: with a
		 * node's worth of targets (each sample may read numa_maps) the
		 * rest wait for the next turn, after the clients are served, so
		 * that a task's registration or a step's detach never waits for
		 * a whole round.  next_sample keeps the order fair across turns.
		 */
		tnow = now();
		for (int k = 0; k < bwapd.nr_slots; k++) {
			int i = (next_sample + k) % bwapd.nr_slots;

			t = bwapd.targets[i];
			if (t->used && t->next <= tnow)
				sample_target(t, tnow);
			if (now() - tnow > SAMPLE_SLICE) {
				next_sample = i + 1;
				break;
			}
		}
	}
}

int main(int argc, char **argv)
{
	struct options o;
	double next_scan = 0;
	int rc, sfd;

	bwapd.t_start = now();
	setvbuf(stderr, NULL, _IOLBF, 0);
	bwapd_conf_defaults(&bwapd.conf);
	rc = parse_options(argc, argv, &o);
	if (rc >= 0)
		return rc;
	rc = start_up();
	if (!rc && (sfd = catch_signals()) < 0)
		rc = 1;
	if (!rc) {
		announce(o.ready_fd, &next_scan);
		rc = serve(sfd, next_scan);
		struct target *t;

		worker_stop();

		for_each_target(t, i)
			drop_target(t, "bwapd is stopping (weights stay as last pushed)");
	}
	close_socket();
	logmsg("stopped, cpu %.3f s over %.1f s", cpu_seconds(), now() - bwapd.t_start);
	return rc;
}
