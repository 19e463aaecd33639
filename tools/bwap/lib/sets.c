// SPDX-License-Identifier: GPL-2.0
/*
 * Which worker sets 'bwapctl measure --all-sets' measures.
 *
 * There are 2^n - 1 worker sets over n CPU nodes, too many to measure on a
 * large machine.  BWAP's canonical tuner measures only the sets a rational
 * user would run an application on, and measures one set of each group of
 * sets that the machine's symmetry makes equivalent.  The rule implemented
 * here (our reading of the paper, made exact):
 *
 *  1. Rational: for each size k, keep the sets whose sum of pairwise SLIT
 *     distances is the smallest among all sets of size k, i.e. the most
 *     tightly connected placements.  A user who needs k nodes does not
 *     spread them over far sockets.  Without SLIT, 1 / bandwidth stands in
 *     for distance.  k = 1 keeps every CPU node (each node alone is
 *     rational) and k = n the whole machine.
 *  2. Symmetric sets fold: an automorphism of the machine is a permutation
 *     p of the nodes with dist[p(a)][p(b)] == dist[a][b] for all a, b (and,
 *     when a matrix is given, equal bandwidths within 2%).  Sets S and p(S)
 *     behave alike, so only the lowest-numbered set of each orbit is
 *     measured; its weights map to the others through p.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bwap.h"

#define MAX_SET_NODES 20	/* 2^20 candidate subsets at most */
#define MAX_AUTOMORPHISMS 40320

struct sym {
	int n;
	int nodes[MAX_SET_NODES];	/* the CPU nodes, in id order */
	double d[MAX_SET_NODES][MAX_SET_NODES];
	const struct bwap_matrix *m;
	int perm[MAX_SET_NODES];
	int used[MAX_SET_NODES];
	int (*autos)[MAX_SET_NODES];
	int nr_autos;
};

static int bw_close(double a, double b)
{
	if (a < 0 || b < 0)
		return a < 0 && b < 0;
	return fabs(a - b) <= 0.02 * fmax(a, b);
}

/* Would mapping index a -> perm[a] keep every relation to earlier indexes? */
static int consistent(struct sym *s, int a)
{
	for (int b = 0; b <= a; b++) {
		int pa = s->perm[a], pb = s->perm[b];

		if (s->d[a][b] != s->d[pa][pb] || s->d[b][a] != s->d[pb][pa])
			return 0;
		if (s->m) {
			int na = s->nodes[a], nb = s->nodes[b], npa = s->nodes[pa], npb = s->nodes[pb];

			if (!bw_close(s->m->bw[na][nb], s->m->bw[npa][npb]) ||
			    !bw_close(s->m->bw[nb][na], s->m->bw[npb][npa]))
				return 0;
		}
	}
	return 1;
}

static void search(struct sym *s, int a)
{
	if (s->nr_autos >= MAX_AUTOMORPHISMS)
		return;
	if (a == s->n) {
		memcpy(s->autos[s->nr_autos++], s->perm, sizeof(s->perm));
		return;
	}
	for (int c = 0; c < s->n; c++) {
		if (s->used[c])
			continue;
		s->perm[a] = c;
		if (!consistent(s, a))
			continue;
		s->used[c] = 1;
		search(s, a + 1);
		s->used[c] = 0;
	}
}

/* Index subset (bits over s->nodes) -> node set. */
static bwap_nodeset to_nodeset(const struct sym *s, unsigned long sub)
{
	bwap_nodeset out = 0;

	for (int i = 0; i < s->n; i++)
		if (sub & (1UL << i))
			out |= BWAP_NODE_BIT(s->nodes[i]);
	return out;
}

static unsigned long apply_perm(const int *perm, int n, unsigned long sub)
{
	unsigned long out = 0;

	for (int i = 0; i < n; i++)
		if (sub & (1UL << i))
			out |= 1UL << perm[i];
	return out;
}

static double spread(const struct sym *s, unsigned long sub)
{
	double sum = 0;

	for (int a = 0; a < s->n; a++)
		for (int b = a + 1; b < s->n; b++)
			if ((sub & (1UL << a)) && (sub & (1UL << b)))
				sum += s->d[a][b] + s->d[b][a];
	return sum;
}

int bwap_rational_sets_raw(int nr_nodes, bwap_nodeset cpu_nodes,
			   int dist[BWAP_MAX_NODES][BWAP_MAX_NODES],
			   const struct bwap_matrix *m, struct bwap_set_class *out, int max)
{
	struct sym s;
	int count = 0;
	unsigned char *seen;

	memset(&s, 0, sizeof(s));
	for (int i = 0; i < nr_nodes && s.n < MAX_SET_NODES; i++)
		if (bwap_nodeset_has(cpu_nodes, i))
			s.nodes[s.n++] = i;
	for (int a = 0; a < s.n; a++) {
		for (int b = 0; b < s.n; b++) {
			int na = s.nodes[a], nb = s.nodes[b];

			if (dist && dist[na][nb] > 0)
				s.d[a][b] = dist[na][nb];
			else if (m && m->bw[na][nb] > 0 && m->bw[nb][na] > 0)
				s.d[a][b] = 1e6 / fmin(m->bw[na][nb], m->bw[nb][na]);
			else
				s.d[a][b] = a == b ? 0 : 1;
		}
	}
	s.m = m;
	s.autos = malloc(sizeof(*s.autos) * MAX_AUTOMORPHISMS);
	seen = calloc(1UL << s.n, 1);
	if (!s.autos || !seen) {
		free(s.autos);
		free(seen);
		return -1;
	}
	search(&s, 0);
	for (int k = 1; k <= s.n; k++) {
		double best = INFINITY;

		for (unsigned long sub = 1; sub < (1UL << s.n); sub++)
			if (__builtin_popcountl(sub) == k && k > 1 && spread(&s, sub) < best)
				best = spread(&s, sub);
		for (unsigned long sub = 1; sub < (1UL << s.n) && count < max; sub++) {
			struct bwap_set_class *c;

			if (__builtin_popcountl(sub) != k || seen[sub])
				continue;
			if (k > 1 && spread(&s, sub) > best + 1e-9)
				continue;
			c = &out[count++];
			memset(c, 0, sizeof(*c));
			c->rep = to_nodeset(&s, sub);
			for (int a = 0; a < s.nr_autos; a++) {
				unsigned long img = apply_perm(s.autos[a], s.n, sub);

				if (seen[img])
					continue;
				seen[img] = 1;
				if (c->nr_members < BWAP_MAX_MEMBERS) {
					int j = c->nr_members;

					c->members[j] = to_nodeset(&s, img);
					for (int i = 0; i < BWAP_MAX_NODES; i++)
						c->perm[j][i] = i;
					for (int i = 0; i < s.n; i++)
						c->perm[j][s.nodes[i]] = s.nodes[s.autos[a][i]];
				}
				c->nr_members++;
			}
		}
	}
	free(s.autos);
	free(seen);
	return count;
}

int bwap_rational_sets(const struct bwap_topology *t, const struct bwap_matrix *m,
		       struct bwap_set_class *out, int max)
{
	static int dist[BWAP_MAX_NODES][BWAP_MAX_NODES];
	int have = 0;

	for (int a = 0; a < t->nr_nodes; a++)
		for (int b = 0; b < t->nr_nodes; b++) {
			dist[a][b] = t->node[a].distance[b];
			have |= dist[a][b] > 0;
		}
	return bwap_rational_sets_raw(t->nr_nodes, t->has_cpu, have ? dist : NULL, m, out, max);
}

int bwap_rational_sets_matrix(const struct bwap_matrix *m, struct bwap_set_class *out, int max)
{
	static int dist[BWAP_MAX_NODES][BWAP_MAX_NODES];
	bwap_nodeset cpu = 0;

	for (int c = 0; c < m->nr_nodes; c++)
		for (int i = 0; i < m->nr_nodes; i++) {
			dist[c][i] = m->dist[c][i];
			if (m->bw[c][i] > 0)
				cpu |= BWAP_NODE_BIT(c);
		}
	return bwap_rational_sets_raw(m->nr_nodes, cpu, m->has_dist ? dist : NULL, m, out, max);
}
