// SPDX-License-Identifier: GPL-2.0
/*
 * Portable mode's page census (lib/place.c) on the host: a child with a
 * mapping of 512 pages of which it touched N; the census must count the
 * touched pages only (pagemap's present bit), exactly N more for a child
 * that touched N more.  The host has one node, so nothing moves here; the
 * moves are checked in the 4-node guest (guest/bwapctl-guest-portable).
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include "bwap.h"
#include "tap.h"

/* A child that touched `touch` of 512 mapped pages and waits; its pid. */
static pid_t child(int touch, int *hold)
{
	int ready[2], stay[2];
	pid_t pid;
	char c;

	if (pipe(ready) || pipe(stay))
		return -1;
	pid = fork();
	if (!pid) {
		long psz = sysconf(_SC_PAGESIZE);
		char *p = mmap(NULL, 512 * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		for (int i = 0; i < touch; i++)
			p[i * psz] = 1;
		if (write(ready[1], "r", 1) != 1 || read(stay[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(ready[1]);
	close(stay[0]);
	if (read(ready[0], &c, 1) != 1)
		return -1;
	close(ready[0]);
	*hold = stay[1];
	return pid;
}

static long census(pid_t pid, struct bwap_place_stats *st)
{
	struct bwap_weights w;
	char err[512];

	memset(&w, 0, sizeof(w));
	w.nr_nodes = 1;
	w.nodes = 1;
	w.w[0] = 1;
	return bwap_place_pages(pid, &w, 1, st, err, sizeof(err)) ? -1 : st->pages;
}

int main(void)
{
	struct bwap_place_stats a, b;
	int hold_a, hold_b;
	pid_t pa = child(100, &hold_a), pb = child(300, &hold_b);
	long na = census(pa, &a), nb = census(pb, &b);

	CHECK(na >= 100 && nb >= 300, "census: children with 100 and 300 touched pages count %ld and %ld", na, nb);
	CHECK(nb - na == 200, "census: the child that touched 200 more pages has exactly 200 more (%ld)", nb - na);
	CHECK(a.minimum == 0 && a.before[0] == na && a.target[0] == na,
	      "one node, weight 1: every page is at its share, nothing to move");
	/* the second child holds a copy of the first's pipe: end them by signal */
	kill(pa, SIGKILL);
	kill(pb, SIGKILL);
	close(hold_a);
	close(hold_b);
	waitpid(pa, NULL, 0);
	waitpid(pb, NULL, 0);
	CHECK(census(pa, &a) == -1, "census of a process that is gone fails (errno's text)");
	return tap_done();
}
