/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM mempolicy

#if !defined(_TRACE_MEMPOLICY_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_MEMPOLICY_H

#include <linux/tracepoint.h>

/*
 * mpol_rebalance - the end of one rebalance (mbind2() or
 * process_mpol_reweight() with a rebalance flag), in the caller's context.
 * @scanned: resident pages the counting walks found
 * @needed: pages the plan had to move
 * @moved: pages migrated
 * @failed: pages that had to move and did not (the call's return)
 * @busy: pages found under migration, counted as fixed where they were
 */
TRACE_EVENT(mpol_rebalance,
	    TP_PROTO(unsigned long scanned, unsigned long needed,
		     unsigned long moved, unsigned long failed,
		     unsigned long busy),
	    TP_ARGS(scanned, needed, moved, failed, busy),
	    TP_STRUCT__entry(__field(unsigned long, scanned)
			     __field(unsigned long, needed)
			     __field(unsigned long, moved)
			     __field(unsigned long, failed)
			     __field(unsigned long, busy)),
	    TP_fast_assign(__entry->scanned = scanned;
			   __entry->needed = needed;
			   __entry->moved = moved;
			   __entry->failed = failed;
			   __entry->busy = busy;),
	    TP_printk("scanned=%lu needed=%lu moved=%lu failed=%lu busy=%lu",
		      __entry->scanned, __entry->needed, __entry->moved,
		      __entry->failed, __entry->busy)
);

#endif /* _TRACE_MEMPOLICY_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
