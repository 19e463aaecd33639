// SPDX-License-Identifier: GPL-2.0
/*
 * bwap-slurm-probe: the task scripts/test-slurm starts with srun and
 * sbatch.  It reads back the task policy bwap.so gave it (mode, nodes,
 * and the weights: its own through get_mempolicy2 on a BWAP kernel, the
 * global table under mode 6), faults a buffer of base pages
 * (MADV_NOHUGEPAGE: exact per page even where THP is "always"), counts
 * them per node with move_pages and prints one line:
 *   probe host=H task=T pid=P cpus=C workers=NODES mode=M weights=0:5,1:3
 *         read=HOW pages=N counts=0:500,1:300 check=PASS|FAIL|portable|none
 *         [expected=0:500,1:300]
 * check compares the counts with the largest-remainder shares of the
 * policy's weights (N is a multiple of their sum, so where in the
 * interleave cycle the buffer starts does not matter); under plain
 * interleave (portable mode) bwapd moves the pages, so check waits for a
 * command, or with --self-check asks bwapd itself: it waits for a push
 * of bwapd's after the buffer was faulted ("wait PID pushes N+1", N the
 * pushes so far), takes the DWP and weights bwapd pushed from the reply,
 * counts the buffer again and prints
 *   selfcheck pid=P dwp=D weights=W0,W1,... check=PASS|FAIL counts=...
 *             expected=... maxdiff=PAGES
 * (so that every task of a 128-task job, or of a batch or salloc step,
 * is checked page by page without a round trip to the test).
 * With --hold it then answers lines on stdin (srun --input=all
 * gives every task the same lines):
 *   check PID W0,W1,...  the task PID: are its pages exactly the shares of these weights?
 *   quit                 exit 0 (as does the end of stdin)
 * Static, with libbwap (page counts, largest-remainder shares).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../lib/bwap.h"

#define MAX_NODES BWAP_MAX_NODES
#define MODE_WEIGHTED_INTERLEAVE 6

static char *buf;
static const char *state_dir = BWAP_STATE_DIR;
static long npages, psz;
static int nr_nodes;

/* The buffer's pages per node, each asked with move_pages (libbwap). */
static int count(long *per_node)
{
	struct bwap_page_census c;
	char err[256];

	if (bwap_count_pages(buf, npages * psz, &c, err, sizeof(err))) {
		fprintf(stderr, "bwap-slurm-probe: %s\n", err);
		return -1;
	}
	memcpy(per_node, c.pages, MAX_NODES * sizeof(*per_node));
	if (c.nr_nodes > nr_nodes)
		nr_nodes = c.nr_nodes;
	return 0;
}

/* "PASS" or "FAIL" for counts against the shares of w; per node into text. */
static const char *check(const int *w, const long *per, char *text, size_t len)
{
	unsigned char wb[MAX_NODES];
	long t[MAX_NODES];
	int ok = 1;
	size_t n = 0;

	for (int i = 0; i < MAX_NODES; i++)
		wb[i] = w[i];
	/* largest remainder, ties to more pages now, then the lower id: the kernel's and bwapd's rule */
	bwap_largest_remainder(npages, wb, per, MAX_NODES, t);
	text[0] = '\0';
	for (int i = 0; i < MAX_NODES; i++) {
		ok &= per[i] == t[i];
		if ((t[i] || per[i]) && n < len)
			n += snprintf(text + n, len - n, "%s%d:%ld", n ? "," : "", i, t[i]);
	}
	return ok ? "PASS" : "FAIL";
}

static void counts_text(const long *per, char *text, size_t len)
{
	size_t n = 0;

	text[0] = '\0';
	for (int i = 0; i < MAX_NODES && n < len; i++)
		if (per[i])
			n += snprintf(text + n, len - n, "%s%d:%ld", n ? "," : "", i, per[i]);
	if (!n)
		snprintf(text, len, "-");
}

/* The global table's weight of node, for mode 6 without own weights. */
static int global_weight(int node)
{
	char path[96];
	int v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/mm/mempolicy/weighted_interleave/node%d", node);
	f = fopen(path, "r");
	if (!f || fscanf(f, "%d", &v) != 1)
		v = 1;
	if (f)
		fclose(f);
	return v;
}

/* The task policy: mode, and its weights per node (0 off the nodemask). */
static int read_policy(int *mode, int *w, char *how, size_t len)
{
	unsigned long mask[(MAX_NODES + 1 + 63) / 64 + 1] = { 0 };
	unsigned char own[MAX_NODES + 1] = { 0 };
	struct mpol_args args;

	memset(w, 0, MAX_NODES * sizeof(*w));
	memset(&args, 0, sizeof(args));
	args.pol_maxnodes = MAX_NODES + 1;
	args.pol_nodes = (uintptr_t)mask;
	args.il_weights = (uintptr_t)own;
	if (!syscall(__NR_get_mempolicy2, &args, sizeof(args), 0UL, 0)) {
		*mode = args.mode;
		for (int i = 0; i < MAX_NODES; i++)
			if (mask[0] >> i & 1)
				w[i] = *mode == MODE_WEIGHTED_INTERLEAVE ? own[i] : 1;
		snprintf(how, len, "get_mempolicy2");
		return 0;
	}
	if (syscall(SYS_get_mempolicy, mode, mask, (unsigned long)MAX_NODES + 1, NULL, 0UL))
		return -1;
	for (int i = 0; i < MAX_NODES; i++)
		if (mask[0] >> i & 1)
			w[i] = *mode == MODE_WEIGHTED_INTERLEAVE ? global_weight(i) : 1;
	snprintf(how, len, *mode == MODE_WEIGHTED_INTERLEAVE ? "get_mempolicy+sysfs" : "get_mempolicy");
	return 0;
}

static const char *mode_name(int mode)
{
	static const char *const names[] = { "default", "preferred", "bind", "interleave", "local",
					     "preferred-many", "weighted-interleave" };

	return mode >= 0 && mode <= 6 ? names[mode] : "other";
}

/* --self-check: after bwapd's second push, the buffer at the shares of what it pushed. */
static int self_check(void)
{
	char req[64], err[512], *reply, *p, etext[512], ctext[512], wtext[512];
	int w[MAX_NODES] = { 0 }, nw = 0;
	long per[MAX_NODES], maxdiff = 0, t[MAX_NODES];
	unsigned char wb[MAX_NODES] = { 0 };
	double dwp = -1;

	/*
	 * A push after the buffer was faulted: under load the exec and the
	 * faults can come after bwapd's second push, whose reply would then
	 * describe pages placed before the buffer existed.  So: how many
	 * pushes so far (at least the start), then wait for one more.
	 */
	snprintf(req, sizeof(req), "wait %d pushes 1", (int)getpid());
	reply = bwap_ctl_request_timeout(state_dir, req, 600000, err, sizeof(err));
	if (reply && (p = strstr(reply, " pushes ")) && atol(p + 8) > 0) {
		snprintf(req, sizeof(req), "wait %d pushes %ld", (int)getpid(), atol(p + 8) + 1);
		free(reply);
		reply = bwap_ctl_request_timeout(state_dir, req, 600000, err, sizeof(err));
	}
	if (!reply || strncmp(reply, "ok\npushed pid ", 14) || !(p = strstr(reply, " weights "))) {
		printf("selfcheck pid=%d check=FAIL why=%s\n", (int)getpid(), reply ? "unexpected-reply" : "no-bwapd");
		fprintf(stderr, "bwap-slurm-probe: wait for bwapd's push: %s\n", reply ? reply : err);
		free(reply);
		return 1;
	}
	sscanf(strstr(reply, " dwp "), " dwp %lf", &dwp);
	p += strlen(" weights ");
	snprintf(wtext, sizeof(wtext), "%.*s", (int)strcspn(p, "\n"), p);
	while (*p && *p != '\n' && nw < MAX_NODES) {
		w[nw++] = strtol(p, &p, 10);
		if (*p != ',')
			break;
		p++;
	}
	free(reply);
	if (count(per))
		return 1;
	for (int i = 0; i < MAX_NODES; i++)
		wb[i] = w[i];
	bwap_largest_remainder(npages, wb, per, MAX_NODES, t);
	for (int i = 0; i < MAX_NODES; i++)
		if (labs(per[i] - t[i]) > maxdiff)
			maxdiff = labs(per[i] - t[i]);
	counts_text(per, ctext, sizeof(ctext));
	printf("selfcheck pid=%d dwp=%.3f weights=%s check=%s counts=%s", (int)getpid(), dwp, wtext,
	       check(w, per, etext, sizeof(etext)), ctext);
	printf(" expected=%s maxdiff=%ld\n", etext, maxdiff);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	int hold = 0, self = 0, mode, w[MAX_NODES];
	long want = 1000, per[MAX_NODES], sum = 0;
	char how[64], wtext[512], ctext[512], etext[512], cpus[256], workers[256], line[512];
	const char *task = getenv("SLURM_PROCID");
	cpu_set_t set;
	size_t n = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--pages") && i + 1 < argc) {
			want = atol(argv[++i]);
		} else if (!strcmp(argv[i], "--hold")) {
			hold = 1;
		} else if (!strcmp(argv[i], "--self-check")) {
			self = 1;
		} else if (!strcmp(argv[i], "--state-dir") && i + 1 < argc) {
			state_dir = argv[++i];
		} else {
			fprintf(stderr, "usage: bwap-slurm-probe [--pages N] [--self-check [--state-dir DIR]] [--hold]\n");
			return 2;
		}
	}
	if (want < 1 || want > (1L << 24)) {
		fprintf(stderr, "bwap-slurm-probe: --pages must be from 1 to %ld\n", 1L << 24);
		return 2;
	}
	psz = sysconf(_SC_PAGESIZE);
	if (read_policy(&mode, w, how, sizeof(how))) {
		perror("bwap-slurm-probe: get_mempolicy");
		return 1;
	}
	n = 0;
	wtext[0] = '\0';
	for (int i = 0; i < MAX_NODES; i++) {
		sum += w[i];
		if (w[i] && n < sizeof(wtext))
			n += snprintf(wtext + n, sizeof(wtext) - n, "%s%d:%d", n ? "," : "", i, w[i]);
	}
	if (!n)
		snprintf(wtext, sizeof(wtext), "-");
	/* a whole number of interleave cycles: exact counts wherever the cycle stood */
	npages = sum ? (want + sum - 1) / sum * sum : want;
	buf = mmap(NULL, npages * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || madvise(buf, npages * psz, MADV_NOHUGEPAGE)) {
		perror("bwap-slurm-probe: mmap");
		return 1;
	}
	for (long i = 0; i < npages; i++)
		buf[i * psz] = 1;
	if (count(per))
		return 1;
	CPU_ZERO(&set);
	sched_getaffinity(0, sizeof(set), &set);
	n = 0;
	cpus[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE && n < sizeof(cpus); c++)
		if (CPU_ISSET(c, &set))
			n += snprintf(cpus + n, sizeof(cpus) - n, "%s%d", n ? "," : "", c);
	/* the nodes of those CPUs: /sys/devices/system/cpu/cpuC/nodeN */
	n = 0;
	workers[0] = '\0';
	for (int node = 0; node < MAX_NODES; node++) {
		int found = 0;

		for (int c = 0; c < CPU_SETSIZE && !found; c++) {
			char path[96];

			snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/node%d", c, node);
			found = CPU_ISSET(c, &set) && !access(path, F_OK);
		}
		if (found && n < sizeof(workers))
			n += snprintf(workers + n, sizeof(workers) - n, "%s%d", n ? "," : "", node);
	}
	gethostname(line, sizeof(line) - 1);
	counts_text(per, ctext, sizeof(ctext));
	printf("probe host=%s task=%s pid=%d cpus=%s workers=%s mode=%s weights=%s read=%s pages=%ld counts=%s check=%s",
	       line, task ? task : "-", (int)getpid(), cpus, workers[0] ? workers : "-", mode_name(mode), wtext, how,
	       npages, ctext,
	       mode == MODE_WEIGHTED_INTERLEAVE ? check(w, per, etext, sizeof(etext)) :
	       mode == 3 ? "portable" : "none");
	if (mode == MODE_WEIGHTED_INTERLEAVE)
		printf(" expected=%s", etext);
	printf("\n");
	fflush(stdout);
	/* portable mode: bwapd moves the pages; a task bwapd does not place has nothing to wait for */
	if (self && mode == 3 && self_check())
		return 1;
	while (hold && fgets(line, sizeof(line), stdin)) {
		int pid, nw = 0;
		char *p;

		line[strcspn(line, "\n")] = '\0';
		if (!strcmp(line, "quit"))
			break;
		if (sscanf(line, "check %d", &pid) != 1 || pid != getpid())
			continue;
		memset(w, 0, sizeof(w));
		p = strchr(line + 6, ' ');
		while (p && *++p && nw < MAX_NODES) {
			w[nw++] = strtol(p, &p, 10);
			if (*p != ',')
				break;
		}
		if (count(per))
			return 1;
		counts_text(per, ctext, sizeof(ctext));
		printf("check pid=%d %s counts=%s", pid, check(w, per, etext, sizeof(etext)), ctext);
		printf(" expected=%s\n", etext);
		fflush(stdout);
	}
	return 0;
}
