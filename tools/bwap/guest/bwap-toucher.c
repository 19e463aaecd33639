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
 *   phase NAME        a phase change: appends "NAME\n" to the file named by
 *                     BWAP_PHASE (the phase protocol, bwapd(8) PHASES)
 *   quit              exits 0
 * With BWAP_PROGRESS set, it also adds one per pass to that progress file.
 * --thp never gives the buffer base pages only (MADV_NOHUGEPAGE), so that
 * placement is exact per page even where THP is "always" (Debian's
 * kernels); --thp huge aligns it to 2 MiB and asks for huge pages
 * (MADV_HUGEPAGE), each of which is one interleave step; the default
 * leaves the system's THP setting in charge.
 * Static, libc only, so it runs in the busybox guest.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define MAX_NODES 64
#define HUGE_SIZE (2UL << 20)	/* x86_64 PMD: the size of a THP */

static char *buf;
static long npages, psz;

static int count(long *per_node, int *nr)
{
	void **pages = calloc(npages, sizeof(*pages));
	int *status = calloc(npages, sizeof(*status));

	if (!pages || !status)
		return -1;
	for (long i = 0; i < npages; i++)
		pages[i] = buf + i * psz;
	if (syscall(SYS_move_pages, 0, npages, pages, NULL, status, 0)) {
		perror("bwap-toucher: move_pages");
		return -1;
	}
	memset(per_node, 0, MAX_NODES * sizeof(*per_node));
	*nr = 0;
	for (long i = 0; i < npages; i++)
		if (status[i] >= 0 && status[i] < MAX_NODES) {
			per_node[status[i]]++;
			if (status[i] + 1 > *nr)
				*nr = status[i] + 1;
		}
	free(pages);
	free(status);
	return 0;
}

/* The kernel's rule: floor shares, then one each by largest remainder, ties to more pages now, then lower id. */
static void shares(long total, const int *w, int nr, const long *cur, long *t)
{
	unsigned long long sum = 0;
	long given = 0;
	int extra[MAX_NODES] = { 0 };

	for (int i = 0; i < nr; i++)
		sum += w[i];
	for (int i = 0; i < nr; i++) {
		t[i] = sum ? (unsigned long long)total * w[i] / sum : 0;
		given += t[i];
	}
	while (sum && given < total) {
		int best = -1;

		for (int i = 0; i < nr; i++) {
			unsigned long long r = (unsigned long long)total * w[i] % sum, rb;

			if (!w[i] || extra[i])
				continue;
			rb = best < 0 ? 0 : (unsigned long long)total * w[best] % sum;
			if (best < 0 || r > rb || (r == rb && cur[i] > cur[best]))
				best = i;
		}
		extra[best] = 1;
		t[best]++;
		given++;
	}
}

static void command(char *line)
{
	long per[MAX_NODES], t[MAX_NODES];
	int w[MAX_NODES] = { 0 }, nw = 0, nr, ok = 1;
	char *p;

	line[strcspn(line, "\n")] = '\0';
	if (!strcmp(line, "quit"))
		exit(0);
	if (count(per, &nr)) {
		printf("check FAIL move_pages\n");
		return;
	}
	if (!strcmp(line, "counts")) {
		printf("counts");
		for (int i = 0; i < nr; i++)
			printf("%s%ld", i ? "," : " ", per[i]);
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
	if (strncmp(line, "check ", 6)) {
		printf("unknown command '%s'\n", line);
		return;
	}
	for (p = line + 6; *p && nw < MAX_NODES; nw++) {
		w[nw] = strtol(p, &p, 10);
		if (*p == ',')
			p++;
	}
	if (nr < nw)
		nr = nw;
	shares(npages, w, nw, per, t);
	for (int i = 0; i < nr; i++)
		ok &= per[i] == (i < nw ? t[i] : 0);
	printf("check %s weights %s pages", ok ? "PASS" : "FAIL", line + 6);
	for (int i = 0; i < nr; i++)
		printf("%s%ld", i ? "," : " ", per[i]);
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

	npages = 1000;
	psz = sysconf(_SC_PAGESIZE);
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--pages") && i + 1 < argc) {
			npages = atol(argv[++i]);
		} else if (!strcmp(argv[i], "--thp") && i + 1 < argc && !strcmp(argv[i + 1], "never")) {
			thp_advice = MADV_NOHUGEPAGE;
			i++;
		} else if (!strcmp(argv[i], "--thp") && i + 1 < argc && !strcmp(argv[i + 1], "huge")) {
			thp_advice = MADV_HUGEPAGE;
			i++;
		} else {
			fprintf(stderr, "usage: bwap-toucher [--pages N] [--thp never|huge]\n");
			return 2;
		}
	}
	if (npages < 1 || npages > (1L << 26)) {
		fprintf(stderr, "bwap-toucher: --pages must be from 1 to %ld\n", 1L << 26);
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
	/* with --thp huge, room to start the buffer on a huge-page boundary */
	buf = mmap(NULL, len + (thp_advice == MADV_HUGEPAGE ? HUGE_SIZE : 0), PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		perror("bwap-toucher: mmap");
		return 1;
	}
	if (thp_advice == MADV_HUGEPAGE) {
		char *start = (char *)(((uintptr_t)buf + HUGE_SIZE - 1) & ~(HUGE_SIZE - 1));

		if (start > buf)
			munmap(buf, start - buf);
		munmap(start + len, buf + HUGE_SIZE - start);
		buf = start;
	}
	if (thp_advice && madvise(buf, len, thp_advice)) {
		perror("bwap-toucher: madvise (--thp)");
		return 1;
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
