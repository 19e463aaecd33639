// SPDX-License-Identifier: GPL-2.0
/*
 * The weights other tools would pick (lib/peer_weights.c), against values
 * worked out by hand from each tool's rule: upstream 7.3's auto weights
 * (reduce_interleave_weights()) and hmsdk bwactl's (iw_ratio.py), then
 * from the 4-node asymmetric machine as its guest's sysfs and its .topo
 * file give it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwap.h"
#include "fake_sysfs.h"
#include "tap.h"

static int same(const unsigned char *w, const int *want, int n)
{
	for (int i = 0; i < n; i++)
		if (w[i] != want[i])
			return 0;
	return 1;
}

static const char *text(const unsigned char *w, int n)
{
	static char buf[256];
	size_t k = 0;

	for (int i = 0; i < n; i++)
		k += snprintf(buf + k, sizeof(buf) - k, "%s%d", i ? "," : "", w[i]);
	return buf;
}

/* auto: bw[] of nodes 0..n-1, all memory nodes unless mem says otherwise */
static void check_auto(const char *what, const unsigned int *bw, int n, bwap_nodeset mem, const int *want)
{
	unsigned char w[BWAP_MAX_NODES];

	bwap_auto_weights(bw, mem, n, w);
	CHECK(same(w, want, n), "auto: %s -> %s", what, text(w, n));
}

static void test_auto_weights(void)
{
	/* 32 x 20480 / 81920 = 8 each, gcd 8 */
	check_auto("four equal nodes (the 4-node guest's HMAT, 20480 MiB/s each) give 1,1,1,1",
		   (unsigned int[]){ 20480, 20480, 20480, 20480 }, 4, 0xf, (int[]){ 1, 1, 1, 1 });
	/* 32 x 256000 / 320000 = 25.6 -> 25; 32 x 64000 / 320000 = 6.4 -> 6; gcd 1 */
	check_auto("DRAM 256000 + CXL 64000: 25,6 (floor of 32 x bw / sum)",
		   (unsigned int[]){ 256000, 64000 }, 2, 0x3, (int[]){ 25, 6 });
	/* 8, 8, 16 -> gcd 8 */
	check_auto("1000,1000,2000: 8,8,16 reduced by their gcd to 1,1,2",
		   (unsigned int[]){ 1000, 1000, 2000 }, 3, 0x7, (int[]){ 1, 1, 2 });
	/* 32 x 1 = 32 < 1001: 1; 32000 / 1001 = 31.97 -> 31 */
	check_auto("a node whose 32 x bw does not exceed the sum gets 1: 1,1000 -> 1,31",
		   (unsigned int[]){ 1, 1000 }, 2, 0x3, (int[]){ 1, 31 });
	/* bw 0: 1; 160000 / 5000 = 32 */
	check_auto("a node without bandwidth gets 1, the other the maximum: 0,5000 -> 1,32",
		   (unsigned int[]){ 0, 5000 }, 2, 0x3, (int[]){ 1, 32 });
	/* 32 x 2e8 wraps to 2105032704 in 32 bits: / 3e8 = 7; 32 x 1e8 = 3.2e9 fits: / 3e8 = 10 */
	check_auto("32 x bw wraps in 32 bits as in the kernel: 2e8,1e8 -> 7,10 (not 21,10)",
		   (unsigned int[]){ 200000000, 100000000 }, 2, 0x3, (int[]){ 7, 10 });
	/* node 1 has no memory: it is neither summed nor weighted; 32 x 3000 / 4000 = 24, 8 -> 3,1 */
	check_auto("a node without memory is left out of the sum and gets 0: 3000,-,1000 -> 3,0,1",
		   (unsigned int[]){ 3000, 999999, 1000 }, 3, 0x5, (int[]){ 3, 0, 1 });
	check_auto("no bandwidth anywhere: every weight 1, as the kernel's table without HMAT",
		   (unsigned int[]){ 0, 0, 0 }, 3, 0x7, (int[]){ 1, 1, 1 });
}

static void check_hmsdk(const char *what, const double *row, int n, const int *want)
{
	unsigned char w[BWAP_MAX_NODES];
	char err[256] = "";
	int rc = bwap_hmsdk_weights(row, BWAP_NODE_BIT(n) - 1, n, w, err, sizeof(err));

	CHECK(!rc && same(w, want, n), "hmsdk: %s -> %s %s", what, text(w, n), err);
}

static void check_hmsdk_refused(const char *what, const double *row, int n, const char *msg)
{
	unsigned char w[BWAP_MAX_NODES];
	char err[256] = "";
	int rc = bwap_hmsdk_weights(row, BWAP_NODE_BIT(n) - 1, n, w, err, sizeof(err));

	CHECK(rc == -1 && strstr(err, msg), "hmsdk: %s refused: %s", what, err);
}

static void test_hmsdk_weights(void)
{
	/* 11 halvings: 9.77, 4.88, 3.91, 2.44 -> 10,5,4,2 */
	check_hmsdk("20000,10000,8000,5000 halved 11 times to 9.77,4.88,3.91,2.44: 10,5,4,2",
		    (double[]){ 20000, 10000, 8000, 5000 }, 4, (int[]){ 10, 5, 4, 2 });
	/* 15 halvings: 6.10, 1.53 -> 6,2 -> gcd 2 */
	check_hmsdk("DRAM 200000 + CXL 50000: 6.10,1.53 -> 6,2, reduced to 3,1",
		    (double[]){ 200000, 50000 }, 2, (int[]){ 3, 1 });
	/* after 9 halvings 58.59, 1.95; the next would take 1000 to 0.98 <= 1: stop */
	check_hmsdk("30000,1000 stops halving before 1000 falls to 1 or below: 58.59,1.95 -> 59,2",
		    (double[]){ 30000, 1000 }, 2, (int[]){ 59, 2 });
	/* 6.5, 5.5: Python's round() gives 6 and 6 */
	check_hmsdk("13,11 -> 6.5,5.5 rounds half to even as Python does: 6,6 -> 1,1",
		    (double[]){ 13, 11 }, 2, (int[]){ 1, 1 });
	/* int(float()) first: 10.9 -> 10, which is not above 10 */
	check_hmsdk("10.9,3 is cut to 10,3 first, so no halving: 10,3",
		    (double[]){ 10.9, 3 }, 2, (int[]){ 10, 3 });
	check_hmsdk("10,5,5 needs no halving, only the gcd: 2,1,1", (double[]){ 10, 5, 5 }, 3, (int[]){ 2, 1, 1 });
	check_hmsdk_refused("a node without bandwidth (weight 0)", (double[]){ 100, 0 }, 2, "gets weight 0");
	check_hmsdk_refused("1000,1 (no halving possible, weight 1000)", (double[]){ 1000, 1 }, 2,
			    "weight 1000, above the 255");
	check_hmsdk_refused("an unknown entry", (double[]){ 100, -1 }, 2, "no bandwidth to node 1");
}

/* A fake sysfs: 4 nodes, access1 read/write bandwidth of each as given (-1: none). */
static int fake_sysfs(char *root, size_t size, const long *rd, const long *wr)
{
	char v[32];
	int err = fake_sysfs_new(root, size, "peer", 4);

	for (int n = 0; n < 4 && !err; n++) {
		if (rd[n] < 0)
			continue;
		err |= fake_sysfs_dir(root, "node%d/access1/initiators/node%d", n, n);
		snprintf(v, sizeof(v), "%ld\n", rd[n]);
		err |= fake_sysfs_put(root, v, "node%d/access1/initiators/read_bandwidth", n);
		snprintf(v, sizeof(v), "%ld\n", wr[n]);
		err |= fake_sysfs_put(root, v, "node%d/access1/initiators/write_bandwidth", n);
	}
	return err;
}

static void test_from_sysfs(void)
{
	static const struct {
		const char *what;
		long rd[4], wr[4];
		unsigned int bw[4];
		int have, w[4];
	} cases[] = {
		/* QEMU's access-bandwidth sets read and write alike: 20G -> 20480 MiB/s */
		{ "the 4-node asymmetric guest (20480 MiB/s local everywhere): 1,1,1,1",
		  { 20480, 20480, 20480, 20480 }, { 20480, 20480, 20480, 20480 },
		  { 20480, 20480, 20480, 20480 }, 4, { 1, 1, 1, 1 } },
		/* min(read, write): 8000, 4000, 2000, 2000 of 16000 -> 16, 8, 4, 4 -> 4,2,1,1 */
		{ "the smaller of read and write: 8000,4000,2000,2000 -> 4,2,1,1",
		  { 9000, 4000, 2000, 2500 }, { 8000, 4000, 3000, 2000 },
		  { 8000, 4000, 2000, 2000 }, 4, { 4, 2, 1, 1 } },
		/* node 3 has no access1: 0 in the table, weight 1; 32 x 6000 / 12000 = 16 etc. */
		{ "a node without access1 counts 0 and gets 1: 6000,3000,3000,- -> 16,8,8,1",
		  { 6000, 3000, 3000, -1 }, { 6000, 3000, 3000, -1 },
		  { 6000, 3000, 3000, 0 }, 3, { 16, 8, 8, 1 } },
	};

	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct bwap_topology *t = malloc(sizeof(*t));
		unsigned int bw[BWAP_MAX_NODES];
		unsigned char w[BWAP_MAX_NODES];
		char err[512] = "", root[64];
		int made = !fake_sysfs(root, sizeof(root), cases[c].rd, cases[c].wr);
		int have = -1, ok = 0;

		if (t && made && !bwap_topology_read(t, root, err, sizeof(err))) {
			have = bwap_auto_bandwidth_from_hmat(t, bw);
			bwap_auto_weights(bw, t->has_memory, t->nr_nodes, w);
			ok = have == cases[c].have && same(w, cases[c].w, 4);
			for (int i = 0; i < 4; i++)
				ok &= bw[i] == cases[c].bw[i];
		}
		CHECK(ok, "auto from sysfs access1: %s (%d nodes with bandwidth, got %s) %s", cases[c].what, have,
		      text(w, 4), err);
		CHECK(!fake_sysfs_remove(root), "auto from sysfs access1: fake sysfs removed");
		free(t);
	}
}

/* The 4-node machine's own matrix, as bench reads it with --matrix. */
static void test_topo_row(void)
{
	struct bwap_matrix *m = malloc(sizeof(*m));
	unsigned char w[BWAP_MAX_NODES];
	char err[512] = "";

	/*
	 * Row 0 in MB/s: 20G, 10G, 8G, 5G = 21474.8, 10737.4, 8589.9, 5368.7; cut to
	 * 21474, 10737, 8589, 5368 and halved 12 times: 5.24, 2.62, 2.10, 1.31.
	 */
	int ok = m && !bwap_matrix_load(m, test_data("topologies/4node-asymmetric.topo"), err, sizeof(err)) &&
		 !bwap_hmsdk_weights(m->bw[0], 0xf, 4, w, err, sizeof(err));

	CHECK(ok && same(w, (int[]){ 5, 3, 2, 1 }, 4),
	      "hmsdk: the 4-node machine's row 0 (21474,10737,8589,5368 MB/s) gives 5,3,2,1 (%s) %s",
	      ok ? text(w, 4) : "-", err);
	ok = ok && !bwap_hmsdk_weights(m->bw[3], 0xf, 4, w, err, sizeof(err));
	CHECK(ok && same(w, (int[]){ 1, 2, 3, 5 }, 4), "hmsdk: row 3 is the mirror image: 1,2,3,5 (%s) %s",
	      ok ? text(w, 4) : "-", err);
	free(m);
}

int main(void)
{
	test_auto_weights();
	test_hmsdk_weights();
	test_from_sysfs();
	test_topo_row();
	return tap_done();
}
