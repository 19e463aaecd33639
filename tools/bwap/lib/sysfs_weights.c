// SPDX-License-Identifier: GPL-2.0
/*
 * The global weighted-interleave table in
 * /sys/kernel/mm/mempolicy/weighted_interleave/nodeN (upstream, 1..255).
 * Applying saves the table as it was to STATE_DIR/sysfs-weights.saved the
 * first time, so that --restore-sysfs returns to the table from before
 * bwapctl touched it, however often weights were applied in between.
 * Kernels with upstream's "auto" mode (weighted_interleave/auto, 6.16+)
 * leave it when a nodeN is written; its old value is saved and restored
 * too.  A table is applied all or nothing: if a write fails, the nodes
 * already written get their old weights back.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bwap.h"

#define SAVED_NAME "sysfs-weights.saved"

static const char *weight_dir(void)
{
	const char *d = getenv("BWAP_SYSFS_WEIGHTS");	/* tests point this elsewhere */

	return d && *d ? d : BWAP_SYSFS_WEIGHTS;
}

static int read_weight(int node)
{
	char path[512], buf[16];
	int fd, len;

	snprintf(path, sizeof(path), "%s/node%d", weight_dir(), node);
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

static int write_weight(int node, int weight, char *err, size_t errlen)
{
	char path[512], buf[16];
	int fd, len = snprintf(buf, sizeof(buf), "%d\n", weight);

	snprintf(path, sizeof(path), "%s/node%d", weight_dir(), node);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0 || write(fd, buf, len) != len) {
		snprintf(err, errlen, "cannot write weight %d to %s: %s%s", weight, path, strerror(errno),
			 errno == EACCES || errno == EPERM ? " (writing the global table needs root)" :
			 errno == ENOENT ? " (kernel without weighted interleave, Linux < 6.9?)" : "");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int bwap_sysfs_weights_read(int *weights, int nr_nodes, bwap_nodeset nodes, char *err, size_t errlen)
{
	for (int i = 0; i < nr_nodes; i++) {
		weights[i] = 0;
		if (!bwap_nodeset_has(nodes, i))
			continue;
		weights[i] = read_weight(i);
		if (weights[i] < 0) {
			snprintf(err, errlen, "cannot read %s/node%d: %s", weight_dir(), i, strerror(-weights[i]));
			return -1;
		}
	}
	return 0;
}

int bwap_sysfs_weights_auto(void)
{
	char path[512], buf[16];
	int fd, len;

	snprintf(path, sizeof(path), "%s/auto", weight_dir());
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	len = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[len > 0 ? len : 0] = '\0';
	return buf[0] == 't' || buf[0] == 'Y' || buf[0] == '1';
}

static int write_auto(int on, char *err, size_t errlen)
{
	char path[512];
	const char *v = on ? "true\n" : "false\n";
	int fd;

	snprintf(path, sizeof(path), "%s/auto", weight_dir());
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0 || write(fd, v, strlen(v)) != (ssize_t)strlen(v)) {
		snprintf(err, errlen, "cannot write %s to %s: %s", on ? "true" : "false", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* Save the table (and auto) as it is now, once: the first apply's "before". */
static int save_table(const char *path, char *err, size_t errlen)
{
	struct bwap_atomic_file af;
	int mode = bwap_sysfs_weights_auto();

	if (bwap_atomic_open(&af, path, err, errlen))
		return -1;
	fprintf(af.f, "# global weighted-interleave table before BWAP (bwapctl or bwapd) changed it\n");
	for (int i = 0; i < BWAP_MAX_NODES; i++) {
		int old = read_weight(i);

		if (old > 0)
			fprintf(af.f, "node%d %d\n", i, old);
	}
	if (mode >= 0)
		fprintf(af.f, "auto %s\n", mode ? "true" : "false");
	return bwap_atomic_commit(&af, err, errlen);
}

int bwap_sysfs_weights_apply(const struct bwap_weights *w, const char *state_dir,
			     char *err, size_t errlen)
{
	return bwap_sysfs_weights_apply_as(w, state_dir, SAVED_NAME, err, errlen);
}

int bwap_sysfs_weights_apply_as(const struct bwap_weights *w, const char *state_dir, const char *saved,
				char *err, size_t errlen)
{
	int old[BWAP_MAX_NODES], done = 0, mode = bwap_sysfs_weights_auto();
	char path[4096], why[1024], bad[1024] = "";

	if (bwap_state_mkdir(state_dir, err, errlen))
		return -1;
	bwap_state_path(state_dir, saved, path, sizeof(path));
	if (access(path, F_OK) && save_table(path, err, errlen))
		return -1;
	for (int i = 0; i < w->nr_nodes; i++) {
		if (!bwap_nodeset_has(w->nodes, i))
			continue;
		old[i] = read_weight(i);
		if (old[i] < 0) {
			snprintf(err, errlen, "cannot read %s/node%d: %s%s; nothing was changed", weight_dir(), i,
				 strerror(-old[i]), old[i] == -ENOENT ?
				 " (kernel without weighted interleave, Linux < 6.9?)" : "");
			return -1;
		}
	}
	for (int i = 0; i < w->nr_nodes; i++) {
		if (!bwap_nodeset_has(w->nodes, i))
			continue;
		if (write_weight(i, w->w[i], why, sizeof(why)))
			goto rollback;
		done = i + 1;
	}
	return 0;

rollback:
	for (int i = 0; i < done; i++) {
		char e2[512];

		if (bwap_nodeset_has(w->nodes, i) && write_weight(i, old[i], e2, sizeof(e2)))
			snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), "%s%d", bad[0] ? "," : "", i);
	}
	if (mode == 1 && write_auto(1, why + strlen(why), sizeof(why) - strlen(why)))
		snprintf(bad + strlen(bad), sizeof(bad) - strlen(bad), "%sauto", bad[0] ? "," : "");
	if (bad[0])
		snprintf(err, errlen, "%s; rolling back failed too for node %s: check %s by hand", why, bad,
			 weight_dir());
	else
		snprintf(err, errlen, "%s; nothing was changed (%s rolled back)", why,
			 done ? "the nodes written before it were" : "no node had been written");
	return -1;
}

int bwap_sysfs_weights_restore(const char *state_dir, char *err, size_t errlen)
{
	return bwap_sysfs_weights_restore_as(state_dir, SAVED_NAME, err, errlen);
}

int bwap_sysfs_weights_restore_as(const char *state_dir, const char *saved, char *err, size_t errlen)
{
	int auto_mode = -1;
	char path[4096], line[128];
	FILE *f;

	bwap_state_path(state_dir, saved, path, sizeof(path));
	f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "nothing to restore: %s: %s (was --apply-sysfs used with this --state-dir?)",
			 path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		int node, weight;
		char mode[8];

		if (sscanf(line, "auto %7s", mode) == 1)
			auto_mode = !strcmp(mode, "true");
		if (sscanf(line, "node%d %d", &node, &weight) != 2)
			continue;
		if (write_weight(node, weight, err, errlen)) {
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	/* last: writing a node weight switches auto off again */
	if (auto_mode >= 0 && bwap_sysfs_weights_auto() != auto_mode && write_auto(auto_mode, err, errlen))
		return -1;
	if (unlink(path)) {
		snprintf(err, errlen, "restored, but cannot remove %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}
