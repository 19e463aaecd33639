// SPDX-License-Identifier: GPL-2.0
/* Rational worker sets and symmetry folding on the repository's topologies. */
#include <stdio.h>
#include <string.h>

#include "bwap.h"
#include "tap.h"

static int find(const struct bwap_set_class *c, int n, bwap_nodeset rep)
{
	for (int i = 0; i < n; i++)
		if (c[i].rep == rep)
			return i;
	return -1;
}

static void test_4node(void)
{
	/* topologies/4node-asymmetric.topo */
	static int dist[BWAP_MAX_NODES][BWAP_MAX_NODES] = {
		{ 10, 16, 22, 28 }, { 16, 10, 28, 22 }, { 22, 28, 10, 16 }, { 28, 22, 16, 10 },
	};
	static struct bwap_set_class c[BWAP_MAX_SETS];
	int n = bwap_rational_sets_raw(4, 0xf, dist, NULL, c, BWAP_MAX_SETS), k;

	/*
	 * Automorphisms: identity, (0 1)(2 3), (0 2)(1 3), (0 3)(1 2).  Every
	 * node looks alike; the close pairs {0,1}, {2,3} fold; of the triples
	 * (all spread 16+22+28 = 66) all four fold; then the whole machine.
	 */
	CHECK(n == 4, "4node: 4 classes to measure, not 15 sets (got %d)", n);
	k = find(c, n, 0x1);
	CHECK(k >= 0 && c[k].nr_members == 4, "4node: {0} stands for all 4 single nodes");
	k = find(c, n, 0x3);
	CHECK(k >= 0 && c[k].nr_members == 2 && (c[k].members[1] == 0xc),
	      "4node: {0,1} is the only rational pair class and folds {2,3}");
	CHECK(find(c, n, 0x5) < 0 && find(c, n, 0x9) < 0, "4node: far pairs {0,2}, {0,3} are not rational");
	k = find(c, n, 0x7);
	CHECK(k >= 0 && c[k].nr_members == 4, "4node: one triple class of 4");
	CHECK(find(c, n, 0xf) >= 0, "4node: the whole machine");
	k = find(c, n, 0x3);
	CHECK(k >= 0 && c[k].perm[1][0] == 2 && c[k].perm[1][1] == 3 && c[k].perm[1][2] == 0,
	      "4node: {0,1} -> {2,3} through (0 2)(1 3), so node 2's figure comes from node 0's");
}

static void test_8node(void)
{
	/* topologies/8node-opteron.topo distances */
	static int dist[BWAP_MAX_NODES][BWAP_MAX_NODES] = {
		{ 10, 16, 16, 22, 16, 22, 16, 22 }, { 16, 10, 22, 16, 22, 16, 22, 16 },
		{ 16, 22, 10, 16, 16, 22, 16, 22 }, { 22, 16, 16, 10, 22, 16, 22, 16 },
		{ 16, 22, 16, 22, 10, 16, 16, 22 }, { 22, 16, 22, 16, 16, 10, 22, 16 },
		{ 16, 22, 16, 22, 16, 22, 10, 16 }, { 22, 16, 22, 16, 22, 16, 16, 10 },
	};
	static struct bwap_set_class c[BWAP_MAX_SETS];
	struct bwap_matrix m;
	int n = bwap_rational_sets_raw(8, 0xff, dist, NULL, c, BWAP_MAX_SETS), total = 0;
	char err[256];

	for (int i = 0; i < n; i++)
		total += c[i].nr_members;
	CHECK(n > 0 && n < 255 && total < 255, "8node: %d classes covering %d rational sets of 255", n, total);
	CHECK(find(c, n, 0x55) >= 0, "8node: {0,2,4,6} (pairwise one hop) is a rational 4-set");
	/* With the bandwidth matrix the half-width 0<->6 link breaks some symmetry. */
	bwap_matrix_load(&m, test_data("topologies/8node-opteron.topo"), err, sizeof(err));
	{
		static struct bwap_set_class c2[BWAP_MAX_SETS];
		int n2 = bwap_rational_sets_raw(8, 0xff, dist, &m, c2, BWAP_MAX_SETS), k = find(c2, n2, 0x1);

		CHECK(n2 >= n, "8node+bw: bandwidth asymmetry never folds more (%d >= %d classes)", n2, n);
		CHECK(k >= 0 && c2[k].nr_members < 8, "8node+bw: node 0 no longer stands for all 8 nodes (%d)",
		      k >= 0 ? c2[k].nr_members : -1);
	}
}

int main(void)
{
	test_4node();
	test_8node();
	return tap_done();
}
