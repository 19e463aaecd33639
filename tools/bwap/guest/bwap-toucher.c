// SPDX-License-Identifier: GPL-2.0
/*
 * bwap-toucher: the workload of the bwapd guest test.  Faults --pages
 * anonymous pages (under whatever task policy 'bwapctl run' gave it), says
 * "ready PID PAGES" on stdout, then keeps touching them, one pass per
 * millisecond or so, and answers commands on stdin, one per line:
 *   check W0,W1,...   are the buffer's pages per node (move_pages) exactly
 *                     the largest-remainder shares of these weights?
 *                     prints "check PASS ..." or "check FAIL ..."
 *   counts            prints the pages per node
 *   folios            the whole large folios (THPs) in the buffer:
 *                     "folios N SIZE P0,P1,..." (N folios, the largest of
 *                     SIZE pages, P pages in them per node), or
 *                     "folios unknown WHY" without root's folio view
 *   layout W0,W1,...  are the buffer's pages where DAMON's weighted dests
 *                     with these weights put them (each folio on the node
 *                     the interleave pattern picks for its index: the VMA's
 *                     page offset, over the folio's order, 7.3
 *                     damos_va_migrate_dests_add())?  "layout PASS ..." or
 *                     "layout FAIL ...", with the pages per node
 *   fresh N           maps N more base pages under mode 6 over the global
 *                     table as a VMA policy (mbind), faults them, prints
 *                     "fresh P0,P1,..." (pages per node), unmaps them
 *   phase NAME        a phase change: appends "NAME\n" to the file named by
 *                     BWAP_PHASE (the phase protocol, bwapd(8) PHASES)
 *   more N            maps N more base pages under the task's policy and
 *                     faults them (once): pages a job faults later on
 *   checkmore W0,...  "check" for those N pages alone
 *   quit              exits 0
 * With BWAP_PROGRESS set, it also adds one per pass to that progress file.
 * The buffer starts --offset pages (default 0) after a 2 MiB boundary,
 * between PROT_NONE guards that keep it from merging with another
 * mapping, so what THP makes of it is known: under THP "always" (Debian's
 * kernels) every 2 MiB-aligned 512 pages inside it are one THP, the rest
 * base pages.  --thp system (the default) leaves that to the system's
 * setting; --thp never gives base pages only (MADV_NOHUGEPAGE), so that
 * the kernel's own interleave is exact per page; --thp huge asks for huge
 * pages (MADV_HUGEPAGE), each of which is one interleave step.
 * --global-wi SET sets its own task policy first, as 'numactl -w SET'
 * does: MPOL_WEIGHTED_INTERLEAVE over SET with the global sysfs weights
 * (a policy that a reweight changes only with MPOL_REWEIGHT_GLOBAL).
 * --bound NODE:PAGES also maps PAGES base pages that the program binds
 * to NODE itself (mbind MPOL_BIND), as a library that places its own
 * memory does; the command "bound" prints "bound P0,P1,..." for them.
 * Static, with libbwap (page counts, largest-remainder shares), so it
 * runs in the busybox guest.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../lib/bwap.h"

#define HUGE_SIZE (2UL << 20)	/* x86_64 PMD: the size of a THP */

static char *buf, *bound, *more;
static long npages, psz, nbound, nmore;

static void print_nodes(const long *v, int nr)
{
	for (int i = 0; i < nr; i++)
		printf("%s%ld", i ? "," : " ", v[i]);
}

/* "layout W0,W1,...": the buffer against DAMON's interleave layout of W (nodes with W > 0, in id order) */
static void layout(const char *arg)
{
	struct bwap_range r = { (unsigned long)buf, (unsigned long)buf + npages * psz };
	struct bwap_unit_list l = { 0 };
	long now[BWAP_MAX_NODES] = { 0 }, want[BWAP_MAX_NODES] = { 0 }, off = 0;
	unsigned int w[BWAP_MAX_NODES] = { 0 }, total = 0;
	int nw = 0, known;
	char err[256];
	const char *p = arg;

	while (*p && nw < BWAP_MAX_NODES) {
		w[nw] = strtoul(p, (char **)&p, 10);
		total += w[nw++];
		if (*p == ',')
			p++;
	}
	if (!total || bwap_units_of(getpid(), &r, 1, &l, &known, err, sizeof(err))) {
		printf("layout FAIL %s\n", total ? err : "no weights");
		bwap_unit_list_free(&l);
		return;
	}
	for (long k = 0; k < l.n; k++) {
		unsigned long order = 0, ilx, t;
		int node;

		for (; l.u[k].whole && (1L << order) < l.u[k].pages; order++)
			;
		/* the VMA is the buffer (PROT_NONE guards), its pgoff the start's page number */
		ilx = ((r.start / psz) >> order) + (((l.u[k].addr - r.start) / psz) >> order);
		t = ilx % total;
		for (node = 0; t >= w[node]; node++)
			t -= w[node];
		now[l.u[k].node] += l.u[k].pages;
		want[node] += l.u[k].pages;
		off += node != l.u[k].node ? l.u[k].pages : 0;
	}
	bwap_unit_list_free(&l);
	printf("layout %s weights %s pages", off ? "FAIL" : "PASS", arg);
	print_nodes(now, nw);
	printf(" expected");
	print_nodes(want, nw);
	printf(" off %ld\n", off);
}

/* "fresh N": N new base pages under mode 6 over the global table (a VMA policy), per node */
static void fresh(long n)
{
	int nodes = 0;
	unsigned long mask;
	long per[BWAP_MAX_NODES] = { 0 };
	char *p = mmap(NULL, n * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), path[64];

	/* the nodes with memory: those with a global weight */
	for (snprintf(path, sizeof(path), BWAP_SYSFS_WEIGHTS "/node0"); !access(path, F_OK);
	     snprintf(path, sizeof(path), BWAP_SYSFS_WEIGHTS "/node%d", ++nodes))
		;
	mask = (1UL << nodes) - 1;
	if (p == MAP_FAILED || madvise(p, n * psz, MADV_NOHUGEPAGE) ||
	    bwap_sys_mbind(p, n * psz, 6, &mask, BWAP_MAX_NODES + 1, 0)) {
		printf("fresh FAIL %s\n", strerror(errno));
		if (p != MAP_FAILED)
			munmap(p, n * psz);
		return;
	}
	for (long i = 0; i < n; i++) {
		void *a = p + i * psz;
		int st = -1;

		p[i * psz] = 1;
		if (!syscall(SYS_move_pages, 0, 1, &a, NULL, &st, 0) && st >= 0 && st < BWAP_MAX_NODES)
			per[st]++;
	}
	munmap(p, n * psz);
	printf("fresh");
	print_nodes(per, nodes);
	printf("\n");
}

static void command(char *line)
{
	struct bwap_page_census c;
	long t[BWAP_MAX_NODES];
	unsigned char w[BWAP_MAX_NODES] = { 0 };
	int nw = 0, nr, ok = 1;
	char err[256], *p;

	line[strcspn(line, "\n")] = '\0';
	if (!strcmp(line, "quit"))
		exit(0);
	if (!strncmp(line, "layout ", 7)) {
		layout(line + 7);
		return;
	}
	if (!strncmp(line, "fresh ", 6)) {
		fresh(atol(line + 6));
		return;
	}
	if (bwap_count_pages(buf, npages * psz, &c, err, sizeof(err))) {
		printf("check FAIL %s\n", err);
		return;
	}
	nr = c.nr_nodes;
	if (!strcmp(line, "counts")) {
		printf("counts");
		print_nodes(c.pages, nr);
		printf("\n");
		return;
	}
	if (!strcmp(line, "folios")) {
		if (c.folios_known != BWAP_FOLIOS_ALL) {
			printf("folios unknown %s\n", c.why);
			return;
		}
		printf("folios %ld %ld", c.large_folios, c.large_size);
		print_nodes(c.large, nr);
		printf("\n");
		return;
	}
	if (!strncmp(line, "phase ", 6)) {
		const char *pf = getenv("BWAP_PHASE");
		int fd = pf ? open(pf, O_WRONLY | O_APPEND | O_CLOEXEC) : -1;
		char msg[256];
		int len = snprintf(msg, sizeof(msg), "%.200s\n", line + 6);

		if (fd < 0 || write(fd, msg, len) != len)
			printf("phase FAIL no BWAP_PHASE file\n");
		else
			printf("phase %s\n", line + 6);
		if (fd >= 0)
			close(fd);
		return;
	}
	if (!strcmp(line, "bound")) {
		long per[BWAP_MAX_NODES] = { 0 };
		int nr = 0;

		for (long i = 0; i < nbound; i++) {
			void *a = bound + i * psz;
			int st = -1;

			if (!syscall(SYS_move_pages, 0, 1, &a, NULL, &st, 0) && st >= 0 && st < BWAP_MAX_NODES) {
				per[st]++;
				if (st + 1 > nr)
					nr = st + 1;
			}
		}
		printf("bound");
		for (int i = 0; i < (nr > 4 ? nr : 4); i++)
			printf("%s%ld", i ? "," : " ", per[i]);
		printf("\n");
		return;
	}
	if (!strncmp(line, "more ", 5) && !more) {
		long n = atol(line + 5);

		more = n > 0 ? mmap(NULL, n * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) :
			       MAP_FAILED;
		if (more == MAP_FAILED || madvise(more, n * psz, MADV_NOHUGEPAGE)) {
			more = NULL;
			printf("more FAIL %s\n", strerror(errno));
			return;
		}
		for (long i = 0; i < n; i++)
			more[i * psz] = 1;
		nmore = n;
		printf("more %ld\n", n);
		return;
	}
	if (!strncmp(line, "checkmore ", 10) && more) {
		struct bwap_page_census m;
		long tm[BWAP_MAX_NODES];
		int okm = 1, nm = 0;

		if (bwap_count_pages(more, nmore * psz, &m, err, sizeof(err))) {
			printf("checkmore FAIL %s\n", err);
			return;
		}
		for (p = line + 10; *p && nm < BWAP_MAX_NODES; nm++) {
			w[nm] = strtol(p, &p, 10);
			if (*p == ',')
				p++;
		}
		bwap_largest_remainder(nmore, w, m.pages, nm, tm);
		for (int i = 0; i < nm; i++)
			okm &= m.pages[i] == tm[i];
		printf("checkmore %s pages", okm ? "PASS" : "FAIL");
		print_nodes(m.pages, nm);
		printf(" expected");
		print_nodes(tm, nm);
		printf("\n");
		return;
	}
	if (strncmp(line, "check ", 6)) {
		printf("unknown command '%s'\n", line);
		return;
	}
	for (p = line + 6; *p && nw < BWAP_MAX_NODES; nw++) {
		w[nw] = strtol(p, &p, 10);
		if (*p == ',')
			p++;
	}
	if (nr < nw)
		nr = nw;
	/* the kernel's rule: floor shares, then one each by largest remainder, ties to more pages now */
	bwap_largest_remainder(npages, w, c.pages, nw, t);
	for (int i = 0; i < nr; i++)
		ok &= c.pages[i] == (i < nw ? t[i] : 0);
	printf("check %s weights %s pages", ok ? "PASS" : "FAIL", line + 6);
	print_nodes(c.pages, nr);
	printf(" expected");
	for (int i = 0; i < nr; i++)
		printf("%s%ld", i ? "," : " ", i < nw ? t[i] : 0);
	printf("\n");
}

int main(int argc, char **argv)
{
	volatile uint64_t *progress = NULL;
	const char *pf = getenv("BWAP_PROGRESS");
	char line[512];
	size_t have = 0, len;
	int thp_advice = 0;	/* --thp: 0 (the system's setting) or the madvise() advice */
	long offset = 0;	/* --offset: pages after a 2 MiB boundary */
	bwap_nodeset global_wi = 0;	/* --global-wi: nodes for mode 6 on the global weights */
	int bound_node = -1;		/* --bound: the node the program binds its second mapping to */
	char err[256];

	npages = 1000;
	psz = sysconf(_SC_PAGESIZE);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--pages") && i + 1 < argc) {
			npages = atol(argv[++i]);
		} else if (!strcmp(argv[i], "--offset") && i + 1 < argc) {
			offset = atol(argv[++i]);
		} else if (!strcmp(argv[i], "--thp") && i + 1 < argc && !strcmp(argv[i + 1], "system")) {
			thp_advice = 0;
			i++;
		} else if (!strcmp(argv[i], "--thp") && i + 1 < argc && !strcmp(argv[i + 1], "never")) {
			thp_advice = MADV_NOHUGEPAGE;
			i++;
		} else if (!strcmp(argv[i], "--thp") && i + 1 < argc && !strcmp(argv[i + 1], "huge")) {
			thp_advice = MADV_HUGEPAGE;
			i++;
		} else if (!strcmp(argv[i], "--bound") && i + 1 < argc &&
			   sscanf(argv[i + 1], "%d:%ld", &bound_node, &nbound) == 2 && bound_node >= 0 &&
			   bound_node < 64 && nbound > 0 && nbound < (1L << 20)) {
			i++;
		} else if (!strcmp(argv[i], "--global-wi") && i + 1 < argc) {
			if (bwap_nodeset_parse(argv[++i], &global_wi, err, sizeof(err)) || !global_wi) {
				fprintf(stderr, "bwap-toucher: --global-wi: %s\n", global_wi ? err : "no nodes");
				return 2;
			}
		} else {
			fprintf(stderr, "usage: bwap-toucher [--pages N] [--offset PAGES] [--thp system|never|huge]\n"
					"                    [--global-wi SET] [--bound NODE:PAGES]\n");
			return 2;
		}
	}
	if (npages < 1 || npages > (1L << 26)) {
		fprintf(stderr, "bwap-toucher: --pages must be from 1 to %ld\n", 1L << 26);
		return 2;
	}
	if (offset < 0 || offset >= (long)(HUGE_SIZE / psz)) {
		fprintf(stderr, "bwap-toucher: --offset must be from 0 to %ld pages\n", (long)(HUGE_SIZE / psz) - 1);
		return 2;
	}
	if (pf) {
		int fd = open(pf, O_RDWR);

		progress = fd >= 0 ? mmap(NULL, 8, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
		if (progress == MAP_FAILED) {
			perror("bwap-toucher: progress file");
			return 1;
		}
	}
	len = npages * psz;
	/*
	 * Room for a 2 MiB boundary and a guard page either side; what is not
	 * the buffer stays mapped PROT_NONE, so no later mapping merges with
	 * it and turns a partial 2 MiB range into a whole one.
	 */
	{
		size_t room = len + 2 * HUGE_SIZE + 2 * psz;
		char *raw = mmap(NULL, room, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (raw == MAP_FAILED) {
			perror("bwap-toucher: mmap");
			return 1;
		}
		buf = (char *)(((uintptr_t)raw + psz + HUGE_SIZE - 1) & ~(HUGE_SIZE - 1)) + offset * psz;
		if (mprotect(buf, len, PROT_READ | PROT_WRITE)) {
			perror("bwap-toucher: mprotect");
			return 1;
		}
	}
	if (thp_advice && madvise(buf, len, thp_advice)) {
		perror("bwap-toucher: madvise (--thp)");
		return 1;
	}
	if (global_wi && bwap_set_own_interleave(global_wi, 1)) {
		perror("bwap-toucher: set_mempolicy(MPOL_WEIGHTED_INTERLEAVE) (--global-wi)");
		return 1;
	}
	if (nbound) {
		unsigned long mask = 1UL << bound_node;

		bound = mmap(NULL, nbound * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (bound == MAP_FAILED || madvise(bound, nbound * psz, MADV_NOHUGEPAGE) ||
		    syscall(SYS_mbind, bound, nbound * psz, 2 /* MPOL_BIND */, &mask, 64UL, 0)) {
			perror("bwap-toucher: --bound");
			return 1;
		}
		for (long i = 0; i < nbound; i++)
			bound[i * psz] = 1;
	}
	for (long i = 0; i < npages; i++)
		buf[i * psz] = 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready %d %ld\n", getpid(), npages);
	for (;;) {
		struct pollfd pfd = { .fd = 0, .events = POLLIN };
		struct timespec ts = { 0, 1000000 };

		for (long i = 0; i < npages; i++)
			buf[i * psz]++;
		if (progress)
			__atomic_add_fetch(progress, 1, __ATOMIC_RELAXED);
		if (poll(&pfd, 1, 0) > 0) {
			ssize_t n = read(0, line + have, sizeof(line) - 1 - have);
			char *nl;

			if (n <= 0)
				return 0;	/* stdin closed: the test is done with us */
			have += n;
			line[have] = '\0';
			while ((nl = strchr(line, '\n'))) {
				*nl = '\0';
				command(line);
				memmove(line, nl + 1, have - (nl + 1 - line) + 1);
				have -= nl + 1 - line;
			}
		}
		nanosleep(&ts, NULL);	/* pacing of the workload, not synchronisation */
	}
}
