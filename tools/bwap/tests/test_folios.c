// SPDX-License-Identifier: GPL-2.0
/*
 * Portable mode in folio units on the host: bwap_folio_split() against
 * the kernel's KUnit cases (mm/tests/mempolicy_rebalance_kunit.h, the
 * same figures), bwap_place_plan() on made-up unit lists with the exact
 * moves expected, and the folio scan (pagemap + kpageflags) on a real THP
 * of this process when the host can make one (root, THP not "never").
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "bwap.h"
#include "tap.h"

#define NR 4

/* Share the pages by w over nodes 0-3, split, compare with the kernel's expected plan and moved pages. */
static void split_case(const char *name, long unit, const long *base, const long *large, const long *fixed,
		       const unsigned char *w, const long *want_base, const long *want_large, long want_moved)
{
	long cur[NR], goal[NR], base_to[NR], large_to[NR], total = 0, moved = 0;
	int ok = 1;

	for (int i = 0; i < NR; i++) {
		cur[i] = base[i] + large[i] + fixed[i];
		total += cur[i];
	}
	bwap_largest_remainder(total, w, cur, NR, goal);
	bwap_folio_split(unit, NR, base, large, fixed, goal, base_to, large_to);
	for (int i = 0; i < NR; i++) {
		ok &= base_to[i] == want_base[i] && large_to[i] == want_large[i];
		moved += (base[i] > base_to[i] ? base[i] - base_to[i] : 0) +
			 (large[i] > large_to[i] ? large[i] - large_to[i] : 0);
	}
	CHECK(ok && moved == want_moved,
	      "split %s: base %ld,%ld,%ld,%ld large %ld,%ld,%ld,%ld, %ld moved (want %ld)", name, base_to[0],
	      base_to[1], base_to[2], base_to[3], large_to[0], large_to[1], large_to[2], large_to[3], moved,
	      want_moved);
}

static void kernel_split_cases(void)
{
	static const long z[NR];

	split_case("base only", 0, (long[]){ 1000, 1000, 1000, 1000 }, z, z, (unsigned char[]){ 4, 2, 1, 1 },
		   (long[]){ 2000, 1000, 500, 500 }, z, 1000);
	split_case("THP not multiple", 512, z, (long[]){ 8192, 4096, 2048, 2048 }, z,
		   (unsigned char[]){ 5, 3, 1, 1 }, z, (long[]){ 8192, 4608, 2048, 1536 }, 512);
	split_case("THP multiple", 512, z, (long[]){ 4096, 4096, 4096, 4096 }, z, (unsigned char[]){ 4, 2, 1, 1 },
		   z, (long[]){ 8192, 4096, 2048, 2048 }, 4096);
	split_case("mixed exact", 512, (long[]){ 0, 2048, 0, 0 }, (long[]){ 2048, 0, 0, 0 }, z,
		   (unsigned char[]){ 3, 1, 0, 0 }, (long[]){ 1024, 1024, 0, 0 }, (long[]){ 2048, 0, 0, 0 }, 1024);
	split_case("few base", 512, (long[]){ 100, 0, 0, 0 }, (long[]){ 1536, 0, 0, 0 }, z,
		   (unsigned char[]){ 1, 1, 1, 1 }, (long[]){ 0, 0, 0, 100 }, (long[]){ 512, 512, 512, 0 }, 1124);
	split_case("mixed short", 512, (long[]){ 250, 250, 250, 250 }, (long[]){ 1024, 1024, 1024, 1024 }, z,
		   (unsigned char[]){ 5, 3, 1, 1 }, (long[]){ 497, 503, 0, 0 }, (long[]){ 2048, 1024, 512, 512 },
		   1524);
	split_case("fixed", 0, (long[]){ 0, 1000, 0, 0 }, z, (long[]){ 1000, 0, 0, 0 },
		   (unsigned char[]){ 1, 1, 0, 0 }, (long[]){ 0, 1000, 0, 0 }, z, 0);
	split_case("fixed past goal", 0, (long[]){ 0, 500, 0, 0 }, z, (long[]){ 1500, 0, 0, 0 },
		   (unsigned char[]){ 1, 1, 0, 0 }, (long[]){ 0, 500, 0, 0 }, z, 0);
}

static struct bwap_unit_list list;

static void add(long pages, int node, int vma, int whole)
{
	static unsigned long addr = 0x7f0000000000UL;

	if (list.n == list.cap) {
		list.cap = list.cap ? 2 * list.cap : 4096;
		list.u = realloc(list.u, list.cap * sizeof(*list.u));
	}
	list.u[list.n++] = (struct bwap_unit){ .addr = addr, .pages = pages, .node = node, .vma = vma, .whole = whole };
	addr += pages * 4096;
}

/* The moves as "src>dst:count" per pair of whole base pages and large folios, for exact comparison. */
static void moves_text(const struct bwap_move *mv, long n, char *buf, size_t len)
{
	long pair[2][NR][NR] = { 0 };
	size_t at = 0;

	for (long i = 0; i < n; i++)
		pair[list.u[mv[i].unit].pages > 1][list.u[mv[i].unit].node][mv[i].dest]++;
	buf[0] = '\0';
	for (int k = 0; k < 2; k++)
		for (int s = 0; s < NR; s++)
			for (int d = 0; d < NR; d++)
				if (pair[k][s][d] && at < len)
					at += snprintf(buf + at, len - at, "%s%s%d>%d:%ld", at ? " " : "",
						       k ? "large " : "", s, d, pair[k][s][d]);
}

static long plan(const unsigned char *w, struct bwap_place_stats *st, struct bwap_move *mv)
{
	memset(st, 0, sizeof(*st));
	return bwap_place_plan(&list, w, NR, st, mv);
}

static void plan_cases(void)
{
	struct bwap_move mv[4096];
	struct bwap_place_stats st;
	char text[512];
	long n, first0 = -1;
	int ok;

	/*
	 * The guest's layout (guest/bwapctl-guest-portable): 494 base pages,
	 * a THP, 494 base pages, interleaved from node 0 with the THP on node
	 * 3, at 5,3,1,1: goals 750/450/150/150 of 1500.  Only node 0 has room
	 * for the THP (750 >= 512): it moves there whole, node 0 keeps 238
	 * base pages, and 9 + 97 + 97 base pages go to node 1.
	 */
	list.n = 0;
	for (int i = 0; i < 494; i++)
		add(1, i % 4, 1, 1);
	add(512, 3, 1, 1);
	for (int i = 494; i < 988; i++)
		add(1, i % 4, 1, 1);
	n = plan((unsigned char[]){ 5, 3, 1, 1 }, &st, mv);
	moves_text(mv, n, text, sizeof(text));
	CHECK(!strcmp(text, "0>1:9 2>1:97 3>1:97 large 3>0:1") && n == 204,
	      "THP + 988 base pages at 5,3,1,1: moves %s (%ld)", text, n);
	CHECK(st.before[0] == 247 && st.before[3] == 759 && st.target[0] == 750 && st.target[1] == 450 &&
	      st.target[2] == 150 && st.target[3] == 150,
	      "the plan is exactly the shares 750,450,150,150 (from 247,247,247,759)");
	CHECK(st.minimum == 512 + 203 && st.large_folios == 1 && st.large_size == 512 && st.fixed == 0,
	      "minimum %ld = the THP's 512 + 203 base pages; 1 large folio of 512", st.minimum);
	for (long i = 0; i < n; i++)
		if (list.u[mv[i].unit].node == 0 && first0 < 0)
			first0 = mv[i].unit;
	CHECK(first0 == 0, "a node gives up its first pages in address order (unit %ld)", first0);
	/* placed: planning again moves nothing */
	for (long i = 0; i < n; i++)
		list.u[mv[i].unit].node = mv[i].dest;
	n = plan((unsigned char[]){ 5, 3, 1, 1 }, &st, mv);
	CHECK(n == 0 && st.minimum == 0, "after the moves the plan is met: nothing moves (%ld)", n);

	/*
	 * The same pages planned one by one (no folio view, every unit a base
	 * page): what the planner did before folio units.  Its 706 pages
	 * include 497 of the THP's, which move_pages cannot move apart.
	 */
	list.n = 0;
	for (int i = 0; i < 494; i++)
		add(1, i % 4, 1, 1);
	for (int i = 0; i < 512; i++)
		add(1, 3, 1, 1);
	for (int i = 494; i < 988; i++)
		add(1, i % 4, 1, 1);
	n = plan((unsigned char[]){ 5, 3, 1, 1 }, &st, mv);
	moves_text(mv, n, text, sizeof(text));
	CHECK(n == 706 && !strcmp(text, "2>0:97 3>0:406 3>1:203"), "base pages only: %s (%ld)", text, n);

	/* A THP that fits nowhere stays on the node where it costs least; base pages fill the rest. */
	list.n = 0;
	add(512, 2, 1, 1);
	for (int i = 0; i < 488; i++)
		add(1, i % 4, 1, 1);
	n = plan((unsigned char[]){ 5, 3, 1, 1 }, &st, mv);
	moves_text(mv, n, text, sizeof(text));
	/*
	 * goals 500/300/100/100: node 2 keeps the THP (412 over), so the 488
	 * base pages fall 412 short of the rooms 500 + 300 + 100: the cut is
	 * even over the nodes that receive (178 each, node 1 then receives
	 * none) and the rest off node 0: 266,122,512,100.
	 */
	ok = st.target[0] == 266 && st.target[1] == 122 && st.target[2] == 512 && st.target[3] == 100;
	CHECK(ok && !strcmp(text, "2>0:122 3>0:22"),
	      "a THP larger than any share stays (node 2: 512 for a goal of 100): plan %ld,%ld,%ld,%ld, moves %s",
	      st.target[0], st.target[1], st.target[2], st.target[3], text);

	/*
	 * A folio mapped in part stays and counts; a smaller large folio stays
	 * too.  Mapping 1: 300 pages of a part and 100 base pages on node 0,
	 * goals 200/200: the base pages all go.  Mapping 2: a 16-page folio
	 * and two THPs on node 1, goals 520/520: one THP goes to node 0.
	 */
	list.n = 0;
	add(300, 0, 1, 0);
	for (int i = 0; i < 100; i++)
		add(1, 0, 1, 1);
	add(16, 1, 2, 1);
	add(512, 1, 2, 1);
	add(512, 1, 2, 1);
	n = plan((unsigned char[]){ 1, 1, 0, 0 }, &st, mv);
	moves_text(mv, n, text, sizeof(text));
	CHECK(!strcmp(text, "0>1:100 large 1>0:1") && st.fixed == 316 && st.large_size == 512,
	      "a part of a folio (300 pages) and a 16-page folio beside a THP stay: moves %s, %ld fixed", text,
	      st.fixed);
	CHECK(st.target[0] == 300 + 512 && st.target[1] == 100 + 512 + 16,
	      "each mapping is planned alone: %ld,%ld", st.target[0], st.target[1]);
}

/* A real THP of this process, if the host makes one: the scan must see it whole, and half of it as a part. */
static void scan_real_thp(void)
{
	size_t huge = 2UL << 20;
	char *raw = mmap(NULL, 2 * huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *p;
	struct bwap_page_census c;
	struct bwap_folio_reader r;
	struct bwap_unit_list l = { 0 };
	char err[256];

	p = (char *)(((uintptr_t)raw + huge - 1) & ~(huge - 1));
	if (getuid() || madvise(p, huge, MADV_HUGEPAGE)) {
		SKIP("a real THP: needs root and THP (not \"never\")");
		return;
	}
	memset(p, 1, huge);
	if (bwap_count_pages(p, huge, &c, err, sizeof(err))) {
		CHECK(0, "bwap_count_pages: %s", err);
		return;
	}
	if (c.folios_known != BWAP_FOLIOS_ALL || !c.large_folios) {
		SKIP("no THP was allocated here (%s)", c.folios_known == BWAP_FOLIOS_ALL ? "fragmented memory?" : c.why);
		return;
	}
	CHECK(c.total == 512 && c.large_folios == 1 && c.large_size == 512,
	      "a touched, MADV_HUGEPAGE 2 MiB range is one whole large folio of 512 pages (%ld pages, %ld folios)",
	      c.total, c.large_folios);
	/* scanning only its second half: the head is outside, so those 256 pages are a part */
	bwap_folio_reader_open(0, &r);
	bwap_folio_scan(&r, (unsigned long)p + huge / 2, (unsigned long)p + huge, 1, 0, &l);
	bwap_folio_reader_close(&r);
	CHECK(l.n == 256 && !l.u[0].whole && !l.u[255].whole,
	      "its second half alone: 256 pages of a folio mapped in part (%ld units, whole %d)", l.n,
	      l.n ? l.u[0].whole : -1);
	bwap_unit_list_free(&l);
	/* and the first half alone: the head is here, but the folio goes on: one part of 256 */
	bwap_folio_reader_open(0, &r);
	bwap_folio_scan(&r, (unsigned long)p, (unsigned long)p + huge / 2, 1, 0, &l);
	bwap_folio_reader_close(&r);
	CHECK(l.n == 1 && l.u[0].pages == 256 && !l.u[0].whole,
	      "its first half alone: one part of 256 pages (%ld units)", l.n);
	bwap_unit_list_free(&l);
	/* without root's view (kpageflags closed): PAGEMAP_SCAN still names the PMD-mapped THP */
	bwap_folio_reader_open(0, &r);
	close(r.kpageflags);
	r.kpageflags = -1;
	r.folios_known = BWAP_FOLIOS_PMD;
	bwap_folio_scan(&r, (unsigned long)p - 4096, (unsigned long)p + huge + 4096, 1, 0, &l);
	bwap_folio_reader_close(&r);
	if (r.folios_known != BWAP_FOLIOS_PMD)
		SKIP("PAGEMAP_SCAN: %s", r.why);
	else
		CHECK(l.n == 1 && l.u[0].pages == 512 && l.u[0].whole && l.u[0].addr == (unsigned long)p,
		      "PAGEMAP_SCAN alone (no kpageflags): the PMD-mapped THP is one whole unit of 512 (%ld units)",
		      l.n);
	bwap_unit_list_free(&l);
	munmap(raw, 2 * huge);
}

int main(void)
{
	kernel_split_cases();
	plan_cases();
	scan_real_thp();
	free(list.u);
	return tap_done();
}
