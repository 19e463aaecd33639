// SPDX-License-Identifier: GPL-2.0
/*
 * Weight arrays sized and filled the way real callers do it: the
 * mempolicy2 RFC's tests and libnuma size il_weights like their nodemask
 * (1024 bits here) and fill every byte with a default before writing the
 * weights of the nodes they use.  Bytes for nodes outside the nodemask,
 * node ids this kernel cannot have included, are ignored whatever their
 * value, so the same binary works on a kernel of any NODES_SHIFT:
 * placement and rebalance are exact, get_mempolicy2() reads back the
 * bytes of possible nodes as given and zeros past them, and only weights
 * that are all zero on the nodemask are refused.
 */
#include "../kselftest_harness.h"
#include "numa_util.h"

#define FILLED_MAXNODE 1024	/* a libnuma nodemask's size, in bits */
#define ROUNDS 100

FIXTURE(filled) {
	int nodes[WI_MAX_NODES];
	int nr_nodes;
	int nr_possible;		/* the kernel's nr_node_ids */
	long sum;
	unsigned char w[FILLED_MAXNODE];
	unsigned long mask[FILLED_MAXNODE / (8 * sizeof(long))];
	struct mpol_args args;
};

/* The default byte every entry starts with, before the real weights. */
FIXTURE_VARIANT(filled) {
	unsigned char fill;
};

FIXTURE_VARIANT_ADD(filled, fill_1) { .fill = 1 };	/* as the RFC's tests */
FIXTURE_VARIANT_ADD(filled, fill_255) { .fill = 255 };

static const unsigned char pattern[4] = { 5, 3, 1, 1 };

/* Write the weights of the nodemask's nodes over a filled array. */
static void fill_weights(struct _test_data_filled *self, unsigned char fill,
			 const unsigned char *pat)
{
	int i;

	memset(self->w, fill, sizeof(self->w));
	self->sum = 0;
	for (i = 0; i < self->nr_nodes; i++) {
		self->w[self->nodes[i]] = pat[i % 4];
		self->sum += pat[i % 4];
	}
}

FIXTURE_SETUP(filled)
{
	int possible[WI_MAX_NODES], n, i;

	self->nr_nodes = wi_memory_nodes(self->nodes, WI_MAX_NODES);
	if (self->nr_nodes < 2)
		SKIP(return, "Not enough NUMA nodes available");
	if (self->nr_nodes > 4)
		self->nr_nodes = 4;
	n = wi_read_node_list("/sys/devices/system/node/possible", possible,
			      WI_MAX_NODES);
	ASSERT_LT(0, n);
	self->nr_possible = possible[n - 1] + 1;
	fill_weights(self, variant->fill, pattern);
	memset(&self->args, 0, sizeof(self->args));
	memset(self->mask, 0, sizeof(self->mask));
	for (i = 0; i < self->nr_nodes; i++)
		wi_nodemask_set(self->mask, self->nodes[i]);
	self->args.mode = MPOL_WEIGHTED_INTERLEAVE;
	self->args.home_node = -1;
	self->args.pol_maxnodes = FILLED_MAXNODE;
	self->args.pol_nodes = (unsigned long)self->mask;
	self->args.il_weights = (unsigned long)self->w;
}

FIXTURE_TEARDOWN(filled)
{
	sys_set_mempolicy(MPOL_DEFAULT, NULL, 0);
}

/* Node n of the nodemask holds exactly ROUNDS * weight(n) of the pages. */
static void expect_shares(struct __test_metadata *_metadata,
			  struct _test_data_filled *self, char *buf, size_t npages)
{
	long counts[WI_MAX_NODES];
	int i;

	ASSERT_EQ(0, wi_count_pages_per_node(buf, npages, counts));
	for (i = 0; i < self->nr_nodes; i++) {
		int nid = self->nodes[i];

		TH_LOG("node %d: %ld pages, expected %ld", nid, counts[nid],
		       (long)ROUNDS * self->w[nid]);
		EXPECT_EQ((long)ROUNDS * self->w[nid], counts[nid]);
	}
}

TEST_F(filled, set_mempolicy2_places_exact_shares)
{
	size_t npages = ROUNDS * self->sum;
	char *buf = wi_map_prefaulted(npages);

	ASSERT_NE(NULL, buf);
	ASSERT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));
	wi_touch_pages(buf, npages);
	ASSERT_EQ(0, sys_set_mempolicy(MPOL_DEFAULT, NULL, 0));
	expect_shares(_metadata, self, buf, npages);
	munmap(buf, npages * getpagesize());
}

TEST_F(filled, mbind2_places_exact_shares)
{
	size_t npages = ROUNDS * self->sum, len = npages * getpagesize();
	char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0, madvise(buf, len, MADV_NOHUGEPAGE));
	ASSERT_EQ(0, sys_mbind2(buf, len, &self->args, sizeof(self->args), 0));
	wi_touch_pages(buf, npages);
	expect_shares(_metadata, self, buf, npages);
	munmap(buf, len);
}

/*
 * Possible nodes read back as given, in the nodemask or not; the bytes
 * past them are written as zeros, for the task and for a VMA.
 */
TEST_F(filled, get_mempolicy2_reads_back_possible_nodes_as_given)
{
	size_t len = 16 * getpagesize();
	char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	unsigned long got_mask[FILLED_MAXNODE / (8 * sizeof(long))];
	unsigned char got[FILLED_MAXNODE];
	struct mpol_args q;
	int pass, nid;

	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));
	ASSERT_EQ(0, sys_mbind2(buf, len, &self->args, sizeof(self->args), 0));
	for (pass = 0; pass < 2; pass++) {
		memset(&q, 0, sizeof(q));
		memset(got, 0xee, sizeof(got));
		memset(got_mask, 0, sizeof(got_mask));
		q.pol_maxnodes = FILLED_MAXNODE;
		q.pol_nodes = (unsigned long)got_mask;
		q.il_weights = (unsigned long)got;
		ASSERT_EQ(0, sys_get_mempolicy2(&q, sizeof(q),
						pass ? (unsigned long)buf : 0,
						 pass ? MPOL_F_ADDR : 0));
		EXPECT_EQ(MPOL_WEIGHTED_INTERLEAVE, q.mode);
		EXPECT_EQ(0, memcmp(got_mask, self->mask, sizeof(got_mask)));
		for (nid = 0; nid < FILLED_MAXNODE; nid++) {
			unsigned char want = nid < self->nr_possible ? self->w[nid] : 0;

			if (got[nid] != want)
				TH_LOG("%s: byte %d is %u, expected %u",
				       pass ? "vma" : "task", nid, got[nid], want);
			ASSERT_EQ(want, got[nid]);
		}
	}
	munmap(buf, len);
}

/*
 * A filled array rebalances a process's pages to exact largest-remainder
 * shares, moving exactly the minimum.
 */
TEST_F(filled, process_mpol_reweight_rebalances_exactly)
{
	static const unsigned char even[4] = { 1, 1, 1, 1 };
	size_t npages = ROUNDS * 10, len = npages * getpagesize();
	long cur[WI_MAX_NODES], now[WI_MAX_NODES];
	long c[4], t[4], moved_before, want_moved = 0;
	unsigned char target_w[4];
	int pidfd, i;
	char *buf;

	fill_weights(self, variant->fill, even);
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	ASSERT_EQ(0, madvise(buf, len, MADV_NOHUGEPAGE));
	ASSERT_EQ(0, sys_mbind2(buf, len, &self->args, sizeof(self->args), 0));
	wi_touch_pages(buf, npages);
	ASSERT_EQ(0, wi_count_pages_per_node(buf, npages, cur));

	fill_weights(self, variant->fill, pattern);
	for (i = 0; i < self->nr_nodes; i++) {
		c[i] = cur[self->nodes[i]];
		target_w[i] = self->w[self->nodes[i]];
	}
	wi_lr_targets(npages, c, target_w, self->nr_nodes, t);
	for (i = 0; i < self->nr_nodes; i++)
		want_moved += c[i] > t[i] ? c[i] - t[i] : 0;

	pidfd = sys_pidfd_open(getpid());
	ASSERT_LE(0, pidfd);
	moved_before = wi_vmstat("mpol_rebalance_moved");
	ASSERT_EQ(0, sys_process_mpol_reweight(pidfd, self->w, FILLED_MAXNODE,
					       MPOL_REWEIGHT_REBALANCE));
	EXPECT_EQ(want_moved, wi_vmstat("mpol_rebalance_moved") - moved_before);
	ASSERT_EQ(0, wi_count_pages_per_node(buf, npages, now));
	for (i = 0; i < self->nr_nodes; i++) {
		TH_LOG("node %d: %ld -> %ld pages, share %ld", self->nodes[i],
		       c[i], now[self->nodes[i]], t[i]);
		EXPECT_EQ(t[i], now[self->nodes[i]]);
	}
	close(pidfd);
	munmap(buf, len);
}

/* Non-zero bytes outside the nodemask do not make up for a zero nodemask. */
TEST_F(filled, weights_zero_on_the_nodemask_are_einval)
{
	static const unsigned char zero[4];
	size_t len = 16 * getpagesize();
	char *buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int pidfd;

	ASSERT_NE(MAP_FAILED, buf);
	/* A policy to reweight, with good weights. */
	ASSERT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));
	fill_weights(self, variant->fill, zero);
	errno = 0;
	EXPECT_EQ(-1, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(-1, sys_mbind2(buf, len, &self->args, sizeof(self->args), 0));
	EXPECT_EQ(EINVAL, errno);
	pidfd = sys_pidfd_open(getpid());
	ASSERT_LE(0, pidfd);
	errno = 0;
	EXPECT_EQ(-1, sys_process_mpol_reweight(pidfd, self->w, FILLED_MAXNODE, 0));
	EXPECT_EQ(EINVAL, errno);
	close(pidfd);
	munmap(buf, len);
}

/*
 * The largest array get_nodes() takes, filled, is accepted by all three
 * calls alike: pol_maxnodes (and reweight's maxnode) PAGE_SIZE * 8 + 1.
 */
TEST_F(filled, largest_filled_array_is_accepted)
{
	size_t max = (size_t)getpagesize() * 8;
	unsigned char *big = malloc(max + 1);
	/* The nodemask is read up to pol_maxnodes too. */
	unsigned long *big_mask = calloc(1, max / 8 + sizeof(long));
	int pidfd, i;

	ASSERT_NE(NULL, big);
	ASSERT_NE(NULL, big_mask);
	memset(big, variant->fill, max + 1);
	for (i = 0; i < self->nr_nodes; i++)
		big[self->nodes[i]] = pattern[i % 4];
	memcpy(big_mask, self->mask, sizeof(self->mask));
	self->args.il_weights = (unsigned long)big;
	self->args.pol_nodes = (unsigned long)big_mask;
	self->args.pol_maxnodes = max + 1;
	EXPECT_EQ(0, sys_set_mempolicy2(&self->args, sizeof(self->args), 0));
	/* Read back into the same arrays: the weights of real nodes as set. */
	memset(big, 0xaa, max + 1);
	EXPECT_EQ(0, sys_get_mempolicy2(&self->args, sizeof(self->args), 0, 0));
	for (i = 0; i < self->nr_nodes; i++)
		EXPECT_EQ(pattern[i % 4], big[self->nodes[i]]);
	pidfd = sys_pidfd_open(getpid());
	ASSERT_LE(0, pidfd);
	EXPECT_EQ(0, sys_process_mpol_reweight(pidfd, big, max + 1, 0));
	close(pidfd);
	free(big_mask);
	free(big);
}

int main(int argc, char **argv)
{
	wi_skip_without_mempolicy2();
	return test_harness_run(argc, argv);
}
