// SPDX-License-Identifier: GPL-2.0
/*
 * Every refusal of process_mpol_reweight() and the errno it gives:
 * bad flags and weights (EINVAL, EFAULT), bad pidfds (EBADF), exited
 * targets (ESRCH), kernel threads and nodes outside the target's cpuset
 * (EINVAL), and the migrate_pages(2) permission rules (EPERM).
 */
#define _GNU_SOURCE
#include <sys/prctl.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include "kselftest_harness.h"
#include "cpuset_util.h"
#include "numa_util.h"

#define OTHER_UID 1000

/* Weights 1 for every memory node, BWAP_MAXNODE bytes. */
static void all_ones(unsigned char *w)
{
	int nodes[BWAP_MAX_NODES], n, i;

	memset(w, 0, BWAP_MAXNODE);
	n = bwap_memory_nodes(nodes, BWAP_MAX_NODES);
	for (i = 0; i < n; i++)
		w[nodes[i]] = 1;
}

/* The errno of a reweight of @pidfd with weights @w, or 0. */
static int reweight_errno_w(int pidfd, const unsigned char *w, unsigned int flags)
{
	return bwap_reweight(pidfd, w, BWAP_MAXNODE, flags) < 0 ? errno : 0;
}

/* The same with all-ones weights. */
static int reweight_errno(int pidfd, unsigned int flags)
{
	unsigned char w[BWAP_MAXNODE];

	all_ones(w);
	return reweight_errno_w(pidfd, w, flags);
}

/* Drop @cap from the effective set of the calling process. */
static int drop_cap(int cap)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[cap / 32].effective &= ~(1U << (cap % 32));
	return syscall(SYS_capset, &h, d);
}

static int become(uid_t uid)
{
	return setresgid(uid, uid, uid) || setresuid(uid, uid, uid) ? -1 : 0;
}

/*
 * A target process: becomes @uid (0 = stays root), sets its dumpable flag,
 * reports ready on @ready and waits for @go to close.
 */
static pid_t start_target(uid_t uid, int dumpable, int *go_w)
{
	int ready[2], go[2];
	char c = 0;
	pid_t pid;

	if (pipe(ready) || pipe(go))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		if (uid && become(uid))
			_exit(1);
		if (prctl(PR_SET_DUMPABLE, dumpable))
			_exit(2);
		if (write(ready[1], &c, 1) != 1)
			_exit(3);
		read(go[0], &c, 1);
		_exit(0);
	}
	close(go[0]);
	close(ready[1]);
	if (pid < 0 || read(ready[0], &c, 1) != 1)
		return -1;
	close(ready[0]);
	*go_w = go[1];
	return pid;
}

static void stop_target(pid_t pid, int go_w)
{
	close(go_w);
	waitpid(pid, NULL, 0);
}

/*
 * Run a reweight of @pidfd in a child that first becomes @uid (0 = root)
 * and drops CAP_SYS_NICE if @no_nice.  Returns the errno it saw, or 0.
 */
static int reweight_as(int pidfd, uid_t uid, int no_nice, unsigned int flags)
{
	unsigned char w[BWAP_MAXNODE];
	int status;
	pid_t pid;

	/* Read the node list as root: uid 1000 cannot see the guest's /. */
	all_ones(w);
	pid = fork();
	if (pid == 0) {
		if (uid && become(uid))
			_exit(100);
		if (no_nice && drop_cap(CAP_SYS_NICE))
			_exit(101);
		_exit(reweight_errno_w(pidfd, w, flags));
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST(bad_flags_einval)
{
	int pidfd = bwap_pidfd_open(getpid());

	ASSERT_LE(0, pidfd);
	EXPECT_EQ(EINVAL, reweight_errno(pidfd, 1U << 9));
	EXPECT_EQ(EINVAL, reweight_errno(pidfd, MPOL_MF_MOVE));
	EXPECT_EQ(EINVAL, reweight_errno(pidfd, MPOL_MF_STRICT));
	/* MOVE_ALL only means something with REBALANCE. */
	EXPECT_EQ(EINVAL, reweight_errno(pidfd, MPOL_MF_MOVE_ALL));
	EXPECT_EQ(0, reweight_errno(pidfd, 0));
	EXPECT_EQ(0, reweight_errno(pidfd, MPOL_MF_REBALANCE));
	close(pidfd);
}

TEST(bad_weights)
{
	size_t psz = getpagesize();
	unsigned char w[BWAP_MAXNODE], *big, *edge;
	int pidfd = bwap_pidfd_open(getpid());

	ASSERT_LE(0, pidfd);
	all_ones(w);
	EXPECT_EQ(-1, bwap_reweight(pidfd, w, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	/* A node id this kernel cannot have. */
	w[BWAP_MAX_NODES - 1] = 1;
	EXPECT_EQ(-1, bwap_reweight(pidfd, w, BWAP_MAXNODE, 0));
	EXPECT_EQ(EINVAL, errno);
	memset(w, 0, sizeof(w));
	EXPECT_EQ(-1, bwap_reweight(pidfd, w, BWAP_MAXNODE, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, bwap_reweight(pidfd, NULL, BWAP_MAXNODE, 0));
	EXPECT_EQ(EFAULT, errno);

	/* maxnode up to PAGE_SIZE * 8 is read; beyond is refused. */
	big = calloc(1, psz * 8 + 1);
	ASSERT_NE(NULL, big);
	all_ones(big);
	EXPECT_EQ(0, bwap_reweight(pidfd, big, psz * 8, 0));
	EXPECT_EQ(-1, bwap_reweight(pidfd, big, psz * 8 + 1, 0));
	EXPECT_EQ(EINVAL, errno);
	free(big);

	/* The zero tail runs into an unmapped page. */
	edge = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, edge);
	ASSERT_EQ(0, munmap(edge + psz, psz));
	all_ones(edge);
	EXPECT_EQ(0, bwap_reweight(pidfd, edge, psz, 0));
	EXPECT_EQ(-1, bwap_reweight(pidfd, edge, psz + 1, 0));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(-1, bwap_reweight(pidfd, edge + psz, BWAP_MAXNODE, 0));
	EXPECT_EQ(EFAULT, errno);
	munmap(edge, psz);
	close(pidfd);
}

TEST(bad_pidfd_ebadf)
{
	int fd = open("/dev/null", O_RDONLY);

	ASSERT_LE(0, fd);
	EXPECT_EQ(EBADF, reweight_errno(-1, 0));
	EXPECT_EQ(EBADF, reweight_errno(fd, 0));
	close(fd);
}

TEST(exited_target_esrch)
{
	siginfo_t si;
	int pidfd;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(0);
	pidfd = bwap_pidfd_open(pid);
	ASSERT_LE(0, pidfd);
	/* A zombie: exited, not yet reaped. */
	ASSERT_EQ(0, waitid(P_PID, pid, &si, WEXITED | WNOWAIT));
	EXPECT_EQ(ESRCH, reweight_errno(pidfd, 0));
	/* Reaped. */
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));
	EXPECT_EQ(ESRCH, reweight_errno(pidfd, MPOL_MF_REBALANCE));
	close(pidfd);
}

TEST(kernel_thread_einval)
{
	int pidfd = bwap_pidfd_open(2);	/* kthreadd */

	ASSERT_LE(0, pidfd);
	EXPECT_EQ(EINVAL, reweight_errno(pidfd, 0));
	close(pidfd);
}

TEST(node_outside_target_cpuset_einval)
{
	const char *cg = BWAP_CGROUP_ROOT "/bwap-reweight";
	unsigned char w[BWAP_MAXNODE] = { };
	int nodes[BWAP_MAX_NODES], ready[2], go[2], pidfd, status;
	char mems[32], c = 0;
	pid_t pid;

	if (bwap_memory_nodes(nodes, BWAP_MAX_NODES) < 3)
		SKIP(return, "Not enough NUMA nodes available");
	snprintf(mems, sizeof(mems), "%d-%d", nodes[0], nodes[1]);
	ASSERT_EQ(0, bwap_cpuset_create(cg, mems));
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (bwap_cpuset_join(cg) || write(ready[1], &c, 1) != 1)
			_exit(1);
		read(go[0], &c, 1);
		_exit(bwap_cpuset_join(BWAP_CGROUP_ROOT) ? 2 : 0);
	}
	ASSERT_EQ(1, read(ready[0], &c, 1));
	pidfd = bwap_pidfd_open(pid);
	ASSERT_LE(0, pidfd);
	w[nodes[0]] = 1;
	w[nodes[2]] = 1;
	EXPECT_EQ(-1, bwap_reweight(pidfd, w, BWAP_MAXNODE, 0));
	EXPECT_EQ(EINVAL, errno);
	w[nodes[2]] = 0;
	EXPECT_EQ(0, bwap_reweight(pidfd, w, BWAP_MAXNODE, 0));
	ASSERT_EQ(1, write(go[1], &c, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(pidfd);
	EXPECT_EQ(0, rmdir(cg));
}

/* A caller without ptrace access to the target: uid 1000 -> root. */
TEST(no_ptrace_access_eperm)
{
	int pidfd = bwap_pidfd_open(getpid());

	ASSERT_LE(0, pidfd);
	EXPECT_EQ(EPERM, reweight_as(pidfd, OTHER_UID, 0, 0));
	close(pidfd);
}

/* Same uid, but the target is not dumpable: no ptrace access. */
TEST(non_dumpable_target_eperm)
{
	int go, pidfd;
	pid_t pid;

	pid = start_target(OTHER_UID, 0, &go);
	ASSERT_LT(0, pid);
	pidfd = bwap_pidfd_open(pid);
	ASSERT_LE(0, pidfd);
	EXPECT_EQ(EPERM, reweight_as(pidfd, OTHER_UID, 0, 0));
	stop_target(pid, go);
	close(pidfd);

	/* The same with a dumpable target is allowed. */
	pid = start_target(OTHER_UID, 1, &go);
	ASSERT_LT(0, pid);
	pidfd = bwap_pidfd_open(pid);
	ASSERT_LE(0, pidfd);
	EXPECT_EQ(0, reweight_as(pidfd, OTHER_UID, 0, 0));
	stop_target(pid, go);
	close(pidfd);
}

/* Root may ptrace a uid-1000 target, but other credentials need CAP_SYS_NICE. */
TEST(other_credentials_need_cap_sys_nice)
{
	int go, pidfd;
	pid_t pid;

	pid = start_target(OTHER_UID, 1, &go);
	ASSERT_LT(0, pid);
	pidfd = bwap_pidfd_open(pid);
	ASSERT_LE(0, pidfd);
	EXPECT_EQ(EPERM, reweight_as(pidfd, 0, 1, 0));
	EXPECT_EQ(0, reweight_as(pidfd, 0, 0, 0));
	stop_target(pid, go);
	close(pidfd);
}

/* MPOL_MF_MOVE_ALL needs CAP_SYS_NICE even on oneself. */
TEST(move_all_needs_cap_sys_nice)
{
	int pidfd = bwap_pidfd_open(getpid());

	ASSERT_LE(0, pidfd);
	EXPECT_EQ(EPERM, reweight_as(pidfd, 0, 1,
				     MPOL_MF_REBALANCE | MPOL_MF_MOVE_ALL));
	EXPECT_EQ(0, reweight_as(pidfd, 0, 1, MPOL_MF_REBALANCE));
	EXPECT_EQ(0, reweight_as(pidfd, 0, 0,
				 MPOL_MF_REBALANCE | MPOL_MF_MOVE_ALL));
	close(pidfd);
}

TEST_HARNESS_MAIN
