// SPDX-License-Identifier: GPL-2.0
/*
 * The placement model: predicted throughput of a memory-bound workload
 * for a given per-node page distribution, with queueing at memory
 * controllers and on node-to-node paths.  MODEL.md states the equations
 * and the assumptions; this file follows it line by line.
 *
 * Everything here is arithmetic; results are MODELLED, never measured.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bwap.h"

/*
 * Contention knobs (MODEL.md, "Queueing").  A resource at utilisation u
 * adds K * u / (1 - u) ns to the latency of every access through it: +K at
 * 50%, +4K at 80%, +9K at 90%, about the shape of loaded-latency curves of
 * real memory controllers.  Larger K makes placement more latency
 * sensitive and moves the best DWP away from 1; K = 0 leaves only the
 * hard capacity limit.
 */
#define MC_QUEUE_NS 20.0	/* memory controller */
#define LINK_QUEUE_NS 20.0	/* node-to-node path */
#define UTIL_CAP 0.995		/* utilisation is clipped here; the latency is then huge */
#define LINE_BYTES 64.0
/* Unloaded latency when the matrix has none: local, scaled by sqrt(bw ratio). */
#define DEFAULT_LOCAL_NS 80.0

int bwap_machine_from_matrix(struct bwap_machine *mc, const struct bwap_matrix *m,
			     char *err, size_t errlen)
{
	memset(mc, 0, sizeof(*mc));
	mc->nr_nodes = m->nr_nodes;
	/* A CPU node's row must be complete: the model needs every path it may use. */
	for (int c = 0; c < m->nr_nodes; c++) {
		int known = 0, unknown = -1;

		for (int mem = 0; mem < m->nr_nodes; mem++) {
			if (m->bw[c][mem] > 0)
				known++;
			else
				unknown = mem;
		}
		if (known && unknown >= 0) {
			snprintf(err, errlen, "the matrix has no bandwidth from memory node %d to CPU node %d; "
				 "the model needs full rows (try --hmat-estimate or a measured matrix)", unknown, c);
			return -1;
		}
	}
	for (int mem = 0; mem < m->nr_nodes; mem++) {
		double best = 0;

		for (int c = 0; c < m->nr_nodes; c++)
			if (m->bw[c][mem] > best)
				best = m->bw[c][mem];
		if (best <= 0) {
			snprintf(err, errlen, "memory node %d has no bandwidth in the matrix", mem);
			return -1;
		}
		/* The controller delivers at most what its best initiator sees. */
		mc->mc_cap[mem] = best / 1000;
		for (int c = 0; c < m->nr_nodes; c++) {
			double bw = m->bw[c][mem];

			if (bw <= 0) {
				/* a CPU-less row: never a worker, never used */
				mc->bw[c][mem] = 0;
				continue;
			}
			mc->bw[c][mem] = bw / 1000;
			mc->link_cap[mem][c] = c == mem ? INFINITY : bw / 1000;
			if (m->has_lat && m->lat[c][mem] > 0)
				mc->lat[c][mem] = m->lat[c][mem];
			else
				mc->lat[c][mem] = DEFAULT_LOCAL_NS * sqrt(best / bw);
		}
	}
	return 0;
}

static double queue_ns(double k, double u)
{
	if (u <= 0)
		return 0;
	if (u > UTIL_CAP)
		u = UTIL_CAP;
	return k * u / (1 - u);
}

struct state {
	const struct bwap_machine *mc;
	const struct bwap_workload *wl;
	double f[BWAP_MAX_NODES][BWAP_MAX_NODES];	/* f[c][m]: share of c's accesses to m */
	double x[BWAP_MAX_NODES];			/* per-thread rate on node c, GB/s */
	double limit[BWAP_MAX_NODES];			/* per-thread cap on node c */
};

/* Mean latency seen by threads on node c at the current rates, with x[c] = xc. */
static double mean_latency(struct state *s, int c, double xc, double *mc_u, double *link_u)
{
	const struct bwap_machine *mc = s->mc;
	double lat = 0, save = s->x[c];

	s->x[c] = xc;
	for (int m = 0; m < mc->nr_nodes; m++) {
		double load = 0, path, u_mc, u_link = 0;

		if (s->f[c][m] <= 0)
			continue;
		for (int o = 0; o < mc->nr_nodes; o++)
			load += s->wl->threads[o] * s->x[o] * s->f[o][m];
		u_mc = load / mc->mc_cap[m];
		path = s->wl->threads[c] * xc * s->f[c][m];
		if (isfinite(mc->link_cap[m][c]))
			u_link = path / mc->link_cap[m][c];
		lat += s->f[c][m] * (mc->lat[c][m] + queue_ns(MC_QUEUE_NS, u_mc) +
				     queue_ns(LINK_QUEUE_NS, u_link));
		if (mc_u && u_mc > *mc_u)
			*mc_u = u_mc;
		if (link_u && u_link > *link_u)
			*link_u = u_link;
	}
	s->x[c] = save;
	return lat;
}

/*
 * x = min(limit, mlp * 64 B / latency(x)): the left side grows with x, the
 * right side falls, so bisection finds the one crossing.
 */
static double solve_node(struct state *s, int c)
{
	double lo = 0, hi = s->limit[c];

	for (int i = 0; i < 60; i++) {
		double mid = (lo + hi) / 2;
		double lat = mean_latency(s, c, mid, NULL, NULL);

		if (s->wl->mlp * LINE_BYTES / lat > mid)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

void bwap_model_predict(const struct bwap_machine *mc, const struct bwap_workload *wl,
			const double *dist, int first_touch, struct bwap_prediction *out)
{
	struct state s;
	double total_threads = 0, lat_sum = 0, stall_sum = 0;
	int it;

	memset(&s, 0, sizeof(s));
	memset(out, 0, sizeof(*out));
	s.mc = mc;
	s.wl = wl;
	for (int c = 0; c < mc->nr_nodes; c++) {
		double best_lat = INFINITY;

		if (!wl->threads[c])
			continue;
		for (int m = 0; m < mc->nr_nodes; m++) {
			if (first_touch)
				s.f[c][m] = (1 - wl->shared) * (m == c) + wl->shared * (m == wl->first_node);
			else
				s.f[c][m] = dist[m];
			if (mc->lat[c][m] > 0 && mc->lat[c][m] < best_lat)
				best_lat = mc->lat[c][m];
		}
		/* what a thread would do with all its data local and no queueing */
		s.limit[c] = fmin(wl->demand > 0 ? wl->demand : INFINITY, wl->mlp * LINE_BYTES / best_lat);
		s.x[c] = 0;
	}
	/* Gauss-Seidel over worker nodes until the rates settle. */
	for (it = 0; it < 200; it++) {
		double change = 0;

		for (int c = 0; c < mc->nr_nodes; c++) {
			double x;

			if (!wl->threads[c])
				continue;
			x = solve_node(&s, c);
			change = fmax(change, fabs(x - s.x[c]) / fmax(x, 1e-9));
			s.x[c] = x;
		}
		if (change < 1e-7)
			break;
	}
	out->iterations = it + 1;
	for (int c = 0; c < mc->nr_nodes; c++) {
		double lat;

		if (!wl->threads[c])
			continue;
		lat = mean_latency(&s, c, s.x[c], &out->max_mc_util, &out->max_link_util);
		out->throughput += wl->threads[c] * s.x[c];
		total_threads += wl->threads[c];
		lat_sum += wl->threads[c] * s.x[c] * lat;
		stall_sum += wl->threads[c] * (1 - s.x[c] / s.limit[c]);
	}
	out->mean_latency = out->throughput > 0 ? lat_sum / out->throughput : 0;
	out->stall = total_threads > 0 ? stall_sum / total_threads : 0;
}
