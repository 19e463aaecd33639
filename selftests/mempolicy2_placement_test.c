// SPDX-License-Identifier: GPL-2.0
/*
 * Weights owned by a policy place exactly their share of pages on every
 * allocation path: the task policy (set_mempolicy2), an anonymous VMA and a
 * shmem range (mbind2), transparent huge pages (counted in base pages),
 * and a forked child, which inherits its parent's weights.  A node of
 * weight 0 gets nothing.  (The bulk allocator's path is KUnit's.)
 */
#include <sys/wait.h>

#include "../kselftest_harness.h"
#include "numa_util.h"

#define ROUNDS 100
#define HPAGE_PAGES 512		/* 2 MiB THP in 4 KiB pages */

FIXTURE(own_weights) {
	int nodes[WI_MAX_NODES];
	int nr_nodes;
	unsigned char weights[WI_MAXNODE];	/* by node id */
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
	struct mpol_args args;
	long sum;
};

/* Per-node weights for a test, repeated over the nodes in order. */
FIXTURE_VARIANT(own_weights) {
	unsigned char pattern[4];
	int max_nodes;		/* use at most this many nodes */
};

/* 5,3,1,1 on every node: 500/300/100/100 of 1000 pages on four nodes. */
FIXTURE_VARIANT_ADD(own_weights, w5311) {
	.pattern = { 5, 3, 1, 1 },
	.max_nodes = WI_MAX_NODES,
};

/* 3,0,1 on nodes 0-2 (3,0 on two nodes): node 1 must get no page at all. */
FIXTURE_VARIANT_ADD(own_weights, w301) {
	.pattern = { 3, 0, 1 },
	.max_nodes = 3,
};

FIXTURE_SETUP(own_weights)
{
	int i;

	self->nr_nodes = wi_memory_nodes(self->nodes, WI_MAX_NODES);
	if (self->nr_nodes < 2)
		SKIP(return, "Not enough NUMA nodes available");
	if (self->nr_nodes > variant->max_nodes)
		self->nr_nodes = variant->max_nodes;
	memset(self->weights, 0, sizeof(self->weights));
	self->sum = 0;
	for (i = 0; i < self->nr_nodes; i++) {
		self->weights[self->nodes[i]] = variant->pattern[i % 4];
		self->sum += variant->pattern[i % 4];
	}
	wi_args(&self->args, self->mask, self->nodes, self->nr_nodes,
		self->weights);
}

FIXTURE_TEARDOWN(own_weights)
{
	sys_set_mempolicy(MPOL_DEFAULT, NULL, 0);
}

/* Assert that node n holds exactly rounds * weight[n] * unit pages. */
static void expect_shares(struct __test_metadata *_metadata,
			  struct _test_data_own_weights *self,
			  const long *counts, long rounds, long unit)
{
	char line[512];
	int i, off = 0;

	for (i = 0; i < self->nr_nodes; i++)
		off += snprintf(line + off, sizeof(line) - off, " node%d=%ld/%ld",
				self->nodes[i], counts[self->nodes[i]],
				rounds * self->weights[self->nodes[i]] * unit);
	TH_LOG("pages (measured/expected):%s", line);
	for (i = 0; i < self->nr_nodes; i++)
		EXPECT_EQ(rounds * self->weights[self->nodes[i]] * unit,
			  counts[self->nodes[i]]) TH_LOG("node %d", self->nodes[i]);
}

TEST_F(own_weights, task_policy_places_exact_share)
{
	size_t npages = ROUNDS * self->sum;
	char *buf = wi_map_prefaulted(npages);
	long counts[WI_MAX_NODES];

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));
	wi_touch_pages(buf, npages);
	ASSERT_EQ(0, sys_set_mempolicy(MPOL_DEFAULT, NULL, 0));
	ASSERT_EQ(0, wi_count_pages_per_node(buf, npages, counts));
	expect_shares(_metadata, self, counts, ROUNDS, 1);
	munmap(buf, npages * getpagesize());
}

TEST_F(own_weights, mbind2_anon_range_places_exact_share)
{
	size_t npages = ROUNDS * self->sum, len = npages * getpagesize();
	char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	long counts[WI_MAX_NODES];

	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0, madvise(buf, len, MADV_NOHUGEPAGE));
	ASSERT_EQ(0, sys_mbind2(buf, len, &self->args, sizeof(self->args), 0));
	wi_touch_pages(buf, npages);
	ASSERT_EQ(0, wi_count_pages_per_node(buf, npages, counts));
	expect_shares(_metadata, self, counts, ROUNDS, 1);
	munmap(buf, len);
}

TEST_F(own_weights, mbind2_shmem_range_places_exact_share)
{
	size_t npages = ROUNDS * self->sum, len = npages * getpagesize();
	char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	long counts[WI_MAX_NODES];

	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0, sys_mbind2(buf, len, &self->args, sizeof(self->args), 0));
	wi_touch_pages(buf, npages);
	ASSERT_EQ(0, wi_count_pages_per_node(buf, npages, counts));
	expect_shares(_metadata, self, counts, ROUNDS, 1);
	munmap(buf, len);
}

/* Each 2 MiB THP takes one interleave index, so shares count huge pages. */
TEST_F(own_weights, mbind2_thp_places_exact_share_in_base_pages)
{
	size_t hsz = HPAGE_PAGES * getpagesize(), nhuge = self->sum;
	size_t npages = nhuge * HPAGE_PAGES, len = nhuge * hsz;
	long counts[WI_MAX_NODES];
	char *raw, *buf;

	raw = mmap(NULL, len + hsz, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, raw);
	buf = (char *)(((unsigned long)raw + hsz - 1) & ~(hsz - 1));
	ASSERT_EQ(0, madvise(buf, len, MADV_HUGEPAGE));
	ASSERT_EQ(0, sys_mbind2(buf, len, &self->args, sizeof(self->args), 0));
	wi_touch_pages(buf, npages);
	ASSERT_EQ(0, wi_count_pages_per_node(buf, npages, counts));
	expect_shares(_metadata, self, counts, 1, HPAGE_PAGES);
	munmap(raw, len + hsz);
}

TEST_F(own_weights, forked_child_inherits_own_weights)
{
	size_t npages = ROUNDS * self->sum;
	long counts[WI_MAX_NODES];
	int pipefd[2], status;
	pid_t pid;

	ASSERT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		char *buf = wi_map_prefaulted(npages);
		long ret = -1;

		if (buf) {
			wi_touch_pages(buf, npages);
			ret = wi_count_pages_per_node(buf, npages, counts);
		}
		if (write(pipefd[1], &ret, sizeof(ret)) != sizeof(ret) ||
		    write(pipefd[1], counts, sizeof(counts)) != sizeof(counts))
			_exit(2);
		_exit(0);
	}
	close(pipefd[1]);
	{
		long ret = -1;

		ASSERT_EQ((ssize_t)sizeof(ret), read(pipefd[0], &ret, sizeof(ret)));
		ASSERT_EQ(0, ret);
		ASSERT_EQ((ssize_t)sizeof(counts), read(pipefd[0], counts, sizeof(counts)));
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	expect_shares(_metadata, self, counts, ROUNDS, 1);
}

int main(int argc, char **argv)
{
	wi_skip_without_mempolicy2();
	return test_harness_run(argc, argv);
}
