// SPDX-License-Identifier: GPL-2.0
/*
 * Which policies process_mpol_reweight() changes:
 *  - without flags, weighted-interleave policies with weights of their
 *    own (task and private VMA policies); those that follow the global
 *    weights only with MPOL_REWEIGHT_GLOBAL, after which they own the
 *    weights and later reweights reach them;
 *  - shared policies (memfd, shmem) only with MPOL_REWEIGHT_SHARED, only
 *    where the target opened the object for writing, and only over the
 *    part the target maps;
 *  - two processes in different cpusets sharing a memfd: reweighting one
 *    never hands the other's policy nodes outside its cpuset;
 *  - an mbind() of a shared range by another process while a shared
 *    reweight runs is never overwritten by a copy of the old policy.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"
#include "numa_util.h"
#include "cpuset_util.h"

#define CG_LOW WI_CGROUP_ROOT "/mpol2-scope-low"
#define CG_HIGH WI_CGROUP_ROOT "/mpol2-scope-high"
#define NPAGES 8

FIXTURE(scope) {
	int nodes[WI_MAX_NODES];
	int nr_nodes;
	int pidfd;
	size_t page;
	unsigned char old_w[WI_MAXNODE];	/* 3 on the first node, 1 on the second */
	unsigned char new_w[WI_MAXNODE];	/* 1, 4 */
};

FIXTURE_SETUP(scope)
{
	self->nr_nodes = wi_memory_nodes(self->nodes, WI_MAX_NODES);
	if (self->nr_nodes < 2)
		SKIP(return, "Not enough NUMA nodes available");
	self->page = getpagesize();
	memset(self->old_w, 0, sizeof(self->old_w));
	memset(self->new_w, 0, sizeof(self->new_w));
	self->old_w[self->nodes[0]] = 3;
	self->old_w[self->nodes[1]] = 1;
	self->new_w[self->nodes[0]] = 1;
	self->new_w[self->nodes[1]] = 4;
	self->pidfd = sys_pidfd_open(getpid());
	ASSERT_LE(0, self->pidfd);
}

FIXTURE_TEARDOWN(scope)
{
	sys_set_mempolicy(MPOL_DEFAULT, NULL, 0);
	if (self->pidfd >= 0)
		close(self->pidfd);
}

/* Weighted interleave over the first two nodes, own @w or global (NULL). */
static long set_wi(struct _test_data_scope *self, void *addr, size_t len,
		   const unsigned char *w)
{
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
	struct mpol_args args;

	wi_args(&args, mask, self->nodes, 2, w);
	if (!addr)
		return sys_set_mempolicy2(&args, sizeof(args), 0);
	return sys_mbind2(addr, len, &args, sizeof(args), 0);
}

static long reweight(struct _test_data_scope *self, unsigned int flags)
{
	return sys_process_mpol_reweight(self->pidfd, self->new_w, WI_MAXNODE,
					 flags);
}

/* The policy at @addr (or the task's) has exactly own weights @w. */
static void expect_own(struct __test_metadata *_metadata, void *addr,
		       const unsigned char *w)
{
	struct wi_policy r;

	ASSERT_EQ(0, wi_read_policy(&r, addr));
	EXPECT_EQ(MPOL_WEIGHTED_INTERLEAVE, r.args.mode);
	EXPECT_EQ(0, r.args.flags);
	EXPECT_EQ(0, memcmp(r.w, w, sizeof(r.w)));
}

static void expect_global(struct __test_metadata *_metadata, void *addr)
{
	struct wi_policy r;

	ASSERT_EQ(0, wi_read_policy(&r, addr));
	EXPECT_EQ(MPOL_WEIGHTED_INTERLEAVE, r.args.mode);
	EXPECT_EQ(MPOL_ARGS_GLOBAL_WEIGHTS, r.args.flags);
}

TEST_F(scope, task_policy_on_global_weights_changes_only_on_request)
{
	ASSERT_EQ(0, set_wi(self, NULL, 0, NULL));
	EXPECT_EQ(0, reweight(self, 0));
	expect_global(_metadata, NULL);

	EXPECT_EQ(0, reweight(self, MPOL_REWEIGHT_GLOBAL));
	expect_own(_metadata, NULL, self->new_w);

	/* It owns weights now: a plain reweight reaches it. */
	self->new_w[self->nodes[1]] = 7;
	EXPECT_EQ(0, reweight(self, 0));
	expect_own(_metadata, NULL, self->new_w);
}

TEST_F(scope, task_policy_with_own_weights_changes_without_flags)
{
	ASSERT_EQ(0, set_wi(self, NULL, 0, self->old_w));
	EXPECT_EQ(0, reweight(self, 0));
	expect_own(_metadata, NULL, self->new_w);
}

/*
 * The " il_weights=" field numa_maps shows for the mapping at @addr, "" if
 * the line has none.
 */
static void numa_maps_weights(void *addr, char *out, size_t len)
{
	char line[1024], want[32], *field;
	FILE *f = fopen("/proc/self/numa_maps", "r");

	out[0] = '\0';
	if (!f)
		return;
	snprintf(want, sizeof(want), "%08lx ", (unsigned long)addr);
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, want, strlen(want)))
			continue;
		field = strstr(line, " il_weights=");
		if (field) {
			field[strcspn(field, "\n")] = '\0';
			snprintf(out, len, "%s", field);
		}
		break;
	}
	fclose(f);
}

/*
 * Regression test: numa_maps read a task policy's own table and never the
 * table a reweight gave the process, so it kept showing the old weights
 * (or none) while get_mempolicy2() reported the new ones.
 */
TEST_F(scope, numa_maps_shows_the_task_policy_weights_after_a_reweight)
{
	char *map, got[256], want[256];

	map = mmap(NULL, NPAGES * self->page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, map);
	ASSERT_EQ(0, set_wi(self, NULL, 0, self->old_w));
	map[0] = 1;
	EXPECT_EQ(0, reweight(self, 0));
	expect_own(_metadata, NULL, self->new_w);
	snprintf(want, sizeof(want), " il_weights=%d:%d,%d:%d",
		 self->nodes[0], self->new_w[self->nodes[0]],
		 self->nodes[1], self->new_w[self->nodes[1]]);
	numa_maps_weights(map, got, sizeof(got));
	EXPECT_STREQ(want, got);

	/* A task policy on the global weights, taken over on request. */
	ASSERT_EQ(0, set_wi(self, NULL, 0, NULL));
	numa_maps_weights(map, got, sizeof(got));
	EXPECT_STREQ("", got);
	EXPECT_EQ(0, reweight(self, MPOL_REWEIGHT_GLOBAL));
	numa_maps_weights(map, got, sizeof(got));
	EXPECT_STREQ(want, got);
	munmap(map, NPAGES * self->page);
}

TEST_F(scope, vma_policy_on_global_weights_changes_only_on_request)
{
	size_t len = NPAGES * self->page;
	char *own, *global;

	own = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	global = mmap(NULL, len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, own);
	ASSERT_NE(MAP_FAILED, global);
	ASSERT_EQ(0, set_wi(self, own, len, self->old_w));
	ASSERT_EQ(0, set_wi(self, global, len, NULL));

	EXPECT_EQ(0, reweight(self, 0));
	expect_own(_metadata, own, self->new_w);
	expect_global(_metadata, global);

	EXPECT_EQ(0, reweight(self, MPOL_REWEIGHT_GLOBAL));
	expect_own(_metadata, global, self->new_w);
	munmap(own, len);
	munmap(global, len);
}

/* A memfd of NPAGES pages whose shared policy is own @old_w throughout. */
static int memfd_with_policy(struct __test_metadata *_metadata,
			     struct _test_data_scope *self)
{
	size_t len = NPAGES * self->page;
	char *p;
	int fd;

	fd = memfd_create("mpol2-scope", 0);
	if (fd < 0 || ftruncate(fd, len))
		return -1;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -1;
	EXPECT_EQ(0, set_wi(self, p, len, self->old_w));
	munmap(p, len);
	return fd;
}

/* Map @npages of @fd from page @first, as the open file @fd allows. */
static char *map_part(struct _test_data_scope *self, int fd, int prot,
		      size_t first, size_t npages)
{
	return mmap(NULL, npages * self->page, prot, MAP_SHARED, fd,
		    first * self->page);
}

TEST_F(scope, shared_policy_changes_only_on_request)
{
	int fd = memfd_with_policy(_metadata, self);
	char *p;

	ASSERT_LE(0, fd);
	p = map_part(self, fd, PROT_READ | PROT_WRITE, 0, NPAGES);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0, reweight(self, 0));
	expect_own(_metadata, p, self->old_w);

	EXPECT_EQ(0, reweight(self, MPOL_REWEIGHT_SHARED));
	expect_own(_metadata, p, self->new_w);
	munmap(p, NPAGES * self->page);
	close(fd);
}

#define RACE_PAGES 256
#define RACE_ROUNDS 100

/*
 * Regression test: a shared reweight looked a range's policy up, dropped
 * the tree's lock, allocated its copy and then replaced the range with
 * it, so an mbind() of the same range by another process in that window
 * was overwritten by a copy of the policy the mbind() had replaced.
 * This process reweights a memfd with MPOL_REWEIGHT_SHARED, each page a
 * range of its own (two weight tables, alternating), first page first;
 * a child watches it and, as soon as an even page has the new weights,
 * binds the next page to one node, the range the reweight has just
 * looked up or is about to.  In either order the bind must stand: the
 * reweight does not take MPOL_BIND.  Seconds on a slow machine, more
 * under KASAN.
 */
TEST_F_TIMEOUT(scope, shared_reweight_never_undoes_a_racing_mbind, 300)
{
	unsigned long bind_mask[WI_MAX_NODES / (8 * sizeof(long))] = { };
	unsigned char other_w[WI_MAXNODE];
	size_t len = RACE_PAGES * self->page;
	int fd, round, i, status, lost = 0, rounds_lost = 0;
	struct wi_policy r;
	int *flag;	/* [0]: the child is ready; [1]: go */
	pid_t child;
	char *p;

	memcpy(other_w, self->old_w, sizeof(other_w));
	other_w[self->nodes[1]] = 2;
	wi_nodemask_set(bind_mask, self->nodes[1]);
	fd = memfd_create("mpol2-scope-race", 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, len));
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	flag = mmap(NULL, self->page, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, flag);
	for (round = 0; round < RACE_ROUNDS; round++) {
		for (i = 0; i < RACE_PAGES; i++)
			ASSERT_EQ(0, set_wi(self, p + i * self->page, self->page,
					    i % 2 ? other_w : self->old_w));
		flag[0] = 0;
		flag[1] = 0;
		child = fork();
		ASSERT_LE(0, child);
		if (!child) {
			__atomic_store_n(&flag[0], 1, __ATOMIC_RELEASE);
			while (!__atomic_load_n(&flag[1], __ATOMIC_ACQUIRE))
				;
			for (i = 0; i + 1 < RACE_PAGES; i += 2) {
				/* Page i reweighted: the reweight goes on to i + 1. */
				do {
					if (wi_read_policy(&r, p + i * self->page))
						_exit(2);
				} while (memcmp(r.w, self->new_w, sizeof(r.w)));
				if (sys_mbind(p + (i + 1) * self->page, self->page,
					      MPOL_BIND, bind_mask,
					      WI_MAX_NODES + 1, 0))
					_exit(1);
			}
			_exit(0);
		}
		while (!__atomic_load_n(&flag[0], __ATOMIC_ACQUIRE))
			;
		__atomic_store_n(&flag[1], 1, __ATOMIC_RELEASE);
		EXPECT_EQ(0, reweight(self, MPOL_REWEIGHT_SHARED));
		ASSERT_EQ(child, waitpid(child, &status, 0));
		ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		for (i = 1, status = 0; i < RACE_PAGES; i += 2) {
			ASSERT_EQ(0, wi_read_policy(&r, p + i * self->page));
			if (r.args.mode != MPOL_BIND)
				status++;
		}
		lost += status;
		rounds_lost += !!status;
	}
	ksft_print_msg("%d rounds: %d binds undone, in %d rounds\n",
		       RACE_ROUNDS, lost, rounds_lost);
	EXPECT_EQ(0, lost);
	munmap(flag, self->page);
	munmap(p, len);
	close(fd);
}

/*
 * A shmem mapping whose policy its own process set (mbind2() on it, kept
 * mapped): the object's policy, on the second node only, cannot take
 * weights for the first node alone.  A plain reweight leaves it alone
 * and succeeds; with MPOL_REWEIGHT_SHARED the call is refused, and
 * changes nothing.
 */
TEST_F(scope, shmem_mapping_policy_never_fails_a_plain_reweight)
{
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
	unsigned char only_first[WI_MAXNODE] = { };
	size_t len = NPAGES * self->page;
	struct mpol_args args;
	char *p;
	int fd;

	fd = memfd_create("mpol2-scope-own", 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, len));
	p = map_part(self, fd, PROT_READ | PROT_WRITE, 0, NPAGES);
	ASSERT_NE(MAP_FAILED, p);
	wi_args(&args, mask, self->nodes + 1, 1, self->old_w);
	ASSERT_EQ(0, sys_mbind2(p, len, &args, sizeof(args), 0));
	only_first[self->nodes[0]] = 2;

	EXPECT_EQ(0, sys_process_mpol_reweight(self->pidfd, only_first,
					       WI_MAXNODE, 0));
	expect_own(_metadata, p, self->old_w);
	EXPECT_EQ(-1, sys_process_mpol_reweight(self->pidfd, only_first,
						WI_MAXNODE,
						MPOL_REWEIGHT_SHARED));
	EXPECT_EQ(EINVAL, errno);
	expect_own(_metadata, p, self->old_w);
	munmap(p, len);
	close(fd);
}

TEST_F(scope, shared_policy_only_over_the_part_mapped)
{
	int fd = memfd_with_policy(_metadata, self);
	char *head, *tail;

	ASSERT_LE(0, fd);
	head = map_part(self, fd, PROT_READ | PROT_WRITE, 0, NPAGES / 2);
	ASSERT_NE(MAP_FAILED, head);
	EXPECT_EQ(0, reweight(self, MPOL_REWEIGHT_SHARED));
	expect_own(_metadata, head, self->new_w);
	expect_own(_metadata, head + (NPAGES / 2 - 1) * self->page,
		   self->new_w);

	/* The pages the call did not see keep the policy they had. */
	tail = map_part(self, fd, PROT_READ | PROT_WRITE, NPAGES / 2,
			NPAGES / 2);
	ASSERT_NE(MAP_FAILED, tail);
	expect_own(_metadata, tail, self->old_w);
	expect_own(_metadata, tail + (NPAGES / 2 - 1) * self->page,
		   self->old_w);
	munmap(head, NPAGES / 2 * self->page);
	munmap(tail, NPAGES / 2 * self->page);
	close(fd);
}

TEST_F(scope, shared_policy_needs_write_access)
{
	int fd = memfd_with_policy(_metadata, self);
	char path[64], *p;
	int ro;

	ASSERT_LE(0, fd);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	ro = open(path, O_RDONLY);
	ASSERT_LE(0, ro);
	p = map_part(self, ro, PROT_READ, 0, NPAGES);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(0, reweight(self, MPOL_REWEIGHT_SHARED));
	expect_own(_metadata, p, self->old_w);
	munmap(p, NPAGES * self->page);
	close(ro);
	close(fd);
}

/*
 * Two processes in disjoint cpusets share a memfd.  The other one (high
 * nodes) set the memfd's policy over its own nodes; this one (low nodes)
 * is reweighted with low-node weights.  Without MPOL_REWEIGHT_SHARED the
 * memfd keeps the other's policy.  With it too: a shared policy with no
 * node in the target's cpuset is left alone (the call has no weights for
 * its nodes), and the rest of the call, this process's own policy, goes
 * through.  Either way the other's later faults stay on its nodes.
 */
TEST(two_cpusets_share_a_memfd)
{
	int nodes[WI_MAX_NODES], n, fd, pidfd, sync_pipe[2];
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
	unsigned char low_w[WI_MAXNODE] = { }, high_w[WI_MAXNODE] = { };
	unsigned char own_w[WI_MAXNODE] = { };
	size_t len = NPAGES * getpagesize();
	struct mpol_args args;
	char mems[32], c;
	struct wi_policy r;
	pid_t other;
	char *p;

	n = wi_memory_nodes(nodes, WI_MAX_NODES);
	if (n < 4)
		SKIP(return, "Not enough NUMA nodes available (need 4)");
	if (!wi_cpuset_supported())
		SKIP(return, "No cgroup2 cpuset controller at %s", WI_CGROUP_ROOT);
	low_w[nodes[0]] = 2;
	low_w[nodes[1]] = 1;
	high_w[nodes[2]] = 3;
	high_w[nodes[3]] = 1;
	own_w[nodes[0]] = 1;
	own_w[nodes[1]] = 1;

	fd = memfd_create("mpol2-two-cpusets", 0);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, len));
	ASSERT_EQ(0, pipe(sync_pipe));
	snprintf(mems, sizeof(mems), "%d,%d", nodes[2], nodes[3]);
	ASSERT_EQ(0, wi_cpuset_create(CG_HIGH, mems));
	snprintf(mems, sizeof(mems), "%d,%d", nodes[0], nodes[1]);
	ASSERT_EQ(0, wi_cpuset_create(CG_LOW, mems));

	other = fork();
	ASSERT_LE(0, other);
	if (!other) {
		if (wi_cpuset_join(CG_HIGH))
			_exit(1);
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (p == MAP_FAILED)
			_exit(2);
		wi_args(&args, mask, nodes + 2, 2, high_w);
		if (sys_mbind2(p, len, &args, sizeof(args), 0))
			_exit(3);
		c = 0;
		if (write(sync_pipe[1], &c, 1) != 1)
			_exit(4);
		pause();
		_exit(0);
	}
	ASSERT_EQ(1, read(sync_pipe[0], &c, 1));

	ASSERT_EQ(0, wi_cpuset_join(CG_LOW));
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	/* This process's own policy, which the reweight does change. */
	wi_args(&args, mask, nodes, 2, own_w);
	ASSERT_EQ(0, sys_set_mempolicy2(&args, sizeof(args), 0));
	pidfd = sys_pidfd_open(getpid());
	ASSERT_LE(0, pidfd);

	EXPECT_EQ(0, sys_process_mpol_reweight(pidfd, low_w, WI_MAXNODE, 0));
	ASSERT_EQ(0, wi_read_policy(&r, p));
	EXPECT_EQ(0, memcmp(r.w, high_w, sizeof(r.w)));
	ASSERT_EQ(0, wi_read_policy(&r, NULL));
	EXPECT_EQ(0, memcmp(r.w, low_w, sizeof(r.w)));

	EXPECT_EQ(0, sys_process_mpol_reweight(pidfd, own_w, WI_MAXNODE,
					       MPOL_REWEIGHT_SHARED));
	ASSERT_EQ(0, wi_read_policy(&r, p));
	EXPECT_EQ(0, memcmp(r.w, high_w, sizeof(r.w)));
	ASSERT_EQ(0, wi_read_policy(&r, NULL));
	EXPECT_EQ(0, memcmp(r.w, own_w, sizeof(r.w)));

	sys_set_mempolicy(MPOL_DEFAULT, NULL, 0);
	munmap(p, len);
	kill(other, SIGKILL);
	waitpid(other, NULL, 0);
	close(pidfd);
	close(fd);
	EXPECT_EQ(0, wi_cpuset_leave_and_remove(CG_LOW));
	EXPECT_EQ(0, rmdir(CG_HIGH));
}

int main(int argc, char **argv)
{
	wi_skip_without_mempolicy2();
	return test_harness_run(argc, argv);
}
