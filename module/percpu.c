// SPDX-License-Identifier: GPL-2.0
/*
 * Wake-up source for DTFD_TIMER_DEFERRABLE | DTFD_TIMER_PERCPU: the
 * kernel's own TIMER_DEFERRABLE timer_list, queued on the CPU that armed
 * the timer, which runs it on its tick while busy and never wakes for it
 * when idle; composed with a backstop hrtimer when the timer's max_defer
 * bounds the deferral.  It rides that one CPU's wake-ups only (ride.c
 * rides any CPU's).
 *
 * The wheel's word is not trusted: the deadline is on the user's clock,
 * which jiffies do not follow across suspend or clock steps, and far
 * deadlines are reached in stages.  The callback delivers only when the
 * clock says so, so a busy CPU delivers on the first tick at or after the
 * deadline, never before.  A timer whose CPU sleeps is due without having
 * fired: every access of it collects it (dtfd_percpu_collect()).
 */

#include <linux/cpumask.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/minmax.h>
#include <linux/spinlock.h>
#include <linux/timer.h>

#include "dtfd.h"

/* Delivered within the bound: a running backstop then finds !queued. */
static void dtfd_percpu_fire(struct dtfd_ctx *ctx, ktime_t now)
{
	struct dtfd_percpu *d = &ctx->s.percpu;

	if (d->backstop_armed) {
		hrtimer_try_to_cancel(&d->backstop);
		d->backstop_armed = false;
	}
	dtfd_deliver(ctx, now, false);
}

/* Queue the timer_list for ctx->expires, or deliver when it has passed. */
static void dtfd_percpu_wheel(struct dtfd_ctx *ctx, ktime_t now)
{
	s64 delta = ktime_sub(ctx->expires, now);

	if (delta <= 0) {
		dtfd_percpu_fire(ctx, now);
		return;
	}
	/*
	 * Pinned: mod_timer() queues it on this CPU, unless its callback is
	 * running elsewhere, where it then stays (timer_delete_sync() must
	 * find it there).
	 */
	mod_timer(&ctx->s.percpu.wheel, jiffies + dtfd_wheel_jiffies(delta));
}

static void dtfd_percpu_wheel_fn(struct timer_list *t)
{
	struct dtfd_ctx *ctx = timer_container_of(ctx, t, s.percpu.wheel);
	unsigned long flags;
	ktime_t now;

	dtfd_race_delay();
	spin_lock_irqsave(&ctx->wqh.lock, flags);
	if (ctx->queued) {
		now = dtfd_now(ctx);
		if (now >= ctx->expires &&
		    !dtfd_idle_tick_ok(ktime_sub(now, ctx->expires)))
			mod_timer(t, jiffies);	/* the next tick, if any */
		else
			dtfd_percpu_wheel(ctx, now);
	}
	spin_unlock_irqrestore(&ctx->wqh.lock, flags);
}

/*
 * The backstop ran.  It may be stale: it waited for our lock while another
 * CPU delivered, armed the next period and restarted it
 * (hrtimer_try_to_cancel() cannot stop a running callback), or
 * CLOCK_REALTIME stepped back behind the deadline.  So the clock decides,
 * as for the wheel: never early.
 */
static enum hrtimer_restart dtfd_percpu_backstop(struct dtfd_ctx *ctx,
						 struct hrtimer *t, ktime_t now)
{
	struct dtfd_percpu *d = &ctx->s.percpu;

	if (now < ctx->expires) {
		/* stale: the restarted backstop is queued for the deadline */
		if (hrtimer_is_queued(t))
			return HRTIMER_NORESTART;
		/* stepped back: the bound still counts from the deadline */
		hrtimer_set_expires_range_ns(t, ctx->expires,
					     ktime_to_ns(ctx->max_defer));
		return HRTIMER_RESTART;
	}
	/* the deferral is over: the wheel's turn too */
	d->backstop_armed = false;
	timer_delete(&d->wheel);
	/* the bound forced it, rather than another interrupt carrying it */
	dtfd_deliver(ctx, now, now >= hrtimer_get_expires(t));
	return HRTIMER_NORESTART;
}

static enum hrtimer_restart dtfd_percpu_backstop_fn(struct hrtimer *t)
{
	struct dtfd_ctx *ctx = container_of(t, struct dtfd_ctx,
					    s.percpu.backstop);
	enum hrtimer_restart ret = HRTIMER_NORESTART;
	unsigned long flags;

	dtfd_race_delay();
	spin_lock_irqsave(&ctx->wqh.lock, flags);
	if (ctx->queued && ctx->s.percpu.backstop_armed)
		ret = dtfd_percpu_backstop(ctx, t, hrtimer_cb_get_time(t));
	spin_unlock_irqrestore(&ctx->wqh.lock, flags);
	return ret;
}

static void dtfd_percpu_setup(struct dtfd_ctx *ctx)
{
	struct dtfd_percpu *d = &ctx->s.percpu;

	/*
	 * Pinned: the timer belongs to the CPU of the thread that last armed
	 * it, on 6.1 (which would otherwise pick a busy CPU at enqueue) as on
	 * 6.12 (which always queues deferrable timers locally).
	 */
	timer_setup(&d->wheel, dtfd_percpu_wheel_fn,
		    TIMER_DEFERRABLE | TIMER_PINNED);
	hrtimer_setup(&d->backstop, dtfd_percpu_backstop_fn, ctx->eclock,
		      HRTIMER_MODE_ABS);
	d->backstop_armed = false;
}

/*
 * The timer_list, plus the backstop at expiry + max_defer when the
 * deferral is bounded.  The backstop's soft expiry is the deadline
 * itself, so any hrtimer interrupt after the deadline runs it too: it
 * rides on other wake-ups, and only wakes the CPU itself at the bound.
 */
static void dtfd_percpu_arm(struct dtfd_ctx *ctx, ktime_t now)
{
	struct dtfd_percpu *d = &ctx->s.percpu;

	dtfd_percpu_wheel(ctx, now);
	if (ctx->queued && ctx->max_defer) {
		d->backstop_armed = true;
		hrtimer_start_range_ns(&d->backstop, ctx->expires,
				       ktime_to_ns(ctx->max_defer),
				       HRTIMER_MODE_ABS);
	}
}

/* Due while the CPU sleeps: whoever looks delivers. */
static void dtfd_percpu_collect(struct dtfd_ctx *ctx, ktime_t now)
{
	if (now < ctx->expires)
		return;
	/* a callback already running finds !queued and leaves */
	timer_delete(&ctx->s.percpu.wheel);
	dtfd_percpu_fire(ctx, now);
}

/*
 * The deadline's clock jumped (a realtime step, or resume for boottime):
 * deliver now if it became due, else move the wake-up to match, on the
 * CPU the timer is queued on.  Called from the clock-change work, which
 * runs on whatever CPU it likes.
 */
static void dtfd_percpu_clock_jumped(struct dtfd_ctx *ctx)
{
	struct timer_list *wheel = &ctx->s.percpu.wheel;
	unsigned int cpu;
	ktime_t now;
	s64 delta;

	if (!ctx->queued)
		return;
	/*
	 * A running callback waits for our lock and then reads the new clock
	 * itself: leave it alone.  Re-queueing it on another CPU's base with
	 * add_timer_on() would hide it from timer_shutdown_sync() in
	 * release, which looks for a running callback on the timer's current
	 * base only, and the context would be freed under it.
	 */
	if (timer_delete_sync_try(wheel) < 0)
		return;
	now = dtfd_now(ctx);
	delta = ktime_sub(ctx->expires, now);
	if (delta <= 0) {
		dtfd_percpu_fire(ctx, now);
		return;
	}
	/*
	 * Back on the base it was on: the timer's own record, which CPU
	 * hotplug keeps up to date when it migrates timers; an offline CPU
	 * has no base to return to, so queue locally then.  Should that CPU
	 * go down right after the check, the timer waits for it to return,
	 * or for the next read or poll.
	 */
	cpu = wheel->flags & TIMER_CPUMASK;
	wheel->expires = jiffies + dtfd_wheel_jiffies(delta);
	if (cpu_online(cpu))
		add_timer_on(wheel, cpu);
	else
		dtfd_percpu_wheel(ctx, now);
}

static int dtfd_percpu_try_cancel(struct dtfd_ctx *ctx, bool restart)
{
	struct dtfd_percpu *d = &ctx->s.percpu;

	if (hrtimer_try_to_cancel(&d->backstop) < 0)
		return -1;
	d->backstop_armed = false;
	return timer_delete_sync_try(&d->wheel);
}

static void dtfd_percpu_cancel(struct dtfd_ctx *ctx)
{
	hrtimer_cancel(&ctx->s.percpu.backstop);
	timer_delete_sync(&ctx->s.percpu.wheel);
}

static void dtfd_percpu_shutdown(struct dtfd_ctx *ctx)
{
	timer_shutdown_sync(&ctx->s.percpu.wheel);
	hrtimer_cancel(&ctx->s.percpu.backstop);
}

const struct dtfd_source dtfd_percpu_source = {
	.mode		= "deferrable-percpu",
	.clocks		= DTFD_CLOCKS & ~DTFD_ALARM_CLOCKS,
	.flags		= DTFD_TIMER_DEFERRABLE | DTFD_TIMER_PERCPU,
	.setup		= dtfd_percpu_setup,
	.arm		= dtfd_percpu_arm,
	.collect	= dtfd_percpu_collect,
	.clock_jumped	= dtfd_percpu_clock_jumped,
	.try_cancel	= dtfd_percpu_try_cancel,
	.cancel_sync	= dtfd_percpu_cancel,
	.shutdown	= dtfd_percpu_shutdown,
	.hres_period	= true,
};
