// SPDX-License-Identifier: GPL-2.0
/*
 * 'bwapctl report' pictures: the bandwidth matrix as a heatmap (row = CPU
 * node, column = memory node, dark blue = slowest, red = fastest, numbers
 * in GB/s) and the weights as a bar chart (worker nodes orange, others
 * blue, percentages on top), side by side in one PNG.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"

#define CELL 48
#define MARGIN 24
#define BAR_W 30
#define CHART_H 240
#define SCALE 2		/* font pixels per glyph pixel: glyphs are 6x10 */
#define LINE 16		/* text line height */

/* t in [0,1] to a blue -> yellow -> red ramp. */
static void ramp(double t, unsigned char *rgb)
{
	t = t < 0 ? 0 : t > 1 ? 1 : t;
	if (t < 0.5) {
		rgb[0] = (unsigned char)(40 + 430 * t);
		rgb[1] = (unsigned char)(60 + 360 * t);
		rgb[2] = (unsigned char)(160 - 200 * t);
	} else {
		rgb[0] = 255;
		rgb[1] = (unsigned char)(240 - 400 * (t - 0.5));
		rgb[2] = (unsigned char)(60 - 100 * (t - 0.5));
	}
}

/*
 * Layout, top to bottom: title; workers and matrix source; then the
 * heatmap (left) with its axis names and unit, and the bar chart (right)
 * with its axes and a legend.
 */
int bwap_report_png(const char *path, const struct bwap_matrix *m, const struct bwap_weights *w,
		    bwap_nodeset workers, char *err, size_t errlen)
{
	static const unsigned char white[3] = { 255, 255, 255 }, black[3] = { 0, 0, 0 },
		grey[3] = { 200, 200, 200 }, orange[3] = { 240, 140, 30 }, blue[3] = { 60, 110, 200 };
	int n = m->nr_nodes, top = MARGIN + 3 * LINE, heat_x = MARGIN + 3 * LINE;
	int heat_w = n * CELL, chart_x = heat_x + heat_w + 5 * LINE, chart_w = n * (BAR_W + 12);
	int body_h, ret;
	double lo = INFINITY, hi = 0, smax = 0;
	struct bwap_canvas c;
	char label[64], line[600], ws[256];

	body_h = 2 * LINE + (n * CELL > CHART_H ? n * CELL : CHART_H) + 4 * LINE;
	snprintf(line, sizeof(line), "WORKERS: NODES %s   MATRIX: %s",
		 workers ? bwap_nodeset_format(workers, ws, sizeof(ws)) : "(NONE)", m->source);
	{
		int need = chart_x + chart_w + 16 * 4 * SCALE + MARGIN, text_w = MARGIN + (int)strlen(line) * 4 * SCALE + MARGIN;

		if (bwap_canvas_init(&c, need > text_w ? need : text_w, top + body_h + MARGIN, SCALE)) {
			snprintf(err, errlen, "out of memory for a report picture");
			return -1;
		}
	}
	bwap_canvas_text(&c, MARGIN, MARGIN, w ? "BWAP: BANDWIDTH MATRIX AND CANONICAL WEIGHTS" :
			 "BWAP: BANDWIDTH MATRIX", black);
	bwap_canvas_text(&c, MARGIN, MARGIN + LINE + 4, line, black);
	for (int r = 0; r < n; r++)
		for (int col = 0; col < n; col++)
			if (m->bw[r][col] >= 0) {
				lo = fmin(lo, m->bw[r][col]);
				hi = fmax(hi, m->bw[r][col]);
			}
	/* heatmap: columns are memory nodes, rows CPU nodes; cells in GB/s */
	bwap_canvas_text(&c, heat_x, top, "MEMORY NODE", black);
	bwap_canvas_text_up(&c, MARGIN, top + 2 * LINE + n * CELL / 2 + 30, "CPU NODE", black);
	for (int i = 0; i < n; i++) {
		snprintf(label, sizeof(label), "%d", i);
		bwap_canvas_text(&c, heat_x + i * CELL + CELL / 2 - 3, top + LINE + 2, label, black);
		bwap_canvas_text(&c, heat_x - 16, top + 2 * LINE + i * CELL + CELL / 2 - 5, label, black);
	}
	for (int r = 0; r < n; r++) {
		for (int col = 0; col < n; col++) {
			int x = heat_x + col * CELL, y = top + 2 * LINE + r * CELL;
			unsigned char rgb[3];

			if (m->bw[r][col] < 0) {
				bwap_canvas_rect(&c, x, y, CELL - 2, CELL - 2, grey);
				bwap_canvas_text(&c, x + 18, y + 18, "-", black);
				continue;
			}
			ramp(hi > lo ? (m->bw[r][col] - lo) / (hi - lo) : 1, rgb);
			bwap_canvas_rect(&c, x, y, CELL - 2, CELL - 2, rgb);
			snprintf(label, sizeof(label), "%.1f", m->bw[r][col] / 1000);
			bwap_canvas_text(&c, x + 4, y + 18, label, rgb[1] > 150 ? black : white);
		}
	}
	bwap_canvas_text(&c, heat_x, top + 2 * LINE + n * CELL + 8, "READ BANDWIDTH, GB/S", black);
	bwap_canvas_text(&c, heat_x, top + 3 * LINE + n * CELL + 8, "(CPU NODE READING MEMORY NODE)", black);
	/* bar chart of the quantised shares, with axes and a legend */
	if (w) {
		int base = top + 2 * LINE + CHART_H;

		for (int i = 0; i < w->nr_nodes; i++)
			smax = fmax(smax, w->qshare[i]);
		bwap_canvas_text(&c, chart_x, top, "SHARE OF PAGES PER NODE, %", black);
		bwap_canvas_rect(&c, chart_x - 6, top + 2 * LINE, 2, CHART_H, black);
		bwap_canvas_rect(&c, chart_x - 6, base, chart_w + 6, 2, black);
		for (int i = 0; i < w->nr_nodes; i++) {
			int x = chart_x + i * (BAR_W + 12);
			int h = smax > 0 ? (int)lround(w->qshare[i] / smax * (CHART_H - 20)) : 0;

			bwap_canvas_rect(&c, x, base - h, BAR_W, h, bwap_nodeset_has(workers, i) ? orange : blue);
			snprintf(label, sizeof(label), "%.1f", 100 * w->qshare[i]);
			bwap_canvas_text(&c, x, base - h - 14, label, black);
			snprintf(label, sizeof(label), "%d", i);
			bwap_canvas_text(&c, x + BAR_W / 2 - 3, base + 8, label, black);
			snprintf(label, sizeof(label), "W%u", w->w[i]);
			bwap_canvas_text(&c, x, base + 8 + LINE, bwap_nodeset_has(w->nodes, i) ? label : "", black);
		}
		bwap_canvas_text(&c, chart_x, base + 8 + 2 * LINE, "NODE (W = WEIGHT)", black);
		/* legend, right of the bars */
		bwap_canvas_rect(&c, chart_x + chart_w + 12, top + 2 * LINE, 12, 12, orange);
		bwap_canvas_text(&c, chart_x + chart_w + 30, top + 2 * LINE + 1, "WORKER NODE", black);
		bwap_canvas_rect(&c, chart_x + chart_w + 12, top + 3 * LINE + 4, 12, 12, blue);
		bwap_canvas_text(&c, chart_x + chart_w + 30, top + 3 * LINE + 5, "OTHER NODE", black);
	}
	ret = bwap_canvas_write_png(&c, path, err, errlen);
	bwap_canvas_free(&c);
	return ret;
}
