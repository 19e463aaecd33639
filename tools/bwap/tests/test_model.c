// SPDX-License-Identifier: GPL-2.0
/* The placement model: its fixed point, its limits, and the DWP optimum it predicts. */
#include <math.h>
#include <string.h>

#include "bwap.h"
#include "tap.h"

static struct bwap_matrix topo(const char *name)
{
	struct bwap_matrix m;
	char path[256], err[256];

	snprintf(path, sizeof(path), "%s/%s.topo", test_data("topologies"), name);
	if (bwap_matrix_load(&m, path, err, sizeof(err)))
		printf("# %s\n", err);
	return m;
}

static void workload(struct bwap_workload *wl, bwap_nodeset workers, int threads, double mlp)
{
	memset(wl, 0, sizeof(*wl));
	for (int i = 0; i < BWAP_MAX_NODES; i++)
		if (bwap_nodeset_has(workers, i))
			wl->threads[i] = threads;
	wl->first_node = __builtin_ctzll(workers);
	wl->mlp = mlp;
	wl->shared = 0.5;
}

static double canonical(const struct bwap_matrix *m, const struct bwap_machine *mc,
			const struct bwap_workload *wl, bwap_nodeset workers, double dwp)
{
	struct bwap_weights w;
	struct bwap_prediction p;
	double cap[BWAP_MAX_NODES], dist[BWAP_MAX_NODES];
	char err[256];

	bwap_canonical_capacity(m, workers, (1ULL << m->nr_nodes) - 1, cap, err, sizeof(err));
	bwap_weights_from_capacity(&w, cap, m->nr_nodes, (1ULL << m->nr_nodes) - 1, err, sizeof(err));
	bwap_weights_apply_dwp(&w, workers, dwp);
	bwap_weights_quantise(&w, 255, 0.005);
	bwap_weights_to_dist(&w, dist);
	bwap_model_predict(mc, wl, dist, 0, &p);
	return p.throughput;
}

static void test_fixed_point_one_node(void)
{
	struct bwap_matrix m;
	struct bwap_machine mc;
	struct bwap_workload wl;
	struct bwap_prediction p;
	double dist[BWAP_MAX_NODES] = { 1 }, u, lat;
	char err[256];

	bwap_matrix_init(&m, 1);
	m.bw[0][0] = 10000;	/* 10 GB/s */
	m.lat[0][0] = 100;
	m.has_lat = 1;
	bwap_machine_from_matrix(&mc, &m, err, sizeof(err));
	workload(&wl, 0x1, 1, 20);	/* wants 20 * 64 B / 100 ns = 12.8 GB/s */
	bwap_model_predict(&mc, &wl, dist, 0, &p);
	u = p.throughput / 10;
	lat = 100 + 20 * u / (1 - u);
	CHECK(p.throughput < 10 && p.throughput > 5, "one node: throughput %.3f GB/s below the 10 GB/s controller",
	      p.throughput);
	CHECK_NEAR(p.throughput * lat, 20 * 64, 1e-6, "one node: x * latency(x) = mlp * 64 B (Little's law)");
	CHECK_NEAR(p.mean_latency, lat, 1e-6, "one node: reported latency is the queueing latency %.1f ns", lat);
}

static void test_bandwidth_bound(void)
{
	struct bwap_matrix m = topo("8node-opteron");
	struct bwap_machine mc;
	struct bwap_workload wl;
	struct bwap_prediction uni, all;
	double dist[BWAP_MAX_NODES] = { 0 }, canon;
	char err[256];

	bwap_machine_from_matrix(&mc, &m, err, sizeof(err));
	workload(&wl, 0x1, 8, 12);
	dist[0] = 1;
	bwap_model_predict(&mc, &wl, dist, 0, &uni);
	for (int i = 0; i < 8; i++)
		dist[i] = 1.0 / 8;
	bwap_model_predict(&mc, &wl, dist, 0, &all);
	canon = canonical(&m, &mc, &wl, 0x1, 0);
	/* topo files count in GiB/s: 12G = 12.885 GB/s */
	CHECK(uni.throughput < 12 * 1.073741824, "8node: all pages on node 0 stay under its 12 GiB/s controller (%.2f GB/s)",
	      uni.throughput);
	CHECK(uni.max_mc_util < 1 && all.max_mc_util < 1, "8node: no controller above 100%%");
	CHECK(canon > all.throughput && all.throughput > uni.throughput,
	      "8node bandwidth-bound: canonical %.1f > uniform-all %.1f > local-only %.1f GB/s", canon,
	      all.throughput, uni.throughput);
	CHECK(canon < 35 * 1.073741824, "8node: canonical below the 35 GiB/s sum of node 0's inbound paths (%.1f GB/s)",
	      canon);
}

static void test_interior_dwp(void)
{
	struct bwap_matrix m = topo("8node-opteron");
	struct bwap_machine mc;
	struct bwap_workload wl;
	double best = 0, best_dwp = -1, at0, at1;
	char err[256];

	bwap_machine_from_matrix(&mc, &m, err, sizeof(err));
	workload(&wl, 0x1, 8, 3);	/* latency-sensitive preset */
	for (int k = 0; k <= 20; k++) {
		double t = canonical(&m, &mc, &wl, 0x1, k / 20.0);

		if (t > best) {
			best = t;
			best_dwp = k / 20.0;
		}
	}
	at0 = canonical(&m, &mc, &wl, 0x1, 0);
	at1 = canonical(&m, &mc, &wl, 0x1, 1);
	CHECK(best_dwp > 0 && best_dwp < 1, "latency-sensitive: best DWP %.2f is interior", best_dwp);
	CHECK(best > at0 * 1.01 && best > at1 * 1.01,
	      "latency-sensitive: best %.2f beats DWP 0 (%.2f) and DWP 1 (%.2f) by >1%%", best, at0, at1);
	workload(&wl, 0x1, 8, 12);
	CHECK(canonical(&m, &mc, &wl, 0x1, 0) > canonical(&m, &mc, &wl, 0x1, 0.5),
	      "bandwidth-bound: DWP 0.5 loses to canonical");
}

static void test_symmetry(void)
{
	struct bwap_matrix m = topo("4node-asymmetric");
	struct bwap_machine mc;
	struct bwap_workload w0, w1;
	char err[256];

	bwap_machine_from_matrix(&mc, &m, err, sizeof(err));
	workload(&w0, 0x1, 8, 12);
	workload(&w1, 0x2, 8, 12);
	CHECK_NEAR(canonical(&m, &mc, &w0, 0x1, 0), canonical(&m, &mc, &w1, 0x2, 0), 1e-6,
		   "4node: mirror-image worker nodes 0 and 1 predict the same");
}

static void test_incomplete_matrix_refused(void)
{
	struct bwap_matrix m;
	struct bwap_machine mc;
	char err[512] = "";

	bwap_matrix_init(&m, 2);
	m.bw[0][0] = m.bw[1][1] = m.bw[1][0] = 1000;
	CHECK(bwap_machine_from_matrix(&mc, &m, err, sizeof(err)) == -1 &&
	      strstr(err, "no bandwidth from memory node 1 to CPU node 0"), "incomplete row refused: %s", err);
}

int main(void)
{
	test_incomplete_matrix_refused();
	test_fixed_point_one_node();
	test_bandwidth_bound();
	test_interior_dwp();
	test_symmetry();
	return tap_done();
}
