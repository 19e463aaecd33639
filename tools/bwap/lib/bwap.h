/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libbwap: what bwapctl and bwapd share.  Node sets, the machine's
 * topology from sysfs, bandwidth matrices and their sources, canonical
 * weights, the raw NUMA syscalls, the read benchmark, worker-set
 * enumeration, the placement model, the DWP tuner, a process's pages per
 * node, the weights other tools would pick, and the client side of
 * bwapd's control socket.  Each part lives in its own .c file in lib/;
 * this header is the whole interface.
 */
#ifndef BWAP_H
#define BWAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "mempolicy2.h"

#define BWAP_MAX_NODES 64

/* ---- nodeset.c: sets of node ids ------------------------------------- */

/* A set of node ids below BWAP_MAX_NODES, one bit per node. */
typedef uint64_t bwap_nodeset;

#define BWAP_NODE_BIT(n) ((bwap_nodeset)1 << (n))

static inline int bwap_nodeset_has(bwap_nodeset s, int node)
{
	return node >= 0 && node < BWAP_MAX_NODES && (s & BWAP_NODE_BIT(node));
}

int bwap_nodeset_count(bwap_nodeset s);
/* Parse "0,1,4-6"; returns 0 or -1 with a message for the user in err. */
int bwap_nodeset_parse(const char *text, bwap_nodeset *out, char *err, size_t errlen);
/* Format as "0-2,5" into buf; returns buf. */
char *bwap_nodeset_format(bwap_nodeset s, char *buf, size_t len);
/* Parse a sysfs-style cpu list "0-3,8" into a byte map cpus[0..max). */
int bwap_cpulist_parse(const char *text, unsigned char *cpus, int max);

/* ---- topology.c: the machine as sysfs shows it ----------------------- */

#define BWAP_MAX_CPUS 1024

/* HMAT performance attributes of one target node for one access class. */
struct bwap_hmat_access {
	int present;			/* accessN/initiators exists */
	bwap_nodeset initiators;	/* the best initiators, as sysfs lists them */
	long read_bw, write_bw;		/* MiB/s, -1 if absent */
	long read_lat, write_lat;	/* ns, -1 if absent */
};

struct bwap_node {
	int id;
	int nr_cpus;
	unsigned char cpus[BWAP_MAX_CPUS];	/* cpus[c] = 1 if CPU c is on the node */
	long long mem_total_kb, mem_free_kb;
	int distance[BWAP_MAX_NODES];		/* SLIT row, indexed by node id; 0 = unknown */
	struct bwap_hmat_access access[2];	/* access0: any initiator, access1: CPU initiators */
};

struct bwap_topology {
	int nr_nodes;
	bwap_nodeset online, has_cpu, has_memory;
	struct bwap_node node[BWAP_MAX_NODES];	/* indexed by node id */
};

/* Read /sys/devices/system/node under root (NULL = "/"); 0 or -1 (err set). */
int bwap_topology_read(struct bwap_topology *t, const char *root, char *err, size_t errlen);
/*
 * The memory nodes process pid (0: the caller) may allocate on, its
 * cpuset's (Mems_allowed_list in /proc/PID/status); 0 if /proc does not
 * say.  Weights over other nodes would name nodes the kernel skips.
 */
bwap_nodeset bwap_mems_allowed(pid_t pid);
void bwap_topology_print(const struct bwap_topology *t, FILE *f);
void bwap_topology_print_json(const struct bwap_topology *t, FILE *f);
struct json_object;
/* The topology as a json-c object (caller puts it), for --json outputs. */
struct json_object *bwap_topology_json(const struct bwap_topology *t);
/* CPUs of all nodes in set into cpus[BWAP_MAX_CPUS]; returns how many. */
int bwap_topology_cpus_of(const struct bwap_topology *t, bwap_nodeset set, unsigned char *cpus);

/* ---- matrix.c: node-to-node bandwidth and latency -------------------- */

/*
 * bw[c][m]: bandwidth seen by threads on CPU node c reading memory of node
 * m, in MB/s (10^6 bytes/s), or a negative value when unknown.  Rows are
 * initiators, columns memory nodes: the layout of Intel MLC and of HMAT.
 * The canonical weights use bw(m -> w) = bw[w][m].
 */
struct bwap_matrix {
	int nr_nodes;			/* ids 0..nr_nodes-1 */
	double bw[BWAP_MAX_NODES][BWAP_MAX_NODES];
	double lat[BWAP_MAX_NODES][BWAP_MAX_NODES];	/* ns, negative = unknown */
	int has_lat;
	unsigned char estimated[BWAP_MAX_NODES][BWAP_MAX_NODES];	/* bw entry is an estimate */
	int dist[BWAP_MAX_NODES][BWAP_MAX_NODES];	/* SLIT distances, 0 = unknown */
	int has_dist;
	char source[256];		/* where it came from, for reports */
};

void bwap_matrix_init(struct bwap_matrix *m, int nr_nodes);
/* Read a file in any supported format: bwap-matrix text, MLC --bandwidth_matrix output, topologies/NAME.topo. */
int bwap_matrix_load(struct bwap_matrix *m, const char *path, char *err, size_t errlen);
int bwap_matrix_parse_text(struct bwap_matrix *m, const char *text, char *err, size_t errlen);
int bwap_matrix_parse_mlc(struct bwap_matrix *m, const char *text, char *err, size_t errlen);
int bwap_matrix_parse_topo(struct bwap_matrix *m, const char *text, char *err, size_t errlen);
/* Build from the HMAT attributes in sysfs; see matrix.c for what it can and cannot know. */
int bwap_matrix_from_hmat(struct bwap_matrix *m, const struct bwap_topology *t,
			  int estimate, char *err, size_t errlen);
void bwap_matrix_write_text(const struct bwap_matrix *m, FILE *f);
void bwap_matrix_print(const struct bwap_matrix *m, FILE *f);

/* ---- weights.c: canonical weights, quantisation, DWP ----------------- */

struct bwap_weights {
	int nr_nodes;
	bwap_nodeset nodes;		/* nodes that get a share */
	double share[BWAP_MAX_NODES];	/* exact fraction, sums to 1 */
	unsigned char w[BWAP_MAX_NODES];	/* quantised 0..255 */
	double qshare[BWAP_MAX_NODES];	/* fraction the u8 weights give */
	double relerr[BWAP_MAX_NODES];	/* |qshare - share| / share */
	double max_relerr;
};

/*
 * capacity[i] of each node in nodes to the workers; the weight of node i is
 * proportional to it.  Returns 0 or -1 (err set).
 */
int bwap_weights_from_capacity(struct bwap_weights *w, const double *capacity, int nr_nodes,
			       bwap_nodeset nodes, char *err, size_t errlen);
/* capacity[i] = min over w in workers of bw(i -> w) = m->bw[w][i]. */
int bwap_canonical_capacity(const struct bwap_matrix *m, bwap_nodeset workers,
			    bwap_nodeset nodes, double *capacity, char *err, size_t errlen);
/*
 * Quantise w->share to u8 weights: the smallest maximum weight (1..max_weight)
 * whose per-node relative error is below goal; failing that, the best found.
 */
void bwap_weights_quantise(struct bwap_weights *w, int max_weight, double goal);
/*
 * Data-to-worker proximity: scale the shares of non-worker nodes by (1 - dwp)
 * and renormalise, keeping ratios inside each group.  dwp 0 = canonical,
 * 1 = nothing on non-workers (those nodes leave w->nodes).
 */
void bwap_weights_apply_dwp(struct bwap_weights *w, bwap_nodeset workers, double dwp);
void bwap_weights_print(const struct bwap_weights *w, FILE *f);

/* ---- sysfs_weights.c: the global weighted-interleave table ----------- */

#define BWAP_SYSFS_WEIGHTS "/sys/kernel/mm/mempolicy/weighted_interleave"

int bwap_sysfs_weights_read(int *weights, int nr_nodes, bwap_nodeset nodes, char *err, size_t errlen);
/* weighted_interleave/auto: 1 true, 0 false, -1 absent (kernels before 6.16). */
int bwap_sysfs_weights_auto(void);
/* Save the current table to state_dir/sysfs-weights.saved (once), then write. */
int bwap_sysfs_weights_apply(const struct bwap_weights *w, const char *state_dir,
			     char *err, size_t errlen);
int bwap_sysfs_weights_restore(const char *state_dir, char *err, size_t errlen);
/* The same, saving to STATE_DIR/saved instead (bwapd keeps its own: BWAPD_SYSFS_SAVED). */
int bwap_sysfs_weights_apply_as(const struct bwap_weights *w, const char *state_dir, const char *saved,
				char *err, size_t errlen);
int bwap_sysfs_weights_restore_as(const char *state_dir, const char *saved, char *err, size_t errlen);

/* ---- peer_weights.c: the weights other tools would pick ------------ */

/*
 * Upstream's auto weights (Linux 6.16+; 7.3's reduce_interleave_weights()):
 * bw[n] for each memory node n in mem (0 = unknown), scaled to whole
 * numbers of at most BWAP_AUTO_WEIGHTINESS, at least 1, divided by their
 * gcd.  w[n] for n in mem, 0 elsewhere.
 */
#define BWAP_AUTO_WEIGHTINESS 32	/* the kernel's "weightiness" */
void bwap_auto_weights(const unsigned int *bw, bwap_nodeset mem, int nr_nodes, unsigned char *w);
/*
 * The bandwidths 7.3 feeds that rule: min(read, write) of each memory
 * node's HMAT/CDAT access1 (best CPU initiator) coordinates, as sysfs shows
 * them; 0 where there are none.  Returns how many nodes have one.
 */
int bwap_auto_bandwidth_from_hmat(const struct bwap_topology *t, unsigned int *bw);
/*
 * hmsdk bwactl's weights (tools/iw_ratio.py) from row[n], the MB/s an
 * initiator node's CPUs get from each node n in nodes (an MLC matrix
 * row): halved together while the largest is above BWAP_HMSDK_SOFT_MAX,
 * rounded, divided by their gcd.  0, or -1 with err (a weight of 0 or
 * above 255, or an unknown entry).
 */
#define BWAP_HMSDK_SOFT_MAX 10		/* iw_ratio.py's SOFT_MAX_RATIO_VAL */
int bwap_hmsdk_weights(const double *row, bwap_nodeset nodes, int nr_nodes, unsigned char *w,
		       char *err, size_t errlen);

/* ---- mempolicy.c: raw syscalls, no libnuma ---------------------------- */

/*
 * What the running kernel offers: the BWAP series (set_mempolicy2 and
 * process_mpol_reweight), a stock kernel with weighted interleave (mode 6
 * and the global sysfs table, 6.9+), or a stock kernel without it.
 */
enum bwap_kernel_mode { BWAP_KERNEL_STOCK, BWAP_KERNEL_STOCK_WI, BWAP_KERNEL_SERIES };
enum bwap_kernel_mode bwap_kernel_mode(void);
/*
 * "BWAP series" (parts 1-3, or a kernel that has the whole series), "BWAP
 * series without rebalance (parts 1-2)" (bwap_kernel_rebalance() below),
 * "stock with weighted interleave", "stock".
 */
const char *bwap_kernel_mode_name(enum bwap_kernel_mode m);
/*
 * Whether the kernel moves pages when weights change (the series' part 3:
 * MPOL_REWEIGHT_REBALANCE, MPOL_ARGS_REBALANCE).  On a series kernel
 * without it (parts 1-2: process_mpol_reweight changes weights only) the
 * tools set the weights with process_mpol_reweight and move the resident
 * pages from user space with move_pages (lib/place.c), as portable mode
 * does.  Probed once with a call that changes nothing (mempolicy.c).
 */
enum bwap_rebalance {
	BWAP_REBALANCE_NO_CALL,		/* no process_mpol_reweight (stock, or the series' part 1) */
	BWAP_REBALANCE_UNKNOWN_FLAG,	/* process_mpol_reweight without it: parts 1-2 */
	BWAP_REBALANCE_NOT_BUILT,	/* the whole series, CONFIG_NUMA_POLICY_REBALANCE off */
	BWAP_REBALANCE_KERNEL,		/* the kernel rebalances */
};
enum bwap_rebalance bwap_kernel_rebalance(void);
/* One line for logs: "kernel rebalance", "no kernel rebalance: ..." */
const char *bwap_rebalance_name(enum bwap_rebalance r);

long bwap_sys_mbind(void *addr, unsigned long len, int mode, const unsigned long *mask,
		    unsigned long maxnode, unsigned int flags);
/* Task policy MPOL_WEIGHTED_INTERLEAVE over w->nodes with w->w as own weights. */
long bwap_set_own_weights(const struct bwap_weights *w);
/* The same as the VMA policy of [addr, addr + len) (mbind2), w indexed by node. */
long bwap_mbind_own_weights(void *addr, unsigned long len, bwap_nodeset nodes, const unsigned char *w);
/*
 * New weights w for the weighted-interleave policies of the process behind
 * pidfd (process_mpol_reweight, nr 1003, with a struct mpol_reweight_args).
 * flags are the call's own MPOL_REWEIGHT_* (mempolicy2.h): without any,
 * only policies with weights of their own change; MPOL_REWEIGHT_GLOBAL
 * takes those that follow the global sysfs weights too, MPOL_REWEIGHT_SHARED
 * the shared (shmem, memfd, SysV) ones, MPOL_REWEIGHT_REBALANCE then moves
 * the resident pages.  Each caller says which it passes and why.  Returns
 * pages not moved, or -1 (errno; ENOSYS on kernels without it).
 */
long bwap_process_mpol_reweight(int pidfd, const struct bwap_weights *w, unsigned int flags);
/* Read back the task policy: mode, nodes and weights (maxnode bytes). */
long bwap_get_own_policy(int *mode, bwap_nodeset *nodes, unsigned char *weights);
/* Pages of [buf, buf + bytes) not resident on node (move_pages query), or -1 (errno). */
long bwap_pages_off_node(void *buf, size_t bytes, int node);
/* Pin the calling thread (0) or a thread to the CPUs of a node set. */
int bwap_pin_to_cpus(int tid, const unsigned char *cpus);

/* ---- state.c: the state directory ------------------------------------ */

#define BWAP_STATE_DIR "/var/lib/bwap"
int bwap_state_mkdir(const char *dir, char *err, size_t errlen);
/* dir/name into buf. */
char *bwap_state_path(const char *dir, const char *name, char *buf, size_t len);
/*
 * The state dir exists (made if not) and a file can be created in it:
 * checked before work whose result would otherwise be lost.  0 or -1.
 */
int bwap_state_writable(const char *dir, char *err, size_t errlen);

/*
 * A state file replaced all at once: written to a temporary file beside
 * it, fsynced, renamed over it (and the directory fsynced), so a reader
 * sees the old file or the new one, never a part.  open, write to ->f,
 * then commit; a failed commit leaves the old file and no temporary.
 */
struct bwap_atomic_file {
	FILE *f;
	char path[4096], tmp[4100];
};
int bwap_atomic_open(struct bwap_atomic_file *a, const char *path, char *err, size_t errlen);
int bwap_atomic_commit(struct bwap_atomic_file *a, char *err, size_t errlen);
void bwap_atomic_abort(struct bwap_atomic_file *a);

/* ---- measure.c: the read benchmark ----------------------------------- */

struct bwap_measure_opts {
	double seconds;		/* per (worker set, memory node) pair */
	size_t bytes;		/* buffer size per pair */
	int threads;		/* 0 = one per CPU of the worker set */
	int rounds;		/* measurements per pair; the median is kept */
	int quiet;		/* no progress on stderr */
};

/*
 * Read bandwidth, MB/s, of threads pinned to cpus reading a buffer bound to
 * mem_node.  Returns MB/s or a negative errno.
 */
double bwap_measure_read_bw(const unsigned char *cpus, int mem_node,
			    const struct bwap_measure_opts *o, char *err, size_t errlen);

/* ---- sets.c: which worker sets to measure ---------------------------- */

#define BWAP_MAX_SETS 256
#define BWAP_MAX_MEMBERS 32
struct bwap_set_class {
	bwap_nodeset rep;		/* the representative that gets measured */
	int nr_members;			/* sets it stands for, rep included */
	bwap_nodeset members[BWAP_MAX_MEMBERS];	/* the first ones of them */
	/* perm[j][node]: where the automorphism taking rep to members[j] sends node */
	unsigned char perm[BWAP_MAX_MEMBERS][BWAP_MAX_NODES];
};

/*
 * Rational worker sets of every size over the CPU nodes, folded by the
 * machine's symmetries.  See sets.c for the rule.  Returns the number of
 * classes written to out (at most max).
 */
int bwap_rational_sets(const struct bwap_topology *t, const struct bwap_matrix *m,
		       struct bwap_set_class *out, int max);
/* Same from a matrix alone, with its SLIT distances if it has them. */
int bwap_rational_sets_matrix(const struct bwap_matrix *m, struct bwap_set_class *out, int max);
/* Same on bare matrices (dist may be NULL), for tests. */
int bwap_rational_sets_raw(int nr_nodes, bwap_nodeset cpu_nodes,
			   int dist[BWAP_MAX_NODES][BWAP_MAX_NODES],
			   const struct bwap_matrix *m, struct bwap_set_class *out, int max);

/* ---- model.c: the placement model (see MODEL.md) --------------------- */

struct bwap_machine {
	int nr_nodes;
	double bw[BWAP_MAX_NODES][BWAP_MAX_NODES];	/* GB/s, [cpu node][mem node] */
	double lat[BWAP_MAX_NODES][BWAP_MAX_NODES];	/* unloaded latency, ns */
	double mc_cap[BWAP_MAX_NODES];			/* memory controller capacity, GB/s */
	double link_cap[BWAP_MAX_NODES][BWAP_MAX_NODES];	/* path mem node -> cpu node, GB/s */
};

struct bwap_workload {
	int threads[BWAP_MAX_NODES];	/* threads per worker node */
	double mlp;			/* outstanding 64-byte misses per thread */
	double demand;			/* GB/s one thread wants at most (its compute limit) */
	double shared;			/* fraction of accesses to shared data (0..1) */
	int first_node;			/* node that first-touches shared data */
};

struct bwap_prediction {
	double throughput;		/* GB/s, all worker threads */
	double mean_latency;		/* ns, access-weighted */
	double stall;			/* fraction of thread time stalled on memory */
	double max_mc_util, max_link_util;
	int iterations;
};

/* A model machine from a matrix; controller = local bw, link = matrix entry. */
int bwap_machine_from_matrix(struct bwap_machine *mc, const struct bwap_matrix *m,
			     char *err, size_t errlen);
/*
 * Predict with placement given as the fraction of pages per node (dist sums
 * to 1), used for private and shared data alike; first_touch != 0 instead
 * puts private data on the thread's node and shared data on first_node.
 */
void bwap_model_predict(const struct bwap_machine *mc, const struct bwap_workload *wl,
			const double *dist, int first_touch, struct bwap_prediction *out);
/* Share vector of a weights struct into dist[]. */
void bwap_weights_to_dist(const struct bwap_weights *w, double *dist);

/* ---- tuner.c: hill climbing on DWP ----------------------------------- */

/*
 * The knobs.  bwapd.conf and bwapd's options set them; every one is
 * explained (meaning and trade-off) at its default in tuner.c.
 */
struct bwap_tuner_params {
	double step;		/* DWP step, 0 < step <= 1 (default 0.10) */
	int samples;		/* n: samples per measurement (default 20) */
	int trim;		/* c: samples dropped at each end (default 5); 2c < n */
	double interval;	/* t: seconds per sample (default 0.2); used by the driver */
	double min_gain;	/* relative improvement that counts as better (default 0.002) */
	double drift;		/* relative change at the optimum that restarts (default 0.10) */
	double lo, hi;		/* DWP bounds, 0 <= lo <= hi <= 1 (default 0, 1) */
};

#define BWAP_TUNER_MAX_SAMPLES 1000
#define BWAP_TUNER_MAX_HISTORY 512

enum bwap_tuner_action {
	BWAP_TUNER_SAMPLE,	/* keep sampling at the current DWP */
	BWAP_TUNER_MOVE,	/* a search step: push the weights for the new current DWP */
	BWAP_TUNER_CONVERGED,	/* local optimum found: push it (may be a step back), then monitor */
	BWAP_TUNER_RESTART,	/* the metric drifted at the optimum: a new search starts there; push t->cur, its first step */
};

enum bwap_tuner_phase { BWAP_TUNER_SEARCHING, BWAP_TUNER_SETTLED };

/* One finished measurement, for logs and the search curve. */
struct bwap_tuner_point {
	double dwp;
	double metric;		/* trimmed mean of the samples; lower is better */
	int search;		/* which search (0, then one more per restart) */
	int settled;		/* measured while monitoring the optimum */
};

struct bwap_tuner {
	struct bwap_tuner_params p;
	enum bwap_tuner_phase phase;
	double cur;		/* DWP being measured (and pushed) now */
	double samples[BWAP_TUNER_MAX_SAMPLES];
	int nr_samples;
	int have_best;
	double best_dwp, best_metric;
	int dir;		/* +1 towards the workers, -1 away */
	int gains_in_dir;	/* improvements since dir was chosen */
	int tried_other;	/* the other direction was tried from best */
	int searches;		/* 1 + restarts */
	double last_metric;	/* of the latest measurement */
	struct bwap_tuner_point hist[BWAP_TUNER_MAX_HISTORY];
	int nr_hist;		/* entries in hist (ring after it fills: the latest win) */
	long nr_points;		/* measurements ever */
};

void bwap_tuner_defaults(struct bwap_tuner_params *p);
/* Check p; 0, or -1 with what is wrong and how to fix it in err. */
int bwap_tuner_check(const struct bwap_tuner_params *p, char *err, size_t errlen);
/* Start a search at start (clamped to [lo, hi]). */
void bwap_tuner_init(struct bwap_tuner *t, const struct bwap_tuner_params *p, double start);
/* One sample (lower is better) taken at t->cur; what to do next. */
enum bwap_tuner_action bwap_tuner_feed(struct bwap_tuner *t, double sample);
/* Drop the samples of the measurement under way (the signal had a gap). */
void bwap_tuner_discard(struct bwap_tuner *t);
/* Mean of samples without the c lowest and c highest (n > 2c); sorts v. */
double bwap_trimmed_mean(double *v, int n, int c);
const char *bwap_tuner_action_name(enum bwap_tuner_action a);

/*
 * Co-scheduled mode (--protect), BWAP's two-stage search.  Stage 1 tunes
 * the target's DWP on the *protected* process's signal, starting at
 * start: the DWP where it settles is the lowest that is best for the
 * protected process.  Stage 2 tunes on the target's own signal within
 * [that floor, hi], starting at the floor.  Without protection it is
 * stage 2 from the start.
 */
struct bwap_cosched {
	struct bwap_tuner t;
	struct bwap_tuner_params p;
	int stage;		/* 1: feed the protected process's signal; 2: the target's */
	double floor;		/* stage 2's lower bound */
};

void bwap_cosched_init(struct bwap_cosched *c, const struct bwap_tuner_params *p, double start,
		       int protect);
/*
 * One sample of the signal c->stage names.  When stage 1 settles it
 * returns BWAP_TUNER_MOVE with c->stage == 2 and c->t.cur == c->floor:
 * push that, then feed the target's signal.
 */
enum bwap_tuner_action bwap_cosched_feed(struct bwap_cosched *c, double sample);
/* The protected process is gone: stage 2 starts at the current DWP. */
void bwap_cosched_end_stage1(struct bwap_cosched *c);

/* ---- pages.c: where a process's pages are ------------------------------ */

#define BWAP_MAX_VMAS 4096

/*
 * Resident pages per node of the VMAs the kernel's rebalance handles
 * (anonymous, as /proc/PID/numa_maps lists them: no file=), summed, and
 * each VMA's own counts for largest-remainder targets.
 */
struct bwap_pagedist {
	int nr_nodes;
	long pages[BWAP_MAX_NODES];	/* summed over the VMAs below */
	long total;
	int nr_vmas;
	struct bwap_vma_pages {
		unsigned long start;
		long pages[BWAP_MAX_NODES];
	} *vma;				/* malloc()ed, nr_vmas entries */
};

/* Read /proc/PID/numa_maps; 0 or -1 (err set; errno ENOENT/ESRCH if gone). */
int bwap_pagedist_read(pid_t pid, int nr_nodes, struct bwap_pagedist *d, char *err, size_t errlen);
/* Same from numa_maps text; file-backed VMAs count if is_shmem(path) says they are on tmpfs. */
int bwap_pagedist_parse(const char *text, int nr_nodes, struct bwap_pagedist *d);	/* no files */
int bwap_pagedist_parse_ex(const char *text, int nr_nodes, struct bwap_pagedist *d,
			   int (*is_shmem)(const char *path));
int bwap_path_is_shmem(const char *path);
void bwap_pagedist_free(struct bwap_pagedist *d);
/* Portable mode: count memory under plain interleave and the default policy too. */
void bwap_pagedist_portable(int on);
/*
 * Largest-remainder shares of total pages over nr nodes with weights w,
 * ties to the node with more cur pages, then the lower id: exactly what
 * the kernel's mpol_rebalance_targets() computes.
 */
void bwap_largest_remainder(long total, const unsigned char *w, const long *cur, int nr, long *target);
/*
 * Per-node targets summed over d's VMAs for weights w, and the pages the
 * kernel must move to reach them (sum of max(0, current - target)).
 */
long bwap_pagedist_targets(const struct bwap_pagedist *d, const unsigned char *w, long *target);
/*
 * Folio units, as mm/mempolicy_rebalance.c's mpol_rebalance_split() plans
 * them: a large folio (THP) of unit pages moves whole, so the goals (the
 * largest-remainder shares of every page, bwap_largest_remainder()) are
 * met with whole large folios where they cost the fewest moves, no node
 * passing its goal by a folio, and base pages fill each node's remainder,
 * exactly where there are enough of them.  Per node of nr: base pages,
 * pages in large folios of unit pages (unit 0: none), pages that cannot
 * move (fixed: parts of folios, smaller large folios); out: the base and
 * large-folio pages each node ends with.
 */
void bwap_folio_split(long unit, int nr, const long *base, const long *large, const long *fixed,
		      const long *goal, long *base_to, long *large_to);

/* ---- folios.c: a process's folios from user space ----------------------- */

/*
 * One unit of portable mode's plan: a base page, a whole large folio (a
 * THP: its pages mapped here in a row, moved as one), or the pages of a
 * folio mapped here only in part (whole 0: they cannot move alone).
 */
struct bwap_unit {
	unsigned long addr;	/* its first page */
	long pages;
	int node;		/* from the move_pages query; -1 before it */
	int vma;		/* its mapping, numbered in address order */
	int whole;
};

struct bwap_unit_list {
	struct bwap_unit *u;
	long n, cap;
};

/* How much of the folios a scan sees. */
enum bwap_folios_known {
	BWAP_FOLIOS_NONE,	/* nothing: every page is a base page */
	BWAP_FOLIOS_ALL,	/* every folio: pagemap PFNs and /proc/kpageflags (root) */
	BWAP_FOLIOS_PMD,	/* the PMD-mapped THPs only: PAGEMAP_SCAN (Linux 6.7+), no root needed */
};

/*
 * /proc/PID/pagemap (PFNs need CAP_SYS_ADMIN) and /proc/kpageflags (root)
 * open; folios_known says what the scans see, why what is missing when it
 * is not BWAP_FOLIOS_ALL.
 */
struct bwap_folio_reader {
	int pagemap, kpageflags;
	int folios_known;	/* enum bwap_folios_known */
	char why[160];
	long pmd_pages;		/* pages in a PMD-mapped THP (hpage_pmd_size) */
	long block;		/* the kpageflags block cached in flags */
	uint64_t flags[512];
};

/* pid 0: the caller.  -1 if pagemap cannot be read (then every page is listed). */
int bwap_folio_reader_open(pid_t pid, struct bwap_folio_reader *r);
void bwap_folio_reader_close(struct bwap_folio_reader *r);
/*
 * Append the present pages of [start, end) to l as units of mapping vma,
 * in address order; exclusive_only: only pages mapped by this process
 * alone (pagemap bit 56), the ones MPOL_MF_MOVE moves.  -1: out of memory.
 */
int bwap_folio_scan(struct bwap_folio_reader *r, unsigned long start, unsigned long end, int vma,
		    int exclusive_only, struct bwap_unit_list *l);
void bwap_unit_list_free(struct bwap_unit_list *l);

/* The caller's pages of a buffer per node, and how many are in whole large folios. */
struct bwap_page_census {
	int nr_nodes;			/* highest node with pages + 1 */
	long total;			/* present pages */
	long pages[BWAP_MAX_NODES];	/* per node, every page asked with move_pages */
	long large[BWAP_MAX_NODES];	/* of them, pages in whole large folios */
	long large_folios, large_size;	/* how many, and the largest's pages */
	int folios_known;		/* enum bwap_folios_known (why says what is missing) */
	char why[160];
};
int bwap_count_pages(const void *buf, size_t len, struct bwap_page_census *c, char *err, size_t errlen);

/* ---- place.c: portable mode, pages placed from user space ---------------- */

struct bwap_place_stats {
	int nr_nodes;
	long pages;				/* resident anonymous pages seen */
	long before[BWAP_MAX_NODES];		/* per node, from the move_pages query */
	long target[BWAP_MAX_NODES];		/*
						 * the plan per node, summed over mappings: each
						 * mapping's largest-remainder shares, met in
						 * folio units (bwap_folio_split())
						 */
	long after[BWAP_MAX_NODES];		/* per node after the moves (a second query) */
	long minimum;				/* pages the plan moves: per mapping, kind and node, max(0, before - plan) */
	long moved, failed;			/* pages move_pages moved, and could not */
	long large_folios, large_size;		/* whole large folios planned, and the largest's pages */
	long large_moved;			/* of them, moved */
	long fixed;				/* pages of folios mapped in part, or smaller large folios: they stay */
	int folios_known;			/* enum bwap_folios_known; why says what is missing */
	char why[160];
	double seconds;				/* the query and the moves (not the check after) */
	long kept_mappings;			/* mappings left alone: the program's own bind/prefer/local */
	long not_wi_mappings;			/* bwap_place_pages_wi(): not weighted interleave, left alone */
};

/* One move of bwap_place_plan(): unit index in the list, destination node. */
struct bwap_move {
	long unit;
	int dest;
};

/*
 * Portable mode's plan for l (units grouped by mapping, in address order,
 * nodes queried) at weights w over nr nodes: fills mv (l->n entries at
 * most) and st's before, target, minimum, pages, large_folios, large_size
 * and fixed (added to what st holds); returns the number of moves.
 */
long bwap_place_plan(const struct bwap_unit_list *l, const unsigned char *w, int nr, struct bwap_place_stats *st,
		     struct bwap_move *mv);
/*
 * Make the nmv moves mv of l's units with move_pages(2), a batch at a
 * time, one address per unit (a large folio moves whole); adds the pages
 * to st's moved, large_moved and failed.  0, or -1 with err.
 */
int bwap_place_moves(pid_t pid, const struct bwap_unit_list *l, const struct bwap_move *mv, long nmv,
		     struct bwap_place_stats *st, char *err, size_t errlen);

/*
 * Place pid's resident anonymous pages at w's exact shares in folio
 * units, moving only the minimum (dry_run: only compute).  Mappings
 * under a policy the program chose (bind, prefer, local: numa_maps) are
 * left alone and counted in st->kept_mappings.  Needs ptrace
 * access to pid; folio boundaries need root (CAP_SYS_ADMIN, /proc/kpageflags).
 * 0 or -1 with err (errno's text).
 */
int bwap_place_pages(pid_t pid, const struct bwap_weights *w, int dry_run, struct bwap_place_stats *st,
		     char *err, size_t errlen);
/*
 * The same for the mappings under weighted interleave only (numa_maps),
 * the memory the kernel's rebalance moves: what stands in for it on a
 * kernel whose process_mpol_reweight has no MPOL_REWEIGHT_REBALANCE (the
 * series' parts 1-2).  The others are counted in st->not_wi_mappings.
 */
int bwap_place_pages_wi(pid_t pid, const struct bwap_weights *w, int dry_run, struct bwap_place_stats *st,
			char *err, size_t errlen);
/*
 * The same for [start, start + len) of the calling process, counted as
 * one mapping: its present pages end at w's largest-remainder shares.
 */
int bwap_place_range(void *start, size_t len, const struct bwap_weights *w, struct bwap_place_stats *st,
		     char *err, size_t errlen);
/* set_mempolicy(MPOL_INTERLEAVE, nodes), or mode 6 over the global table if weighted. */
long bwap_set_own_interleave(bwap_nodeset nodes, int weighted);

/* A mapping, [start, end). */
struct bwap_range {
	unsigned long start, end;
};
/*
 * pid's mappings that portable mode places (private anonymous writable
 * ones and the heap, from /proc/PID/maps), in address order, up to max;
 * their number, or -1 with err.
 */
int bwap_anon_mappings(pid_t pid, struct bwap_range *r, int max, char *err, size_t errlen);
/*
 * The present pages of r[0..n) as units of mapping i + 1 (lib/folios.c),
 * each with its node (a move_pages query); folios_known as the reader saw
 * them.  0 or -1 with err.
 */
int bwap_units_of(pid_t pid, const struct bwap_range *r, int n, struct bwap_unit_list *l, int *folios_known,
		  char *err, size_t errlen);

/* ---- damon.c: one DAMON kdamond with weighted dests (bwapd's DAMON backend) -- */

#define BWAP_DAMON_ADMIN "/sys/kernel/mm/damon/admin"
#define BWAP_DAMON_MAX_RANGES 64
#define BWAP_DAMON_MAX_PASSES 20	/* passes still moving pages before bwapd stops waiting (lib/damon.c) */

/*
 * bwapd's kdamond 0 for one target: a vaddr context over the target's
 * mappings, one migrate_hot scheme with weighted dests (paused, or off
 * where the kernel cannot pause, while idle).
 * What was last committed; the admin directory is $BWAP_DAMON_ADMIN if set.
 */
struct bwap_damon {
	int on;				/* kdamond 0 is ours and running */
	pid_t pid, kdamond_pid;
	int nr_dests;
	int node[BWAP_MAX_NODES];
	unsigned char weight[BWAP_MAX_NODES];
	int nr_ranges;
	struct bwap_range range[BWAP_DAMON_MAX_RANGES];
	int migrating;			/* a push committed, not yet settled */
	int can_pause;			/* contexts/0/pause exists (7.3): paused between pushes, else off */
	int drained;			/* this push's LRU batches drained after a quiet pass */
	int unsettled;			/* the last push still moved pages after BWAP_DAMON_MAX_PASSES passes */
	long batch_pages;		/* pages the last push moved only after the drain */
	long applied_at_commit, applied_seen, tried_seen;	/* the scheme's stats, bytes */
	long tried_at_commit, applied_at_drain;
};

struct bwap_damon_stats {
	long sz_tried, sz_applied, nr_applied;
};

/*
 * Can bwapd use DAMON here: its sysfs interface, writable, no kdamond set
 * up by anyone else, and weighted dests (a scheme is built and taken down
 * again to see).  1 or 0, why says which.
 */
int bwap_damon_probe(char *why, size_t len);
/* Build kdamond 0 on pid's mappings r with w's nodes and weights as dests, and start it; all or nothing. */
int bwap_damon_start(struct bwap_damon *d, pid_t pid, const struct bwap_range *r, int nr_ranges,
		     const struct bwap_weights *w, char *err, size_t errlen);
/*
 * New dests weights (and the mappings, again) to the running kdamond by
 * "commit", migrate_hot on; on failure the kdamond keeps what it had.
 */
int bwap_damon_commit(struct bwap_damon *d, const struct bwap_range *r, int nr_ranges,
		      const struct bwap_weights *w, char *err, size_t errlen);
/*
 * Has the last commit's migration settled?  After a whole pass over the
 * mappings moved nothing, every CPU's LRU batches are drained and one more
 * quiet pass is needed (what DAMON moved in between is batch_pages); after
 * BWAP_DAMON_MAX_PASSES passes that still moved pages it stops waiting
 * (unsettled).  Then the kdamond idles (paused, or off) and moved is the
 * pages DAMON moved since the commit.  1, 0 (still moving) or -1 with err.
 */
int bwap_damon_settled(struct bwap_damon *d, long *moved, char *err, size_t errlen);
int bwap_damon_stats(struct bwap_damon *d, struct bwap_damon_stats *st, char *err, size_t errlen);
/* Turn the kdamond off and remove it (nr_kdamonds 0). */
int bwap_damon_stop(struct bwap_damon *d, char *err, size_t errlen);
/*
 * A killed bwapd's kdamond: if kdamond 0 is the only one and is that
 * kdamond or monitors that target, turn it off and remove it.  1 removed,
 * 0 nothing of ours there, -1 with err.
 */
int bwap_damon_remove_left(pid_t kdamond_pid, pid_t target_pid, char *err, size_t errlen);
/*
 * Where d's committed dests put the units l (of mappings r, as
 * bwap_units_of() lists them), per node, added to layout; now gets where
 * they are.  Returns the pages not where the layout puts them.
 */
int bwap_damon_layout(const struct bwap_damon *d, const struct bwap_range *r, int nr_ranges,
		      const struct bwap_unit_list *l, long *now, long *layout);
/*
 * Why the last settled push left off pages off DAMON's layout, and what
 * the drain of the LRU batches found, in words for the log.  0.
 */
int bwap_damon_off_why(const struct bwap_damon *d, long off, char *buf, size_t len);

/* ---- ctl.c: bwapd's control socket, client side -------------------- */

/*
 * STATE_DIR/bwapd.sock, a unix stream socket; one request line per
 * connection, reply "ok" or "error: WHY" then the body (bwapd(8)).
 */
char *bwap_ctl_socket_path(const char *state_dir, char *buf, size_t len);
/* Connected fd, or -1 with a message saying what failed and how to start bwapd. */
int bwap_ctl_connect(const char *state_dir, char *err, size_t errlen);
/*
 * Send one request line, return the whole reply (malloc()ed; first line
 * "ok" or "error: ..."), or NULL with err set.
 */
char *bwap_ctl_request(const char *state_dir, const char *request, char *err, size_t errlen);
/* Same, giving up after timeout_ms without an answer (the default is 30 s). */
char *bwap_ctl_request_timeout(const char *state_dir, const char *request, int timeout_ms,
			       char *err, size_t errlen);
/*
 * The same, passing the descriptors fds (at most BWAP_CTL_MAX_FDS) with
 * the request (SCM_RIGHTS): the request's "fd" words take them in order
 * (bwapd(8)).  The caller keeps and closes its own copies.
 */
#define BWAP_CTL_MAX_FDS 4
char *bwap_ctl_request_fds(const char *state_dir, const char *request, const int *fds, int nfds, int timeout_ms,
			   char *err, size_t errlen);
/* Hand one request line to bwapd within timeout_ms and go, without its answer; 0, or -1 with err. */
int bwap_ctl_send(const char *state_dir, const char *request, int timeout_ms, char *err, size_t errlen);


/* ---- search.c: the coupled thread/page placement search --------------- */

enum bwap_page_policy {
	BWAP_PAGES_FIRST_TOUCH,	/* the default policy: pages where first touched */
	BWAP_PAGES_LOCALITY,	/* MPOL_BIND to the thread nodes */
	BWAP_PAGES_INTERLEAVE,	/* uniform interleave over the page nodes */
	BWAP_PAGES_DWP0,	/* BWAP canonical weights over the page nodes */
	BWAP_PAGES_DWP05,	/* the same at DWP 0.5 */
	BWAP_PAGES_DWP1,	/* the same at DWP 1 (only the thread nodes keep pages) */
	BWAP_NR_PAGE_POLICIES
};
extern const char *const bwap_page_policy_name[BWAP_NR_PAGE_POLICIES];

enum bwap_point_state { BWAP_POINT_NEW, BWAP_POINT_DONE, BWAP_POINT_FAILED };
enum bwap_search_reason { BWAP_WHY_BASELINE, BWAP_WHY_MODEL, BWAP_WHY_NEIGHBOUR, BWAP_WHY_EXPLORE };

#define BWAP_SEARCH_MAX_SAMPLES 64
#define BWAP_SEARCH_MAX_PHASES 8
#define BWAP_PHASE_NAME_MAX 32

struct bwap_search_point {
	int id;
	bwap_nodeset thread_nodes;	/* the rational set the threads may use (TND = its size) */
	int set_class;			/* index among the rational sets, -1 for the baseline */
	int contiguous;			/* 0 scatter, 1 contiguous */
	int nr_threads;			/* NT */
	int per_node[BWAP_MAX_NODES];	/* threads on each node as placed */
	enum bwap_page_policy policy;
	int page_degree;		/* PND: nodes the policy may put pages on */
	bwap_nodeset page_nodes;	/* for interleave/BWAP: nodes with a non-zero weight */
	unsigned char weights[BWAP_MAX_NODES];	/* interleave: 1s; BWAP: canonical (+DWP), u8 */
	double predicted;		/* model throughput, GB/s (MODELLED) */
	/* measured */
	enum bwap_point_state state;
	enum bwap_search_reason why;	/* why it was run */
	int order;			/* 1 = first run */
	int nr_samples;
	double samples[BWAP_SEARCH_MAX_SAMPLES];
	double score;			/* median of samples */
	double seconds;			/* wall time of all its runs */
	/* --phases: seconds in each phase per run (phase names in the space) */
	double phase_samples[BWAP_SEARCH_MAX_PHASES][BWAP_SEARCH_MAX_SAMPLES];
	double phase_score[BWAP_SEARCH_MAX_PHASES];	/* median seconds, NAN if never seen */
};

struct bwap_search_opts {
	bwap_nodeset thread_degrees;	/* bit d: TND d allowed */
	bwap_nodeset page_degrees;	/* bit d: PND d allowed */
	unsigned policies;		/* bit per enum bwap_page_policy */
	int nr_thread_counts;		/* 0 = TND x 1, 2, 4, ... and all CPUs of the set */
	int thread_counts[64];
	double mlp, shared, demand;	/* the model's workload (bwapctl model's --mlp ...) */
};

struct bwap_search_space {
	int nr_nodes;
	bwap_nodeset mem_nodes;
	int nr_cpus[BWAP_MAX_NODES];	/* set by the caller before build: CPUs per node */
	int cpu[BWAP_MAX_NODES][256];	/* their ids */
	int higher_is_better;		/* score direction (wall time: lower) */
	struct bwap_search_point *pt;
	int nr, cap;
	int baseline;			/* index of first-touch, scatter, all CPUs */
	int nr_duplicates, nr_pruned;	/* folded into an equal point; cut by Table 1 */
	int turn;			/* bwap_search_next's rotation */
	int nr_phases;			/* phase names seen (BWAP_PHASE protocol) */
	char phase[BWAP_SEARCH_MAX_PHASES][BWAP_PHASE_NAME_MAX];
};

void bwap_search_opts_defaults(struct bwap_search_opts *o);
/* The pruned space over s->nr_cpus/cpu and m; 0 or -1 (err). */
int bwap_search_space_build(struct bwap_search_space *s, const struct bwap_matrix *m,
			    const struct bwap_search_opts *o, char *err, size_t errlen);
/* Each point's predicted throughput from the placement model fed with model. */
int bwap_search_predict(struct bwap_search_space *s, const struct bwap_matrix *model,
			const struct bwap_search_opts *o, char *err, size_t errlen);
void bwap_search_space_free(struct bwap_search_space *s);
/* CPUs the point's threads run on, in OMP_PLACES order; returns how many. */
int bwap_search_point_cpus(const struct bwap_search_space *s, const struct bwap_search_point *p, int *cpus);
/* Next point to run and why, or -1 when every point has run. */
int bwap_search_next(struct bwap_search_space *s, enum bwap_search_reason *why);
const char *bwap_search_reason_name(enum bwap_search_reason r);
int bwap_search_better(const struct bwap_search_space *s, double a, double b);
/* Best measured point, or -1. */
int bwap_search_best(const struct bwap_search_space *s);
/* Speedup over the baseline (> 1 is better), NAN if either is unmeasured. */
double bwap_search_speedup(const struct bwap_search_space *s, const struct bwap_search_point *p);
double bwap_median(const double *v, int n);
/*
 * The fraction of measured pairs the model orders right (1 until 8 are
 * measured).  Below BWAP_SEARCH_MIN_TRUST the model's turns go to
 * neighbours of the best measured point, chosen without the model.
 */
#define BWAP_SEARCH_MIN_TRUST 0.6
double bwap_search_model_trust(const struct bwap_search_space *s);

/* ---- bench.c: STREAM-style kernels under an exact page placement ---- */

#include <pthread.h>

enum bwap_bench_kernel {
	BWAP_BENCH_COPY,	/* c = a */
	BWAP_BENCH_SCALE,	/* b = s * c */
	BWAP_BENCH_ADD,		/* c = a + b */
	BWAP_BENCH_TRIAD,	/* a = b + s * c */
	BWAP_BENCH_SUM,		/* s += a, read only */
	BWAP_BENCH_NR_KERNELS
};
extern const char *const bwap_bench_kernel_name[BWAP_BENCH_NR_KERNELS];

/* What puts the pages where they are; each result row names it. */
enum bwap_bench_method {
	BWAP_BENCH_FIRST_TOUCH,		/* the default policy: each slice on its thread's node */
	BWAP_BENCH_INTERLEAVE,		/* mbind MPOL_INTERLEAVE over nodes */
	BWAP_BENCH_GLOBAL_WI,		/* mbind mode 6 over nodes: the global sysfs table */
	BWAP_BENCH_OWN_WEIGHTS,		/* mbind2 with own weights: the BWAP series */
	BWAP_BENCH_MOVE_PAGES,		/* interleave, then move_pages to exact shares: portable */
	BWAP_BENCH_NR_METHODS
};
extern const char *const bwap_bench_method_name[BWAP_BENCH_NR_METHODS];

struct bwap_bench_place {
	enum bwap_bench_method method;
	bwap_nodeset nodes;			/* the policy's nodes (not used by first-touch) */
	unsigned char w[BWAP_MAX_NODES];	/* weights; GLOBAL_WI: the sysfs table (0 counts as 1) */
};

struct bwap_bench {
	int nr_threads;
	int cpu[BWAP_MAX_CPUS];		/* thread i runs on cpu[i] */
	int thread_node[BWAP_MAX_CPUS];	/* and first-touches on that CPU's node */
	size_t chunk;			/* elements per thread, whole pages */
	size_t elems, array_bytes;	/* per array */
	char *region;			/* the three arrays, back to back */
	double *a, *b, *c;
	/* the pinned threads wait at start for cmd, and meet at done */
	pthread_barrier_t start, done;
	volatile int cmd;
	void *threads;
};

/*
 * Start nr_threads threads, thread i pinned to cpus[i] (node cpu_node[cpu]),
 * for three arrays of about array_bytes each.  0 or -1 (err).
 */
int bwap_bench_start(struct bwap_bench *b, const int *cpus, int nr_threads, size_t array_bytes,
		     const int *cpu_node, char *err, size_t errlen);
/*
 * Fresh arrays placed by p and first-touched by their threads: expected[]
 * is where each page must be, actual[] where move_pages says it is (per
 * node); *moved the pages portable placement moved.  -1 with err if the
 * policy failed or any node's count differs.
 */
int bwap_bench_place(struct bwap_bench *b, const struct bwap_bench_place *p, long *expected, long *actual,
		     long *moved, char *err, size_t errlen);
/* One timed pass of kernel k over the arrays by all threads: GB/s (10^9 bytes/s). */
double bwap_bench_run(struct bwap_bench *b, enum bwap_bench_kernel k);
void bwap_bench_stop(struct bwap_bench *b);
/* "0:1024 1:512": the nodes with pages in v[BWAP_MAX_NODES], "-" if none. */
char *bwap_bench_counts_text(const long *v, char *buf, size_t len);
/* Bytes of last-level cache of the CPUs (distinct instances added up); *level its level. 0 if unknown. */
size_t bwap_llc_bytes(const unsigned char *cpus, int *level);
/* 1 if the CPU says it is emulated (QEMU TCG), with why; else 0. */
int bwap_cpu_is_emulated(char *why, size_t len);

/* ---- searchlog.c: bwapd's search log, read back ----------------------- */

/*
 * Read STATE_DIR/search-PID.log: "point DWP METRIC SEARCH SETTLED" per
 * measurement (the latest max kept), "settle DWP METRIC SEARCH" when a
 * search converges (the latest in *settled; settled->search = -1 if
 * none), "# metric: NAME".  Returns the points, or -1 with err.
 */
int bwap_search_log_read(const char *path, struct bwap_tuner_point *pts, int max,
			 struct bwap_tuner_point *settled, char *metric_name, size_t namelen,
			 char *err, size_t errlen);

/* ---- util ------------------------------------------------------------- */

/* Read a whole file into a NUL-terminated malloc()ed buffer; NULL on error (errno). */
char *bwap_read_file(const char *path, size_t *len);
/* What /proc/PID/stat says of a process (the fields after its command). */
struct bwap_proc_stat {
	long ppid;
	double cpu_seconds;		/* utime + stime */
	unsigned long long start_time;	/* clock ticks after boot: tells a reused pid from the process */
};
/* 0, or -1 if pid is gone (or the file does not parse). */
int bwap_proc_stat(pid_t pid, struct bwap_proc_stat *st);
/* /proc/vmstat mpol_rebalance_moved, or -1 where the kernel has no such line. */
long bwap_vmstat_moved(void);

#endif /* BWAP_H */
