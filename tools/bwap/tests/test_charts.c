// SPDX-License-Identifier: GPL-2.0
/*
 * The charts, drawn as a person would see them: each PNG decodes (cairo)
 * at the size its layout gives, has dark title text in its title band and
 * the colours its legend promises; each SVG parses (libxml2) as an <svg>
 * of the same size with the glyphs of its text; bad input is refused with
 * a message, and no file is left behind.  rebalance-bench --peers' text
 * reports parse to their exact figures, and bad ones are refused at the
 * line that is wrong.
 */
#include <cairo.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "render.h"
#include "tap.h"

static char dir[] = "/tmp/bwap-test-charts.XXXXXX";

static const char *out(const char *name)
{
	static char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

/* Decoded PNG, or NULL; its size in *w, *h. */
static cairo_surface_t *load_png(const char *path, int *w, int *h)
{
	cairo_surface_t *s = cairo_image_surface_create_from_png(path);

	if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) {
		cairo_surface_destroy(s);
		return NULL;
	}
	*w = cairo_image_surface_get_width(s);
	*h = cairo_image_surface_get_height(s);
	return s;
}

static unsigned int pixel(cairo_surface_t *s, int x, int y)
{
	unsigned char *d = cairo_image_surface_get_data(s);

	return *(uint32_t *)(d + y * cairo_image_surface_get_stride(s) + 4 * x) & 0xffffff;
}

/* Pixels in rows [y0, y1) darker than mid grey: the title's text. */
static long dark_pixels(cairo_surface_t *s, int y0, int y1)
{
	long n = 0;

	for (int y = y0; y < y1; y++)
		for (int x = 0; x < cairo_image_surface_get_width(s); x++) {
			unsigned int p = pixel(s, x, y);

			n += ((p >> 16) & 255) + ((p >> 8) & 255) + (p & 255) < 3 * 100;
		}
	return n;
}

/* Pixels that are not white (any ink, grey text too) in [x0, x1) x [y0, y1). */
static long ink_pixels(cairo_surface_t *s, int x0, int y0, int x1, int y1)
{
	long n = 0;

	for (int y = y0; y < y1; y++)
		for (int x = x0; x < x1; x++) {
			unsigned int p = pixel(s, x, y);

			n += ((p >> 16) & 255) + ((p >> 8) & 255) + (p & 255) < 3 * 245;
		}
	return n;
}

/* Pixels of exactly this colour (0xRRGGBB), as cairo fills a swatch. */
static long colour_pixels(cairo_surface_t *s, double r, double g, double b)
{
	unsigned int want = (unsigned int)lround(r * 255) << 16 | (unsigned int)lround(g * 255) << 8 |
			    (unsigned int)lround(b * 255);
	long n = 0;

	for (int y = 0; y < cairo_image_surface_get_height(s); y++)
		for (int x = 0; x < cairo_image_surface_get_width(s); x++) {
			unsigned int p = pixel(s, x, y);
			int dr = (int)(p >> 16 & 255) - (int)(want >> 16 & 255);
			int dg = (int)(p >> 8 & 255) - (int)(want >> 8 & 255);
			int db = (int)(p & 255) - (int)(want & 255);

			n += abs(dr) <= 1 && abs(dg) <= 1 && abs(db) <= 1;
		}
	return n;
}

/*
 * An SVG that libxml2 parses, rooted at <svg> with width and height
 * "Wpt"/"Hpt", and with at least min_glyphs glyphs drawn (cairo draws text
 * as <use> of glyph symbols).  1 if so.
 */
static int svg_ok(const char *path, int w, int h, int min_glyphs, int *glyphs)
{
	xmlDocPtr doc = xmlReadFile(path, NULL, XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	xmlNodePtr root;
	char ws[32], hs[32], wu[32], hu[32];
	int ok = 0;

	*glyphs = 0;
	if (!doc)
		return 0;
	root = xmlDocGetRootElement(doc);
	if (root && !xmlStrcmp(root->name, (const xmlChar *)"svg")) {
		xmlChar *aw = xmlGetProp(root, (const xmlChar *)"width"), *ah = xmlGetProp(root, (const xmlChar *)"height");

		/* cairo 1.16 (bookworm) writes "Wpt", 1.18 (trixie) plain "W" */
		snprintf(ws, sizeof(ws), "%dpt", w);
		snprintf(hs, sizeof(hs), "%dpt", h);
		snprintf(wu, sizeof(wu), "%d", w);
		snprintf(hu, sizeof(hu), "%d", h);
		ok = aw && ah && (!strcmp((char *)aw, ws) || !strcmp((char *)aw, wu)) &&
		     (!strcmp((char *)ah, hs) || !strcmp((char *)ah, hu));
		xmlFree(aw);
		xmlFree(ah);
		/* glyph uses anywhere under the root */
		for (xmlNodePtr n = root; n;) {
			if (n->type == XML_ELEMENT_NODE && !xmlStrcmp(n->name, (const xmlChar *)"use")) {
				xmlChar *href = xmlGetNsProp(n, (const xmlChar *)"href",
							     (const xmlChar *)"http://www.w3.org/1999/xlink");

				*glyphs += href && strstr((char *)href, "glyph");
				xmlFree(href);
			}
			if (n->children)
				n = n->children;
			else {
				while (n && !n->next)
					n = n->parent;
				if (n)
					n = n->next;
			}
		}
	}
	xmlFreeDoc(doc);
	return ok && *glyphs >= min_glyphs;
}

static void test_bench_chart(void)
{
	json_object *o = json_object_from_file(test_data("bench-4node-emulated.json")), *pl, *k, *e;
	static const double colours[6][3] = {
		{ 0.12, 0.47, 0.71 }, { 1.00, 0.50, 0.05 }, { 0.17, 0.63, 0.17 }, { 0.84, 0.15, 0.16 },
		{ 0.58, 0.40, 0.74 }, { 0.55, 0.34, 0.29 },
	};
	cairo_surface_t *s;
	char err[512] = "";
	int w = 0, h = 0, g = 0, ok, missing = 0;

	CHECK(o, "bench: the guest's bench JSON loads");
	if (!o)
		return;
	CHECK(!bwap_chart_bench(out("bench.png"), o, err, sizeof(err)), "bench: PNG drawn (%s)", err);
	s = load_png(out("bench.png"), &w, &h);
	CHECK(s && w == 1100 && h == 640, "bench: the PNG decodes, 1100x640 (%dx%d)", w, h);
	if (s) {
		CHECK(dark_pixels(s, 12, 36) > 500, "bench: the title band has dark text (%ld pixels)",
		      dark_pixels(s, 12, 36));
		/* EMULATED: the red warning line under the title */
		CHECK(colour_pixels(s, 0.80, 0.05, 0.05) > 200, "bench: the EMULATED line is drawn in red");
		for (int p = 0; p < 6; p++)
			missing += colour_pixels(s, colours[p][0], colours[p][1], colours[p][2]) < 144;
		CHECK(!missing, "bench: each of the 6 placements' colours fills its legend swatch and bars");
		cairo_surface_destroy(s);
	}
	CHECK(!bwap_chart_bench(out("bench.svg"), o, err, sizeof(err)), "bench: SVG drawn (%s)", err);
	/* the title alone has 50 letters */
	ok = svg_ok(out("bench.svg"), 1100, 640, 50, &g);
	CHECK(ok, "bench: the SVG parses, <svg> 1100x640pt, %d glyphs", g);
	/* bad input: a NaN bandwidth, a missing placements list, a bad name */
	json_object_object_get_ex(o, "placements", &pl);
	json_object_object_get_ex(json_object_array_get_idx(pl, 0), "kernels", &k);
	e = json_object_array_get_idx(k, 0);
	json_object_object_add(e, "gbs", json_object_new_double(NAN));
	err[0] = '\0';
	CHECK(bwap_chart_bench(out("bad.png"), o, err, sizeof(err)) &&
	      strstr(err, "must be finite") && access(out("bad.png"), F_OK),
	      "bench: a NaN GB/s is refused, no file written (%s)", err);
	json_object_object_del(o, "placements");
	CHECK(bwap_chart_bench(out("bad.png"), o, err, sizeof(err)) && strstr(err, "not a 'bwapctl bench' result"),
	      "bench: JSON without placements is refused (%s)", err);
	CHECK(bwap_chart_format("x.jpg", err, sizeof(err)) < 0 && strstr(err, "FILE.png or FILE.svg"),
	      "a chart named x.jpg is refused (%s)", err);
	json_object_put(o);
}

/* The bench with the other tools' weights and MODELLED figures, from the 4-node guest. */
static void test_bench_peers_chart(void)
{
	json_object *o = json_object_from_file(test_data("bench-4node-peers.json")), *pl;
	static const double colours[8][3] = {
		{ 0.12, 0.47, 0.71 }, { 1.00, 0.50, 0.05 }, { 0.17, 0.63, 0.17 }, { 0.84, 0.15, 0.16 },
		{ 0.58, 0.40, 0.74 }, { 0.55, 0.34, 0.29 }, { 0.89, 0.47, 0.76 }, { 0.50, 0.50, 0.50 },
	};
	cairo_surface_t *s;
	char err[512] = "";
	int w = 0, h = 0, missing = 0;

	CHECK(o, "bench peers: the guest's JSON with upstream-auto, hmsdk-bwactl and MODELLED figures loads");
	if (!o)
		return;
	CHECK(!bwap_chart_bench(out("peers.png"), o, err, sizeof(err)), "bench peers: PNG drawn (%s)", err);
	s = load_png(out("peers.png"), &w, &h);
	CHECK(s && w == 1100 && h == 640, "bench peers: the PNG decodes, 1100x640 (%dx%d)", w, h);
	if (s) {
		for (int p = 0; p < 8; p++)
			missing += colour_pixels(s, colours[p][0], colours[p][1], colours[p][2]) < 144;
		CHECK(!missing, "bench peers: each of the 8 placements' colours fills its legend swatch and bars");
		/* the MODELLED group's name, in blue, apart from the measured kernels */
		CHECK(colour_pixels(s, 0.05, 0.25, 0.65) > 20, "bench peers: the MODELLED group is named in blue");
		cairo_surface_destroy(s);
	}
	/* all placements have a modelled figure, or none: one without is refused */
	json_object_object_get_ex(o, "placements", &pl);
	json_object_object_del(json_object_array_get_idx(pl, 4), "modelled_gbs");
	err[0] = '\0';
	CHECK(bwap_chart_bench(out("bad.png"), o, err, sizeof(err)) && strstr(err, "7 of the 8 placements have a "
	      "modelled_gbs") && access(out("bad.png"), F_OK),
	      "bench peers: modelled figures for only some placements are refused, no file written (%s)", err);
	json_object_put(o);
}

static void test_report_chart(void)
{
	struct bwap_matrix *m = malloc(sizeof(*m));
	struct bwap_weights wt;
	double cap[BWAP_MAX_NODES];
	char err[512] = "";
	cairo_surface_t *s;
	int w = 0, h = 0, g = 0, ok;

	if (bwap_matrix_load(m, test_data("topologies/4node-asymmetric.topo"), err, sizeof(err)) ||
	    bwap_canonical_capacity(m, 0x3, 0xf, cap, err, sizeof(err)) ||
	    bwap_weights_from_capacity(&wt, cap, 4, 0xf, err, sizeof(err))) {
		CHECK(0, "report: the 4-node matrix loads (%s)", err);
		free(m);
		return;
	}
	bwap_weights_quantise(&wt, 255, 0.005);
	CHECK(!bwap_chart_report(out("report.png"), m, &wt, 0x3, err, sizeof(err)), "report: PNG drawn (%s)", err);
	s = load_png(out("report.png"), &w, &h);
	/* 4 nodes: heatmap 110 + 4x56 + 110, bars 4x48, legend 200; at least 900 wide */
	CHECK(s && w == 900 && h == 150 + 280 + 120, "report: the PNG decodes, 900x550 (%dx%d)", w, h);
	if (s) {
		CHECK(dark_pixels(s, 12, 36) > 500, "report: the title band has dark text");
		CHECK(colour_pixels(s, 0.94, 0.55, 0.12) > 2 * 34 * 50, "report: two worker bars in orange");
		cairo_surface_destroy(s);
	}
	CHECK(!bwap_chart_report(out("report.svg"), m, &wt, 0x3, err, sizeof(err)), "report: SVG drawn (%s)", err);
	ok = svg_ok(out("report.svg"), 900, 550, 40, &g);
	CHECK(ok, "report: the SVG parses, <svg> 900x550pt, %d glyphs", g);
	free(m);
}

static void test_curve_chart(void)
{
	struct bwap_tuner_point pts[64], settled;
	char name[128], err[512] = "";
	cairo_surface_t *s;
	int n, w = 0, h = 0, g = 0, ok;

	n = bwap_search_log_read(test_data("search-4242.log"), pts, 64, &settled, name, sizeof(name), err,
				 sizeof(err));
	CHECK(n == 10 && settled.search == 1 && fabs(settled.dwp - 0.3) < 1e-9 &&
	      !strcmp(name, "model stall, mlp 8 (MODELLED from real page counts)"),
	      "curve: the log reads: 10 points, settled at DWP 0.3 in search 2, the metric's name");
	CHECK(!bwap_chart_curve(out("curve.png"), pts, n, &settled, name, "search-4242.log", err, sizeof(err)),
	      "curve: PNG drawn (%s)", err);
	s = load_png(out("curve.png"), &w, &h);
	CHECK(s && w == 900 && h == 560, "curve: the PNG decodes, 900x560 (%dx%d)", w, h);
	if (s) {
		CHECK(dark_pixels(s, 12, 36) > 500, "curve: the title band has dark text");
		CHECK(colour_pixels(s, 0.12, 0.47, 0.71) > 100 && colour_pixels(s, 1.00, 0.50, 0.05) > 100,
		      "curve: both searches drawn in their colours");
		cairo_surface_destroy(s);
	}
	ok = !bwap_chart_curve(out("curve.svg"), pts, n, &settled, name, "log", err, sizeof(err)) &&
	     svg_ok(out("curve.svg"), 900, 560, 40, &g);
	CHECK(ok, "curve: the SVG parses, <svg> 900x560pt, %d glyphs", g);
	CHECK(bwap_chart_curve(out("empty.png"), pts, 0, &settled, name, "log", err, sizeof(err)) &&
	      strstr(err, "no measurements") && access(out("empty.png"), F_OK),
	      "curve: nothing to plot is refused, no file (%s)", err);
}

static void test_search_chart(void)
{
	json_object *o = json_object_from_file(test_data("search-results.json"));
	char err[512] = "", name[128];
	cairo_surface_t *s;
	int w = 0, h = 0, g = 0, ok;

	CHECK(!strcmp(bwap_score_name("GB/s: ([0-9.]+)", name, sizeof(name)), "GB/s"),
	      "search: the score 'GB/s: ([0-9.]+)' reads as 'GB/s' (%s)", name);
	CHECK(!strcmp(bwap_score_name("SCORE: ([0-9.]+)", name, sizeof(name)), "SCORE"),
	      "search: 'SCORE: ([0-9.]+)' reads as 'SCORE', once (%s)", name);
	CHECK(!strcmp(bwap_score_name("wall seconds", name, sizeof(name)), "wall time, s"),
	      "search: wall seconds reads as 'wall time, s'");
	CHECK(o && !bwap_chart_search(out("search.png"), o, err, sizeof(err)), "search: PNG drawn (%s)", err);
	s = load_png(out("search.png"), &w, &h);
	CHECK(s && w == 900 && h == 130 + 6 * 44 + 120, "search: the PNG decodes, 900x514 (%dx%d)", w, h);
	if (s) {
		CHECK(dark_pixels(s, 12, 36) > 500, "search: the title band has dark text");
		/* the best cell (1.41x) is outlined: black pixels across its top edge */
		long black = 0;

		for (int x = 190 + 3 * 84 + 3; x < 190 + 4 * 84 - 3; x++)
			black += pixel(s, x, 130 + 4 * 44 + 2) == 0;
		CHECK(black > 70, "search: the best cell, bwap-dwp0.5 at degree 4, is outlined (%ld)", black);
		cairo_surface_destroy(s);
	}
	ok = o && !bwap_chart_search(out("search.svg"), o, err, sizeof(err)) &&
	     svg_ok(out("search.svg"), 900, 514, 40, &g);
	CHECK(ok, "search: the SVG parses, <svg> 900x514pt, %d glyphs", g);
	json_object_put(o);
}

/* Text with the first 'from' replaced by 'to' (static buffer), or NULL if from is not in it. */
static const char *edited(const char *text, const char *from, const char *to)
{
	static char buf[16384];
	const char *at = strstr(text, from);
	size_t head = at ? at - text : 0;

	if (!at || strlen(text) + strlen(to) >= sizeof(buf))
		return NULL;
	memcpy(buf, text, head);
	strcpy(buf + head, to);
	strcat(buf, at + strlen(from));
	return buf;
}

/* rebalance-bench --peers' reports, as run-bench --peers saved them: what the parse reads. */
static void test_peers_parse(void)
{
	static struct bwap_peers_report r;
	const struct bwap_peers_scenario *sc;
	char err[512] = "", *text;
	int ok;

	ok = !bwap_peers_read(test_data("peers-7.3-4node-asymmetric.txt"), &r, err, sizeof(err));
	CHECK(ok, "peers 4-node: the report parses (%s)", err);
	if (!ok)
		return;
	CHECK(r.nr_scenarios == 5 && r.nr_methods == 4, "peers 4-node: 5 scenarios x 4 methods (%d x %d)",
	      r.nr_scenarios, r.nr_methods);
	CHECK(!strcmp(r.method[0], "kernel") && !strcmp(r.method[1], "DAMON") && !strcmp(r.method[2], "move_pages") &&
	      !strcmp(r.method[3], "Alg. 1"), "peers 4-node: the methods in order: kernel, DAMON, move_pages, Alg. 1");
	CHECK(!strcmp(r.base, "7.3") && !strcmp(r.source, "linux-source-7.3 7.3.4-1~bpo13+1") &&
	      !strcmp(r.variant, "damon") &&
	      !strcmp(r.topology, "4node-asymmetric") && r.nodes == 4 && r.worker_node == 0 && r.repeats == 3 &&
	      !strcmp(r.unit, "instr"), "peers 4-node: 7.3 damon on 4node-asymmetric, 4 nodes, 3 repeats, instr");
	CHECK(r.tap_plan == 50 && r.tap_ok == 50 && !r.tap_not_ok, "peers 4-node: TAP 1..50, all ok");
	sc = &r.sc[0];
	CHECK(!strcmp(sc->name, "dwp-step") && !strcmp(sc->what, "DWP 0 -> 0.1") && !strcmp(sc->old_w, "20,10,8,5") &&
	      !strcmp(sc->new_w, "67,30,24,15") && sc->pages == 4096 && sc->minimum == 108 && !sc->thp,
	      "peers 4-node: dwp-step, 20,10,8,5 -> 67,30,24,15, 4096 base pages, minimum 108");
	CHECK(sc->row[0].moved == 108 && sc->row[0].instr == 2155790 && sc->row[0].per_kernel == 1.0 &&
	      sc->row[0].off == 0 && sc->row[0].layout == 2712 && !strcmp(sc->row[0].goal, "shares") &&
	      sc->row[0].final[0] == 2018 && sc->row[0].final[3] == 452,
	      "peers 4-node: dwp-step's kernel row: 108 moved, 0 off the shares, 2712 off the layout, 2155790 instr, "
	      "2018/.../452");
	CHECK(sc->row[1].moved == 2747 && sc->row[1].per_kernel == 13.80 &&
	      sc->row[1].off == 8 && sc->row[1].layout == 0 && !strcmp(sc->row[1].goal, "layout") &&
	      sc->row[1].reached_ms == 63.71 && !sc->row[1].refault && sc->row[3].reached_ms == -1 &&
	      sc->row[3].refault == 10,
	      "peers 4-node: dwp-step's DAMON 2747 moved, 13.80x, on its goal the layout at 63.71 ms, "
	      "refault 0; Alg. 1 never reached the shares, refault 10");
	/* issue 50, item 10: no method scored against a goal it does not have */
	CHECK(sc->row[1].per_min == 1.00 && sc->row[0].per_min == 1.00 && sc->row[3].per_min == 7.32,
	      "peers 4-node, a report from before the min column: DAMON's /min is not its printed 25.44x (against "
	      "the shares' minimum) but 1.00x against its own goal, the layout (%.2f); the shares rows keep theirs, "
	      "kernel 1.00x, Alg. 1 7.32x", sc->row[1].per_min);
	CHECK(sc->row[1].goal_min == 2747 && sc->row[0].goal_min == 108 && sc->row[3].goal_min == 108,
	      "peers 4-node, before the min column: DAMON's minimum to the layout 2747 (its stats migrated the 2747 "
	      "pages that changed node, 0 off the layout at the end), the shares rows' 108");
	{
		int blind = 0;

		for (int s = 0; s < r.nr_scenarios; s++)
			for (int m = 0; m < r.nr_methods; m++)
				blind += r.sc[s].row[m].folio_blind;
		CHECK(blind == 1 && r.sc[4].row[2].folio_blind,
		      "peers 4-node: the folio-blind note marks thp-mixed's move_pages row, and only it (%d)", blind);
	}
	sc = &r.sc[4];
	CHECK(!strcmp(sc->name, "thp-mixed") && sc->thp && sc->pages == 4496 && sc->row[2].instr == 884417620 &&
	      sc->row[2].per_kernel == 144.20 && sc->row[2].per_min == 1.77,
	      "peers 4-node: thp-mixed (THP) move_pages, folio-blind: 884417620 instr, 144.20x the kernel's, "
	      "1.77x the minimum");
	/* a stored report with DAMON shr, before the min column: its own minimum from its note */
	ok = !bwap_peers_read(test_data("peers-default-regions-20261207.txt"), &r, err,
			      sizeof(err));
	CHECK(ok && r.nr_methods == 5 && !strcmp(r.method[2], "DAMON shr") && r.sc[0].row[2].goal_min == 112 &&
	      fabs(r.sc[0].row[2].per_min - 127.0 / 112) < 1e-9 && r.sc[0].row[1].per_min == 1 &&
	      r.sc[0].row[0].goal_min == 108,
	      "peers, guest/bench-results/peers-default-regions: DAMON shr's /min against the minimum from its own "
	      "start state (127 / 112), DAMON's 1.00x, the kernel's minimum 108 (%s)", err);
	/* the bench's report with the min column, as run-bench --peers saved it */
	ok = !bwap_peers_read(test_data("peers-7.3-4node-asymmetric-20261207-072647.txt"),
			      &r, err, sizeof(err));
	CHECK(ok && r.goal_min_column && r.nr_methods == 5 && r.sc[0].row[1].goal_min == 2747 &&
	      r.sc[0].row[1].per_min == 1.00 && r.sc[0].row[2].goal_min == 113 && r.sc[0].row[2].per_min == 1.00 &&
	      r.sc[0].row[4].goal_min == 108 && r.sc[0].row[4].per_min == 7.32 && r.sc[4].row[3].folio_blind &&
	      r.tap_plan == 60 && r.tap_ok == 60,
	      "peers, guest/bench-results/peers-7.3-4node-asymmetric-20261207-072647 (min column): DAMON 2747 of its "
	      "minimum 2747 to the layout, DAMON shr 113 of 113, Alg. 1 7.32x of 108; thp-mixed's move_pages "
	      "folio-blind; TAP 60 of 60 (%s)", err);
	ok = !bwap_peers_read(test_data("peers-7.3-8node-opteron.txt"), &r, err, sizeof(err));
	CHECK(ok && r.nr_scenarios == 3 && r.nr_methods == 4 && r.nodes == 8 && !strcmp(r.topology, "8node-opteron") &&
	      !strcmp(r.sc[1].name, "canonical-8") && r.sc[1].minimum == 1083 && r.sc[1].row[1].per_min == 1.00 &&
	      r.sc[1].row[0].final[7] == 234 && !strcmp(r.sc[2].name, "thp-canonical-8") && r.sc[2].thp &&
	      r.sc[2].minimum == 3584 && r.sc[2].row[0].final[0] == 5120 && r.tap_plan == 30 && r.tap_ok == 30,
	      "peers 8-node: 3 scenarios x 4 methods on 8 nodes; canonical-8 minimum 1083, DAMON 1.00x to its own goal, not 3.31x; "
	      "thp-canonical-8 minimum 3584, kernel 5120 on node 0; TAP 30 of 30 ok (%s)", err);

	/* strict: each bad report refused with the line it is on */
	text = bwap_read_file(test_data("peers-7.3-4node-asymmetric.txt"), NULL);
	CHECK(text, "peers: the 4-node report reads as text");
	if (!text)
		return;
	err[0] = '\0';
	CHECK(bwap_peers_parse(edited(text, "25.44x", "26.44x"), "r.txt", &r, err, sizeof(err)) &&
	      strstr(err, "r.txt:13: /min 26.44x is not 2747 moved / minimum 108"),
	      "peers: a /min that is not moved / minimum is refused at its line (%s)", err);
	err[0] = '\0';
	CHECK(bwap_peers_parse(edited(text, "  13.80x", "    infx"), "r.txt", &r, err, sizeof(err)) &&
	      strstr(err, "r.txt:13: ") && strstr(err, "must be finite"),
	      "peers: an infinite /kernel is refused at its line (%s)", err);
	err[0] = '\0';
	CHECK(bwap_peers_parse(edited(text, "#   DAMON: one resident", "DAMON: one resident"), "r.txt", &r, err,
			       sizeof(err)) && strstr(err, "r.txt:16: not a line rebalance-bench --peers"),
	      "peers: an unknown line is refused, named (%s)", err);
	err[0] = '\0';
	CHECK(bwap_peers_parse(edited(text, "2018/903/723/452", "2018/903/723"), "r.txt", &r, err, sizeof(err)) &&
	      strstr(err, "r.txt:12: the final pages per node are not 4 counts"),
	      "peers: a row with 3 of the 4 nodes is refused (%s)", err);
	err[0] = '\0';
	CHECK(bwap_peers_parse(edited(text, "10832 layout ", "10832 lay0ut "), "r.txt", &r, err, sizeof(err)) &&
	      strstr(err, "r.txt:13: the goal 'lay0ut' is neither 'shares' nor 'layout'"),
	      "peers: a goal other than shares or layout is refused at its line (%s)", err);
	err[0] = '\0';
	CHECK(bwap_peers_parse(edited(text, "  DAMON        3844", "  kernel       3844"), "r.txt", &r, err,
			       sizeof(err)) && strstr(err, "method 'kernel' a second time in scenario 'thp-mixed'"),
	      "peers: a method twice in a scenario is refused (%s)", err);
	err[0] = '\0';
	CHECK(bwap_peers_parse(edited(text, "1..50\n", ""), "r.txt", &r, err, sizeof(err)) &&
	      strstr(err, "no TAP plan"), "peers: a report without its TAP lines (cut short) is refused (%s)", err);
	err[0] = '\0';
	CHECK(bwap_peers_parse("# kunit: 31 passed\n", "r.txt", &r, err, sizeof(err)) &&
	      strstr(err, "not a rebalance-bench --peers report"), "peers: another report is refused (%s)", err);
	/* DAMON's minimum to the layout only where its stats show each moved page moved once */
	err[0] = '\0';
	ok = !bwap_peers_parse(edited(text, "range, 2747 pages migrated by its stats", "range, 2748 pages migrated by its stats"),
			       "r.txt", &r, err, sizeof(err));
	CHECK(ok && r.sc[0].row[1].per_min < 0 && r.sc[0].row[1].goal_min == -1 && r.sc[1].row[1].per_min == 1.00,
	      "peers, before the min column: where DAMON's stats migrated more pages than changed node, its "
	      "minimum to the layout is unknown and its /min n/a (%s)", err);
	CHECK(ok && !bwap_chart_peers(out("peers-nc.png"), &r, err, sizeof(err)),
	      "peers: the chart draws with a row without a ratio to its goal (%s)", err);
	/* a kernel without DAMON prints its rows n/a: parsed, not measured */
	err[0] = '\0';
	ok = !bwap_peers_parse(edited(text, "  DAMON        2747 25.44x      8      0   29755332  13.80x  10832 layout "
				      "  63.71 ms  32.5 /  17.4     0 yes 2026/900/720/450", "  DAMON         n/a"),
			       "r.txt", &r, err, sizeof(err));
	CHECK(ok && r.sc[0].row[1].na && !r.sc[0].row[1].have && r.sc[1].row[1].have,
	      "peers: DAMON n/a in one scenario parses as not measured (%s)", err);
	CHECK(ok && !bwap_chart_peers(out("peers-na.png"), &r, err, sizeof(err)),
	      "peers: the chart draws with an n/a row (%s)", err);
	free(text);
}

/*
 * A report with the min column (issue 50, item 10): each row's /min is
 * moved over the fewest moves to its own goal, DAMON's the layout.  The
 * rows are printed with rebalance-bench's own format; the figures are the
 * dwp-step rows of guest/bench-results/peers-5ms-100ms-20261207.txt with
 * a min column as the bench now prints it (DAMON's: its 2747 moves, each
 * off the layout at the start, as its stats and 0 pages off at the end
 * say).
 */
static const char row_fmt[] =
	"  %-10s %6ld %6ld %5.2fx %6ld %6ld %10lld %6.2fx %6.0f %-6s %10s %5.1f / %5.1f %5ld %-3s %s\n";

static char *goal_min_report(long damon_min, const char *damon_ratio)
{
	static char text[4096];
	int n;

	n = snprintf(text, sizeof(text),
		     "# rebalance-bench --peers: 4 nodes, workers on CPU 0 (node 0), 1 repeats,\n#\n"
		     "# dwp-step (DWP 0 -> 0.1): 20,10,8,5 -> 67,30,24,15, 4096 pages, minimum 108 moved; "
		     "fresh fault under NEW:\n#   windows 32.5 / 17.4, pages per node 2026/900/720/450\n"
		     "# %-10s %6s %6s %6s %6s %6s %10s %7s %6s %-6s %10s %13s %9s %-19s\n", "method", "moved", "min",
		     "/min", "shares", "layout", "instr", "/kernel", "/moved", "goal", "reached", "win 64 / 512",
		     "refault", "final per node");
	n += snprintf(text + n, sizeof(text) - n, row_fmt, "kernel", 108L, 108L, 1.0, 0L, 2712L, 2203050LL, 1.0,
		      20399.0, "shares", "2.20 ms", 11.5, 4.2, 0L, "yes", "2018/903/723/452");
	n += snprintf(text + n, sizeof(text) - n, row_fmt, "DAMON", 2747L, damon_min, 2747.0 / damon_min, 8L, 0L,
		      23760692LL, 10.79, 8650.0, "layout", "147.97 ms", 32.5, 17.4, 0L, "yes", "2026/900/720/450");
	n += snprintf(text + n, sizeof(text) - n, row_fmt, "move_pages", 108L, 108L, 1.0, 0L, 2712L, 3000380LL, 1.36,
		      27781.0, "shares", "3.00 ms", 11.5, 4.2, 0L, "yes", "2018/903/723/452");
	snprintf(text + n, sizeof(text) - n, "1..0\n");
	if (damon_ratio) {	/* a hand-edited ratio */
		char *at = strstr(text, "  DAMON ");

		at = strstr(at, " 1.00x");
		memcpy(at, damon_ratio, strlen(damon_ratio));
	}
	return text;
}

static void test_peers_goal_min(void)
{
	static struct bwap_peers_report r;
	char err[512] = "";
	int ok;

	ok = !bwap_peers_parse(goal_min_report(2747, NULL), "g.txt", &r, err, sizeof(err));
	CHECK(ok, "peers, min column: the report parses (%s)", err);
	CHECK(ok && r.sc[0].row[1].per_min == 1.00 && r.sc[0].row[0].per_min == 1.00 && r.sc[0].row[2].per_min == 1.00,
	      "peers, min column: DAMON's /min is against its own goal, 1.00x, not the shares' 25.44x (%.2f)",
	      ok ? r.sc[0].row[1].per_min : -2);
	CHECK(ok && r.goal_min_column && r.sc[0].row[1].goal_min == 2747 && r.sc[0].row[0].goal_min == 108,
	      "peers, min column: each row's min read, DAMON's 2747 to the layout, the kernel's 108 to the shares");
	CHECK(ok && !bwap_chart_peers(out("peers-goal.png"), &r, err, sizeof(err)),
	      "peers, min column: the chart draws (%s)", err);
	err[0] = '\0';
	CHECK(bwap_peers_parse(goal_min_report(2747, " 1.10x"), "g.txt", &r, err, sizeof(err)) &&
	      strstr(err, "g.txt:7: /min 1.10x is not 2747 moved / minimum 2747"),
	      "peers, min column: a /min that is not moved / the row's min is refused at its line (%s)", err);
}

/* The chart of the 4-node report, as a person sees it. */
static void test_peers_chart(void)
{
	static struct bwap_peers_report r;
	static const double colours[4][3] = {
		{ 0.12, 0.47, 0.71 }, { 1.00, 0.50, 0.05 }, { 0.17, 0.63, 0.17 }, { 0.84, 0.15, 0.16 },
	};
	cairo_surface_t *s;
	char err[512] = "";
	int w = 0, h = 0, g = 0, missing = 0, ok;

	if (bwap_peers_read(test_data("peers-7.3-4node-asymmetric.txt"), &r, err, sizeof(err))) {
		CHECK(0, "peers chart: the report parses (%s)", err);
		return;
	}
	CHECK(!bwap_chart_peers(out("peers-report.png"), &r, err, sizeof(err)), "peers chart: PNG drawn (%s)", err);
	s = load_png(out("peers-report.png"), &w, &h);
	CHECK(s && w == 1100 && h == 860, "peers chart: the PNG decodes, 1100x860 (%dx%d)", w, h);
	if (s) {
		CHECK(dark_pixels(s, 12, 36) > 500, "peers chart: the title band has dark text");
		for (int m = 0; m < 4; m++)
			missing += colour_pixels(s, colours[m][0], colours[m][1], colours[m][2]) < 144;
		CHECK(!missing, "peers chart: each of the 4 methods' colours fills its legend swatch and bars");
		cairo_surface_destroy(s);
	}
	/* the titles, legend, labels and footnote: over 1000 letters */
	ok = !bwap_chart_peers(out("peers-report.svg"), &r, err, sizeof(err)) &&
	     svg_ok(out("peers-report.svg"), 1100, 860, 1000, &g);
	CHECK(ok, "peers chart: the SVG parses, <svg> 1100x860pt, %d glyphs (%s)", g, err);
	/* the subtitle of a report as run-bench names it stays inside the chart */
	snprintf(r.source_name, sizeof(r.source_name), "build/bench/peers-7.3-4node-asymmetric-20261127-123654.txt");
	CHECK(!bwap_chart_peers(out("peers-long.png"), &r, err, sizeof(err)), "peers chart: PNG drawn (%s)", err);
	s = load_png(out("peers-long.png"), &w, &h);
	CHECK(s && !ink_pixels(s, w - 20, 0, w, 125),
	      "peers chart: title, subtitle and legend end 20 px short of the right edge (%ld pixels there)",
	      s ? ink_pixels(s, w - 20, 0, w, 125) : -1L);
	if (s)
		cairo_surface_destroy(s);
	err[0] = '\0';
	CHECK(bwap_chart_peers(out("peers.jpg"), &r, err, sizeof(err)) && strstr(err, "FILE.png or FILE.svg") &&
	      access(out("peers.jpg"), F_OK), "peers chart: a .jpg name is refused, no file written (%s)", err);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_bench_chart();
	test_bench_peers_chart();
	test_report_chart();
	test_curve_chart();
	test_search_chart();
	test_peers_parse();
	test_peers_goal_min();
	test_peers_chart();
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd))
			CHECK(0, "clean up %s", dir);
	}
	return tap_done();
}
