// SPDX-License-Identifier: GPL-2.0
/*
 * bwapd's search log, STATE_DIR/search-PID.log, read back for the search
 * curve: "point DWP METRIC SEARCH SETTLED" per measurement, "settle DWP
 * METRIC SEARCH" when a search converges, "# metric: NAME".
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "bwap.h"

int bwap_search_log_read(const char *path, struct bwap_tuner_point *pts, int max,
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
