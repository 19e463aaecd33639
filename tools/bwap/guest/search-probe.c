// SPDX-License-Identifier: GPL-2.0
/*
 * search-probe: the workload 'bwapctl search' runs in the guest tests.
 * It behaves like an OpenMP program (OMP_NUM_THREADS threads, thread i
 * bound to the i-th place of OMP_PLACES), each thread first-touching its
 * share of PAGES pages, and reports what it got:
 *   probe cpus LIST          its CPU mask at start
 *   probe threads N          threads it ran
 *   probe thread-cpus LIST   where each thread ran (sched_getcpu)
 *   probe policy ...         its task policy (get_mempolicy; weights via get_mempolicy2)
 *   probe pages C0,C1,...    its pages per node (move_pages query)
 *   score: X MODELLED        the placement model's throughput (tools/bwap/MODEL.md)
 *                            for threads and pages where they really are
 * Emulated nodes have no bandwidth differences, so the score is computed,
 * not measured: a MODELLED stand-in for a real program's speed.
 *
 * Usage: search-probe --matrix FILE [--pages N] [--mlp X] [--shared F] [--parallel F]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "../lib/bwap.h"

#define MAX_THREADS 256

static long page_size, nr_pages = 2048;
static char *mem;
static int nr_threads = 1, place[MAX_THREADS], ran_on[MAX_THREADS];

static void *worker(void *arg)
{
	int i = (int)(long)arg;
	long lo = nr_pages * i / nr_threads, hi = nr_pages * (i + 1) / nr_threads;

	if (place[i] >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(place[i], &set);
		sched_setaffinity(0, sizeof(set), &set);
	}
	for (long p = lo; p < hi; p++)
		mem[p * page_size] = 1;
	ran_on[i] = sched_getcpu();
	return NULL;
}

/* OMP_PLACES "{0},{4},{1}": one CPU per place, as bwapctl search writes it. */
static void parse_places(void)
{
	const char *s = getenv("OMP_PLACES");
	int k = 0;

	for (int i = 0; i < MAX_THREADS; i++)
		place[i] = -1;
	while (s && *s && k < MAX_THREADS) {
		if (*s == '{') {
			place[k++] = atoi(s + 1);
			s = strchr(s, '}');
			if (!s)
				break;
		}
		s++;
	}
	/* OMP_PROC_BIND=close: thread i on place i mod places */
	for (int i = k; i < MAX_THREADS && k; i++)
		place[i] = place[i % k];
}

static void print_list(const char *what, const int *v, int n)
{
	printf("probe %s ", what);
	for (int i = 0; i < n; i++)
		printf("%s%d", i ? "," : "", v[i]);
	printf("\n");
}

int main(int argc, char **argv)
{
	static struct bwap_matrix m;
	static struct bwap_topology t;
	struct bwap_machine mc;
	struct bwap_workload wl;
	struct bwap_prediction pr;
	const char *matrix = NULL;
	double mlp = 6, shared = 0.8, parallel = 0.6, dist[BWAP_MAX_NODES] = { 0 };
	long count[BWAP_MAX_NODES] = { 0 }, total = 0;
	pthread_t tid[MAX_THREADS];
	cpu_set_t set;
	int cpus[BWAP_MAX_CPUS], nc = 0, mode;
	unsigned long nodes[2] = { 0 };
	char err[512], buf[256];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--matrix") && i + 1 < argc)
			matrix = argv[++i];
		else if (!strcmp(argv[i], "--pages") && i + 1 < argc)
			nr_pages = atol(argv[++i]);
		else if (!strcmp(argv[i], "--mlp") && i + 1 < argc)
			mlp = atof(argv[++i]);
		else if (!strcmp(argv[i], "--shared") && i + 1 < argc)
			shared = atof(argv[++i]);
		else if (!strcmp(argv[i], "--parallel") && i + 1 < argc)
			parallel = atof(argv[++i]);
		else {
			fprintf(stderr, "search-probe: unknown argument '%s'\n", argv[i]);
			return 2;
		}
	}
	if (!matrix || nr_pages < 1 || bwap_matrix_load(&m, matrix, err, sizeof(err)) ||
	    bwap_topology_read(&t, NULL, err, sizeof(err))) {
		fprintf(stderr, "search-probe: needs --matrix FILE: %s\n", matrix ? err : "none given");
		return 2;
	}
	page_size = sysconf(_SC_PAGESIZE);
	sched_getaffinity(0, sizeof(set), &set);
	for (int c = 0; c < CPU_SETSIZE && nc < BWAP_MAX_CPUS; c++)
		if (CPU_ISSET(c, &set))
			cpus[nc++] = c;
	print_list("cpus", cpus, nc);
	if (getenv("OMP_NUM_THREADS"))
		nr_threads = atoi(getenv("OMP_NUM_THREADS"));
	if (nr_threads < 1 || nr_threads > MAX_THREADS)
		nr_threads = 1;
	parse_places();
	printf("probe threads %d\n", nr_threads);
	if (syscall(SYS_get_mempolicy, &mode, nodes, (unsigned long)BWAP_MAX_NODES + 1, NULL, 0UL)) {
		printf("probe policy unknown (%s)\n", strerror(errno));
	} else if (mode == MPOL_DEFAULT) {
		printf("probe policy default\n");
	} else if (mode == 6) {
		/* weighted: the weights themselves (get_mempolicy2), where the kernel has them */
		unsigned char w[BWAP_MAX_NODES];
		bwap_nodeset ns;
		int m2;

		printf("probe policy weighted nodes %s", bwap_nodeset_format(nodes[0], buf, sizeof(buf)));
		if (!bwap_get_own_policy(&m2, &ns, w)) {
			printf(" weights");
			for (int n = 0; n < m.nr_nodes; n++)
				printf("%s%d", n ? "," : " ", bwap_nodeset_has(ns, n) ? w[n] : 0);
		}
		printf("\n");
	} else {
		printf("probe policy %s nodes %s\n", mode == MPOL_BIND ? "bind" : mode == MPOL_INTERLEAVE ?
		       "interleave" : mode == MPOL_PREFERRED ? "preferred" : "other",
		       bwap_nodeset_format(nodes[0], buf, sizeof(buf)));
	}
	fflush(stdout);
	mem = mmap(NULL, nr_pages * page_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		perror("search-probe: mmap");
		return 1;
	}
	for (int i = 0; i < nr_threads; i++)
		if (pthread_create(&tid[i], NULL, worker, (void *)(long)i)) {
			perror("search-probe: pthread_create");
			return 1;
		}
	for (int i = 0; i < nr_threads; i++)
		pthread_join(tid[i], NULL);
	print_list("thread-cpus", ran_on, nr_threads);
	/* where the pages are: move_pages with no target nodes only asks */
	{
		void **pages = malloc(nr_pages * sizeof(void *));
		int *status = malloc(nr_pages * sizeof(int));

		for (long p = 0; p < nr_pages; p++)
			pages[p] = mem + p * page_size;
		if (!pages || !status || syscall(SYS_move_pages, 0, nr_pages, pages, NULL, status, 0)) {
			perror("search-probe: move_pages");
			return 1;
		}
		for (long p = 0; p < nr_pages; p++)
			if (status[p] >= 0 && status[p] < BWAP_MAX_NODES) {
				count[status[p]]++;
				total++;
			}
	}
	printf("probe pages");
	for (int n = 0; n < m.nr_nodes; n++)
		printf("%s%ld", n ? "," : " ", count[n]);
	printf("\n");
	/* MODELLED score: the model fed with the observed threads per node and pages per node */
	memset(&wl, 0, sizeof(wl));
	for (int i = 0; i < nr_threads; i++)
		for (int n = 0; n < t.nr_nodes; n++)
			if (ran_on[i] >= 0 && ran_on[i] < BWAP_MAX_CPUS && t.node[n].cpus[ran_on[i]])
				wl.threads[n]++;
	wl.mlp = mlp;
	wl.shared = shared;
	for (int n = 0; n < BWAP_MAX_NODES; n++)
		if (wl.threads[n]) {
			wl.first_node = n;
			break;
		}
	for (int n = 0; n < m.nr_nodes; n++)
		dist[n] = total ? (double)count[n] / total : 0;
	if (bwap_machine_from_matrix(&mc, &m, err, sizeof(err))) {
		fprintf(stderr, "search-probe: %s\n", err);
		return 1;
	}
	bwap_model_predict(&mc, &wl, dist, 0, &pr);
	/*
	 * Amdahl: only the parallel fraction gains from more threads, so the
	 * best thread count depends on how fast each thread's memory is.
	 */
	printf("score: %.6f MODELLED\n", pr.throughput / nr_threads / ((1 - parallel) + parallel / nr_threads));
	return 0;
}
