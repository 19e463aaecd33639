/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A fake /sys/devices/system/node under a new directory in /tmp, for the
 * tests that read a machine's topology (bwap_topology_read() takes the
 * root): nodes 0..N-1 online with CPUs and memory, CPU n on node n.  Each
 * test adds the files it is about with fake_sysfs_put().
 */
#ifndef BWAP_FAKE_SYSFS_H
#define BWAP_FAKE_SYSFS_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* mkdir -p of PATH's directory part (not its last component). */
static inline int fake_sysfs_mkdirs(char *path)
{
	for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(path, 0755) && errno != EEXIST) {
			*s = '/';
			return -1;
		}
		*s = '/';
	}
	return 0;
}

/* PATH = ROOT/sys/devices/system/node/REL, REL a printf format. */
static inline void fake_sysfs_path(char *path, size_t size, const char *root, const char *rel, va_list ap)
{
	int n = snprintf(path, size, "%s/sys/devices/system/node/", root);

	vsnprintf(path + n, size - n, rel, ap);
}

/* Makes the directory ROOT/sys/devices/system/node/REL and those above it. */
static inline int fake_sysfs_dir(const char *root, const char *rel, ...)
{
	char path[512];
	va_list ap;

	va_start(ap, rel);
	fake_sysfs_path(path, sizeof(path) - 1, root, rel, ap);
	va_end(ap);
	strcat(path, "/");
	return fake_sysfs_mkdirs(path);
}

/* Writes TEXT to ROOT/sys/devices/system/node/REL, making its directories. */
static inline int fake_sysfs_put(const char *root, const char *text, const char *rel, ...)
{
	char path[512];
	va_list ap;
	FILE *f;

	va_start(ap, rel);
	fake_sysfs_path(path, sizeof(path), root, rel, ap);
	va_end(ap);
	if (fake_sysfs_mkdirs(path))
		return -1;
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/*
 * A new root in ROOT (at least 64 bytes) named after TAG, with NODES nodes
 * (1..9); 0 on success.
 */
static inline int fake_sysfs_new(char *root, size_t size, const char *tag, int nodes)
{
	char all[8], cpu[8];
	int err;

	snprintf(root, size, "/tmp/bwap-test-%s.XXXXXX", tag);
	if (!mkdtemp(root))
		return -1;
	snprintf(all, sizeof(all), "0-%d\n", nodes - 1);
	err = fake_sysfs_put(root, all, "online") | fake_sysfs_put(root, all, "has_cpu") |
	      fake_sysfs_put(root, all, "has_memory");
	for (int n = 0; n < nodes; n++) {
		snprintf(cpu, sizeof(cpu), "%d\n", n);
		err |= fake_sysfs_put(root, cpu, "node%d/cpulist", n);
	}
	return err ? -1 : 0;
}

/* Removes the whole root; 0 on success. */
static inline int fake_sysfs_remove(const char *root)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	return system(cmd);
}

#endif
