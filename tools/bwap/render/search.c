// SPDX-License-Identifier: GPL-2.0
/*
 * 'bwapctl search -o': the best measured speedup over the baseline in
 * each cell of page policy (rows) x page NUMA degree (columns), green
 * above 1, red below, grey where nothing was run (pruned, over budget, or
 * folded into an equal point of another cell); the best cell ringed.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "render.h"

#define CELL_W 72
#define CELL_H 40
#define MARGIN 24
#define SCALE 2
#define LINE 16
#define LABEL_W (14 * 4 * SCALE)

static void shade(double sp, double lo, double hi, unsigned char *rgb)
{
	double t;

	if (sp >= 1) {
		t = hi > 1 ? (sp - 1) / (hi - 1) : 1;
		rgb[0] = (unsigned char)(235 - 190 * t);
		rgb[1] = (unsigned char)(245 - 70 * t);
		rgb[2] = (unsigned char)(235 - 190 * t);
	} else {
		t = lo < 1 ? (1 - sp) / (1 - lo) : 1;
		rgb[0] = (unsigned char)(250 - 20 * t);
		rgb[1] = (unsigned char)(230 - 150 * t);
		rgb[2] = (unsigned char)(230 - 150 * t);
	}
}

int bwap_search_png(const char *path, const struct bwap_search_space *s, const char *score_name,
		    char *err, size_t errlen)
{
	static const unsigned char black[3] = { 0 }, grey[3] = { 200, 200, 200 }, white[3] = { 255, 255, 255 };
	double cell[BWAP_NR_PAGE_POLICIES][BWAP_MAX_NODES + 1], lo = 1, hi = 1;
	int n = s->nr_nodes, gx = MARGIN + LINE + LABEL_W, gy = MARGIN + 4 * LINE, bp = -1, bd = -1;
	int width, height, ret;
	struct bwap_canvas c;
	char text[256];

	for (int p = 0; p < BWAP_NR_PAGE_POLICIES; p++)
		for (int d = 0; d <= n; d++)
			cell[p][d] = NAN;
	for (int i = 0; i < s->nr; i++) {
		const struct bwap_search_point *pt = &s->pt[i];
		double sp = bwap_search_speedup(s, pt);

		if (!isfinite(sp) || pt->page_degree < 1 || pt->page_degree > n)
			continue;
		if (isnan(cell[pt->policy][pt->page_degree]) || sp > cell[pt->policy][pt->page_degree])
			cell[pt->policy][pt->page_degree] = sp;
		lo = fmin(lo, sp);
		if (sp > hi || bp < 0) {
			hi = fmax(hi, sp);
			if (sp >= hi) {
				bp = pt->policy;
				bd = pt->page_degree;
			}
		}
	}
	width = gx + n * CELL_W + MARGIN;
	if (width < 1000)
		width = 1000;
	height = gy + LINE + BWAP_NR_PAGE_POLICIES * CELL_H + 4 * LINE + MARGIN;
	if (bwap_canvas_init(&c, width, height, SCALE)) {
		snprintf(err, errlen, "out of memory for the search picture");
		return -1;
	}
	bwap_canvas_text(&c, MARGIN, MARGIN, "BWAPCTL SEARCH: BEST SPEEDUP OVER THE BASELINE", black);
	snprintf(text, sizeof(text), "SCORE: %.60s   BASELINE: FIRST-TOUCH, SCATTER, ALL CPUS", score_name);
	bwap_canvas_text(&c, MARGIN, MARGIN + LINE + 4, text, black);
	bwap_canvas_text(&c, gx, gy - LINE, "PAGE NUMA DEGREE (PND)", black);
	bwap_canvas_text_up(&c, MARGIN, gy + LINE + BWAP_NR_PAGE_POLICIES * CELL_H / 2 + 60, "PAGE POLICY", black);
	for (int d = 1; d <= n; d++) {
		snprintf(text, sizeof(text), "%d", d);
		bwap_canvas_text(&c, gx + (d - 1) * CELL_W + CELL_W / 2 - 4, gy + 2, text, black);
	}
	for (int p = 0; p < BWAP_NR_PAGE_POLICIES; p++) {
		int y = gy + LINE + p * CELL_H;

		bwap_canvas_text(&c, MARGIN + LINE, y + CELL_H / 2 - 5, bwap_page_policy_name[p], black);
		for (int d = 1; d <= n; d++) {
			int x = gx + (d - 1) * CELL_W;
			unsigned char rgb[3];

			if (isnan(cell[p][d])) {
				bwap_canvas_rect(&c, x + 1, y + 1, CELL_W - 2, CELL_H - 2, grey);
				continue;
			}
			shade(cell[p][d], lo, hi, rgb);
			bwap_canvas_rect(&c, x + 1, y + 1, CELL_W - 2, CELL_H - 2, rgb);
			if (p == bp && d == bd) {
				bwap_canvas_rect(&c, x + 1, y + 1, CELL_W - 2, 3, black);
				bwap_canvas_rect(&c, x + 1, y + CELL_H - 4, CELL_W - 2, 3, black);
				bwap_canvas_rect(&c, x + 1, y + 1, 3, CELL_H - 2, black);
				bwap_canvas_rect(&c, x + CELL_W - 4, y + 1, 3, CELL_H - 2, black);
			}
			snprintf(text, sizeof(text), "%.2f", cell[p][d]);
			bwap_canvas_text(&c, x + CELL_W / 2 - bwap_canvas_text_width(&c, text) / 2,
					 y + CELL_H / 2 - 5, text, black);
		}
	}
	{
		int y = gy + LINE + BWAP_NR_PAGE_POLICIES * CELL_H + LINE;
		unsigned char g[3], r[3];

		shade(hi, lo, hi, g);
		shade(lo, lo, hi, r);
		bwap_canvas_rect(&c, MARGIN, y, 14, 10, g);
		bwap_canvas_text(&c, MARGIN + 20, y, "FASTER THAN THE BASELINE", black);
		bwap_canvas_rect(&c, MARGIN + 260, y, 14, 10, r);
		bwap_canvas_text(&c, MARGIN + 280, y, "SLOWER", black);
		bwap_canvas_rect(&c, MARGIN + 360, y, 14, 10, grey);
		bwap_canvas_text(&c, MARGIN + 380, y, "NOT RUN: PRUNED, OVER BUDGET, OR THE SAME PLACEMENT AS ANOTHER CELL", black);
		bwap_canvas_text(&c, MARGIN, y + LINE + 4,
				 "CELL = BEST OVER THREAD SETS AND COUNTS, RINGED = BEST, FIRST-TOUCH AND LOCALITY: PND = TND",
				 black);
	}
	(void)white;
	ret = bwap_canvas_write_png(&c, path, err, errlen);
	bwap_canvas_free(&c);
	return ret;
}
