// SPDX-License-Identifier: GPL-2.0-only
/*
 * Interleave weights owned by a memory policy.
 *
 * An MPOL_WEIGHTED_INTERLEAVE policy normally reads the global weights in
 * /sys/kernel/mm/mempolicy/weighted_interleave/ at allocation time.  With
 * CONFIG_NUMA_POLICY_WEIGHTS it can instead carry a table of its own, set
 * through set_mempolicy2(2) and mbind2(2).  This file holds the node choice
 * shared by both kinds of table, the table's lifetime, and the user ABI
 * (struct mpol_args).  The syscalls themselves live in mm/mempolicy.c next
 * to their legacy counterparts.
 */
#include <kunit/visibility.h>
#include <linux/atomic.h>
#include <linux/mempolicy.h>
#include <linux/mm_types.h>
#include <linux/mmap_lock.h>
#include <linux/nodemask.h>
#include <linux/rcupdate.h>
#include <linux/sched/task.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <uapi/linux/mempolicy.h>

#include "mempolicy_weights.h"

/**
 * mpol_wi_nid_for_index - node for interleave index @ilx
 * @nodes: the policy's nodes, a stable local copy
 * @t: weight source, read under rcu_read_lock()
 * @ilx: interleave index of the allocation
 *
 * Walks the nodes in order, each taking as many consecutive indexes as its
 * weight, so a run of sum-of-weights indexes gives every node exactly its
 * weight.  Nodes of weight 0 take none.  If every node in @nodes has weight
 * 0 (a cpuset rebind can leave only such nodes) each counts as 1, so the
 * allocation still lands on an allowed node.
 *
 * Return: a node in @nodes, or NUMA_NO_NODE if @nodes is empty.
 */
unsigned int mpol_wi_nid_for_index(const nodemask_t *nodes,
				   const struct mpol_wi_table *t,
				   unsigned long ilx)
{
	unsigned int total = 0, target;
	bool all_zero;
	int nid;

	if (nodes_empty(*nodes))
		return NUMA_NO_NODE;
	for_each_node_mask(nid, *nodes)
		total += mpol_wi_weight(t, nid);
	all_zero = !total;
	if (all_zero)
		total = nodes_weight(*nodes);

	target = ilx % total;
	for_each_node_mask(nid, *nodes) {
		unsigned int w = all_zero ? 1 : mpol_wi_weight(t, nid);

		if (target < w)
			return nid;
		target -= w;
	}
	/* Not reached: the weights of @nodes add up to total. */
	return first_node(*nodes);
}
EXPORT_SYMBOL_IF_KUNIT(mpol_wi_nid_for_index);

/**
 * mpol_weights_check - validate an own weight table against its nodemask
 * @weight: nr_node_ids weights
 * @nodes: the nodemask the table goes with
 *
 * Return: 0 if some node in @nodes has a non-zero weight, else -EINVAL.
 */
int mpol_weights_check(const u8 *weight, const nodemask_t *nodes)
{
	int nid;

	for_each_node_mask(nid, *nodes)
		if (nid < nr_node_ids && weight[nid])
			return 0;
	return -EINVAL;
}
EXPORT_SYMBOL_IF_KUNIT(mpol_weights_check);

#ifdef CONFIG_NUMA_POLICY_WEIGHTS

/**
 * mpol_weights_alloc - allocate a zeroed weight table
 * @gfp: allocation flags
 *
 * Return: a table of nr_node_ids weights in effect and as many as given,
 * with one reference, or NULL.
 */
struct mpol_weights *mpol_weights_alloc(gfp_t gfp)
{
	struct mpol_weights *w;

	w = kzalloc(struct_size_t(struct mpol_weights, weight, 2 * nr_node_ids),
		    gfp);
	if (w)
		refcount_set(&w->ref, 1);
	return w;
}
EXPORT_SYMBOL_IF_KUNIT(mpol_weights_alloc);

/**
 * mpol_weights_free - drop a reference to a table
 * @w: table, or NULL
 *
 * The last reference frees the table after a grace period, so it is safe
 * for a table readers may still see through rcu_dereference().  Does not
 * sleep.
 */
void mpol_weights_free(struct mpol_weights *w)
{
	if (w && refcount_dec_and_test(&w->ref))
		kfree_rcu(w, rcu);
}

/**
 * mpol_weights_share - give a copied policy the weights of the original
 * @new: the copy, just made with a struct assignment from @old, not yet
 *	visible to anyone else
 * @old: the original, still referenced by the caller
 *
 * Tables never change once published, so the copy takes a reference to
 * @old's table instead of a copy: nothing is allocated.  A later change
 * of either policy's weights gives that policy a new table and leaves the
 * other's alone.  The caller holds what keeps @old's nodemask stable, so
 * the copy's nodemask and weights belong together.  Does not sleep.
 */
void mpol_weights_share(struct mempolicy *new, struct mempolicy *old)
{
	struct mpol_weights *w;

	rcu_read_lock();
	/* A table whose last reference just went was replaced: look again. */
	do {
		w = rcu_dereference(old->il_weights);
	} while (w && !refcount_inc_not_zero(&w->ref));
	rcu_read_unlock();
	RCU_INIT_POINTER(new->il_weights, w);
}

/*
 * Tables for mpol_rebind_task(), which runs under task_lock() with IRQs
 * off and the task's mems_allowed_seq held for writing: it must not
 * allocate (an allocation by the task itself would spin on that seqcount
 * in the page allocator's slow path).  The pool is filled beforehand, in
 * process context, by mpol_weights_pool_fill(): when a task policy gets
 * own weights, when one is copied for a new task, and before every
 * task's mpol_rebind_task() (mpol_rebind_prepare(), called by the cpuset
 * code for each task, leader or not, with an mm or not).  A task rebind
 * takes at most one table, so the pool runs dry only when an allocation
 * fails.  mpol_weights_pool_lock is held only to link or unlink one
 * table.
 */
#define MPOL_WEIGHTS_POOL	16
static DEFINE_RAW_SPINLOCK(mpol_weights_pool_lock);
static struct mpol_weights *mpol_weights_pool;	/* under the lock */
static unsigned int mpol_weights_pool_nr;	/* under the lock */

static struct mpol_weights *mpol_weights_pool_get(void)
{
	struct mpol_weights *w;
	unsigned long flags;

	raw_spin_lock_irqsave(&mpol_weights_pool_lock, flags);
	w = mpol_weights_pool;
	if (w) {
		mpol_weights_pool = w->next;
		WRITE_ONCE(mpol_weights_pool_nr, mpol_weights_pool_nr - 1);
	}
	raw_spin_unlock_irqrestore(&mpol_weights_pool_lock, flags);
	return w;
}

/**
 * mpol_weights_pool_fill - make sure task rebinds find tables to publish
 *
 * Allocates up to MPOL_WEIGHTS_POOL tables for mpol_rebind_task(); does
 * nothing when the pool is full, so most calls allocate nothing.  An
 * allocation failure leaves the pool short; see mpol_weights_rebind().
 *
 * Context: process context, may sleep.
 */
void mpol_weights_pool_fill(void)
{
	struct mpol_weights *w;
	unsigned long flags;

	might_sleep();
	while (READ_ONCE(mpol_weights_pool_nr) < MPOL_WEIGHTS_POOL) {
		bool full;

		w = mpol_weights_alloc(GFP_KERNEL | __GFP_NOWARN);
		if (!w)
			return;
		raw_spin_lock_irqsave(&mpol_weights_pool_lock, flags);
		full = mpol_weights_pool_nr >= MPOL_WEIGHTS_POOL;
		if (!full) {
			w->next = mpol_weights_pool;
			mpol_weights_pool = w;
			WRITE_ONCE(mpol_weights_pool_nr, mpol_weights_pool_nr + 1);
		}
		raw_spin_unlock_irqrestore(&mpol_weights_pool_lock, flags);
		if (full) {
			kfree(w);
			return;
		}
	}
}

/**
 * mpol_weights_rebind - move own weights along with a remapped nodemask
 * @pol: the policy, possibly in use by allocations right now
 * @cur: @pol's own table, from mpol_weights_deref(), or NULL
 * @old: the cpuset's allowed nodes @pol's nodemask was relative to
 * @new: the cpuset's new allowed nodes
 * @can_sleep: the caller may sleep, so a table can be allocated
 *
 * A policy without static or relative nodes has its nodemask remapped when
 * its cpuset's nodes change: the n-th allowed node becomes the n-th new
 * one.  Each node's weight in effect moves with it; weights of nodes folded
 * onto one add up, capped at 255.  The weights as given stay as they are,
 * so get_mempolicy2() still reports them for nodes outside the nodemask.
 * The result is a new table, published in place of @cur: readers see the
 * old weights or the new ones, never a mix, and @cur is dropped (freed
 * after a grace period once no policy shares it).
 *
 * Call before the nodemask is remapped: @pol->nodes is still the old one.
 * The new table comes from the allocator if @can_sleep, else (or if that
 * fails) from the pool.  If there is none, @pol keeps @cur whole: its
 * weights stay on the nodes they were on while its nodemask moves, and
 * later rebinds remap them from there, until the policy gets weights
 * again.  That takes an allocation failure: a task rebind needs one
 * table and mpol_rebind_prepare() filled the pool just before it.
 * Readers never see a table half written.
 *
 * Context: the caller serialises writers of @pol (task_lock() for a task
 * policy, mmap_write_lock() for VMA policies; a copy not yet visible needs
 * nothing).  Without @can_sleep, IRQs may be off and mems_allowed_seq held.
 */
void mpol_weights_rebind(struct mempolicy *pol, struct mpol_weights *cur,
			 const nodemask_t *old, const nodemask_t *new,
			 bool can_sleep)
{
	struct mpol_weights *w = NULL;
	int nid;

	if (!cur || nodes_equal(*old, *new))
		return;
	if (can_sleep)
		w = mpol_weights_alloc(GFP_KERNEL | __GFP_NOWARN);
	if (!w)
		w = mpol_weights_pool_get();
	if (!w)
		return;
	memset(w->weight, 0, nr_node_ids);
	for_each_node_mask(nid, pol->nodes) {
		int to = node_remap(nid, *old, *new);

		if (nid < nr_node_ids && to < nr_node_ids)
			w->weight[to] = min(255, w->weight[to] + cur->weight[nid]);
	}
	memcpy(w->weight + nr_node_ids, cur->weight + nr_node_ids, nr_node_ids);
	refcount_set(&w->ref, 1);
	rcu_assign_pointer(pol->il_weights, w);
	mpol_weights_free(cur);
}

/**
 * mpol_weights_equal - do two policies with equal nodemasks weigh alike?
 * @a: policy
 * @b: policy with the same nodemask as @a
 *
 * Only the nodes in the nodemask count: bytes for other nodes are never
 * read by allocation, so they must not keep equal policies from merging.
 *
 * Return: true if both use the global table, or both own tables that
 * agree on every node of @a's nodemask.
 */
bool mpol_weights_equal(struct mempolicy *a, struct mempolicy *b)
{
	const u8 *wa, *wb;
	bool eq;
	int nid;

	rcu_read_lock();
	wa = mpol_own_weights(a);
	wb = mpol_own_weights(b);
	eq = !wa == !wb;
	if (wa && wb)
		for_each_node_mask(nid, a->nodes)
			if (nid < nr_node_ids && wa[nid] != wb[nid])
				eq = false;
	rcu_read_unlock();
	return eq;
}

/**
 * mpol_args_from_user - copy struct mpol_args in, clone3-style
 * @kargs: destination
 * @uargs: user pointer
 * @usize: size the caller passed
 *
 * Sizes below MPOL_ARGS_SIZE_VER0 are refused.  A larger size is accepted
 * when the bytes this kernel does not know are zero.
 *
 * Return: 0, -EINVAL for a short size, -E2BIG for non-zero unknown bytes,
 * or -EFAULT.
 */
int mpol_args_from_user(struct mpol_args *kargs,
			const struct mpol_args __user *uargs, size_t usize)
{
	BUILD_BUG_ON(sizeof(struct mpol_args) != MPOL_ARGS_SIZE_VER0);

	if (usize < MPOL_ARGS_SIZE_VER0 || usize > PAGE_SIZE)
		return usize > PAGE_SIZE ? -E2BIG : -EINVAL;
	return copy_struct_from_user(kargs, sizeof(*kargs), uargs, usize);
}

/**
 * mpol_weights_from_user - read and validate the weights of @kargs
 * @kargs: arguments already copied in; @kargs->il_weights may be 0
 * @nodes: the nodemask the caller asked for
 * @out: the new table, or NULL when the policy uses the global weights
 *
 * The user array has pol_maxnodes bytes, one per node id, as many as
 * set_mempolicy()'s maxnode counts (the nodemask holds one bit fewer).
 * Callers size it like their nodemask and fill it with a default, so only
 * the first nr_node_ids bytes are read: the rest belong to node ids this
 * kernel cannot have and are ignored whatever their value, which keeps one
 * binary working on kernels of any NODES_SHIFT.  Bytes for possible nodes
 * outside @nodes are kept, for get_mempolicy2(), but unused.
 * mpol_set_nodemask() checks the weights again against the effective
 * nodemask, once the cpuset and N_MEMORY have cut it down.
 *
 * For a mode other than weighted interleave the array may be given, as
 * get_mempolicy2() fills it, but must hold 0 for every node in @nodes.
 *
 * Return: 0; -EINVAL for a non-zero weight in @nodes with a mode other
 * than weighted interleave, pol_maxnodes above PAGE_SIZE * 8 + 1, or no
 * non-zero weight in @nodes for weighted interleave; -EFAULT; -ENOMEM.
 */
int mpol_weights_from_user(const struct mpol_args *kargs,
			   const nodemask_t *nodes, struct mpol_weights **out)
{
	const u8 __user *uw = u64_to_user_ptr(kargs->il_weights);
	struct mpol_weights *w;
	int ret;

	*out = NULL;
	if (!kargs->il_weights)
		return 0;
	if (kargs->pol_maxnodes > PAGE_SIZE * BITS_PER_BYTE + 1)
		return -EINVAL;
	w = mpol_weights_alloc(GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	ret = -EFAULT;
	if (copy_from_user(w->weight, uw,
			   min_t(unsigned long, kargs->pol_maxnodes, nr_node_ids)))
		goto err;
	if (kargs->mode != MPOL_WEIGHTED_INTERLEAVE) {
		/*
		 * Zeros are "no weights", what get_mempolicy2() returns for
		 * such a policy, so that its result sets the policy again;
		 * a weight for one of the policy's nodes is a mistake.
		 */
		ret = mpol_weights_check(w->weight, nodes) ? 0 : -EINVAL;
		kfree(w);
		return ret;
	}
	ret = mpol_weights_check(w->weight, nodes);
	if (ret)
		goto err;
	memcpy(w->weight + nr_node_ids, w->weight, nr_node_ids);
	*out = w;
	return 0;
err:
	kfree(w);
	return ret;
}

/**
 * mpol_weights_to_user - copy effective weights out for get_mempolicy2()
 * @kargs: the caller's arguments; nothing is written if il_weights is 0
 * @weight: nr_node_ids effective weights, 0 where the policy has none
 *
 * Writes pol_maxnodes bytes: the weights of the possible nodes (for nodes
 * outside the nodemask, what the policy was given), then zeros for node
 * ids this kernel cannot have.
 *
 * Return: 0 or -EFAULT.
 */
int mpol_weights_to_user(const struct mpol_args *kargs, const u8 *weight)
{
	u8 __user *uw = u64_to_user_ptr(kargs->il_weights);
	unsigned long n = min_t(unsigned long, kargs->pol_maxnodes, nr_node_ids);

	if (!kargs->il_weights)
		return 0;
	if (copy_to_user(uw, weight, n))
		return -EFAULT;
	if (kargs->pol_maxnodes > n &&
	    clear_user(uw + n, kargs->pol_maxnodes - n))
		return -EFAULT;
	return 0;
}

/**
 * mpol_reweight_from_user - read the arguments of process_mpol_reweight()
 * @uargs: user pointer to struct mpol_reweight_args
 * @usize: size the caller passed, at least MPOL_REWEIGHT_ARGS_SIZE_VER0;
 *	a larger one is accepted when the bytes this kernel does not know
 *	are zero
 * @out: the new table
 *
 * pol_maxnodes counts as in struct mpol_args, up to PAGE_SIZE * 8 + 1.
 * As for mpol_weights_from_user(), only the first nr_node_ids bytes of
 * il_weights are read; bytes for node ids this kernel cannot have are
 * ignored.  Each policy is checked against its own nodemask later.
 *
 * Return: 0; -EINVAL for a short size, pol_maxnodes 0 or above
 * PAGE_SIZE * 8 + 1, or no non-zero weight for a possible node; -E2BIG for
 * non-zero unknown bytes; -EFAULT; -ENOMEM.
 */
int mpol_reweight_from_user(const struct mpol_reweight_args __user *uargs,
			    size_t usize, struct mpol_weights **out)
{
	struct mpol_reweight_args kargs;
	struct mpol_weights *w;
	int nid, ret;

	BUILD_BUG_ON(sizeof(kargs) != MPOL_REWEIGHT_ARGS_SIZE_VER0);
	*out = NULL;
	if (usize < MPOL_REWEIGHT_ARGS_SIZE_VER0 || usize > PAGE_SIZE)
		return usize > PAGE_SIZE ? -E2BIG : -EINVAL;
	ret = copy_struct_from_user(&kargs, sizeof(kargs), uargs, usize);
	if (ret)
		return ret;
	if (!kargs.pol_maxnodes ||
	    kargs.pol_maxnodes > PAGE_SIZE * BITS_PER_BYTE + 1)
		return -EINVAL;
	w = mpol_weights_alloc(GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	ret = -EFAULT;
	if (copy_from_user(w->weight, u64_to_user_ptr(kargs.il_weights),
			   min_t(u64, kargs.pol_maxnodes, nr_node_ids)))
		goto err;
	ret = -EINVAL;
	for (nid = 0; nid < nr_node_ids; nid++) {
		if (w->weight[nid]) {
			*out = w;
			return 0;
		}
	}
err:
	kfree(w);
	return ret;
}

/**
 * mpol_weights_same - does @pol already own exactly @weight?
 * @pol: the policy
 * @weight: nr_node_ids weights
 *
 * Return: true if @pol has its own table and it equals @weight.
 */
bool mpol_weights_same(struct mempolicy *pol, const u8 *weight)
{
	const u8 *own;
	bool same;

	rcu_read_lock();
	own = mpol_own_weights(pol);
	same = own && !memcmp(own, weight, nr_node_ids);
	rcu_read_unlock();
	return same;
}

/**
 * mpol_weights_fill - set the weights of a table no reader sees yet
 * @w: the table, from mpol_weights_alloc()
 * @weight: nr_node_ids weights, both in effect and as given
 */
void mpol_weights_fill(struct mpol_weights *w, const u8 *weight)
{
	memcpy(w->weight, weight, nr_node_ids);
	memcpy(w->weight + nr_node_ids, weight, nr_node_ids);
}

/**
 * mpol_show_own_weights - append " il_weights=N:W,..." for /proc/PID/numa_maps
 * @m: the seq_file
 * @pol: the policy, or NULL
 * @task_mm: the mm of the task whose task policy @pol is, NULL for a VMA
 *	policy
 *
 * Prints nothing for a policy without weights of its own, so existing
 * lines are unchanged.  A task policy shows the weights a reweight of
 * @task_mm gave it, as get_mempolicy2() reports them.  Only nodes in the
 * policy's nodemask are listed.
 */
void mpol_show_own_weights(struct seq_file *m, struct mempolicy *pol,
			   struct mm_struct *task_mm)
{
	const u8 *own = NULL;
	char sep = '=';
	int nid;

	if (!pol || pol->mode != MPOL_WEIGHTED_INTERLEAVE)
		return;
	rcu_read_lock();
	if (task_mm)
		own = mpol_task_weights_for(task_mm, pol);
	if (!own)
		own = mpol_own_weights(pol);
	if (own) {
		seq_puts(m, " il_weights");
		for_each_node_mask(nid, pol->nodes) {
			seq_printf(m, "%c%d:%u", sep, nid, own[nid]);
			sep = ',';
		}
	}
	rcu_read_unlock();
}

/*
 * Orders weighted-interleave task policies and reweights: see struct
 * mpol_task_weights.  One counter for the system rather than one per mm:
 * a task policy outlives its mm (exec() keeps it, fork() copies it into a
 * new one), so per-mm numbers would have to be carried over in exec() and
 * fork().  It is touched only by set_mempolicy() of weighted interleave
 * and by process_mpol_reweight(), never by mbind() or other modes.
 */
static atomic64_t mpol_weights_gen = ATOMIC64_INIT(0);

/**
 * mpol_weights_next_gen - a number above any handed out before
 *
 * Return: the next number, for a new task policy or a reweight.
 */
u64 mpol_weights_next_gen(void)
{
	return atomic64_inc_return(&mpol_weights_gen);
}
EXPORT_SYMBOL_IF_KUNIT(mpol_weights_next_gen);

static size_t mpol_task_weights_size(void)
{
	return struct_size_t(struct mpol_task_weights, weight,
			     2 * nr_node_ids);
}

/*
 * Serialises the writers of every mm's mpol_task_weights (see struct
 * mpol_task_weights) and guards mpol_task_weights_spare.  Taken with IRQs
 * off, inside task_lock(), to swap one pointer, or to remap one table
 * (nr_node_ids entries); nothing is allocated or freed under it.
 */
static DEFINE_RAW_SPINLOCK(mpol_task_weights_lock);
/* The table the next mpol_task_weights_rebind() publishes, or NULL. */
static struct mpol_task_weights *mpol_task_weights_spare;

/*
 * The nodes a task's task policy is relative to: the mems_allowed it had
 * when the policy was made (cpuset_current_mems_allowed), which
 * mpol_rebind_task() moves with it.
 */
static nodemask_t mpol_task_mems(struct task_struct *task)
{
#ifdef CONFIG_CPUSETS
	return task->mems_allowed;
#else
	return node_states[N_MEMORY];
#endif
}

/**
 * mpol_task_weights_for - the weights a process gave a task policy, if any
 * @mm: the mm of the task whose task policy @pol is
 * @pol: the task policy
 *
 * Whether the task policy follows the table, see mpol_task_weights_apply().
 * A policy without static nodes follows it only if its nodemask is
 * relative to the nodes the table is laid out for.  They differ while a
 * cpuset change is under way, between the rebind of the table and that
 * of a policy (cpuset_update_tasks_nodemask() rebinds one task after the
 * other), for a thread in another cpuset than the one the table was last
 * rebound to, and if no table could be allocated for a rebind: the
 * policy then follows its own weights (or the global ones), never weights
 * meant for other nodes.
 *
 * Context: rcu_read_lock() held; the table is valid until it is dropped.
 * Return: nr_node_ids weights, or NULL for the policy's own (or global).
 */
const u8 *mpol_task_weights_for(struct mm_struct *mm, struct mempolicy *pol)
{
	struct mpol_task_weights *tw = rcu_dereference(mm->mpol_task_weights);

	if (!tw || !mpol_task_weights_apply(pol, tw->gen, tw->global_gen))
		return NULL;
	if (pol->flags & MPOL_F_STATIC_NODES)
		return tw->weight + nr_node_ids;
	if (IS_ENABLED(CONFIG_CPUSETS) &&
	    !nodes_equal(tw->mems, pol->w.cpuset_mems_allowed))
		return NULL;
	return tw->weight;
}
EXPORT_SYMBOL_IF_KUNIT(mpol_task_weights_for);

/**
 * mpol_task_weights_apply - does a reweight's table reach a task policy?
 * @pol: the task policy
 * @gen: the reweight's generation
 * @global_gen: the generation of the last reweight that took the task
 *	policies following the global weights too
 *
 * A weighted-interleave policy made before the reweight follows it if it
 * has weights of its own, or follows the global weights and was made
 * before @global_gen.  One with relative nodes, whose nodemask is not
 * indexed by node id, never does: it follows the global weights.
 *
 * Context: rcu_read_lock() held.
 * Return: true if @pol takes the weights of the table.
 */
bool mpol_task_weights_apply(struct mempolicy *pol, u64 gen, u64 global_gen)
{
	if (pol->mode != MPOL_WEIGHTED_INTERLEAVE || pol->wi_gen >= gen ||
	    (pol->flags & MPOL_F_RELATIVE_NODES))
		return false;
	return mpol_own_weights(pol) || pol->wi_gen < global_gen;
}

/**
 * mpol_task_weights_global_gen - @global_gen of the table @mm holds
 * @mm: the process's mm
 *
 * A cpuset rebind may replace the table meanwhile; it keeps @global_gen.
 *
 * Context: mmap_lock of @mm held, which keeps reweights out.
 * Return: the last reweight's @global_gen, 0 if none was made.
 */
u64 mpol_task_weights_global_gen(struct mm_struct *mm)
{
	struct mpol_task_weights *tw;
	u64 gen;

	mmap_assert_locked(mm);
	rcu_read_lock();
	tw = rcu_dereference(mm->mpol_task_weights);
	gen = tw ? tw->global_gen : 0;
	rcu_read_unlock();
	return gen;
}

/**
 * mpol_task_weights_alloc - room for a process's reweighted table
 *
 * Allocated before any lock is taken, so that the publication under them
 * cannot fail or wait for reclaim.
 *
 * Return: the table, to pass to mpol_task_weights_publish() or kfree(), or
 * NULL.
 */
struct mpol_task_weights *mpol_task_weights_alloc(void)
{
	return kzalloc(mpol_task_weights_size(), GFP_KERNEL);
}

/**
 * mpol_task_weights_publish - give a process's task policies new weights
 * @mm: the process's mm
 * @task: a live thread of the process, using @mm
 * @tw: from mpol_task_weights_alloc(); @mm owns it from here
 * @weight: nr_node_ids weights
 * @gen: from mpol_weights_next_gen() when the call started: task policies
 *	made since keep their weights
 * @global_gen: @gen if the call takes the policies that follow the global
 *	weights, else the last table's (mpol_task_weights_global_gen())
 *
 * The table is laid out for @task's mems_allowed, read under task_lock(),
 * which a cpuset change updates together with the rebind of @task's
 * policy and of the table (mpol_rebind_task()): either the change comes
 * after and rebinds this table, or it came before and this table is laid
 * out for the new nodes already.
 *
 * Context: mmap_write_lock(@mm) held; takes task_lock(@task) and
 * mpol_task_weights_lock for a pointer swap.
 */
void mpol_task_weights_publish(struct mm_struct *mm, struct task_struct *task,
			       struct mpol_task_weights *tw, const u8 *weight,
			       u64 gen, u64 global_gen)
{
	struct mpol_task_weights *old;
	unsigned long flags;

	mmap_assert_write_locked(mm);
	tw->gen = gen;
	tw->global_gen = global_gen;
	memcpy(tw->weight, weight, nr_node_ids);
	memcpy(tw->weight + nr_node_ids, weight, nr_node_ids);
	task_lock(task);
	raw_spin_lock_irqsave(&mpol_task_weights_lock, flags);
	tw->mems = mpol_task_mems(task);
	old = rcu_replace_pointer(mm->mpol_task_weights, tw,
				  lockdep_is_held(&mpol_task_weights_lock));
	raw_spin_unlock_irqrestore(&mpol_task_weights_lock, flags);
	task_unlock(task);
	if (old)
		kfree_rcu(old, rcu);
}

/**
 * mpol_task_weights_prepare - make sure the next task rebind finds a table
 * @tsk: the task mpol_rebind_task() rebinds next
 *
 * Allocates the spare table if there is none; a task rebind takes at most
 * one.  Whether or not @tsk's process has a table now: a reweight may
 * publish one before the rebind.  Kernel threads follow no such table.
 * If the allocation fails, the rebind leaves the table as it is and the
 * task policies stop following it (mpol_task_weights_for()).
 *
 * Context: process context, may sleep.
 */
void mpol_task_weights_prepare(struct task_struct *tsk)
{
	struct mpol_task_weights *tw;
	unsigned long flags;

	might_sleep();
	if ((tsk->flags & PF_KTHREAD) || READ_ONCE(mpol_task_weights_spare))
		return;
	tw = kzalloc(mpol_task_weights_size(), GFP_KERNEL | __GFP_NOWARN);
	if (!tw)
		return;
	raw_spin_lock_irqsave(&mpol_task_weights_lock, flags);
	if (!mpol_task_weights_spare) {
		WRITE_ONCE(mpol_task_weights_spare, tw);
		tw = NULL;
	}
	raw_spin_unlock_irqrestore(&mpol_task_weights_lock, flags);
	kfree(tw);
}

/**
 * mpol_task_weights_rebind - remap a process's weights to new cpuset nodes
 * @tsk: the task whose task policy mpol_rebind_task() rebinds
 * @new: the nodes it rebinds it to, @tsk's mems_allowed from now on
 *
 * The task policies' nodemasks are remapped, the n-th allowed node
 * becoming the n-th new one; the weights they follow move with them, in a
 * new table, as own weights do.  Weights of nodes folded onto one add up,
 * capped at 255.  Done with the first task of the process to be rebound,
 * whichever it is (the thread group leader may be a zombie, with no mm);
 * the others find the table laid out for @new already.  The table comes
 * from the spare mpol_task_weights_prepare() allocated; without one the
 * table stays as it is, and the task policies, whose nodemasks no longer
 * match it, follow their own weights until the next reweight.
 *
 * Context: task_lock(@tsk) held (so @tsk->mm is stable), IRQs off,
 * @tsk's mems_allowed_seq held for writing: allocates nothing.
 */
void mpol_task_weights_rebind(struct task_struct *tsk, const nodemask_t *new)
{
	struct mpol_task_weights *old, *tw = NULL;
	struct mm_struct *mm = tsk->mm;
	unsigned long flags;
	int nid, to;

	if (!mm || (tsk->flags & PF_KTHREAD))
		return;
	raw_spin_lock_irqsave(&mpol_task_weights_lock, flags);
	old = rcu_dereference_protected(mm->mpol_task_weights,
					lockdep_is_held(&mpol_task_weights_lock));
	if (!old || nodes_equal(old->mems, *new))
		goto unlock;
	tw = mpol_task_weights_spare;
	if (!tw)
		goto unlock;
	WRITE_ONCE(mpol_task_weights_spare, NULL);
	tw->gen = old->gen;
	tw->global_gen = old->global_gen;
	tw->mems = *new;
	memset(tw->weight, 0, nr_node_ids);
	for_each_node_mask(nid, old->mems) {
		to = node_remap(nid, old->mems, *new);
		if (nid < nr_node_ids && to < nr_node_ids)
			tw->weight[to] = min(255, tw->weight[to] +
					     old->weight[nid]);
	}
	memcpy(tw->weight + nr_node_ids, old->weight + nr_node_ids,
	       nr_node_ids);
	rcu_assign_pointer(mm->mpol_task_weights, tw);
unlock:
	raw_spin_unlock_irqrestore(&mpol_task_weights_lock, flags);
	if (tw)
		kfree_rcu(old, rcu);
}

/**
 * mpol_dup_task_weights - give a forked mm its parent's reweighted weights
 * @mm: the new mm, not yet visible to anyone
 * @oldmm: the parent's mm
 *
 * The child's task policies are copies of the parent's, made before this
 * table, so they follow it as the parent's do; later reweights of either
 * process change only its own copy.  A cpuset rebind may replace the
 * parent's table meanwhile: the copy is of one whole table.
 *
 * Context: mmap_write_lock(@oldmm) held.
 * Return: 0 or -ENOMEM.
 */
int mpol_dup_task_weights(struct mm_struct *mm, struct mm_struct *oldmm)
{
	struct mpol_task_weights *old, *tw;

	if (!rcu_access_pointer(oldmm->mpol_task_weights))
		return 0;
	/* Reweights, which need the write lock, cannot drop the table. */
	tw = kmalloc(mpol_task_weights_size(), GFP_KERNEL);
	if (!tw)
		return -ENOMEM;
	rcu_read_lock();
	old = rcu_dereference(oldmm->mpol_task_weights);
	memcpy(tw, old, mpol_task_weights_size());
	rcu_read_unlock();
	RCU_INIT_POINTER(mm->mpol_task_weights, tw);
	return 0;
}

/**
 * mpol_free_task_weights - drop an mm's reweighted weights
 * @mm: the mm, whose last user is gone
 */
void mpol_free_task_weights(struct mm_struct *mm)
{
	struct mpol_task_weights *tw;

	/* No task uses @mm any more; readers under RCU may still look. */
	tw = rcu_replace_pointer(mm->mpol_task_weights, NULL, true);
	if (tw)
		kfree_rcu(tw, rcu);
}
#endif /* CONFIG_NUMA_POLICY_WEIGHTS */
