// SPDX-License-Identifier: GPL-2.0
/*
 * The charts of the static bwapctl, which the busybox guests run: none.
 * Cairo has no static archive in Debian, so bwapctl-static writes JSON and
 * the dynamic bwapctl draws it ('bwapctl report --from FILE.json').
 */
#include <stdio.h>
#include <string.h>

#include "render.h"

#define NO_CHARTS "charts need the dynamic bwapctl; write --json (or --save FILE.json) and run " \
		  "'bwapctl report --from FILE.json -o FILE.png' there"

int bwap_chart_bench(const char *path, struct json_object *bench, char *err, size_t errlen)
{
	snprintf(err, errlen, NO_CHARTS);
	return -1;
}

int bwap_report_png(const char *path, const struct bwap_matrix *m, const struct bwap_weights *w,
		    bwap_nodeset workers, char *err, size_t errlen)
{
	snprintf(err, errlen, NO_CHARTS);
	return -1;
}

int bwap_curve_png(const char *path, const struct bwap_tuner_point *pts, int n,
		   const struct bwap_tuner_point *settled, const char *metric, const char *source,
		   char *err, size_t errlen)
{
	snprintf(err, errlen, NO_CHARTS);
	return -1;
}

int bwap_curve_read_log(const char *path, struct bwap_tuner_point *pts, int max,
			struct bwap_tuner_point *settled, char *metric_name, size_t namelen,
			char *err, size_t errlen)
{
	snprintf(err, errlen, NO_CHARTS);
	return -1;
}

int bwap_search_png(const char *path, const struct bwap_search_space *s, const char *score_name,
		    char *err, size_t errlen)
{
	snprintf(err, errlen, NO_CHARTS);
	return -1;
}
