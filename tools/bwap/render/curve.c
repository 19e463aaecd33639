// SPDX-License-Identifier: GPL-2.0
/*
 * The DWP search curve as a PNG, for 'bwapctl report --search': DWP on the
 * x axis (0 left, 1 right), the metric on the y axis (lower is better,
 * bottom = lowest seen), one dot per measurement joined in the order the
 * tuner took them.  Each search has its own colour (a restart starts a
 * new one); measurements taken while monitoring a settled optimum are
 * grey, and where the latest search settled is ringed in black.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render.h"

#define W 720
#define H 460
#define ML 90		/* left margin: y labels and the y axis name */
#define MR 20
#define MT 70		/* top margin: title, source, legend */
#define MB 56		/* bottom margin: x labels and the x axis name */
#define FONT 2

int bwap_curve_png(const char *path, const struct bwap_tuner_point *pts, int n,
		   const struct bwap_tuner_point *settled, const char *metric, const char *source,
		   char *err, size_t errlen)
{
	static const unsigned char black[3] = { 0, 0, 0 }, grid[3] = { 225, 225, 225 },
		grey[3] = { 160, 160, 160 };
	static const unsigned char palette[][3] = {
		{ 31, 119, 180 }, { 214, 39, 40 }, { 44, 160, 44 }, { 255, 127, 14 }, { 148, 103, 189 },
	};
	struct bwap_canvas g;
	double lo = INFINITY, hi = -INFINITY;
	char buf[300];
	int px = -1, py = -1, ret, searches = 0;

	if (n <= 0) {
		snprintf(err, errlen, "no measurements to plot (has the target finished one step? "
			 "each takes samples x interval seconds)");
		return -1;
	}
	if (bwap_canvas_init(&g, W, H, FONT)) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int i = 0; i < n; i++) {
		lo = fmin(lo, pts[i].metric);
		hi = fmax(hi, pts[i].metric);
		searches = pts[i].search + 1 > searches ? pts[i].search + 1 : searches;
	}
	if (hi - lo < 1e-12 * fmax(1, fabs(hi))) {
		hi += fmax(fabs(hi) * 0.05, 1e-9);
		lo -= fmax(fabs(lo) * 0.05, 1e-9);
	} else {
		double pad = (hi - lo) * 0.05;	/* keep the dots off the frame */

		hi += pad;
		lo -= pad;
	}
	bwap_canvas_text(&g, 10, 8, "BWAPD: DWP SEARCH (LOWER IS BETTER)", black);
	snprintf(buf, sizeof(buf), "%d MEASUREMENTS FROM %s", n, source);
	bwap_canvas_text(&g, 10, 24, buf, black);
	/* legend: one colour per search, grey for monitoring, the ring where it settled */
	for (int s = 0; s < searches && s < 5; s++) {
		bwap_canvas_rect(&g, 10 + s * 110, 44, 10, 10, palette[s]);
		snprintf(buf, sizeof(buf), "SEARCH %d", s + 1);
		bwap_canvas_text(&g, 24 + s * 110, 44, buf, black);
	}
	bwap_canvas_rect(&g, 10 + 5 * 110 - 40, 44, 10, 10, grey);
	bwap_canvas_text(&g, 24 + 5 * 110 - 40, 44, "SETTLED", black);
	/* grid every 0.1 DWP and at quarters of the metric range */
	for (int i = 0; i <= 10; i++) {
		int x = ML + (W - ML - MR) * i / 10;

		bwap_canvas_line(&g, x, MT, x, H - MB, grid);
		if (i % 5 == 0) {
			snprintf(buf, sizeof(buf), "%.1f", i / 10.0);
			bwap_canvas_text(&g, x - 10, H - MB + 8, buf, black);
		}
	}
	bwap_canvas_text(&g, ML + 120, H - MB + 28, "DWP (DATA-TO-WORKER PROXIMITY, 0 = CANONICAL)", black);
	for (int i = 0; i <= 4; i++) {
		int y = MT + (H - MT - MB) * i / 4;

		bwap_canvas_line(&g, ML, y, W - MR, y, grid);
		snprintf(buf, sizeof(buf), "%.4g", hi - (hi - lo) * i / 4);
		bwap_canvas_text(&g, 26, y - 5, buf, black);
	}
	snprintf(buf, sizeof(buf), "%.40s", metric && *metric ? metric : "METRIC");
	bwap_canvas_text_up(&g, 6, H - MB - 10, buf, black);
	bwap_canvas_line(&g, ML, H - MB, W - MR, H - MB, black);
	bwap_canvas_line(&g, ML, MT, ML, H - MB, black);
	for (int i = 0; i < n; i++) {
		int x = ML + (int)lround(pts[i].dwp * (W - ML - MR));
		int y = MT + (int)lround((hi - pts[i].metric) / (hi - lo) * (H - MT - MB));
		const unsigned char *c = pts[i].settled ? grey : palette[pts[i].search % 5];

		if (px >= 0)
			bwap_canvas_line(&g, px, py, x, y, c);
		bwap_canvas_rect(&g, x - 3, y - 3, 7, 7, c);
		px = x;
		py = y;
	}
	if (settled && settled->search >= 0) {
		int x = ML + (int)lround(settled->dwp * (W - ML - MR));
		int y = MT + (int)lround((hi - settled->metric) / (hi - lo) * (H - MT - MB));

		bwap_canvas_rect(&g, x - 7, y - 7, 15, 15, black);
		bwap_canvas_rect(&g, x - 5, y - 5, 11, 11, palette[settled->search % 5]);
	}
	ret = bwap_canvas_write_png(&g, path, err, errlen);
	bwap_canvas_free(&g);
	return ret;
}

int bwap_curve_read_log(const char *path, struct bwap_tuner_point *pts, int max,
			struct bwap_tuner_point *settled, char *metric_name, size_t namelen,
			char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char line_buf[512];
	int n = 0;

	if (!f) {
		snprintf(err, errlen, "cannot open search log %s: %s", path, strerror(errno));
		return -1;
	}
	metric_name[0] = '\0';
	settled->search = -1;
	while (fgets(line_buf, sizeof(line_buf), f)) {
		struct bwap_tuner_point p;

		if (!strncmp(line_buf, "# metric: ", 10)) {
			snprintf(metric_name, namelen, "%s", line_buf + 10);
			metric_name[strcspn(metric_name, "\n")] = '\0';
		} else if (sscanf(line_buf, "settle %lf %lf %d", &p.dwp, &p.metric, &p.search) == 3) {
			p.settled = 1;
			*settled = p;
		} else if (sscanf(line_buf, "point %lf %lf %d %d", &p.dwp, &p.metric, &p.search, &p.settled) == 4) {
			if (n < max)
				pts[n++] = p;
			else {
				memmove(pts, pts + 1, (max - 1) * sizeof(*pts));
				pts[max - 1] = p;
			}
		}
	}
	fclose(f);
	return n;
}
