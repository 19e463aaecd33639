// SPDX-License-Identifier: GPL-2.0-only
/*
 * Rebalance resident pages to a weighted-interleave policy's shares.
 *
 * Interleave weights steer only new allocations, and mbind(MPOL_MF_MOVE)
 * only moves pages off nodes outside the nodemask.  A rebalance (mbind2(2)
 * with MPOL_ARGS_REBALANCE, process_mpol_reweight(2) with
 * MPOL_REWEIGHT_REBALANCE) instead gives every node of a VMA its
 * largest-remainder share of the VMA's resident pages, moving exactly
 * sum(max(0, current - target)) pages: a page moves only off a node above
 * its share and onto a node below it, so none moves twice and none moves
 * back.
 *
 * Each range under one policy is walked once under mmap_read_lock(), to
 * count its resident pages per node; the walk records the folios it
 * counts, their address, node and order, up to REBALANCE_RECORD of them.
 * A second pass then isolates just enough folios from each node above its
 * share, spread evenly over the range so that it keeps the interleave
 * layout (mpol_rebalance_pick()), queued per destination: it goes through
 * the record and visits only the folios the plan moves, each checked
 * under its page table's lock, and walks the page tables again only past
 * what the record holds.  The second pass stops before the first folio
 * that would take the batch past REBALANCE_BATCH pages; the caller drops
 * mmap_lock, migrates the batch (mpol_rebalance_migrate()) and goes on
 * from there.  A large folio is never split, so one of REBALANCE_BATCH
 * pages or more is a batch of its own.  So at most one batch of pages, of
 * REBALANCE_BATCH pages or one large folio, is off the LRU at any time,
 * and a fatal signal ends the call at the next batch.
 *
 * Either pass also stops, at the end of a page table (or, going through
 * the record, before a recorded folio, each an entry), once it has passed
 * REBALANCE_WALK_STEP entries under one hold of mmap_lock or a writer
 * waits for the lock (mpol_rebalance_lock_wanted()); the caller drops
 * the lock, takes it again and goes on from there if the range still has
 * the shares it was counted under.  The plan, whose cost grows with the
 * large folios counted, is made without mmap_lock when it would take
 * longer than a step (mpol_rebalance_plan_steps()).  So the target's
 * mmap() and munmap() wait for one step at most.
 *
 * A large folio (THP) moves whole, never split, so the plan is made in
 * folio units (mpol_rebalance_split()): the large folios go where they
 * cost the fewest moves while no node passes its share by a folio, and
 * base pages fill each node's remainder exactly where there are enough.
 * Several folio sizes in one range are planned in turn, the largest
 * first (mpol_rebalance_split_sizes()).
 */
#include <kunit/visibility.h>
#include <linux/hugetlb.h>
#include <linux/math64.h>
#include <linux/mempolicy.h>
#include <linux/migrate.h>
#include <linux/mm.h>
#include <linux/mm_inline.h>
#include <linux/pagewalk.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/swap.h>
#include <linux/swapops.h>
#include <linux/vmstat.h>
#include <uapi/linux/mempolicy.h>

#include "internal.h"
#include "mempolicy_rebalance.h"
#include "mempolicy_weights.h"

#define CREATE_TRACE_POINTS
#include <trace/events/mempolicy.h>

/**
 * mpol_rebalance_targets - largest-remainder share of each node
 * @total: resident pages to share out
 * @cur: pages each node holds now (nr_node_ids entries); breaks ties
 * @weight: weight of each node (nr_node_ids entries)
 * @nodes: the policy's nodes; other nodes get 0
 * @target: filled with each node's share (nr_node_ids entries)
 *
 * Node n first gets floor(total * w[n] / W), W the sum of the weights in
 * @nodes.  The pages left over (fewer than the nodes with a non-zero
 * weight) go one each to the nodes with the largest remainders.  Equal
 * remainders go first to the node holding more pages now, which keeps the
 * number of pages to move minimal, then to the lower node id.  With no
 * non-zero weight in @nodes every target is 0.
 *
 * Return: false if no node of @nodes has a non-zero weight.
 */
bool mpol_rebalance_targets(unsigned long total, const unsigned long *cur,
			    const u8 *weight, const nodemask_t *nodes,
			    long *target)
{
	unsigned long given = 0;
	nodemask_t extra;
	u64 wsum = 0, rem, best_rem;
	int nid, best;

	nodes_clear(extra);
	for (nid = 0; nid < nr_node_ids; nid++)
		target[nid] = 0;
	for_each_node_mask(nid, *nodes)
		if (nid < nr_node_ids)
			wsum += weight[nid];
	if (!wsum)
		return false;

	for_each_node_mask(nid, *nodes) {
		if (nid >= nr_node_ids)
			continue;
		target[nid] = div64_u64((u64)total * weight[nid], wsum);
		given += target[nid];
	}

	while (given < total) {
		best = NUMA_NO_NODE;
		best_rem = 0;
		for_each_node_mask(nid, *nodes) {
			if (nid >= nr_node_ids || !weight[nid] ||
			    node_isset(nid, extra))
				continue;
			div64_u64_rem((u64)total * weight[nid], wsum, &rem);
			if (best == NUMA_NO_NODE || rem > best_rem ||
			    (rem == best_rem && cur[nid] > cur[best])) {
				best = nid;
				best_rem = rem;
			}
		}
		/* Cannot happen: fewer pages are left than nodes. */
		if (WARN_ON_ONCE(best == NUMA_NO_NODE))
			break;
		node_set(best, extra);
		target[best]++;
		given++;
	}
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(mpol_rebalance_targets);

/*
 * Pages a node sends away if it keeps or receives @units large folios of
 * @unit pages, with @avail = goal - fixed pages to fill: the large folios
 * it has beyond @units, and the base pages it has beyond what is left of
 * @avail.  A smaller value is a cheaper plan.
 */
static long split_cost(unsigned long unit, unsigned long base,
		       unsigned long large, long avail, long units)
{
	long have = large / unit, left = avail - units * (long)unit;

	return max(0L, have - units) * (long)unit +
	       max(0L, (long)base - max(0L, left));
}

/*
 * The base pages' part of mpol_rebalance_split(), once @large_to is known:
 * each node's room, goal - fixed - large_to, is filled with base pages.
 * When no room is negative the rooms add up to the base pages and every
 * node ends exactly at its goal.  A negative room (a node a large folio
 * took past its goal, or whose fixed pages pass it) gets no base page,
 * so the base pages fall short of the other rooms.  The shortfall is
 * taken off the nodes that receive base pages, evenly (each one's cut
 * limited to what it receives, so no page moves that need not), the
 * last pages from the lowest node ids.
 */
static void split_base(const unsigned long *base, const unsigned long *fixed,
		       const long *goal, const long *large_to, long *base_to)
{
	long excess = 0, step, least;
	int nid, active;

	for (nid = 0; nid < nr_node_ids; nid++) {
		base_to[nid] = max(0L, goal[nid] - (long)fixed[nid] -
				       large_to[nid]);
		excess += base_to[nid] - (long)base[nid];
	}
	while (excess > 0) {
		active = 0;
		least = 0;
		for (nid = 0; nid < nr_node_ids; nid++) {
			if (base_to[nid] <= (long)base[nid])
				continue;
			if (!active++ || base_to[nid] - (long)base[nid] < least)
				least = base_to[nid] - (long)base[nid];
		}
		/* Cannot happen: the rooms exceed the base pages by excess. */
		if (WARN_ON_ONCE(!active))
			break;
		/* An even cut that leaves every receiver receiving. */
		step = min(least, excess / active);
		for (nid = 0; nid < nr_node_ids && excess > 0; nid++) {
			if (base_to[nid] <= (long)base[nid])
				continue;
			base_to[nid] -= step ?: 1;
			excess -= step ?: 1;
		}
	}
}

/**
 * mpol_rebalance_split - plan large folios and base pages to the goals
 * @unit: pages in one large folio, 0 if the range has none
 * @base: per-node base pages in the range
 * @large: per-node pages in large folios of @unit pages
 * @fixed: per-node pages that cannot move
 * @goal: per-node share of the range, from mpol_rebalance_targets()
 * @base_to: filled with the base pages each node ends with
 * @large_to: filled with the large-folio pages each node ends with
 *
 * Large folios are handed out one at a time to the node where one more
 * costs the fewest moved pages (split_cost()).  A node may take one only
 * while it stays within its share, room = goal - fixed - @large_to >=
 * @unit; only when no node has such room may a node with some room left
 * (0 < room < @unit) take one more and end below one folio over its share.
 * Ties go to the node with more room, then to the lower node id.  The
 * base pages then fill what each node has left (split_base()): exactly
 * where they are enough; otherwise the nodes that receive them fall short,
 * none by a folio.  Fixed pages that pass a goal alone are the only way a
 * node ends further off.  The per-node costs only grow with each folio
 * added, so taking the cheapest folio each time gives the fewest moves.
 * With @unit 0, @base_to is @goal less @fixed.
 */
void mpol_rebalance_split(unsigned long unit, const unsigned long *base,
			  const unsigned long *large,
			  const unsigned long *fixed, const long *goal,
			  long *base_to, long *large_to)
{
	long units = 0, room, best_room = 0, cost, best_cost = 0;
	int nid, best, tier, best_tier = 0;

	for (nid = 0; nid < nr_node_ids; nid++) {
		large_to[nid] = 0;
		if (unit)
			units += large[nid] / unit;
	}
	for (; units > 0; units--) {
		best = NUMA_NO_NODE;
		for (nid = 0; nid < nr_node_ids; nid++) {
			long avail = goal[nid] - (long)fixed[nid];
			long given = large_to[nid] / (long)unit;

			room = avail - large_to[nid];
			if (room <= 0)
				continue;
			tier = room < (long)unit;
			cost = split_cost(unit, base[nid], large[nid], avail,
					  given + 1) -
			       split_cost(unit, base[nid], large[nid], avail,
					  given);
			if (best == NUMA_NO_NODE || tier < best_tier ||
			    (tier == best_tier &&
			     (cost < best_cost ||
			      (cost == best_cost && room > best_room)))) {
				best = nid;
				best_tier = tier;
				best_cost = cost;
				best_room = room;
			}
		}
		/* Cannot happen: the goals add up to every page. */
		if (WARN_ON_ONCE(best == NUMA_NO_NODE)) {
			for (nid = 0; nid < nr_node_ids; nid++)
				large_to[nid] = large[nid];
			break;
		}
		large_to[best] += unit;
		/* A range of a few TiB holds millions of huge pages. */
		if (!(units % 1024))
			cond_resched();
	}

	split_base(base, fixed, goal, large_to, base_to);
}
EXPORT_SYMBOL_IF_KUNIT(mpol_rebalance_split);

/**
 * mpol_rebalance_split_sizes - plan folios of several sizes to the goals
 * @nr_sizes: large folio sizes in the range (0..REBALANCE_SIZES)
 * @unit: pages in a folio of each size, largest first
 * @large: per size, ->cur in: per-node pages in folios of that size;
 *	->target out: the pages of that size each node ends with
 * @base: ->cur in: per-node base pages; ->target out: the base pages each
 *	node ends with
 * @fixed: per-node pages that cannot move
 * @goal: per-node share of the range, from mpol_rebalance_targets()
 * @work: scratch, 3 * nr_node_ids entries
 *
 * The largest size is planned first, with mpol_rebalance_split(), against
 * every smaller page as if it were a base page; the nodes then keep what
 * the plan gave them, as fixed pages, and the next size is planned into
 * what is left of each goal, and so on down to the base pages.  Each size
 * fills a node's goal only in steps of its size, so the smaller sizes
 * after it, and the base pages last, make up the rest: the result is
 * exact where they are enough, as with one size.
 */
void mpol_rebalance_split_sizes(int nr_sizes, const unsigned long *unit,
				struct mpol_rebalance_class *large,
				struct mpol_rebalance_class *base,
				const unsigned long *fixed, const long *goal,
				long *work)
{
	unsigned long *placed = (unsigned long *)work;
	unsigned long *smaller = placed + nr_node_ids;
	long *unused = work + 2 * nr_node_ids;
	int i, j, nid;

	memcpy(placed, fixed, nr_node_ids * sizeof(*placed));
	for (i = 0; i < nr_sizes; i++) {
		for (nid = 0; nid < nr_node_ids; nid++) {
			smaller[nid] = base->cur[nid];
			for (j = i + 1; j < nr_sizes; j++)
				smaller[nid] += large[j].cur[nid];
		}
		mpol_rebalance_split(unit[i], smaller, large[i].cur, placed,
				     goal, unused, large[i].target);
		for (nid = 0; nid < nr_node_ids; nid++)
			placed[nid] += large[i].target[nid];
	}
	mpol_rebalance_split(0, base->cur, NULL, placed, goal, base->target,
			     unused);
}
EXPORT_SYMBOL_IF_KUNIT(mpol_rebalance_split_sizes);

static void mpol_rebalance_free(struct mpol_rebalance *rb)
{
	int i;

	kfree(rb->cur);
	kfree(rb->fixed);
	kfree(rb->goal);
	kfree(rb->base.cur);
	kfree(rb->base.target);
	kfree(rb->base.share);
	kfree(rb->base.seen);
	kfree(rb->base.turn);
	for (i = 0; i < REBALANCE_SIZES; i++) {
		kfree(rb->large[i].cur);
		kfree(rb->large[i].target);
		kfree(rb->large[i].share);
		kfree(rb->large[i].seen);
		kfree(rb->large[i].turn);
	}
	kfree(rb->work);
	kfree(rb->to_node);
	kvfree(rb->rec);
}

/*
 * Whether a * b > c * d, exactly.  The factors are page counts of one
 * range, so a product passes 2^64 once a node holds 2^32 pages (16 TiB
 * of base pages): compare the 128-bit products, the high halves from
 * mul_u64_u64_shr() (a u128 multiply where the architecture has one),
 * the low halves wrapping.
 */
static bool rebalance_mul_gt(u64 a, u64 b, u64 c, u64 d)
{
	u64 ab_hi = mul_u64_u64_shr(a, b, 64);
	u64 cd_hi = mul_u64_u64_shr(c, d, 64);

	return ab_hi > cd_hi || (ab_hi == cd_hi && a * b > c * d);
}

/**
 * mpol_rebalance_pick - where a folio met by the second walk goes, if anywhere
 * @c: the plan for the folio's kind in the range
 * @src: the folio's node; c->seen[@src] already counts its pages
 * @pages: pages in the folio
 *
 * Taking surplus pages in address order would cluster the moved pages and
 * leave long runs of one node.  Instead a node above its share gives up
 * its surplus spread evenly over the range: once it has passed s of its c
 * resident pages it has given floor(s * surplus / c), one page in every
 * c / surplus of its own.  A page that cannot move (mapped elsewhere,
 * pinned) leaves a gap that the next one fills.  Destinations are handed
 * out in weighted round robin, each in proportion to its room, so that
 * each receives pages spread over the range as well.  Every window of
 * the range thus stays close to the weighted mix, as after a fresh fault.
 *
 * Return: the destination node, or NUMA_NO_NODE if the folio stays.
 */
int mpol_rebalance_pick(const struct mpol_rebalance_class *c, int src,
			long pages)
{
	long surplus = c->share[src], given, room, got;
	long best_got = 0, best_room = 1;
	int dst, best = NUMA_NO_NODE;

	if (surplus <= 0 || c->target[src] < pages)
		return NUMA_NO_NODE;
	given = surplus - c->target[src];
	/* Not before its turn: given + pages <= seen * surplus / cur. */
	if (rebalance_mul_gt(given + pages, c->cur[src], c->seen[src],
			     surplus))
		return NUMA_NO_NODE;
	for (dst = 0; dst < nr_node_ids; dst++) {
		room = -c->share[dst];
		if (room <= 0 || -c->target[dst] < pages)
			continue;
		got = room + c->target[dst];
		/* The least served: smallest (got + pages) / room. */
		if (best == NUMA_NO_NODE ||
		    rebalance_mul_gt(best_got + pages, room, got + pages,
				     best_room)) {
			best = dst;
			best_got = got;
			best_room = room;
		}
	}
	return best;
}
EXPORT_SYMBOL_IF_KUNIT(mpol_rebalance_pick);

/**
 * mpol_rebalance_take - account a folio queued to move
 * @rb: state of the second walk over a range
 * @c: the plan for the folio's kind
 * @src: the node it leaves
 * @dst: the node it goes to, from mpol_rebalance_pick()
 * @pages: pages in the folio
 */
void mpol_rebalance_take(struct mpol_rebalance *rb,
			 struct mpol_rebalance_class *c, int src, int dst,
			 long pages)
{
	c->target[src] -= pages;
	c->target[dst] += pages;
	rb->queued += pages;
	rb->batch += pages;
	rb->to_queue -= min_t(unsigned long, pages, rb->to_queue);
}
EXPORT_SYMBOL_IF_KUNIT(mpol_rebalance_take);

/*
 * Set @c->turn[@src] for folios of @unit pages: the least seen with
 * (given + @unit) * cur <= seen * surplus, mpol_rebalance_pick()'s turn,
 * or ULONG_MAX if @src has no folio left to send.  given + @unit is at
 * most surplus, so the quotient is at most cur.
 */
static void rebalance_turn(struct mpol_rebalance_class *c, int src,
			   unsigned long unit)
{
	long surplus = c->share[src];
	u64 need, seen;

	if (surplus <= 0 || c->target[src] < (long)unit) {
		c->turn[src] = ULONG_MAX;
		return;
	}
	need = surplus - c->target[src] + unit;
	seen = mul_u64_u64_div_u64(need, c->cur[src], surplus);
	if (rebalance_mul_gt(need, c->cur[src], seen, surplus))
		seen++;
	c->turn[src] = seen;
}

/*
 * Whose turn it is: the destination of a folio of @pages pages on @src
 * that the second pass has just counted in @c->seen, or NUMA_NO_NODE.
 * @c->turn spares mpol_rebalance_pick() for the folios before the turn;
 * at the turn with no destination left, none of @src's will find one.
 */
static int rebalance_due(struct mpol_rebalance_class *c, int src,
			 unsigned long pages)
{
	int dst;

	if (c->seen[src] < c->turn[src])
		return NUMA_NO_NODE;
	dst = mpol_rebalance_pick(c, src, pages);
	if (dst == NUMA_NO_NODE) {
		rebalance_turn(c, src, pages);
		if (c->turn[src] <= c->seen[src])
			c->turn[src] = ULONG_MAX;
	}
	return dst;
}

static int rebalance_class_alloc(struct mpol_rebalance_class *c)
{
	c->cur = kcalloc(nr_node_ids, sizeof(*c->cur), GFP_KERNEL);
	c->target = kcalloc(nr_node_ids, sizeof(*c->target), GFP_KERNEL);
	c->share = kcalloc(nr_node_ids, sizeof(*c->share), GFP_KERNEL);
	c->seen = kcalloc(nr_node_ids, sizeof(*c->seen), GFP_KERNEL);
	c->turn = kcalloc(nr_node_ids, sizeof(*c->turn), GFP_KERNEL);
	return c->cur && c->target && c->share && c->seen && c->turn ?
	       0 : -ENOMEM;
}

/**
 * mpol_rebalance_init - set up a rebalance call
 * @rb: state to set up
 * @flags: MPOL_MF_MOVE_ALL to move pages mapped by other processes too
 *
 * Return: 0 or -ENOMEM.
 */
int mpol_rebalance_init(struct mpol_rebalance *rb, unsigned long flags)
{
	int nid, i, err;

	memset(rb, 0, sizeof(*rb));
	rb->flags = flags;
	rb->cur = kcalloc(nr_node_ids, sizeof(*rb->cur), GFP_KERNEL);
	rb->fixed = kcalloc(nr_node_ids, sizeof(*rb->fixed), GFP_KERNEL);
	rb->goal = kcalloc(nr_node_ids, sizeof(*rb->goal), GFP_KERNEL);
	rb->to_node = kcalloc(nr_node_ids, sizeof(*rb->to_node), GFP_KERNEL);
	rb->work = kcalloc(3 * nr_node_ids, sizeof(*rb->work), GFP_KERNEL);
	err = !rb->cur || !rb->fixed || !rb->goal || !rb->to_node ||
	      !rb->work || rebalance_class_alloc(&rb->base);
	for (i = 0; i < REBALANCE_SIZES && !err; i++)
		err = rebalance_class_alloc(&rb->large[i]);
	if (err) {
		mpol_rebalance_free(rb);
		return -ENOMEM;
	}
	for (nid = 0; nid < nr_node_ids; nid++)
		INIT_LIST_HEAD(&rb->to_node[nid]);
	/* Without a record, the second pass walks the ranges again. */
	rb->rec = kvmalloc_array(REBALANCE_RECORD, sizeof(*rb->rec),
				 GFP_KERNEL | __GFP_NOWARN);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(mpol_rebalance_init);

/**
 * mpol_rebalance_vma_ok - can rebalance handle @vma?
 * @vma: the VMA
 *
 * Rebalance handles private anonymous memory, shmem (including shared
 * anonymous memory and SysV shared memory) and hugetlb; page cache of
 * regular files is left where it is.
 *
 * Return: true if @vma's pages may be rebalanced.
 */
bool mpol_rebalance_vma_ok(struct vm_area_struct *vma)
{
	if (!vma_migratable(vma))
		return false;
	return vma_is_anonymous(vma) || mpol_vma_shared_policy(vma) ||
	       is_vm_hugetlb_page(vma);
}

/*
 * Queue @folio for @dst if it is ours to move; false if it stays.
 * @pt_shared: mapped through a page table other processes share (hugetlb)
 */
static bool rebalance_isolate(struct mpol_rebalance *rb, struct folio *folio,
			      int dst, bool pt_shared)
{
	/* As mbind(): pages other processes map need MPOL_MF_MOVE_ALL. */
	if (!(rb->flags & MPOL_MF_MOVE_ALL) &&
	    (folio_likely_mapped_shared(folio) || pt_shared))
		return false;
	/* A hugetlb folio is not on the LRU; isolate it from its hstate. */
	if (folio_test_hugetlb(folio))
		return isolate_hugetlb(folio, &rb->to_node[dst]);
	if (!folio_isolate_lru(folio))
		return false;
	list_add_tail(&folio->lru, &rb->to_node[dst]);
	node_stat_mod_folio(folio, NR_ISOLATED_ANON + folio_is_file_lru(folio),
			    folio_nr_pages(folio));
	return true;
}

/* The plan of @rb for folios of @pages pages, or NULL if none is. */
static struct mpol_rebalance_class *
rebalance_class(struct mpol_rebalance *rb, unsigned long pages)
{
	int i;

	if (pages == 1)
		return &rb->base;
	for (i = 0; i < rb->nr_sizes; i++)
		if (rb->unit[i] == pages)
			return &rb->large[i];
	return NULL;
}

/*
 * Make room for large folios of @pages pages among the planned sizes,
 * largest first.  With REBALANCE_SIZES sizes planned already, the
 * smallest of them and @pages, the folios of the smaller one stay, as
 * fixed.  Return: the plan for the size, or NULL if it stays.
 */
static struct mpol_rebalance_class *
rebalance_add_size(struct mpol_rebalance *rb, unsigned long pages)
{
	struct mpol_rebalance_class last;
	int i, nid;

	if (rb->nr_sizes == REBALANCE_SIZES) {
		if (pages < rb->unit[REBALANCE_SIZES - 1])
			return NULL;
		last = rb->large[REBALANCE_SIZES - 1];
		for (nid = 0; nid < nr_node_ids; nid++) {
			rb->fixed[nid] += last.cur[nid];
			last.cur[nid] = 0;
		}
		rb->nr_sizes--;
	} else {
		last = rb->large[rb->nr_sizes];
	}
	/* Keep the sizes in order; the class arrays move with their size. */
	for (i = rb->nr_sizes; i > 0 && rb->unit[i - 1] < pages; i--) {
		rb->unit[i] = rb->unit[i - 1];
		rb->large[i] = rb->large[i - 1];
	}
	rb->unit[i] = pages;
	rb->large[i] = last;
	rb->nr_sizes++;
	return &rb->large[i];
}

/*
 * Record the folio at @addr, whole in the range, on node @nid, of @order,
 * for the second pass.  Once @rb->rec is full, or the folio lies 2^32
 * pages past the first, @rb->rec_end marks it: the second pass walks
 * the range from there.
 */
static void rebalance_record(struct mpol_rebalance *rb, unsigned long addr,
			     int nid, unsigned int order)
{
	struct mpol_rebalance_rec *r;
	unsigned long pgoff;

	if (!rb->rec || rb->rec_end)
		return;
	if (!rb->rec_len)
		rb->rec_start = addr;
	pgoff = (addr - rb->rec_start) >> PAGE_SHIFT;
	if (rb->rec_len == REBALANCE_RECORD || pgoff > U32_MAX) {
		rb->rec_end = addr;
		return;
	}
	r = &rb->rec[rb->rec_len++];
	r->pgoff = pgoff;
	r->nid = nid;
	r->order = order;
}

/*
 * Counting walk: count @folio, mapped at @addr, of which @nr pages are
 * mapped in the range, in its kind, and record it.  A large folio only
 * partly mapped in the range would move pages outside it, so it stays.
 */
static void rebalance_count(struct mpol_rebalance *rb, struct folio *folio,
			    unsigned long addr, int src, unsigned long nr)
{
	unsigned long pages = folio_nr_pages(folio);
	struct mpol_rebalance_class *c;

	rb->cur[src] += nr;
	rb->scanned += nr;
	/*
	 * Only part of it in the range, or pinned for DMA (migration would
	 * fail on every attempt): it stays, and the plan works around it.
	 */
	if (nr != pages || folio_maybe_dma_pinned(folio)) {
		rb->fixed[src] += nr;
		return;
	}
	c = rebalance_class(rb, pages);
	if (!c)
		c = rebalance_add_size(rb, pages);
	if (c) {
		c->cur[src] += pages;
		rebalance_record(rb, addr, src, folio_order(folio));
	} else {
		rb->fixed[src] += pages;
	}
}

/*
 * Is there room in the batch for a folio of @pages pages?  A batch holds
 * at most REBALANCE_BATCH pages, but a large folio moves whole: an empty
 * batch takes any folio, so one of REBALANCE_BATCH pages or more is a
 * batch of its own.
 */
static bool rebalance_batch_room(const struct mpol_rebalance *rb,
				 unsigned long pages)
{
	return !rb->batch || rb->batch + pages <= REBALANCE_BATCH;
}

/* Has the second pass queued the range's plan, or filled a batch? */
static bool rebalance_batch_done(struct mpol_rebalance *rb)
{
	return !rb->counting &&
	       (!rb->to_queue || rb->full || rb->batch >= REBALANCE_BATCH);
}

/* The address of the folio recorded in @r. */
static unsigned long rebalance_rec_addr(const struct mpol_rebalance *rb,
					const struct mpol_rebalance_rec *r)
{
	return rb->rec_start + ((unsigned long)r->pgoff << PAGE_SHIFT);
}

/* The recorded folio being visited is done with, found or not. */
static void rebalance_visited(struct mpol_rebalance *rb)
{
	rb->rec_next++;
	rb->visit_dst = NUMA_NO_NODE;
}

enum { REBALANCE_REC_END, REBALANCE_REC_DUE, REBALANCE_REC_STOP };

/*
 * From @rb->rec_next on, the next recorded folio due to move, as a walk
 * would find it (rebalance_due(), with the pages of its kind and node
 * before it taken from the record), among those @last pages or less past
 * @rb->rec_start.  An entry counts as one of the step; with @mm, the lock
 * is looked at every PTRS_PER_PTE entries, as a walk looks at it at the
 * end of each page table.
 *
 * Return: REBALANCE_REC_DUE with @rb->rec_next at the folio, @rb->visit
 * and @rb->visit_dst set; REBALANCE_REC_END if there is none; or
 * REBALANCE_REC_STOP at @rb->rec_next, the batch full (no room for that
 * folio, @rb->full, or REBALANCE_BATCH pages) or the lock wanted.
 */
static int rebalance_rec_scan(struct mpol_rebalance *rb, unsigned long last,
			      struct mm_struct *mm)
{
	unsigned long *base_seen = rb->base.seen, *base_turn = rb->base.turn;
	const struct mpol_rebalance_rec *rec = rb->rec, *r;
	unsigned int i = rb->rec_next, from = i, len = rb->rec_len;
	unsigned int check = mm ? i : UINT_MAX;
	int nid, dst, ret = REBALANCE_REC_END;
	struct mpol_rebalance_class *c;
	unsigned long pages;

	for (; i < len; i++) {
		r = &rec[i];
		if (r->pgoff >= last)
			break;
		if (unlikely(i == check)) {
			check += PTRS_PER_PTE;
			rb->steps += i - from;
			from = i;
			if (rebalance_batch_done(rb) ||
			    mpol_rebalance_lock_wanted(rb, mm)) {
				ret = REBALANCE_REC_STOP;
				break;
			}
		}
		nid = r->nid;
		if (likely(!r->order)) {
			/* A base page, most of any range: kept short. */
			if (likely(++base_seen[nid] < base_turn[nid]))
				continue;
			c = &rb->base;
			pages = 1;
		} else {
			pages = 1UL << r->order;
			c = rebalance_class(rb, pages);
			if (!c)
				continue;
			c->seen[nid] += pages;
			if (c->seen[nid] < c->turn[nid])
				continue;
		}
		dst = rebalance_due(c, nid, pages);
		if (dst == NUMA_NO_NODE)
			continue;
		if (!rebalance_batch_room(rb, pages)) {
			/* The next batch starts with it, and sees it again. */
			c->seen[nid] -= pages;
			rb->full = true;
			ret = REBALANCE_REC_STOP;
			break;
		}
		rb->visit = r;
		rb->visit_dst = dst;
		ret = REBALANCE_REC_DUE;
		break;
	}
	rb->steps += i - from;
	rb->rec_next = i;
	return ret;
}

/*
 * Visiting recorded folios in a page table, from @addr to @end: where the
 * next one due is, @addr if it is the one pending, @end if none is left
 * (then the batch may be full).  A pending one passed by was not there.
 */
static unsigned long rebalance_visit_next(struct mpol_rebalance *rb,
					  unsigned long addr,
					  unsigned long end)
{
	unsigned long next;

	if (rb->visit_dst != NUMA_NO_NODE) {
		next = rebalance_rec_addr(rb, rb->visit);
		if (next >= addr)
			return min(next, end);
		rebalance_visited(rb);
	}
	if (rebalance_batch_done(rb) || end <= rb->rec_start ||
	    rebalance_rec_scan(rb, (end - rb->rec_start) >> PAGE_SHIFT,
			       NULL) != REBALANCE_REC_DUE)
		return end;
	return min(rebalance_rec_addr(rb, rb->visit), end);
}

/*
 * Count @folio, mapped at @addr, of which @nr pages are mapped in the
 * range, in the counting walk; in the second pass, queue it if its kind's
 * plan sends it somewhere, or, visiting a recorded folio the plan sends
 * (@rb->visit), if it is that folio still: whole, of the recorded order,
 * on the recorded node.
 * @pt_shared: see rebalance_isolate()
 *
 * Return: false if the second pass must stop before @folio: it is to
 * move, but the batch has no room for it (@rb->full).
 */
static bool rebalance_folio(struct mpol_rebalance *rb, struct folio *folio,
			    unsigned long addr, unsigned long nr,
			    bool pt_shared)
{
	const struct mpol_rebalance_rec *r = rb->visit;
	int src = folio_nid(folio);
	struct mpol_rebalance_class *c;
	long pages = nr;
	int dst;

	if (rb->counting) {
		rebalance_count(rb, folio, addr, src, nr);
		return true;
	}
	if (r) {
		if (rb->visit_dst == NUMA_NO_NODE ||
		    addr != rebalance_rec_addr(rb, r))
			return true;
		dst = rb->visit_dst;
		rebalance_visited(rb);
		/* Changed since it was counted: the next one fills the gap. */
		if (src != r->nid || nr != folio_nr_pages(folio) ||
		    folio_order(folio) != r->order ||
		    folio_maybe_dma_pinned(folio))
			return true;
		c = rebalance_class(rb, nr);
		if (c && rebalance_isolate(rb, folio, dst, pt_shared)) {
			mpol_rebalance_take(rb, c, src, dst, pages);
			rebalance_turn(c, src, nr);
		}
		return true;
	}
	/* Fixed when counted, or pinned since: not in the plan. */
	if (nr != folio_nr_pages(folio) || folio_maybe_dma_pinned(folio))
		return true;
	c = rebalance_class(rb, nr);
	if (!c)
		return true;
	c->seen[src] += nr;
	dst = rebalance_due(c, src, nr);
	if (dst == NUMA_NO_NODE)
		return true;
	if (!rebalance_batch_room(rb, nr)) {
		/* The next batch starts with it, and sees it again. */
		c->seen[src] -= nr;
		rb->full = true;
		return false;
	}
	if (rebalance_isolate(rb, folio, dst, pt_shared)) {
		mpol_rebalance_take(rb, c, src, dst, pages);
		rebalance_turn(c, src, nr);
	}
	return true;
}

/**
 * mpol_rebalance_lock_wanted - has this hold of mmap_lock lasted a step?
 * @rb: state from mpol_rebalance_init()
 * @mm: the address space walked
 *
 * Context: mmap_read_lock(@mm) held.
 * Return: true once the walks have passed REBALANCE_WALK_STEP page-table
 * entries since the caller took mmap_lock (@rb->steps, which the caller
 * clears when it takes it), or when a writer waits for the lock.
 */
bool mpol_rebalance_lock_wanted(struct mpol_rebalance *rb,
				struct mm_struct *mm)
{
	mmap_assert_locked(mm);
	return rb->steps >= REBALANCE_WALK_STEP || mmap_lock_is_contended(mm);
}
EXPORT_SYMBOL_IF_KUNIT(mpol_rebalance_lock_wanted);

/*
 * What an entry callback returns, at @addr, where it stopped (recorded in
 * @rb->resume, to go on from): a positive value ends the walk once the
 * second walk's batch is done (rebalance_batch_done()), or once either
 * walk has held mmap_lock for a step or a writer waits for it; -EINTR
 * ends the counting walk on a fatal signal.
 */
static int rebalance_walk_stop(struct mpol_rebalance *rb,
			       struct mm_walk *walk, unsigned long addr)
{
	rb->resume = addr;
	if (rb->counting && fatal_signal_pending(current))
		return -EINTR;
	if (rebalance_batch_done(rb))
		return 1;
	return mpol_rebalance_lock_wanted(rb, walk->mm);
}

/*
 * @nr pages of @page under migration (NUMA balancing, compaction, another
 * call) when the counting walk reaches them: where they land is not this
 * call's to plan.  They count as fixed on the node they are leaving, as a
 * pinned folio does, and not as failed: whether they had to move is not
 * known, and compaction running is no failure of the caller's.
 */
static void rebalance_busy(struct mpol_rebalance *rb, struct page *page,
			   unsigned long nr)
{
	int nid = page_to_nid(page);

	if (!rb->counting)
		return;
	rb->cur[nid] += nr;
	rb->fixed[nid] += nr;
	rb->scanned += nr;
	rb->busy += nr;
}

static int rebalance_pmd_entry(pmd_t *pmd, unsigned long addr,
			       unsigned long end, struct mm_walk *walk)
{
	struct mpol_rebalance *rb = walk->private;
	struct vm_area_struct *vma = walk->vma;
	unsigned long next;
	pte_t *pte, *mapped_pte;
	struct folio *folio;
	spinlock_t *ptl;	/* the page table's lock, held over the PTEs */
	int nr, max_nr;
	bool room = true;
	pte_t ptent;

	ptl = pmd_trans_huge_lock(pmd, vma);
	if (ptl) {
		pmd_t pmdval = pmdp_get(pmd);

		rb->steps++;

		/*
		 * A non-present PMD (a migration entry, or a device-private
		 * THP) has nothing to rebalance now; the huge zero folio is
		 * not "normal".  The range may cover only part of the folio.
		 */
		folio = pmd_present(pmdval) ?
			vm_normal_folio_pmd(vma, addr, pmdval) : NULL;
		if (is_pmd_migration_entry(pmdval))
			rebalance_busy(rb,
				       pfn_swap_entry_to_page(pmd_to_swp_entry(pmdval)),
				       (end - addr) >> PAGE_SHIFT);
		else if (folio && !folio_is_zone_device(folio))
			room = rebalance_folio(rb, folio, addr,
					       (end - addr) >> PAGE_SHIFT, false);
		spin_unlock(ptl);
		/* Without room the next batch starts at this folio. */
		return rebalance_walk_stop(rb, walk, room ? end : addr);
	}

	mapped_pte = pte_offset_map_lock(walk->mm, pmd, addr, &ptl);
	pte = mapped_pte;
	if (!pte) {
		walk->action = ACTION_AGAIN;
		return 0;
	}
	/* Visiting, the recorded folios passed count as the step. */
	if (!rb->visit)
		rb->steps += (end - addr) >> PAGE_SHIFT;
	for (; addr != end; pte += nr, addr += nr * PAGE_SIZE) {
		nr = 1;
		if (rebalance_batch_done(rb))
			break;
		/* Visiting: straight to the next recorded folio due. */
		if (rb->visit) {
			next = rebalance_visit_next(rb, addr, end);
			if (next != addr) {
				nr = (next - addr) >> PAGE_SHIFT;
				continue;
			}
		}
		ptent = ptep_get(pte);
		if (!pte_present(ptent)) {
			/* Off the hot path: most PTEs here map a page. */
			swp_entry_t entry = pte_to_swp_entry(ptent);

			if (!pte_none(ptent) && is_migration_entry(entry))
				rebalance_busy(rb, pfn_swap_entry_to_page(entry), 1);
			continue;
		}
		folio = vm_normal_folio(vma, addr, ptent);
		if (!folio || folio_is_zone_device(folio) ||
		    folio_test_reserved(folio))
			continue;
		/* Take a large folio's PTEs together, so it is seen once. */
		max_nr = (end - addr) >> PAGE_SHIFT;
		if (folio_test_large(folio) && max_nr != 1)
			nr = folio_pte_batch(folio, addr, pte, ptent, max_nr,
					     FPB_IGNORE_DIRTY |
					     FPB_IGNORE_SOFT_DIRTY,
					     NULL, NULL, NULL);
		/* Without room, stop at the folio: the next batch starts there. */
		if (!rebalance_folio(rb, folio, addr, nr, false))
			break;
	}
	pte_unmap_unlock(mapped_pte, ptl);
	cond_resched();
	return rebalance_walk_stop(rb, walk, addr);
}

#ifdef CONFIG_HUGETLB_PAGE
static int rebalance_hugetlb_entry(pte_t *pte, unsigned long hmask,
				   unsigned long addr, unsigned long end,
				   struct mm_walk *walk)
{
	struct mpol_rebalance *rb = walk->private;
	spinlock_t *ptl;	/* the huge page table's lock, held over the entry */
	bool room = true;
	pte_t entry;

	rb->steps++;
	ptl = huge_pte_lock(hstate_vma(walk->vma), walk->mm, pte);
	entry = huge_ptep_get(walk->mm, addr, pte);
	if (pte_present(entry))
		room = rebalance_folio(rb, pfn_folio(pte_pfn(entry)), addr,
				       (end - addr) >> PAGE_SHIFT,
				       hugetlb_pmd_shared(pte));
	else if (is_hugetlb_entry_migration(entry))
		rebalance_busy(rb,
			       pfn_swap_entry_to_page(pte_to_swp_entry(entry)),
			       (end - addr) >> PAGE_SHIFT);
	spin_unlock(ptl);
	cond_resched();
	return rebalance_walk_stop(rb, walk, room ? end : addr);
}
#else
#define rebalance_hugetlb_entry NULL
#endif

/* No page table over [@addr, @next): one entry of the step, however large. */
static int rebalance_pte_hole(unsigned long addr, unsigned long next,
			      int depth, struct mm_walk *walk)
{
	struct mpol_rebalance *rb = walk->private;

	rb->steps++;
	return rebalance_walk_stop(rb, walk, next);
}

static const struct mm_walk_ops rebalance_walk_ops = {
	.pmd_entry = rebalance_pmd_entry,
	.pte_hole = rebalance_pte_hole,
	.hugetlb_entry = rebalance_hugetlb_entry,
	.walk_lock = PGWALK_RDLOCK,
};

/*
 * Start a plan for @c, of folios of @unit pages: its pages to send or
 * take are @cur - @to.
 */
static unsigned long rebalance_class_plan(struct mpol_rebalance_class *c,
					  unsigned long unit)
{
	unsigned long needed = 0;
	int nid;

	for (nid = 0; nid < nr_node_ids; nid++) {
		c->target[nid] = (long)c->cur[nid] - c->target[nid];
		c->share[nid] = c->target[nid];
		c->seen[nid] = 0;
		rebalance_turn(c, nid, unit);
		if (c->target[nid] > 0)
			needed += c->target[nid];
	}
	return needed;
}

static void rebalance_class_clear(struct mpol_rebalance_class *c)
{
	memset(c->cur, 0, nr_node_ids * sizeof(*c->cur));
}

/**
 * mpol_rebalance_count_begin - start counting a range
 * @rb: state from mpol_rebalance_init()
 *
 * Clears the counts of the last range, for mpol_rebalance_count().
 */
void mpol_rebalance_count_begin(struct mpol_rebalance *rb)
{
	int i;

	memset(rb->cur, 0, nr_node_ids * sizeof(*rb->cur));
	memset(rb->fixed, 0, nr_node_ids * sizeof(*rb->fixed));
	rebalance_class_clear(&rb->base);
	/* The sizes past those of the last range were never counted in. */
	for (i = 0; i < rb->nr_sizes; i++)
		rebalance_class_clear(&rb->large[i]);
	rb->nr_sizes = 0;
	rb->to_queue = 0;
	rb->rec_len = 0;
	rb->rec_next = 0;
	rb->rec_end = 0;
	rb->visit_dst = NUMA_NO_NODE;
}
EXPORT_SYMBOL_IF_KUNIT(mpol_rebalance_count_begin);

/**
 * mpol_rebalance_count - count the resident pages of a range, a step at a time
 * @rb: state after mpol_rebalance_count_begin()
 * @vma: the VMA, accepted by mpol_rebalance_vma_ok()
 * @start: where to count from: the start of the range, or @rb->resume
 *	after the last step
 * @end: end of the range in @vma
 *
 * Adds the resident pages of [@start, @end) to the counts, per node and
 * kind, and stops early, at the end of a page table, once
 * mpol_rebalance_lock_wanted().  The range must be under one policy.
 *
 * Context: mmap_read_lock() held, so the VMA stays.  Between steps the
 * caller may drop it, as long as it checks that the range still has the
 * shares it is counted for: faults, reclaim, truncation or collapse may
 * add or remove pages meanwhile, and the plan copes with that (see
 * mpol_rebalance_plan()).
 * Return: 0 when @end is reached; 1 if the walk stopped at @rb->resume to
 * let mmap_lock go; -EINTR if a fatal signal is pending.
 */
int mpol_rebalance_count(struct mpol_rebalance *rb, struct vm_area_struct *vma,
			 unsigned long start, unsigned long end)
{
	int err;

	mmap_assert_locked(vma->vm_mm);
	rb->counting = true;
	err = walk_page_range_vma(vma, start, end, &rebalance_walk_ops, rb);
	if (err > 0 && rb->resume >= end)
		return 0;
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(mpol_rebalance_count);

/**
 * mpol_rebalance_plan_steps - what mpol_rebalance_plan() would cost
 * @rb: state with a range counted
 *
 * Return: the plan's cost in REBALANCE_WALK_STEP units: the large folios
 * counted are handed out one at a time, each weighed against every node.
 */
unsigned long mpol_rebalance_plan_steps(const struct mpol_rebalance *rb)
{
	unsigned long units = 1;
	int i, nid;

	for (i = 0; i < rb->nr_sizes; i++)
		for (nid = 0; nid < nr_node_ids; nid++)
			units += rb->large[i].cur[nid] / rb->unit[i];
	return units * nr_node_ids;
}
EXPORT_SYMBOL_IF_KUNIT(mpol_rebalance_plan_steps);

/**
 * mpol_rebalance_plan - plan the moves that bring a counted range to its shares
 * @rb: state with a range counted by mpol_rebalance_count()
 * @nodes: the policy's nodes
 * @weight: each node's effective weight (nr_node_ids entries)
 *
 * Works out each node's share of the pages counted with
 * mpol_rebalance_targets() and splits it between large folios and base
 * pages with mpol_rebalance_split_sizes().  On return @rb->to_queue pages
 * are to be queued by mpol_rebalance_queue().  Faults, reclaim, truncation
 * or collapse can add or remove pages of the range before they are
 * queued: a page added where the record covers the range stays where it
 * is, one added past it is queued only if its node has surplus left, and
 * the pages counted as needed that are gone are reported as not moved.
 *
 * Context: needs no lock; may sleep.  It works on @rb's counts only.
 */
void mpol_rebalance_plan(struct mpol_rebalance *rb, const nodemask_t *nodes,
			 const u8 *weight)
{
	unsigned long total = 0, needed;
	int nid, i;

	for (nid = 0; nid < nr_node_ids; nid++)
		total += rb->cur[nid];
	if (!total)
		return;

	/*
	 * No node of the nodemask in effect has a weight left (a cpuset can
	 * leave only nodes of weight 0): there is nowhere to move pages to.
	 */
	if (!mpol_rebalance_targets(total, rb->cur, weight, nodes, rb->goal))
		return;
	mpol_rebalance_split_sizes(rb->nr_sizes, rb->unit, rb->large, &rb->base,
				   rb->fixed, rb->goal, rb->work);
	needed = rebalance_class_plan(&rb->base, 1);
	for (i = 0; i < rb->nr_sizes; i++)
		needed += rebalance_class_plan(&rb->large[i], rb->unit[i]);
	rb->needed += needed;
	rb->to_queue = needed;
}
EXPORT_SYMBOL_IF_KUNIT(mpol_rebalance_plan);

/**
 * mpol_rebalance_lru_disable - keep the folios to move isolatable
 * @rb: state from mpol_rebalance_init()
 * @mm: the address space the call walks
 *
 * Freshly faulted folios wait in per-CPU batches, off the LRU, where they
 * cannot be isolated: lru_cache_disable() drains them, and keeps new ones
 * from gathering, until mpol_rebalance_finish() turns the caches back on,
 * as mbind() and migrate_pages() keep them off around their isolation and
 * migration.  Called once a plan has pages to queue, before the first
 * mpol_rebalance_queue() of the call, so a call with nothing to move
 * never costs every CPU a drain; later calls do nothing.
 *
 * Context: process context, @mm's mmap_lock not held: lru_cache_disable()
 * waits for an expedited RCU grace period and a drain on every CPU.
 */
void mpol_rebalance_lru_disable(struct mpol_rebalance *rb,
				struct mm_struct *mm)
{
	lockdep_assert_not_held(&mm->mmap_lock);
	might_sleep();
	if (rb->lru_disabled)
		return;
	lru_cache_disable();
	rb->lru_disabled = true;
}
EXPORT_SYMBOL_IF_KUNIT(mpol_rebalance_lru_disable);

/*
 * The second pass over the folios the counting walk recorded, up to @end:
 * only the folios the plan sends away are visited (rebalance_rec_scan()),
 * under their page table's lock, those of one page table in one go: if
 * the folio there is still the one recorded, whole, of its order and on
 * its node, it is isolated; if not, the next of its node fills the gap.
 * mmap_lock may have been dropped since the count, so a recorded folio is
 * only an address to look at.
 *
 * Return: true once the record is done up to @end; false if the pass
 * stopped at @rb->resume (batch full or done, or the lock wanted).
 */
static bool rebalance_replay(struct mpol_rebalance *rb,
			     struct vm_area_struct *vma, unsigned long end)
{
	unsigned long addr, last, to;
	int ret;

	/* The run may have been cut short while mmap_lock was dropped. */
	if (rb->rec_next >= rb->rec_len || end <= rb->rec_start)
		return true;
	last = (end - rb->rec_start) >> PAGE_SHIFT;
	while ((ret = rebalance_rec_scan(rb, last, vma->vm_mm)) ==
	       REBALANCE_REC_DUE) {
		addr = rebalance_rec_addr(rb, rb->visit);
		/* A page table's folios together; a larger folio alone. */
		if (rb->visit->order < PMD_ORDER && !is_vm_hugetlb_page(vma))
			to = pmd_addr_end(addr, end);
		else
			to = min(end, addr + (PAGE_SIZE << rb->visit->order));
		walk_page_range_vma(vma, addr, to, &rebalance_walk_ops, rb);
		/* Not met on the way: not there any more. */
		if (rb->visit_dst != NUMA_NO_NODE)
			rebalance_visited(rb);
		rb->visit = NULL;
		if (rebalance_batch_done(rb))
			break;
	}
	rb->visit = NULL;
	if (ret == REBALANCE_REC_END || rb->rec_next >= rb->rec_len)
		return true;
	rb->resume = rebalance_rec_addr(rb, &rb->rec[rb->rec_next]);
	return false;
}

/**
 * mpol_rebalance_queue - isolate the next batch of a range's planned moves
 * @rb: state with a plan from mpol_rebalance_plan(), after
 *	mpol_rebalance_lru_disable()
 * @vma: the VMA of the plan, or the one now at @start (see below)
 * @start: where to go on: the start of the planned range, or
 *	@rb->resume after the previous batch or step
 * @end: end of the planned range in @vma
 *
 * Goes on from @start, through the folios the counting walk recorded and
 * then, past them, with a walk (see rebalance_replay()), isolating folios
 * from nodes above their plan, spread
 * over the range, each queued for a node below its plan, until the plan is
 * all queued, @end is reached, the batch is full (mpol_rebalance_full()):
 * it holds REBALANCE_BATCH pages, or the next folio to queue would take it
 * past them, or mpol_rebalance_lock_wanted().  A large folio is never
 * split: one of REBALANCE_BATCH pages or more is queued only into an
 * empty batch, and is then a batch of its own.  @rb->resume is where the
 * walk stopped, the start of the folio that did not fit if one did not.
 * Between batches and steps mmap_lock may be dropped, as long as the
 * caller checks that the rest of the range still has the plan's policy
 * and shares.
 *
 * Context: mmap_read_lock() held; may sleep.
 * Return: true if the walk stopped before @end with the plan not all
 * queued: if mpol_rebalance_full(), migrate the batch with
 * mpol_rebalance_migrate(); then go on from @rb->resume.
 */
bool mpol_rebalance_queue(struct mpol_rebalance *rb,
			  struct vm_area_struct *vma, unsigned long start,
			  unsigned long end)
{
	mmap_assert_locked(vma->vm_mm);
	rb->resume = end;
	if (!rb->to_queue)
		return false;
	VM_WARN_ON_ONCE(!rb->lru_disabled);
	rb->counting = false;
	if (!rebalance_replay(rb, vma, end))
		goto out;
	/* Recorded whole: nothing is left to walk. */
	if (rb->rec && !rb->rec_end) {
		rb->resume = end;
		goto out;
	}
	start = max(start, rb->rec_end);
	if (start >= end ||
	    walk_page_range_vma(vma, start, end, &rebalance_walk_ops, rb) <= 0)
		rb->resume = end;
out:
	return mpol_rebalance_full(rb) || (rb->to_queue && rb->resume < end);
}
EXPORT_SYMBOL_IF_KUNIT(mpol_rebalance_queue);

/**
 * mpol_rebalance_full - is the batch full?
 * @rb: state after mpol_rebalance_queue()
 *
 * Return: true if the batch holds REBALANCE_BATCH pages or more, or the
 * next folio to queue did not fit: migrate it before queueing more.
 */
bool mpol_rebalance_full(const struct mpol_rebalance *rb)
{
	return rb->full || rb->batch >= REBALANCE_BATCH;
}
EXPORT_SYMBOL_IF_KUNIT(mpol_rebalance_full);

/**
 * mpol_rebalance_drop - give up what a range's plan has left to queue
 * @rb: state with a plan from mpol_rebalance_plan()
 *
 * For a range whose policy, shares or mapping changed while mmap_lock was
 * dropped between batches: its pages now follow what changed them, and the
 * pages its old plan had left are neither moved nor counted as not moved.
 */
void mpol_rebalance_drop(struct mpol_rebalance *rb)
{
	rb->needed -= min(rb->to_queue, rb->needed);
	rb->to_queue = 0;
}

/*
 * Where a queued folio goes: a base page or THP is allocated on the node
 * as mbind() allocates it; a hugetlb folio takes a free huge page of the
 * node's pool, never a fresh one, so the pools keep their sizes and a
 * node whose pool is empty keeps what it has.
 */
static struct folio *rebalance_alloc_target(struct folio *src,
					    unsigned long private)
{
	struct migration_target_control *mtc = (void *)private;

	if (folio_test_hugetlb(src))
		return alloc_hugetlb_folio_pool(folio_hstate(src), mtc->nid);
	return alloc_migration_target(src, private);
}

/**
 * mpol_rebalance_migrate - migrate the folios queued so far
 * @rb: state from mpol_rebalance_init()
 *
 * With a fatal signal pending the folios go back where they were instead,
 * so that a killed caller returns promptly.
 *
 * Context: process context, mmap_lock not held.
 * Return: 0, or -EINTR if a fatal signal is pending.
 */
int mpol_rebalance_migrate(struct mpol_rebalance *rb)
{
	/*
	 * A full destination is expected and counted in the return value,
	 * as demotion counts it: no allocation-failure report in the log,
	 * and no OOM kill or retried reclaim on the caller's behalf.
	 */
	struct migration_target_control mtc = {
		.gfp_mask = GFP_HIGHUSER_MOVABLE | __GFP_THISNODE |
			    __GFP_NOWARN | __GFP_NORETRY,
		.reason = MR_MEMPOLICY_REBALANCE,
	};
	bool killed = fatal_signal_pending(current);
	unsigned int nr_succeeded;
	int nid;

	for (nid = 0; nid < nr_node_ids; nid++) {
		if (list_empty(&rb->to_node[nid]))
			continue;
		if (!killed) {
			mtc.nid = nid;
			nr_succeeded = 0;
			migrate_pages(&rb->to_node[nid], rebalance_alloc_target,
				      NULL, (unsigned long)&mtc, MIGRATE_SYNC,
				      MR_MEMPOLICY_REBALANCE, &nr_succeeded);
			rb->moved += nr_succeeded;
			/* Counted as it goes: a long call shows its progress. */
			count_vm_events(MPOL_REBALANCE_MOVED, nr_succeeded);
		}
		if (!list_empty(&rb->to_node[nid]))
			putback_movable_pages(&rb->to_node[nid]);
	}
	if (!killed)
		rb->tried += rb->batch;
	rb->batch = 0;
	rb->full = false;
	cond_resched();
	return fatal_signal_pending(current) ? -EINTR : 0;
}
EXPORT_SYMBOL_IF_KUNIT(mpol_rebalance_migrate);

/**
 * mpol_rebalance_finish - migrate what is queued and account the call
 * @rb: state from mpol_rebalance_init(), freed here
 *
 * Context: process context, mmap_lock not held.
 * Return: the pages that had to move but did not.  After a fatal signal,
 * only the pages it tried to move count.
 */
unsigned long mpol_rebalance_finish(struct mpol_rebalance *rb)
{
	unsigned long failed;

	if (mpol_rebalance_migrate(rb))
		rb->needed = rb->tried;
	if (rb->lru_disabled)
		lru_cache_enable();

	failed = rb->needed - min(rb->moved, rb->needed);
	count_vm_events(MPOL_REBALANCE_SCANNED, rb->scanned);
	count_vm_events(MPOL_REBALANCE_FAILED, failed);
	if (rb->mm)
		trace_mpol_rebalance(rb->pid, rb->mm, rb->start, rb->end,
				     rb->scanned, rb->needed, rb->moved, failed,
				     rb->busy);

	mpol_rebalance_free(rb);
	return failed;
}
EXPORT_SYMBOL_IF_KUNIT(mpol_rebalance_finish);
