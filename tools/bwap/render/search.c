// SPDX-License-Identifier: GPL-2.0
/*
 * 'bwapctl search -o' and 'bwapctl report --from results.json': the best
 * measured speedup over the baseline in each cell of page policy (rows)
 * x page NUMA degree (columns), green above 1, red below, grey where
 * nothing was run (pruned, over budget, or folded into an equal point of
 * another cell); the best cell outlined.  Drawn from search's JSON.
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <json-c/json.h>

#include "chart.h"

#define CELL_W 84
#define CELL_H 44
#define GX 190
#define GY 130

char *bwap_score_name(const char *score, char *buf, size_t len)
{
	size_t n;

	if (!score || !*score || !strcmp(score, "wall seconds") || !strcmp(score, "wall time")) {
		snprintf(buf, len, "wall time, s");
		return buf;
	}
	/* 'GB/s: ([0-9.]+)' -> "GB/s": the words before the number it captures */
	n = strcspn(score, "([\\");
	while (n && (isspace((unsigned char)score[n - 1]) || score[n - 1] == ':' || score[n - 1] == '='))
		n--;
	snprintf(buf, len, "%.*s", (int)(n ? n : strlen(score)), score);
	return buf;
}

static struct rgb shade(double sp, double lo, double hi)
{
	struct rgb c;
	double t;

	if (sp >= 1) {
		t = hi > 1 ? (sp - 1) / (hi - 1) : 1;
		c = (struct rgb){ 0.92 - 0.75 * t, 0.96 - 0.27 * t, 0.92 - 0.75 * t };
	} else {
		t = lo < 1 ? (1 - sp) / (1 - lo) : 1;
		c = (struct rgb){ 0.98 - 0.08 * t, 0.90 - 0.59 * t, 0.90 - 0.59 * t };
	}
	return c;
}

int bwap_chart_search(const char *path, json_object *result, char *err, size_t errlen)
{
	static const struct rgb outline = { 0, 0, 0 };
	double cell[BWAP_NR_PAGE_POLICIES][BWAP_MAX_NODES + 1], lo = 1, hi = 1;
	int n = 0, bp = -1, bd = -1, width, height;
	json_object *pts, *v;
	const char *score = NULL, *better = NULL;
	char text[512], name[128];
	struct chart c;

	if (!json_object_object_get_ex(result, "points", &pts) || !json_object_is_type(pts, json_type_array)) {
		snprintf(err, errlen, "not a 'bwapctl search' result: no \"points\"");
		return -1;
	}
	if (json_object_object_get_ex(result, "score", &v))
		score = json_object_get_string(v);
	if (json_object_object_get_ex(result, "better", &v))
		better = json_object_get_string(v);
	for (int p = 0; p < BWAP_NR_PAGE_POLICIES; p++)
		for (int d = 0; d <= BWAP_MAX_NODES; d++)
			cell[p][d] = NAN;
	for (size_t i = 0; i < json_object_array_length(pts); i++) {
		json_object *pt = json_object_array_get_idx(pts, i), *pol, *pnd, *sp, *w;
		int policy = -1, d;
		double s;

		if (json_object_object_get_ex(pt, "weights", &w) && json_object_is_type(w, json_type_array) &&
		    (int)json_object_array_length(w) > n)
			n = json_object_array_length(w);
		if (!json_object_object_get_ex(pt, "policy", &pol) || !json_object_object_get_ex(pt, "pnd", &pnd) ||
		    !json_object_object_get_ex(pt, "speedup", &sp))
			continue;
		for (int p = 0; p < BWAP_NR_PAGE_POLICIES; p++)
			if (!strcmp(json_object_get_string(pol), bwap_page_policy_name[p]))
				policy = p;
		d = json_object_get_int(pnd);
		s = json_object_get_double(sp);
		if (policy < 0 || d < 1 || d > BWAP_MAX_NODES || !isfinite(s) || s <= 0)
			continue;
		if (isnan(cell[policy][d]) || s > cell[policy][d])
			cell[policy][d] = s;
		lo = fmin(lo, s);
		if (bp < 0 || s > hi) {
			hi = fmax(hi, s);
			bp = policy;
			bd = d;
		}
	}
	if (n < 1) {
		snprintf(err, errlen, "the search result has no points with weights: nothing to draw");
		return -1;
	}
	width = GX + n * CELL_W + 40;
	if (width < 900)
		width = 900;
	height = GY + BWAP_NR_PAGE_POLICIES * CELL_H + 120;
	if (chart_open(&c, path, width, height, err, errlen))
		return -1;
	snprintf(text, sizeof(text), "score: %s (%s is better); baseline: first-touch, scatter, all CPUs",
		 bwap_score_name(score, name, sizeof(name)), better ? better : "lower");
	chart_title(&c, "bwapctl search: best speedup over the baseline", text);
	chart_text(&c, GX + n * CELL_W / 2.0, GY - 30, 13, 0, 0.5, &chart_black,
		   "page NUMA degree (nodes that may hold pages)");
	chart_text_up(&c, 24, GY + BWAP_NR_PAGE_POLICIES * CELL_H / 2.0, 13, &chart_black, "page policy");
	for (int d = 1; d <= n; d++) {
		snprintf(text, sizeof(text), "%d", d);
		chart_text(&c, GX + (d - 0.5) * CELL_W, GY - 8, 12, 0, 0.5, &chart_black, text);
	}
	for (int p = 0; p < BWAP_NR_PAGE_POLICIES; p++) {
		double y = GY + p * CELL_H;

		chart_text(&c, GX - 10, y + CELL_H / 2.0 + 4, 12, 0, 1, &chart_black, bwap_page_policy_name[p]);
		for (int d = 1; d <= n; d++) {
			double x = GX + (d - 1) * CELL_W;
			struct rgb rgb;

			if (isnan(cell[p][d])) {
				chart_fill_rect(&c, x + 1, y + 1, CELL_W - 2, CELL_H - 2, &chart_light);
				continue;
			}
			rgb = shade(cell[p][d], lo, hi);
			chart_fill_rect(&c, x + 1, y + 1, CELL_W - 2, CELL_H - 2, &rgb);
			if (p == bp && d == bd)
				chart_stroke_rect(&c, x + 2.5, y + 2.5, CELL_W - 5, CELL_H - 5, 3, &outline);
			snprintf(text, sizeof(text), "%.2fx", cell[p][d]);
			chart_text(&c, x + CELL_W / 2.0, y + CELL_H / 2.0 + 5, 13, p == bp && d == bd, 0.5,
				   &chart_black, text);
		}
	}
	{
		double y = GY + BWAP_NR_PAGE_POLICIES * CELL_H + 34, x = 20;
		struct rgb g = shade(hi, lo, hi), r = shade(lo, lo, hi);

		x = chart_legend(&c, x, y, &g, "faster than the baseline");
		x = chart_legend(&c, x, y, &r, "slower");
		chart_legend(&c, x, y, &chart_light, "not run: pruned, over budget, or the same placement as another cell");
		chart_text(&c, 20, y + 24, 12, 0, 0, &chart_grey,
			   "cell = best over thread sets and counts; outlined = best; first-touch and locality: "
			   "page degree = thread degree");
	}
	return chart_close(&c, err, errlen);
}
