/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of the timers' windows: dtimerfd:dtfd_arm when a timer is
 * armed, dtimerfd:dtfd_deliver when its expiry is delivered.  With the
 * idle exits (power:cpu_idle) they are what an offline tool needs to set
 * the wake-ups the deferrable timers cost against the fewest any delivery
 * could cost (bench/optimum).  Times are on CLOCK_MONOTONIC, whatever
 * the timer's clock, so that a trace recorded with trace_clock "mono"
 * compares them with its own timestamps.  A timer is named by its
 * context's address, hashed by %p as the timer events name theirs.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM dtimerfd

#if !defined(DTFD_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define DTFD_TRACE_H

#include <linux/ktime.h>
#include <linux/tracepoint.h>

#include "dtfd.h"

/*
 * @deferrable: the timer rides other wake-ups, and its window is
 * [deadline, deadline + bound] (bound 0: no bound); a strict timer's is
 * [deadline, deadline + its slack].
 */
TRACE_EVENT(dtfd_arm,
	    TP_PROTO(const struct dtfd_ctx *ctx),
	    TP_ARGS(ctx),
	    TP_STRUCT__entry(__field(const void *, ctx)
			     __field(s64, deadline)
			     __field(s64, bound)
			     __field(int, clockid)
			     __field(bool, deferrable)),
	    TP_fast_assign(__entry->ctx = ctx;
			   __entry->deadline = dtfd_to_mono(ctx, ctx->expires);
			   __entry->deferrable = ctx->src->flags & DTFD_TIMER_DEFERRABLE;
			   __entry->bound = __entry->deferrable ? ctx->max_defer : ctx->slack;
			   __entry->clockid = ctx->clockid;),
	    TP_printk("ctx=%p clock=%d deadline=%lld bound=%lld deferrable=%d",
		      __entry->ctx, __entry->clockid, __entry->deadline,
		      __entry->bound, __entry->deferrable));

/* @by_bound: a bounded timer's backstop forced it at the window's end. */
TRACE_EVENT(dtfd_deliver,
	    TP_PROTO(const struct dtfd_ctx *ctx, ktime_t now, bool by_bound),
	    TP_ARGS(ctx, now, by_bound),
	    TP_STRUCT__entry(__field(const void *, ctx)
			     __field(s64, deadline)
			     __field(s64, now)
			     __field(bool, by_bound)),
	    TP_fast_assign(__entry->ctx = ctx;
			   __entry->deadline = dtfd_to_mono(ctx, ctx->expires);
			   __entry->now = dtfd_to_mono(ctx, now);
			   __entry->by_bound = by_bound;),
	    TP_printk("ctx=%p deadline=%lld now=%lld late=%lld by_bound=%d",
		      __entry->ctx, __entry->deadline, __entry->now,
		      __entry->now - __entry->deadline, __entry->by_bound));

#endif /* DTFD_TRACE_H */

/* This part must be outside the include guard. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE trace
#include <trace/define_trace.h>
