// SPDX-License-Identifier: GPL-2.0
/*
 * The timer: its state and every transition of it, in the manner of
 * fs/timerfd.c.  A wake-up source (struct dtfd_source) calls
 * dtfd_deliver() when the deadline has come; read, poll and gettime
 * harvest the ticks; read and gettime re-arm a periodic timer, counting
 * the periods that passed meanwhile.  No callback ever re-arms a periodic
 * timer, so a tiny interval cannot turn a callback into an interrupt
 * storm.
 *
 * Every access looks at the clock-change count first (dtfd_cancel_check())
 * and lets a lazy source deliver what is due (dtfd_collect()): a
 * deferrable timer whose CPU sleeps has not fired, but it is due.
 */

#include <linux/capability.h>
#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/list.h>
#include <linux/lockdep.h>
#include <linux/minmax.h>
#include <linux/moduleparam.h>
#include <linux/overflow.h>
#include <linux/poll.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>

#include "dtfd.h"

#define CREATE_TRACE_POINTS
#include "trace.h"

/* Tried in order; the first that accepts a clock and settime flags serves. */
static const struct dtfd_source *const dtfd_sources[] = {
	&dtfd_alarm_source,
	&dtfd_ride_source,
	&dtfd_percpu_source,
	&dtfd_hrtimer_source,
};

static struct kmem_cache *dtfd_cachep;

#if defined(DTFD_DEBUG) || IS_ENABLED(CONFIG_PROVE_LOCKING)
static unsigned int race_delay_us;
module_param(race_delay_us, uint, 0644);
MODULE_PARM_DESC(race_delay_us,
		 "debug: delay each callback up to this long before its lock (us)");
static bool race_delay_fixed;
module_param(race_delay_fixed, bool, 0644);
MODULE_PARM_DESC(race_delay_fixed,
		 "debug: delay by exactly race_delay_us, not a random part of it");

void dtfd_race_delay(void)
{
	unsigned int us = READ_ONCE(race_delay_us);

	if (!us)
		return;
	if (!READ_ONCE(race_delay_fixed))
		us = get_random_u32() % (us + 1);
	for (; us >= 1000; us -= 1000)
		mdelay(1);
	udelay(us);
}
#endif

/*
 * The clocks timerfd_create(2) takes.  A relative CLOCK_REALTIME deadline
 * is measured on CLOCK_MONOTONIC, as the hrtimer core measures it: it
 * ignores clock steps.
 */
const struct dtfd_clock dtfd_clocks[MAX_CLOCKS] = {
	[CLOCK_REALTIME] = {
		.abs_clock = CLOCK_REALTIME, .rel_clock = CLOCK_MONOTONIC,
		.offset = true, .offs = TK_OFFS_REAL, .timens = -1,
	},
	[CLOCK_MONOTONIC] = {
		.abs_clock = CLOCK_MONOTONIC, .rel_clock = CLOCK_MONOTONIC,
		.timens = CLOCK_MONOTONIC,
	},
	[CLOCK_BOOTTIME] = {
		.abs_clock = CLOCK_BOOTTIME, .rel_clock = CLOCK_BOOTTIME,
		.offset = true, .offs = TK_OFFS_BOOT, .timens = CLOCK_BOOTTIME,
	},
	[CLOCK_REALTIME_ALARM] = {
		.abs_clock = CLOCK_REALTIME, .rel_clock = CLOCK_REALTIME,
		.timens = -1, .alarm = true,
	},
	[CLOCK_BOOTTIME_ALARM] = {
		.abs_clock = CLOCK_BOOTTIME, .rel_clock = CLOCK_BOOTTIME,
		.timens = CLOCK_BOOTTIME, .alarm = true,
	},
};

int dtfd_valid_clock(int clockid)
{
	return clockid >= 0 && clockid < MAX_CLOCKS &&
	       (DTFD_CLOCKS & BIT(clockid));
}

/*
 * The source serving each clock and DTFD_SOURCE_FLAGS combination (NULL:
 * EINVAL), by index: filled at load from the sources' own declarations.
 */
#define DTFD_SOURCE_KINDS	4
static const struct dtfd_source *dtfd_source_of[MAX_CLOCKS][DTFD_SOURCE_KINDS];

static unsigned int dtfd_source_kind(unsigned int flags)
{
	return (flags & DTFD_TIMER_DEFERRABLE ? 1 : 0) |
	       (flags & DTFD_TIMER_PERCPU ? 2 : 0);
}

static void dtfd_sources_index(void)
{
	unsigned int c, i, k;

	for (c = 0; c < MAX_CLOCKS; c++)
		for (i = ARRAY_SIZE(dtfd_sources); i-- > 0; ) {
			k = dtfd_source_kind(dtfd_sources[i]->flags);
			if (dtfd_valid_clock(c) &&
			    (dtfd_sources[i]->clocks & BIT(c)))
				dtfd_source_of[c][k] = dtfd_sources[i];
		}
}

const struct dtfd_source *dtfd_source_for(int clockid, unsigned int flags)
{
	return dtfd_source_of[clockid][dtfd_source_kind(flags)];
}

/* The clock the deadline is measured on, as the hrtimer core chooses it. */
static int dtfd_eclock(int clockid, unsigned int flags)
{
	return flags & DTFD_TIMER_ABSTIME ? dtfd_clocks[clockid].abs_clock :
					    dtfd_clocks[clockid].rel_clock;
}

/*
 * Deliver the expiration at @now: count it, wake readers and pollers.
 * @by_bound: a bounded deferrable timer's backstop forced it.
 */
void dtfd_deliver(struct dtfd_ctx *ctx, ktime_t now, bool by_bound)
{
	s64 late = ktime_sub(now, max(ctx->expires, ctx->armed_at));

	lockdep_assert_held(&ctx->wqh.lock);

	trace_dtfd_deliver(ctx, now, by_bound);
	ctx->queued = false;
	ctx->expired = true;
	ctx->ticks++;
	ctx->stats.expirations++;
	ctx->stats.deliveries++;
	if (by_bound)
		ctx->stats.backstop++;
	if (late > 0) {
		/* saturate: CLOCK_REALTIME steps can be years */
		if (check_add_overflow(ctx->stats.late_total_ns, (u64)late,
				       &ctx->stats.late_total_ns))
			ctx->stats.late_total_ns = U64_MAX;
		if (late > ctx->stats.late_max_ns)
			ctx->stats.late_max_ns = late;
		if (late > TICK_NSEC)
			ctx->stats.deferred++;
	}
	wake_up_locked_poll(&ctx->wqh, EPOLLIN);
}

/*
 * The realtime clock was set since @ctx armed CANCEL_ON_SET or last
 * reported ECANCELED (dtfd_cancel_check()): mark it cancelled, as
 * timerfd_clock_was_set() does: a tick that read(2) turns into ECANCELED,
 * and a wake-up.
 */
static void dtfd_cancel_mark(struct dtfd_ctx *ctx)
{
	lockdep_assert_held(&ctx->wqh.lock);

	ctx->canceled = true;
	ctx->ticks++;
	wake_up_locked_poll(&ctx->wqh, EPOLLIN);
}

/*
 * Has the realtime clock been set since @ctx armed CANCEL_ON_SET or last
 * reported ECANCELED?  Every access asks first thing under the lock, as if
 * timerfd_clock_was_set() had marked the timer just before, so that a
 * step during the access counts for the next one, as in timerfd.  Inline:
 * the answer is nearly always no, and every access pays for the question.
 */
static inline void dtfd_cancel_check(struct dtfd_ctx *ctx)
{
	if ((ctx->watch & DTFD_WATCH_CANCEL) && !ctx->canceled &&
	    ctx->cseq != READ_ONCE(dtfd_clock_seq))
		dtfd_cancel_mark(ctx);
}

/* True once after a clock change cancelled @ctx (timerfd_canceled()). */
static bool dtfd_canceled(struct dtfd_ctx *ctx)
{
	lockdep_assert_held(&ctx->wqh.lock);

	if (!(ctx->watch & DTFD_WATCH_CANCEL) || !ctx->canceled)
		return false;
	ctx->canceled = false;
	ctx->cseq = READ_ONCE(dtfd_clock_seq);
	return true;
}

/*
 * The timers that watch clock changes (clock.c counts them and runs the
 * walk below after each step), as timerfd keeps its cancel_list.  A
 * spinlock, so that close never waits for more than one batch of the
 * walk.
 */
static LIST_HEAD(dtfd_clock_list);
static DEFINE_SPINLOCK(dtfd_clock_lock);

/* Entries the walk handles between two chances to reschedule. */
#define DTFD_CLOCK_BATCH	16

/*
 * The clock was stepped: mark the CANCEL_ON_SET timers and wake their
 * sleepers, and have the sources that follow the clock themselves re-aim
 * (a step past a deferrable timer's deadline makes it due now).
 *
 * The list is walked with a cursor, so that the lock can be dropped
 * between batches: an unprivileged user can make the list long, and every
 * close of a watching timer takes the lock.  Entries added meanwhile go
 * in front of the cursor: they were armed on the new clock.  One walk at
 * a time: a work item does not run on two CPUs at once.
 */
static void dtfd_clock_was_set(struct work_struct *work)
{
	struct dtfd_ctx *ctx;
	struct list_head cursor;
	unsigned int n = 0;

	spin_lock_irq(&dtfd_clock_lock);
	list_add(&cursor, &dtfd_clock_list);
	while (!list_is_last(&cursor, &dtfd_clock_list)) {
		ctx = list_entry(cursor.next, struct dtfd_ctx, clist);
		list_move(&cursor, &ctx->clist);

		spin_lock(&ctx->wqh.lock);
		dtfd_cancel_check(ctx);
		if (ctx->watch & DTFD_WATCH_REARM && ctx->src->clock_jumped)
			ctx->src->clock_jumped(ctx);
		spin_unlock(&ctx->wqh.lock);

		if (++n % DTFD_CLOCK_BATCH == 0) {
			spin_unlock_irq(&dtfd_clock_lock);
			cond_resched();
			spin_lock_irq(&dtfd_clock_lock);
		}
	}
	list_del(&cursor);
	spin_unlock_irq(&dtfd_clock_lock);
}

/*
 * Put @ctx on the clock-change list or take it off.  Only a change of
 * what the timer watches takes the global lock.
 */
static void dtfd_clock_watch(struct dtfd_ctx *ctx, unsigned int watch)
{
	if (READ_ONCE(ctx->watch) == watch)
		return;

	spin_lock_irq(&dtfd_clock_lock);
	if (watch && list_empty(&ctx->clist))
		list_add(&ctx->clist, &dtfd_clock_list);
	else if (!watch)
		list_del_init(&ctx->clist);

	spin_lock(&ctx->wqh.lock);
	/* a change while it still watched counts, as in timerfd */
	dtfd_cancel_check(ctx);
	/*
	 * Changes from now on count.  timerfd keeps the offset from creation,
	 * but it hears only about the changes while it watches; a pending
	 * cancellation is kept, as timerfd keeps it.
	 */
	if ((watch & ~ctx->watch & DTFD_WATCH_CANCEL) && !ctx->canceled)
		ctx->cseq = READ_ONCE(dtfd_clock_seq);
	WRITE_ONCE(ctx->watch, watch);
	spin_unlock(&ctx->wqh.lock);
	spin_unlock_irq(&dtfd_clock_lock);
}

/* Deliver an expiry that is due but that a lazy source has not delivered. */
static void dtfd_collect(struct dtfd_ctx *ctx, ktime_t now)
{
	if (ctx->queued && now >= ctx->expires && ctx->src->collect)
		ctx->src->collect(ctx, now);
}

/* What every access does first under the lock. */
static void dtfd_access(struct dtfd_ctx *ctx)
{
	dtfd_cancel_check(ctx);
	/* strict sources deliver on time: no clock read for them */
	if (ctx->queued && ctx->src->collect)
		dtfd_collect(ctx, dtfd_now(ctx));
}

/* Time to the deadline at @now, 0 once passed (timerfd_get_remaining()). */
static ktime_t dtfd_remaining(const struct dtfd_ctx *ctx, ktime_t now)
{
	ktime_t rem = ktime_sub(ctx->expires, now);

	return rem < 0 ? 0 : rem;
}

static void dtfd_arm(struct dtfd_ctx *ctx, ktime_t now)
{
	lockdep_assert_held(&ctx->wqh.lock);

	trace_dtfd_arm(ctx);
	ctx->queued = true;
	ctx->src->arm(ctx, now);
}

/*
 * Move @ctx->expires to the first period boundary after @now and return
 * how many boundaries were crossed (0 when the deadline is still ahead).
 * This is hrtimer_forward() on our own deadline, including its rule that
 * an hrtimer period is at least the timer resolution; alarm_forward() has
 * no such rule, and the alarm clocks follow it.
 */
static u64 dtfd_forward(struct dtfd_ctx *ctx, ktime_t now)
{
	ktime_t interval = ctx->tintv;
	ktime_t delta = ktime_sub(now, ctx->expires);
	u64 orun = 1;

	lockdep_assert_held(&ctx->wqh.lock);

	if (delta < 0)
		return 0;
	if (ctx->src->hres_period && interval < hrtimer_resolution)
		interval = hrtimer_resolution;
	if (unlikely(delta >= interval)) {
		s64 incr = ktime_to_ns(interval);

		orun = ktime_divns(delta, incr);
		ctx->expires = ktime_add_ns(ctx->expires, incr * orun);
		if (ctx->expires > now)
			return orun;
		orun++;
	}
	ctx->expires = ktime_add_safe(ctx->expires, interval);
	return orun;
}

/*
 * A periodic timer that fired: advance the deadline past now, arm the next
 * period and return the expirations that passed since the one delivered
 * (timerfd's "overruns - 1").  When CLOCK_REALTIME stepped back behind the
 * deadline nothing is forwarded and this is -1 in u64, as in timerfd: the
 * delivered tick is taken back and read(2) may return 0.  The statistics
 * only ever count up, so they take no part in that.
 */
static u64 dtfd_rearm(struct dtfd_ctx *ctx, ktime_t now)
{
	u64 orun = dtfd_forward(ctx, now);

	if (orun)
		ctx->stats.expirations += orun - 1;
	dtfd_arm(ctx, now);
	return orun - 1;
}

static unsigned int dtfd_watch_for(const struct dtfd_ctx *ctx,
				   const struct dtfd_source *src,
				   unsigned int flags)
{
	unsigned int watch = 0;
	bool abs = flags & DTFD_TIMER_ABSTIME;

	if ((ctx->clockid == CLOCK_REALTIME ||
	     ctx->clockid == CLOCK_REALTIME_ALARM) &&
	    abs && (flags & DTFD_TIMER_CANCEL_ON_SET))
		watch |= DTFD_WATCH_CANCEL;
	/* deadlines that jiffies do not follow: suspend, realtime steps */
	if (src->clock_jumped &&
	    (ctx->clockid == CLOCK_BOOTTIME ||
	     (ctx->clockid == CLOCK_REALTIME && abs)))
		watch |= DTFD_WATCH_REARM;
	return watch;
}

/*
 * Program @ctx for @new with @src; nothing is armed.  @now is the time on
 * the clock the old setting was measured on.
 */
static int dtfd_setup(struct dtfd_ctx *ctx, const struct dtfd_source *src,
		      unsigned int flags, const struct itimerspec64 *new,
		      ktime_t now)
{
	ktime_t texp = timespec64_to_ktime(new->it_value);
	int old_eclock = ctx->eclock;

	ctx->expired = false;
	ctx->queued = false;
	ctx->ticks = 0;
	ctx->tintv = timespec64_to_ktime(new->it_interval);
	ctx->eclock = dtfd_eclock(ctx->clockid, flags);
	if (src != ctx->src || ctx->eclock != old_eclock) {
		ctx->src = src;
		src->setup(ctx);
	}

	if (texp) {
		if (ctx->eclock != old_eclock)
			now = dtfd_now(ctx);
		if (flags & DTFD_TIMER_ABSTIME)
			texp = dtfd_timens_to_host(ctx->clockid, texp);
		else
			texp = ktime_add_safe(texp, now);
		ctx->expires = texp;
		ctx->armed_at = now;
		dtfd_arm(ctx, now);
		if (dtfd_canceled(ctx))
			return -ECANCELED;
	} else if (!dtfd_alarm_clock(ctx->clockid)) {
		/*
		 * timerfd re-initialises the hrtimer with a zero expiry; an
		 * alarm keeps its old one, which gettime keeps reporting.
		 */
		ctx->expires = 0;
	}

	ctx->settime_flags = flags & DTFD_TFD_FLAGS;
	return 0;
}

static int dtfd_settime_locked(struct dtfd_ctx *ctx,
			       const struct dtfd_source *src,
			       unsigned int flags,
			       const struct itimerspec64 *new,
			       struct itimerspec64 *old)
{
	bool restart;
	ktime_t now;
	int ret;

	dtfd_clock_watch(ctx, dtfd_watch_for(ctx, src, flags));

	/*
	 * Stop the old source before reprogramming, as timerfd does.  One
	 * clock read serves the access, the old value and the new arming.
	 * Armed again on the same source and clock, a source may move the
	 * timer in one step (restart).
	 */
	restart = src == ctx->src && timespec64_to_ns(&new->it_value) &&
		  dtfd_eclock(ctx->clockid, flags) == ctx->eclock;
	for (;;) {
		spin_lock_irq(&ctx->wqh.lock);
		dtfd_cancel_check(ctx);
		now = dtfd_now(ctx);
		dtfd_collect(ctx, now);
		if (ctx->src->try_cancel(ctx, restart) >= 0)
			break;
		spin_unlock_irq(&ctx->wqh.lock);
		ctx->src->cancel_sync(ctx);
	}

	/*
	 * An expired periodic timer is advanced so the old value tells when
	 * it would have fired next; ticks do not matter, they are reset.
	 */
	if (ctx->expired && ctx->tintv)
		dtfd_forward(ctx, now);

	old->it_value = ktime_to_timespec64(dtfd_remaining(ctx, now));
	old->it_interval = ktime_to_timespec64(ctx->tintv);

	ret = dtfd_setup(ctx, src, flags, new, now);
	spin_unlock_irq(&ctx->wqh.lock);
	return ret;
}

/*
 * timerfd_settime(2) once its arguments are in: an alarm must wake the
 * machine, so it cannot be deferrable (no source serves that), and it
 * needs CAP_WAKE_ALARM here too, since descriptors travel.
 */
int dtfd_timer_settime(struct dtfd_ctx *ctx, unsigned int flags,
		       const struct itimerspec64 *new, struct itimerspec64 *old)
{
	const struct dtfd_source *src = dtfd_source_for(ctx->clockid, flags);
	int ret;

	if (!src)
		return -EINVAL;
	if (src->wake_alarm && !capable(CAP_WAKE_ALARM))
		return -EPERM;

	mutex_lock(&ctx->setup_lock);
	ret = dtfd_settime_locked(ctx, src, flags, new, old);
	mutex_unlock(&ctx->setup_lock);
	return ret;
}

/*
 * timerfd_gettime(2), into @cur: one clock read, for the lazy source, the
 * periodic re-arm and the remaining time alike.
 */
void dtfd_timer_gettime(struct dtfd_ctx *ctx, struct itimerspec64 *cur)
{
	ktime_t now;

	spin_lock_irq(&ctx->wqh.lock);
	dtfd_cancel_check(ctx);
	now = dtfd_now(ctx);
	dtfd_collect(ctx, now);
	if (ctx->expired && ctx->tintv) {
		ctx->expired = false;
		ctx->ticks += dtfd_rearm(ctx, now);
	}
	cur->it_value = ktime_to_timespec64(dtfd_remaining(ctx, now));
	cur->it_interval = ktime_to_timespec64(ctx->tintv);
	spin_unlock_irq(&ctx->wqh.lock);
}

/*
 * read(2): wait for ticks unless @nonblock, then take them all, re-arming
 * a periodic timer.  Returns 0 with *@ticks set, or an error; the caller
 * copies.
 */
ssize_t dtfd_read_ticks(struct dtfd_ctx *ctx, bool nonblock, u64 *ticks)
{
	ssize_t res;

	*ticks = 0;
	spin_lock_irq(&ctx->wqh.lock);
	dtfd_access(ctx);
	if (nonblock)
		res = -EAGAIN;
	else
		res = wait_event_interruptible_locked_irq(ctx->wqh, ctx->ticks);
	/* a step while it slept counts before the expiry that woke it */
	dtfd_cancel_check(ctx);

	/* After a clock change userspace must re-evaluate: drop the ticks. */
	if (dtfd_canceled(ctx)) {
		ctx->ticks = 0;
		ctx->expired = false;
		res = -ECANCELED;
	}

	if (ctx->ticks) {
		*ticks = ctx->ticks;
		if (ctx->expired && ctx->tintv)
			*ticks += dtfd_rearm(ctx, dtfd_now(ctx));
		ctx->expired = false;
		ctx->ticks = 0;
	}
	spin_unlock_irq(&ctx->wqh.lock);
	return res;
}

/* poll(2): EPOLLIN while there are ticks to read. */
bool dtfd_readable(struct dtfd_ctx *ctx)
{
	unsigned long flags;
	bool ready;

	spin_lock_irqsave(&ctx->wqh.lock, flags);
	dtfd_access(ctx);
	ready = ctx->ticks;
	spin_unlock_irqrestore(&ctx->wqh.lock, flags);
	return ready;
}

/* TFD_IOC_SET_TICKS, for checkpoint/restore: @ticks is not 0 */
int dtfd_set_ticks(struct dtfd_ctx *ctx, u64 ticks)
{
	int ret = 0;

	spin_lock_irq(&ctx->wqh.lock);
	dtfd_cancel_check(ctx);
	if (!dtfd_canceled(ctx)) {
		ctx->ticks = ticks;
		wake_up_locked_poll(&ctx->wqh, EPOLLIN);
	} else {
		ret = -ECANCELED;
	}
	spin_unlock_irq(&ctx->wqh.lock);
	return ret;
}

/* slack for strict timers, a bound for deferrable ones; from the next arm */
void dtfd_set_tolerance(struct dtfd_ctx *ctx, u64 slack_ns, u64 max_defer_ns)
{
	spin_lock_irq(&ctx->wqh.lock);
	ctx->slack = min_t(u64, slack_ns, KTIME_MAX);
	ctx->max_defer = min_t(u64, max_defer_ns, KTIME_MAX);
	spin_unlock_irq(&ctx->wqh.lock);
}

void dtfd_get_tolerance(struct dtfd_ctx *ctx, u64 *slack_ns, u64 *max_defer_ns)
{
	spin_lock_irq(&ctx->wqh.lock);
	*slack_ns = ctx->slack;
	*max_defer_ns = ctx->max_defer;
	spin_unlock_irq(&ctx->wqh.lock);
}

void dtfd_get_stats(struct dtfd_ctx *ctx, struct dtfd_stats *st)
{
	spin_lock_irq(&ctx->wqh.lock);
	*st = ctx->stats;
	spin_unlock_irq(&ctx->wqh.lock);
}

void dtfd_snapshot(struct dtfd_ctx *ctx, struct dtfd_snapshot *snap)
{
	spin_lock_irq(&ctx->wqh.lock);
	dtfd_cancel_check(ctx);
	snap->clockid = ctx->clockid;
	snap->ticks = ctx->ticks;
	snap->settime_flags = ctx->settime_flags;
	snap->mode = ctx->src->mode;
	snap->value = ktime_to_timespec64(dtfd_remaining(ctx, dtfd_now(ctx)));
	snap->interval = ktime_to_timespec64(ctx->tintv);
	snap->slack = ctx->slack;
	snap->max_defer = ctx->max_defer;
	snap->stats = ctx->stats;
	spin_unlock_irq(&ctx->wqh.lock);
}

/* A disarmed timer on @clockid, as timerfd_create(2) makes one. */
struct dtfd_ctx *dtfd_timer_new(int clockid)
{
	struct dtfd_ctx *ctx;

	ctx = kmem_cache_zalloc(dtfd_cachep, GFP_KERNEL);
	if (!ctx)
		return NULL;

	init_waitqueue_head(&ctx->wqh);
	mutex_init(&ctx->setup_lock);
	INIT_LIST_HEAD(&ctx->clist);
	ctx->clockid = clockid;
	ctx->eclock = dtfd_eclock(clockid, 0);
	ctx->src = dtfd_source_for(clockid, 0);
	ctx->src->setup(ctx);
	return ctx;
}

/*
 * The last reference to the timer is gone.  Not queued any more first:
 * every source's callbacks and deliverers leave a timer that is not
 * queued alone (a ride deliverer would otherwise put it back in a queue
 * when CLOCK_REALTIME stepped back behind its deadline, and it would be
 * freed there); then the source waits for them.
 */
void dtfd_timer_free(struct dtfd_ctx *ctx)
{
	dtfd_clock_watch(ctx, 0);
	spin_lock_irq(&ctx->wqh.lock);
	ctx->queued = false;
	spin_unlock_irq(&ctx->wqh.lock);
	ctx->src->shutdown(ctx);
	mutex_destroy(&ctx->setup_lock);
	kmem_cache_free(dtfd_cachep, ctx);
}

static void dtfd_sources_exit(unsigned int n)
{
	while (n--)
		if (dtfd_sources[n]->exit)
			dtfd_sources[n]->exit();
}

int dtfd_timer_init(void)
{
	unsigned int i;
	int ret;

	dtfd_cachep = KMEM_CACHE(dtfd_ctx, SLAB_ACCOUNT);
	if (!dtfd_cachep)
		return -ENOMEM;
	dtfd_sources_index();
	for (i = 0; i < ARRAY_SIZE(dtfd_sources); i++) {
		ret = dtfd_sources[i]->init ? dtfd_sources[i]->init() : 0;
		if (ret)
			goto err;
	}
	ret = dtfd_clock_init(dtfd_clock_was_set);
	if (!ret)
		return 0;
err:
	dtfd_sources_exit(i);
	kmem_cache_destroy(dtfd_cachep);
	return ret;
}

void dtfd_timer_exit(void)
{
	dtfd_clock_exit();
	dtfd_sources_exit(ARRAY_SIZE(dtfd_sources));
	kmem_cache_destroy(dtfd_cachep);
}
