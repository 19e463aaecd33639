/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pictures: a PNG writer, the matrix/weights report and bwapd's DWP
 * search curve.  Built into bwapctl only.
 */
#ifndef BWAP_RENDER_H
#define BWAP_RENDER_H

#include "../lib/bwap.h"

/* ---- png.c: a minimal PNG writer ------------------------------------- */

uint32_t bwap_crc32(const unsigned char *buf, size_t len, uint32_t crc);
uint32_t bwap_adler32(const unsigned char *buf, size_t len);
/* RGB, 8 bits per channel, rows top to bottom; returns 0 or -1 (errno). */
int bwap_png_write(FILE *f, const unsigned char *rgb, int width, int height);

/* ---- report.c: pictures ---------------------------------------------- */

int bwap_report_png(const char *path, const struct bwap_matrix *m, const struct bwap_weights *w,
		    bwap_nodeset workers, char *err, size_t errlen);

/* ---- curve.c: the DWP search curve ------------------------------------ */

/*
 * Plot metric against DWP, in measurement order, into a PNG; settled (if
 * not NULL) is where the search settled, ringed in black.
 */
int bwap_curve_png(const char *path, const struct bwap_tuner_point *pts, int n,
		   const struct bwap_tuner_point *settled, char *err, size_t errlen);
/*
 * Read a bwapd search log: "point DWP METRIC SEARCH SETTLED" per
 * measurement, "settle DWP METRIC" when a search converges (the latest is
 * put in *settled, settled->search = -1 if none), "# metric: NAME".
 */
int bwap_curve_read_log(const char *path, struct bwap_tuner_point *pts, int max,
			struct bwap_tuner_point *settled, char *metric_name, size_t namelen,
			char *err, size_t errlen);

#endif /* BWAP_RENDER_H */
