// SPDX-License-Identifier: GPL-2.0
/*
 * What a cpuset rebind does to weights owned by a policy:
 *  - MPOL_F_STATIC_NODES: each weight stays with its node; nodes that
 *    leave the cpuset get no pages, and get their weight back on return;
 *    If every node left has weight 0, each of them counts as 1;
 *  - process_mpol_reweight() replaces the whole table: the bytes of nodes
 *    outside the cpuset at that moment are ignored, so such a node comes
 *    back with weight 0;
 *  - own weights must give a weight to some node of the effective
 *    nodemask (user nodes and the cpuset): otherwise EINVAL;
 *  - no flags: the nodemask is remapped and each weight moves with its
 *    node; nodes folded onto one add their weights.  get_mempolicy2()
 *    reports the weights in effect for the nodes of the nodemask and the
 *    weights as given for the others, so a rebind and its way back give
 *    the weights set;
 *  - a storm of rebinds never shows a reader a table half remapped;
 *  - the weights process_mpol_reweight() gave the task policies move
 *    with them, also when the thread group leader is a zombie.
 * Each test joins its own cgroup and changes that cgroup's cpuset.mems,
 * which rebinds the policy before the write returns.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "numa_util.h"
#include "cpuset_util.h"

#define CG WI_CGROUP_ROOT "/mpol2-rebind-test"

FIXTURE(rebind) {
	int nodes[WI_MAX_NODES];
	int nr_nodes;
	bool in_cpuset;
	unsigned char w[WI_MAXNODE];
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
	struct mpol_args args;
};

FIXTURE_SETUP(rebind)
{
	char mems[16];

	self->nr_nodes = wi_memory_nodes(self->nodes, WI_MAX_NODES);
	if (self->nr_nodes < 4)
		SKIP(return, "Not enough NUMA nodes available (need 4)");
	if (!wi_cpuset_supported())
		SKIP(return, "No cgroup2 cpuset controller at %s", WI_CGROUP_ROOT);
	memset(self->w, 0, sizeof(self->w));
	snprintf(mems, sizeof(mems), "0-%d", self->nr_nodes - 1);
	ASSERT_EQ(0, wi_cpuset_create(CG, mems));
	self->in_cpuset = true;
	ASSERT_EQ(0, wi_cpuset_join(CG));
}

FIXTURE_TEARDOWN(rebind)
{
	sys_set_mempolicy(MPOL_DEFAULT, NULL, 0);
	if (self->in_cpuset)
		EXPECT_EQ(0, wi_cpuset_leave_and_remove(CG));
}

/* Fault rounds * sum(want) pages under the task policy; check each node. */
static void expect_placement(struct __test_metadata *_metadata,
			     const unsigned char *want, long rounds)
{
	long counts[WI_MAX_NODES], sum = 0;
	size_t npages;
	char *buf;
	int n;

	for (n = 0; n < WI_MAX_NODES; n++)
		sum += want[n];
	npages = rounds * sum;
	buf = wi_map_prefaulted(npages);
	ASSERT_NE(NULL, buf);
	wi_touch_pages(buf, npages);
	ASSERT_EQ(0, wi_count_pages_per_node(buf, npages, counts));
	for (n = 0; n < 4; n++)
		EXPECT_EQ(rounds * want[n], counts[n]) TH_LOG("node %d", n);
	TH_LOG("pages: node0=%ld node1=%ld node2=%ld node3=%ld",
	       counts[0], counts[1], counts[2], counts[3]);
	munmap(buf, npages * getpagesize());
}

static void expect_weights(struct __test_metadata *_metadata,
			   const unsigned char *want)
{
	struct wi_policy got;

	ASSERT_EQ(0, wi_read_policy(&got, NULL));
	EXPECT_EQ(0, memcmp(want, got.w, 4)) TH_LOG("weights now %u,%u,%u,%u",
						    got.w[0], got.w[1], got.w[2], got.w[3]);
}

TEST_F(rebind, static_nodes_keep_weights_on_their_nodes)
{
	static const unsigned char all[WI_MAXNODE] = { 5, 3, 1, 1 };
	static const unsigned char first2[WI_MAXNODE] = { 5, 3 };
	int four[4] = { 0, 1, 2, 3 };

	memcpy(self->w, all, sizeof(all));
	wi_args(&self->args, self->mask, four, 4, self->w);
	self->args.mode_flags = MPOL_F_STATIC_NODES;
	ASSERT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));

	ASSERT_EQ(0, wi_cg_write(CG, "cpuset.mems", "0-1"));
	expect_placement(_metadata, first2, 100);	/* 500/300/0/0 */
	expect_weights(_metadata, all);

	ASSERT_EQ(0, wi_cg_write(CG, "cpuset.mems", "0-3"));
	expect_placement(_metadata, all, 100);		/* 500/300/100/100 */
}

/* The weighted nodes leave: the ones left count as 1 each until they return. */
TEST_F(rebind, static_nodes_only_zero_weights_left)
{
	static const unsigned char w0011[WI_MAXNODE] = { 0, 0, 1, 1 };
	static const unsigned char even01[WI_MAXNODE] = { 1, 1 };
	int four[4] = { 0, 1, 2, 3 };

	memcpy(self->w, w0011, sizeof(w0011));
	wi_args(&self->args, self->mask, four, 4, self->w);
	self->args.mode_flags = MPOL_F_STATIC_NODES;
	ASSERT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));

	ASSERT_EQ(0, wi_cg_write(CG, "cpuset.mems", "0-1"));
	expect_placement(_metadata, even01, 200);	/* 200/200/0/0 */
	expect_weights(_metadata, w0011);

	ASSERT_EQ(0, wi_cg_write(CG, "cpuset.mems", "0-3"));
	expect_placement(_metadata, w0011, 200);	/* 0/0/200/200 */
}

/*
 * The same on the task countdown, the path of allocations with no VMA:
 * page cache written with write(2) to a ramfs file.  The nodes left take
 * one page each in turn; a countdown that stepped once round the nodemask
 * came back to its last node and put all 400 there.  Other pages the
 * kernel allocates for this task meanwhile (slab for the file's xarray,
 * and, with KASAN or kmemleak, their metadata) take their turns in the
 * same countdown, so the file's pages may be a few off 200/200, such as
 * 201/199.
 */
#define COUNTDOWN_SLACK 4
TEST_F(rebind, static_nodes_only_zero_weights_left_task_countdown)
{
	static const unsigned char w0011[WI_MAXNODE] = { 0, 0, 1, 1 };
	char dir[] = "/mpol2-ramfs-XXXXXX", path[64], page[4096];
	size_t psz = getpagesize(), npages = 400, i;
	int four[4] = { 0, 1, 2, 3 }, fd;
	long counts[WI_MAX_NODES];
	char *map;

	ASSERT_EQ(sizeof(page), psz);
	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(0, mount("mpol2-ramfs", dir, "ramfs", 0, NULL));
	snprintf(path, sizeof(path), "%s/data", dir);
	fd = open(path, O_RDWR | O_CREAT, 0600);
	ASSERT_LE(0, fd);

	memcpy(self->w, w0011, sizeof(w0011));
	wi_args(&self->args, self->mask, four, 4, self->w);
	self->args.mode_flags = MPOL_F_STATIC_NODES;
	ASSERT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));
	ASSERT_EQ(0, wi_cg_write(CG, "cpuset.mems", "0-1"));
	for (i = 0; i < npages; i++) {
		memset(page, (int)i, sizeof(page));
		ASSERT_EQ((ssize_t)psz, write(fd, page, psz));
	}
	ASSERT_EQ(0, sys_set_mempolicy(MPOL_DEFAULT, NULL, 0));

	map = mmap(NULL, npages * psz, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, map);
	for (i = 0; i < npages; i++)
		ASSERT_EQ((char)i, map[i * psz]);
	ASSERT_EQ(0, wi_count_pages_per_node(map, npages, counts));
	TH_LOG("page cache: node0=%ld node1=%ld", counts[0], counts[1]);
	EXPECT_EQ(400, counts[0] + counts[1]);
	EXPECT_GE(COUNTDOWN_SLACK, labs(counts[0] - 200));
	EXPECT_GE(COUNTDOWN_SLACK, labs(counts[1] - 200));
	munmap(map, npages * psz);
	close(fd);
	EXPECT_EQ(0, umount(dir));
	rmdir(dir);
}

/* A reweight while nodes 2,3 are out ignores their bytes: they return at 0. */
TEST_F(rebind, static_nodes_reweighted_while_out)
{
	static const unsigned char all[WI_MAXNODE] = { 5, 3, 1, 1 };
	static const unsigned char w53[WI_MAXNODE] = { 5, 3 };
	static const unsigned char w42[WI_MAXNODE] = { 4, 2 };
	unsigned char w[WI_MAXNODE];
	int four[4] = { 0, 1, 2, 3 }, pidfd;

	memcpy(self->w, all, sizeof(all));
	wi_args(&self->args, self->mask, four, 4, self->w);
	self->args.mode_flags = MPOL_F_STATIC_NODES;
	ASSERT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));
	ASSERT_EQ(0, wi_cg_write(CG, "cpuset.mems", "0-1"));

	pidfd = sys_pidfd_open(getpid());
	ASSERT_LE(0, pidfd);
	memcpy(w, all, sizeof(w));
	/* Nodes 2 and 3 are outside the cpuset now: their bytes are ignored. */
	EXPECT_EQ(0, sys_process_mpol_reweight(pidfd, w, WI_MAXNODE, 0));
	expect_weights(_metadata, w53);
	memcpy(w, w42, sizeof(w));
	EXPECT_EQ(0, sys_process_mpol_reweight(pidfd, w, WI_MAXNODE, 0));
	close(pidfd);
	expect_weights(_metadata, w42);

	ASSERT_EQ(0, wi_cg_write(CG, "cpuset.mems", "0-3"));
	expect_placement(_metadata, w42, 100);		/* 400/200/0/0 */
}

/*
 * Own weights are checked against the nodes the policy can use: static
 * nodes 0-3 with weights only on 2,3, while the cpuset holds 0-1, leave
 * no weight at all.
 */
TEST_F(rebind, effective_weights_all_zero_einval)
{
	static const unsigned char w0011[WI_MAXNODE] = { 0, 0, 1, 1 };
	int four[4] = { 0, 1, 2, 3 };
	struct wi_policy before, after;

	ASSERT_EQ(0, wi_cg_write(CG, "cpuset.mems", "0-1"));
	ASSERT_EQ(0, wi_read_policy(&before, NULL));
	memcpy(self->w, w0011, sizeof(w0011));
	wi_args(&self->args, self->mask, four, 4, self->w);
	self->args.mode_flags = MPOL_F_STATIC_NODES;
	EXPECT_EQ(-1, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));
	EXPECT_EQ(EINVAL, errno);
	ASSERT_EQ(0, wi_read_policy(&after, NULL));
	EXPECT_EQ(before.args.mode, after.args.mode);

	/* With a weight on node 1 the same call is fine. */
	self->w[1] = 2;
	EXPECT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));
}

TEST_F(rebind, remapped_nodes_carry_their_weights)
{
	static const unsigned char on01[WI_MAXNODE] = { 5, 3 };
	static const unsigned char on23[WI_MAXNODE] = { 0, 0, 5, 3 };
	/* Nodes 0,1 are outside the nodemask now: what was given. */
	static const unsigned char read23[WI_MAXNODE] = { 5, 3, 5, 3 };
	int two[2] = { 0, 1 };

	ASSERT_EQ(0, wi_cg_write(CG, "cpuset.mems", "0-1"));
	memcpy(self->w, on01, sizeof(on01));
	wi_args(&self->args, self->mask, two, 2, self->w);
	ASSERT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));
	expect_placement(_metadata, on01, 100);

	ASSERT_EQ(0, wi_cg_write(CG, "cpuset.mems", "2-3"));
	expect_weights(_metadata, read23);
	expect_placement(_metadata, on23, 100);		/* 0/0/500/300 */
}

TEST_F(rebind, folded_nodes_add_their_weights)
{
	static const unsigned char all[WI_MAXNODE] = { 5, 3, 1, 1 };
	static const unsigned char folded[WI_MAXNODE] = { 6, 4 };
	/* Nodes 2,3 are outside the nodemask now: what was given. */
	static const unsigned char read01[WI_MAXNODE] = { 6, 4, 1, 1 };
	int four[4] = { 0, 1, 2, 3 };

	memcpy(self->w, all, sizeof(all));
	wi_args(&self->args, self->mask, four, 4, self->w);
	ASSERT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));

	/* 0-3 onto 0-1: the n-th node goes to the (n mod 2)-th one. */
	ASSERT_EQ(0, wi_cg_write(CG, "cpuset.mems", "0-1"));
	expect_weights(_metadata, read01);
	expect_placement(_metadata, folded, 100);	/* 600/400/0/0 */
}

/*
 * Nodes 0,1 with weights 5,3, and 2,7 given for nodes 2,3 outside the
 * nodemask (ignored, but reported as given).  The cpuset moves to 2-3,
 * which remaps the nodes to 2,3, and back to 0-3, which remaps them to
 * 0,1 again: the policy reads back exactly as it was set, and places as
 * it did.
 */
TEST_F(rebind, remapped_and_back_reads_given_weights)
{
	static const unsigned char given[WI_MAXNODE] = { 5, 3, 2, 7 };
	static const unsigned char on01[WI_MAXNODE] = { 5, 3 };
	static const unsigned char on23[WI_MAXNODE] = { 0, 0, 5, 3 };
	static const unsigned char read23[WI_MAXNODE] = { 5, 3, 5, 3 };
	int two[2] = { 0, 1 };
	struct wi_policy got;

	memcpy(self->w, given, sizeof(given));
	wi_args(&self->args, self->mask, two, 2, self->w);
	ASSERT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));
	expect_weights(_metadata, given);

	ASSERT_EQ(0, wi_cg_write(CG, "cpuset.mems", "2-3"));
	expect_weights(_metadata, read23);
	expect_placement(_metadata, on23, 100);		/* 0/0/500/300 */

	ASSERT_EQ(0, wi_cg_write(CG, "cpuset.mems", "0-3"));
	ASSERT_EQ(0, wi_read_policy(&got, NULL));
	EXPECT_EQ(0x3UL, got.mask[0]);
	EXPECT_EQ(0, memcmp(given, got.w, 4))
		TH_LOG("weights back %u,%u,%u,%u, given 5,3,2,7",
		       got.w[0], got.w[1], got.w[2], got.w[3]);
	expect_placement(_metadata, on01, 100);		/* 500/300/0/0 */
}

/*
 * A storm of rebinds: the main thread flips cpuset.mems between 2-3 and
 * 0-1 while reader threads, each with a task policy of its own (nodes 0,1
 * at 5,3 when set), and one reading a VMA policy (mbind2, the same), call
 * get_mempolicy2() in a loop.  Every read must be one whole state: nodes
 * 0,1 or 2,3, the two nodes at 5 and 3 (the remapped weights in effect,
 * whole), the other two at what was given.  A table rewritten under a
 * reader, or weights zeroed by a rebind, shows up as a bad read.  Once the
 * flips stop, every reader faults pages under its policy: exactly 5:3 on
 * the last nodes, so every thread's rebind found a table to publish.
 * Three readers and the writer: one CPU each on a 4-CPU machine.
 */
#define STORM_FLIPS	200
#define STORM_READERS	2
#define STORM_ROUNDS	50

struct storm {
	atomic_int stop;
	atomic_int started;
	atomic_long reads;
	atomic_long bad_nodes;		/* a nodemask neither 0,1 nor 2,3 */
	atomic_long mixed;		/* the nodemask's weights not 5,3 */
	atomic_long given_lost;		/* the other nodes' bytes not 5,3/0,0 */
	atomic_long bad_placement;
	atomic_long errors;
	char *vma;
};

/* Judge one read: which nodes, and are their weights one whole table? */
static void storm_check(struct storm *st, const struct wi_policy *got)
{
	/* Given: 5,3 for nodes 0,1 and 0 for nodes 2,3. */
	atomic_fetch_add(&st->reads, 1);
	if (got->mask[0] == 0x3) {
		if (got->w[0] != 5 || got->w[1] != 3)
			atomic_fetch_add(&st->mixed, 1);
		if (got->w[2] || got->w[3])
			atomic_fetch_add(&st->given_lost, 1);
	} else if (got->mask[0] == 0xc) {
		if (got->w[2] != 5 || got->w[3] != 3)
			atomic_fetch_add(&st->mixed, 1);
		if (got->w[0] != 5 || got->w[1] != 3)
			atomic_fetch_add(&st->given_lost, 1);
	} else {
		atomic_fetch_add(&st->bad_nodes, 1);
	}
}

/* Fault STORM_ROUNDS * 8 pages under the task policy: 5:3 on one pair. */
static void storm_placement(struct storm *st)
{
	size_t npages = STORM_ROUNDS * 8;
	long c[WI_MAX_NODES];
	char *buf;

	buf = wi_map_prefaulted(npages);
	if (!buf) {
		atomic_fetch_add(&st->errors, 1);
		return;
	}
	wi_touch_pages(buf, npages);
	if (wi_count_pages_per_node(buf, npages, c))
		atomic_fetch_add(&st->errors, 1);
	else if (!(c[0] == 250 && c[1] == 150 && !c[2] && !c[3]) &&
		 !(c[2] == 250 && c[3] == 150 && !c[0] && !c[1]))
		atomic_fetch_add(&st->bad_placement, 1);
	munmap(buf, npages * getpagesize());
}

static void *storm_task_reader(void *arg)
{
	static const unsigned char given[WI_MAXNODE] = { 5, 3 };
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
	struct storm *st = arg;
	struct mpol_args args;
	struct wi_policy got;
	int two[2] = { 0, 1 };

	wi_args(&args, mask, two, 2, given);
	if (sys_set_mempolicy2(&args, sizeof(args), 0)) {
		atomic_fetch_add(&st->errors, 1);
		atomic_fetch_add(&st->started, 1);
		return NULL;
	}
	atomic_fetch_add(&st->started, 1);
	while (!atomic_load(&st->stop)) {
		if (wi_read_policy(&got, NULL))
			atomic_fetch_add(&st->errors, 1);
		else
			storm_check(st, &got);
	}
	storm_placement(st);
	return NULL;
}

static void *storm_vma_reader(void *arg)
{
	struct storm *st = arg;
	struct wi_policy got;

	atomic_fetch_add(&st->started, 1);
	while (!atomic_load(&st->stop)) {
		if (wi_read_policy(&got, st->vma))
			atomic_fetch_add(&st->errors, 1);
		else
			storm_check(st, &got);
	}
	return NULL;
}

/* Slow on a small machine: each flip rebinds every thread and the mm. */
TEST_F_TIMEOUT(rebind, storm_never_shows_a_mixed_table, 300)
{
	static const unsigned char w53[2] = { 5, 3 };
	pthread_t t[STORM_READERS + 1];
	size_t len = 16 * getpagesize();
	int two[2] = { 0, 1 }, i;
	struct storm st = { 0 };

	/* The task policy of the main thread must not take part. */
	st.vma = mmap(NULL, len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, st.vma);
	ASSERT_EQ(0, wi_mbind2_nodes(st.vma, len, two, 2, w53, 0));

	for (i = 0; i < STORM_READERS; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, storm_task_reader, &st));
	ASSERT_EQ(0, pthread_create(&t[i], NULL, storm_vma_reader, &st));
	while (atomic_load(&st.started) < STORM_READERS + 1)
		sched_yield();

	for (i = 0; i < STORM_FLIPS; i++)
		ASSERT_EQ(0, wi_cg_write(CG, "cpuset.mems",
					 i % 2 ? "0-1" : "2-3"));
	atomic_store(&st.stop, 1);
	for (i = 0; i < STORM_READERS + 1; i++)
		ASSERT_EQ(0, pthread_join(t[i], NULL));

	TH_LOG("%d flips, %ld reads: %ld mixed, %ld given lost",
	       STORM_FLIPS, atomic_load(&st.reads), atomic_load(&st.mixed),
	       atomic_load(&st.given_lost));
	TH_LOG("%ld bad nodemasks, %ld bad placements, %ld errors",
	       atomic_load(&st.bad_nodes), atomic_load(&st.bad_placement),
	       atomic_load(&st.errors));
	EXPECT_LT(1000, atomic_load(&st.reads));
	EXPECT_EQ(0, atomic_load(&st.mixed));
	EXPECT_EQ(0, atomic_load(&st.given_lost));
	EXPECT_EQ(0, atomic_load(&st.bad_nodes));
	EXPECT_EQ(0, atomic_load(&st.bad_placement));
	EXPECT_EQ(0, atomic_load(&st.errors));
	munmap(st.vma, len);
}

/*
 * The weights process_mpol_reweight() gave a process's task policies
 * move with the policies when the cpuset's nodes change, whatever state
 * its thread group leader is in.  Here the leader has exited (a zombie,
 * with no mm) while a second thread runs, which then faults pages under
 * its task policy: nodes 0,1 reweighted to 5,3 must place 5:3 on nodes
 * 2,3 once the process is moved to a cpuset of nodes 2-3 (@by_attach) or
 * its cpuset's nodes change to 2-3, and get_mempolicy2() must read 5,3
 * there.  The policy's own weights (1,1) would place 1:1.
 */
#define CG_OTHER WI_CGROUP_ROOT "/mpol2-rebind-test-other"
#define ZOMBIE_ROUNDS 100

struct zombie_report {
	long counts[4];
	unsigned char w[4];
	int err;
};

static int zombie_fd[3][2];	/* ready, go, report: child to parent */

/* Is the thread group leader @pid a zombie? */
static bool leader_is_zombie(pid_t pid)
{
	char path[64], buf[256], *p;
	bool z = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	if (fgets(buf, sizeof(buf), f)) {
		p = strrchr(buf, ')');
		z = p && p[1] == ' ' && p[2] == 'Z';
	}
	fclose(f);
	return z;
}

static void *zombie_worker(void *arg)
{
	struct zombie_report r = { 0 };
	size_t npages = ZOMBIE_ROUNDS * 8;
	long counts[WI_MAX_NODES];
	struct wi_policy got;
	pid_t leader = getpid();
	char c = 1;
	char *buf;
	int i;

	for (i = 0; i < 100000 && !leader_is_zombie(leader); i++)
		sched_yield();
	if (!leader_is_zombie(leader))
		r.err = 1;
	if (write(zombie_fd[0][1], &c, 1) != 1 || read(zombie_fd[1][0], &c, 1) != 1)
		_exit(2);
	buf = wi_map_prefaulted(npages);
	if (!buf) {
		r.err = 2;
	} else {
		wi_touch_pages(buf, npages);
		if (wi_count_pages_per_node(buf, npages, counts))
			r.err = 3;
		memcpy(r.counts, counts, sizeof(r.counts));
	}
	if (wi_read_policy(&got, NULL))
		r.err = 4;
	memcpy(r.w, got.w, sizeof(r.w));
	if (write(zombie_fd[2][1], &r, sizeof(r)) != sizeof(r))
		_exit(2);
	exit(0);
}

static void zombie_child(void)
{
	static const unsigned char own[WI_MAXNODE] = { 1, 1 };
	static const unsigned char w53[WI_MAXNODE] = { 5, 3 };
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
	struct mpol_args args;
	int two[2] = { 0, 1 };
	pthread_t t;
	int pidfd;

	wi_args(&args, mask, two, 2, own);
	if (sys_set_mempolicy2(&args, sizeof(args), 0))
		_exit(10);
	pidfd = sys_pidfd_open(getpid());
	if (pidfd < 0 || sys_process_mpol_reweight(pidfd, w53, WI_MAXNODE, 0))
		_exit(11);
	close(pidfd);
	/* The worker's task policy is a copy, made before the reweight. */
	if (pthread_create(&t, NULL, zombie_worker, NULL))
		_exit(12);
	pthread_exit(NULL);
}

static void zombie_leader_rebind(struct __test_metadata *_metadata,
				 bool by_attach)
{
	struct zombie_report r;
	char c = 1, pid_text[32];
	int i, status;
	pid_t pid;

	ASSERT_EQ(0, wi_cg_write(CG, "cpuset.mems", "0-1"));
	if (by_attach)
		ASSERT_EQ(0, wi_cpuset_create(CG_OTHER, "2-3"));
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, pipe(zombie_fd[i]));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		zombie_child();
	/* A child that dies early ends the reads below. */
	close(zombie_fd[0][1]);
	close(zombie_fd[1][0]);
	close(zombie_fd[2][1]);

	ASSERT_EQ(1, read(zombie_fd[0][0], &c, 1));
	if (by_attach) {
		snprintf(pid_text, sizeof(pid_text), "%d", pid);
		EXPECT_EQ(0, wi_cg_write(CG_OTHER, "cgroup.procs", pid_text));
	} else {
		EXPECT_EQ(0, wi_cg_write(CG, "cpuset.mems", "2-3"));
	}
	ASSERT_EQ(1, write(zombie_fd[1][1], &c, 1));
	ASSERT_EQ(sizeof(r), read(zombie_fd[2][0], &r, sizeof(r)));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (by_attach)
		EXPECT_EQ(0, rmdir(CG_OTHER));
	close(zombie_fd[0][0]);
	close(zombie_fd[1][1]);
	close(zombie_fd[2][0]);

	TH_LOG("pages: node0=%ld node1=%ld node2=%ld node3=%ld, weights %u,%u",
	       r.counts[0], r.counts[1], r.counts[2], r.counts[3],
	       r.w[2], r.w[3]);
	ASSERT_EQ(0, r.err);
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	EXPECT_EQ(0, r.counts[0]);
	EXPECT_EQ(0, r.counts[1]);
	EXPECT_EQ(5 * ZOMBIE_ROUNDS, r.counts[2]);
	EXPECT_EQ(3 * ZOMBIE_ROUNDS, r.counts[3]);
	EXPECT_EQ(5, r.w[2]);
	EXPECT_EQ(3, r.w[3]);
}

TEST_F(rebind, zombie_leader_attach_moves_reweighted_weights)
{
	zombie_leader_rebind(_metadata, true);
}

TEST_F(rebind, zombie_leader_mems_change_moves_reweighted_weights)
{
	zombie_leader_rebind(_metadata, false);
}

int main(int argc, char **argv)
{
	wi_skip_without_mempolicy2();
	return test_harness_run(argc, argv);
}
