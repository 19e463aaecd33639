// SPDX-License-Identifier: GPL-2.0
/*
 * The global weighted-interleave table in
 * /sys/kernel/mm/mempolicy/weighted_interleave/nodeN (upstream, 1..255).
 * Applying saves the table as it was to STATE_DIR/sysfs-weights.saved the
 * first time, so that --restore-sysfs returns to the table from before
 * bwapctl touched it, however often weights were applied in between.
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

int bwap_sysfs_weights_apply(const struct bwap_weights *w, const char *state_dir,
			     char *err, size_t errlen)
{
	char path[4096];
	FILE *f;

	if (bwap_state_mkdir(state_dir, err, errlen))
		return -1;
	bwap_state_path(state_dir, SAVED_NAME, path, sizeof(path));
	if (access(path, F_OK)) {
		f = fopen(path, "w");
		if (!f) {
			snprintf(err, errlen, "cannot save the old table to %s: %s", path, strerror(errno));
			return -1;
		}
		fprintf(f, "# global weighted-interleave table before bwapctl changed it\n");
		for (int i = 0; i < BWAP_MAX_NODES; i++) {
			int old = read_weight(i);

			if (old > 0)
				fprintf(f, "node%d %d\n", i, old);
		}
		if (fclose(f)) {
			snprintf(err, errlen, "cannot save the old table to %s: %s", path, strerror(errno));
			return -1;
		}
	}
	for (int i = 0; i < w->nr_nodes; i++) {
		if (!bwap_nodeset_has(w->nodes, i))
			continue;
		if (write_weight(i, w->w[i], err, errlen))
			return -1;
	}
	return 0;
}

int bwap_sysfs_weights_restore(const char *state_dir, char *err, size_t errlen)
{
	char path[4096], line[128];
	FILE *f;

	bwap_state_path(state_dir, SAVED_NAME, path, sizeof(path));
	f = fopen(path, "r");
	if (!f) {
		snprintf(err, errlen, "nothing to restore: %s: %s (was --apply-sysfs used with this --state-dir?)",
			 path, strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		int node, weight;

		if (sscanf(line, "node%d %d", &node, &weight) != 2)
			continue;
		if (write_weight(node, weight, err, errlen)) {
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	if (unlink(path)) {
		snprintf(err, errlen, "restored, but cannot remove %s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}
