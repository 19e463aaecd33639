// SPDX-License-Identifier: GPL-2.0
/*
 * A process's folios seen from user space, for portable mode's plan in
 * folio units (lib/place.c): which present pages form one large folio
 * (a THP), which are base pages, and which are only part of a folio.
 *
 * Documentation/admin-guide/mm/pagemap.rst: /proc/PID/pagemap gives each
 * virtual page's PFN (bits 0-54, zero without CAP_SYS_ADMIN), present
 * (bit 63) and exclusively mapped (bit 56); /proc/kpageflags (root only)
 * gives each PFN's KPF_COMPOUND_HEAD (15) and KPF_COMPOUND_TAIL (16).  A
 * folio is a head and the tails that follow it in PFN order.  It counts as
 * one whole unit when all its pages are mapped in a row of the range (as
 * the kernel's folio_ptes_in_row() counts them): its head first, then
 * consecutive PFNs at consecutive addresses, and the PFN after the last
 * is no tail; otherwise its pages here are a part, which cannot move
 * without moving pages outside the range.
 *
 * Without root (no PFNs, no kpageflags) the PAGEMAP_SCAN ioctl of the
 * same pagemap file (Linux 6.7+, the process's owner may use it) still
 * names the PMD-mapped THPs (PAGE_IS_HUGE): each PMD-aligned run of them
 * inside the range is one whole large folio, and every other page is
 * planned as a base page (folios_known BWAP_FOLIOS_PMD).  PTE-mapped large
 * folios are then not seen.  With neither, every page is a base page
 * (folios_known BWAP_FOLIOS_NONE, why says what is missing).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "bwap.h"

#define PM_PFN_MASK ((1ULL << 55) - 1)
#define PM_EXCLUSIVE (1ULL << 56)
#define PM_PRESENT (1ULL << 63)
#define KPF_COMPOUND_HEAD 15
#define KPF_COMPOUND_TAIL 16
#define KPF_BLOCK 512		/* kpageflags entries read at once */

/* include/uapi/linux/fs.h of Linux 6.7+, for older headers */
#ifndef PAGEMAP_SCAN
struct page_region {
	uint64_t start, end, categories;
};
struct pm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
#define PAGEMAP_SCAN _IOWR('f', 16, struct pm_scan_arg)
#define PAGE_IS_PRESENT (1 << 3)
#define PAGE_IS_PFNZERO (1 << 5)
#define PAGE_IS_HUGE (1 << 6)
#endif

int bwap_folio_reader_open(pid_t pid, struct bwap_folio_reader *r)
{
	char path[64];
	FILE *f;

	memset(r, 0, sizeof(*r));
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/pagemap");
	r->pagemap = open(path, O_RDONLY | O_CLOEXEC);
	r->kpageflags = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	r->block = -1;
	r->pmd_pages = 512;
	f = fopen("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size", "r");
	if (f) {
		long bytes;

		if (fscanf(f, "%ld", &bytes) == 1 && bytes >= sysconf(_SC_PAGESIZE))
			r->pmd_pages = bytes / sysconf(_SC_PAGESIZE);
		fclose(f);
	}
	/* kpageflags until a present page shows no PFN; else PMD-mapped THPs if PAGEMAP_SCAN answers */
	r->folios_known = r->kpageflags >= 0 ? BWAP_FOLIOS_ALL : BWAP_FOLIOS_PMD;
	if (r->kpageflags < 0)
		snprintf(r->why, sizeof(r->why), "/proc/kpageflags: %s", strerror(errno));
	return r->pagemap >= 0 ? 0 : -1;
}

void bwap_folio_reader_close(struct bwap_folio_reader *r)
{
	if (r->pagemap >= 0)
		close(r->pagemap);
	if (r->kpageflags >= 0)
		close(r->kpageflags);
	r->pagemap = r->kpageflags = -1;
}

/* kpageflags of pfn, through a cache of one aligned block; 0 if unreadable. */
static uint64_t page_flags(struct bwap_folio_reader *r, uint64_t pfn)
{
	long block = pfn / KPF_BLOCK;

	if (block != r->block) {
		ssize_t got = pread(r->kpageflags, r->flags, sizeof(r->flags), (off_t)block * KPF_BLOCK * 8);

		memset(r->flags + (got > 0 ? got / 8 : 0), 0, sizeof(r->flags) - (got > 0 ? got / 8 * 8 : 0));
		r->block = block;
	}
	return r->flags[pfn % KPF_BLOCK];
}

static int add_unit(struct bwap_unit_list *l, unsigned long addr, long pages, int vma, int whole)
{
	if (l->n == l->cap) {
		long cap = l->cap ? 2 * l->cap : 65536;
		struct bwap_unit *u = realloc(l->u, cap * sizeof(*u));

		if (!u)
			return -1;
		l->u = u;
		l->cap = cap;
	}
	l->u[l->n++] = (struct bwap_unit){ .addr = addr, .pages = pages, .node = -1, .vma = vma, .whole = whole };
	return 0;
}

void bwap_unit_list_free(struct bwap_unit_list *l)
{
	free(l->u);
	memset(l, 0, sizeof(*l));
}

/* The folio being followed through the range: its first address and PFN, pages seen. */
struct run {
	unsigned long addr;
	uint64_t pfn;
	long pages;
};

/* A run ends: one whole large folio if the PFN after it is no tail, else a part. */
static int end_run(struct bwap_folio_reader *r, struct bwap_unit_list *l, struct run *f, int vma)
{
	int whole;

	if (!f->pages)
		return 0;
	whole = f->pages > 1 && !((page_flags(r, f->pfn + f->pages) >> KPF_COMPOUND_TAIL) & 1);
	if (add_unit(l, f->addr, f->pages, vma, whole))
		return -1;
	f->pages = 0;
	return 0;
}

/*
 * The PMD-mapped THPs of [start, end) from PAGEMAP_SCAN: present, huge,
 * not the huge zero page.  A malloc()ed array of n regions, or NULL with
 * *n -1 when the kernel has no PAGEMAP_SCAN (before 6.7).
 */
static struct page_region *huge_regions(int pagemap, unsigned long start, unsigned long end, long *n)
{
	struct page_region *v = NULL;
	long cap = 0;

	*n = 0;
	while (start < end) {
		struct pm_scan_arg arg = {
			.size = sizeof(arg), .start = start, .end = end,
			.category_mask = PAGE_IS_HUGE | PAGE_IS_PRESENT | PAGE_IS_PFNZERO,
			.category_inverted = PAGE_IS_PFNZERO,
			.return_mask = PAGE_IS_HUGE | PAGE_IS_PRESENT,
		};
		long got;

		if (*n == cap) {
			struct page_region *nv = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));

			if (!nv)
				break;
			v = nv;
		}
		arg.vec = (uintptr_t)(v + *n);
		arg.vec_len = cap - *n;
		got = ioctl(pagemap, PAGEMAP_SCAN, &arg);
		if (got < 0) {
			free(v);
			*n = -1;
			return NULL;
		}
		*n += got;
		if (arg.walk_end <= start)
			break;
		start = arg.walk_end;	/* vec was full: go on from where the walk stopped */
	}
	return v;
}

/* Whether the PMD-sized range at a, inside [.., end), is one PMD-mapped THP of regions v. */
static long huge_at(const struct page_region *v, long n, unsigned long a, unsigned long end, long pmd_bytes)
{
	if (a % pmd_bytes || a + pmd_bytes > end)
		return 0;
	for (long i = 0; i < n; i++)
		if (v[i].start <= a && a + pmd_bytes <= v[i].end)
			return 1;
	return 0;
}

int bwap_folio_scan(struct bwap_folio_reader *r, unsigned long start, unsigned long end, int vma,
		    int exclusive_only, struct bwap_unit_list *l)
{
	long psz = sysconf(_SC_PAGESIZE), nhuge = 0, pmd_bytes = r->pmd_pages * psz;
	uint64_t ent[512];
	struct run f = { 0 };
	struct page_region *huge = NULL;
	unsigned long skip_to = 0;	/* the rest of a THP just listed */

	if (r->pagemap >= 0 && r->folios_known == BWAP_FOLIOS_PMD) {
		huge = huge_regions(r->pagemap, start, end, &nhuge);
		if (nhuge < 0) {
			r->folios_known = BWAP_FOLIOS_NONE;
			snprintf(r->why + strlen(r->why), sizeof(r->why) - strlen(r->why),
				 "; no PAGEMAP_SCAN (Linux 6.7+)");
			nhuge = 0;
		}
	}

	for (unsigned long a = start; a < end;) {
		size_t want = (end - a) / psz < 512 ? (end - a) / psz : 512;
		ssize_t got = r->pagemap < 0 ? -1 : pread(r->pagemap, ent, want * 8, (off_t)(a / psz) * 8);

		if (got < 8) {
			/* no pagemap: every page, base pages; the move_pages query sorts them out */
			r->folios_known = 0;
			snprintf(r->why, sizeof(r->why), "no pagemap");
			for (size_t i = 0; i < want; i++)
				if (add_unit(l, a + i * psz, 1, vma, 1))
					goto oom;
			a += want * psz;
			continue;
		}
		for (size_t i = 0; i < (size_t)got / 8; i++, a += psz) {
			uint64_t e = ent[i], pfn = e & PM_PFN_MASK, kf;

			/* present, and mapped by this process alone: what MPOL_MF_MOVE moves */
			if (!(e & PM_PRESENT) || (exclusive_only && !(e & PM_EXCLUSIVE))) {
				if (end_run(r, l, &f, vma))
					goto oom;
				continue;
			}
			if (!pfn || r->kpageflags < 0) {
				long whole;

				if (end_run(r, l, &f, vma))
					goto oom;
				if (a < skip_to)
					continue;
				if (!pfn && r->folios_known == BWAP_FOLIOS_ALL) {
					/* kpageflags readable but no PFNs (no CAP_SYS_ADMIN): page by page */
					r->folios_known = BWAP_FOLIOS_NONE;
					snprintf(r->why, sizeof(r->why), "pagemap shows no PFNs (they need CAP_SYS_ADMIN)");
				}
				whole = huge_at(huge, nhuge, a, end, pmd_bytes);
				if (add_unit(l, a, whole ? r->pmd_pages : 1, vma, 1))
					goto oom;
				skip_to = whole ? a + pmd_bytes : 0;
				continue;
			}
			kf = page_flags(r, pfn);
			if (f.pages && (kf >> KPF_COMPOUND_TAIL) & 1 && pfn == f.pfn + f.pages &&
			    a == f.addr + f.pages * psz) {
				f.pages++;	/* the next page of the folio followed */
				continue;
			}
			if (end_run(r, l, &f, vma))
				goto oom;
			if ((kf >> KPF_COMPOUND_HEAD) & 1) {
				f = (struct run){ .addr = a, .pfn = pfn, .pages = 1 };
			} else if ((kf >> KPF_COMPOUND_TAIL) & 1) {
				/* a tail whose head is not here in a row: a part, it stays */
				if (add_unit(l, a, 1, vma, 0))
					goto oom;
			} else if (add_unit(l, a, 1, vma, 1)) {
				goto oom;
			}
		}
		if ((size_t)got < want * 8)
			break;	/* past the end of the address space pagemap covers */
	}
	if (end_run(r, l, &f, vma))
		goto oom;
	free(huge);
	return 0;
oom:
	free(huge);
	return -1;
}

int bwap_count_pages(const void *buf, size_t len, struct bwap_page_census *c, char *err, size_t errlen)
{
	long psz = sysconf(_SC_PAGESIZE), n = len / psz;
	void **pages = calloc(n ? n : 1, sizeof(*pages));
	int *status = calloc(n ? n : 1, sizeof(*status)), ret = -1;
	struct bwap_folio_reader r;
	struct bwap_unit_list l = { 0 };

	memset(c, 0, sizeof(*c));
	if (!pages || !status) {
		snprintf(err, errlen, "out of memory counting %ld pages", n);
		goto out;
	}
	/* every page's node, asked page by page: what is counted does not depend on the folio scan */
	for (long i = 0; i < n; i++)
		pages[i] = (char *)buf + i * psz;
	if (n && syscall(SYS_move_pages, 0, n, pages, NULL, status, 0)) {
		snprintf(err, errlen, "move_pages query of %ld pages: %s", n, strerror(errno));
		goto out;
	}
	for (long i = 0; i < n; i++)
		if (status[i] >= 0 && status[i] < BWAP_MAX_NODES) {
			c->pages[status[i]]++;
			c->total++;
			if (status[i] + 1 > c->nr_nodes)
				c->nr_nodes = status[i] + 1;
		}
	/* then the whole large folios among them, each on its head's node */
	bwap_folio_reader_open(0, &r);
	if (bwap_folio_scan(&r, (unsigned long)buf, (unsigned long)buf + n * psz, 1, 0, &l)) {
		snprintf(err, errlen, "out of memory listing %ld pages", n);
		bwap_folio_reader_close(&r);
		goto out;
	}
	c->folios_known = r.folios_known;
	snprintf(c->why, sizeof(c->why), "%s", r.why);
	bwap_folio_reader_close(&r);
	for (long i = 0; i < l.n; i++) {
		long at = (l.u[i].addr - (unsigned long)buf) / psz;
		int node = status[at];

		if (l.u[i].pages > 1 && l.u[i].whole && node >= 0 && node < BWAP_MAX_NODES) {
			c->large[node] += l.u[i].pages;
			c->large_folios++;
			if (l.u[i].pages > c->large_size)
				c->large_size = l.u[i].pages;
		}
	}
	ret = 0;
out:
	bwap_unit_list_free(&l);
	free(pages);
	free(status);
	return ret;
}
