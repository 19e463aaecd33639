/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pictures: a PNG writer, the matrix/weights report and bwapd's DWP
 * search curve.  Built into bwapctl only.
 */
#ifndef BWAP_RENDER_H
#define BWAP_RENDER_H

#include "../lib/bwap.h"

struct json_object;

/* ---- chart.c / nochart.c: what bwapctl's charts share --------------------- */

enum bwap_chart_format { BWAP_CHART_PNG, BWAP_CHART_SVG };
/* From the file name: FILE.png or FILE.svg; -1 with err for anything else. */
int bwap_chart_format(const char *path, char *err, size_t errlen);
/* 'bwapctl bench': GB/s per kernel and placement, from its JSON. */
int bwap_chart_bench(const char *path, struct json_object *bench, char *err, size_t errlen);

/* ---- png.c: PNG files through libpng ----------------------------------- */

/* RGB, 8 bits per channel, rows top to bottom; returns 0 or -1. */
int bwap_png_write(FILE *f, const unsigned char *rgb, int width, int height);

/* ---- canvas.c: drawing and text ------------------------------------------ */

struct bwap_canvas {
	int w, h, scale;	/* scale: font pixels per glyph pixel */
	unsigned char *px;	/* RGB rows, white at first */
};

int bwap_canvas_init(struct bwap_canvas *c, int w, int h, int scale);
void bwap_canvas_free(struct bwap_canvas *c);
void bwap_canvas_dot(struct bwap_canvas *c, int x, int y, const unsigned char *rgb);
void bwap_canvas_rect(struct bwap_canvas *c, int x0, int y0, int w, int h, const unsigned char *rgb);
void bwap_canvas_line(struct bwap_canvas *c, int x0, int y0, int x1, int y1, const unsigned char *rgb);
/* Text in the 3x5 font, top left at (x, y); lower case is drawn upper case. */
void bwap_canvas_text(struct bwap_canvas *c, int x, int y, const char *s, const unsigned char *rgb);
/* The same turned to read upwards from (x, y), for a y axis name. */
void bwap_canvas_text_up(struct bwap_canvas *c, int x, int y, const char *s, const unsigned char *rgb);
int bwap_canvas_text_width(const struct bwap_canvas *c, const char *s);
/* Into path, whole or not at all (temporary file and rename); 0 or -1 with err. */
int bwap_canvas_write_png(const struct bwap_canvas *c, const char *path, char *err, size_t errlen);

/* ---- report.c: pictures ---------------------------------------------- */

int bwap_report_png(const char *path, const struct bwap_matrix *m, const struct bwap_weights *w,
		    bwap_nodeset workers, char *err, size_t errlen);

/* ---- curve.c: the DWP search curve ------------------------------------ */

/*
 * Plot metric against DWP, in measurement order, into a PNG; settled (if
 * not NULL) is where the search settled, ringed in black.
 */
int bwap_curve_png(const char *path, const struct bwap_tuner_point *pts, int n,
		   const struct bwap_tuner_point *settled, const char *metric, const char *source,
		   char *err, size_t errlen);
/*
 * Read a bwapd search log: "point DWP METRIC SEARCH SETTLED" per
 * measurement, "settle DWP METRIC" when a search converges (the latest is
 * put in *settled, settled->search = -1 if none), "# metric: NAME".
 */
int bwap_curve_read_log(const char *path, struct bwap_tuner_point *pts, int max,
			struct bwap_tuner_point *settled, char *metric_name, size_t namelen,
			char *err, size_t errlen);

/* ---- search.c: bwapctl search's picture --------------------------------- */

/* Best speedup over the baseline per page policy x page NUMA degree. */
int bwap_search_png(const char *path, const struct bwap_search_space *s, const char *score_name,
		    char *err, size_t errlen);

#endif /* BWAP_RENDER_H */
