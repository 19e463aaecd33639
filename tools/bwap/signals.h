/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bwapd's signal sources: what one sample of a target's "badness" is.
 * Lower is better for all of them.
 *  - perf:     backend stall cycles / cycles over the target's threads,
 *              from perf_event_open (MEASURED);
 *  - model:    the placement model's stall fraction for the target's real
 *              per-node page distribution (/proc/PID/numa_maps), for
 *              machines without counters such as TCG guests (MODELLED);
 *  - progress: seconds per unit of work the target reports itself through
 *              a progress file (MEASURED by the target).
 */
#ifndef BWAP_SIGNAL_H
#define BWAP_SIGNAL_H

#include <stdint.h>
#include <sys/types.h>

#include "bwap.h"
#include "tuner.h"

enum bwap_signal_kind { BWAP_SIGNAL_AUTO, BWAP_SIGNAL_PERF, BWAP_SIGNAL_MODEL, BWAP_SIGNAL_PROGRESS };

#define BWAP_SIGNAL_MAX_THREADS 256

/*
 * The progress file: at least 8 bytes; the first 8 are a native-endian
 * uint64_t that the target increases by one per unit of work (mmap it
 * MAP_SHARED and use __atomic_add_fetch, or pwrite the new value).  bwapd
 * only reads it.  See bwapd(8), "PROGRESS FILE".
 */
struct bwap_signal_opts {
	enum bwap_signal_kind kind;
	uint64_t perf_raw;		/* 0: generic backend stalls; else a raw PMU config */
	const char *progress_file;
	/* model: the machine and the workload's shape (threads per worker node from the target) */
	const struct bwap_machine *mc;
	double model_mlp;
	double model_shared;
	int model_threads;		/* per worker node; 0 = the target's own thread count */
	double model_refresh;		/* seconds a page-count read is reused; see bwapd_conf.c */
};

struct bwap_signal {
	enum bwap_signal_kind kind;
	pid_t pid;
	bwap_nodeset workers;
	char label[96];			/* for status and logs, says MEASURED or MODELLED */
	/* perf */
	int nr_threads;
	struct {
		pid_t tid;
		int fd_cycles, fd_stall;
		uint64_t cycles, stall;
	} thr[BWAP_SIGNAL_MAX_THREADS];
	uint64_t perf_raw;
	/* model */
	struct bwap_signal_opts o;
	long cached_pages[BWAP_MAX_NODES];
	int cached_threads;
	double cached_value;
	int have_cache;
	double cache_time;		/* when numa_maps was last read */
	long last_total;		/* pages at the previous read; -1 before the first */
	/* progress */
	int progress_fd;
	uint64_t last_count;
	double last_time;
	int have_last;
};

/*
 * Set up a source for pid with worker nodes workers.  AUTO tries perf and
 * falls back to model; why perf failed is in note (e.g. "no hardware
 * counters: TCG guest?").  0 or -1 (err set).
 */
int bwap_signal_open(struct bwap_signal *s, pid_t pid, bwap_nodeset workers, int nr_nodes,
		     const struct bwap_signal_opts *o, char *note, size_t notelen,
		     char *err, size_t errlen);
/* One sample at monotonic time now; 0, 1 (no value yet: first read), or -1 (errno, err). */
int bwap_signal_sample(struct bwap_signal *s, double now, double *value, char *err, size_t errlen);
void bwap_signal_close(struct bwap_signal *s);
/* The pages just moved (a push): the next model sample reads them afresh. */
void bwap_signal_invalidate(struct bwap_signal *s);
/* Can this machine count backend stalls for pid at all?  0, or -1 with the reason. */
int bwap_perf_probe(pid_t pid, uint64_t raw, char *err, size_t errlen);
const char *bwap_signal_kind_name(enum bwap_signal_kind k);
int bwap_signal_kind_parse(const char *s, enum bwap_signal_kind *k);
/* Threads of pid (from /proc/PID/task) per node of the CPUs they may run on. */
int bwap_threads_per_node(pid_t pid, bwap_nodeset workers, int *threads);

#endif
