// SPDX-License-Identifier: GPL-2.0
/*
 * Automatic NUMA balancing on, as distribution kernels run it on a NUMA
 * server (numa_balancing=1), and in memory-tiering mode (=2), which
 * promotes hot pages from a slower CPU-less node.  The processes run on
 * CPU 0 and touch all their memory while the scanner makes several full
 * passes (mm->numa_scan_seq of /proc/PID/sched).  Then, exactly:
 *
 *  - pages under own weights stay at their shares: an mbind2() range of
 *    this process, and the task policy of a second process (set before
 *    it execs, as numactl does);
 *  - default-policy memory of this process, faulted on a far node, was
 *    migrated (mode 1) or promoted (mode 2) to CPU 0's node, as balancing
 *    does for any page;
 *  - a rebalance to new weights with balancing on reaches exact shares,
 *    and they hold for more passes.
 *
 * The rule (Documentation/userspace-api/mempolicy2.rst): NUMA balancing
 * only moves pages whose policy has MPOL_F_MOF, which a weighted-interleave
 * policy never has.  Runs with THP "madvise" (base pages) and "always".
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <sys/wait.h>
#include "../kselftest_harness.h"
#include "numa_util.h"

#define HPAGE_PAGES 512		/* 2 MiB THP in 4 KiB pages */
#define THP_ENABLED "/sys/kernel/mm/transparent_hugepage/enabled"
#define NB_MODE "/proc/sys/kernel/numa_balancing"
#define NB_DEBUGFS "/sys/kernel/debug/sched/numa_balancing/"
#define TIERS "/sys/devices/virtual/memory_tiering"
#define CHILD_ENV "MPOL2_NB_CHILD"
#define PASSES 4		/* full scan passes to wait for, each phase */
#define DEADLINE_S 180		/* a phase not done by then fails */

/*
 * Faster scanning than the defaults (1 s delay, periods of 1 to 60 s), so
 * that several passes take seconds on a slow machine.  Restored afterwards.
 */
static const struct { const char *name, *value; } tunables[] = {
	{ "scan_delay_ms", "0" },
	{ "scan_period_min_ms", "50" },
	{ "scan_period_max_ms", "200" },
};

#define NR_TUNABLES ARRAY_SIZE(tunables)

FIXTURE(nb) {
	int nodes[WI_MAX_NODES], nr;
	int home, far;			/* CPU 0's node; the default pages' first node */
	unsigned char w[WI_MAX_NODES], w2[WI_MAX_NODES];	/* by index */
	size_t npages, len;
	char *weighted, *plain;		/* mbind2 range, default-policy range */
	char *child_buf;		/* the child's task-policy range */
	pid_t child;
	int cmd[2], ack[2];
	long saved_mode;
	char saved_tunables[NR_TUNABLES][16];
	char saved_thp[32];
};

FIXTURE_VARIANT(nb) {
	int mode;			/* numa_balancing: 1 normal, 2 tiering */
	const char *thp;		/* THP "enabled": "madvise" or "always" */
};

FIXTURE_VARIANT_ADD(nb, mode1_base_pages) { .mode = 1, .thp = "madvise" };
FIXTURE_VARIANT_ADD(nb, mode1_thp_always) { .mode = 1, .thp = "always" };
FIXTURE_VARIANT_ADD(nb, mode2_base_pages) { .mode = 2, .thp = "madvise" };
FIXTURE_VARIANT_ADD(nb, mode2_thp_always) { .mode = 2, .thp = "always" };

/* First line of @path into @out without its newline; 0 or -1. */
static int read_line(const char *path, char *out, size_t size)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = !!fgets(out, size, f);
	fclose(f);
	if (!ok)
		return -1;
	out[strcspn(out, "\n")] = '\0';
	return 0;
}

/* mm->numa_scan_seq of process @pid: full scan passes so far, or -1. */
static long scan_seq(pid_t pid)
{
	char path[64], line[256], *colon;
	long seq = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/sched", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		colon = strchr(line, ':');
		if (strstr(line, "mm->numa_scan_seq") && colon) {
			seq = atol(colon + 1);
			break;
		}
	}
	fclose(f);
	return seq;
}

/*
 * A memory node in a lower memory tier than every node with CPUs, which
 * tiering mode promotes from, or -1 if the machine has none.
 */
static int lower_tier_node(const int *mem, int nr_mem)
{
	int tier_of[WI_MAX_NODES], ids[WI_MAX_NODES], cpu_nodes[WI_MAX_NODES];
	int i, n, tier, top = -1;
	char path[96];
	struct dirent *e;
	DIR *d = opendir(TIERS);

	if (!d)
		return -1;
	for (i = 0; i < WI_MAX_NODES; i++)
		tier_of[i] = -1;
	while ((e = readdir(d))) {
		if (sscanf(e->d_name, "memory_tier%d", &tier) != 1)
			continue;
		snprintf(path, sizeof(path), TIERS "/memory_tier%d/nodelist", tier);
		n = wi_read_node_list(path, ids, WI_MAX_NODES);
		for (i = 0; i < n; i++)
			tier_of[ids[i]] = tier;
	}
	closedir(d);
	n = wi_read_node_list("/sys/devices/system/node/has_cpu", cpu_nodes,
			      WI_MAX_NODES);
	for (i = 0; i < n; i++)
		if (tier_of[cpu_nodes[i]] > top)
			top = tier_of[cpu_nodes[i]];
	for (i = 0; i < nr_mem; i++)
		if (top >= 0 && tier_of[mem[i]] > top)
			return mem[i];
	return -1;
}

/*
 * The second process, after exec: its task policy (set before exec) has
 * own weights.  It faults its range, reports the address on @ack, and
 * touches the range until told to stop on @cmd.
 */
static void child_main(int cmd, int ack, size_t npages)
{
	char *p = wi_map_hpage_aligned(npages * getpagesize());
	struct pollfd pfd = { .fd = cmd, .events = POLLIN };
	char c;

	if (!p)
		_exit(2);
	wi_touch_pages(p, npages);
	if (write(ack, &p, sizeof(p)) != sizeof(p))
		_exit(3);
	for (;;) {
		wi_touch_pages(p, npages);
		if (poll(&pfd, 1, 0) == 1)
			_exit(read(cmd, &c, 1) == 1 && c == 'q' ? 0 : 4);
	}
}

/* The test binary run again as the child: see nb_start_child(). */
__attribute__((constructor)) static void maybe_child(void)
{
	const char *env = getenv(CHILD_ENV);
	int cmd, ack;
	size_t npages;

	if (env && sscanf(env, "%d,%d,%zu", &cmd, &ack, &npages) == 3)
		child_main(cmd, ack, npages);
}

FIXTURE_SETUP(nb)
{
	unsigned int cpu, node;
	cpu_set_t set;
	long wsum = 0;
	char path[128];
	int i;

	self->weighted = NULL;
	self->plain = NULL;
	self->child = 0;
	self->saved_mode = -1;
	self->saved_tunables[0][0] = '\0';
	self->saved_thp[0] = '\0';
	if (access(NB_MODE, F_OK))
		SKIP(return, "Kernel without CONFIG_NUMA_BALANCING (%s)", NB_MODE);
	if (access(NB_DEBUGFS, F_OK))
		SKIP(return, "No %s (needs debugfs, and CONFIG_SCHED_DEBUG where it exists)",
		     NB_DEBUGFS);
	if (access(THP_ENABLED, F_OK))
		SKIP(return, "Kernel without CONFIG_TRANSPARENT_HUGEPAGE (%s)", THP_ENABLED);
	self->nr = wi_memory_nodes(self->nodes, WI_MAX_NODES);
	if (self->nr < 2)
		SKIP(return, "Not enough NUMA nodes available (needs 2)");

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
	ASSERT_EQ(0, syscall(__NR_getcpu, &cpu, &node, NULL));
	self->home = node;
	if (variant->mode == 2) {
		self->far = lower_tier_node(self->nodes, self->nr);
		if (self->far < 0)
			SKIP(return, "No memory node below the top tier (%s)", TIERS);
	} else {
		self->far = self->nodes[self->nr - 1];
		if (self->far == self->home)
			self->far = self->nodes[0];
	}

	/* 3,2,1,...,1 over the memory nodes in id order, then reversed. */
	for (i = 0; i < self->nr; i++) {
		self->w[i] = i == 0 ? 3 : i == 1 ? 2 : 1;
		wsum += self->w[i];
	}
	for (i = 0; i < self->nr; i++)
		self->w2[i] = self->w[self->nr - 1 - i];
	/* Each node's share is a whole number of huge pages. */
	self->npages = (size_t)wsum * HPAGE_PAGES;
	self->len = self->npages * getpagesize();

	ASSERT_EQ(0, wi_read_selected(THP_ENABLED, self->saved_thp,
				      sizeof(self->saved_thp)));
	ASSERT_EQ(0, wi_write_file(THP_ENABLED, variant->thp));
	/* Off while the pages are faulted; each test turns on its mode. */
	self->saved_mode = wi_read_long(NB_MODE);
	ASSERT_LE(0, self->saved_mode);
	ASSERT_EQ(0, wi_write_file(NB_MODE, "0"));
	for (i = 0; i < (int)NR_TUNABLES; i++) {
		snprintf(path, sizeof(path), NB_DEBUGFS "%s", tunables[i].name);
		ASSERT_EQ(0, read_line(path, self->saved_tunables[i],
				       sizeof(self->saved_tunables[i])));
	}
	for (i = 0; i < (int)NR_TUNABLES; i++) {
		snprintf(path, sizeof(path), NB_DEBUGFS "%s", tunables[i].name);
		ASSERT_EQ(0, wi_write_file(path, tunables[i].value));
	}
	self->weighted = wi_map_hpage_aligned(self->len);
	self->plain = wi_map_hpage_aligned(self->len);
	ASSERT_NE(NULL, self->weighted);
	ASSERT_NE(NULL, self->plain);
}

FIXTURE_TEARDOWN(nb)
{
	char path[128];
	int i;

	if (self->child > 0) {
		kill(self->child, SIGKILL);
		waitpid(self->child, NULL, 0);
	}
	if (self->saved_mode >= 0) {
		snprintf(path, sizeof(path), "%ld", self->saved_mode);
		wi_write_file(NB_MODE, path);
	}
	for (i = 0; i < (int)NR_TUNABLES && self->saved_tunables[0][0]; i++) {
		snprintf(path, sizeof(path), NB_DEBUGFS "%s", tunables[i].name);
		wi_write_file(path, self->saved_tunables[i]);
	}
	if (self->saved_thp[0])
		wi_write_file(THP_ENABLED, self->saved_thp);
	if (self->weighted)
		munmap(self->weighted, self->len);
	if (self->plain)
		munmap(self->plain, self->len);
}

/* Expected pages per node: @w[i] huge pages' worth on node nodes[i]. */
static void shares(struct _test_data_nb *self, const unsigned char *w, long *want)
{
	int i;

	memset(want, 0, WI_MAX_NODES * sizeof(*want));
	for (i = 0; i < self->nr; i++)
		want[self->nodes[i]] = (long)w[i] * HPAGE_PAGES;
}

/* Pages of @p in process @pid per node against @want, every node. */
static void expect_pages(struct __test_metadata *_metadata,
			 struct _test_data_nb *self, pid_t pid, char *p,
			 const long *want, const char *what)
{
	long counts[WI_MAX_NODES];
	char got[256] = "", exp[256] = "";
	int i, ok = 1;

	ASSERT_EQ(0, wi_count_pid_pages(pid, p, self->npages, counts))
		TH_LOG("%s: pages not resident", what);
	for (i = 0; i < self->nr; i++) {
		int nid = self->nodes[i];

		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%ld",
			 i ? "/" : "", counts[nid]);
		snprintf(exp + strlen(exp), sizeof(exp) - strlen(exp), "%s%ld",
			 i ? "/" : "", want[nid]);
		ok &= counts[nid] == want[nid];
	}
	TH_LOG("%s: %s pages per node, expected %s", what, got, exp);
	EXPECT_TRUE(ok);
}

/* Own weights @w (by index) as a byte array indexed by node id. */
static void weights_by_id(struct _test_data_nb *self, const unsigned char *w,
			  unsigned char *by_id)
{
	int i;

	memset(by_id, 0, WI_MAXNODE);
	for (i = 0; i < self->nr; i++)
		by_id[self->nodes[i]] = w[i];
}

/*
 * Start the second process: fork, set the task policy with own weights,
 * exec this binary again (maybe_child() takes over), and read back the
 * address of the range it faulted.
 */
static void nb_start_child(struct __test_metadata *_metadata,
			   struct _test_data_nb *self)
{
	unsigned char w[WI_MAXNODE];
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
	struct mpol_args args;
	char env[64];

	ASSERT_EQ(0, pipe(self->cmd));
	ASSERT_EQ(0, pipe(self->ack));
	weights_by_id(self, self->w, w);
	wi_args(&args, mask, self->nodes, self->nr, w);
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (self->child == 0) {
		char *const argv[] = { "mempolicy2_numa_balancing_test", NULL };

		snprintf(env, sizeof(env), "%d,%d,%zu", self->cmd[0],
			 self->ack[1], self->npages);
		if (setenv(CHILD_ENV, env, 1) ||
		    sys_set_mempolicy2(&args, sizeof(args), 0))
			_exit(5);
		execv("/proc/self/exe", argv);
		_exit(6);
	}
	ASSERT_EQ((ssize_t)sizeof(self->child_buf),
		  read(self->ack[0], &self->child_buf, sizeof(self->child_buf)));
}

/*
 * Touch both ranges of this process until the scanner has made @passes
 * more full passes over it and the pages of the range without a VMA
 * policy are where @plain_want says.  The deadline only turns a hang
 * into a failure.
 */
static void run_passes(struct __test_metadata *_metadata,
		       struct _test_data_nb *self, int passes,
		       const long *plain_want)
{
	long counts[WI_MAX_NODES], seq0 = scan_seq(getpid()), seq;
	struct timespec start, now;
	long touches = 0;

	ASSERT_LE(0, seq0) TH_LOG("no mm->numa_scan_seq in /proc/PID/sched");
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (;;) {
		wi_touch_pages(self->weighted, self->npages);
		wi_touch_pages(self->plain, self->npages);
		touches++;
		seq = scan_seq(getpid());
		ASSERT_EQ(0, wi_count_pages_per_node(self->plain, self->npages,
						     counts));
		if (seq - seq0 >= passes &&
		    !memcmp(counts, plain_want, sizeof(counts)))
			break;
		clock_gettime(CLOCK_MONOTONIC, &now);
		ASSERT_GT(DEADLINE_S, now.tv_sec - start.tv_sec)
			TH_LOG("%ld passes, %ld touches: %ld of %zu pages on node %d, want %ld",
			       seq - seq0, touches, counts[self->home],
			       self->npages, self->home, plain_want[self->home]);
	}
	TH_LOG("%ld scan passes, %ld touches of every page", seq - seq0, touches);
}

TEST_F_TIMEOUT(nb, weighted_pages_stay_default_pages_follow, 2 * DEADLINE_S + 60)
{
	unsigned long far_mask[WI_MAX_NODES / (8 * sizeof(long))] = { 0 };
	long want[WI_MAX_NODES], all_far[WI_MAX_NODES] = { 0 };
	long all_home[WI_MAX_NODES] = { 0 };
	long faults, migrated, promoted, moved, min_moved = 0;
	unsigned char w2[WI_MAXNODE];
	char mode[4];
	int i, pidfd;

	TH_LOG("numa_balancing=%d, THP %s, CPU 0 on node %d, default pages start on node %d",
	       variant->mode, variant->thp, self->home, self->far);
	/* Own weights on a range, and default-policy pages on the far node. */
	ASSERT_EQ(0, wi_mbind2_nodes(self->weighted, self->len, self->nodes,
				     self->nr, self->w, 0));
	wi_touch_pages(self->weighted, self->npages);
	wi_nodemask_set(far_mask, self->far);
	ASSERT_EQ(0, sys_set_mempolicy(MPOL_BIND, far_mask, WI_MAXNODE));
	wi_touch_pages(self->plain, self->npages);
	ASSERT_EQ(0, sys_set_mempolicy(MPOL_DEFAULT, NULL, 0));
	nb_start_child(_metadata, self);

	shares(self, self->w, want);
	all_far[self->far] = self->npages;
	all_home[self->home] = self->npages;
	expect_pages(_metadata, self, 0, self->weighted, want, "mbind2 range, faulted");
	expect_pages(_metadata, self, 0, self->plain, all_far, "default pages, faulted");
	expect_pages(_metadata, self, self->child, self->child_buf, want,
		     "task policy, faulted");

	faults = wi_vmstat("numa_hint_faults");
	migrated = wi_vmstat("numa_pages_migrated");
	promoted = wi_vmstat("pgpromote_success");
	snprintf(mode, sizeof(mode), "%d", variant->mode);
	ASSERT_EQ(0, wi_write_file(NB_MODE, mode));
	run_passes(_metadata, self, PASSES, all_home);
	TH_LOG("hint faults %ld, pages migrated %ld, promoted %ld",
	       wi_vmstat("numa_hint_faults") - faults,
	       wi_vmstat("numa_pages_migrated") - migrated,
	       wi_vmstat("pgpromote_success") - promoted);
	expect_pages(_metadata, self, 0, self->weighted, want, "mbind2 range, balanced");
	expect_pages(_metadata, self, 0, self->plain, all_home, "default pages, balanced");
	expect_pages(_metadata, self, self->child, self->child_buf, want,
		     "task policy, balanced");
	/* Other processes' pages may be promoted too, never fewer. */
	if (variant->mode == 2)
		EXPECT_LE((long)self->npages,
			  wi_vmstat("pgpromote_success") - promoted);

	/* Rebalance both to the reversed weights with balancing still on. */
	for (i = 0; i < self->nr; i++)
		if (self->w[i] > self->w2[i])
			min_moved += (long)(self->w[i] - self->w2[i]) * HPAGE_PAGES;
	moved = wi_vmstat("mpol_rebalance_moved");
	EXPECT_EQ(0, wi_mbind2_nodes(self->weighted, self->len, self->nodes,
				     self->nr, self->w2, WI_REBALANCE));
	moved = wi_vmstat("mpol_rebalance_moved") - moved;
	TH_LOG("mbind2 rebalance moved %ld pages, minimum %ld", moved, min_moved);
	EXPECT_EQ(min_moved, moved);
	pidfd = sys_pidfd_open(self->child);
	ASSERT_LE(0, pidfd);
	weights_by_id(self, self->w2, w2);
	EXPECT_EQ(0, sys_process_mpol_reweight(pidfd, w2, WI_MAXNODE, MPOL_REWEIGHT_REBALANCE));
	close(pidfd);
	shares(self, self->w2, want);
	expect_pages(_metadata, self, 0, self->weighted, want, "mbind2 range, rebalanced");
	expect_pages(_metadata, self, self->child, self->child_buf, want,
		     "task policy, rebalanced");
	run_passes(_metadata, self, PASSES, all_home);
	expect_pages(_metadata, self, 0, self->weighted, want,
		     "mbind2 range, rebalanced and balanced");
	expect_pages(_metadata, self, self->child, self->child_buf, want,
		     "task policy, rebalanced and balanced");

	ASSERT_EQ(1, write(self->cmd[1], "q", 1));
	ASSERT_EQ(self->child, waitpid(self->child, &i, 0));
	self->child = 0;
	EXPECT_TRUE(WIFEXITED(i) && WEXITSTATUS(i) == 0) TH_LOG("child status %#x", i);
}

/* A thread that faults a range under its own task policy, then exits. */
struct fault_job {
	struct _test_data_nb *self;
	char *p;
	long ret;
};

static void *fault_under_own_weights(void *arg)
{
	struct fault_job *job = arg;
	struct _test_data_nb *self = job->self;
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
	unsigned char w[WI_MAXNODE];
	struct mpol_args args;

	weights_by_id(self, self->w, w);
	wi_args(&args, mask, self->nodes, self->nr, w);
	job->ret = sys_set_mempolicy2(&args, sizeof(args), 0);
	if (!job->ret)
		wi_touch_pages(job->p, self->npages);
	return NULL;
}

/*
 * A task policy is one thread's.  Pages another thread placed under its
 * weighted task policy, touched by this thread with the default policy,
 * follow this thread's hinting faults as any page does: all of them in
 * mode 1; in mode 2 those on the slower tier, promoted, while the top
 * tier is not scanned.  mempolicy2.rst says so.
 */
TEST_F_TIMEOUT(nb, default_thread_moves_task_policy_pages, DEADLINE_S + 60)
{
	struct fault_job job = { .self = self, .p = self->plain };
	long want[WI_MAX_NODES], after[WI_MAX_NODES];
	char mode[4];
	pthread_t t;
	int i;

	ASSERT_EQ(0, wi_mbind2_nodes(self->weighted, self->len, self->nodes,
				     self->nr, self->w, 0));
	wi_touch_pages(self->weighted, self->npages);
	ASSERT_EQ(0, pthread_create(&t, NULL, fault_under_own_weights, &job));
	ASSERT_EQ(0, pthread_join(t, NULL));
	ASSERT_EQ(0, job.ret);
	shares(self, self->w, want);
	expect_pages(_metadata, self, 0, self->plain, want,
		     "the other thread's task policy, faulted");

	memset(after, 0, sizeof(after));
	if (variant->mode == 1) {
		after[self->home] = self->npages;
	} else {
		memcpy(after, want, sizeof(after));
		for (i = 0; i < self->nr; i++) {
			int nid = self->nodes[i];

			if (nid == self->far) {
				after[self->home] += after[nid];
				after[nid] = 0;
			}
		}
	}
	snprintf(mode, sizeof(mode), "%d", variant->mode);
	ASSERT_EQ(0, wi_write_file(NB_MODE, mode));
	run_passes(_metadata, self, PASSES, after);
	expect_pages(_metadata, self, 0, self->plain, after,
		     "touched by a default-policy thread");
	expect_pages(_metadata, self, 0, self->weighted, want,
		     "mbind2 range, balanced");
}

int main(int argc, char **argv)
{
	wi_skip_without_mempolicy2();
	return test_harness_run(argc, argv);
}
