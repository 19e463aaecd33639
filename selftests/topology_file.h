/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reader for the topologies/NAME.topo files run-vm turns into QEMU arguments.
 * The guest gets its topology file at $BWAP_TOPOLOGY so tests can compare
 * what the kernel reports with what was asked for.
 */
#ifndef BWAP_TOPOLOGY_FILE_H
#define BWAP_TOPOLOGY_FILE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOPO_MAX_NODES 16

struct topo_file {
	int nr_nodes;
	int cpus[TOPO_MAX_NODES];		/* vCPUs per node */
	long mem_mib[TOPO_MAX_NODES];
	int initiator[TOPO_MAX_NODES];
	int distance[TOPO_MAX_NODES][TOPO_MAX_NODES];
	int has_hmat;
	/* Access bandwidth in MiB/s and latency in ns, [initiator][target]; -1 unset. */
	long bandwidth_mib[TOPO_MAX_NODES][TOPO_MAX_NODES];
	long latency_ns[TOPO_MAX_NODES][TOPO_MAX_NODES];
};

/* "20G" -> 20480 (MiB/s), "512M" -> 512. */
static inline long topo_size_mib(const char *s)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*end == 'G')
		return v * 1024;
	if (*end == 'M')
		return v;
	if (*end == 'K')
		return v / 1024;
	return v / (1024 * 1024);
}

/* Returns 0, or -1 with a message in @err. */
static inline int topo_file_read(const char *path, struct topo_file *t,
				 char *err, size_t errlen)
{
	char line[512];
	FILE *f = fopen(path, "r");
	int lineno = 0;

	memset(t, 0, sizeof(*t));
	memset(t->bandwidth_mib, 0xff, sizeof(t->bandwidth_mib));
	memset(t->latency_ns, 0xff, sizeof(t->latency_ns));
	if (!f) {
		snprintf(err, errlen, "cannot open %s", path);
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		char *hash = strchr(line, '#'), *kw, *tok, *save;
		int row, col = 0;

		lineno++;
		if (hash)
			*hash = '\0';
		kw = strtok_r(line, " \t\n", &save);
		if (!kw || !strcmp(kw, "name"))
			continue;
		tok = strtok_r(NULL, " \t\n", &save);
		if (!tok)
			goto bad;
		row = atoi(tok);
		if (row < 0 || row >= TOPO_MAX_NODES)
			goto bad;
		if (!strcmp(kw, "node")) {
			t->initiator[row] = row;
			while ((tok = strtok_r(NULL, " \t\n", &save))) {
				if (!strncmp(tok, "cpus=", 5))
					t->cpus[row] = atoi(tok + 5);
				else if (!strncmp(tok, "mem=", 4))
					t->mem_mib[row] = topo_size_mib(tok + 4);
				else if (!strncmp(tok, "initiator=", 10))
					t->initiator[row] = atoi(tok + 10);
			}
			if (row + 1 > t->nr_nodes)
				t->nr_nodes = row + 1;
			continue;
		}
		while ((tok = strtok_r(NULL, " \t\n", &save)) && col < TOPO_MAX_NODES) {
			if (!strcmp(kw, "distance")) {
				t->distance[row][col] = atoi(tok);
			} else if (!strcmp(kw, "bandwidth")) {
				t->bandwidth_mib[row][col] = topo_size_mib(tok);
				t->has_hmat = 1;
			} else if (!strcmp(kw, "latency")) {
				t->latency_ns[row][col] = atol(tok);
			} else {
				goto bad;
			}
			col++;
		}
	}
	fclose(f);
	return 0;
bad:
	snprintf(err, errlen, "%s:%d: cannot parse", path, lineno);
	fclose(f);
	return -1;
}

#endif /* BWAP_TOPOLOGY_FILE_H */
