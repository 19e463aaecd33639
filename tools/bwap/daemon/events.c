// SPDX-License-Identifier: GPL-2.0
/*
 * Which hardware event counts memory stall cycles on this CPU, resolved by
 * name with libpfm4.  The kernel's generic stalled-cycles-backend is mapped
 * on no Intel core after Sandy Bridge, so each CPU family has its own
 * default, tried in order until libpfm can encode one for the core PMU:
 *   Intel:        CYCLE_ACTIVITY:STALLS_L3_MISS (Skylake on), :STALLS_MEM_ANY,
 *                 :STALLS_LDM_PENDING (Haswell, Broadwell), RESOURCE_STALLS:ANY
 *   AMD Zen:      DISPATCH_STALLS_1:BE_STALLS (Zen 4: slots lost to a stalled
 *                 back end), DISPATCH_RESOURCE_STALL_CYCLES_1:LOAD_QUEUE_RSRC_STALL
 *                 (Zen 2, 3: cycles dispatch waits for a full load queue)
 *   Arm Neoverse: STALL_BACKEND_MEM (N2, V1, V2), STALL_BACKEND (N1)
 * perf_event = NAME in bwapd.conf names any event libpfm knows instead.
 * LIBPFM_FORCE_PMU=NAME makes libpfm act as if that PMU were the CPU's
 * (the tests use it); its Arm tables exist only in Arm builds of libpfm.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>

#include "bwapd.h"

static const struct bwap_stall_family families[] = {
	{ "amd64_", "AMD", { "DISPATCH_STALLS_1:BE_STALLS", "DISPATCH_RESOURCE_STALL_CYCLES_1:LOAD_QUEUE_RSRC_STALL" },
	  "dispatch slots lost to a stalled back end (Zen 4), or cycles dispatch waits for a full load queue (Zen 2, 3)" },
	{ "arm_", "Arm Neoverse", { "STALL_BACKEND_MEM", "STALL_BACKEND" },
	  "cycles the back end stalls on memory (STALL_BACKEND_MEM where the core has it)" },
	{ "", "Intel", { "CYCLE_ACTIVITY:STALLS_L3_MISS", "CYCLE_ACTIVITY:STALLS_MEM_ANY",
			 "CYCLE_ACTIVITY:STALLS_LDM_PENDING", "RESOURCE_STALLS:ANY" },
	  "cycles with no uop executing while a load misses the L3 (or any memory load is pending)" },
};

const struct bwap_stall_family *bwap_stall_family_of(const char *pmu)
{
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++)
		if (!strncmp(pmu, families[i].pmu_prefix, strlen(families[i].pmu_prefix)))
			return &families[i];
	return &families[sizeof(families) / sizeof(families[0]) - 1];
}

static int pfm_ready(char *err, size_t errlen)
{
	static int done, rc;

	if (!done) {
		rc = pfm_initialize();
		done = 1;
	}
	if (rc != PFM_SUCCESS) {
		snprintf(err, errlen, "libpfm4 cannot start: %s", pfm_strerror(rc));
		return -1;
	}
	return 0;
}

/* The core PMU libpfm detected (or was forced to); name and description, or -1. */
static int core_pmu(char *name, size_t len, char *desc, size_t dlen)
{
	for (int p = PFM_PMU_NONE; p < PFM_PMU_MAX; p++) {
		pfm_pmu_info_t info;

		memset(&info, 0, sizeof(info));
		info.size = sizeof(info);
		if (pfm_get_pmu_info(p, &info) != PFM_SUCCESS || !info.is_present)
			continue;
		if (info.type != PFM_PMU_TYPE_CORE || !strncmp(info.name, "perf", 4))
			continue;
		snprintf(name, len, "%s", info.name);
		snprintf(desc, dlen, "%s", info.desc ? info.desc : "");
		return 0;
	}
	return -1;
}

static int encode(const char *name, struct bwap_stall_event *ev, char *err, size_t errlen)
{
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;
	int rc;

	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.size = sizeof(arg);
	rc = pfm_get_os_event_encoding(name, PFM_PLM3, PFM_OS_PERF_EVENT, &arg);
	if (rc != PFM_SUCCESS) {
		snprintf(err, errlen, "%s", pfm_strerror(rc));
		return -1;
	}
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	ev->type = attr.type;
	ev->config = attr.config;
	ev->config1 = attr.config1;
	ev->generic = 0;
	return 0;
}

int bwap_stall_event_resolve(const char *want, struct bwap_stall_event *ev, FILE *list, char *err, size_t errlen)
{
	const struct bwap_stall_family *fam;
	char pmu[64] = "", desc[256] = "", why[256];
	int found = -1;

	memset(ev, 0, sizeof(*ev));
	if (!strcmp(want, "generic")) {
		snprintf(ev->name, sizeof(ev->name), "stalled-cycles-backend");
		ev->generic = 1;
		ev->type = PERF_TYPE_HARDWARE;
		ev->config = PERF_COUNT_HW_STALLED_CYCLES_BACKEND;
		return 0;
	}
	if (pfm_ready(err, errlen))
		return -1;
	if (core_pmu(pmu, sizeof(pmu), desc, sizeof(desc))) {
		snprintf(err, errlen, "libpfm4 knows no core PMU on this CPU%s%s%s (a VM or TCG guest without "
			 "one, or a CPU this libpfm build does not cover)", getenv("LIBPFM_FORCE_PMU") ?
			 ", and LIBPFM_FORCE_PMU=" : "", getenv("LIBPFM_FORCE_PMU") ? getenv("LIBPFM_FORCE_PMU") : "",
			 getenv("LIBPFM_FORCE_PMU") ? " is not one it has" : "");
		if (list)
			fprintf(list, "PMU: none. %s\n", err);
		return -1;
	}
	fam = bwap_stall_family_of(pmu);
	snprintf(ev->pmu, sizeof(ev->pmu), "%s", pmu);
	if (list)
		fprintf(list, "PMU: %s (%s), family %s%s\n", pmu, desc, fam->family,
			getenv("LIBPFM_FORCE_PMU") ? " [forced by LIBPFM_FORCE_PMU]" : "");
	if (strcmp(want, "auto")) {
		if (encode(want, ev, why, sizeof(why))) {
			snprintf(err, errlen, "perf_event = %s: libpfm4 cannot encode it for PMU %s: %s", want, pmu, why);
			return -1;
		}
		if (list)
			fprintf(list, "  %-54s type %u config %#llx config1 %#llx  <- perf_event in the config\n",
				want, ev->type, (unsigned long long)ev->config, (unsigned long long)ev->config1);
		return 0;
	}
	for (int i = 0; i < BWAP_STALL_CANDIDATES && fam->events[i]; i++) {
		struct bwap_stall_event e;

		if (encode(fam->events[i], &e, why, sizeof(why))) {
			if (list)
				fprintf(list, "  %-54s not on this PMU (%s)\n", fam->events[i], why);
			continue;
		}
		snprintf(e.pmu, sizeof(e.pmu), "%s", pmu);
		if (list)
			fprintf(list, "  %-54s type %u config %#llx config1 %#llx%s\n", fam->events[i], e.type,
				(unsigned long long)e.config, (unsigned long long)e.config1,
				found < 0 ? "  <- auto's choice" : "");
		if (found < 0) {
			*ev = e;
			found = i;
		}
	}
	if (found < 0) {
		snprintf(err, errlen, "none of the %s stall events is on PMU %s", fam->family, pmu);
		return -1;
	}
	if (list)
		fprintf(list, "why: %s\n", fam->why);
	return 0;
}
