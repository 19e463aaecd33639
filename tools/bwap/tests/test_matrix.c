// SPDX-License-Identifier: GPL-2.0
/* Matrix sources: bwap-matrix text, MLC output, .topo files, HMAT in a fake sysfs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bwap.h"
#include "fake_sysfs.h"
#include "tap.h"

static void test_mlc(void)
{
	struct bwap_matrix m;
	char err[512] = "";

	CHECK(!bwap_matrix_load(&m, test_data("mlc-8node.txt"), err, sizeof(err)), "mlc: 8-node sample loads %s", err);
	CHECK(m.nr_nodes == 8, "mlc: 8 nodes");
	CHECK(m.bw[0][0] == 11843.2 && m.bw[0][3] == 1912.3 && m.bw[7][6] == 5421.6,
	      "mlc: row = CPU node, column = memory node, MB/s as printed");
	CHECK(!bwap_matrix_load(&m, test_data("mlc-cpuless.txt"), err, sizeof(err)), "mlc: CPU-less sample loads %s", err);
	CHECK(m.nr_nodes == 3 && m.bw[0][2] == 12288.0 && m.bw[1][2] < 0 && m.bw[2][0] < 0,
	      "mlc: '-' cells and the missing row of a CPU-less node are unknown");
	CHECK(bwap_matrix_parse_mlc(&m, "Numa node 0 1\n 0 100\n", err, sizeof(err)) == -1 &&
	      strstr(err, "1 values for 2 columns"), "mlc: a short row is an error: %s", err);
	CHECK(bwap_matrix_parse_mlc(&m, "hello\n", err, sizeof(err)) == -1 && strstr(err, "Numa node"),
	      "mlc: no table says what it looked for");
}

static void test_text(void)
{
	struct bwap_matrix m;
	char err[512] = "";

	CHECK(!bwap_matrix_load(&m, test_data("matrix-4node.txt"), err, sizeof(err)), "text: sample loads %s", err);
	CHECK(m.nr_nodes == 4 && m.bw[0][1] == 10000 && m.bw[3][0] == 5000, "text: GB/s converted to MB/s");
	CHECK(m.has_lat && m.lat[0][3] == 240, "text: latency rows");
	CHECK(bwap_matrix_parse_text(&m, "bwap-matrix 1\nnodes 2\nbw 0: 1 x\n", err, sizeof(err)) == -1 &&
	      strstr(err, "line 3"), "text: a bad number names its line: %s", err);
	CHECK(bwap_matrix_parse_text(&m, "bwap-matrix 1\nnodes 2\nbw 0: 1\n", err, sizeof(err)) == -1 &&
	      strstr(err, "1 values, expected 2"), "text: a short row: %s", err);
	CHECK(bwap_matrix_parse_text(&m, "bwap-matrix 1\nunit furlongs\n", err, sizeof(err)) == -1 &&
	      strstr(err, "unknown unit"), "text: an unknown unit: %s", err);
	CHECK(bwap_matrix_parse_text(&m, "bwap-matrix 1\nnodes 2\nbw 5: 1 2\n", err, sizeof(err)) == -1 &&
	      strstr(err, "row for node 5"), "text: a row outside the nodes: %s", err);
	CHECK(!bwap_matrix_parse_text(&m, "bwap-matrix 1\nnodes 2\nbw 0: 1 -\n", err, sizeof(err)) &&
	      m.bw[0][1] < 0 && m.bw[1][0] < 0, "text: '-' and missing rows are unknown");
	CHECK(!bwap_matrix_parse_text(&m, "bwap-matrix 1\nnodes 2\nbw 0: 1 2\ndist 0: 10 21\n", err, sizeof(err)) &&
	      m.has_dist && m.dist[0][1] == 21 && !m.has_lat, "text: dist rows are SLIT, not latency");
}

static void test_roundtrip(void)
{
	struct bwap_matrix a, b;
	char err[512] = "", *buf;
	size_t len;
	FILE *f;
	int same = 1;

	bwap_matrix_load(&a, test_data("mlc-8node.txt"), err, sizeof(err));
	f = open_memstream(&buf, &len);
	bwap_matrix_write_text(&a, f);
	fclose(f);
	CHECK(!bwap_matrix_parse_text(&b, buf, err, sizeof(err)), "roundtrip: written text parses %s", err);
	for (int i = 0; i < 8; i++)
		for (int j = 0; j < 8; j++)
			same &= a.bw[i][j] == b.bw[i][j];
	CHECK(same && b.nr_nodes == 8, "roundtrip: every entry survives");
	free(buf);
}

static void test_topo(void)
{
	struct bwap_matrix m;
	char err[512] = "";

	CHECK(!bwap_matrix_load(&m, test_data("topologies/4node-asymmetric.topo"), err, sizeof(err)),
	      "topo: 4node-asymmetric loads %s", err);
	CHECK(m.nr_nodes == 4, "topo: 4 nodes");
	CHECK(m.bw[0][0] == 20 * 1073.741824 && m.bw[0][3] == 5 * 1073.741824,
	      "topo: 20G = 20 GiB/s = 21474.8 MB/s");
	CHECK(m.lat[1][2] == 240, "topo: latency rows");
	CHECK(m.has_dist && m.dist[0][3] == 28 && m.dist[2][2] == 10, "topo: SLIT distance rows");
	CHECK(bwap_matrix_load(&m, test_data("topologies/2node-symmetric.topo"), err, sizeof(err)) == -1 &&
	      strstr(err, "no 'bandwidth' rows"), "topo: a machine without HMAT is refused: %s", err);
}

/* A fake /sys/devices/system/node for the 4-node machine, as QEMU's HMAT shows it. */
static int make_fake_sysfs(char *root, size_t size)
{
	static const char *const dist[4] = { "10 16 22 28", "16 10 28 22", "22 28 10 16", "28 22 16 10" };
	char text[128];
	int err = fake_sysfs_new(root, size, "sysfs", 4);

	for (int n = 0; n < 4 && !err; n++) {
		for (int cls = 0; cls < 2; cls++) {
			err |= fake_sysfs_dir(root, "node%d/access%d/initiators/node%d", n, cls, n);
			err |= fake_sysfs_put(root, "20480\n", "node%d/access%d/initiators/read_bandwidth", n, cls);
			err |= fake_sysfs_put(root, "80\n", "node%d/access%d/initiators/read_latency", n, cls);
		}
		snprintf(text, sizeof(text), "%s\n", dist[n]);
		err |= fake_sysfs_put(root, text, "node%d/distance", n);
		snprintf(text, sizeof(text), "Node %d MemTotal:  524288 kB\nNode %d MemFree:  500000 kB\n", n, n);
		err |= fake_sysfs_put(root, text, "node%d/meminfo", n);
	}
	return err;
}

static void test_hmat(void)
{
	struct bwap_topology *t = malloc(sizeof(*t));
	struct bwap_matrix m;
	char err[512] = "", root[64];
	int diag = 1, unknown = 1;

	CHECK(!make_fake_sysfs(root, sizeof(root)) && !bwap_topology_read(t, root, err, sizeof(err)),
	      "hmat: fake sysfs reads %s", err);
	CHECK(t->nr_nodes == 4 && t->has_cpu == 0xf && t->node[2].nr_cpus == 1 && t->node[2].cpus[2],
	      "hmat: 4 nodes, CPU n on node n");
	CHECK(t->node[1].distance[2] == 28 && t->node[3].mem_total_kb == 524288, "hmat: distances and memory");
	CHECK(t->node[0].access[1].present && t->node[0].access[1].initiators == 0x1 &&
	      t->node[0].access[1].read_bw == 20480 && t->node[0].access[0].write_bw == -1,
	      "hmat: access1 initiators and read bandwidth; missing write_bandwidth is -1");
	CHECK(!bwap_matrix_from_hmat(&m, t, 0, err, sizeof(err)), "hmat: matrix from sysfs %s", err);
	for (int c = 0; c < 4; c++)
		for (int i = 0; i < 4; i++) {
			if (c == i)
				diag &= m.bw[c][i] == 20480 * 1.048576;
			else
				unknown &= m.bw[c][i] < 0;
		}
	CHECK(diag, "hmat: each node's best initiator (itself) is known, MiB/s -> MB/s");
	CHECK(unknown, "hmat: every remote pair is unknown - sysfs does not publish it");
	CHECK(!bwap_matrix_from_hmat(&m, t, 1, err, sizeof(err)), "hmat: estimate fills the gaps");
	CHECK(m.estimated[1][0] && m.bw[1][0] == m.bw[0][0] * 10 / 16 && m.lat[3][0] == 80.0 * 28 / 10,
	      "hmat: estimates scale by SLIT distance and are marked");
	CHECK(!fake_sysfs_remove(root), "hmat: fake sysfs removed");
	free(t);
}

int main(void)
{
	test_mlc();
	test_text();
	test_roundtrip();
	test_topo();
	test_hmat();
	return tap_done();
}
