/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM mempolicy

#if !defined(_TRACE_MEMPOLICY_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_MEMPOLICY_H

#include <linux/tracepoint.h>

struct mm_struct;

/*
 * mpol_rebalance - the end of one rebalance (mbind2() or
 * process_mpol_reweight() with a rebalance flag) that walked its range,
 * in the caller's context.  A call refused before any walk is not traced.
 * @pid: the thread group whose pages were rebalanced (global pid)
 * @mm: its address space
 * @start: start of the range walked
 * @end: end of the range walked (the whole address space for a reweight)
 * @scanned: resident pages the counting walks found
 * @needed: pages the plan had to move
 * @moved: pages migrated
 * @failed: pages that had to move and did not (the call's return)
 * @busy: pages found under migration, counted as fixed where they were
 */
TRACE_EVENT(mpol_rebalance,
	    TP_PROTO(pid_t pid, struct mm_struct *mm, unsigned long start,
		     unsigned long end, unsigned long scanned,
		     unsigned long needed, unsigned long moved,
		     unsigned long failed, unsigned long busy),
	    TP_ARGS(pid, mm, start, end, scanned, needed, moved, failed, busy),
	    TP_STRUCT__entry(__field(pid_t, pid)
			     __field(struct mm_struct *, mm)
			     __field(unsigned long, start)
			     __field(unsigned long, end)
			     __field(unsigned long, scanned)
			     __field(unsigned long, needed)
			     __field(unsigned long, moved)
			     __field(unsigned long, failed)
			     __field(unsigned long, busy)),
	    TP_fast_assign(__entry->pid = pid;
			   __entry->mm = mm;
			   __entry->start = start;
			   __entry->end = end;
			   __entry->scanned = scanned;
			   __entry->needed = needed;
			   __entry->moved = moved;
			   __entry->failed = failed;
			   __entry->busy = busy;),
	    TP_printk("pid=%d mm=%p range=%#lx-%#lx scanned=%lu needed=%lu moved=%lu failed=%lu busy=%lu",
		      __entry->pid, __entry->mm, __entry->start, __entry->end,
		      __entry->scanned, __entry->needed, __entry->moved,
		      __entry->failed, __entry->busy)
);

#endif /* _TRACE_MEMPOLICY_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
