// SPDX-License-Identifier: GPL-2.0
/*
 * --apply-sysfs / --restore-sysfs against a stand-in weight directory
 * (BWAP_SYSFS_WEIGHTS), so the host test needs no root; the guest test
 * does the same on the real sysfs files.
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
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

static void write_file(const char *dir, const char *name, const char *text)
{
	char path[700];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static char *read_text(const char *dir, const char *name)
{
	char path[700];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return bwap_read_file(path, NULL);
}

static void set_table(const char *dir, int n, const int *v)
{
	for (int i = 0; i < n; i++) {
		char name[16], text[16];

		snprintf(name, sizeof(name), "node%d", i);
		snprintf(text, sizeof(text), "%d\n", v[i]);
		write_file(dir, name, text);
	}
}

/* node2 cannot be written (a directory here): nodes 0 and 1 must get their old weights back. */
static void test_rollback(void)
{
	char dir[] = "/tmp/bwap-test-rb.XXXXXX", state[600], path[700], cmd[700], err[1024] = "";
	const int before[4] = { 5, 6, 7, 8 };
	double cap[4] = { 4, 2, 1, 1 };
	struct bwap_weights w;

	if (!mkdtemp(dir))
		return;
	set_table(dir, 4, before);
	snprintf(path, sizeof(path), "%s/node2", dir);
	unlink(path);
	mkdir(path, 0755);	/* node2 cannot be read: EIO */
	snprintf(state, sizeof(state), "%s/state", dir);
	setenv("BWAP_SYSFS_WEIGHTS", dir, 1);
	bwap_weights_from_capacity(&w, cap, 4, 0xf, err, sizeof(err));
	bwap_weights_quantise(&w, 255, 0.005);
	CHECK(bwap_sysfs_weights_apply(&w, state, err, sizeof(err)) == -1 && strstr(err, "cannot read") &&
	      strstr(err, "nothing was changed") && read_int(dir, 0) == 5,
	      "apply with node2 unreadable changes nothing: %s", err);
	/* node2 reads (zeros) but every write fails with ENOSPC: /dev/full */
	rmdir(path);
	CHECK(symlink("/dev/full", path) == 0, "rollback: node2 -> /dev/full");
	CHECK(bwap_sysfs_weights_apply(&w, state, err, sizeof(err)) == -1 && strstr(err, "node2") &&
	      strstr(err, "No space left on device") && strstr(err, "rolled back"),
	      "apply with node2 unwritable fails and says so: %s", err);
	CHECK(read_int(dir, 0) == 5 && read_int(dir, 1) == 6 && read_int(dir, 3) == 8,
	      "apply: nodes 0, 1 rolled back to 5, 6 and node 3 untouched (got %d,%d,%d)",
	      read_int(dir, 0), read_int(dir, 1), read_int(dir, 3));
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0, "rollback: cleanup");
}

/* Upstream's weighted_interleave/auto (6.16+): saved with the table and put back by restore. */
static void test_auto_mode(void)
{
	char dir[] = "/tmp/bwap-test-auto.XXXXXX", state[600], cmd[700], err[1024] = "", *text;
	const int before[2] = { 3, 1 };
	double cap[2] = { 1, 1 };
	struct bwap_weights w;

	if (!mkdtemp(dir))
		return;
	set_table(dir, 2, before);
	write_file(dir, "auto", "true\n");
	snprintf(state, sizeof(state), "%s/state", dir);
	setenv("BWAP_SYSFS_WEIGHTS", dir, 1);
	bwap_weights_from_capacity(&w, cap, 2, 0x3, err, sizeof(err));
	bwap_weights_quantise(&w, 255, 0.005);
	CHECK(!bwap_sysfs_weights_apply(&w, state, err, sizeof(err)), "auto: apply %s", err);
	text = read_text(state, "sysfs-weights.saved");
	CHECK(text && strstr(text, "node0 3\nnode1 1\n") && strstr(text, "auto true\n"),
	      "auto: the saved table has the weights and 'auto true'");
	free(text);
	/* the kernel leaves auto mode when a node weight is written; the stand-in does not */
	write_file(dir, "auto", "false\n");
	CHECK(!bwap_sysfs_weights_restore(state, err, sizeof(err)), "auto: restore %s", err);
	text = read_text(dir, "auto");
	CHECK(text && !strcmp(text, "true\n"), "auto: restore writes auto back to true (got '%s')",
	      text ? text : "(none)");
	free(text);
	CHECK(read_int(dir, 0) == 3 && read_int(dir, 1) == 1, "auto: restore puts 3,1 back");
	/* a kernel without auto: nothing about it is saved */
	snprintf(cmd, sizeof(cmd), "%s/auto", dir);
	unlink(cmd);
	CHECK(!bwap_sysfs_weights_apply(&w, state, err, sizeof(err)), "no auto: apply %s", err);
	text = read_text(state, "sysfs-weights.saved");
	CHECK(text && !strstr(text, "auto"), "no auto file: the saved table has no auto line");
	free(text);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0, "auto: cleanup");
}

/* A state file is replaced whole or not at all: a write that fails (file size limit) leaves the old one. */
static void test_atomic(void)
{
	char dir[] = "/tmp/bwap-test-atomic.XXXXXX", path[700], cmd[700], err[5000] = "", *text;
	struct bwap_atomic_file af;
	struct rlimit old, lim;
	DIR *d;
	struct dirent *e;
	int files = 0;

	if (!mkdtemp(dir))
		return;
	snprintf(path, sizeof(path), "%s/matrix", dir);
	CHECK(!bwap_atomic_open(&af, path, err, sizeof(err)), "atomic: open %s", err);
	fputs("old\n", af.f);
	CHECK(!bwap_atomic_commit(&af, err, sizeof(err)), "atomic: commit %s", err);
	getrlimit(RLIMIT_FSIZE, &old);
	lim = old;
	lim.rlim_cur = 4096;
	signal(SIGXFSZ, SIG_IGN);
	setrlimit(RLIMIT_FSIZE, &lim);
	CHECK(!bwap_atomic_open(&af, path, err, sizeof(err)), "atomic: open again");
	for (int i = 0; i < 2000; i++)
		fputs("0123456789\n", af.f);
	CHECK(bwap_atomic_commit(&af, err, sizeof(err)) == -1 && strstr(err, "File too large") &&
	      strstr(err, "unchanged"), "atomic: a write past the size limit fails with errno's text: %s", err);
	setrlimit(RLIMIT_FSIZE, &old);
	text = bwap_read_file(path, NULL);
	CHECK(text && !strcmp(text, "old\n"), "atomic: the old file is intact");
	free(text);
	d = opendir(dir);
	while (d && (e = readdir(d)))
		files += e->d_name[0] != '.';
	if (d)
		closedir(d);
	CHECK(files == 1, "atomic: no temporary file left (%d files)", files);
	CHECK(bwap_state_writable(dir, err, sizeof(err)) == 0, "state dir writable: yes");
	CHECK(bwap_state_writable("/proc/self", err, sizeof(err)) == -1 && strstr(err, "cannot write to state directory"),
	      "state dir writable: /proc/self is not: %s", err);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK(system(cmd) == 0, "atomic: cleanup");
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
	/* bwapd's own saved copy: bwapctl's --restore-sysfs never meets it */
	CHECK(!bwap_sysfs_weights_apply_as(&w, state, "bwapd-sysfs-weights.saved", err, sizeof(err)) &&
	      access(path, F_OK) != 0 && read_int(dir, 2) == 2, "apply_as: writes the table, not bwapctl's copy");
	CHECK(bwap_sysfs_weights_restore(state, err, sizeof(err)) == -1 &&
	      !bwap_sysfs_weights_restore_as(state, "bwapd-sysfs-weights.saved", err, sizeof(err)) &&
	      read_int(dir, 0) == 5 && read_int(dir, 2) == 7, "restore_as: its own copy puts back 5,6,7");
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
	test_rollback();
	test_auto_mode();
	test_atomic();
	return tap_done();
}
