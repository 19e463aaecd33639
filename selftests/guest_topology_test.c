// SPDX-License-Identifier: GPL-2.0
/*
 * Checks that the emulated machine the guest sees is the one its topology
 * file describes: nodes, CPUs per node, the SLIT distance matrix and the
 * HMAT access bandwidth and latency of every memory node.  Everything else
 * in BWAP trusts the rig, so the rig is tested first.
 */
#include <dirent.h>
#include <limits.h>
#include <sys/stat.h>

#include "../kselftest_harness.h"
#include "numa_util.h"
#include "topology_file.h"

#define NODE_DIR "/sys/devices/system/node"

FIXTURE(guest) {
	struct topo_file topo;
};

FIXTURE_SETUP(guest)
{
	const char *path = getenv("BWAP_TOPOLOGY");
	char err[256];

	ASSERT_NE(NULL, path) TH_LOG("BWAP_TOPOLOGY is not set; run under scripts/run-vm");
	ASSERT_EQ(0, topo_file_read(path, &self->topo, err, sizeof(err))) TH_LOG("%s", err);
	ASSERT_GT(self->topo.nr_nodes, 0);
}

FIXTURE_TEARDOWN(guest) {}

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

TEST_F(guest, online_and_memory_nodes_match)
{
	int ids[WI_MAX_NODES], n, i;

	n = wi_read_node_list(NODE_DIR "/online", ids, WI_MAX_NODES);
	ASSERT_EQ(self->topo.nr_nodes, n);
	for (i = 0; i < n; i++)
		ASSERT_EQ(i, ids[i]);
	n = wi_memory_nodes(ids, WI_MAX_NODES);
	ASSERT_EQ(self->topo.nr_nodes, n);
}

TEST_F(guest, cpus_per_node_match)
{
	int ids[WI_MAX_NODES], node, n, i, next_cpu = 0;
	char path[128];

	/* run-vm hands out CPU ids in node order. */
	for (node = 0; node < self->topo.nr_nodes; node++) {
		snprintf(path, sizeof(path), NODE_DIR "/node%d/cpulist", node);
		n = wi_read_node_list(path, ids, WI_MAX_NODES);
		ASSERT_EQ(self->topo.cpus[node], n) TH_LOG("node %d", node);
		for (i = 0; i < n; i++)
			ASSERT_EQ(next_cpu + i, ids[i]) TH_LOG("node %d cpu %d", node, i);
		next_cpu += n;
	}
}

TEST_F(guest, distance_matrix_matches)
{
	int node, col;
	char path[128];

	for (node = 0; node < self->topo.nr_nodes; node++) {
		FILE *f;

		snprintf(path, sizeof(path), NODE_DIR "/node%d/distance", node);
		f = fopen(path, "r");
		ASSERT_NE(NULL, f);
		for (col = 0; col < self->topo.nr_nodes; col++) {
			int d = -1;

			ASSERT_EQ(1, fscanf(f, "%d", &d));
			EXPECT_EQ(self->topo.distance[node][col], d)
				TH_LOG("distance %d->%d", node, col);
		}
		fclose(f);
	}
}

/*
 * With HMAT, access0 of each memory node reports the performance from the
 * initiator named in its memory proximity domain (itself for a CPU node,
 * initiator= for a CPU-less one).  Without HMAT there is no access0 at all.
 */
TEST_F(guest, hmat_bandwidth_and_latency_match)
{
	int node;
	char path[192];

	for (node = 0; node < self->topo.nr_nodes; node++) {
		int init = self->topo.initiator[node];
		struct stat st;

		snprintf(path, sizeof(path), NODE_DIR "/node%d/access0/initiators", node);
		if (!self->topo.has_hmat) {
			EXPECT_NE(0, stat(path, &st)) TH_LOG("node %d has access0 without HMAT", node);
			continue;
		}
		snprintf(path, sizeof(path),
			 NODE_DIR "/node%d/access0/initiators/node%d", node, init);
		EXPECT_EQ(0, stat(path, &st)) TH_LOG("node %d: initiator node%d not linked", node, init);
		snprintf(path, sizeof(path),
			 NODE_DIR "/node%d/access0/initiators/read_bandwidth", node);
		EXPECT_EQ(self->topo.bandwidth_mib[init][node], read_long(path))
			TH_LOG("node %d read_bandwidth (MiB/s) from initiator %d", node, init);
		snprintf(path, sizeof(path),
			 NODE_DIR "/node%d/access0/initiators/read_latency", node);
		EXPECT_EQ(self->topo.latency_ns[init][node], read_long(path))
			TH_LOG("node %d read_latency (ns) from initiator %d", node, init);
	}
}

TEST_HARNESS_MAIN
