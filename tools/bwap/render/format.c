// SPDX-License-Identifier: GPL-2.0
/* The chart file format from its name, for the dynamic and the static bwapctl alike. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "render.h"

int bwap_chart_format(const char *path, char *err, size_t errlen)
{
	size_t n = strlen(path);

	if (n > 4 && !strcasecmp(path + n - 4, ".png"))
		return BWAP_CHART_PNG;
	if (n > 4 && !strcasecmp(path + n - 4, ".svg"))
		return BWAP_CHART_SVG;
	snprintf(err, errlen, "chart '%s': name it FILE.png or FILE.svg", path);
	return -1;
}
