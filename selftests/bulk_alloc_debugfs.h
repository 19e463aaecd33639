/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rig's way into the bulk allocator: /sys/kernel/debug/mempolicy/bulk_alloc,
 * which the kernels we build add in a local patch after the series
 * (patches/BASE/local/, CONFIG_NUMA_POLICY_BULK_DEBUGFS).  The posted
 * series does not have it; KUnit covers the bulk path there.
 */
#ifndef BULK_ALLOC_DEBUGFS_H
#define BULK_ALLOC_DEBUGFS_H

#include "numa_util.h"

#define WI_BULK_ALLOC "/sys/kernel/debug/mempolicy/bulk_alloc"

/*
 * Allocate @npages in one bulk-allocator call under the calling task's
 * policy (CONFIG_NUMA_POLICY_BULK_DEBUGFS) and fill counts[] with the
 * node of each page.  Returns 0, or -errno.
 */
static inline int wi_bulk_alloc_count(size_t npages, long *counts)
{
	char buf[512], *p;
	int fd, len, ret = 0;

	memset(counts, 0, WI_MAX_NODES * sizeof(*counts));
	fd = open(WI_BULK_ALLOC, O_RDWR);
	if (fd < 0)
		return -errno;
	len = snprintf(buf, sizeof(buf), "%zu", npages);
	if (write(fd, buf, len) != len) {
		ret = -errno;
		goto out;
	}
	len = pread(fd, buf, sizeof(buf) - 1, 0);
	if (len <= 0) {
		ret = -EIO;
		goto out;
	}
	buf[len] = '\0';
	for (p = strstr(buf, " N"); p; p = strstr(p + 1, " N")) {
		int nid;
		long n;

		if (sscanf(p, " N%d=%ld", &nid, &n) == 2 && nid >= 0 && nid < WI_MAX_NODES)
			counts[nid] = n;
	}
out:
	close(fd);
	return ret;
}

#endif /* BULK_ALLOC_DEBUGFS_H */
