// SPDX-License-Identifier: GPL-2.0
/*
 * Bandwidth matrices and where they come from:
 *  - the bwap-matrix text format (documented in README.md and bwapctl(1));
 *  - Intel MLC "--bandwidth_matrix" output, as MLC prints it;
 *  - a topologies/NAME.topo file of this repository (the figures QEMU's HMAT
 *    was built from);
 *  - HMAT as sysfs shows it, which is incomplete (see bwap_matrix_from_hmat).
 * Every source fills bw[cpu node][memory node] in MB/s (10^6 bytes/s).
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwap.h"

void bwap_matrix_init(struct bwap_matrix *m, int nr_nodes)
{
	memset(m, 0, sizeof(*m));
	m->nr_nodes = nr_nodes;
	for (int i = 0; i < BWAP_MAX_NODES; i++)
		for (int j = 0; j < BWAP_MAX_NODES; j++)
			m->bw[i][j] = m->lat[i][j] = -1;
}

/* Factor from a unit name to MB/s; 0 if unknown. */
static double unit_factor(const char *u)
{
	if (!strcasecmp(u, "MB/s") || !strcasecmp(u, "MB/sec"))
		return 1;
	if (!strcasecmp(u, "MiB/s"))
		return 1.048576;
	if (!strcasecmp(u, "GB/s"))
		return 1000;
	if (!strcasecmp(u, "GiB/s"))
		return 1073.741824;
	return 0;
}

/* Next line of text into line (without newline); returns 0 at the end. */
static int next_line(const char **pos, char *line, size_t len, int *lineno)
{
	const char *p = *pos, *e;
	size_t n;

	if (!*p)
		return 0;
	e = strchr(p, '\n');
	n = e ? (size_t)(e - p) : strlen(p);
	if (n >= len)
		n = len - 1;
	memcpy(line, p, n);
	line[n] = '\0';
	if (n && line[n - 1] == '\r')
		line[n - 1] = '\0';
	*pos = e ? e + 1 : p + strlen(p);
	(*lineno)++;
	return 1;
}

/*
 * Parse up to max values after "KEY N:" into v; "-" is unknown (-1).  scale
 * multiplies numbers; suffix K/M/G (powers of 1024) applies when allow_suffix.
 * Returns how many values were read, or -1 with err set.
 */
static int parse_row(const char *p, double *v, int max, double scale, int allow_suffix,
		     int lineno, char *err, size_t errlen)
{
	int n = 0;

	while (*p) {
		char *end;
		double x;

		while (isspace((unsigned char)*p))
			p++;
		if (!*p || *p == '#')
			break;
		if (n >= max) {
			snprintf(err, errlen, "line %d: more than %d values", lineno, max);
			return -1;
		}
		if (*p == '-' && (!p[1] || isspace((unsigned char)p[1]))) {
			v[n++] = -1;
			p++;
			continue;
		}
		errno = 0;
		x = strtod(p, &end);
		if (end == p || x < 0) {
			snprintf(err, errlen, "line %d: '%.20s' is not a non-negative number or '-'", lineno, p);
			return -1;
		}
		/* inf, nan and overflows such as 1e400 would become shares of nan */
		if (!isfinite(x) || (errno == ERANGE && x > 1)) {
			snprintf(err, errlen, "line %d: '%.*s' is not a finite number", lineno,
				 (int)(end - p < 20 ? end - p : 20), p);
			return -1;
		}
		if (allow_suffix && (*end == 'K' || *end == 'M' || *end == 'G')) {
			x *= *end == 'K' ? 1024.0 : *end == 'M' ? 1048576.0 : 1073741824.0;
			end++;
		}
		if (*end && !isspace((unsigned char)*end)) {
			snprintf(err, errlen, "line %d: junk after number: '%.20s'", lineno, end);
			return -1;
		}
		if (!isfinite(x * scale)) {
			snprintf(err, errlen, "line %d: '%.20s' is too large", lineno, p);
			return -1;
		}
		v[n++] = x * scale;
		p = end;
	}
	return n;
}

int bwap_matrix_parse_text(struct bwap_matrix *m, const char *text, char *err, size_t errlen)
{
	const char *pos = text;
	char line[4096];
	int lineno = 0, seen_magic = 0, have_nodes = 0;
	double factor = 1;

	bwap_matrix_init(m, 0);
	while (next_line(&pos, line, sizeof(line), &lineno)) {
		char *p = line, key[32];
		int id, used;

		while (isspace((unsigned char)*p))
			p++;
		if (!*p || *p == '#')
			continue;
		if (!seen_magic) {
			int ver;

			if (sscanf(p, "bwap-matrix %d", &ver) != 1 || ver != 1) {
				snprintf(err, errlen, "line %d: expected 'bwap-matrix 1' as the first statement",
					 lineno);
				return -1;
			}
			seen_magic = 1;
			continue;
		}
		if (sscanf(p, "unit %31s", key) == 1) {
			factor = unit_factor(key);
			if (!factor) {
				snprintf(err, errlen, "line %d: unknown unit '%s'; use MB/s, MiB/s, GB/s or GiB/s",
					 lineno, key);
				return -1;
			}
			continue;
		}
		if (sscanf(p, "nodes %d", &id) == 1) {
			if (id < 1 || id > BWAP_MAX_NODES) {
				snprintf(err, errlen, "line %d: nodes must be 1..%d", lineno, BWAP_MAX_NODES);
				return -1;
			}
			m->nr_nodes = id;
			have_nodes = 1;
			continue;
		}
		if (sscanf(p, "%31[a-z] %d:%n", key, &id, &used) == 2 &&
		    (!strcmp(key, "bw") || !strcmp(key, "lat") || !strcmp(key, "dist"))) {
			double v[BWAP_MAX_NODES];
			int n, is_bw = !strcmp(key, "bw"), is_dist = !strcmp(key, "dist");

			if (!have_nodes) {
				snprintf(err, errlen, "line %d: 'nodes N' must come before the rows", lineno);
				return -1;
			}
			if (id < 0 || id >= m->nr_nodes) {
				snprintf(err, errlen, "line %d: row for node %d, but nodes is %d", lineno, id,
					 m->nr_nodes);
				return -1;
			}
			n = parse_row(p + used, v, m->nr_nodes, is_bw ? factor : 1, 0, lineno, err, errlen);
			if (n < 0)
				return -1;
			if (n != m->nr_nodes) {
				snprintf(err, errlen, "line %d: %d values, expected %d (one per node; '-' if unknown)",
					 lineno, n, m->nr_nodes);
				return -1;
			}
			for (int j = 0; j < n; j++) {
				if (is_bw)
					m->bw[id][j] = v[j];
				else if (is_dist)
					m->dist[id][j] = v[j] < 0 ? 0 : (int)v[j];
				else
					m->lat[id][j] = v[j];
			}
			m->has_lat |= !is_bw && !is_dist;
			m->has_dist |= is_dist;
			continue;
		}
		snprintf(err, errlen, "line %d: cannot read '%.40s'; see the bwap-matrix format in bwapctl(1)",
			 lineno, p);
		return -1;
	}
	if (!seen_magic || !have_nodes) {
		snprintf(err, errlen, "not a bwap-matrix file: missing 'bwap-matrix 1' or 'nodes N'");
		return -1;
	}
	return 0;
}

/*
 * MLC prints (v3.x):
 *   Measuring Memory Bandwidths between nodes within system
 *   Bandwidths are in MB/sec (1 MB/sec = 1,000,000 Bytes/sec)
 *   ...
 *                   Numa node
 *   Numa node            0       1
 *          0        90935.7 34457.4
 *          1        34387.1 90870.6
 * Rows are the nodes whose CPUs run the threads, columns the memory nodes.
 * Columns of CPU-less nodes appear; their rows do not.  A cell may be "-".
 */
int bwap_matrix_parse_mlc(struct bwap_matrix *m, const char *text, char *err, size_t errlen)
{
	const char *pos = text;
	char line[4096];
	int lineno = 0, cols[BWAP_MAX_NODES], nr_cols = 0, in_table = 0, rows = 0, maxid = -1;
	double factor = 1;

	bwap_matrix_init(m, 0);
	while (next_line(&pos, line, sizeof(line), &lineno)) {
		char *p = line;

		if (strstr(line, "Bandwidths are in MB/sec"))
			factor = 1;
		else if (strstr(line, "Bandwidths are in MiB/sec"))
			factor = 1.048576;
		while (isspace((unsigned char)*p))
			p++;
		if (!in_table) {
			char *q;

			if (strncmp(p, "Numa node", 9))
				continue;
			q = p + 9;
			while (isspace((unsigned char)*q))
				q++;
			if (!*q)	/* the "Numa node" caption above the header */
				continue;
			while (*q) {
				char *end;
				long id = strtol(q, &end, 10);

				if (end == q || id < 0 || id >= BWAP_MAX_NODES || nr_cols >= BWAP_MAX_NODES) {
					snprintf(err, errlen, "MLC line %d: bad column header '%s'", lineno, line);
					return -1;
				}
				cols[nr_cols++] = (int)id;
				if (id > maxid)
					maxid = (int)id;
				q = end;
				while (isspace((unsigned char)*q))
					q++;
			}
			in_table = 1;
			continue;
		}
		{
			double v[BWAP_MAX_NODES];
			char *end;
			long id;
			int n;

			if (!*p)
				break;
			id = strtol(p, &end, 10);
			if (end == p || !isspace((unsigned char)*end))
				break;
			if (id < 0 || id >= BWAP_MAX_NODES) {
				snprintf(err, errlen, "MLC line %d: bad row node %ld", lineno, id);
				return -1;
			}
			n = parse_row(end, v, nr_cols, factor, 0, lineno, err, errlen);
			if (n < 0)
				return -1;
			if (n != nr_cols) {
				snprintf(err, errlen, "MLC line %d: %d values for %d columns", lineno, n, nr_cols);
				return -1;
			}
			for (int j = 0; j < n; j++)
				m->bw[id][cols[j]] = v[j];
			if (id > maxid)
				maxid = (int)id;
			rows++;
		}
	}
	if (!in_table || !rows) {
		snprintf(err, errlen, "no MLC bandwidth matrix found (expected a 'Numa node' header row "
			 "followed by one row per node, as 'mlc --bandwidth_matrix' prints)");
		return -1;
	}
	m->nr_nodes = maxid + 1;
	return 0;
}

int bwap_matrix_parse_topo(struct bwap_matrix *m, const char *text, char *err, size_t errlen)
{
	const char *pos = text;
	char line[4096];
	int lineno = 0, nodes = 0, rows = 0;

	bwap_matrix_init(m, 0);
	while (next_line(&pos, line, sizeof(line), &lineno)) {
		double v[BWAP_MAX_NODES];
		int id, used, n;

		if (sscanf(line, "node %d", &id) == 1) {
			nodes = id + 1 > nodes ? id + 1 : nodes;
			continue;
		}
		if (sscanf(line, "bandwidth %d:%n", &id, &used) == 1 && id >= 0 && id < BWAP_MAX_NODES) {
			/* bytes/s with binary suffixes -> MB/s */
			n = parse_row(line + used, v, BWAP_MAX_NODES, 1e-6, 1, lineno, err, errlen);
			if (n < 0)
				return -1;
			for (int j = 0; j < n; j++)
				m->bw[id][j] = v[j];
			rows++;
		} else if (sscanf(line, "distance %d:%n", &id, &used) == 1 && id >= 0 && id < BWAP_MAX_NODES) {
			n = parse_row(line + used, v, BWAP_MAX_NODES, 1, 0, lineno, err, errlen);
			if (n < 0)
				return -1;
			for (int j = 0; j < n; j++)
				m->dist[id][j] = (int)v[j];
			m->has_dist = 1;
		} else if (sscanf(line, "latency %d:%n", &id, &used) == 1 && id >= 0 && id < BWAP_MAX_NODES) {
			n = parse_row(line + used, v, BWAP_MAX_NODES, 1, 0, lineno, err, errlen);
			if (n < 0)
				return -1;
			for (int j = 0; j < n; j++)
				m->lat[id][j] = v[j];
			m->has_lat = 1;
		}
	}
	if (!rows) {
		snprintf(err, errlen, "topology file has no 'bandwidth' rows (a machine without HMAT)");
		return -1;
	}
	m->nr_nodes = nodes;
	return 0;
}

int bwap_matrix_load(struct bwap_matrix *m, const char *path, char *err, size_t errlen)
{
	char e[256];
	char *text = bwap_read_file(path, NULL);
	int ret;

	if (!text) {
		snprintf(err, errlen, "cannot read matrix file %s: %s", path, strerror(errno));
		return -1;
	}
	if (strstr(text, "bwap-matrix"))
		ret = bwap_matrix_parse_text(m, text, e, sizeof(e));
	else if (strstr(text, "Numa node"))
		ret = bwap_matrix_parse_mlc(m, text, e, sizeof(e));
	else if (strstr(text, "\nbandwidth ") || strstr(text, "\nnode ") || strstr(text, "\ndistance "))
		ret = bwap_matrix_parse_topo(m, text, e, sizeof(e));
	else {
		snprintf(e, sizeof(e), "unknown format: expected a bwap-matrix file, MLC "
			 "--bandwidth_matrix output or a topologies/NAME.topo file");
		ret = -1;
	}
	free(text);
	if (ret) {
		snprintf(err, errlen, "%s: %s", path, e);
		return -1;
	}
	snprintf(m->source, sizeof(m->source), "%s", path);
	return 0;
}

/*
 * HMAT in sysfs.  For every target (memory) node the kernel publishes only
 * the attributes from its *best* initiators: accessN/initiators/ links those
 * initiator nodes and holds one read/write bandwidth and latency.  So:
 *  - bw[c][m] is known exactly for each listed initiator c of m (access1,
 *    CPU initiators, preferred; else access0);
 *  - for any other CPU node c it is only bounded above by that figure;
 *  - the ratio between two remote initiators is not published at all.
 * Without estimate the unknown entries stay unknown (-1) and canonical
 * weights over workers that need them fail with a clear message.  With
 * estimate they are filled as best * SLIT(best, m) / SLIT(c, m), a guess
 * that remote bandwidth falls with distance, and marked as estimates.
 */
int bwap_matrix_from_hmat(struct bwap_matrix *m, const struct bwap_topology *t,
			  int estimate, char *err, size_t errlen)
{
	int any = 0;

	bwap_matrix_init(m, t->nr_nodes);
	for (int a = 0; a < t->nr_nodes; a++)
		for (int b = 0; b < t->nr_nodes; b++) {
			m->dist[a][b] = t->node[a].distance[b];
			m->has_dist |= m->dist[a][b] > 0;
		}
	for (int mem = 0; mem < t->nr_nodes; mem++) {
		const struct bwap_node *n = &t->node[mem];
		const struct bwap_hmat_access *a = n->access[1].present ? &n->access[1] : &n->access[0];
		int best = -1;

		if (!a->present || a->read_bw < 0)
			continue;
		for (int c = 0; c < t->nr_nodes; c++) {
			if (!bwap_nodeset_has(a->initiators, c))
				continue;
			m->bw[c][mem] = a->read_bw * 1.048576;
			if (a->read_lat >= 0) {
				m->lat[c][mem] = a->read_lat;
				m->has_lat = 1;
			}
			if (best < 0)
				best = c;
			any = 1;
		}
		if (!estimate || best < 0)
			continue;
		for (int c = 0; c < t->nr_nodes; c++) {
			int dbest = t->node[best].distance[mem], dc = t->node[c].distance[mem];

			if (m->bw[c][mem] >= 0 || !bwap_nodeset_has(t->has_cpu, c) || dbest <= 0 || dc <= 0)
				continue;
			m->bw[c][mem] = m->bw[best][mem] * dbest / dc;
			if (m->lat[best][mem] >= 0)
				m->lat[c][mem] = m->lat[best][mem] * dc / dbest;
			m->estimated[c][mem] = 1;
		}
	}
	if (!any) {
		snprintf(err, errlen, "no HMAT bandwidth in sysfs (no node*/access*/initiators/read_bandwidth); "
			 "give a matrix with --matrix FILE or measure one with 'bwapctl measure'");
		return -1;
	}
	snprintf(m->source, sizeof(m->source), "HMAT (sysfs)%s", estimate ? ", remote entries estimated from SLIT" : "");
	return 0;
}

void bwap_matrix_write_text(const struct bwap_matrix *m, FILE *f)
{
	fprintf(f, "# bandwidth seen by threads on the row's CPU node reading memory of each\n"
		   "# column's node; '-' = unknown.%s%s\n", m->source[0] ? " Source: " : "", m->source);
	fprintf(f, "bwap-matrix 1\nunit MB/s\nnodes %d\n", m->nr_nodes);
	for (int c = 0; c < m->nr_nodes; c++) {
		int any = 0;

		for (int j = 0; j < m->nr_nodes; j++)
			any |= m->bw[c][j] >= 0;
		if (!any)
			continue;
		fprintf(f, "bw %d:", c);
		for (int j = 0; j < m->nr_nodes; j++) {
			if (m->bw[c][j] < 0)
				fprintf(f, " -");
			else
				fprintf(f, " %.1f", m->bw[c][j]);
		}
		fputc('\n', f);
	}
	if (m->has_dist) {
		for (int c = 0; c < m->nr_nodes; c++) {
			fprintf(f, "dist %d:", c);
			for (int j = 0; j < m->nr_nodes; j++)
				fprintf(f, " %d", m->dist[c][j]);
			fputc('\n', f);
		}
	}
	if (!m->has_lat)
		return;
	for (int c = 0; c < m->nr_nodes; c++) {
		int any = 0;

		for (int j = 0; j < m->nr_nodes; j++)
			any |= m->lat[c][j] >= 0;
		if (!any)
			continue;
		fprintf(f, "lat %d:", c);
		for (int j = 0; j < m->nr_nodes; j++) {
			if (m->lat[c][j] < 0)
				fprintf(f, " -");
			else
				fprintf(f, " %.0f", m->lat[c][j]);
		}
		fputc('\n', f);
	}
}

void bwap_matrix_print(const struct bwap_matrix *m, FILE *f)
{
	int est = 0;

	fprintf(f, "bandwidth MB/s, row = CPU node, column = memory node (%s)\n",
		m->source[0] ? m->source : "unknown source");
	fprintf(f, "%6s", "cpu\\mem");
	for (int j = 0; j < m->nr_nodes; j++)
		fprintf(f, " %9d", j);
	fputc('\n', f);
	for (int c = 0; c < m->nr_nodes; c++) {
		fprintf(f, "%7d", c);
		for (int j = 0; j < m->nr_nodes; j++) {
			if (m->bw[c][j] < 0)
				fprintf(f, " %9s", "-");
			else
				fprintf(f, " %8.0f%c", m->bw[c][j], m->estimated[c][j] ? '~' : ' ');
			est |= m->estimated[c][j];
		}
		fputc('\n', f);
	}
	if (est)
		fprintf(f, "(~ = estimated, not reported by the firmware)\n");
}
