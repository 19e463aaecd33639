// SPDX-License-Identifier: GPL-2.0
/*
 * bwapctl report: charts.  The matrix and the weights, bwapd's DWP search
 * curve, a result JSON (bench, search) written anywhere, or
 * rebalance-bench --peers' text report, drawn here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "bwapctl.h"

static void help(FILE *f)
{
	fprintf(f, "Usage: bwapctl report --workers SET -o FILE.png|FILE.svg [OPTIONS]\n"
		   "       bwapctl report --search PID|LOG -o FILE.png [--state-dir DIR]\n"
		   "       bwapctl report --from FILE.json -o FILE.png\n"
		   "       bwapctl report --peers REPORT.txt -o FILE.png\n\n"
		   "Draws the bandwidth matrix as a heatmap (row = CPU node, column = memory\n"
		   "node, GB/s in each cell, blue = slow, red = fast) and the canonical\n"
		   "weights for SET as a bar chart (workers orange, percentages on top).\n"
		   "Charts are PNG or SVG, as the file name says; the static bwapctl of the\n"
		   "guests draws none: copy its JSON or log out and draw it here.\n\n"
		   "  --workers SET    worker nodes\n"
		   "  -o, --output F   the chart to write, F.png or F.svg\n"
		   "  --from FILE      draw a result JSON: 'bwapctl bench --save FILE' or\n"
		   "                   'bwapctl search' (STATE_DIR/search/results.json)\n"
		   "  --dwp X          chart canonical weights with this DWP\n"
		   "  --search PID|LOG plot bwapd's DWP search instead: DWP across, the metric\n"
		   "                   up (lower is better), one dot per measurement in search\n"
		   "                   order, a colour per search, grey = monitoring the\n"
		   "                   optimum, where it settled ringed.  LOG is a search log;\n"
		   "                   PID reads STATE_DIR/search-PID.log\n"
		   "  --peers REPORT   draw rebalance-bench --peers' report (scripts/run-bench\n"
		   "                   --peers: build/bench/peers-*.txt): pages moved / the\n"
		   "                   minimum to the method's own goal, and instructions / the\n"
		   "                   kernel's, per scenario and method\n"
		   "%s"
		   "  -h, --help       this text\n", matrix_opts_help);
}

static int report_search(const char *what, const char *state_dir, const char *out)
{
	static struct bwap_tuner_point pts[BWAP_TUNER_MAX_HISTORY];
	struct bwap_tuner_point settled;
	char path[512], name[256], err[512];
	int n;

	if (strspn(what, "0123456789") == strlen(what))
		snprintf(path, sizeof(path), "%s/search-%s.log", state_dir, what);
	else
		snprintf(path, sizeof(path), "%s", what);
	n = bwap_search_log_read(path, pts, BWAP_TUNER_MAX_HISTORY, &settled, name, sizeof(name), err,
				 sizeof(err));
	if (n < 0 || bwap_chart_curve(out, pts, n, &settled, name, path, err, sizeof(err))) {
		cli_error("report", "%s", err);
		return 1;
	}
	printf("wrote %s: %d measurements from %s; y axis: %s (lower is better); ", out, n, path,
	       name[0] ? name : "metric");
	if (settled.search >= 0)
		printf("settled at DWP %.3f (ringed)\n", settled.dwp);
	else
		printf("still searching, last DWP %.3f\n", pts[n - 1].dwp);
	return 0;
}

/* rebalance-bench --peers' text report */
static int report_peers(const char *file, const char *out)
{
	static struct bwap_peers_report r;
	char err[512];

	if (bwap_peers_read(file, &r, err, sizeof(err)) || bwap_chart_peers(out, &r, err, sizeof(err))) {
		cli_error("report", "--peers %s", err);
		return 1;
	}
	printf("wrote %s: %d scenarios x %d methods from %s\n", out, r.nr_scenarios, r.nr_methods, file);
	return 0;
}

/* A bench or search result JSON, whichever it is. */
static int report_from(const char *file, const char *out)
{
	char *text = bwap_read_file(file, NULL), err[512];
	enum json_tokener_error jerr = json_tokener_success;
	json_object *o, *kind;
	const char *what;
	int ret;

	if (!text) {
		cli_error("report", "--from %s: %s", file, strerror(errno));
		return 1;
	}
	o = json_tokener_parse_verbose(text, &jerr);
	free(text);
	if (!o) {
		cli_error("report", "--from %s: not JSON: %s", file, json_tokener_error_desc(jerr));
		return 1;
	}
	what = json_object_object_get_ex(o, "bwapctl", &kind) ? json_object_get_string(kind) :
	       json_object_object_get_ex(o, "points", &kind) ? "search" : "";
	if (!strcmp(what, "bench"))
		ret = bwap_chart_bench(out, o, err, sizeof(err));
	else if (!strcmp(what, "search"))
		ret = bwap_chart_search(out, o, err, sizeof(err));
	else {
		snprintf(err, sizeof(err), "not a result bwapctl draws (from 'bwapctl bench' or 'bwapctl search')");
		ret = -1;
	}
	json_object_put(o);
	if (ret) {
		cli_error("report", "--from %s: %s", file, err);
		return 1;
	}
	printf("wrote %s: the %s result in %s\n", out, what, file);
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct matrix_opts mo;
	struct bwap_matrix *m;
	struct bwap_weights w;
	struct place_opts po;
	bwap_nodeset nodes = 0;
	const char *out = NULL, *search = NULL, *from = NULL, *peers = NULL;
	char err[512] = "";

	matrix_opts_init(&mo);
	place_opts_init(&po, 0);
	static const struct option longopts[] = {
		{ "workers", required_argument, NULL, OPT_WORKERS },
		{ "output", required_argument, NULL, 'o' },
		{ "search", required_argument, NULL, OPT_SEARCH },
		{ "from", required_argument, NULL, OPT_FROM },
		{ "peers", required_argument, NULL, OPT_PEERS },
		{ "dwp", required_argument, NULL, OPT_DWP },
		CLI_MATRIX_OPTIONS,
		CLI_HELP_OPTION,
		{ 0 }
	};
	struct cli_parser p;
	int c, ok;

	cli_parser_init(&p, "report", "ho:", longopts);
	while ((c = cli_next(&p, argc, argv)) != -1) {
		if (matrix_opts_take(&mo, c, optarg))
			continue;
		ok = place_opts_take(&po, "report", c, optarg);
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
		case 'o':
			out = optarg;
			break;
		case OPT_SEARCH:
			search = optarg;
			break;
		case OPT_FROM:
			from = optarg;
			break;
		case OPT_PEERS:
			peers = optarg;
			break;
		}
	}
	if (optind < argc) {
		cli_error("report", "unexpected argument '%s'; see 'bwapctl report --help'", argv[optind]);
		return 2;
	}
	if (!out) {
		cli_error("report", "-o FILE.png (or FILE.svg) is required");
		return 2;
	}
	if (bwap_chart_format(out, err, sizeof(err)) < 0 || bwap_charts_available(err, sizeof(err)) < 0) {
		cli_error("report", "%s", err);
		return 2;
	}
	if (!!search + !!from + !!peers + !!po.workers != 1) {
		cli_error("report", "give one of --workers SET, --search PID|LOG, --from FILE.json or "
			  "--peers REPORT.txt");
		return 2;
	}
	if (search)
		return report_search(search, mo.state_dir, out);
	if (from)
		return report_from(from, out);
	if (peers)
		return report_peers(peers, out);
	m = malloc(sizeof(*m));
	if (!m || matrix_opts_load(&mo, m))
		return 1;
	for (int i = 0; i < m->nr_nodes; i++)
		for (int c = 0; c < m->nr_nodes; c++)
			if (m->bw[c][i] >= 0)
				nodes |= BWAP_NODE_BIT(i);
	if (canonical_weights("report", m, po.workers, nodes, po.dwp, 255, &w) ||
	    bwap_chart_report(out, m, &w, po.workers, err, sizeof(err))) {
		if (err[0])
			cli_error("report", "%s", err);
		free(m);
		return 1;
	}
	printf("wrote %s (matrix: %s)\n", out, m->source);
	free(m);
	return 0;
}
