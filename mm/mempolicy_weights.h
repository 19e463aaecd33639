/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Interleave weights owned by a memory policy: internal interface between
 * mm/mempolicy.c and mm/mempolicy_weights.c.
 */
#ifndef _MM_MEMPOLICY_WEIGHTS_H
#define _MM_MEMPOLICY_WEIGHTS_H

#include <linux/fs.h>
#include <linux/mempolicy.h>
#include <linux/mm_types.h>
#include <linux/nodemask.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/shmem_fs.h>
#include <linux/types.h>

struct mpol_args;
struct mpol_reweight_args;
struct seq_file;

/**
 * struct mpol_weights - per-node weights owned by one or more mempolicies
 * @rcu: frees the table after a grace period once its last policy drops it
 * @next: links a table in the pool of unused ones (mpol_rebind_task())
 * @ref: policies pointing to the table
 * @weight: 2 * nr_node_ids entries, 0..255: first the weights in effect,
 *	which allocation reads (0: the node gets no new pages), then the
 *	weights as the policy was given them, which get_mempolicy2() reports
 *	for nodes outside the nodemask
 *
 * A table is never changed once a policy points to it, so copies of a
 * policy (mpol_dup(), a split shared-policy range) share it, taking a
 * reference, and allocate nothing.  A policy whose weights change gets a
 * new table: process_mpol_reweight() for VMA and shared policies, through
 * mpol_weights_publish() (a task policy's weights it gives through the mm,
 * see struct mpol_task_weights), and a cpuset rebind, which publishes a
 * copy with the weights in effect remapped and the given ones unchanged
 * (mpol_weights_rebind()).  The writer holds what serialises changes to
 * that policy (task_lock() for a task policy, mmap_write_lock() for a VMA
 * policy, sp->lock for a shared policy), publishes with
 * rcu_replace_pointer() and drops its reference to the old table, which
 * is freed with kfree_rcu() once no policy points to it.
 * Readers on the allocation path use rcu_read_lock() and rcu_dereference()
 * and never sleep while holding the table: they see the old table or the
 * new one, never a mix.
 */
struct mpol_weights {
	union {
		struct rcu_head rcu;
		struct mpol_weights *next;
	};
	refcount_t ref;
	u8 weight[];
};

/**
 * struct mpol_task_weights - weights the task policies of a process follow
 * @rcu: frees the table after a grace period once it is replaced
 * @next: links the spare table mpol_task_weights_rebind() takes
 * @gen: task policies made before it (mempolicy->wi_gen below @gen) with
 *	weights of their own follow it; one made later keeps the weights it
 *	was made with
 * @global_gen: the @gen of the last reweight with MPOL_REWEIGHT_GLOBAL:
 *	task policies that follow the global weights follow the table too
 *	if made before it (that reweight gave them weights of their own),
 *	else they keep following the global weights
 * @mems: the cpuset nodes @weight is laid out for: the mems_allowed of
 *	the process's tasks when it was published, which their task
 *	policies' nodemasks are relative to
 * @weight: 2 * nr_node_ids weights: first as remapped with the cpuset,
 *	for policies whose nodemask follows it, then as given, for policies
 *	with MPOL_F_STATIC_NODES
 *
 * process_mpol_reweight() gives every weighted-interleave task policy of
 * a process new weights.  A table copied into each thread's policy would
 * miss a thread that clone() copied from its parent before the call and
 * linked after it.  Instead the process's mm holds one table, in
 * mm_struct.mpol_task_weights, and a task policy looks it up when it
 * allocates: every task using the mm, and every task cloned from one of
 * them later with a copy of its policy, sees the same table by
 * construction, with nothing to do in clone().  A policy made after the
 * call starts (a thread's own set_mempolicy(), say) keeps its weights.
 *
 * A table is never changed once published.  It is replaced with
 * rcu_replace_pointer() under mpol_task_weights_lock, which serialises
 * the two writers: a reweight (mpol_task_weights_publish(), also under
 * mmap_write_lock()), and a cpuset change, which publishes a remapped
 * copy at the same point, with the same nodes, as it rebinds the task
 * policies (mpol_task_weights_rebind()).  The old table is freed with
 * kfree_rcu().  fork() copies it into the child's mm, so a reweight of
 * one process never changes another.  Readers hold rcu_read_lock() and
 * use the table only for a task policy whose nodemask is relative to
 * @mems (mpol_task_weights_for()).
 */
struct mpol_task_weights {
	union {
		struct rcu_head rcu;
		struct mpol_task_weights *next;
	};
	u64 gen;
	u64 global_gen;
	nodemask_t mems;
	u8 weight[];
};

/* Where a policy's weights come from, read once under rcu_read_lock(). */
struct mpol_wi_table {
	const u8 *own;		/* the policy's own table, or NULL */
	const u8 *global;	/* the sysfs table, or NULL for all-default */
};

/**
 * mpol_wi_weight - effective interleave weight of @nid
 * @t: weight source read under rcu_read_lock()
 * @nid: node id
 *
 * An own table is taken as it is, zeros included.  The global table keeps
 * its meaning: 0 (or no table) is the system default, 1.
 *
 * Return: the weight, 0..255.
 */
static inline u8 mpol_wi_weight(const struct mpol_wi_table *t, int nid)
{
	u8 w;

	/* A published table never changes: a plain read is enough. */
	if (t->own)
		return t->own[nid];
	w = t->global ? t->global[nid] : 1;
	return w ? w : 1;
}

/**
 * mpol_own_weights - a policy's own weight table, or NULL
 * @pol: the policy
 *
 * Context: rcu_read_lock() held; the table is valid until it is dropped.
 * Return: the table (nr_node_ids entries) or NULL for the global weights.
 */
static inline const u8 *mpol_own_weights(struct mempolicy *pol)
{
#ifdef CONFIG_NUMA_POLICY_WEIGHTS
	struct mpol_weights *w = rcu_dereference(pol->il_weights);

	return w ? w->weight : NULL;
#else
	return NULL;
#endif
}

/**
 * mpol_weights_given - the weights a policy was given, for get_mempolicy2()
 * @own: the weights in effect of a policy without static nodes, from a
 *	table that holds the weights as given right after them
 *
 * Context: rcu_read_lock() held.
 * Return: nr_node_ids weights as given, or NULL if @own is NULL.
 */
static inline const u8 *mpol_weights_given(const u8 *own)
{
	return own ? own + nr_node_ids : NULL;
}

/* Does @pol own weights?  For writers of @pol; see struct mpol_weights. */
static inline bool mpol_has_own_weights(struct mempolicy *pol)
{
#ifdef CONFIG_NUMA_POLICY_WEIGHTS
	return rcu_access_pointer(pol->il_weights);
#else
	return false;
#endif
}

unsigned int mpol_wi_nid_for_index(const nodemask_t *nodes,
				   const struct mpol_wi_table *t,
				   unsigned long ilx);
int mpol_weights_check(const u8 *weight, const nodemask_t *nodes);

/**
 * struct mpol_attrs - policy attributes only the mempolicy2 syscalls set
 * @home_node: home node, or NUMA_NO_NODE
 * @weights: own weights handed to the new policy, or NULL; set to NULL
 *	once the policy owns them, so the caller frees what is left
 */
struct mpol_attrs {
	int home_node;
	struct mpol_weights *weights;
};

#if IS_ENABLED(CONFIG_KUNIT)
/* mm/mempolicy.c's, visible for mm/tests/mempolicy_kunit.c only. */
long do_set_mempolicy(unsigned short mode, unsigned short flags,
		      nodemask_t *nodes, struct mpol_attrs *attrs);
#endif

#ifdef CONFIG_NUMA_POLICY_WEIGHTS
struct mpol_weights *mpol_weights_alloc(gfp_t gfp);
void mpol_weights_free(struct mpol_weights *w);
bool mpol_weights_equal(struct mempolicy *a, struct mempolicy *b);
void mpol_weights_share(struct mempolicy *new, struct mempolicy *old);
void mpol_weights_pool_fill(void);
void mpol_weights_rebind(struct mempolicy *pol, struct mpol_weights *cur,
			 const nodemask_t *old, const nodemask_t *new,
			 bool can_sleep);

/*
 * The own table of @pol (not NULL), or NULL, for a writer of @pol: @held
 * is a lockdep expression for what serialises writers of @pol (see
 * struct mpol_weights).
 */
#define mpol_weights_deref(pol, held)					\
	rcu_dereference_protected((pol)->il_weights, (held))

int mpol_args_from_user(struct mpol_args *kargs,
			const struct mpol_args __user *uargs, size_t usize);
int mpol_weights_from_user(const struct mpol_args *kargs,
			   const nodemask_t *nodes, struct mpol_weights **out);
int mpol_weights_to_user(const struct mpol_args *kargs, const u8 *weight);
int mpol_reweight_from_user(const struct mpol_reweight_args __user *uargs,
			    size_t usize, struct mpol_weights **out);
bool mpol_weights_same(struct mempolicy *pol, const u8 *weight);
void mpol_weights_fill(struct mpol_weights *w, const u8 *weight);

/**
 * mpol_weights_publish - give a live policy a new own table
 * @pol: the policy, possibly in use by allocations right now
 * @table: the new table, filled with mpol_weights_fill(); @pol owns it
 * @held: lockdep expression: the caller holds what serialises changes to
 *	@pol (see struct mpol_weights), so no other writer replaces or
 *	remaps the table
 *
 * Readers see the old table or the new one, never a mix; the old one is
 * freed after a grace period.  Does not sleep.  A macro so that @held is
 * only evaluated by lockdep.
 */
#define mpol_weights_publish(pol, table, held)				\
	mpol_weights_free(rcu_replace_pointer((pol)->il_weights, (table), (held)))

/* Hand @w to a policy that is not yet visible to anyone else. */
static inline void mpol_weights_attach(struct mempolicy *pol,
				       struct mpol_weights *w)
{
	RCU_INIT_POINTER(pol->il_weights, w);
}

u64 mpol_weights_next_gen(void);

/*
 * A new policy starts on the global weights.  Only a weighted-interleave
 * task policy ever follows a reweight's table, so only such a policy
 * takes a generation, mpol_weights_stamp(), when set_mempolicy() installs
 * it: no other policy touches the counter.
 */
static inline void mpol_weights_init(struct mempolicy *pol)
{
	RCU_INIT_POINTER(pol->il_weights, NULL);
	pol->wi_gen = 0;
}

/* A task policy about to be installed: newer than every reweight so far. */
static inline void mpol_weights_stamp(struct mempolicy *pol)
{
	if (pol && pol->mode == MPOL_WEIGHTED_INTERLEAVE)
		pol->wi_gen = mpol_weights_next_gen();
}

const u8 *mpol_task_weights_for(struct mm_struct *mm, struct mempolicy *pol);
u64 mpol_task_weights_global_gen(struct mm_struct *mm);
bool mpol_task_weights_apply(struct mempolicy *pol, u64 gen, u64 global_gen);
struct mpol_task_weights *mpol_task_weights_alloc(void);
void mpol_task_weights_publish(struct mm_struct *mm, struct task_struct *task,
			       struct mpol_task_weights *tw, const u8 *weight,
			       u64 gen, u64 global_gen);
void mpol_task_weights_prepare(struct task_struct *tsk);
void mpol_task_weights_rebind(struct task_struct *tsk, const nodemask_t *new);

/* Called when the last reference to @pol is dropped. */
static inline void mpol_weights_release(struct mempolicy *pol)
{
	/* The last reference is gone: nobody else can reach the table. */
	mpol_weights_free(rcu_dereference_protected(pol->il_weights,
						    !atomic_read(&pol->refcnt)));
}
#else
static inline const u8 *mpol_task_weights_for(struct mm_struct *mm,
					      struct mempolicy *pol)
{
	return NULL;
}

static inline void mpol_task_weights_prepare(struct task_struct *tsk) {}
static inline void mpol_task_weights_rebind(struct task_struct *tsk,
					    const nodemask_t *new) {}

static inline void mpol_weights_attach(struct mempolicy *pol,
				       struct mpol_weights *w) {}
static inline void mpol_weights_free(struct mpol_weights *w) {}
static inline void mpol_weights_init(struct mempolicy *pol) {}
static inline void mpol_weights_stamp(struct mempolicy *pol) {}
static inline void mpol_weights_release(struct mempolicy *pol) {}
static inline void mpol_weights_share(struct mempolicy *new,
				      struct mempolicy *old) {}
static inline void mpol_weights_pool_fill(void) {}

static inline void mpol_weights_rebind(struct mempolicy *pol,
				       struct mpol_weights *cur,
				       const nodemask_t *old,
				       const nodemask_t *new,
				       bool can_sleep) {}

#define mpol_weights_deref(pol, held)					\
	((void)(pol), (void)sizeof(held), (struct mpol_weights *)NULL)

static inline bool mpol_weights_equal(struct mempolicy *a, struct mempolicy *b)
{
	return true;
}
#endif /* CONFIG_NUMA_POLICY_WEIGHTS */

/**
 * mpol_vma_shared_policy - the shmem shared policies behind @vma
 * @vma: the VMA
 *
 * shmem files and shared anonymous memory (vma_is_shmem()), and SysV
 * shared memory, whose VMAs carry shm's vm_ops over the same shmem inode.
 *
 * Return: the inode's shared policy tree, or NULL if @vma is not shmem.
 */
static inline struct shared_policy *
mpol_vma_shared_policy(struct vm_area_struct *vma)
{
	struct file *file = vma->vm_file;

	if (!file || !shmem_mapping(file->f_mapping))
		return NULL;
	return &SHMEM_I(file_inode(file))->policy;
}

#endif /* _MM_MEMPOLICY_WEIGHTS_H */
