// SPDX-License-Identifier: GPL-2.0
/*
 * dtimerfd wake-up sources: an hrtimer or an alarm for strict timers (as
 * timerfd), a TIMER_DEFERRABLE timer_list for deferrable ones, and the
 * nanosecond arithmetic on the deadline that every source shares.
 *
 * No callback ever re-arms a periodic timer: the next period is armed by
 * whoever reads the timer (read, gettime), counting the missed periods, so
 * a tiny interval cannot turn a callback into an interrupt storm.
 */

#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kernel_stat.h>
#include <linux/ktime.h>
#include <linux/lockdep.h>
#include <linux/minmax.h>
#include <linux/moduleparam.h>
#include <linux/overflow.h>
#include <linux/percpu.h>
#include <linux/poll.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/sched/stat.h>
#include <linux/tick.h>
#include <linux/timekeeping.h>

#include "dtimerfd.h"

/*
 * Timer wheel geometry (kernel/time/timer.c, identical in 6.1 and 6.12):
 * level 0 has 1-jiffy buckets for the first 63 jiffies; each further level
 * is 8 times coarser and rounds the expiry up to its granularity, which is
 * at most 8/63 of the delta.  Deltas beyond the wheel's cutoff (63 << 21
 * jiffies at HZ <= 100, 63 << 24 above) are clamped and fire early, so a
 * single arm never goes further than DTFD_WHEEL_MAX_CHUNK.
 */
#define DTFD_WHEEL_LVL0		63UL
#define DTFD_WHEEL_MAX_CHUNK	(63UL << 20)

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

static void dtfd_hrtimer_start(struct dtimerfd_ctx *ctx, ktime_t range)
{
	hrtimer_start_range_ns(&ctx->t.tmr, ctx->expires, ktime_to_ns(range),
			       HRTIMER_MODE_ABS);
}

/* Deliver the expiration at @now: count it, wake readers and pollers. */
static void dtfd_fire(struct dtimerfd_ctx *ctx, ktime_t now)
{
	s64 late = ktime_sub(now, max(ctx->expires, ctx->armed_at));

	lockdep_assert_held(&ctx->wqh.lock);

	if (ctx->backstop) {
		/* delivered within the bound: a running backstop finds !queued */
		hrtimer_try_to_cancel(&ctx->t.tmr);
		ctx->backstop = false;
	}
	ctx->queued = false;
	ctx->expired = true;
	ctx->ticks++;
	ctx->stats.expirations++;
	ctx->stats.deliveries++;
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

ktime_t dtfd_now(const struct dtimerfd_ctx *ctx)
{
	switch (ctx->eclock) {
	case CLOCK_REALTIME:
		return ktime_get_real();
	case CLOCK_BOOTTIME:
		return ktime_get_boottime();
	default:
		return ktime_get();
	}
}

/*
 * Jiffies from now at which to arm the deferrable timer_list for a
 * deadline @delta ns ahead.
 *
 * A timer armed for jiffies + n fires on the (n + 1)th tick from now: the
 * wheel adds a jiffy at level 0 so a timer armed just before a tick is not
 * early.  Aiming at jiffies + floor((delta - 1) / TICK_NSEC) makes that tick
 * land less than a jiffy either side of the deadline; when it lands early
 * the callback finds the deadline ahead and re-arms for the next tick.  So
 * a busy CPU delivers on the first tick at or after the deadline, never
 * before it.  Beyond level 0 aim 7/8 of the way, short of the wheel's
 * rounding, and close in from there.
 */
static unsigned long dtfd_defer_jiffies(s64 delta)
{
	u64 n = div_u64(delta - 1, TICK_NSEC);

	if (n >= DTFD_WHEEL_LVL0)
		n -= n >> 3;
	return min_t(u64, n, DTFD_WHEEL_MAX_CHUNK);
}

/*
 * Arm the deferrable timer_list for @ctx->expires on this CPU, or deliver
 * at once when the deadline has passed.
 */
static void dtfd_arm_deferrable(struct dtimerfd_ctx *ctx, ktime_t now)
{
	s64 delta = ktime_sub(ctx->expires, now);

	if (delta <= 0) {
		dtfd_fire(ctx, now);
		return;
	}
	ctx->wheel_used = true;
	/*
	 * Pinned: mod_timer() queues it on this CPU, unless its callback is
	 * running elsewhere, where it then stays (timer_delete_sync() must
	 * find it there).
	 */
	mod_timer(&ctx->dtmr, jiffies + dtfd_defer_jiffies(delta));
}

/*
 * The clock a deferrable deadline is measured on jumped (a realtime step,
 * or resume for boottime): deliver now if it became due, else move the
 * wake-up to match, on the CPU the timer is queued on.  Called from the
 * clock-change work, which runs on whatever CPU it likes.
 */
void dtfd_clock_jumped(struct dtimerfd_ctx *ctx)
{
	unsigned int cpu;
	ktime_t now;
	s64 delta;

	lockdep_assert_held(&ctx->wqh.lock);

	if (!dtfd_deferred(ctx))
		return;
	/*
	 * A running callback waits for our lock and then reads the new clock
	 * itself: leave it alone.  Re-queueing it on another CPU's base with
	 * add_timer_on() would hide it from timer_shutdown_sync() in
	 * release, which looks for a running callback on the timer's current
	 * base only, and the context would be freed under it.
	 */
	if (timer_delete_sync_try(&ctx->dtmr) < 0)
		return;
	now = dtfd_now(ctx);
	delta = ktime_sub(ctx->expires, now);
	if (delta <= 0) {
		dtfd_fire(ctx, now);
		return;
	}
	/*
	 * Back on the base it was on: the timer's own record, which CPU
	 * hotplug keeps up to date when it migrates timers; an offline CPU
	 * has no base to return to, so queue locally then.  Should that CPU
	 * go down right after the check, the timer waits for it to return,
	 * or for the next read or poll.
	 */
	cpu = ctx->dtmr.flags & TIMER_CPUMASK;
	ctx->dtmr.expires = jiffies + dtfd_defer_jiffies(delta);
	if (cpu_online(cpu))
		add_timer_on(&ctx->dtmr, cpu);
	else
		dtfd_arm_deferrable(ctx, now);
}

/*
 * Arm the context's wake-up source for @ctx->expires: the hrtimer (with
 * the timer's slack) or the alarm of a strict timer; the deferrable
 * timer_list, plus a backstop hrtimer at expiry + max_defer when the
 * deferral is bounded.  The backstop's soft expiry is the deadline itself,
 * so any hrtimer interrupt after the deadline runs it too: it rides on
 * other wake-ups, and only wakes the CPU itself at the bound.
 */
void dtfd_arm(struct dtimerfd_ctx *ctx, ktime_t now)
{
	lockdep_assert_held(&ctx->wqh.lock);

	ctx->queued = true;
	if (ctx->mode == DTFD_MODE_DEFERRABLE) {
		dtfd_arm_deferrable(ctx, now);
		if (ctx->queued && ctx->max_defer) {
			ctx->backstop = true;
			dtfd_hrtimer_start(ctx, ctx->max_defer);
		}
	} else if (dtfd_isalarm(ctx)) {
		if (!alarm_start_timer(&ctx->t.alarm, ctx->expires, false))
			dtfd_fire(ctx, now);	/* already expired, not queued */
	} else {
		dtfd_hrtimer_start(ctx, ctx->slack);
	}
}

/*
 * Move @ctx->expires to the first period boundary after @now and return
 * how many boundaries were crossed (0 when the deadline is still ahead).
 * This is hrtimer_forward() on our own deadline, including its rule that
 * an hrtimer period is at least the timer resolution; alarm_forward() has
 * no such rule, and the alarm clocks follow it.
 */
u64 dtfd_forward(struct dtimerfd_ctx *ctx, ktime_t now)
{
	ktime_t interval = ctx->tintv;
	ktime_t delta = ktime_sub(now, ctx->expires);
	u64 orun = 1;

	lockdep_assert_held(&ctx->wqh.lock);

	if (delta < 0)
		return 0;
	if (!dtfd_isalarm(ctx) && interval < hrtimer_resolution)
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
 * A deferrable timer whose CPU sleeps is not fired, but it is due: whoever
 * looks at it (read, poll, gettime, settime) delivers it, through
 * dtfd_check_due() in dtimerfd.h.  Strict timers are delivered by their
 * hrtimer on time and need no look.
 */
void dtfd_deliver_due(struct dtimerfd_ctx *ctx, ktime_t now)
{
	lockdep_assert_held(&ctx->wqh.lock);

	if (!dtfd_deferred(ctx) || now < ctx->expires)
		return;
	/* a callback already running finds !queued and leaves */
	timer_delete(&ctx->dtmr);
	dtfd_fire(ctx, now);
}

/*
 * The backstop of a bounded deferrable timer ran.  It may be stale: it
 * waited for our lock while another CPU delivered, armed the next period
 * and restarted it (hrtimer_try_to_cancel() cannot stop a running
 * callback), or CLOCK_REALTIME stepped back behind the deadline.  So the
 * clock decides, as for the deferrable callback: never early.
 */
static enum hrtimer_restart dtfd_backstop(struct dtimerfd_ctx *ctx,
					  struct hrtimer *tmr, ktime_t now)
{
	if (now < ctx->expires) {
		/* stale: the restarted backstop is queued for the deadline */
		if (hrtimer_is_queued(tmr))
			return HRTIMER_NORESTART;
		/* stepped back: the bound still counts from the deadline */
		hrtimer_set_expires_range_ns(tmr, ctx->expires,
					     ktime_to_ns(ctx->max_defer));
		return HRTIMER_RESTART;
	}
	/* the deferral is over: the wheel's turn too */
	ctx->backstop = false;
	timer_delete(&ctx->dtmr);
	/* the bound forced it, rather than another interrupt carrying it */
	if (now >= hrtimer_get_expires(tmr))
		ctx->stats.backstop++;
	dtfd_fire(ctx, now);
	return HRTIMER_NORESTART;
}

static enum hrtimer_restart dtfd_hrtimer_fn(struct hrtimer *tmr)
{
	struct dtimerfd_ctx *ctx = container_of(tmr, struct dtimerfd_ctx, t.tmr);
	enum hrtimer_restart ret = HRTIMER_NORESTART;
	unsigned long flags;

	dtfd_race_delay();
	spin_lock_irqsave(&ctx->wqh.lock, flags);
	/*
	 * A deferrable timer without its backstop armed ignores a stale
	 * one; a strict timer is delivered, as timerfd's hrtimer does.
	 */
	if (ctx->queued && ctx->mode == DTFD_MODE_DEFERRABLE) {
		if (ctx->backstop)
			ret = dtfd_backstop(ctx, tmr, hrtimer_cb_get_time(tmr));
	} else if (ctx->queued) {
		dtfd_fire(ctx, hrtimer_cb_get_time(tmr));
	}
	spin_unlock_irqrestore(&ctx->wqh.lock, flags);
	return ret;
}

static dtfd_alarm_ret dtfd_alarm_fn(struct alarm *alarm, ktime_t now)
{
	struct dtimerfd_ctx *ctx = container_of(alarm, struct dtimerfd_ctx,
						t.alarm);
	unsigned long flags;

	dtfd_race_delay();
	spin_lock_irqsave(&ctx->wqh.lock, flags);
	if (ctx->queued)
		dtfd_fire(ctx, now);
	spin_unlock_irqrestore(&ctx->wqh.lock, flags);
	return DTFD_ALARM_DONE;
}

/*
 * Ticks that hit this CPU's idle loop, jiffies of the last one on which a
 * deferrable timer was delivered.
 */
static DEFINE_PER_CPU(unsigned long, dtfd_idle_tick);

/* This CPU's idle time when a callback last asked, and the verdict then. */
struct dtfd_idle_sample {
	unsigned long tick;
	u64 at_us;
	u64 idle_us;
	bool idle;
};

static DEFINE_PER_CPU(struct dtfd_idle_sample, dtfd_idle_sample);

/*
 * Was this CPU idle for most of the time since a callback last asked?
 * Asked once a jiffy: the callbacks of one tick share the answer.
 */
static bool dtfd_cpu_mostly_idle(void)
{
	struct dtfd_idle_sample *s = this_cpu_ptr(&dtfd_idle_sample);
	unsigned long now = jiffies;
	int cpu = smp_processor_id();
	u64 at_us, idle_us, iowait_us;

	if (s->tick == now && s->at_us)
		return s->idle;
	idle_us = get_cpu_idle_time_us(cpu, &at_us);
	iowait_us = get_cpu_iowait_time_us(cpu, NULL);
	if (idle_us == (u64)-1 || iowait_us == (u64)-1)
		return false;		/* no NO_HZ: nothing to save anyway */
	idle_us += iowait_us;
	s->idle = s->at_us && at_us > s->at_us &&
		  2 * (idle_us - s->idle_us) > at_us - s->at_us;
	s->tick = now;
	s->at_us = at_us;
	s->idle_us = idle_us;
	return s->idle;
}

/*
 * Did this tick find the CPU idle?  Timer callbacks run in the softirq of
 * the interrupted task, the idle task when the CPU was idle.  On
 * PREEMPT_RT, and under softirq load, they run in a per-CPU kthread
 * (ktimers, ksoftirqd): that is idle's stand-in when it is the only
 * runnable task, or when the CPU spent most of the time since the last
 * look idle (on PREEMPT_RT the tick wakes ktimers and ksoftirqd together).
 */
static bool dtfd_tick_found_idle(void)
{
	if (is_idle_task(current))
		return true;
	if (!(current->flags & PF_KTHREAD))
		return false;
	return single_task_running() || dtfd_cpu_mostly_idle();
}

/*
 * May a deferrable expiry be delivered on this tick?  Always while the CPU
 * is busy.  A tick that finds the CPU idle is one the idle loop kept for a
 * moment before stopping it (current kernels stop the tick only on the
 * second idle iteration), and a timer may ride on it once; but delivering
 * wakes a reader, whose brief run re-enters idle and keeps the next tick
 * too: timers due on every tick would keep an otherwise idle CPU ticking
 * forever.  So no delivery on two consecutive idle ticks: the second one
 * finds nothing to do, and the idle loop stops the tick.
 */
static bool dtfd_idle_tick_ok(void)
{
	unsigned long now = jiffies, last;

	if (!dtfd_tick_found_idle())
		return true;
	last = __this_cpu_read(dtfd_idle_tick);
	if (last == now)
		return true;		/* share the tick already taken */
	if (now - last == 1)
		return false;
	__this_cpu_write(dtfd_idle_tick, now);
	return true;
}

/*
 * The wheel's word is not trusted: the deadline is on the user's clock,
 * which jiffies do not follow across suspend or clock steps, and far
 * deadlines are reached in stages.  Deliver only when the clock says so,
 * and not on an idle tick that would keep the CPU ticking.
 */
static void dtfd_deferrable_fn(struct timer_list *t)
{
	struct dtimerfd_ctx *ctx = timer_container_of(ctx, t, dtmr);
	unsigned long flags;
	ktime_t now;

	dtfd_race_delay();
	spin_lock_irqsave(&ctx->wqh.lock, flags);
	if (dtfd_deferred(ctx)) {
		now = dtfd_now(ctx);
		if (now >= ctx->expires && !dtfd_idle_tick_ok())
			mod_timer(&ctx->dtmr, jiffies);	/* the next tick, if any */
		else
			dtfd_arm_deferrable(ctx, now);
	}
	spin_unlock_irqrestore(&ctx->wqh.lock, flags);
}

/*
 * (Re)initialise the strict wake-up source for @ctx->clockid and
 * @ctx->eclock.  The source must not be armed.
 */
void dtfd_timer_bind(struct dtimerfd_ctx *ctx)
{
	if (ctx->clockid == CLOCK_REALTIME_ALARM)
		alarm_init(&ctx->t.alarm, ALARM_REALTIME, dtfd_alarm_fn);
	else if (ctx->clockid == CLOCK_BOOTTIME_ALARM)
		alarm_init(&ctx->t.alarm, ALARM_BOOTTIME, dtfd_alarm_fn);
	else
		hrtimer_setup(&ctx->t.tmr, dtfd_hrtimer_fn, ctx->eclock,
			      HRTIMER_MODE_ABS);
}

void dtfd_timer_init(struct dtimerfd_ctx *ctx)
{
	/*
	 * Pinned: the timer belongs to the CPU of the thread that last armed
	 * it, on 6.1 (which would otherwise pick a busy CPU at enqueue) as on
	 * 6.12 (which always queues deferrable timers locally).
	 */
	timer_setup(&ctx->dtmr, dtfd_deferrable_fn,
		    TIMER_DEFERRABLE | TIMER_PINNED);
	dtfd_timer_bind(ctx);
}

/*
 * Cancel every wake-up source; -1 when a callback is running and the
 * caller must drop the lock and dtfd_timer_cancel_wait().
 */
int dtfd_timer_try_cancel(struct dtimerfd_ctx *ctx)
{
	int ret;

	lockdep_assert_held(&ctx->wqh.lock);

	if (dtfd_isalarm(ctx))
		ret = alarm_try_to_cancel(&ctx->t.alarm);
	else
		ret = hrtimer_try_to_cancel(&ctx->t.tmr);
	if (ret < 0)
		return ret;
	ctx->backstop = false;
	if (!ctx->wheel_used)
		return ret;
	/* strict timers never pay for the wheel's base lock */
	ret = timer_delete_sync_try(&ctx->dtmr);
	if (ret >= 0)
		ctx->wheel_used = false;
	return ret;
}

/*
 * Wait for running callbacks without the lock.  hrtimer_cancel_wait_running()
 * is not exported on PREEMPT_RT, so cancel outright; the caller re-takes
 * the lock and re-arms whatever it wants anyway.
 */
void dtfd_timer_cancel_wait(struct dtimerfd_ctx *ctx)
{
	if (dtfd_isalarm(ctx))
		alarm_cancel(&ctx->t.alarm);
	else
		hrtimer_cancel(&ctx->t.tmr);
	timer_delete_sync(&ctx->dtmr);
}

/* Release: nothing may fire or re-arm once this returns. */
void dtfd_timer_shutdown(struct dtimerfd_ctx *ctx)
{
	timer_shutdown_sync(&ctx->dtmr);
	if (dtfd_isalarm(ctx))
		alarm_cancel(&ctx->t.alarm);
	else
		hrtimer_cancel(&ctx->t.tmr);
}
