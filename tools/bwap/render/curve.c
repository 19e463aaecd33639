// SPDX-License-Identifier: GPL-2.0
/*
 * bwapd's DWP search curve, for 'bwapctl report --search': DWP on the x
 * axis (0 = canonical weights, 1 = only the workers), the tuner's metric
 * on the y axis (lower is better), one dot per measurement joined in the
 * order the tuner took them.  Each search has its own colour (a restart
 * starts a new one); measurements while monitoring a settled optimum are
 * grey, and where the latest search settled is ringed in black.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chart.h"

#define W 900
#define H 560
#define ML 100
#define MR 30
#define MT 100
#define MB 70

int bwap_chart_curve(const char *path, const struct bwap_tuner_point *pts, int n,
		     const struct bwap_tuner_point *settled, const char *metric, const char *source,
		     char *err, size_t errlen)
{
	double lo = INFINITY, hi = -INFINITY, px = NAN, py = NAN, step, lx = 20;
	char buf[400];
	int searches = 0, monitoring = 0;
	struct chart c;

	if (n <= 0) {
		snprintf(err, errlen, "no measurements to plot (has the target finished one step? "
			 "each takes samples x interval seconds)");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		lo = fmin(lo, pts[i].metric);
		hi = fmax(hi, pts[i].metric);
		searches = pts[i].search + 1 > searches ? pts[i].search + 1 : searches;
		monitoring |= pts[i].settled;
	}
	if (hi - lo < 1e-12 * fmax(1, fabs(hi))) {
		hi += fmax(fabs(hi) * 0.05, 1e-9);
		lo -= fmax(fabs(lo) * 0.05, 1e-9);
	}
	step = chart_tick_step(hi - lo, 5);
	lo = floor(lo / step) * step;
	hi = ceil(hi / step) * step;
	if (chart_open(&c, path, W, H, err, errlen))
		return -1;
	snprintf(buf, sizeof(buf), "%d measurements from %s", n, source);
	chart_title(&c, "bwapd: DWP search (lower is better)", buf);
	/* legend: a colour per search, grey for monitoring, the ring */
	for (int s = 0; s < searches && s < 5; s++) {
		snprintf(buf, sizeof(buf), "search %d", s + 1);
		lx = chart_legend(&c, lx, 80, &chart_palette[s], buf);
	}
	if (monitoring)
		lx = chart_legend(&c, lx, 80, &chart_grey, "monitoring the optimum");
	if (settled && settled->search >= 0) {
		cairo_set_source_rgb(c.cr, 0, 0, 0);
		cairo_set_line_width(c.cr, 2);
		cairo_new_sub_path(c.cr);
		cairo_arc(c.cr, lx + 6, 76, 7, 0, 2 * M_PI);
		cairo_stroke(c.cr);
		chart_text(&c, lx + 20, 80, 12, 0, 0, &chart_black, "where it settled");
	}
	for (int i = 0; i <= 10; i++) {
		double x = ML + (W - ML - MR) * i / 10.0;

		chart_line(&c, x, MT, x, H - MB, 1, &chart_light);
		snprintf(buf, sizeof(buf), "%.1f", i / 10.0);
		chart_text(&c, x, H - MB + 18, 11, 0, 0.5, &chart_black, buf);
	}
	chart_text(&c, ML + (W - ML - MR) / 2.0, H - MB + 44, 13, 0, 0.5, &chart_black,
		   "DWP (data-to-worker proximity: 0 = canonical weights, 1 = workers only)");
	for (double v = lo; v <= hi + step / 2; v += step) {
		double y = H - MB - (v - lo) / (hi - lo) * (H - MT - MB);

		chart_line(&c, ML, y, W - MR, y, 1, &chart_light);
		snprintf(buf, sizeof(buf), "%.4g", v);
		chart_text(&c, ML - 8, y + 4, 11, 0, 1, &chart_black, buf);
	}
	snprintf(buf, sizeof(buf), "%.80s", metric && *metric ? metric : "metric");
	chart_text_up(&c, 24, MT + (H - MT - MB) / 2.0, 12, &chart_black, buf);
	chart_line(&c, ML, H - MB, W - MR, H - MB, 1.5, &chart_black);
	chart_line(&c, ML, MT, ML, H - MB, 1.5, &chart_black);
	for (int i = 0; i < n; i++) {
		double x = ML + pts[i].dwp * (W - ML - MR);
		double y = H - MB - (pts[i].metric - lo) / (hi - lo) * (H - MT - MB);
		const struct rgb *col = pts[i].settled ? &chart_grey : &chart_palette[pts[i].search % 5];

		if (!isnan(px))
			chart_line(&c, px, py, x, y, 1.5, col);
		cairo_set_source_rgb(c.cr, col->r, col->g, col->b);
		cairo_new_sub_path(c.cr);
		cairo_arc(c.cr, x, y, 4, 0, 2 * M_PI);
		cairo_fill(c.cr);
		px = x;
		py = y;
	}
	if (settled && settled->search >= 0) {
		double x = ML + settled->dwp * (W - ML - MR);
		double y = H - MB - (settled->metric - lo) / (hi - lo) * (H - MT - MB);

		cairo_set_source_rgb(c.cr, 0, 0, 0);
		cairo_set_line_width(c.cr, 2.5);
		cairo_new_sub_path(c.cr);
		cairo_arc(c.cr, x, y, 9, 0, 2 * M_PI);
		cairo_stroke(c.cr);
	}
	return chart_close(&c, err, errlen);
}
