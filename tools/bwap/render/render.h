/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bwapctl's charts, drawn with cairo as PNG or SVG (from the file name):
 * the matrix and weights report, bwapd's DWP search curve, the coupled
 * search, and the bench.  The dynamic bwapctl links librender.a; the
 * static one links nochart.o instead, whose functions say that charts
 * need the dynamic bwapctl (the JSON it writes draws anywhere with
 * 'bwapctl report --from').  format.c is in both.
 */
#ifndef BWAP_RENDER_H
#define BWAP_RENDER_H

#include "../lib/bwap.h"

struct json_object;

enum bwap_chart_format { BWAP_CHART_PNG, BWAP_CHART_SVG };

/* ---- format.c ------------------------------------------------------------ */

/* From the file name: FILE.png or FILE.svg; -1 with err for anything else. */
int bwap_chart_format(const char *path, char *err, size_t errlen);

/* ---- chart.c (nochart.c) -------------------------------------------------- */

/* 0 where this bwapctl draws charts; -1 with why not (the static build). */
int bwap_charts_available(char *err, size_t errlen);

/* ---- report.c: the matrix heatmap and the canonical weights ------------- */

int bwap_chart_report(const char *path, const struct bwap_matrix *m, const struct bwap_weights *w,
		      bwap_nodeset workers, char *err, size_t errlen);

/* ---- curve.c: bwapd's DWP search curve -------------------------------------- */

/*
 * The metric against DWP, in measurement order; settled (if not NULL,
 * search >= 0) is where the search settled, ringed.
 */
int bwap_chart_curve(const char *path, const struct bwap_tuner_point *pts, int n,
		     const struct bwap_tuner_point *settled, const char *metric, const char *source,
		     char *err, size_t errlen);

/* ---- search.c: bwapctl search's result ------------------------------------ */

/* Best speedup over the baseline per page policy x page NUMA degree, from search's JSON. */
int bwap_chart_search(const char *path, struct json_object *result, char *err, size_t errlen);
/* A score's readable name: "wall time, s" or the text before a regex's capture group. */
char *bwap_score_name(const char *score, char *buf, size_t len);

/* ---- bench.c: bwapctl bench's result ---------------------------------------- */

/* GB/s per kernel and placement, from bench's JSON. */
int bwap_chart_bench(const char *path, struct json_object *bench, char *err, size_t errlen);

#endif /* BWAP_RENDER_H */
