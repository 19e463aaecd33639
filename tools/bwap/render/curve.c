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

#define W 640
#define H 400
#define ML 70		/* left margin: y labels */
#define MR 20
#define MT 20
#define MB 40		/* bottom margin: x labels */
#define FONT 2

struct img {
	unsigned char px[W * H * 3];
};

static void dot(struct img *g, int x, int y, const unsigned char *c)
{
	if (x >= 0 && y >= 0 && x < W && y < H)
		memcpy(g->px + (y * W + x) * 3, c, 3);
}

static void box(struct img *g, int x, int y, int r, const unsigned char *c)
{
	for (int dy = -r; dy <= r; dy++)
		for (int dx = -r; dx <= r; dx++)
			dot(g, x + dx, y + dy, c);
}

static void line(struct img *g, int x0, int y0, int x1, int y1, const unsigned char *c)
{
	int n = abs(x1 - x0) > abs(y1 - y0) ? abs(x1 - x0) : abs(y1 - y0);

	for (int i = 0; i <= n; i++)
		dot(g, x0 + (n ? (x1 - x0) * i / n : 0), y0 + (n ? (y1 - y0) * i / n : 0), c);
}

/* Digits, '.', '-' and 'e' in a 3x5 grid; bit 2 is the left column. */
static void label(struct img *g, int x, int y, const char *s, const unsigned char *c)
{
	static const char chars[] = "0123456789.-e";
	static const unsigned char rows[][5] = {
		{ 7, 5, 5, 5, 7 }, { 2, 6, 2, 2, 7 }, { 7, 1, 7, 4, 7 }, { 7, 1, 7, 1, 7 },
		{ 5, 5, 7, 1, 1 }, { 7, 4, 7, 1, 7 }, { 7, 4, 7, 5, 7 }, { 7, 1, 1, 1, 1 },
		{ 7, 5, 7, 5, 7 }, { 7, 5, 7, 1, 7 }, { 0, 0, 0, 0, 2 }, { 0, 0, 7, 0, 0 },
		{ 0, 7, 5, 6, 7 },
	};

	for (; *s; s++, x += 4 * FONT) {
		const char *p = strchr(chars, *s);

		if (!p)
			continue;
		for (int r = 0; r < 5; r++)
			for (int col = 0; col < 3; col++)
				if (rows[p - chars][r] & (4 >> col))
					for (int a = 0; a < FONT; a++)
						for (int b = 0; b < FONT; b++)
							dot(g, x + col * FONT + a, y + r * FONT + b, c);
	}
}

int bwap_curve_png(const char *path, const struct bwap_tuner_point *pts, int n,
		   const struct bwap_tuner_point *settled, char *err, size_t errlen)
{
	static const unsigned char black[3] = { 0, 0, 0 }, grid[3] = { 225, 225, 225 },
		grey[3] = { 160, 160, 160 };
	static const unsigned char palette[][3] = {
		{ 31, 119, 180 }, { 214, 39, 40 }, { 44, 160, 44 }, { 255, 127, 14 }, { 148, 103, 189 },
	};
	struct img *g;
	double lo = INFINITY, hi = -INFINITY;
	char buf[32];
	FILE *f;
	int px = -1, py = -1, ret;

	if (n <= 0) {
		snprintf(err, errlen, "no measurements to plot (has the target finished one step? "
			 "each takes samples x interval seconds)");
		return -1;
	}
	g = malloc(sizeof(*g));
	if (!g) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	memset(g->px, 255, sizeof(g->px));
	for (int i = 0; i < n; i++) {
		lo = fmin(lo, pts[i].metric);
		hi = fmax(hi, pts[i].metric);
	}
	if (hi - lo < 1e-12 * fmax(1, fabs(hi))) {
		hi += fmax(fabs(hi) * 0.05, 1e-9);
		lo -= fmax(fabs(lo) * 0.05, 1e-9);
	} else {
		double pad = (hi - lo) * 0.05;	/* keep the dots off the frame */

		hi += pad;
		lo -= pad;
	}
	/* grid every 0.1 DWP and at quarters of the metric range */
	for (int i = 0; i <= 10; i++) {
		int x = ML + (W - ML - MR) * i / 10;

		line(g, x, MT, x, H - MB, grid);
		if (i % 5 == 0) {
			snprintf(buf, sizeof(buf), "%.1f", i / 10.0);
			label(g, x - 10, H - MB + 10, buf, black);
		}
	}
	for (int i = 0; i <= 4; i++) {
		int y = MT + (H - MT - MB) * i / 4;

		line(g, ML, y, W - MR, y, grid);
		snprintf(buf, sizeof(buf), "%.4g", hi - (hi - lo) * i / 4);
		label(g, 4, y - 5, buf, black);
	}
	line(g, ML, H - MB, W - MR, H - MB, black);
	line(g, ML, MT, ML, H - MB, black);
	for (int i = 0; i < n; i++) {
		int x = ML + (int)lround(pts[i].dwp * (W - ML - MR));
		int y = MT + (int)lround((hi - pts[i].metric) / (hi - lo) * (H - MT - MB));
		const unsigned char *c = pts[i].settled ? grey : palette[pts[i].search % 5];

		if (px >= 0)
			line(g, px, py, x, y, c);
		box(g, x, y, 3, c);
		px = x;
		py = y;
	}
	if (settled && settled->search >= 0) {
		int x = ML + (int)lround(settled->dwp * (W - ML - MR));
		int y = MT + (int)lround((hi - settled->metric) / (hi - lo) * (H - MT - MB));

		box(g, x, y, 7, black);
		box(g, x, y, 5, palette[settled->search % 5]);
	}
	f = fopen(path, "wb");
	if (!f) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		free(g);
		return -1;
	}
	ret = bwap_png_write(f, g->px, W, H);
	if (fclose(f) || ret) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		ret = -1;
	}
	free(g);
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
