/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dtimerfd internals: one context per open file of /dev/dtimerfd.
 *
 * The context keeps the next expiry as a ktime on the clock it is measured
 * on (@expires on @eclock).  That deadline is the only truth about when the
 * timer is due: the hrtimer, the alarm and the deferrable timer_list are
 * wake-up sources that say "look now", and overruns, remaining time and
 * re-arming are all computed from the deadline in nanoseconds, identically
 * for every source.
 */
#ifndef DTIMERFD_INTERNAL_H
#define DTIMERFD_INTERNAL_H

#include <linux/alarmtimer.h>
#include <linux/hrtimer.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/timer.h>
#include <linux/types.h>
#include <linux/wait.h>

#include <linux/dtimerfd.h>

/* The bits timerfd itself knows; fdinfo's "settime flags" shows only these. */
#define DTFD_TFD_FLAGS		(DTFD_TIMER_ABSTIME | DTFD_TIMER_CANCEL_ON_SET)
#define DTFD_SETTIME_FLAGS	(DTFD_TFD_FLAGS | DTFD_TIMER_DEFERRABLE)

enum dtfd_mode {
	DTFD_MODE_STRICT,	/* hrtimer or alarm: exactly timerfd */
	DTFD_MODE_DEFERRABLE,	/* TIMER_DEFERRABLE timer_list */
};

/* Why a context sits on the clock-change list (dtfd_clock_lock). */
#define DTFD_WATCH_CANCEL	BIT(0)	/* CANCEL_ON_SET armed */
#define DTFD_WATCH_REARM	BIT(1)	/* deferrable, deadline not on jiffies' clock */

struct dtimerfd_ctx {
	/* strict wake-up source, chosen by the clock at bind time */
	union {
		struct hrtimer tmr;
		struct alarm alarm;
	} t;
	/* deferrable wake-up source (TIMER_DEFERRABLE | TIMER_PINNED) */
	struct timer_list dtmr;
	/*
	 * Serialises settime and bind: they re-initialise the strict source,
	 * which another settime waiting for a running callback (without
	 * wqh.lock) must not see half-written.
	 */
	struct mutex setup_lock;
	/*
	 * wqh.lock is the context lock: it guards every field below except
	 * those marked otherwise, and the programming of the wake-up sources.
	 * The hrtimer callback takes it from hard irq, so process context
	 * uses the _irq variants.
	 */
	wait_queue_head_t wqh;
	/* next expiry on @eclock; 0 when never armed */
	ktime_t expires;
	/*
	 * @eclock's time at the last settime: lateness counts from the later
	 * of this and @expires, so that a deadline already past when it was
	 * set is not decades late.
	 */
	ktime_t armed_at;
	ktime_t tintv;
	/*
	 * dtfd_clock_seq when CANCEL_ON_SET was armed or last reported: any
	 * other value means the realtime clock was set since.
	 */
	unsigned int cseq;
	/* expirations not yet read: what read(2) returns */
	u64 ticks;
	/* the clock bound by the user, and the one @expires is measured on */
	int clockid;
	int eclock;
	/* dtfd_tolerance, applied whenever the timer is armed */
	ktime_t slack;
	ktime_t max_defer;
	/* the backstop hrtimer of a bounded deferrable timer is armed */
	bool backstop;
	struct dtfd_stats stats;
	/* the timerfd settime bits of the last successful settime, for fdinfo */
	u8 settime_flags;
	u8 mode;		/* enum dtfd_mode */
	/* the clock was set since @cseq: ECANCELED for the next read or settime */
	bool canceled;
	/* a wake-up source fired and read/gettime has not re-armed it yet */
	bool expired;
	/* a wake-up source is armed for @expires and has not fired */
	bool queued;
	/* @dtmr may be pending or running since it was last cancelled */
	bool wheel_used;
	/* clock fixed: DTFD_IOC_INIT done or the timer was armed once */
	bool bound;
	/* DTFD_WATCH_* bits; written under both dtfd_clock_lock and wqh.lock */
	u8 watch;
	/* on dtfd_clock_list; guarded by dtfd_clock_lock */
	struct list_head clist;
};

static inline bool dtfd_isalarm(const struct dtimerfd_ctx *ctx)
{
	return ctx->clockid == CLOCK_REALTIME_ALARM ||
	       ctx->clockid == CLOCK_BOOTTIME_ALARM;
}

/* timer.c: wake-up sources and the arithmetic on the deadline */
void dtfd_timer_init(struct dtimerfd_ctx *ctx);
void dtfd_timer_bind(struct dtimerfd_ctx *ctx);
int dtfd_timer_try_cancel(struct dtimerfd_ctx *ctx);
void dtfd_timer_cancel_wait(struct dtimerfd_ctx *ctx);
void dtfd_timer_shutdown(struct dtimerfd_ctx *ctx);
ktime_t dtfd_now(const struct dtimerfd_ctx *ctx);
void dtfd_arm(struct dtimerfd_ctx *ctx, ktime_t now);
u64 dtfd_forward(struct dtimerfd_ctx *ctx, ktime_t now);
void dtfd_deliver_due(struct dtimerfd_ctx *ctx, ktime_t now);
void dtfd_clock_jumped(struct dtimerfd_ctx *ctx);

/* A deferrable timer waiting for its CPU: it may be due without having fired. */
static inline bool dtfd_deferred(const struct dtimerfd_ctx *ctx)
{
	return ctx->queued && ctx->mode == DTFD_MODE_DEFERRABLE;
}

/* Deliver a deferrable timer that is due; strict timers cost nothing here. */
static inline void dtfd_check_due(struct dtimerfd_ctx *ctx)
{
	if (dtfd_deferred(ctx))
		dtfd_deliver_due(ctx, dtfd_now(ctx));
}

/* Time to the deadline at @now, 0 once passed (timerfd_get_remaining()). */
static inline ktime_t dtfd_remaining(const struct dtimerfd_ctx *ctx,
				     ktime_t now)
{
	ktime_t rem = ktime_sub(ctx->expires, now);

	return rem < 0 ? 0 : rem;
}

/*
 * Debug builds only (make KCFLAGS=-DDTFD_DEBUG, or any lockdep kernel):
 * the race_delay_us parameter delays every callback before it takes
 * wqh.lock, so that tests explore the interleavings of callbacks with
 * process context that a fast machine almost never shows.
 */
#if defined(DTFD_DEBUG) || IS_ENABLED(CONFIG_PROVE_LOCKING)
void dtfd_race_delay(void);
#else
static inline void dtfd_race_delay(void) { }
#endif

/* clock.c: clock changes, resume and time namespaces */
int dtfd_clock_init(void);
void dtfd_clock_exit(void);
void dtfd_clock_watch(struct dtimerfd_ctx *ctx, unsigned int watch);
void dtfd_cancel_check(struct dtimerfd_ctx *ctx);
bool dtfd_canceled(struct dtimerfd_ctx *ctx);
ktime_t dtfd_timens_to_host(int clockid, ktime_t tim);

#endif /* DTIMERFD_INTERNAL_H */
