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

int bwap_charts_available(char *err, size_t errlen)
{
	snprintf(err, errlen, NO_CHARTS);
	return -1;
}

int bwap_chart_bench(const char *path, struct json_object *bench, char *err, size_t errlen)
{
	snprintf(err, errlen, NO_CHARTS);
	return -1;
}

int bwap_chart_report(const char *path, const struct bwap_matrix *m, const struct bwap_weights *w,
		      bwap_nodeset workers, char *err, size_t errlen)
{
	snprintf(err, errlen, NO_CHARTS);
	return -1;
}

int bwap_chart_curve(const char *path, const struct bwap_tuner_point *pts, int n,
		     const struct bwap_tuner_point *settled, const char *metric, const char *source,
		     char *err, size_t errlen)
{
	snprintf(err, errlen, NO_CHARTS);
	return -1;
}

int bwap_chart_peers(const char *path, const struct bwap_peers_report *r, char *err, size_t errlen)
{
	snprintf(err, errlen, NO_CHARTS);
	return -1;
}

int bwap_chart_search(const char *path, struct json_object *result, char *err, size_t errlen)
{
	snprintf(err, errlen, NO_CHARTS);
	return -1;
}

char *bwap_score_name(const char *score, char *buf, size_t len)
{
	snprintf(buf, len, "%s", score ? score : "wall time, s");
	return buf;
}
