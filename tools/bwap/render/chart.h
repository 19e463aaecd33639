/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Drawing helpers the charts in render/ share, over cairo: a PNG or SVG
 * surface written whole or not at all, text in DejaVu Sans, titles, axes
 * with ticks, and legend entries.  Private to render/; the charts' entry
 * points are in render.h.
 */
#ifndef BWAP_CHART_H
#define BWAP_CHART_H

#include <cairo.h>

#include "render.h"

#define CHART_FONT "DejaVu Sans"

struct chart {
	cairo_surface_t *surface;
	cairo_t *cr;
	int w, h;
	enum bwap_chart_format format;
	char path[4096], tmp[4200];
};

/* Colours as 0..1 RGB. */
struct rgb {
	double r, g, b;
};
extern const struct rgb chart_palette[10];
extern const struct rgb chart_black, chart_grey, chart_light;

/* A white w x h chart bound for path (.png or .svg); 0 or -1 with err. */
int chart_open(struct chart *c, const char *path, int w, int h, char *err, size_t errlen);
/* Write it (temporary file, then rename) and free it; 0 or -1 with err. */
int chart_close(struct chart *c, char *err, size_t errlen);
/* Free without writing. */
void chart_abort(struct chart *c);

/*
 * Text at (x, y), the baseline; align 0 left, 0.5 centred, 1 right;
 * returns its width.  chart_text_up turns it to read upwards (y axis names).
 */
double chart_text(struct chart *c, double x, double y, double size, int bold, double align,
		  const struct rgb *col, const char *text);
void chart_text_up(struct chart *c, double x, double y, double size, const struct rgb *col, const char *text);
double chart_text_width(struct chart *c, double size, int bold, const char *text);
/* Title (bold) and a subtitle line under it, at the top left. */
void chart_title(struct chart *c, const char *title, const char *subtitle);
void chart_fill_rect(struct chart *c, double x, double y, double w, double h, const struct rgb *col);
void chart_stroke_rect(struct chart *c, double x, double y, double w, double h, double lw, const struct rgb *col);
void chart_line(struct chart *c, double x0, double y0, double x1, double y1, double lw, const struct rgb *col);
/* A legend entry: a swatch and its text; returns the x after it. */
double chart_legend(struct chart *c, double x, double y, const struct rgb *col, const char *text);
/* Nice tick step for a range, about n ticks. */
double chart_tick_step(double range, int n);

#endif /* BWAP_CHART_H */
