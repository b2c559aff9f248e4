// SPDX-License-Identifier: GPL-2.0
/*
 * Wake-up source for CLOCK_REALTIME_ALARM and CLOCK_BOOTTIME_ALARM: an
 * alarm, which also wakes the machine from suspend, as timerfd's does.
 * Alarms are always strict.
 */

#include <linux/alarmtimer.h>
#include <linux/spinlock.h>

#include "dtfd.h"

static dtfd_alarm_ret dtfd_alarm_fn(struct alarm *alarm, ktime_t now)
{
	struct dtfd_ctx *ctx = container_of(alarm, struct dtfd_ctx, s.alarm);
	unsigned long flags;

	dtfd_race_delay();
	spin_lock_irqsave(&ctx->wqh.lock, flags);
	if (ctx->queued)
		dtfd_deliver(ctx, now, false);
	spin_unlock_irqrestore(&ctx->wqh.lock, flags);
	return DTFD_ALARM_DONE;
}

static void dtfd_alarm_setup(struct dtfd_ctx *ctx)
{
	alarm_init(&ctx->s.alarm, ctx->clockid == CLOCK_REALTIME_ALARM ?
		   ALARM_REALTIME : ALARM_BOOTTIME, dtfd_alarm_fn);
}

/* The slack does not apply: an alarm is exact. */
static void dtfd_alarm_arm(struct dtfd_ctx *ctx, ktime_t now)
{
	if (!alarm_start_timer(&ctx->s.alarm, ctx->expires, false))
		dtfd_deliver(ctx, now, false);	/* already expired, not queued */
}

static int dtfd_alarm_try_cancel(struct dtfd_ctx *ctx, bool restart)
{
	return alarm_try_to_cancel(&ctx->s.alarm);
}

static void dtfd_alarm_cancel(struct dtfd_ctx *ctx)
{
	alarm_cancel(&ctx->s.alarm);
}

const struct dtfd_source dtfd_alarm_source = {
	.mode		= "strict",
	.clocks		= DTFD_ALARM_CLOCKS,
	/* it wakes the system: CAP_WAKE_ALARM to arm, as timerfd asks */
	.wake_alarm	= true,
	.flags		= 0,
	.setup		= dtfd_alarm_setup,
	.arm		= dtfd_alarm_arm,
	.try_cancel	= dtfd_alarm_try_cancel,
	.cancel_sync	= dtfd_alarm_cancel,
	.shutdown	= dtfd_alarm_cancel,
	.hres_period	= false,
};
