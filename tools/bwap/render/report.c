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

#define CELL 44
#define MARGIN 28
#define BAR_W 30
#define CHART_H 220
#define SCALE 2		/* font pixels */

struct canvas {
	int w, h;
	unsigned char *px;
};

/* 3x5 glyphs, one row per nibble (bit 2 = left column). */
static const char glyph_chars[] = "0123456789.%-wn";
static const unsigned char glyphs[][5] = {
	{ 7, 5, 5, 5, 7 }, { 2, 6, 2, 2, 7 }, { 7, 1, 7, 4, 7 }, { 7, 1, 7, 1, 7 },
	{ 5, 5, 7, 1, 1 }, { 7, 4, 7, 1, 7 }, { 7, 4, 7, 5, 7 }, { 7, 1, 1, 1, 1 },
	{ 7, 5, 7, 5, 7 }, { 7, 5, 7, 1, 7 }, { 0, 0, 0, 0, 2 }, { 5, 1, 2, 4, 5 },
	{ 0, 0, 7, 0, 0 }, { 0, 5, 5, 7, 5 }, { 0, 6, 5, 5, 5 },
};

static void put(struct canvas *c, int x, int y, const unsigned char *rgb)
{
	if (x < 0 || y < 0 || x >= c->w || y >= c->h)
		return;
	memcpy(c->px + ((size_t)y * c->w + x) * 3, rgb, 3);
}

static void rect(struct canvas *c, int x0, int y0, int w, int h, const unsigned char *rgb)
{
	for (int y = y0; y < y0 + h; y++)
		for (int x = x0; x < x0 + w; x++)
			put(c, x, y, rgb);
}

static void text(struct canvas *c, int x, int y, const char *s, const unsigned char *rgb)
{
	for (; *s; s++, x += 4 * SCALE) {
		const char *g = strchr(glyph_chars, *s);

		if (!g || !*s)
			continue;
		for (int r = 0; r < 5; r++)
			for (int col = 0; col < 3; col++)
				if (glyphs[g - glyph_chars][r] & (4 >> col))
					rect(c, x + col * SCALE, y + r * SCALE, SCALE, SCALE, rgb);
	}
}

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

int bwap_report_png(const char *path, const struct bwap_matrix *m, const struct bwap_weights *w,
		    bwap_nodeset workers, char *err, size_t errlen)
{
	static const unsigned char white[3] = { 255, 255, 255 }, black[3] = { 0, 0, 0 },
		grey[3] = { 200, 200, 200 }, orange[3] = { 240, 140, 30 }, blue[3] = { 60, 110, 200 };
	int n = m->nr_nodes, heat_w = MARGIN + n * CELL, chart_x = heat_w + 2 * MARGIN;
	double lo = INFINITY, hi = 0, smax = 0;
	struct canvas c;
	char label[32];
	FILE *f;
	int ret;

	c.w = chart_x + n * (BAR_W + 12) + MARGIN;
	c.h = MARGIN + (n * CELL > CHART_H + 40 ? n * CELL : CHART_H + 40) + MARGIN;
	c.px = malloc((size_t)c.w * c.h * 3);
	if (!c.px) {
		snprintf(err, errlen, "out of memory for a %dx%d picture", c.w, c.h);
		return -1;
	}
	memset(c.px, 255, (size_t)c.w * c.h * 3);
	for (int r = 0; r < n; r++)
		for (int col = 0; col < n; col++)
			if (m->bw[r][col] >= 0) {
				lo = fmin(lo, m->bw[r][col]);
				hi = fmax(hi, m->bw[r][col]);
			}
	/* heatmap: node numbers along the top and the left */
	for (int i = 0; i < n; i++) {
		snprintf(label, sizeof(label), "%d", i);
		text(&c, MARGIN + i * CELL + CELL / 2 - 3, MARGIN - 14, label, black);
		text(&c, MARGIN - 14, MARGIN + i * CELL + CELL / 2 - 5, label, black);
	}
	for (int r = 0; r < n; r++) {
		for (int col = 0; col < n; col++) {
			int x = MARGIN + col * CELL, y = MARGIN + r * CELL;
			unsigned char rgb[3];

			if (m->bw[r][col] < 0) {
				rect(&c, x, y, CELL - 2, CELL - 2, grey);
				text(&c, x + 14, y + 16, "-", black);
				continue;
			}
			ramp(hi > lo ? (m->bw[r][col] - lo) / (hi - lo) : 1, rgb);
			rect(&c, x, y, CELL - 2, CELL - 2, rgb);
			snprintf(label, sizeof(label), "%.1f", m->bw[r][col] / 1000);
			text(&c, x + 3, y + 16, label, rgb[1] > 150 ? black : white);
		}
	}
	/* bar chart of the quantised shares */
	if (w) {
		for (int i = 0; i < w->nr_nodes; i++)
			smax = fmax(smax, w->qshare[i]);
		rect(&c, chart_x - 4, MARGIN + CHART_H, w->nr_nodes * (BAR_W + 12) + 4, 2, black);
		for (int i = 0; i < w->nr_nodes; i++) {
			int x = chart_x + i * (BAR_W + 12);
			int h = smax > 0 ? (int)lround(w->qshare[i] / smax * (CHART_H - 20)) : 0;

			rect(&c, x, MARGIN + CHART_H - h, BAR_W, h,
			     bwap_nodeset_has(workers, i) ? orange : blue);
			snprintf(label, sizeof(label), "%.1f", 100 * w->qshare[i]);
			text(&c, x, MARGIN + CHART_H - h - 14, label, black);
			snprintf(label, sizeof(label), "n%d", i);
			text(&c, x + 4, MARGIN + CHART_H + 8, label, black);
		}
	}
	f = fopen(path, "wb");
	if (!f) {
		snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
		free(c.px);
		return -1;
	}
	ret = bwap_png_write(f, c.px, c.w, c.h);
	if (fclose(f) || ret) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		ret = -1;
	}
	free(c.px);
	return ret;
}
