/* SPDX-License-Identifier: GPL-2.0 */
/*
 * cgroup v2 cpusets for tests that need a process whose allowed memory
 * nodes are restricted or change.  They need cgroup2 mounted at
 * /sys/fs/cgroup with the cpuset controller; tests check
 * wi_cpuset_supported() and skip without it.  Functions return 0 or
 * -errno.
 */
#ifndef CPUSET_UTIL_H
#define CPUSET_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#define WI_CGROUP_ROOT "/sys/fs/cgroup"

/* cgroup2 is mounted at WI_CGROUP_ROOT and offers the cpuset controller. */
static inline bool wi_cpuset_supported(void)
{
	char line[256], *tok, *save;
	bool found = false;
	FILE *f = fopen(WI_CGROUP_ROOT "/cgroup.controllers", "r");

	if (!f)
		return false;
	if (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		for (tok = strtok_r(line, " ", &save); tok && !found;
		     tok = strtok_r(NULL, " ", &save))
			found = !strcmp(tok, "cpuset");
	}
	fclose(f);
	return found;
}

static inline int wi_cg_write(const char *cg, const char *file, const char *text)
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
static inline int wi_cpuset_create(const char *cg, const char *mems)
{
	int ret = wi_cg_write(WI_CGROUP_ROOT, "cgroup.subtree_control", "+cpuset");

	if (ret)
		return ret;
	rmdir(cg);
	if (mkdir(cg, 0755))
		return -errno;
	return wi_cg_write(cg, "cpuset.mems", mems);
}

/* Move the calling process into @cg. */
static inline int wi_cpuset_join(const char *cg)
{
	char me[32];

	snprintf(me, sizeof(me), "%d", getpid());
	return wi_cg_write(cg, "cgroup.procs", me);
}

/* Move the calling process back to the root and remove @cg. */
static inline int wi_cpuset_leave_and_remove(const char *cg)
{
	int ret = wi_cpuset_join(WI_CGROUP_ROOT);

	if (rmdir(cg) && !ret)
		ret = -errno;
	return ret;
}

#endif /* CPUSET_UTIL_H */
