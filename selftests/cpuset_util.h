/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgroup v2 cpusets for tests that need a process whose allowed memory
 * nodes are restricted or change.  The guest's /init mounts cgroup2 at
 * /sys/fs/cgroup.  Functions return 0 or -errno.
 */
#ifndef BWAP_CPUSET_UTIL_H
#define BWAP_CPUSET_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#define BWAP_CGROUP_ROOT "/sys/fs/cgroup"

static inline int bwap_cg_write(const char *cg, const char *file, const char *text)
{
	char path[256];
	int fd, ret = 0;
	ssize_t len = strlen(text);

	snprintf(path, sizeof(path), "%s/%s", cg, file);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != len)
		ret = -errno;
	close(fd);
	return ret;
}

/* Make cgroup @cg (a full path) with the cpuset controller and @mems. */
static inline int bwap_cpuset_create(const char *cg, const char *mems)
{
	int ret = bwap_cg_write(BWAP_CGROUP_ROOT, "cgroup.subtree_control", "+cpuset");

	if (ret)
		return ret;
	rmdir(cg);
	if (mkdir(cg, 0755))
		return -errno;
	return bwap_cg_write(cg, "cpuset.mems", mems);
}

/* Move the calling process into @cg. */
static inline int bwap_cpuset_join(const char *cg)
{
	char me[32];

	snprintf(me, sizeof(me), "%d", getpid());
	return bwap_cg_write(cg, "cgroup.procs", me);
}

/* Move the calling process back to the root and remove @cg. */
static inline int bwap_cpuset_leave_and_remove(const char *cg)
{
	int ret = bwap_cpuset_join(BWAP_CGROUP_ROOT);

	if (rmdir(cg) && !ret)
		ret = -errno;
	return ret;
}

#endif /* BWAP_CPUSET_UTIL_H */
