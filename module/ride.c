// SPDX-License-Identifier: GPL-2.0
/*
 * Wake-up source for DTFD_TIMER_DEFERRABLE: deferral to whichever CPU is
 * awake.
 *
 * "Deferrable" means: never wake an idle system for me, but when any CPU
 * is awake, deliver me on time.  The kernel's TIMER_DEFERRABLE timer_list
 * keeps a narrower promise: it rides the wake-ups of the one CPU it is
 * queued on, so a timer armed on a CPU that then idles waits for that
 * CPU, however busy the others are (defer.c serves that mode, for timers
 * armed with DTFD_TIMER_PERCPU).
 *
 * Here the deadlines sit in one ordered queue per clock, and every online
 * CPU carries one pinned deferrable "rider" timer_list aimed at the jiffy
 * of the earliest deadline.  Whichever CPU ticks first after it runs its
 * rider, delivers every timer that is due and aims itself at the next
 * deadline; the other riders, aimed no later, find less or nothing to do
 * and do the same.  A rider is only ever moved earlier from outside its
 * CPU, when a timer becomes the earliest of its queue, and queueing a
 * deferrable timer on another CPU's base sends no IPI: neither arming nor
 * delivering wakes an idle CPU.  Arming costs O(log n) under one lock,
 * plus one timer_list per online CPU when the earliest deadline moves
 * earlier.
 *
 * A tick comes once a jiffy, so riding alone delivers up to a jiffy late.
 * When a rider runs on a CPU found busy (idle.c) and the earliest
 * deadline falls before the next tick, a pinned soft hrtimer on that CPU,
 * the "finisher", carries it at the deadline itself: on time whenever the
 * system is awake.  A finisher is never started from an idle tick, nor on
 * arming (the arming thread is about to sleep): the most it can cost is
 * one interrupt, less than a jiffy after the CPU was last seen busy, when
 * the CPU idles meanwhile; the tick the idle loop keeps for a moment
 * before stopping it would have come then too.
 *
 * Lock order: a timer's lock, then dtfd_ride_lock, then timer bases.  So a
 * rider takes due timers out of the queue under dtfd_ride_lock, counting
 * itself in each one's @riding, and delivers them under their own lock
 * after dropping it.  A timer being ridden counts as one whose callback
 * runs: settime waits for it (try_cancel, cancel_sync), and so does close.
 */

#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/isolation.h>
#include <linux/spinlock.h>
#include <linux/timer.h>
#include <linux/timerqueue.h>
#include <linux/wait_bit.h>

#include "dtfd.h"

/* The clocks a deadline can be measured on, as queue indices. */
enum {
	DTFD_RIDE_MONOTONIC,
	DTFD_RIDE_BOOTTIME,
	DTFD_RIDE_REALTIME,
	DTFD_RIDE_CLOCKS,
};

static struct timerqueue_head dtfd_ride_queue[DTFD_RIDE_CLOCKS];
/* guards the queues, the riders' programming and dtfd_ride_cpus */
static DEFINE_SPINLOCK(dtfd_ride_lock);
static DEFINE_PER_CPU(struct timer_list, dtfd_rider);
static DEFINE_PER_CPU(struct hrtimer, dtfd_finisher);
/* the online CPUs whose rider may be armed */
static struct cpumask dtfd_ride_cpus;
static enum cpuhp_state dtfd_ride_hp;

/* Due timers a rider takes out of the queue at a time. */
#define DTFD_RIDE_BATCH		16

static unsigned int dtfd_ride_index(int eclock)
{
	switch (eclock) {
	case CLOCK_REALTIME:
		return DTFD_RIDE_REALTIME;
	case CLOCK_BOOTTIME:
		return DTFD_RIDE_BOOTTIME;
	default:
		return DTFD_RIDE_MONOTONIC;
	}
}

static ktime_t dtfd_ride_now(unsigned int i)
{
	switch (i) {
	case DTFD_RIDE_REALTIME:
		return ktime_get_real();
	case DTFD_RIDE_BOOTTIME:
		return ktime_get_boottime();
	default:
		return ktime_get();
	}
}

static struct timerqueue_head *dtfd_ride_queue_of(struct dtfd_ctx *ctx)
{
	return &dtfd_ride_queue[dtfd_ride_index(ctx->eclock)];
}

/* Nanoseconds to the earliest deadline of every queue; false: none. */
static bool dtfd_ride_next(s64 *delta)
{
	struct timerqueue_node *next;
	bool any = false;
	unsigned int i;
	s64 d;

	lockdep_assert_held(&dtfd_ride_lock);

	for (i = 0; i < DTFD_RIDE_CLOCKS; i++) {
		next = timerqueue_getnext(&dtfd_ride_queue[i]);
		if (!next)
			continue;
		d = ktime_sub(next->expires, dtfd_ride_now(i));
		if (!any || d < *delta)
			*delta = d;
		any = true;
	}
	return any;
}

static unsigned long dtfd_ride_jiffy(s64 delta)
{
	return jiffies + (delta > 0 ? dtfd_defer_jiffies(delta) : 0);
}

/* The jiffy the riders must run at, for the earliest deadline; false: none. */
static bool dtfd_ride_target(unsigned long *when)
{
	s64 delta;

	if (!dtfd_ride_next(&delta))
		return false;
	*when = dtfd_ride_jiffy(delta);
	return true;
}

/* Have @cpu's rider run no later than @when. */
static void dtfd_rider_aim(unsigned int cpu, unsigned long when)
{
	struct timer_list *rider = per_cpu_ptr(&dtfd_rider, cpu);

	lockdep_assert_held(&dtfd_ride_lock);

	if (timer_pending(rider) && time_before_eq(rider->expires, when))
		return;
	/*
	 * add_timer_on() rather than mod_timer(), which would move a pinned
	 * timer to this CPU.  A callback running meanwhile re-aims itself
	 * after us, under the lock.
	 */
	timer_delete(rider);
	rider->expires = when;
	add_timer_on(rider, cpu);
}

/* The earliest deadline may have moved earlier: move every rider with it. */
static void dtfd_ride_aim_all(void)
{
	unsigned long when;
	unsigned int cpu;

	if (!dtfd_ride_target(&when))
		return;
	for_each_cpu(cpu, &dtfd_ride_cpus)
		dtfd_rider_aim(cpu, when);
}

static void dtfd_ride_unqueue_locked(struct dtfd_ctx *ctx)
{
	struct timerqueue_node *node = &ctx->s.ride.node;

	lockdep_assert_held(&dtfd_ride_lock);

	if (timerqueue_node_queued(node))
		timerqueue_del(dtfd_ride_queue_of(ctx), node);
}

static void dtfd_ride_unqueue(struct dtfd_ctx *ctx)
{
	unsigned long flags;

	spin_lock_irqsave(&dtfd_ride_lock, flags);
	dtfd_ride_unqueue_locked(ctx);
	spin_unlock_irqrestore(&dtfd_ride_lock, flags);
}

/* Delivered within the bound: a running backstop then finds !queued. */
static void dtfd_ride_fire(struct dtfd_ctx *ctx, ktime_t now)
{
	struct dtfd_ride *r = &ctx->s.ride;

	if (r->backstop_armed) {
		hrtimer_try_to_cancel(&r->backstop);
		r->backstop_armed = false;
	}
	dtfd_deliver(ctx, now, false);
}

/*
 * Take up to DTFD_RIDE_BATCH due timers out of the queues into @batch,
 * each marked as ridden.
 */
static unsigned int dtfd_ride_take_due(struct dtfd_ctx **batch)
{
	struct timerqueue_node *node;
	unsigned int i, n = 0;
	struct dtfd_ctx *ctx;
	ktime_t now;

	lockdep_assert_held(&dtfd_ride_lock);

	for (i = 0; i < DTFD_RIDE_CLOCKS; i++) {
		now = dtfd_ride_now(i);
		while (n < DTFD_RIDE_BATCH &&
		       (node = timerqueue_getnext(&dtfd_ride_queue[i])) &&
		       node->expires <= now) {
			timerqueue_del(&dtfd_ride_queue[i], node);
			ctx = container_of(node, struct dtfd_ctx, s.ride.node);
			ctx->s.ride.riding++;
			batch[n++] = ctx;
		}
	}
	return n;
}

/*
 * Deliver a timer taken out of the queue, under its own lock, unless it
 * changed meanwhile: disarmed, delivered by an access, or re-armed (then
 * it is queued again).  CLOCK_REALTIME may have stepped back behind the
 * deadline: then it goes back in the queue, never early.
 */
static void dtfd_ride_deliver_taken(struct dtfd_ctx *ctx)
{
	struct timerqueue_node *node = &ctx->s.ride.node;
	unsigned long flags;
	bool taken = false;
	ktime_t now;

	dtfd_race_delay();
	spin_lock_irqsave(&ctx->wqh.lock, flags);
	if (ctx->queued) {
		now = dtfd_now(ctx);
		spin_lock(&dtfd_ride_lock);
		if (!timerqueue_node_queued(node)) {
			taken = now >= ctx->expires;
			if (!taken && timerqueue_add(dtfd_ride_queue_of(ctx),
						     node))
				dtfd_ride_aim_all();
		}
		spin_unlock(&dtfd_ride_lock);
		if (taken)
			dtfd_ride_fire(ctx, now);
	}
	spin_unlock_irqrestore(&ctx->wqh.lock, flags);
}

static bool dtfd_ride_any_due(void)
{
	struct timerqueue_node *next;
	unsigned int i;

	for (i = 0; i < DTFD_RIDE_CLOCKS; i++) {
		next = timerqueue_getnext(&dtfd_ride_queue[i]);
		if (next && next->expires <= dtfd_ride_now(i))
			return true;
	}
	return false;
}

/*
 * Deliver every due timer, then aim this CPU's rider at the next deadline,
 * and its finisher when that deadline comes before the next tick of a CPU
 * found busy.  @tick: run by the rider, on a tick that may have found the
 * CPU idle; an idle tick may carry deliveries once, not twice in a row
 * (idle.c), and then the next tick, if any, tries again.
 */
static void dtfd_ride_run(bool tick)
{
	struct hrtimer *finisher = this_cpu_ptr(&dtfd_finisher);
	struct dtfd_ctx *batch[DTFD_RIDE_BATCH];
	unsigned int i, n, cpu = smp_processor_id();
	unsigned long flags;
	bool wait = false;
	s64 delta;

	spin_lock_irqsave(&dtfd_ride_lock, flags);
	if (tick && dtfd_ride_any_due() && !dtfd_idle_tick_ok())
		wait = true;
	while (!wait && (n = dtfd_ride_take_due(batch))) {
		spin_unlock_irqrestore(&dtfd_ride_lock, flags);
		for (i = 0; i < n; i++)
			dtfd_ride_deliver_taken(batch[i]);
		spin_lock_irqsave(&dtfd_ride_lock, flags);
		/* the last thing done with each: it may be freed right after */
		for (i = 0; i < n; i++)
			if (!--batch[i]->s.ride.riding)
				wake_up_var(&batch[i]->s.ride.riding);
	}
	if (cpumask_test_cpu(cpu, &dtfd_ride_cpus) && dtfd_ride_next(&delta)) {
		/* pinned, and we run on its CPU: it stays here */
		mod_timer(this_cpu_ptr(&dtfd_rider),
			  wait ? jiffies : dtfd_ride_jiffy(delta));
		if (!wait && delta > 0 && delta < TICK_NSEC && dtfd_cpu_busy())
			hrtimer_start(finisher, ns_to_ktime(delta),
				      HRTIMER_MODE_REL_PINNED_SOFT);
	}
	spin_unlock_irqrestore(&dtfd_ride_lock, flags);
}

/* This CPU ticked at or after the jiffy the riders were aimed at. */
static void dtfd_rider_fn(struct timer_list *rider)
{
	dtfd_race_delay();
	dtfd_ride_run(true);
}

/* The earliest deadline, reached on a CPU found busy a tick ago. */
static enum hrtimer_restart dtfd_finisher_fn(struct hrtimer *finisher)
{
	dtfd_race_delay();
	dtfd_ride_run(false);
	return HRTIMER_NORESTART;
}

static enum hrtimer_restart dtfd_ride_backstop_fn(struct hrtimer *t)
{
	struct dtfd_ctx *ctx = container_of(t, struct dtfd_ctx,
					    s.ride.backstop);
	struct dtfd_ride *r = &ctx->s.ride;
	enum hrtimer_restart ret = HRTIMER_NORESTART;
	unsigned long flags;
	ktime_t now;

	dtfd_race_delay();
	spin_lock_irqsave(&ctx->wqh.lock, flags);
	if (!ctx->queued || !r->backstop_armed)
		goto out;
	now = hrtimer_cb_get_time(t);
	if (now < ctx->expires) {
		/*
		 * Stale (it waited for our lock while another CPU delivered
		 * and re-armed it) or CLOCK_REALTIME stepped back: never early.
		 */
		if (hrtimer_is_queued(t))
			goto out;
		hrtimer_set_expires_range_ns(t, ctx->expires,
					     ktime_to_ns(ctx->max_defer));
		ret = HRTIMER_RESTART;
		goto out;
	}
	r->backstop_armed = false;
	dtfd_ride_unqueue(ctx);
	/* the bound forced it, rather than another interrupt carrying it */
	dtfd_deliver(ctx, now, now >= hrtimer_get_expires(t));
out:
	spin_unlock_irqrestore(&ctx->wqh.lock, flags);
	return ret;
}

static void dtfd_ride_setup(struct dtfd_ctx *ctx)
{
	struct dtfd_ride *r = &ctx->s.ride;

	hrtimer_setup(&r->backstop, dtfd_ride_backstop_fn, ctx->eclock,
		      HRTIMER_MODE_ABS);
	timerqueue_init(&r->node);
	r->riding = 0;
	r->backstop_armed = false;
}

/*
 * Queue the deadline, aiming the riders when it is the earliest of its
 * clock, plus the backstop at expiry + max_defer when the deferral is
 * bounded (its soft expiry is the deadline, so any hrtimer interrupt
 * after the deadline runs it too).
 */
static void dtfd_ride_arm(struct dtfd_ctx *ctx, ktime_t now)
{
	struct dtfd_ride *r = &ctx->s.ride;
	unsigned long flags;

	if (ctx->expires <= now) {
		dtfd_ride_fire(ctx, now);
		return;
	}
	spin_lock_irqsave(&dtfd_ride_lock, flags);
	r->node.expires = ctx->expires;
	if (timerqueue_add(dtfd_ride_queue_of(ctx), &r->node))
		dtfd_ride_aim_all();
	spin_unlock_irqrestore(&dtfd_ride_lock, flags);

	if (ctx->max_defer) {
		r->backstop_armed = true;
		hrtimer_start_range_ns(&r->backstop, ctx->expires,
				       ktime_to_ns(ctx->max_defer),
				       HRTIMER_MODE_ABS);
	}
}

/* Due, and every CPU that could have carried it slept: whoever looks delivers. */
static void dtfd_ride_collect(struct dtfd_ctx *ctx, ktime_t now)
{
	dtfd_ride_unqueue(ctx);
	dtfd_ride_fire(ctx, now);
}

/*
 * The deadline's clock jumped against jiffies (a realtime step, resume):
 * deliver what became due, and aim the riders at the queues' earliest
 * deadline measured on the new clock.  Every watcher the walk visits
 * re-aims, whether or not it is (or was) the earliest: the riders were
 * aimed in jiffies for distances the jump shortened, and the walk's order
 * says nothing about the deadlines'.  Aiming only ever moves a rider
 * earlier, so the later visits cost a look at each rider.
 */
static void dtfd_ride_clock_jumped(struct dtfd_ctx *ctx)
{
	unsigned long flags;
	ktime_t now;

	if (!ctx->queued)
		return;
	now = dtfd_now(ctx);
	if (now >= ctx->expires)
		dtfd_ride_collect(ctx, now);
	spin_lock_irqsave(&dtfd_ride_lock, flags);
	dtfd_ride_aim_all();
	spin_unlock_irqrestore(&dtfd_ride_lock, flags);
}

/* Whether a rider holds the timer between the queue and its lock. */
static bool dtfd_ride_ridden(struct dtfd_ctx *ctx)
{
	unsigned long flags;
	bool ridden;

	spin_lock_irqsave(&dtfd_ride_lock, flags);
	ridden = ctx->s.ride.riding;
	spin_unlock_irqrestore(&dtfd_ride_lock, flags);
	return ridden;
}

/* A ridden timer counts as one whose callback runs: -1. */
static int dtfd_ride_try_cancel(struct dtfd_ctx *ctx)
{
	struct dtfd_ride *r = &ctx->s.ride;

	if (hrtimer_try_to_cancel(&r->backstop) < 0)
		return -1;
	r->backstop_armed = false;
	dtfd_ride_unqueue(ctx);
	return dtfd_ride_ridden(ctx) ? -1 : 0;
}

static void dtfd_ride_cancel(struct dtfd_ctx *ctx)
{
	wait_var_event(&ctx->s.ride.riding, !dtfd_ride_ridden(ctx));
	hrtimer_cancel(&ctx->s.ride.backstop);
}

/*
 * Out of the queue, and no rider left holding it.  Not queued any more
 * first: a rider holding it would otherwise put it back in the queue
 * when CLOCK_REALTIME stepped back behind its deadline, and the timer
 * would be freed in the queue (a use-after-free the stress test found).
 */
static void dtfd_ride_shutdown(struct dtfd_ctx *ctx)
{
	spin_lock_irq(&ctx->wqh.lock);
	ctx->queued = false;
	spin_unlock_irq(&ctx->wqh.lock);
	dtfd_ride_unqueue(ctx);
	dtfd_ride_cancel(ctx);
}

/*
 * A CPU isolated from timers (nohz_full=, isolcpus=nohz) carries no
 * rider: a rider run there on a leftover tick would find the CPU busy in
 * user space and start a finisher on it, interrupting exactly the CPU
 * that asked to be left alone.  The housekeeping CPUs carry the riders.
 */
static int dtfd_ride_online(unsigned int cpu)
{
	unsigned long flags, when;

	if (!housekeeping_cpu(cpu, HK_TYPE_TIMER))
		return 0;
	spin_lock_irqsave(&dtfd_ride_lock, flags);
	cpumask_set_cpu(cpu, &dtfd_ride_cpus);
	if (dtfd_ride_target(&when))
		dtfd_rider_aim(cpu, when);
	spin_unlock_irqrestore(&dtfd_ride_lock, flags);
	return 0;
}

/*
 * Before the CPU goes: nothing aims its rider any more, and the rider is
 * gone rather than migrated to a CPU that has its own.
 */
static int dtfd_ride_offline(unsigned int cpu)
{
	unsigned long flags;

	spin_lock_irqsave(&dtfd_ride_lock, flags);
	cpumask_clear_cpu(cpu, &dtfd_ride_cpus);
	spin_unlock_irqrestore(&dtfd_ride_lock, flags);
	timer_delete_sync(per_cpu_ptr(&dtfd_rider, cpu));
	hrtimer_cancel(per_cpu_ptr(&dtfd_finisher, cpu));
	return 0;
}

static int dtfd_ride_init(void)
{
	unsigned int i, cpu;
	int ret;

	for (i = 0; i < DTFD_RIDE_CLOCKS; i++)
		timerqueue_init_head(&dtfd_ride_queue[i]);
	for_each_possible_cpu(cpu) {
		timer_setup(per_cpu_ptr(&dtfd_rider, cpu), dtfd_rider_fn,
			    TIMER_DEFERRABLE | TIMER_PINNED);
		hrtimer_setup(per_cpu_ptr(&dtfd_finisher, cpu),
			      dtfd_finisher_fn, CLOCK_MONOTONIC,
			      HRTIMER_MODE_REL_PINNED_SOFT);
	}
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "dtimerfd:rider",
				dtfd_ride_online, dtfd_ride_offline);
	if (ret < 0)
		return ret;
	dtfd_ride_hp = ret;
	return 0;
}

static void dtfd_ride_exit(void)
{
	unsigned int cpu;

	cpuhp_remove_state(dtfd_ride_hp);
	for_each_possible_cpu(cpu) {
		timer_shutdown_sync(per_cpu_ptr(&dtfd_rider, cpu));
		hrtimer_cancel(per_cpu_ptr(&dtfd_finisher, cpu));
	}
}

const struct dtfd_source dtfd_ride_source = {
	.mode		= "deferrable",
	.clocks		= DTFD_CLOCKS & ~DTFD_ALARM_CLOCKS,
	.flags		= DTFD_TIMER_DEFERRABLE,
	.init		= dtfd_ride_init,
	.exit		= dtfd_ride_exit,
	.setup		= dtfd_ride_setup,
	.arm		= dtfd_ride_arm,
	.collect	= dtfd_ride_collect,
	.clock_jumped	= dtfd_ride_clock_jumped,
	.try_cancel	= dtfd_ride_try_cancel,
	.cancel_sync	= dtfd_ride_cancel,
	.shutdown	= dtfd_ride_shutdown,
	.hres_period	= true,
};
