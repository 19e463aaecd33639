// SPDX-License-Identifier: GPL-2.0
/*
 * The machine as /sys/devices/system/node shows it: nodes, their CPUs and
 * memory, the SLIT distances, and the HMAT performance attributes of both
 * access classes (access0: best initiators of any kind, access1: best CPU
 * initiators).  Printed as a table or as JSON.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "bwap.h"

#define NODE_DIR "sys/devices/system/node"

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	if (!fgets(buf, (int)len, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static long read_long(const char *path)
{
	char buf[64];

	if (read_line(path, buf, sizeof(buf)))
		return -1;
	return strtol(buf, NULL, 10);
}

static int read_nodeset_file(const char *path, bwap_nodeset *s)
{
	char buf[512], err[128];

	*s = 0;
	if (read_line(path, buf, sizeof(buf)))
		return -1;
	if (!buf[0])
		return 0;
	return bwap_nodeset_parse(buf, s, err, sizeof(err));
}

static void read_access(const char *base, int cls, struct bwap_hmat_access *a)
{
	char dir[512], path[600];
	struct dirent *de;
	DIR *d;

	memset(a, 0, sizeof(*a));
	a->read_bw = a->write_bw = a->read_lat = a->write_lat = -1;
	snprintf(dir, sizeof(dir), "%s/access%d/initiators", base, cls);
	d = opendir(dir);
	if (!d)
		return;
	a->present = 1;
	while ((de = readdir(d))) {
		int n;

		if (sscanf(de->d_name, "node%d", &n) == 1 && n >= 0 && n < BWAP_MAX_NODES)
			a->initiators |= BWAP_NODE_BIT(n);
	}
	closedir(d);
	snprintf(path, sizeof(path), "%s/read_bandwidth", dir);
	a->read_bw = read_long(path);
	snprintf(path, sizeof(path), "%s/write_bandwidth", dir);
	a->write_bw = read_long(path);
	snprintf(path, sizeof(path), "%s/read_latency", dir);
	a->read_lat = read_long(path);
	snprintf(path, sizeof(path), "%s/write_latency", dir);
	a->write_lat = read_long(path);
}

static void read_meminfo(const char *base, struct bwap_node *n)
{
	char path[700], line[256];
	FILE *f;

	n->mem_total_kb = n->mem_free_kb = -1;
	snprintf(path, sizeof(path), "%s/meminfo", base);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		int id;
		long long kb;

		if (sscanf(line, "Node %d MemTotal: %lld kB", &id, &kb) == 2)
			n->mem_total_kb = kb;
		else if (sscanf(line, "Node %d MemFree: %lld kB", &id, &kb) == 2)
			n->mem_free_kb = kb;
	}
	fclose(f);
}

int bwap_topology_read(struct bwap_topology *t, const char *root, char *err, size_t errlen)
{
	char dir[512], base[600], path[700], buf[4096];
	int id;

	memset(t, 0, sizeof(*t));
	snprintf(dir, sizeof(dir), "%s/%s", root ? root : "", NODE_DIR);
	snprintf(path, sizeof(path), "%s/online", dir);
	if (read_nodeset_file(path, &t->online)) {
		snprintf(err, errlen, "cannot read %s: %s; is sysfs mounted and NUMA enabled?",
			 path, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/has_cpu", dir);
	read_nodeset_file(path, &t->has_cpu);
	snprintf(path, sizeof(path), "%s/has_memory", dir);
	read_nodeset_file(path, &t->has_memory);
	for (id = 0; id < BWAP_MAX_NODES; id++) {
		struct bwap_node *n = &t->node[id];
		char *tok, *save;

		n->id = id;
		if (!bwap_nodeset_has(t->online, id))
			continue;
		t->nr_nodes = id + 1;
		snprintf(base, sizeof(base), "%s/node%d", dir, id);
		snprintf(path, sizeof(path), "%s/cpulist", base);
		if (!read_line(path, buf, sizeof(buf)))
			n->nr_cpus = bwap_cpulist_parse(buf, n->cpus, BWAP_MAX_CPUS);
		read_meminfo(base, n);
		snprintf(path, sizeof(path), "%s/distance", base);
		if (!read_line(path, buf, sizeof(buf))) {
			/* The distance row lists online nodes in id order. */
			tok = strtok_r(buf, " ", &save);
			for (int m = 0; m < BWAP_MAX_NODES && tok; m++) {
				if (!bwap_nodeset_has(t->online, m))
					continue;
				n->distance[m] = atoi(tok);
				tok = strtok_r(NULL, " ", &save);
			}
		}
		read_access(base, 0, &n->access[0]);
		read_access(base, 1, &n->access[1]);
	}
	return 0;
}

int bwap_topology_cpus_of(const struct bwap_topology *t, bwap_nodeset set, unsigned char *cpus)
{
	int count = 0;

	memset(cpus, 0, BWAP_MAX_CPUS);
	for (int id = 0; id < t->nr_nodes; id++) {
		if (!bwap_nodeset_has(set, id))
			continue;
		for (int c = 0; c < BWAP_MAX_CPUS; c++) {
			if (t->node[id].cpus[c] && !cpus[c]) {
				cpus[c] = 1;
				count++;
			}
		}
	}
	return count;
}

static char *cpus_format(const unsigned char *cpus, char *buf, size_t len)
{
	size_t used = 0;
	int c = 0;

	buf[0] = '\0';
	while (c < BWAP_MAX_CPUS) {
		int start;

		if (!cpus[c]) {
			c++;
			continue;
		}
		start = c;
		while (c + 1 < BWAP_MAX_CPUS && cpus[c + 1])
			c++;
		if (used < len)
			used += snprintf(buf + used, len - used, "%s%d", used ? "," : "", start);
		if (c > start && used < len)
			used += snprintf(buf + used, len - used, "-%d", c);
		c++;
	}
	return buf;
}

static void print_hmat_cell(FILE *f, long v)
{
	if (v < 0)
		fprintf(f, " %9s", "-");
	else
		fprintf(f, " %9ld", v);
}

void bwap_topology_print(const struct bwap_topology *t, FILE *f)
{
	char buf[1024];
	int cls, any_hmat = 0;

	fprintf(f, "kernel: %s\n", bwap_kernel_mode_name(bwap_kernel_mode()));
	fprintf(f, "%-5s %-12s %12s %12s\n", "node", "cpus", "mem MiB", "free MiB");
	for (int id = 0; id < t->nr_nodes; id++) {
		const struct bwap_node *n = &t->node[id];

		if (!bwap_nodeset_has(t->online, id))
			continue;
		fprintf(f, "%-5d %-12s %12lld %12lld\n", id,
			n->nr_cpus ? cpus_format(n->cpus, buf, sizeof(buf)) : "(none)",
			n->mem_total_kb < 0 ? -1 : n->mem_total_kb / 1024,
			n->mem_free_kb < 0 ? -1 : n->mem_free_kb / 1024);
		any_hmat |= n->access[0].present | n->access[1].present;
	}
	fprintf(f, "\ndistances (SLIT):\n%-5s", "node");
	for (int m = 0; m < t->nr_nodes; m++)
		if (bwap_nodeset_has(t->online, m))
			fprintf(f, " %4d", m);
	fputc('\n', f);
	for (int id = 0; id < t->nr_nodes; id++) {
		if (!bwap_nodeset_has(t->online, id))
			continue;
		fprintf(f, "%-5d", id);
		for (int m = 0; m < t->nr_nodes; m++)
			if (bwap_nodeset_has(t->online, m))
				fprintf(f, " %4d", t->node[id].distance[m]);
		fputc('\n', f);
	}
	if (!any_hmat) {
		fprintf(f, "\nHMAT: no performance attributes (no accessN/initiators in sysfs)\n");
		return;
	}
	for (cls = 0; cls < 2; cls++) {
		fprintf(f, "\nHMAT access%d (%s), from each target node's best initiators:\n", cls,
			cls ? "CPU initiators only" : "any initiator");
		fprintf(f, "%-7s %-11s %9s %9s %9s %9s\n", "target", "initiators",
			"rd MiB/s", "wr MiB/s", "rd ns", "wr ns");
		for (int id = 0; id < t->nr_nodes; id++) {
			const struct bwap_hmat_access *a = &t->node[id].access[cls];

			if (!bwap_nodeset_has(t->online, id))
				continue;
			fprintf(f, "%-7d %-11s", id,
				a->present ? bwap_nodeset_format(a->initiators, buf, sizeof(buf)) : "-");
			print_hmat_cell(f, a->read_bw);
			print_hmat_cell(f, a->write_bw);
			print_hmat_cell(f, a->read_lat);
			print_hmat_cell(f, a->write_lat);
			fputc('\n', f);
		}
	}
	fprintf(f, "\nnote: HMAT in sysfs lists only each target's best initiators; bandwidth from\n"
		   "other initiators is not reported (see bwapctl(1), MATRIX SOURCES).\n");
}

/* A count, or null where sysfs does not say (negative). */
static struct json_object *json_count(long v)
{
	return v < 0 ? NULL : json_object_new_int64(v);
}

static struct json_object *json_node_list(bwap_nodeset s)
{
	struct json_object *a = json_object_new_array();

	for (int m = 0; m < BWAP_MAX_NODES; m++)
		if (bwap_nodeset_has(s, m))
			json_object_array_add(a, json_object_new_int(m));
	return a;
}

struct json_object *bwap_topology_json(const struct bwap_topology *t)
{
	struct json_object *root = json_object_new_object(), *nodes = json_object_new_array();

	for (int id = 0; id < t->nr_nodes; id++) {
		const struct bwap_node *n = &t->node[id];
		struct json_object *o, *cpus, *dist;
		char key[16];

		if (!bwap_nodeset_has(t->online, id))
			continue;
		o = json_object_new_object();
		cpus = json_object_new_array();
		dist = json_object_new_object();
		json_object_object_add(o, "id", json_object_new_int(id));
		for (int c = 0; c < BWAP_MAX_CPUS; c++)
			if (n->cpus[c])
				json_object_array_add(cpus, json_object_new_int(c));
		json_object_object_add(o, "cpus", cpus);
		json_object_object_add(o, "mem_total_kb", json_object_new_int64(n->mem_total_kb));
		json_object_object_add(o, "mem_free_kb", json_object_new_int64(n->mem_free_kb));
		for (int m = 0; m < t->nr_nodes; m++) {
			if (!bwap_nodeset_has(t->online, m))
				continue;
			snprintf(key, sizeof(key), "%d", m);
			json_object_object_add(dist, key, json_object_new_int(n->distance[m]));
		}
		json_object_object_add(o, "distance", dist);
		for (int cls = 0; cls < 2; cls++) {
			const struct bwap_hmat_access *a = &n->access[cls];
			struct json_object *acc = NULL;

			if (a->present) {
				acc = json_object_new_object();
				json_object_object_add(acc, "initiators", json_node_list(a->initiators));
				json_object_object_add(acc, "read_bandwidth_mibs", json_count(a->read_bw));
				json_object_object_add(acc, "write_bandwidth_mibs", json_count(a->write_bw));
				json_object_object_add(acc, "read_latency_ns", json_count(a->read_lat));
				json_object_object_add(acc, "write_latency_ns", json_count(a->write_lat));
			}
			snprintf(key, sizeof(key), "access%d", cls);
			json_object_object_add(o, key, acc);
		}
		json_object_array_add(nodes, o);
	}
	json_object_object_add(root, "kernel", json_object_new_string(bwap_kernel_mode_name(bwap_kernel_mode())));
	json_object_object_add(root, "nodes", nodes);
	return root;
}

void bwap_topology_print_json(const struct bwap_topology *t, FILE *f)
{
	struct json_object *root = bwap_topology_json(t);

	fprintf(f, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
							     JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
}

bwap_nodeset bwap_mems_allowed(pid_t pid)
{
	char path[64], *text, *p, err[128];
	bwap_nodeset s = 0;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	text = bwap_read_file(path, NULL);
	p = text ? strstr(text, "\nMems_allowed_list:") : NULL;
	if (p) {
		p += strlen("\nMems_allowed_list:");
		p += strspn(p, " \t");
		p[strcspn(p, "\n")] = '\0';
		if (bwap_nodeset_parse(p, &s, err, sizeof(err)))
			s = 0;
	}
	free(text);
	return s;
}
