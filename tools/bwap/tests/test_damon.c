// SPDX-License-Identifier: GPL-2.0
/*
 * lib/damon.c against a stand-in DAMON admin directory ($BWAP_DAMON_ADMIN)
 * and module directory ($BWAP_SYS_MODULE): what the probe says, what the
 * start, commit, settle check and stop write and in which order of
 * outcomes (the regions are the mappings only, DAMON's numbers of regions
 * untouched; idle between pushes is a pause, or off without the pause
 * file; a quiet pass drains the LRU batches and waits for one more), the
 * rollback when a write fails, the words for pages left off the layout,
 * and the interleave layout of the dests.  The real sysfs files are the guest test's
 * (guest/bwapd-guest-damon, scripts/test-bwapd --damon).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "bwap.h"
#include "tap.h"

static char root[256], admin[300], modules[300];

static void put(const char *rel, const char *text)
{
	char path[700], *s;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", admin, rel);
	for (s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		mkdir(path, 0755);
		*s = '/';
	}
	f = fopen(path, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static const char *get(const char *rel)
{
	static char buf[8][64];
	static int k;
	char path[700], *b = buf[k++ % 8];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", admin, rel);
	b[0] = '\0';
	f = fopen(path, "r");
	if (f) {
		if (!fgets(b, 64, f))
			b[0] = '\0';
		fclose(f);
	}
	b[strcspn(b, "\n")] = '\0';
	return b;
}

#define CTX "kdamonds/0/contexts/0/"
#define SCH CTX "schemes/0/"

/* The files DAMON's sysfs has once nr_kdamonds, nr_contexts and nr_schemes are 1 (with dests: 6.17+). */
static void fake_tree_pause(int dests, int pause)
{
	char cmd[700];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", admin);
	if (system(cmd))
		return;
	static const char *const files[] = {
		"kdamonds/0/contexts/nr_contexts", CTX "operations", CTX "monitoring_attrs/intervals/sample_us",
		CTX "monitoring_attrs/intervals/aggr_us", CTX "monitoring_attrs/intervals/update_us",
		CTX "monitoring_attrs/nr_regions/min", CTX "monitoring_attrs/nr_regions/max",
		CTX "targets/nr_targets", CTX "targets/0/pid_target", CTX "targets/0/regions/nr_regions",
		CTX "schemes/nr_schemes", SCH "action", SCH "apply_interval_us", SCH "access_pattern/sz/min",
		SCH "access_pattern/sz/max", SCH "access_pattern/nr_accesses/min", SCH "access_pattern/nr_accesses/max",
		SCH "access_pattern/age/min", SCH "access_pattern/age/max", SCH "quotas/ms", SCH "quotas/bytes",
		SCH "watermarks/metric",
	};
	char rel[128];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		put(files[i], "0\n");
	/* sysfs makes these when nr_regions and nr_dests are written; the fake has them already */
	for (int i = 0; i < 8; i++) {
		snprintf(rel, sizeof(rel), CTX "targets/0/regions/%d/start", i);
		put(rel, "0\n");
		snprintf(rel, sizeof(rel), CTX "targets/0/regions/%d/end", i);
		put(rel, "0\n");
		if (!dests)
			continue;
		snprintf(rel, sizeof(rel), SCH "dests/%d/id", i);
		put(rel, "0\n");
		snprintf(rel, sizeof(rel), SCH "dests/%d/weight", i);
		put(rel, "0\n");
	}
	put("kdamonds/nr_kdamonds", "0\n");
	put("kdamonds/0/state", "off\n");
	put("kdamonds/0/pid", "-1\n");
	put(SCH "stats/sz_tried", "0\n");
	put(SCH "stats/sz_applied", "0\n");
	put(SCH "stats/nr_applied", "0\n");
	if (dests)
		put(SCH "dests/nr_dests", "0\n");
	if (pause)
		put(CTX "pause", "N\n");
}

/* 7.3's tree: with contexts/0/pause */
static void fake_tree(int dests)
{
	fake_tree_pause(dests, 1);
}

static void damon_stat(const char *on)
{
	char path[700];
	FILE *f;

	snprintf(path, sizeof(path), "%s/damon_stat/parameters", modules);
	mkdir(modules, 0755);
	snprintf(path, sizeof(path), "%s/damon_stat", modules);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/damon_stat/parameters", modules);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/damon_stat/parameters/enabled", modules);
	f = fopen(path, "w");
	if (f) {
		fputs(on, f);
		fclose(f);
	}
}

static struct bwap_weights weights(int nr, const int *w)
{
	struct bwap_weights x = { 0 };

	x.nr_nodes = nr;
	for (int i = 0; i < nr; i++) {
		x.w[i] = w[i];
		if (w[i])
			x.nodes |= BWAP_NODE_BIT(i);
	}
	return x;
}

static void test_probe(void)
{
	char why[512];

	setenv("BWAP_DAMON_ADMIN", "/nonexistent/bwap-damon", 1);
	CHECK(bwap_damon_probe(why, sizeof(why)) == 0 && strstr(why, "CONFIG_DAMON_SYSFS"),
	      "probe: no admin directory: %s", why);
	setenv("BWAP_DAMON_ADMIN", admin, 1);
	fake_tree(1);
	damon_stat("Y\n");
	CHECK(bwap_damon_probe(why, sizeof(why)) == 0 && strstr(why, "held exclusively by damon_stat") &&
	      strstr(why, "damon_stat.enabled=N"), "probe: damon_stat on: %s", why);
	damon_stat("N\n");
	put("kdamonds/nr_kdamonds", "2\n");
	CHECK(bwap_damon_probe(why, sizeof(why)) == 0 && strstr(why, "2 kdamond(s) set up by another program"),
	      "probe: another program's kdamonds are left alone: %s", why);
	fake_tree(0);
	CHECK(bwap_damon_probe(why, sizeof(why)) == 0 && strstr(why, "Linux 6.17+") &&
	      !strcmp(get("kdamonds/nr_kdamonds"), "0"),
	      "probe: no dests/: refused, the trial scheme taken down: %s", why);
	fake_tree(1);
	CHECK(bwap_damon_probe(why, sizeof(why)) == 1 && !strcmp(get("kdamonds/nr_kdamonds"), "0"),
	      "probe: weighted dests: usable, nothing left set up: %s", why);
}

static void test_start_commit_stop(void)
{
	struct bwap_range r[2] = { { 0x10000000, 0x10400000 }, { 0x10400000, 0x10600000 } };
	const int w1[4] = { 4, 2, 1, 1 }, w2[4] = { 5, 0, 3, 1 };
	struct bwap_weights a = weights(4, w1), b = weights(4, w2);
	struct bwap_damon d;
	char err[512], rel[128], why[1024];
	const unsigned long span = 0x600000;
	long moved;
	int ok;

	fake_tree(1);
	put("kdamonds/0/pid", "4242\n");
	ok = !bwap_damon_start(&d, getpid(), r, 2, &a, err, sizeof(err));
	CHECK(ok && d.on && d.kdamond_pid == 4242 && d.can_pause, "start: on, kdamond pid 4242, can pause (%s)",
	      ok ? "" : err);
	snprintf(rel, sizeof(rel), "%d", (int)getpid());
	CHECK(!strcmp(get(CTX "operations"), "vaddr") && !strcmp(get(CTX "targets/0/pid_target"), rel) &&
	      !strcmp(get(SCH "action"), "migrate_hot") && !strcmp(get("kdamonds/0/state"), "update_schemes_stats") &&
	      !strcmp(get(CTX "pause"), "N"),
	      "start: vaddr on our pid, migrate_hot, not paused, state on (then the stats read)");
	/* the two adjacent mappings are one region, nothing else; DAMON's numbers of regions left alone */
	CHECK(!strcmp(get(CTX "targets/0/regions/nr_regions"), "1") &&
	      !strcmp(get(CTX "monitoring_attrs/nr_regions/max"), "0") &&
	      !strcmp(get(CTX "monitoring_attrs/nr_regions/min"), "0") &&
	      strtoul(get(CTX "targets/0/regions/0/start"), NULL, 10) == 0x10000000 &&
	      strtoul(get(CTX "targets/0/regions/0/end"), NULL, 10) == 0x10600000,
	      "start: one region, the joined mappings, no pads; nr_regions min and max as DAMON has them (%s; %s, %s)",
	      get(CTX "targets/0/regions/nr_regions"), get(CTX "monitoring_attrs/nr_regions/min"),
	      get(CTX "monitoring_attrs/nr_regions/max"));
	CHECK(!strcmp(get(SCH "dests/nr_dests"), "4") && !strcmp(get(SCH "dests/0/weight"), "4") &&
	      !strcmp(get(SCH "dests/3/id"), "3") && !strcmp(get(SCH "dests/3/weight"), "1"),
	      "start: dests are the nodes 0-3 with weights 4,2,1,1");

	/* the first pass moves 1024 pages (4 MiB), the second nothing */
	put(SCH "stats/sz_tried", "0\n");
	put(SCH "stats/sz_applied", "4194304\n");
	CHECK(bwap_damon_settled(&d, &moved, err, sizeof(err)) == 0, "settle: pages moved since the last look: not yet");
	snprintf(rel, sizeof(rel), "%lu\n", span * 2);
	put(SCH "stats/sz_tried", rel);
	CHECK(bwap_damon_settled(&d, &moved, err, sizeof(err)) == 0 && d.drained && !strcmp(get(CTX "pause"), "N"),
	      "settle: a quiet pass: the LRU batches drained, one more pass wanted, not paused");
	/* after the drain DAMON moves 16 pages more (batch folios), then a quiet pass */
	put(SCH "stats/sz_applied", "4259840\n");
	snprintf(rel, sizeof(rel), "%lu\n", span * 3);
	put(SCH "stats/sz_tried", rel);
	CHECK(bwap_damon_settled(&d, &moved, err, sizeof(err)) == 0, "settle: pages moved after the drain: not yet");
	snprintf(rel, sizeof(rel), "%lu\n", span * 4);
	put(SCH "stats/sz_tried", rel);
	ok = bwap_damon_settled(&d, &moved, err, sizeof(err));
	CHECK(ok == 1 && moved == 1040 && d.batch_pages == 16 &&
	      !strcmp(get(CTX "pause"), "Y") && !strcmp(get("kdamonds/0/state"), "commit") &&
	      !strcmp(get(SCH "action"), "migrate_hot"),
	      "settle: quiet again: settled, 1040 pages moved (%ld), 16 after the drain (%ld); paused by commit, the "
	      "action stays migrate_hot (%s)", moved, d.batch_pages, get(SCH "action"));
	bwap_damon_off_why(&d, 3, why, sizeof(why));
	CHECK(strstr(why, "16 pages moved only after bwapd drained every CPU's LRU batches") &&
	      strstr(why, "3 pages off its layout") && strstr(why, "not in an LRU batch") &&
	      strstr(why, "GFP_NOWAIT and __GFP_THISNODE"),
	      "the log's words: batch folios said apart, the rest not blamed on LRU batches: %s", why);

	ok = !bwap_damon_commit(&d, r, 2, &b, err, sizeof(err));
	CHECK(ok && !strcmp(get(SCH "dests/nr_dests"), "3") && !strcmp(get(SCH "dests/1/id"), "2") &&
	      !strcmp(get(SCH "dests/1/weight"), "3") && !strcmp(get(CTX "pause"), "N") &&
	      !strcmp(get("kdamonds/0/state"), "update_schemes_stats") && d.applied_at_commit == 4259840 &&
	      !d.drained && !d.batch_pages,
	      "commit: dests 0,2,3 with 5,3,1, pause off, then the stats read after it (%s)", ok ? "" : err);

	/* a commit that fails puts the staged files back: no half goes with a later commit */
	{
		char path[700];

		snprintf(path, sizeof(path), "%s/kdamonds/0/state", admin);
		unlink(path);
		if (symlink("/dev/full", path))
			perror("symlink");
	}
	ok = bwap_damon_commit(&d, r, 2, &a, err, sizeof(err));
	CHECK(ok == -1 && strstr(err, "kdamonds/0/state") && !strcmp(get(SCH "dests/nr_dests"), "3") &&
	      !strcmp(get(SCH "dests/0/weight"), "5") && d.weight[0] == 5,
	      "commit refused: the staged dests are the committed 5,3,1 again (%s)", err);
	{
		char path[700];

		snprintf(path, sizeof(path), "%s/kdamonds/0/state", admin);
		unlink(path);
	}
	put("kdamonds/0/state", "on\n");
	CHECK(!bwap_damon_stop(&d, err, sizeof(err)) && !strcmp(get("kdamonds/0/state"), "off") &&
	      !strcmp(get("kdamonds/nr_kdamonds"), "0") && !d.on,
	      "stop: state off, nr_kdamonds 0");
}

/* A kernel without contexts/0/pause: off between pushes, on again at the next. */
static void test_idle_off(void)
{
	struct bwap_range r = { 0x10000000, 0x10400000 };
	const int w1[2] = { 1, 1 }, w2[2] = { 2, 1 };
	struct bwap_weights a = weights(2, w1), b = weights(2, w2);
	struct bwap_damon d;
	char err[512], rel[64];
	long moved;
	int ok;

	fake_tree_pause(1, 0);
	put("kdamonds/0/pid", "4242\n");
	ok = !bwap_damon_start(&d, getpid(), &r, 1, &a, err, sizeof(err));
	CHECK(ok && !d.can_pause, "no pause file: started, cannot pause (%s)", ok ? "" : err);
	snprintf(rel, sizeof(rel), "%lu\n", 0x400000UL);
	put(SCH "stats/sz_tried", rel);
	bwap_damon_settled(&d, &moved, err, sizeof(err));
	snprintf(rel, sizeof(rel), "%lu\n", 0x800000UL);
	put(SCH "stats/sz_tried", rel);
	put("kdamonds/0/state", "on\n");
	ok = bwap_damon_settled(&d, &moved, err, sizeof(err));
	CHECK(ok == 1 && !strcmp(get("kdamonds/0/state"), "off") &&
	      !strcmp(get(SCH "action"), "migrate_hot") && !strcmp(get("kdamonds/nr_kdamonds"), "1"),
	      "settled without a pause file: the kdamond is off, its tree kept (state %s)", get("kdamonds/0/state"));
	put("kdamonds/0/pid", "-1\n");
	put(SCH "stats/sz_applied", "0\n");
	put(SCH "stats/sz_tried", "0\n");
	ok = !bwap_damon_commit(&d, &r, 1, &b, err, sizeof(err));
	CHECK(ok && !strcmp(get(SCH "dests/0/weight"), "2") && d.applied_at_commit == 0,
	      "the next push turns it on again with the new dests, counting from zero (%s)", ok ? "" : err);
}

/* Pages that go back and forth: after BWAP_DAMON_MAX_PASSES passes bwapd stops waiting, and says why. */
static void test_unsettled(void)
{
	struct bwap_range r = { 0x10000000, 0x10400000 };
	const int w1[2] = { 1, 1 };
	struct bwap_weights a = weights(2, w1);
	struct bwap_damon d;
	char err[512], rel[64], why[1024];
	long moved = -1;
	int i, r1 = 0;

	fake_tree(1);
	put("kdamonds/0/pid", "4242\n");
	bwap_damon_start(&d, getpid(), &r, 1, &a, err, sizeof(err));
	for (i = 1; i <= BWAP_DAMON_MAX_PASSES && !r1; i++) {
		snprintf(rel, sizeof(rel), "%lu\n", i * 0x400000UL);
		put(SCH "stats/sz_tried", rel);
		snprintf(rel, sizeof(rel), "%d\n", i * 2 * 2097152);
		put(SCH "stats/sz_applied", rel);
		r1 = bwap_damon_settled(&d, &moved, err, sizeof(err));
	}
	bwap_damon_off_why(&d, 0, why, sizeof(why));
	CHECK(r1 == 1 && i - 1 == BWAP_DAMON_MAX_PASSES && d.unsettled && strstr(why, "go back and forth") &&
	      !strcmp(get(CTX "pause"), "Y"),
	      "two THPs moved in every pass: bwapd stops waiting after %d passes and pauses DAMON: %s", i - 1, why);
}

static void test_start_rollback(void)
{
	struct bwap_range r = { 0x10000000, 0x10400000 };
	const int w1[2] = { 1, 1 };
	struct bwap_weights a = weights(2, w1);
	struct bwap_damon d;
	char err[512], path[700];

	fake_tree(1);
	put("kdamonds/0/pid", "4242\n");
	snprintf(path, sizeof(path), "%s/" SCH "action", admin);
	unlink(path);
	if (symlink("/dev/full", path))
		perror("symlink");
	CHECK(bwap_damon_start(&d, 1234, &r, 1, &a, err, sizeof(err)) == -1 && strstr(err, "action") &&
	      strstr(err, "No space left on device") && !strcmp(get("kdamonds/nr_kdamonds"), "0") && !d.on,
	      "start failing at the action: nothing stays set up (nr_kdamonds 0): %s", err);
	unlink(path);
	put("kdamonds/nr_kdamonds", "1\n");
	CHECK(bwap_damon_start(&d, 1234, &r, 1, &a, err, sizeof(err)) == -1 && strstr(err, "in use"),
	      "start with a kdamond already there: refused: %s", err);
}

static void test_remove_left(void)
{
	char err[512];

	fake_tree(1);
	put("kdamonds/nr_kdamonds", "1\n");
	put("kdamonds/0/pid", "999\n");
	put(CTX "targets/0/pid_target", "77\n");
	CHECK(bwap_damon_remove_left(4242, 1234, err, sizeof(err)) == 0 && !strcmp(get("kdamonds/nr_kdamonds"), "1"),
	      "a kdamond of another kdamond pid and target is not a killed bwapd's: left alone");
	put("kdamonds/0/pid", "4242\n");
	CHECK(bwap_damon_remove_left(4242, 1234, err, sizeof(err)) == 1 && !strcmp(get("kdamonds/0/state"), "off") &&
	      !strcmp(get("kdamonds/nr_kdamonds"), "0"), "the killed bwapd's kdamond 4242: off and removed");
}

static void test_layout(void)
{
	/* a mapping 18 pages past a 2 MiB boundary; two dests, weights 1,1 */
	unsigned long s = 0x40000000UL + 18 * 4096, pmd = 0x40200000UL;
	struct bwap_range r = { s, s + 1024 * 4096 };
	const int w[2] = { 1, 1 };
	struct bwap_weights a = weights(2, w);
	struct bwap_unit u[3] = {
		{ .addr = s, .pages = 1, .node = 0, .vma = 1, .whole = 1 },		/* ilx s>>12: even */
		{ .addr = s + 4096, .pages = 1, .node = 0, .vma = 1, .whole = 1 },	/* odd: off */
		{ .addr = pmd, .pages = 512, .node = 1, .vma = 1, .whole = 1 },
	};
	struct bwap_unit_list l = { u, 3, 3 };
	struct bwap_damon d = { 0 };
	long now[BWAP_MAX_NODES] = { 0 }, layout[BWAP_MAX_NODES] = { 0 }, off;

	d.nr_dests = 2;
	d.node[0] = 0;
	d.node[1] = 1;
	d.weight[0] = d.weight[1] = 1;
	(void)a;
	off = bwap_damon_layout(&d, &r, 1, &l, now, layout);
	/*
	 * The THP's index is (s >> 12 >> 9) + ((pmd - s) >> 12 >> 9) =
	 * 0x200 + 0 = 512: even, node 0 -- not (pmd >> 21) % 2 = 1, which a
	 * layout that forgot the VMA's start would give.
	 */
	CHECK(off == 513 && layout[0] == 513 && layout[1] == 1 && now[0] == 2 && now[1] == 512,
	      "layout: base pages by page index, the THP by the VMA's index over its order (off %ld, layout %ld,%ld)",
	      off, layout[0], layout[1]);
}

int main(void)
{
	snprintf(root, sizeof(root), "/tmp/bwap-test-damon.%d", (int)getpid());
	snprintf(admin, sizeof(admin), "%s/admin", root);
	snprintf(modules, sizeof(modules), "%s/module", root);
	mkdir(root, 0755);
	setenv("BWAP_SYS_MODULE", modules, 1);
	test_probe();
	test_start_commit_stop();
	test_idle_off();
	test_unsettled();
	test_start_rollback();
	test_remove_left();
	test_layout();
	{
		char cmd[300];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		if (system(cmd))
			fprintf(stderr, "cannot remove %s\n", root);
	}
	return tap_done();
}
