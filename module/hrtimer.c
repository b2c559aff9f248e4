// SPDX-License-Identifier: GPL-2.0
/*
 * Wake-up source for strict timers on the non-alarm clocks: an hrtimer,
 * exactly as timerfd arms it, with the timer's slack as its range.
 */

#include <linux/hrtimer.h>
#include <linux/spinlock.h>

#include "dtfd.h"

static enum hrtimer_restart dtfd_hrtimer_fn(struct hrtimer *t)
{
	struct dtfd_ctx *ctx = container_of(t, struct dtfd_ctx, s.hrt);
	unsigned long flags;

	dtfd_race_delay();
	spin_lock_irqsave(&ctx->wqh.lock, flags);
	if (ctx->queued)
		dtfd_deliver(ctx, hrtimer_cb_get_time(t), false);
	spin_unlock_irqrestore(&ctx->wqh.lock, flags);
	return HRTIMER_NORESTART;
}

/* On the deadline's clock, which a settime may change (relative realtime). */
static void dtfd_hrtimer_setup(struct dtfd_ctx *ctx)
{
	hrtimer_setup(&ctx->s.hrt, dtfd_hrtimer_fn, ctx->eclock,
		      HRTIMER_MODE_ABS);
}

static void dtfd_hrtimer_arm(struct dtfd_ctx *ctx, ktime_t now)
{
	hrtimer_start_range_ns(&ctx->s.hrt, ctx->expires,
			       ktime_to_ns(ctx->slack), HRTIMER_MODE_ABS);
}

static int dtfd_hrtimer_try_cancel(struct dtfd_ctx *ctx, bool restart)
{
	return hrtimer_try_to_cancel(&ctx->s.hrt);
}

/*
 * hrtimer_cancel_wait_running() is not exported on PREEMPT_RT, so cancel
 * outright; the caller re-takes the lock and re-arms what it wants anyway.
 */
static void dtfd_hrtimer_cancel(struct dtfd_ctx *ctx)
{
	hrtimer_cancel(&ctx->s.hrt);
}

const struct dtfd_source dtfd_hrtimer_source = {
	.mode		= "strict",
	.clocks		= DTFD_CLOCKS & ~DTFD_ALARM_CLOCKS,
	.flags		= 0,
	.setup		= dtfd_hrtimer_setup,
	.arm		= dtfd_hrtimer_arm,
	.try_cancel	= dtfd_hrtimer_try_cancel,
	.cancel_sync	= dtfd_hrtimer_cancel,
	.shutdown	= dtfd_hrtimer_cancel,
	.hres_period	= true,
};
