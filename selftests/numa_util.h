/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small helpers shared by the weighted-interleave and mempolicy2 tests:
 * raw NUMA syscalls, node lists, the global weighted-interleave sysfs
 * table, and counting where pages live.  Header-only so each test stays a
 * single static binary.  The mempolicy2 syscall numbers and flags come from
 * the uapi headers of the kernel the tests are built with.
 */
#ifndef NUMA_UTIL_H
#define NUMA_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/mempolicy.h>

#define WI_MAX_NODES 64
/* maxnode as libnuma passes it: bits in the mask plus one. */
#define WI_MAXNODE (WI_MAX_NODES + 1)
#define WI_WEIGHT_DIR "/sys/kernel/mm/mempolicy/weighted_interleave"

static inline long sys_set_mempolicy(int mode, const unsigned long *mask,
				     unsigned long maxnode)
{
	return syscall(SYS_set_mempolicy, mode, mask, maxnode);
}

static inline long sys_mbind(void *addr, unsigned long len, int mode,
			     const unsigned long *mask, unsigned long maxnode,
			      unsigned int flags)
{
	return syscall(SYS_mbind, addr, len, mode, mask, maxnode, flags);
}

static inline long sys_move_pages(int pid, unsigned long count, void **pages,
				  const int *nodes, int *status, int flags)
{
	return syscall(SYS_move_pages, pid, count, pages, nodes, status, flags);
}

static inline void wi_nodemask_set(unsigned long *mask, int node)
{
	mask[node / (8 * sizeof(long))] |= 1UL << (node % (8 * sizeof(long)));
}

static inline long sys_set_mempolicy2(const struct mpol_args *args, size_t size,
				      unsigned int flags)
{
	return syscall(__NR_set_mempolicy2, args, size, flags);
}

static inline long sys_get_mempolicy2(struct mpol_args *args, size_t size,
				      unsigned long addr, unsigned int flags)
{
	return syscall(__NR_get_mempolicy2, args, size, addr, flags);
}

static inline long sys_mbind2(void *addr, unsigned long len,
			      const struct mpol_args *args, size_t size,
			       unsigned int flags)
{
	return syscall(__NR_mbind2, addr, len, args, size, flags);
}

/*
 * The tests' mbind2() helpers take mbind()'s MPOL_MF_* flags plus
 * WI_REBALANCE, which wi_mbind2() passes on as MPOL_ARGS_REBALANCE in the
 * struct: mbind2()'s own flag lives there, and its flags argument refuses
 * any bit outside MPOL_MF_VALID.
 */
#define WI_REBALANCE 0x80000000U

static inline long wi_mbind2(void *addr, unsigned long len,
			     const struct mpol_args *args, unsigned int flags)
{
	struct mpol_args a = *args;

	if (flags & WI_REBALANCE)
		a.flags |= MPOL_ARGS_REBALANCE;
	return sys_mbind2(addr, len, &a, sizeof(a), flags & ~WI_REBALANCE);
}

static inline long sys_process_mpol_reweight_args(int pidfd,
						  const struct mpol_reweight_args *args,
						  size_t size, unsigned int flags)
{
	return syscall(__NR_process_mpol_reweight, pidfd, args, size, flags);
}

/* The weights as @maxnode bytes at @weights, in a struct of today's size. */
static inline long sys_process_mpol_reweight(int pidfd, const unsigned char *weights,
					     unsigned long maxnode, unsigned int flags)
{
	struct mpol_reweight_args args = {
		.pol_maxnodes = maxnode,
		.il_weights = (unsigned long)weights,
	};

	return sys_process_mpol_reweight_args(pidfd, &args, sizeof(args), flags);
}

static inline int sys_pidfd_open(int pid)
{
	return syscall(__NR_pidfd_open, pid, 0);
}

/*
 * Largest-remainder shares of @total pages over @n nodes, the kernel's
 * rebalance rule: floor(total * w / W) each, then one more page to the
 * nodes with the largest remainders; equal remainders go first to the node
 * holding more pages now (@cur), then to the lower index.
 */
static inline void wi_lr_targets(long total, const long *cur,
				 const unsigned char *w, int n, long *target)
{
	long wsum = 0, given = 0;
	int extra[WI_MAX_NODES] = { 0 };
	int i;

	for (i = 0; i < n; i++)
		wsum += w[i];
	for (i = 0; i < n; i++) {
		target[i] = wsum ? total * w[i] / wsum : 0;
		given += target[i];
	}
	while (wsum && given < total) {
		int best = -1;
		long best_rem = 0;

		for (i = 0; i < n; i++) {
			long rem = total * w[i] % wsum;

			if (!w[i] || extra[i])
				continue;
			if (best < 0 || rem > best_rem ||
			    (rem == best_rem && cur[i] > cur[best])) {
				best = i;
				best_rem = rem;
			}
		}
		extra[best] = 1;
		target[best]++;
		given++;
	}
}

/* MemFree of @node in KiB, or -1. */
static inline long wi_node_free_kb(int node)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/meminfo", node);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Node %*d MemFree: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* A /proc/vmstat counter, or -1 if it is not there. */
static inline long wi_vmstat(const char *name)
{
	char line[128];
	size_t len = strlen(name);
	long val = -1;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, name, len) && line[len] == ' ') {
			val = atol(line + len + 1);
			break;
		}
	}
	fclose(f);
	return val;
}

/* The rebalance counters of /proc/vmstat at one moment. */
struct wi_rebalance_stat {
	long scanned, moved, failed;
};

static inline void wi_rebalance_stat_read(struct wi_rebalance_stat *s)
{
	s->scanned = wi_vmstat("mpol_rebalance_scanned");
	s->moved = wi_vmstat("mpol_rebalance_moved");
	s->failed = wi_vmstat("mpol_rebalance_failed");
}

/*
 * What the calls between two wi_rebalance_stat_read()s, into @before and
 * then @after, added to each counter.
 */
static inline struct wi_rebalance_stat
wi_rebalance_delta(const struct wi_rebalance_stat *before,
		   const struct wi_rebalance_stat *after)
{
	struct wi_rebalance_stat d = {
		.scanned = after->scanned - before->scanned,
		.moved = after->moved - before->moved,
		.failed = after->failed - before->failed,
	};

	return d;
}

/*
 * Fill @args for MPOL_WEIGHTED_INTERLEAVE over @nodes with @weights
 * (WI_MAXNODE bytes, indexed by node id).  @mask must have room for
 * WI_MAX_NODES bits.
 */
static inline void wi_args(struct mpol_args *args, unsigned long *mask,
			   const int *nodes, int nr_nodes, const unsigned char *weights)
{
	int i;

	memset(args, 0, sizeof(*args));
	memset(mask, 0, WI_MAX_NODES / 8);
	for (i = 0; i < nr_nodes; i++)
		wi_nodemask_set(mask, nodes[i]);
	args->mode = MPOL_WEIGHTED_INTERLEAVE;
	args->home_node = -1;
	args->pol_maxnodes = WI_MAXNODE;
	args->pol_nodes = (unsigned long)mask;
	args->il_weights = (unsigned long)weights;
}

/*
 * mbind2() [@addr, @addr + @len) to MPOL_WEIGHTED_INTERLEAVE over @nodes,
 * with weight @w[i] for node @nodes[i] (not indexed by node id).
 */
static inline long wi_mbind2_nodes(void *addr, size_t len, const int *nodes,
				   int nr_nodes, const unsigned char *w,
				     unsigned int flags)
{
	unsigned char weights[WI_MAXNODE] = { 0 };
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
	struct mpol_args args;
	int i;

	for (i = 0; i < nr_nodes; i++)
		weights[nodes[i]] = w[i];
	wi_args(&args, mask, nodes, nr_nodes, weights);
	return wi_mbind2(addr, len, &args, flags);
}

/* A policy read back with get_mempolicy2(), nodemask and weights included. */
struct wi_policy {
	struct mpol_args args;
	unsigned long mask[WI_MAX_NODES / (8 * sizeof(long))];
	unsigned char w[WI_MAXNODE];
};

/*
 * Read the calling thread's policy, or with @addr that of the VMA there.
 * Weights start as 0xee so that bytes the kernel did not write stand out.
 * Returns the get_mempolicy2() result.
 */
static inline long wi_read_policy(struct wi_policy *r, void *addr)
{
	memset(r, 0, sizeof(*r));
	memset(r->w, 0xee, sizeof(r->w));
	r->args.pol_maxnodes = WI_MAXNODE;
	r->args.pol_nodes = (unsigned long)r->mask;
	r->args.il_weights = (unsigned long)r->w;
	return sys_get_mempolicy2(&r->args, sizeof(r->args), (unsigned long)addr,
				   addr ? MPOL_F_ADDR : 0);
}

/*
 * The mempolicy2 syscalls are there (CONFIG_NUMA_POLICY_WEIGHTS): a kernel
 * with them refuses unknown flags with EINVAL before it reads anything, a
 * kernel without them fails the call otherwise.  Only this probe decides a
 * skip; a real call that fails later is a test failure.
 */
static inline int wi_have_mempolicy2(void)
{
	return sys_get_mempolicy2(NULL, 0, 0, ~0U) == -1 && errno == EINVAL;
}

#ifdef TEST_HARNESS_MAIN
/*
 * For main() of the tests that need the mempolicy2 syscalls: on a kernel
 * without them the whole program skips, with the reason.
 */
static inline void wi_skip_without_mempolicy2(void)
{
	if (!wi_have_mempolicy2())
		ksft_exit_skip("no mempolicy2 syscalls (%s): needs CONFIG_NUMA_POLICY_WEIGHTS\n",
			       strerror(errno));
}
#endif

/*
 * Parse a sysfs node list such as "0-3,5" into ids[]; returns the count,
 * or -1 if the file cannot be read.
 */
static inline int wi_read_node_list(const char *path, int *ids, int max)
{
	char buf[512], *p;
	int n = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return 0;
	}
	fclose(f);
	for (p = strtok(buf, ",\n"); p; p = strtok(NULL, ",\n")) {
		int lo, hi;

		if (sscanf(p, "%d-%d", &lo, &hi) != 2)
			lo = atoi(p), hi = lo;
		for (; lo <= hi && n < max; lo++)
			ids[n++] = lo;
	}
	return n;
}

/* Nodes that have memory; the nodes weighted interleave can use. */
static inline int wi_memory_nodes(int *ids, int max)
{
	return wi_read_node_list("/sys/devices/system/node/has_memory", ids, max);
}

/* Read the global sysfs weight of @node; returns 1..255 or -errno. */
static inline int wi_sysfs_weight_get(int node)
{
	char path[128], buf[16];
	int fd, len;

	snprintf(path, sizeof(path), WI_WEIGHT_DIR "/node%d", node);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -EIO;
	buf[len] = '\0';
	return atoi(buf);
}

/*
 * Write @len bytes of @text to nodeN's weight file as one write(2).
 * Returns the write(2) result, or -errno.
 */
static inline long wi_sysfs_weight_write(int node, const char *text, size_t len)
{
	char path[128];
	long ret;
	int fd;

	snprintf(path, sizeof(path), WI_WEIGHT_DIR "/node%d", node);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	ret = write(fd, text, len);
	if (ret < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static inline long wi_sysfs_weight_set(int node, int weight)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%d\n", weight);

	return wi_sysfs_weight_write(node, buf, len) == len ? 0 : -1;
}

/*
 * The global table's auto mode (mainline since 6.16: weights computed from
 * HMAT bandwidth; any nodeN write leaves it).  Returns 1 or 0, or -1 when
 * the kernel has no auto file, whose nodeN files keep their older rules.
 */
#define WI_WEIGHT_AUTO WI_WEIGHT_DIR "/auto"
static inline int wi_auto_get(void)
{
	char buf[16] = "";
	int fd, len;

	fd = open(WI_WEIGHT_AUTO, O_RDONLY);
	if (fd < 0)
		return -1;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (len <= 0)
		return -1;
	return !strncmp(buf, "true", 4);
}

/*
 * Switch auto mode on (recomputing the weights) or off; 0 or -errno.
 * Mainline refuses "on" with ENODEV where no node has bandwidth data.
 */
static inline int wi_auto_set(int on)
{
	int fd = open(WI_WEIGHT_AUTO, O_WRONLY);
	long ret;

	if (fd < 0)
		return -errno;
	ret = write(fd, on ? "1" : "0", 1);
	if (ret < 0)
		ret = -errno;
	close(fd);
	return ret == 1 ? 0 : ret < 0 ? ret : -EIO;
}

/*
 * Put back what a test found: the weights @saved of @nodes (0 or less:
 * unread, left alone), then auto mode if it was on (@saved_auto 1), since
 * every nodeN write leaves it on mainline.
 */
static inline void wi_restore(const int *nodes, const int *saved, int n,
			      int saved_auto)
{
	int i;

	for (i = 0; i < n; i++)
		if (saved[i] > 0)
			wi_sysfs_weight_set(nodes[i], saved[i]);
	if (saved_auto == 1)
		wi_auto_set(1);
}

/* Whether the firmware gave @node a bandwidth (HMAT), which auto mode reads. */
static inline int wi_node_has_bandwidth(int node)
{
	char path[128];

	snprintf(path, sizeof(path),
		 "/sys/devices/system/node/node%d/access0/initiators/read_bandwidth", node);
	return access(path, R_OK) == 0;
}

/*
 * Map @npages anonymous pages with THP off, and pre-build their page tables
 * by faulting them once under the current policy and dropping them again.
 * Page-table pages follow the task policy too; building them first means
 * the later faults allocate data pages only, so per-node counts are exact.
 */
static inline char *wi_map_prefaulted(size_t npages)
{
	size_t psz = getpagesize(), i;
	char *p = mmap(NULL, npages * psz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	madvise(p, npages * psz, MADV_NOHUGEPAGE);
	for (i = 0; i < npages; i++)
		p[i * psz] = 1;
	if (madvise(p, npages * psz, MADV_DONTNEED)) {
		munmap(p, npages * psz);
		return NULL;
	}
	return p;
}

static inline void wi_touch_pages(char *p, size_t npages)
{
	size_t psz = getpagesize(), i;

	for (i = 0; i < npages; i++)
		p[i * psz] = (char)i;
}

/*
 * Count the resident pages of [p, p + npages pages) of process @pid (0:
 * the caller) per node with move_pages(2) in query mode.  counts[] has
 * WI_MAX_NODES entries.  Returns the number of pages not resident on
 * any node (status < 0), or -1 if move_pages itself failed.
 */
static inline long wi_count_pid_pages(int pid, char *p, size_t npages,
				      long *counts)
{
	size_t psz = getpagesize(), i;
	void **pages = calloc(npages, sizeof(*pages));
	int *status = calloc(npages, sizeof(*status));
	long missing = 0;

	memset(counts, 0, WI_MAX_NODES * sizeof(*counts));
	if (!pages || !status) {
		free(pages);
		free(status);
		return -1;
	}
	for (i = 0; i < npages; i++)
		pages[i] = p + i * psz;
	if (sys_move_pages(pid, npages, pages, NULL, status, 0)) {
		missing = -1;
		goto out;
	}
	for (i = 0; i < npages; i++) {
		if (status[i] >= 0 && status[i] < WI_MAX_NODES)
			counts[status[i]]++;
		else
			missing++;
	}
out:
	free(pages);
	free(status);
	return missing;
}

/* wi_count_pid_pages() for the calling process. */
static inline long wi_count_pages_per_node(char *p, size_t npages, long *counts)
{
	return wi_count_pid_pages(0, p, npages, counts);
}

/*
 * The node of each page of [p, p + npages pages) into @status, by
 * move_pages(2) query (negative errno for a page not resident).
 * Returns 0, or -1 if move_pages itself failed.
 */
static inline int wi_page_nodes(char *p, size_t npages, int *status)
{
	size_t psz = getpagesize(), i;
	void **pages = calloc(npages, sizeof(*pages));
	int ret;

	if (!pages)
		return -1;
	for (i = 0; i < npages; i++)
		pages[i] = p + i * psz;
	ret = sys_move_pages(0, npages, pages, NULL, status, 0) ? -1 : 0;
	free(pages);
	return ret;
}

/*
 * Window balance of a placement: the range is cut into whole windows of
 * @window pages from its start, and in each window every node of
 * @nodes[0..nn-1] should hold window * w / W pages (W the sum of @w).
 * Returns the worst deviation, in pages, of any node in any window; a
 * fresh weighted-interleave fault scores 0 when W divides @window.
 */
static inline double wi_window_balance(const int *status, long npages,
				       const int *nodes, const unsigned char *w,
					 int nn, long window)
{
	double worst = 0, dev;
	long start, i, wsum = 0, count;
	int k;

	for (k = 0; k < nn; k++)
		wsum += w[k];
	if (!wsum)
		return 0;
	for (start = 0; start + window <= npages; start += window) {
		for (k = 0; k < nn; k++) {
			count = 0;
			for (i = start; i < start + window; i++)
				count += status[i] == nodes[k];
			dev = count - (double)window * w[k] / wsum;
			if (dev < 0)
				dev = -dev;
			if (dev > worst)
				worst = dev;
		}
	}
	return worst;
}

/* Write @text to the sysfs, procfs or debugfs file @path: 0, or -1. */
static inline int wi_write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/*
 * Write @text to tracefs file @name, truncating it ("trace": clear), as
 * the tests that count a tracepoint's hits need; 0 or -1.
 */
static inline int wi_tracing_write(const char *name, const char *text)
{
	char path[128];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/sys/kernel/tracing/%s", name);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* The number a one-value file such as /proc/sys/kernel/X holds, or -1. */
static inline long wi_read_long(const char *path)
{
	char buf[32];
	ssize_t n;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtol(buf, NULL, 10);
}

/*
 * The selected value of a sysfs choice file such as
 * /sys/kernel/mm/transparent_hugepage/enabled ("always [madvise] never"
 * gives "madvise") into @out of @size bytes: 0, or -1.
 */
static inline int wi_read_selected(const char *path, char *out, size_t size)
{
	char line[128], *open_br, *close_br;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	open_br = strchr(line, '[');
	close_br = open_br ? strchr(open_br, ']') : NULL;
	if (!close_br || (size_t)(close_br - open_br) > size)
		return -1;
	*close_br = '\0';
	snprintf(out, size, "%s", open_br + 1);
	return 0;
}

/* AnonHugePages of the mapping that starts at @addr, in kB, or -1. */
static inline long wi_anon_huge_kb(void *addr)
{
	unsigned long start, end;
	char line[256];
	int in_vma = 0;
	long kb = -1;
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		/* A mapping's first line is "start-end perms ..." in hex. */
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2)
			in_vma = start == (unsigned long)addr;
		else if (in_vma && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

/*
 * An anonymous private mapping of @len bytes that starts on a 2 MiB
 * boundary and is a VMA of its own (the slack around it unmapped), so
 * that it can fault transparent huge pages.  NULL if mmap() or the
 * munmap() of the slack failed.
 */
static inline char *wi_map_hpage_aligned(size_t len)
{
	size_t hsz = 2UL << 20;
	char *raw = mmap(NULL, len + hsz, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p;

	if (raw == MAP_FAILED)
		return NULL;
	p = (char *)(((unsigned long)raw + hsz - 1) & ~(hsz - 1));
	if ((p > raw && munmap(raw, p - raw)) ||
	    (p + len < raw + len + hsz &&
	     munmap(p + len, raw + len + hsz - (p + len))))
		return NULL;
	return p;
}

#endif /* NUMA_UTIL_H */
