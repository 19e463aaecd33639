// SPDX-License-Identifier: GPL-2.0
/*
 * bwap-slurm-check: would bwap.so serve --bwap jobs on this node?  The
 * node health check's (bwap-health-check) decisions, taken with bwap.so's
 * own code, so that a node passes exactly when its tasks would:
 *   1. the bwap.so line Slurm reads (plugstack.conf and its includes,
 *      configless Slurm's copy too), its arguments parsed by option.c as
 *      bwap.so parses them (values too: default=big:5:300 fails here as
 *      it fails every --bwap job);
 *   2. the node's matrix gives canonical weights for every node's CPUs,
 *      as task.c computes them;
 *   3. bwapd answers "ping" (a request it answers at once, whatever it
 *      is doing), where tasks need it.
 * Exit 0, silent: all is well.  Exit 1 and one line "bwap: WHAT (--bwap
 * jobs fail here); WHAT TO DO": jobs would fail (the node is worth
 * draining).  Exit 3 and one line: BWAP is degraded but jobs run
 * (missing=run; --bwap-tune untuned).  Exit 2: usage.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "bwap_slurm.h"

#define EXIT_FAILS 1
#define EXIT_USAGE 2
#define EXIT_DEGRADED 3

static int say(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int say(int rc, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("bwap: ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	return rc;
}

/* PlugStackConfig= of slurm.conf in dir, else dir/plugstack.conf, into buf; 0 if dir has slurm.conf. */
static int plugstack_of(const char *dir, char *buf, size_t len)
{
	char path[4096], line[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/slurm.conf", dir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	snprintf(buf, len, "%s/plugstack.conf", dir);
	while (fgets(line, sizeof(line), f)) {
		char *p = line + strspn(line, " \t");

		if (!strncasecmp(p, "PlugStackConfig=", 16)) {
			p += 16;
			p[strcspn(p, " \t\r\n#")] = '\0';
			if (*p == '/')
				snprintf(buf, len, "%s", p);
			else if (*p)
				snprintf(buf, len, "%s/%s", dir, p);
		}
	}
	fclose(f);
	return 0;
}

/*
 * The plugstack file slurmd reads: SLURM_CONF's directory; else the first
 * directory with a slurm.conf of /etc/slurm (a node's own files win, as
 * slurmd takes them) and /run/slurm/conf (configless: slurmd's copy);
 * BWAP_SLURM_CONF_DIRS replaces that list (the tests).
 */
static int find_plugstack(char *buf, size_t len)
{
	const char *sc = getenv("SLURM_CONF"), *dirs = getenv("BWAP_SLURM_CONF_DIRS");
	char list[4096], *save = NULL;

	if (sc && *sc) {
		char d[4096];

		snprintf(d, sizeof(d), "%s", sc);
		*strrchr(d, '/') = '\0';
		if (strrchr(sc, '/') && !plugstack_of(*d ? d : "/", buf, len))
			return 0;
	}
	snprintf(list, sizeof(list), "%s", dirs && *dirs ? dirs : "/etc/slurm /run/slurm/conf");
	for (char *d = strtok_r(list, " :", &save); d; d = strtok_r(NULL, " :", &save))
		if (!plugstack_of(d, buf, len))
			return 0;
	return -1;
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: bwap-slurm-check [--plugstack FILE | --conf FILE] [--timeout-ms N]\n"
		   "  --plugstack FILE  Slurm's plugstack.conf (default: slurmd's, configless too)\n"
		   "  --conf FILE       a file with the bwap.so line itself\n"
		   "  --timeout-ms N    how long bwapd may take to answer ping (default 2000)\n");
}

int main(int argc, char **argv)
{
	char plugstack[4096] = "", args[4096], where[4200], err[2048], buf[1024], *av[64], *save = NULL;
	struct bwap_slurm_conf c;
	struct bwap_topology *t;
	struct bwap_matrix *m;
	int ac = 0, timeout_ms = 2000, r, bwapd_needed;
	enum bwap_kernel_mode kernel;
	char *reply;

	for (int i = 1; i < argc; i++) {
		if ((!strcmp(argv[i], "--plugstack") || !strcmp(argv[i], "--conf")) && i + 1 < argc) {
			snprintf(plugstack, sizeof(plugstack), "%s", argv[++i]);
		} else if (!strcmp(argv[i], "--timeout-ms") && i + 1 < argc) {
			timeout_ms = atoi(argv[++i]);
			if (timeout_ms < 1 || timeout_ms > 600000) {
				fprintf(stderr, "bwap-slurm-check: --timeout-ms takes 1 to 600000\n");
				return EXIT_USAGE;
			}
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else {
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (!plugstack[0] && find_plugstack(plugstack, sizeof(plugstack)))
		return 0;	/* no Slurm configuration here: nothing of bwap.so to check */

	/* 1. the line, parsed as bwap.so parses it */
	r = bwap_slurm_plugstack_find(plugstack, args, sizeof(args), where, sizeof(where), err, sizeof(err));
	if (r < 0)
		return say(EXIT_FAILS, "%s (slurmd cannot read its plugin stack); fix it", err);
	if (r == 0)
		return 0;	/* bwap.so is not in the stack: --bwap is not offered, nothing fails */
	for (char *p = strtok_r(args, " ", &save); p && ac < 63; p = strtok_r(NULL, " ", &save))
		av[ac++] = p;
	if (bwap_slurm_parse_conf(ac, av, &c, err, sizeof(err)))
		return say(EXIT_FAILS, "%s: %s (--bwap jobs fail here); fix the bwap.so line, see slurm-bwap(8)",
			   where, err);

	/* 2. the matrix gives weights, for the CPUs of every node, as task.c asks */
	t = malloc(sizeof(*t));
	m = malloc(sizeof(*m));
	if (!t || !m)
		return say(EXIT_FAILS, "out of memory");
	if (bwap_topology_read(t, getenv("BWAP_SYSFS_ROOT"), err, sizeof(err)))
		return say(EXIT_FAILS, "%s (--bwap jobs fail here)", err);
	if (access(c.matrix, R_OK)) {
		if (c.missing == BWAP_MISSING_RUN)
			return say(EXIT_DEGRADED, "no bandwidth matrix at %s (--bwap jobs run without BWAP here: "
				   "missing=run); save one with 'bwapctl measure'", c.matrix);
		return say(EXIT_FAILS, "no bandwidth matrix at %s (--bwap jobs fail here); save one with 'bwapctl "
			   "measure'", c.matrix);
	}
	if (bwap_matrix_load(m, c.matrix, err, sizeof(err)))
		return say(EXIT_FAILS, "%s gives no weights: %s (--bwap jobs fail here); measure it again",
			   c.matrix, err);
	for (int n = 0; n < BWAP_MAX_NODES; n++) {
		double cap[BWAP_MAX_NODES];
		struct bwap_weights w;

		if (!bwap_nodeset_has(t->has_cpu, n))
			continue;
		if (bwap_canonical_capacity(m, BWAP_NODE_BIT(n), t->has_memory, cap, err, sizeof(err)) ||
		    bwap_weights_from_capacity(&w, cap, m->nr_nodes, t->has_memory, err, sizeof(err)))
			return say(EXIT_FAILS, "%s gives no weights for node %d's CPUs: %s (--bwap jobs fail here); "
				   "measure it again", c.matrix, n, err);
	}

	/* 3. bwapd, where tasks need it: ping, which it answers at once */
	kernel = bwap_kernel_mode();
	bwapd_needed = kernel != BWAP_KERNEL_SERIES || !c.tune_denied;
	if (!bwapd_needed)
		return 0;
	reply = bwap_ctl_request_timeout(c.state_dir, "ping", timeout_ms, err, sizeof(err));
	if (reply && strncmp(reply, "ok\n", 3)) {
		snprintf(buf, sizeof(buf), "%.*s", (int)strcspn(reply, "\n"), reply);
		snprintf(err, sizeof(err), "it answered '%s'", buf);
	}
	if (reply && !strncmp(reply, "ok\n", 3)) {
		free(reply);
		return 0;
	}
	free(reply);
	if (kernel == BWAP_KERNEL_SERIES)
		return say(EXIT_DEGRADED, "bwapd does not answer ping on %s/bwapd.sock within %d ms: %s (--bwap-tune "
			   "jobs run untuned here); 'systemctl restart bwapd', see 'journalctl -u bwapd'",
			   c.state_dir, timeout_ms, err);
	snprintf(buf, sizeof(buf), "bwapd does not answer ping on %s/bwapd.sock within %d ms (%s kernel: --bwap "
		 "needs it)", c.state_dir, timeout_ms, bwap_kernel_mode_name(kernel));
	if (c.missing == BWAP_MISSING_RUN)
		return say(EXIT_DEGRADED, "%s: %s (--bwap jobs run without BWAP here: missing=run); 'systemctl "
			   "restart bwapd', see 'journalctl -u bwapd'", buf, err);
	return say(EXIT_FAILS, "%s: %s (--bwap jobs fail here); 'systemctl restart bwapd', see 'journalctl -u bwapd'",
		   buf, err);
}
