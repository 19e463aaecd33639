// SPDX-License-Identifier: GPL-2.0
/*
 * Every refusal of process_mpol_reweight() and the errno it gives:
 * bad flags and weights (EINVAL, EFAULT), bad pidfds (EBADF), exited
 * targets (ESRCH), kernel threads, weights only on nodes outside the
 * target's cpuset, policies with relative nodes and task policies of
 * processes sharing the target's mm that cannot take them (EINVAL), and the
 * permission rules (EPERM):
 * ptrace-attach access to the target, taken with its mm, and CAP_SYS_NICE
 * for any process but the caller's own.
 *
 * Permission table (caller -> target: result):
 *   uid 1000, no caps      -> itself                         : 0
 *   uid 1000, no caps      -> uid 1000, dumpable             : EPERM
 *   uid 1000, CAP_SYS_NICE -> uid 1000, dumpable             : 0
 *   uid 1000, CAP_SYS_NICE -> uid 1000, not dumpable         : EPERM
 *   uid 1000, CAP_SYS_NICE -> root                           : EPERM
 *   uid 1000, CAP_SYS_NICE -> set-user-ID root program it ran : EPERM
 *   root                   -> set-user-ID root program       : 0
 *   root, no CAP_SYS_NICE  -> uid 1000                       : EPERM
 *   root                   -> uid 1000                       : 0
 *   root, no CAP_SYS_NICE  -> itself, MPOL_REWEIGHT_MOVE_ALL : EPERM
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include "../kselftest_harness.h"
#include "cpuset_util.h"
#include "numa_util.h"

#define OTHER_UID 1000

/* Weights 1 for every memory node, WI_MAXNODE bytes. */
static void all_ones(unsigned char *w)
{
	int nodes[WI_MAX_NODES], n, i;

	memset(w, 0, WI_MAXNODE);
	n = wi_memory_nodes(nodes, WI_MAX_NODES);
	for (i = 0; i < n; i++)
		w[nodes[i]] = 1;
}

/* The errno of a reweight of @pidfd with weights @w, or 0. */
static int reweight_errno_w(int pidfd, const unsigned char *w, unsigned int flags)
{
	return sys_process_mpol_reweight(pidfd, w, WI_MAXNODE, flags) < 0 ? errno : 0;
}

/* The same with all-ones weights. */
static int reweight_errno(int pidfd, unsigned int flags)
{
	unsigned char w[WI_MAXNODE];

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

/* Become @uid keeping CAP_SYS_NICE, and only it, permitted and effective. */
static int become_with_nice(uid_t uid)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2] = { };

	if (prctl(PR_SET_KEEPCAPS, 1) || become(uid))
		return -1;
	d[CAP_SYS_NICE / 32].permitted = 1U << (CAP_SYS_NICE % 32);
	d[CAP_SYS_NICE / 32].effective = 1U << (CAP_SYS_NICE % 32);
	return syscall(SYS_capset, &h, d);
}

/* How the caller of reweight_as() runs. */
enum caller {
	ROOT,			/* uid 0, every capability */
	ROOT_NO_NICE,		/* uid 0 without CAP_SYS_NICE */
	USER,			/* OTHER_UID, no capability */
	USER_NICE,		/* OTHER_UID with CAP_SYS_NICE only */
};

static int become_caller(enum caller who)
{
	switch (who) {
	case ROOT:
		return 0;
	case ROOT_NO_NICE:
		return drop_cap(CAP_SYS_NICE);
	case USER:
		return become(OTHER_UID);
	case USER_NICE:
		return become_with_nice(OTHER_UID);
	}
	return -1;
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
 * Run a reweight of @pidfd in a child that first becomes @who; @pidfd < 0
 * means the child's own pidfd.  Returns the errno it saw, or 0.
 */
static int reweight_as(int pidfd, enum caller who, unsigned int flags)
{
	unsigned char w[WI_MAXNODE];
	int status;
	pid_t pid;

	/* Read the node list as root: uid 1000 may not be able to read /sys. */
	all_ones(w);
	pid = fork();
	if (pid == 0) {
		if (become_caller(who))
			_exit(100);
		if (pidfd < 0)
			pidfd = sys_pidfd_open(getpid());
		_exit(reweight_errno_w(pidfd, w, flags));
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

TEST(bad_flags_einval)
{
	int pidfd = sys_pidfd_open(getpid());

	ASSERT_LE(0, pidfd);
	EXPECT_EQ(EINVAL, reweight_errno(pidfd, 1U << 4));
	EXPECT_EQ(EINVAL, reweight_errno(pidfd, 1U << 31));
	/* The bit mbind2()'s rebalance once took is not one of this call's. */
	EXPECT_EQ(EINVAL, reweight_errno(pidfd, 1U << 8));
	/* MOVE_ALL only means something with REBALANCE. */
	EXPECT_EQ(EINVAL, reweight_errno(pidfd, MPOL_REWEIGHT_MOVE_ALL));
	EXPECT_EQ(0, reweight_errno(pidfd, 0));
	EXPECT_EQ(0, reweight_errno(pidfd, MPOL_REWEIGHT_REBALANCE));
	EXPECT_EQ(0, reweight_errno(pidfd, MPOL_REWEIGHT_GLOBAL |
					   MPOL_REWEIGHT_SHARED));
	close(pidfd);
}

/*
 * struct mpol_reweight_args follows the extensible-struct rules: a size
 * below the first version is EINVAL, a larger one is read when the bytes
 * past what the kernel knows are zero, and E2BIG when one is not.
 */
TEST(args_size_rules)
{
	unsigned char w[WI_MAXNODE] = { };
	struct {
		struct mpol_reweight_args args;
		unsigned char tail[8];
	} big = { };
	int nodes[WI_MAX_NODES], n, pidfd;

	n = wi_memory_nodes(nodes, WI_MAX_NODES);
	if (n < 1)
		SKIP(return, "No NUMA node with memory");
	w[nodes[0]] = 3;
	big.args.pol_maxnodes = WI_MAXNODE;
	big.args.il_weights = (unsigned long)w;
	pidfd = sys_pidfd_open(getpid());
	ASSERT_LE(0, pidfd);
	EXPECT_EQ(16, MPOL_REWEIGHT_ARGS_SIZE_VER0);
	EXPECT_EQ(-1, sys_process_mpol_reweight_args(pidfd, &big.args, 8, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, sys_process_mpol_reweight_args(pidfd, &big.args, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, sys_process_mpol_reweight_args(pidfd, &big.args,
						    sizeof(big), 0));
	big.tail[7] = 1;
	EXPECT_EQ(-1, sys_process_mpol_reweight_args(pidfd, &big.args,
						     sizeof(big), 0));
	EXPECT_EQ(E2BIG, errno);
	EXPECT_EQ(-1, sys_process_mpol_reweight_args(pidfd, NULL,
						     sizeof(big.args), 0));
	EXPECT_EQ(EFAULT, errno);
	close(pidfd);
}

TEST(bad_weights)
{
	size_t psz = getpagesize();
	unsigned char w[WI_MAXNODE], *big, *edge;
	int pidfd = sys_pidfd_open(getpid());

	ASSERT_LE(0, pidfd);
	all_ones(w);
	EXPECT_EQ(-1, sys_process_mpol_reweight(pidfd, w, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	/* Bytes for node ids this kernel cannot have are ignored... */
	w[WI_MAX_NODES - 1] = 1;
	EXPECT_EQ(0, sys_process_mpol_reweight(pidfd, w, WI_MAXNODE, 0));
	memset(w, 0, sizeof(w));
	EXPECT_EQ(-1, sys_process_mpol_reweight(pidfd, w, WI_MAXNODE, 0));
	EXPECT_EQ(EINVAL, errno);
	/* ...so they cannot stand in for the weights of real nodes. */
	w[WI_MAX_NODES - 1] = 1;
	EXPECT_EQ(-1, sys_process_mpol_reweight(pidfd, w, WI_MAXNODE, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, sys_process_mpol_reweight(pidfd, NULL, WI_MAXNODE, 0));
	EXPECT_EQ(EFAULT, errno);

	/*
	 * maxnode up to PAGE_SIZE * 8 + 1 is read, as pol_maxnodes in the
	 * mempolicy2 calls and maxnode in set_mempolicy(2); beyond is refused.
	 */
	big = calloc(1, psz * 8 + 2);
	ASSERT_NE(NULL, big);
	all_ones(big);
	EXPECT_EQ(0, sys_process_mpol_reweight(pidfd, big, psz * 8 + 1, 0));
	EXPECT_EQ(-1, sys_process_mpol_reweight(pidfd, big, psz * 8 + 2, 0));
	EXPECT_EQ(EINVAL, errno);
	free(big);

	/*
	 * Only the bytes of possible nodes are read: a tail running into an
	 * unmapped page is ignored, a first byte there is EFAULT.
	 */
	edge = mmap(NULL, 2 * psz, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, edge);
	ASSERT_EQ(0, munmap(edge + psz, psz));
	all_ones(edge);
	EXPECT_EQ(0, sys_process_mpol_reweight(pidfd, edge, psz, 0));
	EXPECT_EQ(0, sys_process_mpol_reweight(pidfd, edge, psz + 1, 0));
	EXPECT_EQ(-1, sys_process_mpol_reweight(pidfd, edge + psz, WI_MAXNODE, 0));
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
	pidfd = sys_pidfd_open(pid);
	ASSERT_LE(0, pidfd);
	/* A zombie: exited, not yet reaped. */
	ASSERT_EQ(0, waitid(P_PID, pid, &si, WEXITED | WNOWAIT));
	EXPECT_EQ(ESRCH, reweight_errno(pidfd, 0));
	/* Reaped. */
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));
	EXPECT_EQ(ESRCH, reweight_errno(pidfd, MPOL_REWEIGHT_REBALANCE));
	close(pidfd);
}

TEST(kernel_thread_einval)
{
	int pidfd = sys_pidfd_open(2);	/* kthreadd */

	ASSERT_LE(0, pidfd);
	EXPECT_EQ(EINVAL, reweight_errno(pidfd, 0));
	close(pidfd);
}

/*
 * Regression test for one weight rule: struct mpol_args ignores the bytes
 * of nodes outside the nodemask, and process_mpol_reweight() refused a
 * non-zero byte for a node outside the target's cpuset, so the array one
 * call taught failed the other.  Such bytes are ignored now; a table with
 * no weight left on a node the target may use is still EINVAL.
 */
TEST(node_outside_target_cpuset_is_ignored)
{
	const char *cg = WI_CGROUP_ROOT "/mpol2-reweight";
	unsigned char w[WI_MAXNODE] = { };
	int nodes[WI_MAX_NODES], ready[2], go[2], pidfd, status;
	char mems[32], c = 0;
	pid_t pid;

	if (wi_memory_nodes(nodes, WI_MAX_NODES) < 3)
		SKIP(return, "Not enough NUMA nodes available");
	if (!wi_cpuset_supported())
		SKIP(return, "No cgroup2 cpuset controller at %s", WI_CGROUP_ROOT);
	snprintf(mems, sizeof(mems), "%d-%d", nodes[0], nodes[1]);
	ASSERT_EQ(0, wi_cpuset_create(cg, mems));
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (wi_cpuset_join(cg) || write(ready[1], &c, 1) != 1)
			_exit(1);
		read(go[0], &c, 1);
		_exit(wi_cpuset_join(WI_CGROUP_ROOT) ? 2 : 0);
	}
	ASSERT_EQ(1, read(ready[0], &c, 1));
	pidfd = sys_pidfd_open(pid);
	ASSERT_LE(0, pidfd);
	w[nodes[2]] = 1;
	EXPECT_EQ(-1, sys_process_mpol_reweight(pidfd, w, WI_MAXNODE, 0));
	EXPECT_EQ(EINVAL, errno);
	w[nodes[0]] = 1;
	EXPECT_EQ(0, sys_process_mpol_reweight(pidfd, w, WI_MAXNODE, 0));
	w[nodes[2]] = 0;
	EXPECT_EQ(0, sys_process_mpol_reweight(pidfd, w, WI_MAXNODE, 0));
	ASSERT_EQ(1, write(go[1], &c, 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(pidfd);
	EXPECT_EQ(0, rmdir(cg));
}

/* Any process may reweight itself, without a capability. */
TEST(self_needs_no_capability)
{
	EXPECT_EQ(0, reweight_as(-1, USER, 0));
	EXPECT_EQ(0, reweight_as(-1, USER, MPOL_REWEIGHT_REBALANCE));
}

/* No ptrace-attach access to a root target, CAP_SYS_NICE or not. */
TEST(no_ptrace_access_eperm)
{
	int pidfd = sys_pidfd_open(getpid());

	ASSERT_LE(0, pidfd);
	EXPECT_EQ(EPERM, reweight_as(pidfd, USER, 0));
	EXPECT_EQ(EPERM, reweight_as(pidfd, USER_NICE, 0));
	close(pidfd);
}

/* Same uid, but the target is not dumpable: no ptrace-attach access. */
TEST(non_dumpable_target_eperm)
{
	int go, pidfd;
	pid_t pid;

	pid = start_target(OTHER_UID, 0, &go);
	ASSERT_LT(0, pid);
	pidfd = sys_pidfd_open(pid);
	ASSERT_LE(0, pidfd);
	EXPECT_EQ(EPERM, reweight_as(pidfd, USER_NICE, 0));
	stop_target(pid, go);
	close(pidfd);

	/* The same with a dumpable target is allowed. */
	pid = start_target(OTHER_UID, 1, &go);
	ASSERT_LT(0, pid);
	pidfd = sys_pidfd_open(pid);
	ASSERT_LE(0, pidfd);
	EXPECT_EQ(0, reweight_as(pidfd, USER_NICE, 0));
	stop_target(pid, go);
	close(pidfd);
}

/*
 * Any process but the caller's own needs CAP_SYS_NICE, as for
 * process_madvise(): even one of the same user the caller may ptrace.
 */
TEST(other_process_needs_cap_sys_nice)
{
	int go, pidfd;
	pid_t pid;

	pid = start_target(OTHER_UID, 1, &go);
	ASSERT_LT(0, pid);
	pidfd = sys_pidfd_open(pid);
	ASSERT_LE(0, pidfd);
	EXPECT_EQ(EPERM, reweight_as(pidfd, USER, 0));
	EXPECT_EQ(0, reweight_as(pidfd, USER_NICE, 0));
	EXPECT_EQ(EPERM, reweight_as(pidfd, ROOT_NO_NICE, 0));
	EXPECT_EQ(0, reweight_as(pidfd, ROOT, 0));
	stop_target(pid, go);
	close(pidfd);
}

/*
 * A set-user-ID root program run by uid 1000: its euid and saved uid are
 * 0 and it is not dumpable, so the user who started it cannot reweight
 * it, even with CAP_SYS_NICE; root can.
 */
#define SUID_COPY "/tmp/mpol2-suid-target"
#define SUID_ENV "MPOL2_SUID_TARGET"

/*
 * The set-user-ID copy of this program lands here before the harness:
 * it reports whether it runs as root on fd 3 and waits for fd 4 to close.
 */
__attribute__((constructor)) static void suid_target_main(void)
{
	char c;

	if (!getenv(SUID_ENV))
		return;
	c = geteuid() == 0 ? 'S' : 'N';
	if (write(3, &c, 1) != 1)
		_exit(1);
	read(4, &c, 1);
	_exit(0);
}

TEST(setuid_target_eperm)
{
	int ready[2], go[2], in, out, exe, pidfd, status;
	char buf[65536], c = 0;
	ssize_t n;
	pid_t pid;

	/* A root-owned set-user-ID copy of this very program. */
	in = open("/proc/self/exe", O_RDONLY);
	ASSERT_LE(0, in);
	unlink(SUID_COPY);
	out = open(SUID_COPY, O_WRONLY | O_CREAT | O_EXCL, 0755);
	ASSERT_LE(0, out);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		ASSERT_EQ(n, write(out, buf, n));
	close(in);
	ASSERT_EQ(0, fchmod(out, 04755));
	close(out);
	/* uid 1000 may not be able to look up the path: exec by fd. */
	exe = open(SUID_COPY, O_RDONLY);
	ASSERT_LE(0, exe);

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char *const argv[] = { SUID_COPY, NULL };
		char *const envp[] = { SUID_ENV "=1", NULL };

		/* Out of the way first: the pipes may sit on fds 3 and 4. */
		int r = fcntl(ready[1], F_DUPFD, 10), g = fcntl(go[0], F_DUPFD, 10);
		int e = fcntl(exe, F_DUPFD, 10);

		if (r < 0 || g < 0 || e < 0 || dup2(r, 3) != 3 || dup2(g, 4) != 4)
			_exit(10);
		close(go[1]);
		if (become(OTHER_UID))
			_exit(11);
		syscall(SYS_execveat, e, "", argv, envp, AT_EMPTY_PATH);
		_exit(12);
	}
	close(go[0]);
	close(ready[1]);
	close(exe);
	if (read(ready[0], &c, 1) != 1) {
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		TH_LOG("the set-user-ID copy exited with status %#x", status);
		ASSERT_TRUE(0);
	}
	if (c != 'S') {
		close(go[1]);
		waitpid(pid, NULL, 0);
		unlink(SUID_COPY);
		SKIP(return, "set-user-ID did not take effect on " SUID_COPY);
	}
	pidfd = sys_pidfd_open(pid);
	ASSERT_LE(0, pidfd);
	EXPECT_EQ(EPERM, reweight_as(pidfd, USER_NICE, 0));
	EXPECT_EQ(EPERM, reweight_as(pidfd, USER, 0));
	EXPECT_EQ(0, reweight_as(pidfd, ROOT, 0));
	close(go[1]);
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));
	close(pidfd);
	unlink(SUID_COPY);
}

/* MPOL_REWEIGHT_MOVE_ALL needs CAP_SYS_NICE even on oneself. */
TEST(move_all_needs_cap_sys_nice)
{
	int pidfd = sys_pidfd_open(getpid());

	ASSERT_LE(0, pidfd);
	/* The caller's own pidfd (-1): no other rule gets in the way. */
	EXPECT_EQ(EPERM, reweight_as(-1, ROOT_NO_NICE,
				     MPOL_REWEIGHT_REBALANCE | MPOL_REWEIGHT_MOVE_ALL));
	EXPECT_EQ(0, reweight_as(-1, ROOT_NO_NICE, MPOL_REWEIGHT_REBALANCE));
	EXPECT_EQ(0, reweight_as(-1, ROOT, MPOL_REWEIGHT_REBALANCE | MPOL_REWEIGHT_MOVE_ALL));
	/* Another process without CAP_SYS_NICE: refused before any flag. */
	EXPECT_EQ(EPERM, reweight_as(pidfd, ROOT_NO_NICE, MPOL_REWEIGHT_REBALANCE));
	close(pidfd);
}

/*
 * A weighted-interleave policy with MPOL_F_RELATIVE_NODES cannot own
 * weights (set_mempolicy2() refuses them): a reweight leaves it on the
 * global weights, even with MPOL_REWEIGHT_GLOBAL, and succeeds.
 */
TEST(relative_nodes_policy_left_alone)
{
	int nodes[WI_MAX_NODES], n, i, pidfd;
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))] = { };
	unsigned char w[WI_MAXNODE] = { };
	struct wi_policy before, after;

	n = wi_memory_nodes(nodes, WI_MAX_NODES);
	if (n < 2)
		SKIP(return, "Not enough NUMA nodes available");
	for (i = 0; i < n; i++)
		wi_nodemask_set(mask, i);
	ASSERT_EQ(0, sys_set_mempolicy(MPOL_WEIGHTED_INTERLEAVE |
					MPOL_F_RELATIVE_NODES, mask,
					WI_MAXNODE));
	ASSERT_EQ(0, wi_read_policy(&before, NULL));
	pidfd = sys_pidfd_open(getpid());
	ASSERT_LE(0, pidfd);
	w[nodes[0]] = 5;
	w[nodes[1]] = 1;
	EXPECT_EQ(0, sys_process_mpol_reweight(pidfd, w, WI_MAXNODE,
					       MPOL_REWEIGHT_GLOBAL));
	ASSERT_EQ(0, wi_read_policy(&after, NULL));
	EXPECT_EQ(MPOL_WEIGHTED_INTERLEAVE, after.args.mode);
	EXPECT_EQ(MPOL_F_RELATIVE_NODES, after.args.mode_flags);
	EXPECT_EQ(MPOL_ARGS_GLOBAL_WEIGHTS, after.args.flags);
	EXPECT_EQ(0, memcmp(before.w, after.w, sizeof(before.w)));
	close(pidfd);
	sys_set_mempolicy(MPOL_DEFAULT, NULL, 0);
}

/*
 * A process that shares the target's mm without being one of its threads
 * (clone() with CLONE_VM but not CLONE_THREAD, as vfork() and
 * posix_spawn() make) follows the same task weights: its task policy is
 * checked like a thread's.  Its policy is on the second node only, so
 * weights only on the first leave it none: EINVAL, and nothing changes.
 */
struct clone_vm_child {
	atomic_int ready;	/* 1: policy set, -1: set_mempolicy2() failed */
	atomic_int done;
	int node;
};

static int clone_vm_child_fn(void *arg)
{
	struct clone_vm_child *c = arg;
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))] = { };
	unsigned char w[WI_MAXNODE] = { };
	struct mpol_args args;

	w[c->node] = 1;
	wi_args(&args, mask, &c->node, 1, w);
	atomic_store(&c->ready,
		     sys_set_mempolicy2(&args, sizeof(args), 0) ? -1 : 1);
	while (!atomic_load(&c->done))
		sched_yield();
	return 0;
}

TEST(clone_vm_process_policy_is_checked)
{
	struct clone_vm_child c = { };
	size_t stack_size = 256 * 1024;
	unsigned char w[WI_MAXNODE] = { };
	int nodes[WI_MAX_NODES], n, pidfd, status, err;
	char *stack;
	pid_t pid;

	n = wi_memory_nodes(nodes, WI_MAX_NODES);
	if (n < 2)
		SKIP(return, "Not enough NUMA nodes available");
	c.node = nodes[1];
	stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
	ASSERT_NE(MAP_FAILED, stack);
	pid = clone(clone_vm_child_fn, stack + stack_size, CLONE_VM | SIGCHLD, &c);
	ASSERT_LT(0, pid);
	while (!atomic_load(&c.ready))
		sched_yield();

	pidfd = sys_pidfd_open(getpid());
	w[nodes[0]] = 1;
	err = pidfd < 0 ? -1 : reweight_errno_w(pidfd, w, 0);
	atomic_store(&c.done, 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	munmap(stack, stack_size);
	ASSERT_EQ(1, atomic_load(&c.ready));
	ASSERT_LE(0, pidfd);
	EXPECT_EQ(EINVAL, err);

	/* With a weight on the second node too, both can take it. */
	w[nodes[1]] = 1;
	EXPECT_EQ(0, reweight_errno_w(pidfd, w, 0));
	close(pidfd);
}

int main(int argc, char **argv)
{
	wi_skip_without_mempolicy2();
	return test_harness_run(argc, argv);
}
