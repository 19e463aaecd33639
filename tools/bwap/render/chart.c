// SPDX-License-Identifier: GPL-2.0
/* What the cairo charts share: surfaces, text, lines, legends (chart.h). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cairo-svg.h>

#include "chart.h"

/* Tableau's ten: told apart by most readers, colour-blind ones included. */
const struct rgb chart_palette[10] = {
	{ 0.12, 0.47, 0.71 }, { 1.00, 0.50, 0.05 }, { 0.17, 0.63, 0.17 }, { 0.84, 0.15, 0.16 },
	{ 0.58, 0.40, 0.74 }, { 0.55, 0.34, 0.29 }, { 0.89, 0.47, 0.76 }, { 0.50, 0.50, 0.50 },
	{ 0.74, 0.74, 0.13 }, { 0.09, 0.75, 0.81 },
};
const struct rgb chart_black = { 0, 0, 0 }, chart_grey = { 0.55, 0.55, 0.55 }, chart_light = { 0.88, 0.88, 0.88 };

int bwap_charts_available(char *err, size_t errlen)
{
	return 0;
}

int chart_open(struct chart *c, const char *path, int w, int h, char *err, size_t errlen)
{
	int fmt = bwap_chart_format(path, err, errlen);

	memset(c, 0, sizeof(*c));
	if (fmt < 0)
		return -1;
	c->format = fmt;
	c->w = w;
	c->h = h;
	snprintf(c->path, sizeof(c->path), "%s", path);
	snprintf(c->tmp, sizeof(c->tmp), "%s.tmp%d", path, (int)getpid());
	c->surface = fmt == BWAP_CHART_SVG ? cairo_svg_surface_create(c->tmp, w, h) :
		     cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
	if (cairo_surface_status(c->surface) != CAIRO_STATUS_SUCCESS) {
		snprintf(err, errlen, "cannot make a %dx%d chart for %s: %s", w, h, path,
			 cairo_status_to_string(cairo_surface_status(c->surface)));
		cairo_surface_destroy(c->surface);
		unlink(c->tmp);
		return -1;
	}
	c->cr = cairo_create(c->surface);
	cairo_set_source_rgb(c->cr, 1, 1, 1);
	cairo_paint(c->cr);
	return 0;
}

void chart_abort(struct chart *c)
{
	cairo_destroy(c->cr);
	cairo_surface_destroy(c->surface);
	unlink(c->tmp);
}

int chart_close(struct chart *c, char *err, size_t errlen)
{
	cairo_status_t st = cairo_status(c->cr);

	if (st == CAIRO_STATUS_SUCCESS && c->format == BWAP_CHART_PNG)
		st = cairo_surface_write_to_png(c->surface, c->tmp);
	cairo_destroy(c->cr);
	cairo_surface_finish(c->surface);
	if (st == CAIRO_STATUS_SUCCESS)
		st = cairo_surface_status(c->surface);
	cairo_surface_destroy(c->surface);
	if (st != CAIRO_STATUS_SUCCESS) {
		snprintf(err, errlen, "cannot write %s: %s", c->path, cairo_status_to_string(st));
		unlink(c->tmp);
		return -1;
	}
	if (rename(c->tmp, c->path)) {
		snprintf(err, errlen, "cannot write %s: %s", c->path, strerror(errno));
		unlink(c->tmp);
		return -1;
	}
	return 0;
}

static void set_font(struct chart *c, double size, int bold)
{
	cairo_select_font_face(c->cr, CHART_FONT, CAIRO_FONT_SLANT_NORMAL,
			       bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
	cairo_set_font_size(c->cr, size);
}

double chart_text_width(struct chart *c, double size, int bold, const char *text)
{
	cairo_text_extents_t e;

	set_font(c, size, bold);
	cairo_text_extents(c->cr, text, &e);
	return e.x_advance;
}

double chart_text(struct chart *c, double x, double y, double size, int bold, double align,
		  const struct rgb *col, const char *text)
{
	double w = chart_text_width(c, size, bold, text);

	cairo_set_source_rgb(c->cr, col->r, col->g, col->b);
	cairo_move_to(c->cr, x - align * w, y);
	cairo_show_text(c->cr, text);
	return w;
}

void chart_text_up(struct chart *c, double x, double y, double size, const struct rgb *col, const char *text)
{
	double w = chart_text_width(c, size, 0, text);

	cairo_save(c->cr);
	cairo_translate(c->cr, x, y);
	cairo_rotate(c->cr, -M_PI / 2);
	cairo_set_source_rgb(c->cr, col->r, col->g, col->b);
	cairo_move_to(c->cr, -w / 2, 0);
	cairo_show_text(c->cr, text);
	cairo_restore(c->cr);
}

void chart_title(struct chart *c, const char *title, const char *subtitle)
{
	chart_text(c, 20, 30, 18, 1, 0, &chart_black, title);
	if (subtitle && *subtitle)
		chart_text(c, 20, 52, 12, 0, 0, &chart_grey, subtitle);
}

void chart_fill_rect(struct chart *c, double x, double y, double w, double h, const struct rgb *col)
{
	cairo_set_source_rgb(c->cr, col->r, col->g, col->b);
	cairo_rectangle(c->cr, x, y, w, h);
	cairo_fill(c->cr);
}

void chart_stroke_rect(struct chart *c, double x, double y, double w, double h, double lw, const struct rgb *col)
{
	cairo_set_source_rgb(c->cr, col->r, col->g, col->b);
	cairo_set_line_width(c->cr, lw);
	cairo_rectangle(c->cr, x, y, w, h);
	cairo_stroke(c->cr);
}

void chart_line(struct chart *c, double x0, double y0, double x1, double y1, double lw, const struct rgb *col)
{
	cairo_set_source_rgb(c->cr, col->r, col->g, col->b);
	cairo_set_line_width(c->cr, lw);
	cairo_move_to(c->cr, x0, y0);
	cairo_line_to(c->cr, x1, y1);
	cairo_stroke(c->cr);
}

double chart_legend(struct chart *c, double x, double y, const struct rgb *col, const char *text)
{
	chart_fill_rect(c, x, y - 10, 12, 12, col);
	return x + 18 + chart_text(c, x + 18, y, 12, 0, 0, &chart_black, text) + 18;
}

double chart_tick_step(double range, int n)
{
	double raw = range / (n > 0 ? n : 1), mag, f;

	if (!(raw > 0) || !isfinite(raw))
		return 1;
	mag = pow(10, floor(log10(raw)));
	f = raw / mag;
	return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * mag;
}
