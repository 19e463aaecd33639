// SPDX-License-Identifier: GPL-2.0
/*
 * bwapctl place: portable mode's page placement, once, on a running
 * process: its resident anonymous pages go to the exact weighted shares
 * for the worker set, moving only the minimum (lib/place.c).  Works on any
 * kernel with move_pages(2); 'bwapctl run' and bwapd use the same code on
 * kernels without the BWAP series.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <json-c/json.h>

#include "bwapctl.h"

static void help(FILE *f)
{
	fprintf(f, "Usage: bwapctl place PID --workers SET [OPTIONS]\n\n"
		   "Moves PID's resident anonymous pages to BWAP's weighted shares for the\n"
		   "worker nodes SET with move_pages(2): a query says where every page is,\n"
		   "and only the pages above their node's share move (the minimum).  The plan\n"
		   "is in folio units, as the kernel's: a THP moves whole, to a node whose\n"
		   "share holds it (folio boundaries from pagemap and kpageflags as root;\n"
		   "otherwise only PMD-mapped THPs are seen).  This is what 'bwapctl run'\n"
		   "and bwapd do on kernels without the BWAP series, and what bwapd does\n"
		   "after setting the weights on the series' parts 1-2 (no kernel rebalance).\n\n"
		   "  --workers SET     worker nodes, e.g. 0,1\n"
		   "  --dwp X           data-to-worker proximity 0..1 (default 0 = canonical)\n"
		   "  --nodes SET       nodes that may hold pages (default: all memory nodes)\n"
		   "  --max-weight N    largest weight, 1..255 (default 255)\n"
		   "  --dry-run         only say what would move\n"
		   "  --via-kernel      on a kernel with the BWAP series: let the kernel do it\n"
		   "                    (process_mpol_reweight with MPOL_REWEIGHT_REBALANCE\n"
		   "                    and MPOL_REWEIGHT_GLOBAL: policies on the global\n"
		   "                    weights take the new ones too; shared memory is left\n"
		   "                    alone, as move_pages leaves it), to compare the two\n"
		   "                    paths' cost on the same scenario.  On a kernel with\n"
		   "                    the series' parts 1-2 only (no kernel rebalance) the\n"
		   "                    call sets the weights (MPOL_REWEIGHT_GLOBAL alone), so\n"
		   "                    that new pages follow them, and move_pages then moves\n"
		   "                    the resident pages under weighted interleave (what the\n"
		   "                    kernel's rebalance moves), as without --via-kernel;\n"
		   "                    each step is reported.  Needs process_mpol_reweight\n"
		   "                    (not on part 1 alone or a stock kernel)\n"
		   "  --json            the result as JSON\n"
		   "%s"
		   "  -h, --help        this text\n", matrix_opts_help);
}

void place_print(FILE *f, const struct bwap_place_stats *st, long pid)
{
	fprintf(f, "placed pid %ld: %ld pages, moved %ld (minimum %ld), %ld could not move, in %.0f us\n", pid,
		st->pages, st->moved, st->minimum, st->failed, st->seconds * 1e6);
	if (st->large_folios || st->fixed)
		fprintf(f, "  in folio units: %ld large folio(s) of %ld pages, %ld moved whole; %ld pages of folios "
			   "mapped in part stay\n", st->large_folios, st->large_size, st->large_moved, st->fixed);
	if (st->folios_known == BWAP_FOLIOS_NONE && st->pages)
		fprintf(f, "  note: folio boundaries unknown (%s): planned page by page, and a THP moves whole when "
			   "one of its pages does, so a share can be missed; run as root for plans in folio units\n",
			st->why);
	else if (st->folios_known == BWAP_FOLIOS_PMD && st->pages)
		fprintf(f, "  note: only PMD-mapped THPs are seen (%s): a large folio mapped by PTEs is planned "
			   "page by page; run as root for plans in folio units\n", st->why);
	fprintf(f, "  %-6s %10s %10s %10s\n", "node", "before", "share", "after");
	for (int i = 0; i < st->nr_nodes; i++)
		fprintf(f, "  %-6d %10ld %10ld %10ld\n", i, st->before[i], st->target[i], st->after[i]);
}

static void place_json(const struct bwap_place_stats *st, long pid)
{
	struct json_object *o = json_object_new_object(), *nodes = json_object_new_array();

	json_object_object_add(o, "pid", json_object_new_int64(pid));
	json_object_object_add(o, "pages", json_object_new_int64(st->pages));
	json_object_object_add(o, "moved", json_object_new_int64(st->moved));
	json_object_object_add(o, "minimum", json_object_new_int64(st->minimum));
	json_object_object_add(o, "failed", json_object_new_int64(st->failed));
	json_object_object_add(o, "large_folios", json_object_new_int64(st->large_folios));
	json_object_object_add(o, "large_folio_pages", json_object_new_int64(st->large_size));
	json_object_object_add(o, "large_folios_moved", json_object_new_int64(st->large_moved));
	json_object_object_add(o, "fixed", json_object_new_int64(st->fixed));
	json_object_object_add(o, "folios_known",
			       json_object_new_string(st->folios_known == BWAP_FOLIOS_ALL ? "all" :
						      st->folios_known == BWAP_FOLIOS_PMD ? "pmd-mapped" : "none"));
	for (int i = 0; i < st->nr_nodes; i++) {
		struct json_object *n = json_object_new_object();

		json_object_object_add(n, "node", json_object_new_int(i));
		json_object_object_add(n, "before", json_object_new_int64(st->before[i]));
		json_object_object_add(n, "share", json_object_new_int64(st->target[i]));
		json_object_object_add(n, "after", json_object_new_int64(st->after[i]));
		json_object_array_add(nodes, n);
	}
	json_object_object_add(o, "nodes", nodes);
	printf("%s\n", json_object_to_json_string_ext(o, JSON_C_TO_STRING_SPACED));
	json_object_put(o);
}

/*
 * The kernel's path for the same job: process_mpol_reweight, timed.  With
 * MPOL_REWEIGHT_GLOBAL, so that a process whose policy follows the global
 * weights is placed too (its policies then own the new weights); without
 * MPOL_REWEIGHT_SHARED, as the move_pages path places anonymous pages only
 * and the two must do the same job.
 */
static double since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) + (t1.tv_nsec - t0->tv_nsec) * 1e-9;
}

/*
 * The same on the series' parts 1-2, whose process_mpol_reweight refuses
 * MPOL_REWEIGHT_REBALANCE: the call sets the weights (MPOL_REWEIGHT_GLOBAL,
 * as above), so that the process's later faults follow them, and
 * move_pages then moves its resident pages under weighted interleave, the
 * memory the kernel's rebalance moves, to the shares (lib/place.c).
 */
static int place_reweight_then_move(pid_t pid, int pidfd, const struct bwap_weights *w, int json)
{
	struct bwap_place_stats st;
	struct timespec t0;
	char err[512];
	long left;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	left = bwap_process_mpol_reweight(pidfd, w, MPOL_REWEIGHT_GLOBAL);
	if (left < 0) {
		cli_error("place", "process_mpol_reweight: %s", strerror(errno));
		return 1;
	}
	if (!json)
		printf("set the weights of pid %d via the kernel (process_mpol_reweight, MPOL_REWEIGHT_GLOBAL) in %.0f us; "
		       "%s: its resident pages move with move_pages\n", (int)pid, since(&t0) * 1e6,
		       bwap_kernel_mode_name(BWAP_KERNEL_SERIES));
	/* the memory the kernel's rebalance would move: that under weighted interleave */
	if (bwap_place_pages_wi(pid, w, 0, &st, err, sizeof(err))) {
		cli_error("place", "the weights are set, but moving the pages failed: %s", err);
		return 1;
	}
	if (json)
		place_json(&st, pid);
	else
		place_print(stdout, &st, pid);
	return st.failed ? 1 : 0;
}

static int place_via_kernel(pid_t pid, const struct bwap_weights *w, int json)
{
	struct timespec t0, t1;
	long before, after, left;
	int pidfd = syscall(SYS_pidfd_open, pid, 0), ret;

	if (pidfd < 0) {
		cli_error("place", "pidfd_open(%d): %s", (int)pid, strerror(errno));
		return 1;
	}
	if (bwap_kernel_rebalance() == BWAP_REBALANCE_UNKNOWN_FLAG ||
	    bwap_kernel_rebalance() == BWAP_REBALANCE_NOT_BUILT) {
		ret = place_reweight_then_move(pid, pidfd, w, json);
		close(pidfd);
		return ret;
	}
	before = bwap_vmstat_moved();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	left = bwap_process_mpol_reweight(pidfd, w, MPOL_REWEIGHT_REBALANCE | MPOL_REWEIGHT_GLOBAL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	after = bwap_vmstat_moved();
	close(pidfd);
	if (left < 0) {
		cli_error("place", "process_mpol_reweight: %s%s", strerror(errno),
			  errno == ENOSYS ? " (a kernel without the BWAP series: leave out --via-kernel)" : "");
		return 1;
	}
	printf("placed pid %d via the kernel: moved %ld, %ld could not move, in %.0f us\n", (int)pid,
	       after - before, left, ((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9) * 1e6);
	return left ? 1 : 0;
}

int cmd_place(int argc, char **argv)
{
	static const struct option longopts[] = {
		CLI_PLACE_OPTIONS,
		{ "dry-run", no_argument, NULL, OPT_DRY_RUN },
		{ "via-kernel", no_argument, NULL, OPT_VIA_KERNEL },
		{ "json", no_argument, NULL, OPT_JSON },
		CLI_MATRIX_OPTIONS,
		CLI_HELP_OPTION,
		{ 0 }
	};
	struct matrix_opts mo;
	struct bwap_topology *t = NULL;
	struct bwap_matrix *m = NULL;
	struct bwap_weights w;
	struct bwap_place_stats st;
	struct cli_parser p;
	struct place_opts po;
	long pid;
	int c, ok, dry = 0, json = 0, ret = 1, via_kernel = 0;
	char err[512];

	matrix_opts_init(&mo);
	place_opts_init(&po, 0);
	cli_parser_init(&p, "place", "h", longopts);
	while ((c = cli_next(&p, argc, argv)) != -1) {
		if (matrix_opts_take(&mo, c, optarg))
			continue;
		ok = place_opts_take(&po, "place", c, optarg);
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
		case OPT_DRY_RUN:
			dry = 1;
			break;
		case OPT_VIA_KERNEL:
			via_kernel = 1;
			break;
		case OPT_JSON:
			json = 1;
			break;
		}
	}
	if (optind != argc - 1) {
		cli_error("place", "give one PID, e.g. bwapctl place 1234 --workers 0");
		return 2;
	}
	if (cli_parse_long("place", "PID", argv[optind], 1, 4194304, &pid))
		return 2;
	if (!po.workers) {
		cli_error("place", "--workers SET is required; see 'bwapctl place --help'");
		return 2;
	}
	t = malloc(sizeof(*t));
	m = malloc(sizeof(*m));
	if (!t || !m)
		goto out;
	if (bwap_topology_read(t, mo.sysfs_root, err, sizeof(err))) {
		cli_error("place", "%s", err);
		goto out;
	}
	if (matrix_opts_load(&mo, m))
		goto out;
	if (!po.have_nodes)
		po.nodes = t->has_memory;
	if (canonical_weights("place", m, po.workers, po.nodes, po.dwp, (int)po.max_weight, &w))
		goto out;
	if (via_kernel) {
		ret = place_via_kernel((pid_t)pid, &w, json);
		goto out;
	}
	if (bwap_place_pages((pid_t)pid, &w, dry, &st, err, sizeof(err))) {
		cli_error("place", "%s", err);
		goto out;
	}
	if (json)
		place_json(&st, pid);
	else
		place_print(stdout, &st, pid);
	ret = st.failed ? 1 : 0;
out:
	free(t);
	free(m);
	return ret;
}
