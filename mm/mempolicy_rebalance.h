/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Rebalance: move the fewest pages so that each node holds its weighted
 * share of a VMA's resident pages.  Internal interface between
 * mm/mempolicy.c and mm/mempolicy_rebalance.c.
 */
#ifndef _MM_MEMPOLICY_REBALANCE_H
#define _MM_MEMPOLICY_REBALANCE_H

#include <linux/list.h>
#include <linux/nodemask.h>
#include <linux/types.h>

struct vm_area_struct;

/**
 * struct mpol_rebalance - state and result of one rebalance call
 * @flags: MPOL_MF_MOVE_ALL moves pages other processes map too
 * @scanned: resident pages looked at
 * @needed: pages that had to move: sum over VMAs and nodes of
 *	max(0, current - target)
 * @queued: pages isolated and queued for migration
 * @moved: pages migrated
 * @to_queue: pages of the VMA being handled still to queue; the second
 *	walk stops early once it reaches 0
 * @cur: per-node resident pages of the range being handled (nr_node_ids)
 * @target: per-node target of that range, then what is left to send or
 *	take (nr_node_ids)
 * @share: per-node pages to send (> 0) or take (< 0) in the range, fixed
 *	for the second walk (nr_node_ids)
 * @seen: per-node pages the second walk has passed (nr_node_ids)
 * @to_node: per-destination lists of isolated folios (nr_node_ids)
 * @counting: true in the first walk over a range, false in the second
 *
 * The folios on @to_node are isolated from the LRU; they are migrated by
 * mpol_rebalance_finish() once the caller has dropped mmap_lock.
 */
struct mpol_rebalance {
	unsigned long flags;
	unsigned long scanned;
	unsigned long needed;
	unsigned long queued;
	unsigned long moved;
	unsigned long to_queue;
	unsigned long *cur;
	long *target;
	long *share;
	unsigned long *seen;
	struct list_head *to_node;
	bool counting;
};

void mpol_rebalance_targets(unsigned long total, const unsigned long *cur,
			    const u8 *weight, const nodemask_t *nodes,
			    long *target);

int mpol_rebalance_pick(const struct mpol_rebalance *rb, int src, long pages);
void mpol_rebalance_take(struct mpol_rebalance *rb, int src, int dst,
			 long pages);

int mpol_rebalance_init(struct mpol_rebalance *rb, unsigned long flags);
bool mpol_rebalance_vma_ok(struct vm_area_struct *vma);
void mpol_rebalance_range(struct mpol_rebalance *rb,
			  struct vm_area_struct *vma, unsigned long start,
			  unsigned long end, const nodemask_t *nodes,
			  const u8 *weight);
unsigned long mpol_rebalance_finish(struct mpol_rebalance *rb);

#endif /* _MM_MEMPOLICY_REBALANCE_H */
