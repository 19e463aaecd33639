// SPDX-License-Identifier: GPL-2.0
/*
 * Rebalance does not cover KVM guest_memfd: process_mpol_reweight() leaves
 * a guest_memfd's shared policy as it was, and a rebalance (from
 * process_mpol_reweight() and from mbind2()) neither counts nor moves its
 * pages, since guest_memfd memory cannot migrate.  Its pages stay on their
 * nodes exactly, the mpol_rebalance_* counters and the return values do
 * not see them (mbind2() with MPOL_MF_STRICT does not fail on them),
 * while an anonymous VMA rebalanced by the same call moves exactly its
 * minimum.
 *
 * Needs /dev/kvm, a guest_memfd that can be mmap()ed
 * (GUEST_MEMFD_FLAG_MMAP | GUEST_MEMFD_FLAG_INIT_SHARED on a default VM)
 * and four memory nodes; SKIPs otherwise, with the reason.
 */
#define _GNU_SOURCE
#include <sys/ioctl.h>
#include <linux/kvm.h>

#include "../kselftest_harness.h"
#include "numa_util.h"

/* Fixed KVM ABI, missing from the uapi headers of older kernels. */
#ifndef KVM_CAP_GUEST_MEMFD_FLAGS
#define KVM_CAP_GUEST_MEMFD_FLAGS 244
#endif
#ifndef GUEST_MEMFD_FLAG_MMAP
#define GUEST_MEMFD_FLAG_MMAP 0x1ULL
#endif
#ifndef GUEST_MEMFD_FLAG_INIT_SHARED
#define GUEST_MEMFD_FLAG_INIT_SHARED 0x2ULL
#endif
#ifndef KVM_X86_DEFAULT_VM
#define KVM_X86_DEFAULT_VM 0
#endif

#define NPAGES 400
#define NODES 4
#define GMEM_FLAGS (GUEST_MEMFD_FLAG_MMAP | GUEST_MEMFD_FLAG_INIT_SHARED)

/*
 * One region of 2 * NPAGES pages: the guest_memfd mapped shared at
 * @gmem, then private anonymous memory at @anon, right after it, so one
 * mbind2() covers both VMAs.
 */
FIXTURE(gmem) {
	int nodes[WI_MAX_NODES];
	int kvm_fd, vm_fd, gmem_fd, pidfd;
	char *region, *gmem, *anon;
	size_t len;
	long gmem_counts[WI_MAX_NODES];
	struct wi_rebalance_stat before, after;
};

FIXTURE_SETUP(gmem)
{
	struct kvm_create_guest_memfd args = { 0 };
	long supported;

	self->kvm_fd = -1;
	self->vm_fd = -1;
	self->gmem_fd = -1;
	self->pidfd = -1;
	self->region = MAP_FAILED;
	self->len = (size_t)NPAGES * getpagesize();
	if (wi_memory_nodes(self->nodes, WI_MAX_NODES) < NODES)
		SKIP(return, "Not enough NUMA nodes available (needs 4)");
	self->kvm_fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (self->kvm_fd < 0)
		SKIP(return, "No /dev/kvm: %s (needs CONFIG_KVM and its vendor module)",
		     strerror(errno));
	self->vm_fd = ioctl(self->kvm_fd, KVM_CREATE_VM, KVM_X86_DEFAULT_VM);
	ASSERT_LE(0, self->vm_fd) TH_LOG("KVM_CREATE_VM: %s", strerror(errno));
	supported = ioctl(self->vm_fd, KVM_CHECK_EXTENSION, KVM_CAP_GUEST_MEMFD_FLAGS);
	if (supported < 0 || (supported & GMEM_FLAGS) != GMEM_FLAGS)
		SKIP(return, "guest_memfd cannot be mmap()ed here (%s %ld, %s)",
		     "KVM_CAP_GUEST_MEMFD_FLAGS", supported,
		     "needs GUEST_MEMFD_FLAG_MMAP | GUEST_MEMFD_FLAG_INIT_SHARED");
	args.size = self->len;
	args.flags = GMEM_FLAGS;
	self->gmem_fd = ioctl(self->vm_fd, KVM_CREATE_GUEST_MEMFD, &args);
	ASSERT_LE(0, self->gmem_fd) TH_LOG("KVM_CREATE_GUEST_MEMFD: %s", strerror(errno));

	self->region = mmap(NULL, 2 * self->len, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ASSERT_NE(MAP_FAILED, self->region);
	self->gmem = mmap(self->region, self->len, PROT_READ | PROT_WRITE,
			  MAP_SHARED | MAP_FIXED, self->gmem_fd, 0);
	ASSERT_EQ(self->region, self->gmem) TH_LOG("mmap guest_memfd: %s", strerror(errno));
	self->anon = mmap(self->region + self->len, self->len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ASSERT_EQ(self->region + self->len, self->anon);
	/* Base pages only, so every count below is exact. */
	ASSERT_EQ(0, madvise(self->anon, self->len, MADV_NOHUGEPAGE));

	self->pidfd = sys_pidfd_open(getpid());
	ASSERT_LE(0, self->pidfd);
}

FIXTURE_TEARDOWN(gmem)
{
	if (self->region != MAP_FAILED)
		munmap(self->region, 2 * self->len);
	if (self->pidfd >= 0)
		close(self->pidfd);
	if (self->gmem_fd >= 0)
		close(self->gmem_fd);
	if (self->vm_fd >= 0)
		close(self->vm_fd);
	if (self->kvm_fd >= 0)
		close(self->kvm_fd);
}

/* The weights @a..@d of the first four memory nodes, indexed by node id. */
static void node_weights(struct _test_data_gmem *self, unsigned char *w,
			 int a, int b, int c, int d)
{
	memset(w, 0, WI_MAXNODE);
	w[self->nodes[0]] = a;
	w[self->nodes[1]] = b;
	w[self->nodes[2]] = c;
	w[self->nodes[3]] = d;
}

/* mbind2() [@p, @p + @len) to weighted interleave @a..@d on the four nodes. */
static long bind(struct _test_data_gmem *self, void *p, size_t len,
		 int a, int b, int c, int d, unsigned int flags)
{
	const unsigned char w[NODES] = { a, b, c, d };

	return wi_mbind2_nodes(p, len, self->nodes, NODES, w, flags);
}

/*
 * Bind the whole region to 1,1,1,1 and fault both halves: the anonymous
 * half lands exactly 100 pages a node, the guest_memfd half wherever its
 * allocator puts it, recorded in gmem_counts.
 */
static void fault_region(struct __test_metadata *_metadata,
			 struct _test_data_gmem *self)
{
	long counts[WI_MAX_NODES], total = 0;
	int i;

	ASSERT_EQ(0, bind(self, self->region, 2 * self->len, 1, 1, 1, 1, 0));
	wi_touch_pages(self->gmem, NPAGES);
	wi_touch_pages(self->anon, NPAGES);

	ASSERT_EQ(0, wi_count_pages_per_node(self->anon, NPAGES, counts));
	for (i = 0; i < NODES; i++)
		ASSERT_EQ(NPAGES / NODES, counts[self->nodes[i]]);
	ASSERT_EQ(0, wi_count_pages_per_node(self->gmem, NPAGES, self->gmem_counts));
	for (i = 0; i < WI_MAX_NODES; i++)
		total += self->gmem_counts[i];
	ASSERT_EQ(NPAGES, total);
	TH_LOG("guest_memfd pages on nodes %d-%d: %ld/%ld/%ld/%ld", self->nodes[0],
	       self->nodes[3], self->gmem_counts[self->nodes[0]],
	       self->gmem_counts[self->nodes[1]], self->gmem_counts[self->nodes[2]],
	       self->gmem_counts[self->nodes[3]]);
}

/* The guest_memfd's pages are on exactly the nodes fault_region() found. */
static void expect_gmem_unmoved(struct __test_metadata *_metadata,
				struct _test_data_gmem *self)
{
	long counts[WI_MAX_NODES];
	int i;

	ASSERT_EQ(0, wi_count_pages_per_node(self->gmem, NPAGES, counts));
	for (i = 0; i < WI_MAX_NODES; i++)
		EXPECT_EQ(self->gmem_counts[i], counts[i]) TH_LOG("node %d", i);
}

static void expect_anon(struct __test_metadata *_metadata,
			struct _test_data_gmem *self, long a, long b, long c, long d)
{
	long counts[WI_MAX_NODES];

	ASSERT_EQ(0, wi_count_pages_per_node(self->anon, NPAGES, counts));
	EXPECT_EQ(a, counts[self->nodes[0]]);
	EXPECT_EQ(b, counts[self->nodes[1]]);
	EXPECT_EQ(c, counts[self->nodes[2]]);
	EXPECT_EQ(d, counts[self->nodes[3]]);
}

/* The policy get_mempolicy2() reads at @p is weighted interleave @a..@d. */
static void expect_policy(struct __test_metadata *_metadata,
			  struct _test_data_gmem *self, void *p,
			  int a, int b, int c, int d)
{
	unsigned char w[WI_MAXNODE];
	struct wi_policy pol;
	int i;

	node_weights(self, w, a, b, c, d);
	ASSERT_EQ(0, wi_read_policy(&pol, p));
	EXPECT_EQ(MPOL_WEIGHTED_INTERLEAVE, pol.args.mode);
	for (i = 0; i < NODES; i++)
		EXPECT_EQ(w[self->nodes[i]], pol.w[self->nodes[i]])
			TH_LOG("node %d", self->nodes[i]);
}

/*
 * process_mpol_reweight() to 4,2,1,1 with MPOL_REWEIGHT_REBALANCE: the anonymous
 * VMA goes from 100 a node to 200/100/50/50 (100 pages moved, the
 * minimum).  The guest_memfd, rebound to 1,2,3,4 without moving (so 80 of
 * its pages sit off their shares, which a rebalance that covered it would
 * try to move, fail, and return), keeps that shared policy and every page
 * where it was, and only the anonymous pages are counted.
 */
TEST_F(gmem, reweight_rebalance_leaves_guest_memfd_policy_and_pages)
{
	struct wi_rebalance_stat d;
	unsigned char w[WI_MAXNODE];

	fault_region(_metadata, self);
	ASSERT_EQ(0, bind(self, self->gmem, self->len, 1, 2, 3, 4, 0));
	node_weights(self, w, 4, 2, 1, 1);
	wi_rebalance_stat_read(&self->before);
	EXPECT_EQ(0, sys_process_mpol_reweight(self->pidfd, w, WI_MAXNODE,
					       MPOL_REWEIGHT_REBALANCE));
	wi_rebalance_stat_read(&self->after);

	expect_anon(_metadata, self, 200, 100, 50, 50);
	expect_gmem_unmoved(_metadata, self);
	d = wi_rebalance_delta(&self->before, &self->after);
	EXPECT_EQ(NPAGES, d.scanned);
	EXPECT_EQ(100, d.moved);
	EXPECT_EQ(0, d.failed);
	expect_policy(_metadata, self, self->anon, 4, 2, 1, 1);
	expect_policy(_metadata, self, self->gmem, 1, 2, 3, 4);
}

/*
 * mbind2() to 1,2,3,4 with WI_REBALANCE | MPOL_MF_STRICT over both
 * VMAs: the new policy reaches the guest_memfd (as mbind(2) sets it), but
 * its pages neither move nor count as not moved, so the call returns 0
 * rather than EIO; the anonymous VMA goes from 100 a node to 40/80/120/160
 * (80 pages moved, the minimum).
 */
TEST_F(gmem, mbind2_rebalance_strict_skips_guest_memfd_pages)
{
	struct wi_rebalance_stat d;

	fault_region(_metadata, self);
	wi_rebalance_stat_read(&self->before);
	EXPECT_EQ(0, bind(self, self->region, 2 * self->len, 1, 2, 3, 4,
			  WI_REBALANCE | MPOL_MF_STRICT));
	wi_rebalance_stat_read(&self->after);

	expect_anon(_metadata, self, 40, 80, 120, 160);
	expect_gmem_unmoved(_metadata, self);
	d = wi_rebalance_delta(&self->before, &self->after);
	EXPECT_EQ(NPAGES, d.scanned);
	EXPECT_EQ(80, d.moved);
	EXPECT_EQ(0, d.failed);
	expect_policy(_metadata, self, self->anon, 1, 2, 3, 4);
	expect_policy(_metadata, self, self->gmem, 1, 2, 3, 4);
}

/* mbind2()'s rebalance of the guest_memfd alone: nothing counted. */
TEST_F(gmem, mbind2_rebalance_of_guest_memfd_alone_counts_nothing)
{
	struct wi_rebalance_stat d;

	fault_region(_metadata, self);
	wi_rebalance_stat_read(&self->before);
	EXPECT_EQ(0, bind(self, self->gmem, self->len, 0, 0, 0, 1,
			  WI_REBALANCE | MPOL_MF_STRICT));
	wi_rebalance_stat_read(&self->after);

	expect_gmem_unmoved(_metadata, self);
	expect_anon(_metadata, self, 100, 100, 100, 100);
	d = wi_rebalance_delta(&self->before, &self->after);
	EXPECT_EQ(0, d.scanned);
	EXPECT_EQ(0, d.moved);
	EXPECT_EQ(0, d.failed);
	expect_policy(_metadata, self, self->gmem, 0, 0, 0, 1);
}

int main(int argc, char **argv)
{
	wi_skip_without_mempolicy2();
	return test_harness_run(argc, argv);
}
