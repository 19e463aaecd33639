// SPDX-License-Identifier: GPL-2.0
/*
 * The weights a user could pick instead of BWAP's canonical ones, each
 * computed by the rule of the tool that picks them, so that 'bwapctl
 * bench' can place and compare them:
 *  - upstream's auto mode (Linux 6.16+; the rule of 7.3's
 *    reduce_interleave_weights() in mm/mempolicy.c), from each memory
 *    node's bandwidth to its best CPU initiators (HMAT/CDAT access1);
 *  - hmsdk's bwactl.py (SK hynix, tools/iw_ratio.py), from one CPU node's
 *    row of an MLC bandwidth matrix.
 * Both are reimplemented here from their rules, integer for integer.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bwap.h"

static unsigned int gcd_u(unsigned int a, unsigned int b)
{
	while (b) {
		unsigned int t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/*
 * 7.3's reduce_interleave_weights(), in the kernel's own types: the sum is
 * 64-bit, the scaled bandwidth 32-bit unsigned (it wraps as the kernel's
 * does), a node whose scaled bandwidth does not exceed the sum gets 1, and
 * the weights are divided by their greatest common divisor.
 */
void bwap_auto_weights(const unsigned int *bw, bwap_nodeset mem, int nr_nodes, unsigned char *w)
{
	uint64_t sum = 0;
	unsigned int g = 0;

	memset(w, 0, BWAP_MAX_NODES);
	for (int n = 0; n < nr_nodes; n++)
		if (bwap_nodeset_has(mem, n))
			sum += bw[n];
	for (int n = 0; n < nr_nodes; n++) {
		uint32_t scaled;

		if (!bwap_nodeset_has(mem, n))
			continue;
		scaled = (uint32_t)BWAP_AUTO_WEIGHTINESS * bw[n];
		w[n] = bw[n] && sum < scaled ? (unsigned char)(scaled / (uint32_t)sum) : 1;
		if (!g)
			g = w[n];
		g = gcd_u(g, w[n]);
	}
	for (int n = 0; n < nr_nodes; n++)
		if (bwap_nodeset_has(mem, n))
			w[n] /= g;
}

/*
 * What drivers/base/node.c hands mempolicy_set_node_perf(): the access1
 * (ACCESS_COORDINATE_CPU) coordinates of each node, the same numbers as
 * nodeN/access1/initiators/{read,write}_bandwidth, of which the kernel
 * takes the smaller.  Nodes without access1 stay 0, as in the kernel's
 * zeroed node_bw_table.
 */
int bwap_auto_bandwidth_from_hmat(const struct bwap_topology *t, unsigned int *bw)
{
	int n = 0;

	memset(bw, 0, BWAP_MAX_NODES * sizeof(*bw));
	for (int i = 0; i < t->nr_nodes; i++) {
		const struct bwap_hmat_access *a = &t->node[i].access[1];
		long r = a->read_bw > 0 ? a->read_bw : 0, wr = a->write_bw > 0 ? a->write_bw : 0;

		if (!a->present || !bwap_nodeset_has(t->has_memory, i))
			continue;
		bw[i] = (unsigned int)(r < wr ? r : wr);
		n += bw[i] > 0;
	}
	return n;
}

static long gcd_l(long a, long b)
{
	while (b) {
		long t = a % b;

		a = b;
		b = t;
	}
	return a < 0 ? -a : a;
}

/*
 * hmsdk's get_iw_ratio(): the row's MB/s cut to whole numbers (Python's
 * int(float(x))), then all halved together while the largest is above the
 * soft maximum, stopping before a halving that would bring a non-zero
 * value to 1 or below; rounded half to even (Python's round(), which
 * rint() is in the default rounding mode), divided by their gcd.  bwactl
 * then refuses a weight of 0, and the kernel's sysfs a weight above 255.
 */
int bwap_hmsdk_weights(const double *row, bwap_nodeset nodes, int nr_nodes, unsigned char *w,
		       char *err, size_t errlen)
{
	double d[BWAP_MAX_NODES], half[BWAP_MAX_NODES];
	long v[BWAP_MAX_NODES], g = 0;

	int any = 0;

	memset(w, 0, BWAP_MAX_NODES);
	for (int n = 0; n < nr_nodes; n++) {
		if (!bwap_nodeset_has(nodes, n))
			continue;
		any = 1;
		if (!isfinite(row[n]) || row[n] < 0 || row[n] > 1e12) {
			snprintf(err, errlen, "no bandwidth to node %d in the row hmsdk's rule reads", n);
			return -1;
		}
		d[n] = trunc(row[n]);
	}
	if (!any) {
		snprintf(err, errlen, "no memory node to weight");
		return -1;
	}
	for (;;) {
		double max = 0;
		int stop = 0;

		for (int n = 0; n < nr_nodes; n++)
			if (bwap_nodeset_has(nodes, n))
				max = fmax(max, d[n]);
		if (max <= BWAP_HMSDK_SOFT_MAX)
			break;
		for (int n = 0; n < nr_nodes && !stop; n++) {
			if (!bwap_nodeset_has(nodes, n))
				continue;
			half[n] = d[n] / 2;
			stop = half[n] != 0 && half[n] <= 1;
		}
		if (stop)
			break;
		for (int n = 0; n < nr_nodes; n++)
			if (bwap_nodeset_has(nodes, n))
				d[n] = half[n];
	}
	for (int n = 0; n < nr_nodes; n++)
		if (bwap_nodeset_has(nodes, n)) {
			v[n] = (long)rint(d[n]);
			g = gcd_l(g, v[n]);
		}
	for (int n = 0; n < nr_nodes; n++) {
		if (!bwap_nodeset_has(nodes, n))
			continue;
		if (g)
			v[n] /= g;
		if (v[n] == 0) {
			snprintf(err, errlen, "node %d gets weight 0 (no bandwidth from the initiator in the row); "
				 "bwactl refuses that", n);
			return -1;
		}
		if (v[n] > 255) {
			snprintf(err, errlen, "node %d gets weight %ld, above the 255 the kernel's sysfs table "
				 "takes: bwactl's write would fail", n, v[n]);
			return -1;
		}
		w[n] = (unsigned char)v[n];
	}
	return 0;
}
