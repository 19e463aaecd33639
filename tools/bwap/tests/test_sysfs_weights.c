// SPDX-License-Identifier: GPL-2.0
/*
 * --apply-sysfs / --restore-sysfs against a stand-in weight directory
 * (BWAP_SYSFS_WEIGHTS), so the host test needs no root; the guest test
 * does the same on the real sysfs files.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "bwap.h"
#include "tap.h"

static int read_int(const char *dir, int node)
{
	char path[512];
	int v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/node%d", dir, node);
	f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

int main(void)
{
	char dir[] = "/tmp/bwap-test-wi.XXXXXX", state[600], path[700], cmd[700], err[512] = "";
	double cap[3] = { 4, 2, 1 };
	struct bwap_weights w;
	int values[3];

	if (!mkdtemp(dir))
		return 1;
	for (int n = 0; n < 3; n++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/node%d", dir, n);
		f = fopen(path, "w");
		fprintf(f, "%d\n", n + 5);
		fclose(f);
	}
	snprintf(state, sizeof(state), "%s/state/sub", dir);
	setenv("BWAP_SYSFS_WEIGHTS", dir, 1);
	bwap_weights_from_capacity(&w, cap, 3, 0x7, err, sizeof(err));
	bwap_weights_quantise(&w, 255, 0.005);
	CHECK(!bwap_sysfs_weights_read(values, 3, 0x7, err, sizeof(err)) && values[0] == 5 && values[2] == 7,
	      "read: the table as it is");
	CHECK(!bwap_sysfs_weights_apply(&w, state, err, sizeof(err)), "apply: writes %s", err);
	CHECK(read_int(dir, 0) == 4 && read_int(dir, 1) == 2 && read_int(dir, 2) == 1, "apply: table is 4,2,1");
	snprintf(path, sizeof(path), "%s/sysfs-weights.saved", state);
	CHECK(access(path, R_OK) == 0, "apply: old table saved in the state dir (created on demand)");
	cap[2] = 4;
	bwap_weights_from_capacity(&w, cap, 3, 0x7, err, sizeof(err));
	bwap_weights_quantise(&w, 255, 0.005);
	CHECK(!bwap_sysfs_weights_apply(&w, state, err, sizeof(err)) && read_int(dir, 2) == 2,
	      "apply again: table is 2,1,2");
	CHECK(!bwap_sysfs_weights_restore(state, err, sizeof(err)), "restore: %s", err);
	CHECK(read_int(dir, 0) == 5 && read_int(dir, 1) == 6 && read_int(dir, 2) == 7,
	      "restore: the table from before the first apply, 5,6,7");
	CHECK(access(path, F_OK) != 0, "restore: saved copy removed");
	CHECK(bwap_sysfs_weights_restore(state, err, sizeof(err)) == -1 && strstr(err, "nothing to restore"),
	      "restore twice: %s", err);
	snprintf(path, sizeof(path), "%s/node1", dir);
	chmod(path, 0444);
	if (geteuid() != 0) {
		CHECK(bwap_sysfs_weights_apply(&w, state, err, sizeof(err)) == -1 && strstr(err, "needs root"),
		      "apply without permission says it needs root: %s", err);
	} else {
		/* root writes read-only files anyway; check the missing-file message instead */
		unlink(path);
		CHECK(bwap_sysfs_weights_apply(&w, state, err, sizeof(err)) == -1 && strstr(err, "Linux < 6.9"),
		      "apply to a missing nodeN file explains it: %s", err);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0, "cleanup");
	return tap_done();
}
