// SPDX-License-Identifier: GPL-2.0
/* Node sets and CPU lists: parsing and printing "0,1,4-6". */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwap.h"

int bwap_nodeset_count(bwap_nodeset s)
{
	return __builtin_popcountll(s);
}

/* One "N" or "N-M" item; returns the number of characters used or -1. */
/* "N" or "N-M"; chars used, -1 if not a range, -2 if a number overflows. */
static int parse_range(const char *p, long *lo, long *hi)
{
	char *end;

	if (!isdigit((unsigned char)*p))
		return -1;
	errno = 0;
	*lo = strtol(p, &end, 10);
	*hi = *lo;
	if (*end == '-') {
		if (!isdigit((unsigned char)end[1]))
			return -1;
		*hi = strtol(end + 1, &end, 10);
	}
	return errno == ERANGE ? -2 : (int)(end - p);
}

int bwap_nodeset_parse(const char *text, bwap_nodeset *out, char *err, size_t errlen)
{
	const char *p = text;
	bwap_nodeset s = 0;

	if (!text || !*text) {
		snprintf(err, errlen, "empty node set; give nodes like 0,1 or 0-3");
		return -1;
	}
	while (*p) {
		long lo, hi;
		int used = parse_range(p, &lo, &hi);

		if (used == -2) {
			snprintf(err, errlen, "node number in '%s' is far above the highest supported node %d",
				 text, BWAP_MAX_NODES - 1);
			return -1;
		}
		if (used < 0) {
			snprintf(err, errlen, "cannot read node set '%s' at '%s'; give nodes like 0,1 or 0-3",
				 text, *p ? p : "its end");
			return -1;
		}
		if (hi < lo) {
			snprintf(err, errlen, "node range %ld-%ld in '%s' runs backwards", lo, hi, text);
			return -1;
		}
		if (hi >= BWAP_MAX_NODES) {
			snprintf(err, errlen, "node %ld in '%s' is above the highest supported node %d",
				 hi, text, BWAP_MAX_NODES - 1);
			return -1;
		}
		for (; lo <= hi; lo++)
			s |= BWAP_NODE_BIT(lo);
		p += used;
		if (*p == ',' && !p[1]) {
			snprintf(err, errlen, "node set '%s' ends in a comma; give nodes like 0,1 or 0-3", text);
			return -1;
		} else if (*p == ',') {
			p++;
		} else if (*p) {
			snprintf(err, errlen, "unexpected '%c' in node set '%s'; separate nodes with commas",
				 *p, text);
			return -1;
		}
	}
	*out = s;
	return 0;
}

char *bwap_nodeset_format(bwap_nodeset s, char *buf, size_t len)
{
	size_t used = 0;
	int n = 0;

	buf[0] = '\0';
	while (n < BWAP_MAX_NODES) {
		int start;

		if (!(s & BWAP_NODE_BIT(n))) {
			n++;
			continue;
		}
		start = n;
		while (n + 1 < BWAP_MAX_NODES && (s & BWAP_NODE_BIT(n + 1)))
			n++;
		if (used < len)
			used += snprintf(buf + used, len - used, "%s%d", used ? "," : "", start);
		if (n > start + 1 && used < len)
			used += snprintf(buf + used, len - used, "-%d", n);
		else if (n == start + 1 && used < len)
			used += snprintf(buf + used, len - used, ",%d", n);
		n++;
	}
	return buf;
}

int bwap_cpulist_parse(const char *text, unsigned char *cpus, int max)
{
	const char *p = text;
	int count = 0;

	memset(cpus, 0, max);
	while (*p && *p != '\n') {
		long lo, hi;
		int used = parse_range(p, &lo, &hi);

		if (used < 0)
			return -1;
		for (; lo <= hi && lo < max; lo++) {
			if (!cpus[lo])
				count++;
			cpus[lo] = 1;
		}
		p += used;
		if (*p == ',')
			p++;
	}
	return count;
}
