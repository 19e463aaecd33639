/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Rebalance: move the fewest pages so that each node holds its weighted
 * share of a VMA's resident pages.  Internal interface between
 * mm/mempolicy.c and mm/mempolicy_rebalance.c.
 */
#ifndef _MM_MEMPOLICY_REBALANCE_H
#define _MM_MEMPOLICY_REBALANCE_H

#include <linux/list.h>
#include <linux/mm_types.h>
#include <linux/nodemask.h>
#include <linux/pgtable.h>
#include <linux/sched.h>
#include <linux/types.h>

/*
 * Pages isolated before they are migrated, as migrate_pages() batches
 * them: the most one batch holds off the LRU, and about what mmap() and
 * munmap() of the target wait for.  A large folio of more pages is a
 * batch of its own.
 */
#define REBALANCE_BATCH 512

/*
 * Page-table entries a walk passes under one mmap_lock hold: 32 page
 * tables' worth, 64 MiB of base pages on x86-64.  A walk stops at the
 * end of the page table (or huge entry, or hole) where it reaches this,
 * or where a writer waits for mmap_lock, so the target's mmap() and
 * munmap() wait for one page table's walk at most, and never for more
 * than one step.  A range without page tables costs one entry per hole.
 */
#define REBALANCE_WALK_STEP (32 * PTRS_PER_PTE)

/*
 * Folios the counting walk of a range records, in address order, for the
 * second pass: 16384 entries of 8 bytes, as many folios as one step
 * passes.  The second pass then visits only the recorded folios the plan
 * moves, instead of walking the range's page tables again; past the
 * folios recorded, it walks the rest of the range.
 */
#define REBALANCE_RECORD REBALANCE_WALK_STEP

/**
 * struct mpol_rebalance_rec - a folio the counting walk met
 * @pgoff: its address, in pages from @rec_start of struct mpol_rebalance
 * @nid: the node it was on
 * @order: its order; it was mapped whole in the range
 */
struct mpol_rebalance_rec {
	u32 pgoff;
	u16 nid;
	u16 order;
};

/*
 * Large folio sizes planned in one range, largest first: one for each
 * folio order from 1 to MAX_PAGE_ORDER, so every mTHP size and the PMD
 * size (a hugetlb VMA has a single size).  Folios of a size beyond these
 * would stay where they are and count as fixed.  Not PMD_ORDER: it sizes
 * arrays, and powerpc's book3s64 sets PMD_ORDER at boot.
 */
#define REBALANCE_SIZES MAX_PAGE_ORDER

/**
 * struct mpol_rebalance_class - the plan for one kind of folio in a range
 * @cur: per-node pages of this kind in the range
 * @target: per-node pages still to send (> 0) or take (< 0)
 * @share: per-node pages to send (> 0) or take (< 0) in the range, fixed
 *	for the second pass
 * @seen: per-node pages of this kind the second pass has passed
 * @turn: per-node value of @seen from which the node's next folio of this
 *	kind is due to move (see mpol_rebalance_pick()), ULONG_MAX once the
 *	node sends no more: the second pass asks mpol_rebalance_pick() only
 *	then
 *
 * Each array has nr_node_ids entries.  Base pages and large folios are
 * planned apart, because a large folio moves whole and fills a node's
 * share only in steps of its size.
 */
struct mpol_rebalance_class {
	unsigned long *cur;
	long *target;
	long *share;
	unsigned long *seen;
	unsigned long *turn;
};

/**
 * struct mpol_rebalance - state and result of one rebalance call
 * @flags: MPOL_MF_MOVE_ALL moves pages other processes map too
 * @scanned: resident pages looked at
 * @needed: pages the plans of the ranges move: sum over ranges and
 *	nodes of the positive shares of both classes
 * @queued: pages isolated and queued for migration
 * @batch: pages queued since the last mpol_rebalance_migrate(): at most
 *	REBALANCE_BATCH, or one large folio
 * @tried: pages handed to migrate_pages()
 * @moved: pages migrated
 * @busy: pages the counting walks found under migration, fixed where they
 *	were (for the mpol_rebalance tracepoint)
 * @to_queue: pages of the range being handled still to queue; the second
 *	pass stops early once it reaches 0
 * @resume: where the last walk stopped, to go on from
 * @steps: page-table entries walked (and VMAs passed) since mmap_lock was
 *	last taken, for REBALANCE_WALK_STEP
 * @nr_sizes: large folio sizes planned in the range being handled
 * @unit: pages in the folios of each planned size, largest first (sizes
 *	fully mapped in the range; at most REBALANCE_SIZES)
 * @cur: per-node resident pages of the range, of every kind
 * @fixed: per-node pages that stay whatever the weights: large folios
 *	only partly mapped in the range, or of a size not planned, and
 *	folios pinned for DMA
 * @goal: per-node largest-remainder share of the range
 * @work: per-node scratch for the plan (three arrays)
 * @base: the plan for base pages
 * @large: the plan for the large folios of each size in @unit
 * @to_node: per-destination lists of isolated folios (nr_node_ids)
 * @rec: the folios the counting walk of the range recorded, in address
 *	order (REBALANCE_RECORD entries, or NULL if it could not be had)
 * @rec_start: the address of @rec's first folio
 * @rec_end: where @rec stops covering the range: a folio was met with @rec
 *	full, the second pass walks from there; 0 while it covers it all
 * @rec_len: folios recorded
 * @rec_next: the next folio of @rec the second pass looks at
 * @visit: in the second pass over @rec, the recorded folio due to move
 *	that is visited next; NULL outside the visits
 * @visit_dst: where the plan sends it; NUMA_NO_NODE once it was visited
 * @counting: true in the counting walk over a range, false in the second pass
 * @full: the second pass stopped before a folio the batch had no room for
 * @lru_disabled: the per-CPU LRU caches are off (lru_cache_disable()),
 *	from before the first queueing walk until mpol_rebalance_finish()
 * @reweight: the call is process_mpol_reweight(): shmem pages move only as
 *	@shared says (see rebalance_skip_vma())
 * @shared: the call changed shared policies (MPOL_REWEIGHT_SHARED); their
 *	objects' pages may move where the target opened them for writing
 * @mm: the address space walked, NULL until mpol_rebalance_target():
 *	a call refused before any walk is not traced
 * @pid: the thread group of @mm, for the mpol_rebalance tracepoint
 * @start: start of the range walked, for the tracepoint
 * @end: end of the range walked, for the tracepoint
 *
 * The folios on @to_node are isolated from the LRU; they are migrated by
 * mpol_rebalance_migrate() once the caller has dropped mmap_lock, at the
 * latest when mpol_rebalance_queue() reports the batch full.  The state
 * belongs to the one call that set it up: no lock protects it.
 */
struct mpol_rebalance {
	unsigned long flags;
	unsigned long scanned;
	unsigned long needed;
	unsigned long queued;
	unsigned long batch;
	unsigned long tried;
	unsigned long moved;
	unsigned long busy;
	unsigned long to_queue;
	unsigned long resume;
	unsigned long steps;
	int nr_sizes;
	unsigned long unit[REBALANCE_SIZES];
	unsigned long *cur;
	unsigned long *fixed;
	long *goal;
	long *work;
	struct mpol_rebalance_class base;
	struct mpol_rebalance_class large[REBALANCE_SIZES];
	struct list_head *to_node;
	struct mpol_rebalance_rec *rec;
	unsigned long rec_start;
	unsigned long rec_end;
	unsigned int rec_len;
	unsigned int rec_next;
	const struct mpol_rebalance_rec *visit;
	int visit_dst;
	bool counting;
	bool full;
	bool lru_disabled;
	bool reweight;
	bool shared;
	struct mm_struct *mm;
	pid_t pid;
	unsigned long start;
	unsigned long end;
};

/**
 * mpol_rebalance_target - record what a call walks, for its trace
 * @rb: state from mpol_rebalance_init()
 * @mm: the address space about to be walked
 * @task: a thread of the process @mm belongs to
 * @start: start of the range
 * @end: end of the range
 *
 * Called right before the walk: mpol_rebalance_finish() traces only calls
 * that got this far.
 */
static inline void mpol_rebalance_target(struct mpol_rebalance *rb,
					 struct mm_struct *mm,
					 struct task_struct *task,
					 unsigned long start, unsigned long end)
{
	rb->mm = mm;
	rb->pid = task_tgid_nr(task);
	rb->start = start;
	rb->end = end;
}

#ifdef CONFIG_NUMA_POLICY_REBALANCE
bool mpol_rebalance_targets(unsigned long total, const unsigned long *cur,
			    const u8 *weight, const nodemask_t *nodes,
			    long *target);
void mpol_rebalance_split(unsigned long unit, const unsigned long *base,
			  const unsigned long *large,
			  const unsigned long *fixed, const long *goal,
			  long *base_to, long *large_to);
void mpol_rebalance_split_sizes(int nr_sizes, const unsigned long *unit,
				struct mpol_rebalance_class *large,
				struct mpol_rebalance_class *base,
				const unsigned long *fixed, const long *goal,
				long *work);

int mpol_rebalance_pick(const struct mpol_rebalance_class *c, int src,
			long pages);
void mpol_rebalance_take(struct mpol_rebalance *rb,
			 struct mpol_rebalance_class *c, int src, int dst,
			 long pages);

int mpol_rebalance_init(struct mpol_rebalance *rb, unsigned long flags);
bool mpol_rebalance_vma_ok(struct vm_area_struct *vma);
void mpol_rebalance_count_begin(struct mpol_rebalance *rb);
int mpol_rebalance_count(struct mpol_rebalance *rb, struct vm_area_struct *vma,
			 unsigned long start, unsigned long end);
unsigned long mpol_rebalance_plan_steps(const struct mpol_rebalance *rb);
void mpol_rebalance_plan(struct mpol_rebalance *rb, const nodemask_t *nodes,
			 const u8 *weight);
bool mpol_rebalance_lock_wanted(struct mpol_rebalance *rb,
				struct mm_struct *mm);
void mpol_rebalance_lru_disable(struct mpol_rebalance *rb,
				struct mm_struct *mm);
bool mpol_rebalance_queue(struct mpol_rebalance *rb,
			  struct vm_area_struct *vma, unsigned long start,
			  unsigned long end);
bool mpol_rebalance_full(const struct mpol_rebalance *rb);
void mpol_rebalance_drop(struct mpol_rebalance *rb);
int mpol_rebalance_migrate(struct mpol_rebalance *rb);
unsigned long mpol_rebalance_finish(struct mpol_rebalance *rb);
#else
/* Without page migration there is no rebalance: the callers refuse it. */
static inline int mpol_rebalance_init(struct mpol_rebalance *rb,
				      unsigned long flags)
{
	return -EOPNOTSUPP;
}

static inline bool mpol_rebalance_vma_ok(struct vm_area_struct *vma)
{
	return false;
}

static inline void mpol_rebalance_count_begin(struct mpol_rebalance *rb) {}

static inline int mpol_rebalance_count(struct mpol_rebalance *rb,
				       struct vm_area_struct *vma,
				       unsigned long start, unsigned long end)
{
	return -EOPNOTSUPP;
}

static inline unsigned long
mpol_rebalance_plan_steps(const struct mpol_rebalance *rb)
{
	return 0;
}

static inline void mpol_rebalance_plan(struct mpol_rebalance *rb,
				       const nodemask_t *nodes,
				       const u8 *weight)
{
}

static inline bool mpol_rebalance_lock_wanted(struct mpol_rebalance *rb,
					      struct mm_struct *mm)
{
	return false;
}

static inline void mpol_rebalance_lru_disable(struct mpol_rebalance *rb,
					      struct mm_struct *mm)
{
}

static inline bool mpol_rebalance_queue(struct mpol_rebalance *rb,
					struct vm_area_struct *vma,
					unsigned long start, unsigned long end)
{
	return false;
}

static inline bool mpol_rebalance_full(const struct mpol_rebalance *rb)
{
	return false;
}

static inline void mpol_rebalance_drop(struct mpol_rebalance *rb) {}

static inline int mpol_rebalance_migrate(struct mpol_rebalance *rb)
{
	return 0;
}

static inline unsigned long mpol_rebalance_finish(struct mpol_rebalance *rb)
{
	return 0;
}
#endif /* CONFIG_NUMA_POLICY_REBALANCE */

#endif /* _MM_MEMPOLICY_REBALANCE_H */
