/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bwapd's parts, bottom up: its shared state, clock and log (state.c),
 * its configuration (conf.c), the stall event (events.c), its signal
 * sources (signals.c), the targets it tunes (targets.c), the control
 * socket (control.c) and the poll loop (main.c).  Each file calls only
 * the ones before it; all of them read and change the state through the
 * one struct bwapd_state, defined in state.c.
 */
#ifndef BWAPD_H
#define BWAPD_H

#include <poll.h>
#include <stdint.h>
#include <sys/types.h>

#include "../lib/bwap.h"

/* ---- signals.c ---------------------------------------------------------- */

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
enum bwap_signal_kind { BWAP_SIGNAL_AUTO, BWAP_SIGNAL_PERF, BWAP_SIGNAL_MODEL, BWAP_SIGNAL_PROGRESS };

#define BWAP_SIGNAL_MAX_THREADS 256
/*
 * The perf signal's descriptors over all targets: two per counted thread,
 * at most 256 threads a target, and at most this many in all, well below
 * the unit's LimitNOFILE (65536), so that clients always find one.
 */
#define BWAP_PERF_FDS_MAX 32768
extern int bwap_perf_fds;

/*
 * The progress file: at least 8 bytes; the first 8 are a native-endian
 * uint64_t that the target increases by one per unit of work (mmap it
 * MAP_SHARED and use __atomic_add_fetch, or pwrite the new value).  bwapd
 * only reads it.  See bwapd(8), "PROGRESS FILE".
 */
struct bwap_signal_opts {
	enum bwap_signal_kind kind;
	const struct bwap_stall_event *ev;	/* the stall event; NULL: none on this CPU */
	int progress_fd;		/* the progress file a client passed (-1: none); bwap_signal_open dups it */
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
		int seen;		/* still in /proc/PID/task at the last scan */
	} thr[BWAP_SIGNAL_MAX_THREADS];
	const struct bwap_stall_event *ev;
	int fd_budget_said;		/* the log said once that BWAP_PERF_FDS_MAX stopped counting threads */
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
struct bwap_stall_event;
int bwap_perf_probe(pid_t pid, const struct bwap_stall_event *ev, char *err, size_t errlen);
const char *bwap_signal_kind_name(enum bwap_signal_kind k);
int bwap_signal_kind_parse(const char *s, enum bwap_signal_kind *k);
/* Threads of pid (from /proc/PID/task) per node of the CPUs they may run on. */
int bwap_threads_per_node(pid_t pid, bwap_nodeset workers, int *threads);


/* ---- events.c: the stall event, by name through libpfm4 ------------------ */

#define BWAP_STALL_CANDIDATES 4

/* A perf event for memory stall cycles, as perf_event_open wants it. */
struct bwap_stall_event {
	char name[128];			/* libpfm's name, or stalled-cycles-backend */
	char pmu[64];			/* the core PMU it was encoded for */
	uint32_t type;
	uint64_t config, config1;
	int generic;			/* the kernel's generic event */
};

/* One CPU family's defaults, best first. */
struct bwap_stall_family {
	const char *pmu_prefix;		/* libpfm PMU names of the family start so */
	const char *family;
	const char *events[BWAP_STALL_CANDIDATES];
	const char *why;
};

/* The family a libpfm PMU name belongs to (Intel when no other matches). */
const struct bwap_stall_family *bwap_stall_family_of(const char *pmu);
/*
 * want: "auto" (the family's first event this PMU has), "generic"
 * (stalled-cycles-backend), or a libpfm event name.  With list, says on it
 * what it tried and why.  0, or -1 with err.
 */
int bwap_stall_event_resolve(const char *want, struct bwap_stall_event *ev, FILE *list, char *err, size_t errlen);

/* ---- conf.c ------------------------------------------------------------- */


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
	uint64_t perf_raw;		/* raw PMU event for stalls; 0 = perf_event decides */
	char perf_event[128];		/* auto (the CPU family's default), generic, or a libpfm name */
	double model_mlp, model_shared;	/* the modelled workload */
	int model_threads;		/* per worker node; 0 = the target's thread count */
	double model_refresh;		/* seconds one numa_maps read is reused by the model signal */
	int max_targets;		/* targets in all; each costs about 20 KiB of bwapd's memory */
	int max_targets_per_user;	/* targets whose process one uid owns: no user fills bwapd alone */
	double client_timeout;		/* seconds a control client has to send its request and take the reply */
	int write_global_weights;	/* the DAMON backend may write the global weighted-interleave table */
	int keep_search_logs;		/* keep STATE_DIR/search-PID.log (0600) after its target ends */
	int max_clients_per_user;	/* connections one uid may hold open at once (waits included) */
	double wait_timeout;		/* seconds a "wait" may wait before bwapd answers it with an error */
};

void bwapd_conf_defaults(struct bwapd_conf *c);
/* One "key = value" setting; 0, or -1 with why in err. */
int bwapd_conf_set(struct bwapd_conf *c, const char *key, const char *value, char *err, size_t errlen);
/* A whole file; missing_ok: a missing file is fine.  0 or -1 ("FILE:LINE: why" in err). */
int bwapd_conf_load(struct bwapd_conf *c, const char *path, int missing_ok, char *err, size_t errlen);
/* Cross-checks after everything is set. */
int bwapd_conf_check(const struct bwapd_conf *c, char *err, size_t errlen);
void bwapd_conf_print(const struct bwapd_conf *c, FILE *f);

/* ---- state.c: the state the parts share, the clock, the log ----------- */

/*
 * What places a target's pages at a push, chosen per target in this
 * order: the series' process_mpol_reweight; DAMON's weighted dests with
 * the global table (stock kernel, write_global_weights = yes, one target
 * at a time, its memory under weighted interleave over the global table);
 * move_pages from user space (portable mode).
 */
/*
 * REWEIGHT: process_mpol_reweight with the kernel's rebalance (the whole
 * series); REWEIGHT_USER: process_mpol_reweight sets the weights, then
 * move_pages moves the pages (the series' parts 1-2, no rebalance);
 * DAMON, MOVE_PAGES: kernels without the series.
 */
enum bwapd_backend { BWAPD_BACKEND_REWEIGHT, BWAPD_BACKEND_DAMON, BWAPD_BACKEND_MOVE_PAGES,
		     BWAPD_BACKEND_REWEIGHT_USER };
const char *bwapd_backend_name(enum bwapd_backend b);
/* bwapd's own copy of the global table from before its first write (STATE_DIR/...) */
#define BWAPD_SYSFS_SAVED "bwapd-sysfs-weights.saved"
/* the targets, for the next bwapd to take back (targets_save()) */
#define BWAPD_TARGETS_FILE "targets"
/* "KDAMOND_PID TARGET_PID" while the DAMON backend runs: what a killed bwapd leaves to remove */
#define BWAPD_DAMON_MARK "bwapd-damon.kdamond"

#define MAX_WAITERS 16

/* What a finished push does next: nothing more, or answer the waiters on convergence. */
enum { PUSH_AFTER_NONE, PUSH_AFTER_CONVERGED };
enum push_job_kind { PUSH_JOB_PLACE, PUSH_JOB_REWEIGHT };

/*
 * One push for the worker thread: the inputs, copied from the target when
 * it was queued, and the results the worker fills in.  The worker touches
 * nothing else.
 */
struct push_job {
	struct push_job *next;
	struct target *t;		/* for the loop only: valid while t->gen == gen */
	unsigned long gen;
	enum push_job_kind kind;
	pid_t pid;
	int pidfd;			/* a dup, closed by the loop when it reaps the job */
	int nr_nodes;
	struct bwap_weights w;
	unsigned int flags;		/* process_mpol_reweight's */
	double dwp;
	char why[32];
	int after;			/* PUSH_AFTER_* */
	double queued_at;
	/* results */
	int rc, gone, errnum;
	long ret, expect, vm_before, vm_after;
	int placed;			/* REWEIGHT without REBALANCE: st is the move_pages placement after it */
	struct bwap_place_stats st;
	int have_counts;
	long now[BWAP_MAX_NODES], target[BWAP_MAX_NODES], before_target[BWAP_MAX_NODES], total;
	double seconds;
	char err[512];
};

struct target {
	int used;
	pid_t pid;
	unsigned long long start;	/* its start time (/proc/PID/stat): a reused pid is not it */
	uid_t uid;			/* owner of the process at attach: the per-user limit, status' view */
	long long job, step;		/* Slurm's job and step ids (attach ... job N step N); -1: none */
	long task;			/* Slurm's global task id; -1: none */
	int follow;			/* attach ... children 1: its descendants become targets too */
	pid_t parent;			/* a followed descendant: the target it came from */
	int pidfd;
	char comm[32];
	char how[16];			/* run, attach, cgroup */
	bwap_nodeset workers, nodes;
	struct bwap_weights canon;	/* DWP 0, before quantisation */
	struct bwap_weights pushed;
	double pushed_dwp;
	int have_pushed;
	struct bwap_cosched cs;		/* the search (tuner.c); cs.stage 1 = --protect's first stage */
	struct bwap_signal sig;
	pid_t protect_pid;		/* --protect: stage 1 tunes on this process's signal */
	struct bwap_signal psig;
	char note[256];			/* why the signal is what it is */
	double next;			/* monotonic time of the next sample */
	long pushes, moved, not_moved, samples, skipped;
	int settled_once;
	int placed;			/* pushed again once the target was steady */
	FILE *log;			/* search log */
	int waiters[MAX_WAITERS];	/* client fds waiting for convergence ... */
	long waiter_pushes[MAX_WAITERS];	/* ... or, if > 0, for this many pushes */
	uid_t waiter_uid[MAX_WAITERS];		/* who waits: counted against max_clients_per_user */
	double waiter_deadline[MAX_WAITERS];	/* answered with an error then (wait_timeout) */
	int nr_waiters;
	/*
	 * Phases (attach ... phases FILE phase-weights FILE): the target
	 * writes each new phase's name as a line to the phase file; at each
	 * change bwapd pushes that phase's weights (from bwapctl search
	 * --phases) instead of tuning DWP.
	 */
	char phase_file[256];
	int nr_phases;
	char phase_name[8][32];
	struct bwap_weights phase_w[8];
	int cur_phase;			/* index, -1 before the first mark */
	long phase_changes;
	/*
	 * Pushes run on the worker thread (worker.c): busy while one is
	 * queued or running, and the newest push asked for meanwhile waits
	 * in pending (a phase change during a long placement).  gen tells a
	 * finished job whether its target is still the one it was for.
	 */
	unsigned long gen;
	int busy;
	int have_pending;
	struct bwap_weights pending_w;
	double pending_dwp;
	char pending_why[32];
	int pending_after;
	/* pages per node after the last push and their shares: what status shows, no walk per request */
	int have_counts;
	long cnt_now[BWAP_MAX_NODES], cnt_target[BWAP_MAX_NODES], cnt_total;
	double cnt_time;
	/* the request said job/step/task ids the target's cgroup could not confirm */
	int ids_unverified;
	pid_t refused_kid;		/* the last descendant not followed, so that the log says it once */
	int no_tune;			/* attach ... tune 0: placed at its start weights at each measurement, no search */
	/* a fd the client passed for the progress counter, the phase file (bwapd never opens their paths) */
	int phase_fd;
	enum bwapd_backend backend;	/* what placed its pages at the last push */
	char backend_why[512];		/* why that one, for the log and status */
	long damon_push;		/* the push DAMON is still moving for; 0: none */
};


/*
 * Everything bwapd's parts share.  main.c fills it at start-up (conf,
 * the kernel mode, the stall event, topology, matrix, model) and the
 * poll loop is its only thread, so no lock guards it.
 */
struct bwapd_state {
	struct bwapd_conf conf;
	int portable_mode;		/* kernel without the BWAP series: pushes are move_pages placements */
	/*
	 * The series without its rebalance (parts 1-2): a push sets the weights
	 * with process_mpol_reweight (no MPOL_REWEIGHT_REBALANCE, which such a
	 * kernel refuses) and then moves the pages with move_pages.
	 */
	int user_moves;
	const struct bwap_stall_event *stall_event;	/* NULL: MODELLED fallback for signal = auto */
	char stall_fallback[512];	/* why there is no stall event, for the log and status */
	struct bwap_topology *topo;
	struct bwap_matrix *matrix;
	struct bwap_machine *machine;	/* NULL if the matrix cannot feed the model */
	/*
	 * Every target, each allocated once and reused after drop_target()
	 * (which clears it); the array grows up to conf.max_targets slots.
	 * Pointers to targets stay valid while bwapd runs.
	 */
	struct target **targets;
	int nr_slots;
	double t_start;			/* now() at start, for the log's times */
	/*
	 * The DAMON backend: usable (the kernel has weighted dests, nobody
	 * else uses DAMON, write_global_weights = yes) or why not; the one
	 * kdamond and the one target it and the global table serve.
	 */
	int damon_usable;
	char damon_why[512];
	/* counters since start, for the stats request (and a site's monitoring) */
	struct {
		long attaches, refused_limit, refused_owner, refused_noproc, refused_other, late;
		long detaches, pushes, pages_moved;
		double push_seconds, push_seconds_max;
	} stats;
	struct bwap_damon damon;
	struct target *damon_target;
};

extern struct bwapd_state bwapd;

/* for_each_target(t, i) { ... }: every target in use. */
#define for_each_target(t, i)							\
	for (int i = 0; i < bwapd.nr_slots; i++)				\
		if (!((t) = bwapd.targets[i]) || !(t)->used) {} else

/* Monotonic seconds. */
double now(void);
/* One line on stderr (the journal): "bwapd: [SECONDS] ...". */
void logmsg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Write a reply to a client fd, all of it or until the client is gone. */
void send_reply(int fd, const char *buf, size_t len);

/* ---- targets.c ---------------------------------------------------------- */

char *weights_str(const struct bwap_weights *w, char *buf, size_t len);
/* ---- request.c: a request's text, parsed and checked, nothing done ------ */

/* An attach's arguments; the fd slots are indexes into the descriptors passed, -1: none. */
struct attach_args {
	bwap_nodeset workers;		/* 0: from the target's CPU affinity */
	int kind_given;
	enum bwap_signal_kind kind;
	int progress, phases, phase_weights;
	pid_t protect, parent;
	char how[16];
	int follow, tune;
	long long job, step, task;	/* Slurm's ids; -1: none */
};
enum bwapd_verb { REQ_STATUS, REQ_STATUS_JSON, REQ_STATS, REQ_STATS_JSON, REQ_PING, REQ_ATTACH, REQ_DETACH,
		  REQ_WAIT };
struct bwapd_request {
	enum bwapd_verb verb;
	int target_fd;			/* the target is "fd": the first descriptor passed, a pidfd */
	long pid;			/* else its number; -1 for verbs without one */
	long pushes;			/* wait ... pushes N */
	struct attach_args a;
	int nr_fds;			/* descriptors the request's words take */
};
void attach_args_init(struct attach_args *a);
int attach_args_parse(const char *args, int from_client, struct attach_args *a, int *next_fd, char *err,
		      size_t errlen);
/* One request line; from_client: from the socket (not bwapd's own).  0, or -1 with err. */
int bwapd_request_parse(const char *line, int from_client, struct bwapd_request *r, char *err, size_t errlen);

/* The descriptors a client passed with its request (SCM_RIGHTS), taken in order by "fd" values. */
#define BWAPD_MAX_PASSED_FDS 4
struct passed_fds {
	int fd[BWAPD_MAX_PASSED_FDS];
	int nr, next;
};
/*
 * Register pid (pidfd: the client's pidfd for it, or -1) with arguments
 * a, whose fd slots index pf (NULL: none passed).  0, or -1 with err.
 */
int target_attach(pid_t pid, int pidfd, const struct attach_args *a, struct passed_fds *pf, char *err,
		  size_t errlen);
struct target *find_target(pid_t pid);
void drop_target(struct target *t, const char *why);
void sample_target(struct target *t, double tnow);
/* The status report as uid sees it: other users' targets only counted, unless uid is root. */
void status_print(FILE *f, int json, uid_t uid);
/* The counters (attaches, refusals, pushes, pages moved), per job for uid's jobs (all for root). */
void stats_print(FILE *f, int json, uid_t uid);
/* The targets changed: targets_save() writes them at the loop's next turn. */
void targets_changed(void);
void targets_save(void);
/* At start: the live targets a previous bwapd recorded, taken back. */
void targets_adopt(void);
/* How many targets uid's processes are. */
int targets_of_user(uid_t uid);
/* How many waits uid holds. */
int waiters_of_user(uid_t uid);
/* Answer the waits past their deadline; the earliest deadline left. */
double expire_waiters(double tnow);
double cpu_seconds(void);
void scan_cgroup(void);
/*
 * Take the new descendants of every target attached with "children 1"
 * (/proc/PID/task/TID/children): on a stock kernel only the pid that
 * registered would be placed, not what a wrapper, a batch shell or
 * mpirun's daemon starts.
 */
void follow_children(void);
/* pid if a followed target's child not yet taken (one /proc read); its target or NULL. */
struct target *follow_pid(pid_t pid);
/* At start-up on a stock kernel: may the DAMON backend run?  Sets damon_usable and damon_why. */
void damon_backend_probe(void);
/* At the end: the DAMON target's kdamond removed and the global table put back. */
void damon_backend_release(const char *why);
/* At start: what a killed bwapd's DAMON backend left (its kdamond, the global table) undone. */
void damon_backend_clean_left(void);

/* ---- worker.c ----------------------------------------------------------- */
/* CAP_DAC_READ_SEARCH and CAP_DAC_OVERRIDE out of the effective set (kept permitted for the worker). */
void bwapd_drop_dac(void);
int worker_start(char *err, size_t errlen);
/* Readable when finished jobs wait for worker_reap(). */
int worker_fd(void);
void worker_queue(struct push_job *j);
/* The finished jobs, oldest first; the caller frees each. */
struct push_job *worker_reap(void);
/* Jobs queued or running, and how long the oldest has waited. */
int worker_backlog(double *oldest);
void worker_stop(void);

/* ---- targets.c: the finished pushes ------------------------------------- */
void push_done(struct push_job *j);

/* ---- control.c ---------------------------------------------------------- */
int open_socket(char *err, size_t errlen);
int control_fd(void);			/* the listening socket, for poll() */
const char *control_path(void);
/*
 * The clients: each connection is read and answered without blocking,
 * within conf.client_timeout, so a client that says nothing, or reads
 * its reply slowly, holds up no other.
 */
void accept_clients(void);
/* After EMFILE the listening socket rests a little: 1 while it does, until when. */
int accept_paused(double *until);
int nr_clients(void);
/* The clients' pollfds into pf (nr_clients() of them); the earliest deadline. */
double clients_poll_setup(struct pollfd *pf);
/* After poll(): serve what is ready in pf, close those past their deadline. */
void clients_poll_done(const struct pollfd *pf, double tnow);
void close_socket(void);

#endif
