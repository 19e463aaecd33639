// SPDX-License-Identifier: GPL-2.0
/* Node sets and CPU lists. */
#include <string.h>

#include "bwap.h"
#include "tap.h"

int main(void)
{
	bwap_nodeset s;
	unsigned char cpus[64];
	char err[256], buf[128];

	CHECK(!bwap_nodeset_parse("0,1,4-6", &s, err, sizeof(err)) && s == 0x73, "parse 0,1,4-6");
	CHECK(!strcmp(bwap_nodeset_format(s, buf, sizeof(buf)), "0,1,4-6"), "format 0,1,4-6: %s", buf);
	CHECK(!strcmp(bwap_nodeset_format(0x5, buf, sizeof(buf)), "0,2"), "format 0,2");
	CHECK(!strcmp(bwap_nodeset_format(0xf, buf, sizeof(buf)), "0-3"), "format 0-3");
	CHECK(!bwap_nodeset_parse("63", &s, err, sizeof(err)) && s == 1ULL << 63, "node 63 is the last");
	CHECK(bwap_nodeset_parse("64", &s, err, sizeof(err)) && strstr(err, "above the highest"),
	      "node 64: %s", err);
	CHECK(bwap_nodeset_parse("3-1", &s, err, sizeof(err)) && strstr(err, "backwards"), "3-1: %s", err);
	CHECK(bwap_nodeset_parse("0;1", &s, err, sizeof(err)) && strstr(err, "commas"), "0;1: %s", err);
	CHECK(bwap_nodeset_parse("", &s, err, sizeof(err)) && strstr(err, "empty"), "empty: %s", err);
	CHECK(bwap_nodeset_parse("x", &s, err, sizeof(err)) && strstr(err, "cannot read"), "x: %s", err);
	CHECK(bwap_cpulist_parse("0-2,5\n", cpus, 64) == 4 && cpus[2] && !cpus[3] && cpus[5], "cpulist 0-2,5");
	CHECK(bwap_nodeset_count(0x73) == 5, "count");
	return tap_done();
}
