// SPDX-License-Identifier: GPL-2.0
/*
 * bwapd's stall event per CPU family (daemon/events.c): which family a
 * libpfm PMU name is, and which events it tries first.  The encodings
 * under forced Intel and AMD PMUs are checked by test_cli.sh (libpfm
 * reads LIBPFM_FORCE_PMU once per process); Arm PMUs exist only in Arm
 * builds of libpfm, so for Arm the choice is checked here.
 */
#include <string.h>

#include "bwapd.h"
#include "tap.h"

int main(void)
{
	const struct bwap_stall_family *f;

	f = bwap_stall_family_of("arm_n1");
	CHECK(!strcmp(f->family, "Arm Neoverse") && !strcmp(f->events[0], "STALL_BACKEND_MEM") &&
	      !strcmp(f->events[1], "STALL_BACKEND"),
	      "arm_n1 (Neoverse N1): STALL_BACKEND_MEM, then STALL_BACKEND (N1 has only the latter)");
	f = bwap_stall_family_of("arm_v1");
	CHECK(!strcmp(f->family, "Arm Neoverse"), "arm_v1 is Arm Neoverse");
	f = bwap_stall_family_of("skl");
	CHECK(!strcmp(f->family, "Intel") && !strcmp(f->events[0], "CYCLE_ACTIVITY:STALLS_L3_MISS"),
	      "skl: Intel, CYCLE_ACTIVITY:STALLS_L3_MISS first");
	f = bwap_stall_family_of("amd64_fam19h_zen4");
	CHECK(!strcmp(f->family, "AMD") && !strcmp(f->events[0], "DISPATCH_STALLS_1:BE_STALLS"),
	      "amd64_fam19h_zen4: AMD, DISPATCH_STALLS_1:BE_STALLS first");
	return tap_done();
}
