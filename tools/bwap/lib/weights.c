// SPDX-License-Identifier: GPL-2.0
/*
 * Canonical weights (BWAP, AAPP): a bandwidth-bound application whose
 * threads run on the worker nodes W streams from every node in parallel.
 * It finishes when the slowest stream does, so node i should hold a share
 * of the pages proportional to the rate at which W can drain it; with
 * every worker reading every page, that rate is bounded by the slowest
 * worker: capacity(i) = min over w in W of bw(i -> w).  Shares are then
 * quantised to the kernel's u8 weights, and DWP can pull pages towards the
 * workers.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bwap.h"

int bwap_canonical_capacity(const struct bwap_matrix *m, bwap_nodeset workers,
			    bwap_nodeset nodes, double *capacity, char *err, size_t errlen)
{
	if (!workers) {
		snprintf(err, errlen, "no worker nodes given; use --workers SET");
		return -1;
	}
	for (int w = 0; w < BWAP_MAX_NODES; w++) {
		if (bwap_nodeset_has(workers, w) && w >= m->nr_nodes) {
			snprintf(err, errlen, "worker node %d is not in the matrix (nodes 0-%d, from %s)",
				 w, m->nr_nodes - 1, m->source);
			return -1;
		}
	}
	for (int i = 0; i < m->nr_nodes; i++) {
		double cap = INFINITY;

		capacity[i] = 0;
		if (!bwap_nodeset_has(nodes, i))
			continue;
		for (int w = 0; w < m->nr_nodes; w++) {
			if (!bwap_nodeset_has(workers, w))
				continue;
			if (m->bw[w][i] < 0) {
				snprintf(err, errlen, "the matrix (%s) has no bandwidth from memory node %d to "
					 "worker node %d; give a full matrix (--matrix FILE, 'bwapctl measure'), "
					 "or --hmat-estimate to guess it from SLIT distances", m->source, i, w);
				return -1;
			}
			if (m->bw[w][i] < cap)
				cap = m->bw[w][i];
		}
		capacity[i] = cap;
	}
	return 0;
}

int bwap_weights_from_capacity(struct bwap_weights *w, const double *capacity, int nr_nodes,
			       bwap_nodeset nodes, char *err, size_t errlen)
{
	double total = 0;

	memset(w, 0, sizeof(*w));
	w->nr_nodes = nr_nodes;
	for (int i = 0; i < nr_nodes; i++) {
		if (!bwap_nodeset_has(nodes, i))
			continue;
		if (capacity[i] < 0) {
			snprintf(err, errlen, "negative capacity %g for node %d", capacity[i], i);
			return -1;
		}
		if (capacity[i] > 0) {
			w->nodes |= BWAP_NODE_BIT(i);
			total += capacity[i];
		}
	}
	if (total <= 0) {
		snprintf(err, errlen, "every node has zero bandwidth to the workers; nothing to weight");
		return -1;
	}
	for (int i = 0; i < nr_nodes; i++)
		w->share[i] = bwap_nodeset_has(w->nodes, i) ? capacity[i] / total : 0;
	return 0;
}

/* Weights for maximum weight M; returns the largest relative error. */
static double quantise_at(struct bwap_weights *w, double smax, int M)
{
	double sum = 0, worst = 0;

	for (int i = 0; i < w->nr_nodes; i++) {
		long q;

		w->w[i] = 0;
		if (!bwap_nodeset_has(w->nodes, i))
			continue;
		q = lround(w->share[i] / smax * M);
		w->w[i] = (unsigned char)(q < 1 ? 1 : q > 255 ? 255 : q);
		sum += w->w[i];
	}
	for (int i = 0; i < w->nr_nodes; i++) {
		w->qshare[i] = sum > 0 ? w->w[i] / sum : 0;
		w->relerr[i] = w->share[i] > 0 ? fabs(w->qshare[i] - w->share[i]) / w->share[i] : 0;
		if (w->relerr[i] > worst)
			worst = w->relerr[i];
	}
	return worst;
}

/*
 * Small weights interleave finely (the kernel places w[i] consecutive pages
 * on node i), so prefer the smallest maximum weight that meets the goal.
 */
void bwap_weights_quantise(struct bwap_weights *w, int max_weight, double goal)
{
	double smax = 0, best_err = INFINITY;
	int best_m = max_weight;

	if (max_weight < 1 || max_weight > 255)
		max_weight = 255;
	for (int i = 0; i < w->nr_nodes; i++)
		if (w->share[i] > smax)
			smax = w->share[i];
	if (smax <= 0)
		return;
	for (int M = 1; M <= max_weight; M++) {
		double e = quantise_at(w, smax, M);

		if (e < best_err - 1e-12) {
			best_err = e;
			best_m = M;
		}
		if (e < goal)
			break;
	}
	w->max_relerr = quantise_at(w, smax, best_m);
}

void bwap_weights_apply_dwp(struct bwap_weights *w, bwap_nodeset workers, double dwp)
{
	double total = 0;

	if (dwp < 0)
		dwp = 0;
	if (dwp > 1)
		dwp = 1;
	for (int i = 0; i < w->nr_nodes; i++) {
		if (!bwap_nodeset_has(w->nodes, i))
			continue;
		if (!bwap_nodeset_has(workers, i))
			w->share[i] *= 1 - dwp;
		if (w->share[i] <= 0) {
			w->share[i] = 0;
			w->nodes &= ~BWAP_NODE_BIT(i);
		}
		total += w->share[i];
	}
	for (int i = 0; i < w->nr_nodes; i++)
		if (total > 0)
			w->share[i] /= total;
}

void bwap_weights_print(const struct bwap_weights *w, FILE *f)
{
	int first = 1;

	fprintf(f, "%-5s %9s %7s %11s %9s\n", "node", "share %", "weight", "weight %", "q-err %");
	for (int i = 0; i < w->nr_nodes; i++) {
		if (!bwap_nodeset_has(w->nodes, i))
			continue;
		fprintf(f, "%-5d %9.2f %7u %11.2f %9.3f\n", i, 100 * w->share[i], w->w[i],
			100 * w->qshare[i], 100 * w->relerr[i]);
	}
	fprintf(f, "weights:");
	for (int i = 0; i < w->nr_nodes; i++) {
		fprintf(f, "%s%u", first ? " " : ",", bwap_nodeset_has(w->nodes, i) ? w->w[i] : 0);
		first = 0;
	}
	fprintf(f, "\nlargest quantisation error: %.3f%% of a node's share (goal < 0.5%%)\n",
		100 * w->max_relerr);
}

void bwap_weights_to_dist(const struct bwap_weights *w, double *dist)
{
	for (int i = 0; i < BWAP_MAX_NODES; i++)
		dist[i] = i < w->nr_nodes && bwap_nodeset_has(w->nodes, i) ? w->qshare[i] : 0;
}
