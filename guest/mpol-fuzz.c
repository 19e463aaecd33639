// SPDX-License-Identifier: GPL-2.0
/*
 * mpol-fuzz: a seeded random fuzzer for the BWAP mempolicy interfaces.
 *
 * It drives set_mempolicy2 (1000), get_mempolicy2 (1001), mbind2 (1002),
 * process_mpol_reweight (1003) and the global weight files
 * /sys/kernel/mm/mempolicy/weighted_interleave/nodeN with random and
 * boundary arguments: struct mpol_args sizes around 40 (32, the size
 * before v5, included) and PAGE_SIZE with zero and non-zero tails, struct
 * mpol_reweight_args sizes around 16 likewise, maxnode
 * 0/1/nr/nr+1/PAGE_SIZE*8/+1, NULL, unmapped, read-only and
 * page-straddling pointers, every mode, mode flag, MPOL_ARGS_* and
 * MPOL_REWEIGHT_* flag and stray bits, weights 0/1/255 and all-zero, nodes
 * outside the online set, home nodes, pidfds of itself, a live child,
 * exited children and non-pidfd descriptors, ranges over anon, shmem,
 * read-only and unmapped slots of a small arena and a memfd mapped from a
 * read-only descriptor, and rebalancing on ranges that hold few pages so
 * each call stays fast.
 *
 * The invariants it checks:
 *  - a call that fails changes nothing.  It keeps a shadow of the state it
 *    can read back (its task policy, the VMA policy of every page of its
 *    arena via MPOL_F_ADDR, the global sysfs weights), refreshed from the
 *    kernel after each successful call, and compares the kernel's state
 *    with it after every failed one;
 *  - a reweight that succeeds leaves exactly the state the v5 rules give
 *    (reweight_expect()): a weighted-interleave policy takes the new
 *    weights if it has weights of its own, or follows the global ones and
 *    MPOL_REWEIGHT_GLOBAL was passed; shared (shmem) policies only with
 *    MPOL_REWEIGHT_SHARED, and only of objects opened for writing;
 *    relative-nodes policies never (they are skipped, the call does not
 *    fail); nothing else changes;
 *  - the struct size rules: a size below the struct's (MPOL_ARGS_SIZE_VER0,
 *    MPOL_REWEIGHT_ARGS_SIZE_VER0) is EINVAL, above PAGE_SIZE or with a
 *    non-zero byte past the struct E2BIG, whenever the flags get the call
 *    that far.
 *
 * The sequence depends only on --seed, so a failure is reproduced with the
 * same --seed and --calls.  Global weights are restored at exit.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <time.h>
#include <sys/wait.h>

#include "numa_util.h"
#include "cpuset_util.h"
#include "mpol_reweight.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

#define PG 4096UL

/* ---- PRNG: splitmix64, so a seed gives the same calls everywhere -------- */
static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* True with probability pct percent. */
static int chance(unsigned int pct)
{
	return below(100) < pct;
}

#define PICK(arr) ((arr)[below(sizeof(arr) / sizeof((arr)[0]))])

/*
 * About half the calls are "sane": every argument starts valid and odd
 * values are eight times rarer, so that calls get past the argument checks
 * and reach policy installation, reweighting and page migration.  The rest
 * pick odd values at the full rate.  ODD(p) is true with p percent, or
 * p/8 percent in a sane call.
 */
static int sane;
#define ODD(pct) chance(sane ? (pct) / 8 : (pct))

/* ---- the arena: the mappings whose policies we track --------------------- */
/*
 * Eleven slots of SLOT_PAGES pages, side by side, so ranges can straddle two
 * mappings or a mapping and a hole.  Slots 3 and 7 are holes; the first
 * and last are PROT_NONE mappings that keep ranges chosen here from
 * reaching memory outside the arena.
 */
#define NR_SLOTS 11
#define SLOT_PAGES 4
#define HOLE_SLOT 3
/*
 * SLOT_SHMEM: shared anonymous memory (shmem, opened for writing);
 * SLOT_SHMEM_RDONLY: a memfd mapped from a descriptor opened O_RDONLY,
 * whose shared policy a reweight leaves alone even with
 * MPOL_REWEIGHT_SHARED.
 */
enum slot_kind { SLOT_ANON, SLOT_SHMEM, SLOT_SHMEM_RDONLY, SLOT_RO, SLOT_NONE, SLOT_HOLE };
static const enum slot_kind slot_kind[NR_SLOTS] = {
	SLOT_NONE, SLOT_ANON, SLOT_ANON, SLOT_HOLE, SLOT_SHMEM,
	SLOT_SHMEM, SLOT_RO, SLOT_HOLE, SLOT_ANON, SLOT_SHMEM_RDONLY, SLOT_NONE,
};
static char *arena;
#define MAX_TRACKED (NR_SLOTS * SLOT_PAGES)
static char *tracked[MAX_TRACKED];
static int nr_tracked;

/* ---- fuzz buffers ----------------------------------------------------------
 * Arguments live in big static buffers so that any maxnode up to
 * PAGE_SIZE * 8 + 1 bits (and as many weight bytes) stays readable.
 * guard_page is a RW page followed by a PROT_NONE page, for objects that
 * straddle into unmapped memory; ro_page is read-only.
 */
static unsigned char args_buf[3 * PG] __attribute__((aligned(4096)));
static unsigned long mask_buf[(PG * 8 + 64) / (8 * sizeof(long)) + 8];
static unsigned char weight_buf[PG * 8 + 64];
static char *guard_page;	/* RW page, then a PROT_NONE page */
static char *ro_page;

static int nr_nodes;			/* online memory nodes */
static int node_ids[WI_MAX_NODES];
static int max_node_id;
static int nr_node_ids;			/* highest possible node + 1, the kernel's */

/* ---- state and shadow ------------------------------------------------------ */
struct snap {
	long ret;
	int err;
	unsigned short mode, mode_flags;
	int home_node;
	unsigned long long flags;	/* MPOL_ARGS_* that get_mempolicy2() reports */
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
	unsigned char w[WI_MAXNODE];
};

struct state {
	struct snap task;
	struct snap page[MAX_TRACKED];
	int sysfs[WI_MAX_NODES];
};

static struct state shadow, now, want;
static int saved_sysfs[WI_MAX_NODES];
static int sysfs_fd[WI_MAX_NODES];
static int have_saved_sysfs;

static void read_snap(struct snap *s, void *addr)
{
	struct wi_policy p;

	errno = 0;
	s->ret = wi_read_policy(&p, addr);
	s->err = s->ret ? errno : 0;
	s->mode = p.args.mode;
	s->mode_flags = p.args.mode_flags;
	s->home_node = p.args.home_node;
	s->flags = p.args.flags;
	memcpy(s->mask, p.mask, sizeof(s->mask));
	memcpy(s->w, p.w, sizeof(s->w));
}

static int read_sysfs_weight(int i)
{
	char buf[16];
	ssize_t len = pread(sysfs_fd[i], buf, sizeof(buf) - 1, 0);

	if (len <= 0)
		return -1;
	buf[len] = '\0';
	return atoi(buf);
}

static void read_state(struct state *st)
{
	int i;

	read_snap(&st->task, NULL);
	for (i = 0; i < nr_tracked; i++)
		read_snap(&st->page[i], tracked[i]);
	for (i = 0; i < nr_nodes; i++)
		st->sysfs[i] = read_sysfs_weight(i);
}

static int snap_equal(const struct snap *a, const struct snap *b)
{
	return a->ret == b->ret && a->err == b->err && a->mode == b->mode &&
	       a->mode_flags == b->mode_flags && a->home_node == b->home_node &&
	       a->flags == b->flags &&
	       !memcmp(a->mask, b->mask, sizeof(a->mask)) &&
	       !memcmp(a->w, b->w, sizeof(a->w));
}

static void print_snap(const char *what, const struct snap *s)
{
	int i;

	printf("#     %-8s ret=%ld err=%d mode=%u mflags=0x%x flags=0x%llx home=%d mask=0x%lx w=",
	       what, s->ret, s->err, s->mode, s->mode_flags, s->flags, s->home_node, s->mask[0]);
	for (i = 0; i < nr_nodes; i++)
		printf("%s%u", i ? "," : "", s->w[node_ids[i]]);
	printf("\n");
}

static int state_equal(const struct state *a, const struct state *b)
{
	int i;

	if (memcmp(a->sysfs, b->sysfs, sizeof(a->sysfs)) || !snap_equal(&a->task, &b->task))
		return 0;
	for (i = 0; i < nr_tracked; i++)
		if (!snap_equal(&a->page[i], &b->page[i]))
			return 0;
	return 1;
}

/* Print where @now differs from @was, labelled @lw and @ln. */
static void print_state_diff(const struct state *was, const struct state *now,
			     const char *lw, const char *ln)
{
	char l1[16], l2[16];
	int i;

	if (!snap_equal(&now->task, &was->task)) {
		snprintf(l1, sizeof(l1), "task %s", lw);
		snprintf(l2, sizeof(l2), "task %s", ln);
		print_snap(l1, &was->task);
		print_snap(l2, &now->task);
	}
	for (i = 0; i < nr_tracked; i++) {
		if (snap_equal(&now->page[i], &was->page[i]))
			continue;
		printf("#     arena page %+ld:\n", (long)(tracked[i] - arena) / (long)PG);
		print_snap(lw, &was->page[i]);
		print_snap(ln, &now->page[i]);
	}
	for (i = 0; i < nr_nodes; i++)
		if (now->sysfs[i] != was->sysfs[i])
			printf("#     sysfs node%d weight %s %d, %s %d\n",
			       node_ids[i], lw, was->sysfs[i], ln, now->sysfs[i]);
}

/* ---- restoring the global weights --------------------------------------- */
/* Format @v (0..999) as decimal into @buf; returns the length. */
static int fmt_uint(char *buf, unsigned int v)
{
	int len = 0;

	if (v >= 100)
		buf[len++] = '0' + v / 100;
	if (v >= 10)
		buf[len++] = '0' + v / 10 % 10;
	buf[len++] = '0' + v % 10;
	return len;
}

/* Only open/write/close: also called from a signal handler. */
static void restore_sysfs(void)
{
	static const char dir[] = WI_WEIGHT_DIR "/node";
	char path[sizeof(dir) + 8], buf[8];
	int i, fd, len;

	if (!have_saved_sysfs)
		return;
	for (i = 0; i < nr_nodes; i++) {
		memcpy(path, dir, sizeof(dir) - 1);
		path[sizeof(dir) - 1 + fmt_uint(path + sizeof(dir) - 1, node_ids[i])] = '\0';
		len = fmt_uint(buf, saved_sysfs[i]);
		buf[len++] = '\n';
		fd = open(path, O_WRONLY);
		if (fd < 0)
			continue;
		if (write(fd, buf, len) != len)
			have_saved_sysfs = 2;	/* seen by the final read-back */
		close(fd);
	}
}

static void on_fatal_signal(int sig)
{
	restore_sysfs();
	signal(sig, SIG_DFL);
	raise(sig);
}

/* ---- processes whose pidfds we pass --------------------------------------- */
static int self_pidfd = -1;
static pid_t child_pid;
static int child_pidfd = -1, child_pipe = -1;
static int reaped_pidfd = -1;	/* pidfd of an exited, reaped child */
static int zombie_pidfd = -1;	/* pidfd of an exited child not yet reaped */
static pid_t zombie_pid;
static int devnull_fd = -1;

/* Fork a child that waits until *pipe_w is closed, then exits. */
static pid_t fork_waiting_child(int *pidfd, int *pipe_w)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p)) {
		perror("mpol-fuzz: pipe");
		exit(2);
	}
	pid = fork();
	if (pid < 0) {
		perror("mpol-fuzz: fork");
		exit(2);
	}
	if (pid == 0) {
		close(p[1]);
		while (read(p[0], &c, 1) > 0)
			;
		_exit(0);
	}
	close(p[0]);
	*pidfd = sys_pidfd_open(pid);
	if (*pidfd < 0) {
		perror("mpol-fuzz: pidfd_open of a child");
		exit(2);
	}
	*pipe_w = p[1];
	return pid;
}

/*
 * A cpuset holding the lower half of the nodes.  Every other live child
 * is moved into it, so reweights naming nodes outside the child's cpuset
 * are tried as well.
 */
#define CHILD_CG WI_CGROUP_ROOT "/mpol-fuzz-child"
static int have_child_cg;
static int child_restricted;	/* the live child is in CHILD_CG */
static unsigned long respawns;

static void setup_child_cpuset(void)
{
	char mems[128] = "";
	int i, len = 0;

	if (nr_nodes < 2)
		return;
	for (i = 0; i < nr_nodes / 2; i++)
		len += snprintf(mems + len, sizeof(mems) - len, "%s%d", i ? "," : "",
				node_ids[i]);
	have_child_cg = !wi_cpuset_create(CHILD_CG, mems);
	printf("# live child: %s\n", have_child_cg ?
	       "every other one runs in a cpuset with the lower half of the nodes" :
	       "no cpuset controller, the child is never restricted");
}

/*
 * (Re)create the live child, so it inherits the policies we have now.
 * Moving it into the cpuset rebinds the policies it holds; that may
 * change what we share with it, so the shadow is read again afterwards.
 */
static void respawn_child(void)
{
	char pid[32];

	if (child_pid) {
		close(child_pipe);
		waitpid(child_pid, NULL, 0);
		close(child_pidfd);
	}
	child_pid = fork_waiting_child(&child_pidfd, &child_pipe);
	child_restricted = 0;
	if (have_child_cg && respawns++ % 2) {
		snprintf(pid, sizeof(pid), "%d", child_pid);
		if (wi_cg_write(CHILD_CG, "cgroup.procs", pid))
			printf("# could not move the child into %s\n", CHILD_CG);
		else
			child_restricted = 1;
	}
	read_state(&shadow);
}

static void make_dead_children(void)
{
	siginfo_t si;
	pid_t pid;
	int w;

	pid = fork_waiting_child(&reaped_pidfd, &w);
	close(w);
	waitpid(pid, NULL, 0);

	zombie_pid = fork_waiting_child(&zombie_pidfd, &w);
	close(w);
	/* Wait until it has exited, but leave it unreaped. */
	memset(&si, 0, sizeof(si));
	if (waitid(P_PIDFD, zombie_pidfd, &si, WEXITED | WNOWAIT)) {
		perror("mpol-fuzz: waitid");
		exit(2);
	}
}

/* ---- statistics -------------------------------------------------------------- */
enum { SC_SET, SC_GET, SC_MBIND, SC_REWEIGHT, SC_SYSFS, NR_SC };
static const char *const sc_name[NR_SC] = {
	"set_mempolicy2", "get_mempolicy2", "mbind2", "process_mpol_reweight",
	"sysfs weight write",
};
static unsigned long sc_calls[NR_SC], sc_ok[NR_SC];
#define MAX_ERRNO 4096
static unsigned long errno_hist[NR_SC][MAX_ERRNO + 1];
static unsigned long mismatches, bad_returns, checks, strict_eio;
static unsigned int last_mbind_flags;
static int last_mbind_rebalance;	/* MPOL_ARGS_REBALANCE in the last mbind2()'s struct */

/*
 * The struct size rules, checked where the flags let the call reach them:
 * calls whose size alone decides the error, and those that got another.
 */
static unsigned long size_short, size_big, flag_refusals, rule_wrong;
static int have_mpol2, have_reweight, have_rebalance;

/*
 * The last call's struct as the kernel sees it: size, whether a byte past
 * the struct is non-zero, and whether the pointer lets the kernel read the
 * whole size (so that tail is what decides).  expect_errno is what the
 * flags and size rules alone say the call must fail with, or 0.
 */
static size_t last_size;
static int last_tail_nonzero, last_readable;
static int expect_errno, expect_by_size;

/*
 * Successful reweights, checked against reweight_expect(): calls checked,
 * calls that left another state, and per policy seen (the task policy,
 * each arena page) why it kept its weights or that it took the new ones.
 */
static unsigned long rw_checked, rw_mismatches;
enum { RW_CHANGED, RW_KEPT_GLOBAL, RW_KEPT_SHARED, RW_KEPT_RDONLY, RW_KEPT_RELATIVE,
       RW_KEPT_OTHER_CPUSET, NR_RW };
static unsigned long rw_policies[NR_RW];
static const char *const rw_name[NR_RW] = {
	"took the new weights", "kept: on the global weights, no MPOL_REWEIGHT_GLOBAL",
	"kept: shared, no MPOL_REWEIGHT_SHARED", "kept: shared, object opened read-only",
	"kept: relative nodes (skipped)",
	"kept: shared, no node in the target's cpuset",
};

/* The last reweight, for reweight_expect(): target, flags and the table read. */
enum { RW_SELF, RW_CHILD, RW_OTHER };
static int last_rw_target;
static unsigned int last_rw_flags;
static unsigned char last_rw_table[WI_MAXNODE];
static int verbose;

/* Description of the call being made, printed on a mismatch. */
static char desc[1024];

/* ---- argument generators ------------------------------------------------------ */
static const unsigned long bad_addrs[] = {
	8, 4095, 0xffff888000000000UL, 0x7ffffffff000UL, -1UL,
};

/* maxnode: boundaries first, sometimes random. */
static unsigned long pick_maxnode(void)
{
	unsigned long nr = max_node_id + 1;
	const unsigned long choice[] = {
		0, 1, nr, nr + 1, WI_MAXNODE, WI_MAX_NODES, PG * 8, PG * 8 + 1,
		2, 1024, PG * 8 - 1,
	};

	if (!ODD(50))
		return WI_MAXNODE;
	if (chance(10))
		return below(PG * 8 + 64);
	return PICK(choice);
}

/* Fill the nodemask: a random subset of online nodes, sometimes odd ones. */
static void fill_mask(unsigned long maxnode)
{
	int i, r = below(100);

	memset(mask_buf, 0, sizeof(mask_buf));
	if (r < 70 || (sane && !ODD(20))) {
		for (i = 0; i < nr_nodes; i++)
			if (chance(70))
				wi_nodemask_set(mask_buf, node_ids[i]);
		if (sane)
			wi_nodemask_set(mask_buf, node_ids[below(nr_nodes)]);
	} else if (r < 75) {
		/* empty */
	} else if (r < 85) {
		wi_nodemask_set(mask_buf, max_node_id + 1 + below(8));
		if (chance(50))
			wi_nodemask_set(mask_buf, node_ids[0]);
	} else if (r < 90 && maxnode > (unsigned long)max_node_id + 2) {
		/* a bit above the highest possible node, inside maxnode */
		unsigned long room = maxnode - 1 - (max_node_id + 1);
		unsigned long bit = max_node_id + 1 + below(room < 4096 ? room : 4096);

		wi_nodemask_set(mask_buf, node_ids[0]);
		mask_buf[bit / 64] |= 1UL << (bit % 64);
	} else if (r < 95) {
		for (i = 0; i < 4; i++)
			mask_buf[i] = rnd();
	} else {
		for (i = 0; i < nr_nodes; i++)
			wi_nodemask_set(mask_buf, node_ids[i]);
	}
}

static unsigned char pick_weight(void)
{
	const unsigned char choice[] = { 0, 1, 255, 2, 254, 128 };

	return chance(60) ? PICK(choice) : (unsigned char)rnd();
}

/* Fill weight_buf: per node, all zero, only outside nodes, ... */
static void fill_weights(void)
{
	int i, r = below(100);

	memset(weight_buf, 0, sizeof(weight_buf));
	if (r < 75 || (sane && !ODD(20))) {
		for (i = 0; i < nr_nodes; i++)
			weight_buf[node_ids[i]] = pick_weight();
		if (sane)	/* at least one node of any mask weighs something */
			for (i = 0; i < nr_nodes; i++)
				if (!weight_buf[node_ids[i]] && chance(70))
					weight_buf[node_ids[i]] = 1 + below(8);
	} else if (r < 82) {
		/* all zero */
	} else if (r < 90) {
		weight_buf[max_node_id + 1 + below(16)] = 1 + below(255);
	} else if (r < 95) {
		for (i = 0; i < (int)sizeof(weight_buf); i++)
			weight_buf[i] = rnd();
	} else {
		for (i = 0; i < nr_nodes; i++)
			weight_buf[node_ids[i]] = 1;
	}
}

/*
 * Where a user object of @len bytes is passed from: mostly @good, else
 * NULL, a bad address, a hole in the arena, the read-only page (holding a
 * copy of @good's first bytes) or straddling into the guard page.
 */
static unsigned long pick_ptr(void *good, size_t len, const char **kind)
{
	int r = below(100);
	size_t cp = len < PG ? len : PG;

	if (r < 80 || (sane && !ODD(20))) {
		*kind = "good";
		return (unsigned long)good;
	}
	if (r < 83) {
		*kind = "NULL";
		return 0;
	}
	if (r < 87) {
		*kind = "bad";
		return PICK(bad_addrs);
	}
	if (r < 90) {
		*kind = "hole";
		return (unsigned long)arena + HOLE_SLOT * SLOT_PAGES * PG + below(PG);
	}
	if (r < 95) {
		*kind = "ro";
		mprotect(ro_page, PG, PROT_READ | PROT_WRITE);
		memcpy(ro_page, good, cp);
		mprotect(ro_page, PG, PROT_READ);
		return (unsigned long)ro_page;
	}
	*kind = "straddle";
	cp = len ? 1 + below(len < PG ? len : PG) : 1;
	/* the object starts cp bytes before the guard page */
	memcpy(guard_page + PG - cp, good, cp < len ? cp : len);
	return (unsigned long)(guard_page + PG - cp);
}

struct built_args {
	struct mpol_args *args;		/* where the syscall reads/writes it */
	size_t size;
	const char *where;
};

/*
 * A struct size around @ver0 (the struct's size), or PAGE_SIZE, or
 * random; a byte past the struct made non-zero at random.  Records the
 * size, the tail and whether the kernel can read all of it for the size
 * rules' check (see pick_ptr() for where each kind points).
 */
static size_t pick_size(size_t ver0, unsigned char *buf, size_t room)
{
	const size_t sizes[] = {
		0, 8, ver0 / 2, ver0 - 8, ver0 - 1, ver0, ver0 + 1, ver0 + 8,
		2 * ver0, 64, PG, PG + 1, 2 * PG,
	};
	size_t size = !ODD(30) ? ver0 : chance(80) ? PICK(sizes) : below(3 * PG);

	last_tail_nonzero = 0;
	if (size > ver0 && ODD(40)) {
		size_t at = ver0 + below((size < room ? size : room) - ver0);

		buf[at] = 1 + below(255);
		last_tail_nonzero = 1;
	}
	last_size = size;
	return size;
}

/*
 * Where the struct was passed from: "good" (the whole buffer readable) and
 * "ro" (a copy of its first page) hold the whole of a size up to a page.
 */
static void note_readable(const char *where)
{
	last_readable = !strcmp(where, "good") || !strcmp(where, "ro");
}

/*
 * The error the size alone gives, once the flags are accepted: below
 * @ver0 EINVAL, above PAGE_SIZE E2BIG, a non-zero byte past the struct
 * E2BIG (only known if the kernel can read the bytes); else 0.
 */
static int size_rule_errno(size_t ver0)
{
	if (last_size < ver0)
		return EINVAL;
	if (last_size > PG)
		return E2BIG;
	if (last_tail_nonzero && last_readable)
		return E2BIG;
	return 0;
}

/* Build a random struct mpol_args in args_buf, with size and tail. */
static void build_args(struct built_args *b, int for_get)
{
	struct mpol_args *a = (struct mpol_args *)args_buf;
	const int homes[] = { -1, 0, 1, 63, 64, 1000, INT_MIN, INT_MAX, -2 };
	const char *mk = "", *wk = "";
	unsigned long maxnode;

	memset(args_buf, 0, sizeof(args_buf));
	maxnode = pick_maxnode();
	fill_mask(maxnode);
	fill_weights();

	if (!ODD(20))
		a->mode = below(MPOL_MAX);
	else
		a->mode = chance(50) ? MPOL_MAX : (unsigned short)rnd();
	if (chance(sane ? 50 : 35))
		a->mode = MPOL_WEIGHTED_INTERLEAVE;
	if (sane && (a->mode == MPOL_DEFAULT || a->mode == MPOL_LOCAL) && !ODD(50))
		memset(mask_buf, 0, sizeof(mask_buf));
	if (!ODD(40))
		a->mode_flags = 0;
	else if (chance(50))
		a->mode_flags = PICK(((const unsigned short[]){
			MPOL_F_STATIC_NODES, MPOL_F_RELATIVE_NODES, MPOL_F_NUMA_BALANCING,
			MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES,
			/* v4's home node and global weights bits: now EINVAL here */
			1U << 12, 1U << 11, (1U << 12) | MPOL_F_STATIC_NODES }));
	else
		a->mode_flags = chance(70) ? 1U << below(16) : (unsigned short)rnd();
	/* the flags word: home node, global weights, rebalance, stray bits */
	if (!ODD(40))
		a->flags = 0;
	else if (chance(60))
		a->flags = PICK(((const unsigned long long[]){
			MPOL_ARGS_HOME_NODE, MPOL_ARGS_GLOBAL_WEIGHTS,
			MPOL_ARGS_HOME_NODE | MPOL_ARGS_GLOBAL_WEIGHTS,
			/* mbind2()'s rebalance: EINVAL for the other two calls */
			MPOL_ARGS_REBALANCE, MPOL_ARGS_REBALANCE | MPOL_ARGS_HOME_NODE,
			MPOL_ARGS_REBALANCE | MPOL_ARGS_GLOBAL_WEIGHTS }));
	else
		a->flags = chance(70) ? 1ULL << below(64) : rnd();
	a->home_node = !ODD(30) ? -1 : chance(70) ? PICK(homes) :
		       (chance(50) ? (int)below(nr_nodes + 2) : (int)rnd());
	if (sane && (a->mode == MPOL_BIND || a->mode == MPOL_PREFERRED_MANY) && chance(30)) {
		a->flags |= MPOL_ARGS_HOME_NODE;
		a->home_node = node_ids[below(nr_nodes)];
	}
	a->pol_maxnodes = !ODD(3) ? maxnode : rnd();
	a->pol_nodes = pick_ptr(mask_buf, (maxnode + 7) / 8, &mk);
	if (for_get || ODD(30))
		a->il_weights = pick_ptr(weight_buf, maxnode, &wk);
	else {
		a->il_weights = 0;
		wk = "global";
	}
	if (a->mode == MPOL_WEIGHTED_INTERLEAVE && chance(70) && !for_get) {
		a->il_weights = pick_ptr(weight_buf, maxnode, &wk);
	}
	/*
	 * Sane weighted interleave also follows the global weights by the
	 * flag, or with relative nodes (which cannot own weights): policies
	 * a reweight must leave alone without MPOL_REWEIGHT_GLOBAL, or always.
	 */
	if (sane && a->mode == MPOL_WEIGHTED_INTERLEAVE && !for_get && chance(25)) {
		a->flags |= MPOL_ARGS_GLOBAL_WEIGHTS;
		if (chance(40))
			a->mode_flags = MPOL_F_RELATIVE_NODES;
	}

	b->size = pick_size(sizeof(*a), args_buf, sizeof(args_buf));
	b->args = (struct mpol_args *)pick_ptr(args_buf, b->size ? b->size : 1, &b->where);
	note_readable(b->where);
	snprintf(desc + strlen(desc), sizeof(desc) - strlen(desc),
		 "args@%s{mode=%u mflags=0x%x flags=0x%llx home=%d maxnode=%llu nodes@%s=0x%lx w@%s=[%u,%u,%u,%u]} size=%zu tail=%s",
		 b->where, a->mode, a->mode_flags, (unsigned long long)a->flags, a->home_node,
		 (unsigned long long)a->pol_maxnodes, mk, mask_buf[0], wk,
		 weight_buf[0], weight_buf[1], weight_buf[2], weight_buf[3], b->size,
		 last_tail_nonzero ? "nonzero" : "zero");
}

/* A range in or around the arena; sometimes wild. */
static void pick_range(unsigned long *start, unsigned long *len)
{
	int r = below(100);
	unsigned long base = (unsigned long)arena;

	if (r < 85 || (sane && !ODD(15))) {
		unsigned long first = below(NR_SLOTS * SLOT_PAGES);
		unsigned long room = NR_SLOTS * SLOT_PAGES - first;
		unsigned long pages = 1 + below(chance(70) && room > SLOT_PAGES ? SLOT_PAGES : room);

		*start = base + first * PG;
		*len = pages * PG;
		if (chance(30)) {	/* one or two whole slots */
			*start = base + below(NR_SLOTS - 1) * SLOT_PAGES * PG;
			*len = SLOT_PAGES * PG * (1 + below(2));
		}
	} else if (r < 90) {
		*start = base + below(NR_SLOTS * SLOT_PAGES) * PG;
		*len = 0;
	} else if (r < 94) {
		*start = base + below(NR_SLOTS * SLOT_PAGES * PG);	/* unaligned */
		*len = PG;
	} else if (r < 97) {
		*start = base;
		*len = chance(50) ? -PG : PG + 1 + below(PG);
	} else {
		*start = PICK(bad_addrs) & ~(PG - 1);
		*len = PG * (1 + below(4));
	}
}

static unsigned int pick_mbind_flags(void)
{
	const unsigned int valid[] = {
		0, MPOL_MF_MOVE, MPOL_MF_MOVE_ALL, MPOL_MF_STRICT,
		MPOL_MF_STRICT | MPOL_MF_MOVE, MPOL_MF_MOVE_ALL | MPOL_MF_STRICT,
		MPOL_MF_LAZY,
		1U << 8,	/* where the rebalance was before it moved to the struct */
	};

	if (!ODD(25))
		return PICK(valid);
	return chance(70) ? 1U << below(32) : (unsigned int)rnd();
}

/* ---- the calls ------------------------------------------------------------------ */
/*
 * What the flags alone make of a call (EINVAL, EOPNOTSUPP, EPERM), or 0 if
 * they let it reach the struct; then the size rules.  Sets expect_errno,
 * counted in the main loop.
 */
static void expect(int flags_errno, size_t ver0, int have)
{
	expect_errno = 0;
	expect_by_size = 0;
	if (!have)
		return;
	expect_errno = flags_errno;
	if (!flags_errno) {
		expect_errno = size_rule_errno(ver0);
		expect_by_size = 1;
	}
}

static long call_set(void)
{
	struct built_args b;
	unsigned int flags = !ODD(10) ? 0 : chance(50) ? 1U << below(32) : (unsigned int)rnd();

	snprintf(desc, sizeof(desc), "set_mempolicy2(");
	build_args(&b, 0);
	snprintf(desc + strlen(desc), sizeof(desc) - strlen(desc), ", flags=0x%x)", flags);
	expect(flags ? EINVAL : 0, MPOL_ARGS_SIZE_VER0, have_mpol2);
	return sys_set_mempolicy2(b.args, b.size, flags);
}

static long call_get(void)
{
	struct built_args b;
	const unsigned int fl[] = { 0, MPOL_F_ADDR, MPOL_F_NODE, MPOL_F_MEMS_ALLOWED,
				    MPOL_F_NODE | MPOL_F_ADDR, 8 };
	unsigned int flags = chance(90) ? PICK(fl) : (unsigned int)rnd();
	unsigned long addr;

	if (sane && !ODD(20)) {
		flags = chance(50) ? MPOL_F_ADDR : 0;
		addr = flags ? (unsigned long)arena + below(NR_SLOTS * SLOT_PAGES) * PG : 0;
	} else if (chance(50))
		addr = 0;
	else if (chance(80))
		addr = (unsigned long)arena + below(NR_SLOTS * SLOT_PAGES) * PG +
		       (chance(90) ? 0 : below(PG));
	else
		addr = PICK(bad_addrs);
	snprintf(desc, sizeof(desc), "get_mempolicy2(");
	build_args(&b, 1);
	snprintf(desc + strlen(desc), sizeof(desc) - strlen(desc),
		 ", addr=arena%+ld, flags=0x%x)", (long)(addr - (unsigned long)arena), flags);
	expect((flags & ~MPOL_F_ADDR) || (!(flags & MPOL_F_ADDR) && addr) ? EINVAL : 0,
	       MPOL_ARGS_SIZE_VER0, have_mpol2);
	return sys_get_mempolicy2(b.args, b.size, addr, flags);
}

static long call_mbind(void)
{
	struct built_args b;
	unsigned long start, len;
	unsigned int flags = pick_mbind_flags();

	last_mbind_flags = flags;
	pick_range(&start, &len);
	snprintf(desc, sizeof(desc), "mbind2(start=arena%+ld, len=%lu, ",
		 (long)(start - (unsigned long)arena), len);
	build_args(&b, 0);
	/* sane rebalances: an interleave policy over the range, moved to its weights */
	if (sane && chance(30))
		((struct mpol_args *)args_buf)->flags |= MPOL_ARGS_REBALANCE;
	last_mbind_rebalance = !!(((struct mpol_args *)args_buf)->flags & MPOL_ARGS_REBALANCE);
	snprintf(desc + strlen(desc), sizeof(desc) - strlen(desc), ", flags=0x%x)", flags);
	/* the rebalance is in the struct: its EOPNOTSUPP comes after the size rules */
	expect(flags & ~(unsigned int)MPOL_MF_VALID ? EINVAL : 0,
	       MPOL_ARGS_SIZE_VER0, have_mpol2);
	return sys_mbind2((void *)start, len, b.args, b.size, flags);
}

/* process_mpol_reweight()'s flags, as the kernel checks them before the struct. */
static int reweight_flags_errno(unsigned int flags)
{
	const unsigned int all = MPOL_REWEIGHT_REBALANCE | MPOL_REWEIGHT_MOVE_ALL |
				 MPOL_REWEIGHT_GLOBAL | MPOL_REWEIGHT_SHARED;

	if ((flags & ~all) ||
	    ((flags & MPOL_REWEIGHT_MOVE_ALL) && !(flags & MPOL_REWEIGHT_REBALANCE)))
		return EINVAL;
	if ((flags & MPOL_REWEIGHT_REBALANCE) && !have_rebalance)
		return EOPNOTSUPP;
	if ((flags & MPOL_REWEIGHT_MOVE_ALL) && geteuid())
		return -1;	/* EPERM without CAP_SYS_NICE: not predicted */
	return 0;
}

static long call_reweight(void)
{
	struct mpol_reweight_args *a = (struct mpol_reweight_args *)args_buf;
	const char *pk, *wk, *ak;
	unsigned long maxnode = pick_maxnode();
	unsigned int flags;
	size_t size;
	int fd, r = below(100), ferr;
	long ret;

	if (sane && r >= 70)
		r = below(70);
	last_rw_target = RW_OTHER;
	if (r < 45) {
		fd = self_pidfd;
		pk = "self";
		last_rw_target = RW_SELF;
	} else if (r < 70) {
		fd = child_pidfd;
		pk = "child";
		last_rw_target = RW_CHILD;
	} else if (r < 78) {
		fd = reaped_pidfd;
		pk = "reaped-child";
	} else if (r < 84) {
		fd = zombie_pidfd;
		pk = "zombie-child";
	} else if (r < 90) {
		fd = devnull_fd;
		pk = "/dev/null";
	} else if (r < 94) {
		fd = -1;
		pk = "-1";
	} else if (r < 97) {
		fd = 1000;
		pk = "closed";
	} else {
		fd = 0;
		pk = "stdin";
	}
	fill_weights();
	memset(args_buf, 0, sizeof(args_buf));
	a->pol_maxnodes = !ODD(3) ? maxnode : rnd();
	a->il_weights = pick_ptr(weight_buf, maxnode, &wk);
	size = pick_size(sizeof(*a), args_buf, sizeof(args_buf));
	a = (struct mpol_reweight_args *)pick_ptr(args_buf, size ? size : 1, &ak);
	note_readable(ak);
	if (!ODD(20))	/* every combination of the four, MOVE_ALL alone included */
		flags = below(16);
	else if (chance(30))	/* v4's MPOL_MF_* values, no longer taken here */
		flags = PICK(((const unsigned int[]){ 1U << 8, (1U << 8) | (1U << 2),
			      MPOL_MF_MOVE, MPOL_MF_STRICT, 1U << 4 }));
	else
		flags = chance(70) ? 1U << below(32) : (unsigned int)rnd();
	last_rw_flags = flags;
	snprintf(desc, sizeof(desc),
		 "process_mpol_reweight(pidfd=%s, args@%s{maxnode=%llu w@%s=[%u,%u,%u,%u]}, size=%zu tail=%s, flags=0x%x)",
		 pk, ak, (unsigned long long)((struct mpol_reweight_args *)args_buf)->pol_maxnodes,
		 wk, weight_buf[0], weight_buf[1], weight_buf[2], weight_buf[3],
		 size, last_tail_nonzero ? "nonzero" : "zero", flags);
	ferr = reweight_flags_errno(flags);
	expect(ferr, MPOL_REWEIGHT_ARGS_SIZE_VER0, have_reweight && ferr >= 0);
	ret = syscall(__NR_process_mpol_reweight, fd, a, size, flags);
	if (ret >= 0) {
		/*
		 * The table the kernel read: it succeeded, so the struct and
		 * its first min(pol_maxnodes, nr_node_ids) weight bytes were
		 * readable, and the struct is a copy of args_buf's.
		 */
		const struct mpol_reweight_args *k = (const void *)args_buf;
		unsigned long n = k->pol_maxnodes < (unsigned long)nr_node_ids ?
				  k->pol_maxnodes : (unsigned long)nr_node_ids;
		unsigned char usable[WI_MAXNODE] = { 0 };
		int i, nr_usable = nr_nodes;

		memset(last_rw_table, 0, sizeof(last_rw_table));
		memcpy(last_rw_table, (const void *)(unsigned long)k->il_weights, n);
		/*
		 * One weight rule for both structs: a byte for a node the
		 * target cannot use (no memory, or outside its cpuset: a
		 * restricted child has the lower half) is ignored, and the
		 * policies get 0 there.
		 */
		if (last_rw_target == RW_CHILD && child_restricted)
			nr_usable = nr_nodes / 2;
		for (i = 0; i < nr_usable; i++)
			usable[node_ids[i]] = 1;
		for (i = 0; i < WI_MAXNODE; i++)
			if (!usable[i])
				last_rw_table[i] = 0;
	}
	return ret;
}

static long call_sysfs(void)
{
	const char *const texts[] = {
		"0", "1", "255", "256", "-1", "", "\n", "abc", "3x", " 7", "0x10",
		"010", "1\n", "255\n", "99999999999", "+5", "4 ", "2\n\n",
	};
	char text[5000];
	char path[128];
	size_t len;
	int node, fd;
	long ret;

	if (chance(92))
		node = node_ids[below(nr_nodes)];
	else
		node = max_node_id + 1 + below(70);
	if (chance(60)) {
		snprintf(text, sizeof(text), "%s", PICK(texts));
		len = strlen(text);
	} else if (chance(75)) {
		len = snprintf(text, sizeof(text), "%u\n", (unsigned int)below(300));
	} else if (chance(60)) {
		len = 1 + below(20);
		for (size_t i = 0; i < len; i++)
			text[i] = rnd();
	} else {
		len = 4096 + below(8);
		memset(text, '1', len);
	}
	text[len < sizeof(text) ? len : sizeof(text) - 1] = '\0';
	snprintf(desc, sizeof(desc), "write(node%d weight, \"%.20s\"%s, %zu bytes)", node,
		 text, len > 20 ? "..." : "", len);
	snprintf(path, sizeof(path), WI_WEIGHT_DIR "/node%d", node);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	ret = write(fd, text, len);
	if (ret < 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	close(fd);
	return 0;	/* a short write is a success too: it may have changed the weight */
}

/* ---- what a successful reweight leaves ------------------------------------------ */
/*
 * The v5 rules for one policy read back as @s (shared: a shmem page's,
 * which belongs to the object), after a successful reweight with
 * last_rw_flags and last_rw_table:
 *  - only weighted interleave changes; relative nodes never (such a policy
 *    follows the global weights and is skipped, not refused);
 *  - a shared policy only with MPOL_REWEIGHT_SHARED, and only where the
 *    target opened the object for writing: the arena's shmem slots, not
 *    its memfd mapped from an O_RDONLY descriptor (both processes map
 *    each the same way);
 *  - a shared policy none of whose nodes the target's cpuset holds (the
 *    parent's, on the upper half, seen from a restricted child) is left
 *    alone, and does not fail the call;
 *  - one on the global weights (MPOL_ARGS_GLOBAL_WEIGHTS read back) only
 *    with MPOL_REWEIGHT_GLOBAL; it then owns the new weights, so the flag
 *    goes;
 *  - a policy that takes the weights reads back the table: the first
 *    min(pol_maxnodes, nr_node_ids) bytes given, 0 above and 0 for the
 *    nodes outside a restricted child's cpuset; its mode, mode
 *    flags, nodes and home node stay.  For the task policy this holds too
 *    once an earlier reweight gave it the process's table: it reads back
 *    as its own weights then, and takes every later table.
 */
/* Does @mask hold a node of the lower half, a restricted child's cpuset? */
static int mask_has_lower_half(const unsigned long *mask)
{
	int i;

	for (i = 0; i < nr_nodes / 2; i++)
		if (mask[node_ids[i] / (8 * sizeof(long))] &
		    (1UL << (node_ids[i] % (8 * sizeof(long)))))
			return 1;
	return 0;
}

static void reweight_apply(struct snap *s, enum slot_kind kind)
{
	int shared = kind == SLOT_SHMEM || kind == SLOT_SHMEM_RDONLY;

	if (s->ret || s->mode != MPOL_WEIGHTED_INTERLEAVE)
		return;
	if (s->mode_flags & MPOL_F_RELATIVE_NODES) {
		rw_policies[RW_KEPT_RELATIVE]++;
		return;
	}
	if (shared && !(last_rw_flags & MPOL_REWEIGHT_SHARED)) {
		rw_policies[RW_KEPT_SHARED]++;
		return;
	}
	if (kind == SLOT_SHMEM_RDONLY) {
		rw_policies[RW_KEPT_RDONLY]++;
		return;
	}
	if (shared && last_rw_target == RW_CHILD && child_restricted &&
	    !mask_has_lower_half(s->mask)) {
		rw_policies[RW_KEPT_OTHER_CPUSET]++;
		return;
	}
	if ((s->flags & MPOL_ARGS_GLOBAL_WEIGHTS) && !(last_rw_flags & MPOL_REWEIGHT_GLOBAL)) {
		rw_policies[RW_KEPT_GLOBAL]++;
		return;
	}
	memcpy(s->w, last_rw_table, sizeof(s->w));
	s->flags &= ~MPOL_ARGS_GLOBAL_WEIGHTS;
	rw_policies[RW_CHANGED]++;
}

static enum slot_kind page_kind(int i)
{
	return slot_kind[(tracked[i] - arena) / (SLOT_PAGES * PG)];
}

static int page_is_shared(int i)
{
	return page_kind(i) == SLOT_SHMEM || page_kind(i) == SLOT_SHMEM_RDONLY;
}

/*
 * The state the last successful reweight must leave, from the shadow.
 * Of itself: its task policy and every arena page's.  Of the live child:
 * only what the two share, the arena's shmem, which the child maps whole
 * (it inherited the arena); the child's own policies are copies and not
 * seen from here.  The global weights never change.
 */
static void reweight_expect(struct state *want)
{
	int i;

	*want = shadow;
	if (last_rw_target == RW_SELF)
		reweight_apply(&want->task, SLOT_ANON);
	for (i = 0; i < nr_tracked; i++)
		if (last_rw_target == RW_SELF || page_is_shared(i))
			reweight_apply(&want->page[i], page_kind(i));
}

/* ---- setup --------------------------------------------------------------------- */
static void *map_or_die(void *addr, size_t len, int prot, int flags)
{
	void *p = mmap(addr, len, prot, flags, -1, 0);

	if (p == MAP_FAILED) {
		perror("mpol-fuzz: mmap");
		exit(2);
	}
	return p;
}

static void setup_arena(void)
{
	int s, i;

	arena = map_or_die(NULL, NR_SLOTS * SLOT_PAGES * PG, PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS);
	for (s = 0; s < NR_SLOTS; s++) {
		char *at = arena + s * SLOT_PAGES * PG;
		size_t len = SLOT_PAGES * PG;

		switch (slot_kind[s]) {
		case SLOT_HOLE:
			munmap(at, len);
			continue;
		case SLOT_ANON:
			map_or_die(at, len, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED);
			break;
		case SLOT_SHMEM:
			map_or_die(at, len, PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED);
			break;
		case SLOT_RO:
			map_or_die(at, len, PROT_READ,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED);
			break;
		case SLOT_SHMEM_RDONLY: {
			int fd = memfd_create("mpol-fuzz-rdonly", 0), ro = -1;
			char path[64];

			snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
			if (fd < 0 || ftruncate(fd, len) || (ro = open(path, O_RDONLY)) < 0 ||
			    mmap(at, len, PROT_READ, MAP_SHARED | MAP_FIXED, ro, 0) == MAP_FAILED) {
				perror("mpol-fuzz: a memfd mapped read-only");
				exit(2);
			}
			close(ro);
			close(fd);
			break;
		}
		case SLOT_NONE:
			break;	/* stays part of the PROT_NONE reservation */
		}
		madvise(at, len, MADV_NOHUGEPAGE);
		for (i = 0; i < SLOT_PAGES; i++)
			tracked[nr_tracked++] = at + i * PG;
	}
	guard_page = map_or_die(NULL, 2 * PG, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS);
	mprotect(guard_page + PG, PG, PROT_NONE);
	ro_page = map_or_die(NULL, PG, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS);
}

/* Fault some arena pages in, or drop them, so rebalance has pages to move. */
static void touch_arena(void)
{
	int s = below(NR_SLOTS), i;
	char *at = arena + s * SLOT_PAGES * PG;

	if (slot_kind[s] != SLOT_ANON && slot_kind[s] != SLOT_SHMEM)
		return;
	if (chance(20)) {
		madvise(at, SLOT_PAGES * PG, MADV_DONTNEED);
		return;
	}
	for (i = 0; i < SLOT_PAGES; i++)
		if (chance(70))
			at[i * PG] = (char)i;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: mpol-fuzz [--seed N] [--calls N] [--progress N] [--verbose]\n"
"\n"
"Randomised fuzzer for set_mempolicy2, get_mempolicy2, mbind2,\n"
"process_mpol_reweight and the weighted_interleave/nodeN sysfs files.\n"
"After every failed call it reads back the task policy, the VMA policy of\n"
"each page of its test mappings and the sysfs weights, and checks that\n"
"nothing changed; after every successful reweight of itself or its child,\n"
"that exactly what the v5 rules say changed (MPOL_REWEIGHT_GLOBAL,\n"
"MPOL_REWEIGHT_SHARED, relative nodes skipped); and that struct sizes below\n"
"the struct's get EINVAL, and larger ones with non-zero extra bytes E2BIG.\n"
"Run it as root in a BWAP guest (scripts/run-vm).\n"
"\n"
"  --seed N      PRNG seed (default 1); the same seed makes the same calls\n"
"  --calls N     number of fuzz calls (default 100000)\n"
"  --progress N  print a progress line every N calls (default 10000)\n"
"  --verbose     print every call and its result\n"
"  --help        this text\n"
"\n"
"Output is TAP: 'ok' lines for no crash, no state change after a failed\n"
"call, sane return values, restored weights, the state after successful\n"
"reweights, and the size rules' errors.  Exit status is 0 if all pass, 1 on\n"
"a state mismatch, a bad return value or a wrong error, 2 on a setup error.\n"
"The global sysfs weights are restored at exit.\n");
}

static unsigned long parse_count(const char *opt, const char *s, unsigned long min)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s || *end || v < min || s[0] == '-') {
		fprintf(stderr, "mpol-fuzz: %s '%s' is not a number >= %lu; see --help\n",
			opt, s, min);
		exit(2);
	}
	return v;
}

static const char *const rebalance_counters[] = {
	"mpol_rebalance_scanned", "mpol_rebalance_moved", "mpol_rebalance_failed",
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "calls", required_argument, NULL, 'c' },
		{ "progress", required_argument, NULL, 'p' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	unsigned long seed = 1, calls = 100000, progress = 10000, n, failed = 0;
	unsigned long details_printed = 0;
	int opt, i, sc, restored, rw_fail, rule_fail;
	long vm_start[3];
	double t0;

	while ((opt = getopt_long(argc, argv, "s:c:p:vh", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			seed = parse_count("--seed", optarg, 0);
			break;
		case 'c':
			calls = parse_count("--calls", optarg, 1);
			break;
		case 'p':
			progress = parse_count("--progress", optarg, 1);
			break;
		case 'v':
			verbose = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "mpol-fuzz: unexpected argument '%s'; see --help\n", argv[optind]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	rng_state = seed;

	nr_nodes = wi_memory_nodes(node_ids, WI_MAX_NODES);
	if (nr_nodes < 1) {
		fprintf(stderr, "mpol-fuzz: cannot read /sys/devices/system/node/has_memory\n");
		return 2;
	}
	max_node_id = node_ids[nr_nodes - 1];
	{
		int possible[WI_MAX_NODES];
		int nr = wi_read_node_list("/sys/devices/system/node/possible", possible,
					   WI_MAX_NODES);

		if (nr < 1) {
			fprintf(stderr, "mpol-fuzz: cannot read /sys/devices/system/node/possible\n");
			return 2;
		}
		nr_node_ids = possible[nr - 1] + 1;
	}
	for (i = 0; i < nr_nodes; i++) {
		char path[128];

		snprintf(path, sizeof(path), WI_WEIGHT_DIR "/node%d", node_ids[i]);
		sysfs_fd[i] = open(path, O_RDONLY);
		if (sysfs_fd[i] < 0) {
			fprintf(stderr, "mpol-fuzz: cannot open %s: %s (needs a kernel with weighted interleave)\n",
				path, strerror(errno));
			return 2;
		}
		saved_sysfs[i] = read_sysfs_weight(i);
		if (saved_sysfs[i] < 1 || saved_sysfs[i] > 255) {
			fprintf(stderr, "mpol-fuzz: %s reads %d, not 1..255\n", path, saved_sysfs[i]);
			return 2;
		}
	}
	have_saved_sysfs = 1;
	atexit(restore_sysfs);
	signal(SIGINT, on_fatal_signal);
	signal(SIGTERM, on_fatal_signal);
	signal(SIGSEGV, on_fatal_signal);
	signal(SIGBUS, on_fatal_signal);
	signal(SIGABRT, on_fatal_signal);
	signal(SIGPIPE, SIG_IGN);

	setup_arena();
	self_pidfd = sys_pidfd_open(getpid());
	if (self_pidfd < 0) {
		perror("mpol-fuzz: pidfd_open(getpid())");
		return 2;
	}
	devnull_fd = open("/dev/null", O_RDWR);
	make_dead_children();
	setup_child_cpuset();
	respawn_child();

	errno = 0;
	have_reweight = have_mpol_reweight();
	have_mpol2 = wi_have_mempolicy2();
	/* EOPNOTSUPP without the rebalance, else EINVAL (MPOL_DEFAULT gives no shares) */
	{
		struct mpol_args probe = { .mode = MPOL_DEFAULT, .flags = MPOL_ARGS_REBALANCE };

		errno = 0;
		have_rebalance = !(sys_mbind2(NULL, 0, &probe, sizeof(probe), 0) == -1 &&
				   errno == EOPNOTSUPP);
	}

	printf("TAP version 13\n");
	printf("# mpol-fuzz: seed %lu, %lu calls, %d memory nodes (highest %d), arena %d slots x %d pages\n",
	       seed, calls, nr_nodes, max_node_id, NR_SLOTS, SLOT_PAGES);
	if (!have_reweight)
		printf("# process_mpol_reweight (1003) is not in this kernel: ENOSYS; its calls still run and count as ENOSYS\n");
	read_state(&shadow);
	for (i = 0; i < 3; i++)
		vm_start[i] = wi_vmstat(rebalance_counters[i]);
	t0 = now_s();

	for (n = 1; n <= calls; n++) {
		int err;
		long ret;
		int r = below(100);

		sane = chance(50);
		if (n % 64 == 0)
			touch_arena();
		if (n % 1000 == 0)	/* a new child, with what we have now */
			respawn_child();
		if (r < 25)
			sc = SC_SET;
		else if (r < 40)
			sc = SC_GET;
		else if (r < 70)
			sc = SC_MBIND;
		else if (r < 94)
			sc = SC_REWEIGHT;
		else
			sc = SC_SYSFS;

		errno = 0;
		expect_errno = 0;
		switch (sc) {
		case SC_SET:
			ret = call_set();
			break;
		case SC_GET:
			ret = call_get();
			break;
		case SC_MBIND:
			ret = call_mbind();
			break;
		case SC_REWEIGHT:
			ret = call_reweight();
			break;
		default:
			ret = call_sysfs();
			break;
		}
		err = ret < 0 ? errno : 0;
		sc_calls[sc]++;
		if (verbose)
			printf("# %lu: %s = %ld%s%s\n", n, desc, ret, err ? " " : "",
			       err ? strerrorname_np(err) : "");

		if (ret < -1 || (ret > 0 && (sc == SC_SET || sc == SC_GET))) {
			bad_returns++;
			printf("# BAD RETURN at call %lu (seed %lu): %s = %ld\n", n, seed, desc, ret);
		}
		if (expect_errno) {
			/* the flags' or the size's own error, nothing else */
			if (ret >= 0 || err != expect_errno) {
				rule_wrong++;
				if (details_printed++ < 20)
					printf("# WRONG ERROR at call %lu (seed %lu): %s = %ld %s, the %s rules say %s\n",
					       n, seed, desc, ret, ret < 0 ? strerrorname_np(err) ?: "?" : "",
					       expect_by_size ? "struct size" : "flag",
					       strerrorname_np(expect_errno));
			} else if (!expect_by_size) {
				flag_refusals++;
			} else if (expect_errno == EINVAL) {
				size_short++;
			} else {
				size_big++;
			}
		}
		if (ret >= 0) {
			sc_ok[sc]++;
			if (sc == SC_REWEIGHT && last_rw_target != RW_OTHER) {
				/* A reweight must leave exactly what the rules say. */
				reweight_expect(&want);
				read_state(&now);
				rw_checked++;
				if (!state_equal(&want, &now)) {
					rw_mismatches++;
					if (details_printed++ < 20) {
						printf("# REWEIGHT MODEL at call %lu (seed %lu): %s = %ld left another state:\n",
						       n, seed, desc, ret);
						print_state_diff(&want, &now, "want", "got");
					}
				}
				shadow = now;
			} else if (sc != SC_GET) {
				/* A successful call may change state: take it as the new shadow. */
				read_state(&shadow);
			}
		} else if (sc == SC_MBIND && err == EIO &&
			   (last_mbind_flags & MPOL_MF_STRICT) &&
			   ((last_mbind_flags & (MPOL_MF_MOVE | MPOL_MF_MOVE_ALL)) ||
			    last_mbind_rebalance)) {
			/*
			 * mbind(2): with MPOL_MF_STRICT and a move flag, EIO means
			 * the policy was installed but some pages did not move.
			 * That failure changes state by design.
			 */
			failed++;
			strict_eio++;
			errno_hist[sc][EIO]++;
			read_state(&shadow);
		} else {
			failed++;
			errno_hist[sc][err >= 0 && err <= MAX_ERRNO ? err : MAX_ERRNO]++;
			read_state(&now);
			checks++;
			if (!state_equal(&now, &shadow)) {
				mismatches++;
				if (details_printed++ < 20) {
					printf("# MISMATCH at call %lu (seed %lu): %s failed with %s but changed state:\n",
					       n, seed, desc, strerrorname_np(err) ?: "?");
					print_state_diff(&shadow, &now, "was", "now");
				}
				shadow = now;	/* report each change once */
			}
		}
		if (n % progress == 0)
			printf("# progress: %lu/%lu calls, %lu failed, %lu mismatches, %.1f s\n",
			       n, calls, failed, mismatches, now_s() - t0);
	}

	/* Reap the children, remove the cpuset, restore the global weights. */
	close(child_pipe);
	waitpid(child_pid, NULL, 0);
	waitpid(zombie_pid, NULL, 0);
	if (have_child_cg)
		rmdir(CHILD_CG);
	restore_sysfs();
	restored = 1;
	for (i = 0; i < nr_nodes; i++)
		if (read_sysfs_weight(i) != saved_sysfs[i])
			restored = 0;

	printf("# calls by syscall:          calls        ok    failed\n");
	for (i = 0; i < NR_SC; i++)
		printf("#   %-22s %8lu  %8lu  %8lu\n", sc_name[i], sc_calls[i], sc_ok[i],
		       sc_calls[i] - sc_ok[i]);
	printf("# errno histogram of failed calls:\n#   %-12s", "errno");
	for (sc = 0; sc < NR_SC; sc++)
		printf(" %10.10s", sc_name[sc]);
	printf("      total\n");
	for (i = 0; i <= MAX_ERRNO; i++) {
		unsigned long total = 0;

		for (sc = 0; sc < NR_SC; sc++)
			total += errno_hist[sc][i];
		if (!total)
			continue;
		printf("#   %-12s", i == MAX_ERRNO ? "other" : strerrorname_np(i) ?: "?");
		for (sc = 0; sc < NR_SC; sc++)
			printf(" %10lu", errno_hist[sc][i]);
		printf(" %10lu\n", total);
	}
	printf("# state read-backs after failed calls: %lu, mismatches: %lu, bad return values: %lu\n",
	       checks, mismatches, bad_returns);
	printf("# mbind2 EIO with MPOL_MF_STRICT and a move flag (policy installed, some pages not moved; not checked): %lu\n",
	       strict_eio);
	if (vm_start[0] >= 0)
		printf("# pages rebalanced during the run (/proc/vmstat): scanned %ld, moved %ld, failed %ld\n",
		       wi_vmstat(rebalance_counters[0]) - vm_start[0],
		       wi_vmstat(rebalance_counters[1]) - vm_start[1],
		       wi_vmstat(rebalance_counters[2]) - vm_start[2]);
	printf("# successful reweights of itself or the child checked against the v5 rules: %lu, mismatches: %lu\n",
	       rw_checked, rw_mismatches);
	printf("# policies read back after them:\n");
	for (i = 0; i < NR_RW; i++)
		printf("#   %-55s %8lu\n", rw_name[i], rw_policies[i]);
	printf("# errors the flags or the struct size decide: short size EINVAL %lu, E2BIG %lu, flags refused %lu, wrong %lu\n",
	       size_short, size_big, flag_refusals, rule_wrong);
	printf("# %lu calls in %.1f s (%.0f calls/s)\n", calls, now_s() - t0,
	       calls / (now_s() - t0));
	printf("1..6\n");
	printf("ok 1 made %lu calls without crashing\n", calls);
	printf("%s 2 failed calls left policies and sysfs weights unchanged (%lu mismatches)\n",
	       mismatches ? "not ok" : "ok", mismatches);
	printf("%s 3 return values in range (%lu bad)\n", bad_returns ? "not ok" : "ok",
	       bad_returns);
	printf("%s 4 sysfs weights restored\n", restored ? "ok" : "not ok");
	/* on a kernel with the calls, a run that checked nothing fails too */
	rw_fail = rw_mismatches || (have_reweight && !rw_checked);
	printf("%s 5 successful reweights left exactly the state the v5 rules give (%lu checked, %lu mismatches)\n",
	       rw_fail ? "not ok" : "ok", rw_checked, rw_mismatches);
	rule_fail = rule_wrong || (have_mpol2 && (!size_short || !size_big));
	printf("%s 6 short structs got EINVAL, oversized ones with non-zero extra bytes E2BIG (%lu and %lu; %lu wrong)\n",
	       rule_fail ? "not ok" : "ok", size_short, size_big, rule_wrong);
	return mismatches || bad_returns || !restored || rw_fail || rule_fail ? 1 : 0;
}
