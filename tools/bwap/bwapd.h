/* SPDX-License-Identifier: GPL-2.0 */
/* bwapd's configuration (bwapd_conf.c) and what bwapd.c shares with it. */
#ifndef BWAPD_H
#define BWAPD_H

#include "bwap.h"
#include "signals.h"
#include "tuner.h"

#define BWAPD_CONF "/etc/bwap/bwapd.conf"

struct bwapd_conf {
	char state_dir[256];		/* socket, pid file, search logs */
	char matrix[256];		/* bandwidth matrix file; "" = STATE_DIR/matrix, else sysfs HMAT */
	char cgroup[256];		/* tune every process of this cgroup v2 directory; "" = none */
	double cgroup_scan;		/* seconds between reads of cgroup.procs */
	struct bwap_tuner_params tuner;
	double start_dwp;		/* where each search starts (0 = canonical weights) */
	int max_weight;			/* largest u8 weight pushed */
	enum bwap_signal_kind signal;	/* default signal for new targets */
	uint64_t perf_raw;		/* raw PMU event for stalls; 0 = generic backend stalls */
	double model_mlp, model_shared;	/* the modelled workload */
	int model_threads;		/* per worker node; 0 = the target's thread count */
	double model_refresh;		/* seconds one numa_maps read is reused by the model signal */
};

void bwapd_conf_defaults(struct bwapd_conf *c);
/* One "key = value" setting; 0, or -1 with why in err. */
int bwapd_conf_set(struct bwapd_conf *c, const char *key, const char *value, char *err, size_t errlen);
/* A whole file; missing_ok: a missing file is fine.  0 or -1 ("FILE:LINE: why" in err). */
int bwapd_conf_load(struct bwapd_conf *c, const char *path, int missing_ok, char *err, size_t errlen);
/* Cross-checks after everything is set. */
int bwapd_conf_check(const struct bwapd_conf *c, char *err, size_t errlen);
void bwapd_conf_print(const struct bwapd_conf *c, FILE *f);

#endif
