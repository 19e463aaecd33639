// SPDX-License-Identifier: GPL-2.0
/* Canonical weights: AAPP Table 1, min over workers, quantisation, DWP. */
#include <math.h>
#include <string.h>

#include "bwap.h"
#include "tap.h"

/* AAPP Table 1: per-node capacity to the workers (GB/s) and the weights (%). */
static const double aapp_cap[8] = { 4.4, 4.2, 1.7, 1.4, 3.3, 2.7, 1.7, 1.4 };
static const double aapp_pct[8] = { 21.2, 20.2, 8.2, 6.7, 15.9, 13.0, 8.2, 6.7 };

static void test_aapp_table1_from_capacities(void)
{
	struct bwap_weights w;
	char err[256];
	int ok = 1;

	CHECK(!bwap_weights_from_capacity(&w, aapp_cap, 8, 0xff, err, sizeof(err)),
	      "aapp: weights from the Table 1 capacities");
	bwap_weights_quantise(&w, 255, 0.005);
	for (int i = 0; i < 8; i++) {
		double pct = 100 * w.qshare[i];

		ok &= CHECK_NEAR(pct, aapp_pct[i], 0.05,
				 "aapp: node %d gets %.2f%%, Table 1 says %.1f%% (within 0.1%%)", i, pct, aapp_pct[i]);
		ok &= CHECK(lround(pct * 10) == lround(aapp_pct[i] * 10),
			    "aapp: node %d rounds to Table 1's %.1f%% exactly", i, aapp_pct[i]);
	}
	CHECK(w.max_relerr < 0.005, "aapp: quantisation error %.4f%% is under 0.5%%", 100 * w.max_relerr);
	CHECK(w.w[0] == 44 && w.w[1] == 42 && w.w[2] == 17 && w.w[3] == 14 && w.w[4] == 33 &&
	      w.w[5] == 27 && w.w[6] == 17 && w.w[7] == 14,
	      "aapp: u8 weights are 44,42,17,14,33,27,17,14 (capacities x 10, the smallest exact set)");
}

/*
 * The same table from a full 8x8 matrix with workers {0,1}: each column's
 * minimum over the two worker rows is the Table 1 capacity, taken from row
 * 0 for some nodes and row 1 for others; other rows must not matter.
 */
static void test_aapp_table1_from_matrix(void)
{
	struct bwap_matrix m;
	struct bwap_weights w;
	double cap[8];
	char err[256];

	bwap_matrix_init(&m, 8);
	for (int c = 0; c < 8; c++)
		for (int i = 0; i < 8; i++)
			m.bw[c][i] = 100;	/* non-workers: fast, and ignored */
	for (int i = 0; i < 8; i++) {
		m.bw[i % 2][i] = aapp_cap[i] * 1000;
		m.bw[1 - i % 2][i] = aapp_cap[i] * 1000 + 700;
	}
	CHECK(!bwap_canonical_capacity(&m, 0x3, 0xff, cap, err, sizeof(err)), "matrix: capacities for workers 0,1");
	for (int i = 0; i < 8; i++)
		CHECK(cap[i] == aapp_cap[i] * 1000, "matrix: capacity of node %d is the min over workers (%.0f)",
		      i, cap[i]);
	bwap_weights_from_capacity(&w, cap, 8, 0xff, err, sizeof(err));
	bwap_weights_quantise(&w, 255, 0.005);
	for (int i = 0; i < 8; i++)
		CHECK_NEAR(100 * w.qshare[i], aapp_pct[i], 0.05, "matrix: node %d at %.1f%% as in Table 1", i,
			   aapp_pct[i]);
}

static void test_unknown_entry_is_an_error(void)
{
	struct bwap_matrix m;
	double cap[4];
	char err[512] = "";

	bwap_matrix_init(&m, 4);
	for (int i = 0; i < 4; i++)
		m.bw[i][i] = 1000;
	strcpy(m.source, "test");
	CHECK(bwap_canonical_capacity(&m, 0x3, 0xf, cap, err, sizeof(err)) == -1,
	      "unknown: a missing bw(0 -> 1) refuses to guess");
	CHECK(strstr(err, "no bandwidth from memory node 0 to worker node 1") != NULL,
	      "unknown: the message names the missing pair: %s", err);
	CHECK(bwap_canonical_capacity(&m, BWAP_NODE_BIT(9), 0xf, cap, err, sizeof(err)) == -1 &&
	      strstr(err, "worker node 9 is not in the matrix"), "unknown: a worker outside the matrix is named");
}

static void test_quantise_prefers_small_weights(void)
{
	double cap[4] = { 10, 10, 5, 5 }, tiny[2] = { 999, 1 };
	struct bwap_weights w;
	char err[64];

	bwap_weights_from_capacity(&w, cap, 4, 0xf, err, sizeof(err));
	bwap_weights_quantise(&w, 255, 0.005);
	CHECK(w.w[0] == 2 && w.w[1] == 2 && w.w[2] == 1 && w.w[3] == 1 && w.max_relerr == 0,
	      "quantise: 10,10,5,5 gives 2,2,1,1 exactly");
	bwap_weights_from_capacity(&w, tiny, 2, 0x3, err, sizeof(err));
	bwap_weights_quantise(&w, 255, 0.005);
	CHECK(w.w[0] == 255 && w.w[1] == 1, "quantise: 999:1 saturates at 255:1");
	CHECK_NEAR(w.max_relerr, fabs(1.0 / 256 - 0.001) / 0.001, 1e-9,
		   "quantise: the error it cannot avoid is reported (%.1f%%)", 100 * w.max_relerr);
	bwap_weights_from_capacity(&w, cap, 4, 0xf, err, sizeof(err));
	bwap_weights_quantise(&w, 1, 0.005);
	CHECK(w.w[0] == 1 && w.w[2] == 1, "quantise: --max-weight 1 is uniform, never 0");
}

static void test_zero_capacity_node_drops_out(void)
{
	double cap[3] = { 4, 0, 2 };
	struct bwap_weights w;
	char err[64];

	bwap_weights_from_capacity(&w, cap, 3, 0x7, err, sizeof(err));
	bwap_weights_quantise(&w, 255, 0.005);
	CHECK(w.nodes == 0x5 && w.w[1] == 0, "zero: a node with no bandwidth gets no weight and leaves the set");
}

static void test_dwp(void)
{
	double cap[4] = { 10, 10, 5, 5 };
	struct bwap_weights w;
	char err[64];

	bwap_weights_from_capacity(&w, cap, 4, 0xf, err, sizeof(err));
	bwap_weights_apply_dwp(&w, 0x3, 0);
	bwap_weights_quantise(&w, 255, 0.005);
	CHECK(w.w[0] == 2 && w.w[2] == 1, "dwp 0: canonical weights unchanged");
	bwap_weights_from_capacity(&w, cap, 4, 0xf, err, sizeof(err));
	bwap_weights_apply_dwp(&w, 0x3, 0.5);
	bwap_weights_quantise(&w, 255, 0.005);
	CHECK(w.w[0] == 4 && w.w[1] == 4 && w.w[2] == 1 && w.w[3] == 1,
	      "dwp 0.5: non-worker shares halved against workers: 4,4,1,1");
	bwap_weights_from_capacity(&w, cap, 4, 0xf, err, sizeof(err));
	bwap_weights_apply_dwp(&w, 0x3, 1);
	bwap_weights_quantise(&w, 255, 0.005);
	CHECK(w.nodes == 0x3 && w.w[0] == 1 && w.w[1] == 1 && w.w[2] == 0,
	      "dwp 1: everything on the workers, non-workers leave the set");
	{
		double c2[4] = { 8, 4, 6, 3 };

		bwap_weights_from_capacity(&w, c2, 4, 0xf, err, sizeof(err));
		bwap_weights_apply_dwp(&w, 0x3, 0.3);
		CHECK_NEAR(w.share[0] / w.share[1], 2, 1e-12, "dwp 0.3: ratio inside the workers kept");
		CHECK_NEAR(w.share[2] / w.share[3], 2, 1e-12, "dwp 0.3: ratio inside the non-workers kept");
		CHECK_NEAR(w.share[2] / w.share[0], 0.75 * 0.7, 1e-12, "dwp 0.3: non-workers scaled by 0.7");
	}
}

int main(void)
{
	test_aapp_table1_from_capacities();
	test_aapp_table1_from_matrix();
	test_unknown_entry_is_an_error();
	test_quantise_prefers_small_weights();
	test_zero_capacity_node_drops_out();
	test_dwp();
	return tap_done();
}
