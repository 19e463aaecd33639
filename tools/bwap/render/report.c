// SPDX-License-Identifier: GPL-2.0
/*
 * 'bwapctl report': the bandwidth matrix as a heatmap (row = CPU node,
 * column = memory node, GB/s in each cell, blue = slowest, red = fastest,
 * with its colour scale) and the canonical weights as a bar chart (share
 * of pages per node, worker nodes orange), side by side.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "chart.h"

#define CELL 56
#define BAR 34
#define CHART_H 280
#define TOP 120

/* t in [0,1] to a blue -> yellow -> red ramp. */
static struct rgb ramp(double t)
{
	struct rgb c;

	t = t < 0 ? 0 : t > 1 ? 1 : t;
	if (t < 0.5) {
		c.r = 0.16 + 1.6 * t;
		c.g = 0.24 + 1.4 * t;
		c.b = 0.63 - 0.8 * t;
	} else {
		c.r = 0.98;
		c.g = 0.94 - 1.5 * (t - 0.5);
		c.b = 0.23 - 0.4 * (t - 0.5);
	}
	return c;
}

int bwap_chart_report(const char *path, const struct bwap_matrix *m, const struct bwap_weights *w,
		      bwap_nodeset workers, char *err, size_t errlen)
{
	static const struct rgb orange = { 0.94, 0.55, 0.12 }, blue = { 0.24, 0.43, 0.78 }, white = { 1, 1, 1 };
	int n = m->nr_nodes, hx = 110, hy = TOP + 30, width, height, cx;
	double lo = INFINITY, hi = 0, smax = 0;
	char text[600], ws[256];
	struct chart c;

	cx = hx + n * CELL + 110;
	width = cx + n * (BAR + 14) + 200;
	if (width < 900)
		width = 900;
	height = hy + (n * CELL > CHART_H ? n * CELL : CHART_H) + 120;
	if (chart_open(&c, path, width, height, err, errlen))
		return -1;
	snprintf(text, sizeof(text), "workers: nodes %s; matrix: %s",
		 workers ? bwap_nodeset_format(workers, ws, sizeof(ws)) : "(none)", m->source);
	chart_title(&c, w ? "BWAP: bandwidth matrix and canonical weights" : "BWAP: bandwidth matrix", text);
	for (int r = 0; r < n; r++)
		for (int col = 0; col < n; col++)
			if (m->bw[r][col] >= 0) {
				lo = fmin(lo, m->bw[r][col]);
				hi = fmax(hi, m->bw[r][col]);
			}
	/* heatmap */
	chart_text(&c, hx, TOP - 10, 14, 1, 0, &chart_black, "Read bandwidth, GB/s");
	chart_text(&c, hx + n * CELL / 2.0, hy - 8, 12, 0, 0.5, &chart_black, "memory node");
	chart_text_up(&c, hx - 40, hy + n * CELL / 2.0, 12, &chart_black, "CPU node (reader)");
	for (int i = 0; i < n; i++) {
		snprintf(text, sizeof(text), "%d", i);
		chart_text(&c, hx + (i + 0.5) * CELL, hy + n * CELL + 16, 12, 0, 0.5, &chart_black, text);
		chart_text(&c, hx - 10, hy + (i + 0.5) * CELL + 4, 12, 0, 1, &chart_black, text);
	}
	for (int r = 0; r < n; r++)
		for (int col = 0; col < n; col++) {
			double x = hx + col * CELL, y = hy + r * CELL;
			struct rgb rgb;

			if (m->bw[r][col] < 0) {
				chart_fill_rect(&c, x + 1, y + 1, CELL - 2, CELL - 2, &chart_light);
				chart_text(&c, x + CELL / 2.0, y + CELL / 2.0 + 4, 12, 0, 0.5, &chart_grey, "unknown");
				continue;
			}
			rgb = ramp(hi > lo ? (m->bw[r][col] - lo) / (hi - lo) : 1);
			chart_fill_rect(&c, x + 1, y + 1, CELL - 2, CELL - 2, &rgb);
			snprintf(text, sizeof(text), "%s%.1f", m->estimated[r][col] ? "~" : "", m->bw[r][col] / 1000);
			chart_text(&c, x + CELL / 2.0, y + CELL / 2.0 + 5, 13, 1, 0.5,
				   rgb.g > 0.6 ? &chart_black : &white, text);
		}
	/* colour scale under the heatmap */
	for (int i = 0; i < 100; i++) {
		struct rgb rgb = ramp(i / 99.0);

		chart_fill_rect(&c, hx + i * n * CELL / 100.0, hy + n * CELL + 30, n * CELL / 100.0 + 0.5, 10, &rgb);
	}
	snprintf(text, sizeof(text), "%.1f", (isfinite(lo) ? lo : 0) / 1000);
	chart_text(&c, hx, hy + n * CELL + 56, 11, 0, 0, &chart_black, text);
	snprintf(text, sizeof(text), "%.1f GB/s", hi / 1000);
	chart_text(&c, hx + n * CELL, hy + n * CELL + 56, 11, 0, 1, &chart_black, text);
	chart_text(&c, hx, hy + n * CELL + 76, 11, 0, 0, &chart_grey, "~ = estimated from SLIT distances");
	if (w) {
		double base = hy + CHART_H, step, top;

		for (int i = 0; i < w->nr_nodes; i++)
			smax = fmax(smax, 100 * w->qshare[i]);
		step = chart_tick_step(smax > 0 ? smax : 1, 5);
		top = ceil((smax > 0 ? smax : 1) / step) * step;
		chart_text(&c, cx, TOP - 10, 14, 1, 0, &chart_black, "Canonical weights: share of pages per node");
		for (double v = 0; v <= top + step / 2; v += step) {
			double y = base - v / top * CHART_H;

			chart_line(&c, cx, y, cx + w->nr_nodes * (BAR + 14), y, 1, &chart_light);
			snprintf(text, sizeof(text), "%g", v);
			chart_text(&c, cx - 6, y + 4, 11, 0, 1, &chart_black, text);
		}
		chart_text_up(&c, cx - 40, base - CHART_H / 2.0, 12, &chart_black, "share of pages, %");
		chart_line(&c, cx, base - CHART_H, cx, base, 1.5, &chart_black);
		chart_line(&c, cx, base, cx + w->nr_nodes * (BAR + 14), base, 1.5, &chart_black);
		for (int i = 0; i < w->nr_nodes; i++) {
			double x = cx + 7 + i * (BAR + 14), h = 100 * w->qshare[i] / top * CHART_H;

			chart_fill_rect(&c, x, base - h, BAR, h, bwap_nodeset_has(workers, i) ? &orange : &blue);
			snprintf(text, sizeof(text), "%.1f", 100 * w->qshare[i]);
			chart_text(&c, x + BAR / 2.0, base - h - 5, 11, 0, 0.5, &chart_black, text);
			snprintf(text, sizeof(text), "%d", i);
			chart_text(&c, x + BAR / 2.0, base + 16, 12, 0, 0.5, &chart_black, text);
			if (bwap_nodeset_has(w->nodes, i)) {
				snprintf(text, sizeof(text), "w=%u", w->w[i]);
				chart_text(&c, x + BAR / 2.0, base + 32, 11, 0, 0.5, &chart_grey, text);
			}
		}
		chart_text(&c, cx + w->nr_nodes * (BAR + 14) / 2.0, base + 52, 12, 0, 0.5, &chart_black,
			   "node (w = its weight)");
		chart_legend(&c, cx + w->nr_nodes * (BAR + 14) + 20, base - CHART_H + 10, &orange, "worker node");
		chart_legend(&c, cx + w->nr_nodes * (BAR + 14) + 20, base - CHART_H + 32, &blue, "other node");
	}
	return chart_close(&c, err, errlen);
}
