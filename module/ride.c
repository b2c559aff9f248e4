// SPDX-License-Identifier: GPL-2.0
/*
 * Wake-up source for DTFD_TIMER_DEFERRABLE: deferral to whichever CPU is
 * awake.
 *
 * "Deferrable" means: never wake an idle system for me, but when any CPU
 * is awake, deliver me on time.  The kernel's TIMER_DEFERRABLE timer_list
 * keeps a narrower promise: it rides the wake-ups of the one CPU it is
 * queued on (percpu.c serves that mode, DTFD_TIMER_PERCPU).
 *
 * Per-CPU queues, as the kernel's own timer bases.  A timer is queued on
 * its home CPU, the one that armed it (for a periodic timer, the one that
 * read it: its reader's), under that CPU's lock, keyed by the monotonic
 * time it falls due.  Arming and cancelling take that one lock and touch
 * no other CPU: O(log n) in the home queue, plus O(log_8 CPUs) lock-free
 * updates of a tree of earliest keys when the timer becomes its queue's
 * earliest (the shape of the timer-migration hierarchy: groups of eight).
 *
 * Who delivers:
 *  - The home CPU's own rider, a pinned deferrable timer_list aimed at its
 *    queue's earliest: on the home CPU's ticks, busy or idle (idle: a
 *    tick that runs a task anyway, or, once lone_tick_wait_ms late, one
 *    that runs nothing else but not right after another: lazy.c).  The
 *    reader sleeps there, so this wakes nobody.
 *  - Any busy CPU.  A CPU found busy polls the tree's root on each of its
 *    ticks (its rider re-arms for the next jiffy while any deferrable timer
 *    is queued anywhere, or was within the last second): one load of a
 *    shared word per tick.  When the root is due it walks down to the due
 *    queues, at most eight nodes a level, and delivers from them; when it
 *    falls due before the next tick, one busy CPU carries it on a pinned
 *    soft hrtimer, the "finisher", at the deadline itself: on time
 *    whenever the system is awake.  Delivering a remote timer wakes its
 *    reader's CPU; that is the price of "on time", paid only while some
 *    CPU is busy anyway.
 *  - Never a CPU found idle, for another CPU's timer (unless
 *    ride_idle_ticks): a leftover tick of an idle CPU delivering to a
 *    reader asleep on another idle CPU would pull that one out of idle
 *    with an IPI.  Left to the reader's own CPU, the delivery costs no
 *    extra idle exit.
 *  - The bound.  A bounded timer's window [deadline, deadline + bound]
 *    sits in a second queue of its home, by window end; one backstop
 *    hrtimer per queue is programmed for the earliest end (soft expiry
 *    at that timer's deadline, so any interrupt of its CPU inside the
 *    window runs it), and when it runs it delivers every timer, of every
 *    queue, whose deadline has passed: one wake-up serves all the windows
 *    it falls in, the greedy "earliest window end" stabbing that is
 *    optimal for fixed windows.
 *
 * Riders never wake an idle CPU (deferrable); nothing is queued on
 * another CPU's base but a rider kicked for the next jiffy when a timer is
 * armed while none is queued anywhere (the seven others of the arming
 * CPU's group of eight, whose riders may sleep for a second then:
 * queueing a deferrable timer sends no IPI).  A CPU
 * isolated from timers (nohz_full=) has no rider at all.
 *
 * Lock order: a timer's lock, then one queue's lock, then timer bases.
 * A deliverer takes due timers out of a queue under its lock, counting
 * itself in each one's @riding, and delivers them under their own lock
 * after dropping it.  A timer being ridden counts as one whose callback
 * runs: a settime that disarms it or moves it to another source or clock
 * waits for it (try_cancel, cancel_sync), and so does close.  A settime
 * that re-arms it (restart) does not: the deliverer looks at the timer as
 * it is when it gets its lock, and finds it changed.
 */

#include <linux/atomic.h>
#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/hrtimer.h>
#include <linux/jiffies.h>
#include <linux/minmax.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/isolation.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>
#include <linux/timer.h>
#include <linux/timerqueue.h>
#include <linux/wait_bit.h>

#include "dtfd.h"

static bool ride_idle_ticks;
module_param(ride_idle_ticks, bool, 0644);
MODULE_PARM_DESC(ride_idle_ticks,
		 "deliver other CPUs' due deferrable timers on ticks that find this CPU idle (on time, at one IPI to the reader's idle CPU each)");

/* One CPU's deferrable timers: those armed on it. */
struct dtfd_rq {
	/* guards the queues, @next, @backstop_at, @online, the rider's arming */
	spinlock_t lock;
	/* by the monotonic time they fall due */
	struct timerqueue_head due;
	/* the bounded ones, by the end of their window */
	struct timerqueue_head ends;
	/* @due's first key, as published in the tree; KTIME_MAX: empty */
	s64 next;
	/* @backstop's hard expiry; KTIME_MAX: not armed */
	s64 backstop_at;
	struct timer_list rider;
	struct hrtimer finisher;
	struct hrtimer backstop;
	/* the last jiffy its rider, busy, saw a timer queued anywhere */
	unsigned long seen;
	unsigned int cpu;
	/* its rider may be armed: online, and not isolated from timers */
	bool online;
};

static DEFINE_PER_CPU(struct dtfd_rq, dtfd_rq);
static enum cpuhp_state dtfd_ride_hp;

/* Due timers a deliverer takes out of a queue at a time, and batches per run. */
#define DTFD_RIDE_BATCH		16
#define DTFD_RIDE_ROUNDS	4

/* The jiffy to aim a rider at for monotonic time @key. */
static unsigned long dtfd_ride_jiffy(s64 key, s64 now)
{
	return jiffies + (key > now ? dtfd_wheel_jiffies(key - now) : 0);
}

/*
 * Have @rq's rider run no later than @when.  On its own CPU it is simply
 * modified; from another, it is put back on its CPU (mod_timer() would
 * move a pinned timer to the caller's).  Under @rq's lock, which its
 * callback also takes to re-arm it.
 */
static void dtfd_rq_aim(struct dtfd_rq *rq, unsigned long when)
{
	struct timer_list *rider = &rq->rider;

	lockdep_assert_held(&rq->lock);

	if (!rq->online ||
	    (timer_pending(rider) && time_before_eq(rider->expires, when)))
		return;
	if (rq->cpu == smp_processor_id()) {
		mod_timer(rider, when);
		return;
	}
	timer_delete(rider);
	rider->expires = when;
	add_timer_on(rider, rq->cpu);
}

/*
 * Program @rq's backstop for the earliest window end of its bounded
 * timers: any interrupt of its CPU from that timer's deadline on runs it,
 * and the window's end forces it.
 */
static void dtfd_rq_backstop(struct dtfd_rq *rq)
{
	struct timerqueue_node *end = timerqueue_getnext(&rq->ends);
	struct dtfd_ride *r;

	lockdep_assert_held(&rq->lock);

	if (!end) {
		if (rq->backstop_at != KTIME_MAX)
			hrtimer_try_to_cancel(&rq->backstop);
		rq->backstop_at = KTIME_MAX;
		return;
	}
	if (end->expires == rq->backstop_at)
		return;
	r = container_of(end, struct dtfd_ride, end);
	rq->backstop_at = end->expires;
	hrtimer_start_range_ns(&rq->backstop, r->node.expires,
			       end->expires - r->node.expires,
			       HRTIMER_MODE_ABS);
}

/*
 * @rq's queues changed: publish its first key, aim its backstop.  Its
 * rider is aimed by whoever queues a new first timer (dtfd_ride_queue());
 * a first timer gone only makes the rider early, and it re-aims itself.
 */
static void dtfd_rq_changed(struct dtfd_rq *rq)
{
	struct timerqueue_node *first = timerqueue_getnext(&rq->due);
	s64 next = first ? first->expires : KTIME_MAX;

	lockdep_assert_held(&rq->lock);

	if (next != rq->next) {
		WRITE_ONCE(rq->next, next);
		dtfd_tree_set(rq->cpu, next);
	}
	dtfd_rq_backstop(rq);
}

static struct dtfd_rq *dtfd_ride_rq(const struct dtfd_ctx *ctx)
{
	return per_cpu_ptr(&dtfd_rq, ctx->s.ride.home);
}

/*
 * The monotonic time at which @ctx falls due, its deadline being on
 * another clock: exact offsets, so that a deliverer rarely finds it not
 * yet due; the clock walk re-keys it when the offsets jump.
 */
static s64 dtfd_ride_key(const struct dtfd_ctx *ctx)
{
	return dtfd_to_mono(ctx, ctx->expires);
}

/* Take @ctx out of @rq's queues, if it is there: true when it was. */
static bool dtfd_rq_del(struct dtfd_rq *rq, struct dtfd_ride *r)
{
	lockdep_assert_held(&rq->lock);

	if (!timerqueue_node_queued(&r->node))
		return false;
	timerqueue_del(&rq->due, &r->node);
	if (timerqueue_node_queued(&r->end))
		timerqueue_del(&rq->ends, &r->end);
	return true;
}

/* Take @ctx out of its home queue, if it is there; under its lock. */
static void dtfd_ride_unqueue(struct dtfd_ctx *ctx)
{
	struct dtfd_ride *r = &ctx->s.ride;
	struct dtfd_rq *rq;

	lockdep_assert_held(&ctx->wqh.lock);

	if (r->home < 0)
		return;
	rq = dtfd_ride_rq(ctx);
	spin_lock(&rq->lock);
	if (dtfd_rq_del(rq, r))
		dtfd_rq_changed(rq);
	spin_unlock(&rq->lock);
}

/* Wake the riders of @cpu's group, for a first timer after none. */
static void dtfd_ride_kick(unsigned int cpu)
{
	unsigned int c = cpu / DTFD_FANOUT * DTFD_FANOUT;
	unsigned int end = min(c + DTFD_FANOUT, nr_cpu_ids);
	struct dtfd_rq *rq;

	for (; c < end; c++) {
		if (c == cpu || !cpu_possible(c))
			continue;
		rq = per_cpu_ptr(&dtfd_rq, c);
		spin_lock(&rq->lock);
		dtfd_rq_aim(rq, jiffies + 1);
		spin_unlock(&rq->lock);
	}
}

/*
 * Queue @ctx on @cpu's queue, by the monotonic time it falls due, and in
 * its queue of windows when bounded.  Still queued from its last setting
 * (a restart, dtfd_ride_try_cancel()) on that same queue, it moves there
 * in one visit of the lock, as hrtimer_start() moves an active hrtimer.
 * Under @ctx's lock, interrupts off.
 */
static void dtfd_ride_queue(struct dtfd_ctx *ctx, unsigned int cpu,
			    ktime_t now)
{
	struct dtfd_rq *rq = per_cpu_ptr(&dtfd_rq, cpu);
	struct dtfd_ride *r = &ctx->s.ride;
	s64 key = dtfd_ride_key(ctx);
	bool quiet;

	lockdep_assert_held(&ctx->wqh.lock);

	if (r->home >= 0 && r->home != (int)cpu)
		dtfd_ride_unqueue(ctx);
	quiet = dtfd_tree_root() == KTIME_MAX;
	spin_lock(&rq->lock);
	/* the key is the node's place in the queue: changed out of it */
	dtfd_rq_del(rq, r);
	r->home = cpu;
	r->node.expires = key;
	if (timerqueue_add(&rq->due, &r->node))
		dtfd_rq_aim(rq, jiffies +
			    dtfd_wheel_jiffies(ktime_sub(ctx->expires, now)));
	if (ctx->max_defer) {
		r->end.expires = ktime_add_safe(key, ctx->max_defer);
		timerqueue_add(&rq->ends, &r->end);
	}
	dtfd_rq_changed(rq);
	spin_unlock(&rq->lock);
	if (quiet)
		dtfd_ride_kick(cpu);
}

/*
 * Deliver a timer taken out of a queue, under its own lock, unless it
 * changed meanwhile: disarmed, delivered by an access, or queued again
 * (a read re-arming a periodic timer, a settime restarting it).  What
 * counts is the timer as it is now, not as it was taken.
 * CLOCK_REALTIME may have stepped back behind the deadline: then it goes
 * back in its queue, never early.
 */
static void dtfd_ride_deliver_taken(struct dtfd_ctx *ctx, bool by_bound)
{
	struct dtfd_ride *r = &ctx->s.ride;
	unsigned long flags;
	bool online;
	ktime_t now;

	dtfd_race_delay();
	spin_lock_irqsave(&ctx->wqh.lock, flags);
	if (ctx->queued && !timerqueue_node_queued(&r->node)) {
		now = dtfd_now(ctx);
		/* stale, it queues it where busy CPUs and backstops serve it */
		online = READ_ONCE(per_cpu_ptr(&dtfd_rq, r->home)->online);
		if (now >= ctx->expires)
			dtfd_deliver(ctx, now, by_bound);
		else
			dtfd_ride_queue(ctx, online ? r->home :
					smp_processor_id(), now);
	}
	spin_unlock_irqrestore(&ctx->wqh.lock, flags);
}

/* A batch of due timers taken out of a queue, for delivery after its lock. */
struct dtfd_batch {
	struct dtfd_ctx *ctx[DTFD_RIDE_BATCH];
	bool bound[DTFD_RIDE_BATCH];
	unsigned int n;
};

/* Take up to DTFD_RIDE_BATCH timers due at @now out of @rq, each ridden. */
static void dtfd_rq_take(struct dtfd_rq *rq, s64 now, struct dtfd_batch *b)
{
	struct timerqueue_node *node;
	struct dtfd_ride *r;

	lockdep_assert_held(&rq->lock);

	for (b->n = 0; b->n < DTFD_RIDE_BATCH; b->n++) {
		node = timerqueue_getnext(&rq->due);
		if (!node || node->expires > now)
			break;
		r = container_of(node, struct dtfd_ride, node);
		timerqueue_del(&rq->due, node);
		b->bound[b->n] = timerqueue_node_queued(&r->end) &&
				 r->end.expires <= now;
		if (timerqueue_node_queued(&r->end))
			timerqueue_del(&rq->ends, &r->end);
		atomic_inc(&r->riding);
		b->ctx[b->n] = container_of(r, struct dtfd_ctx, s.ride);
	}
	if (b->n)
		dtfd_rq_changed(rq);
}

/* Deliver a batch, then let go of each timer: true when it was full. */
static bool dtfd_batch_deliver(struct dtfd_batch *b)
{
	unsigned int i;

	for (i = 0; i < b->n; i++)
		dtfd_ride_deliver_taken(b->ctx[i], b->bound[i]);
	/* the last thing done with each: it may be freed right after */
	for (i = 0; i < b->n; i++)
		if (atomic_dec_and_test(&b->ctx[i]->s.ride.riding))
			wake_up_var(&b->ctx[i]->s.ride.riding);
	return b->n == DTFD_RIDE_BATCH;
}

/*
 * Deliver what is due at @now in @rq, in batches, at most
 * DTFD_RIDE_ROUNDS of them: true when more are due than one call
 * delivers.  The queue's own CPU, its backstop and finishers wait for its
 * lock; dtfd_rq_serve_try() is for the walk through other CPUs' queues.
 */
static bool dtfd_rq_serve(struct dtfd_rq *rq, s64 now)
{
	struct dtfd_batch b;
	unsigned int rounds = 0;
	unsigned long flags;
	bool more;

	do {
		spin_lock_irqsave(&rq->lock, flags);
		dtfd_rq_take(rq, now, &b);
		spin_unlock_irqrestore(&rq->lock, flags);
		more = dtfd_batch_deliver(&b);
	} while (more && ++rounds < DTFD_RIDE_ROUNDS);
	return more;
}

/*
 * The same, unless another deliverer holds the queue: then it serves it
 * (the trylock only asks; a walk through other CPUs' queues does not
 * wait at each).
 */
static bool dtfd_rq_serve_try(struct dtfd_rq *rq, s64 now)
{
	unsigned long flags;

	if (!spin_trylock_irqsave(&rq->lock, flags))
		return false;
	spin_unlock_irqrestore(&rq->lock, flags);
	return dtfd_rq_serve(rq, now);
}

/* CPU @cpu's queue, found due in the tree: serve it unless another does. */
static bool dtfd_ride_serve_cpu(unsigned int cpu, s64 now)
{
	return dtfd_rq_serve_try(per_cpu_ptr(&dtfd_rq, cpu), now);
}

static bool dtfd_ride_serve_all(s64 now)
{
	return dtfd_tree_serve(now, dtfd_ride_serve_cpu);
}

/*
 * After a run on a CPU found busy: when the system's earliest deadline
 * falls before the tick after next (a tick under load comes late, and a
 * poll may miss one), carry it on this CPU's finisher, at the deadline
 * itself.  Every busy CPU sees the same root; the first to
 * start its finisher for a key claims it, so that one CPU, not all of
 * them, takes that interrupt.
 */
static atomic64_t dtfd_finish_claim = ATOMIC64_INIT(KTIME_MAX);

static void dtfd_ride_finish(struct dtfd_rq *rq, s64 now)
{
	s64 claim, at;

	/* one load of the root when nothing is that close */
	at = dtfd_tree_soonest(now + 2 * TICK_NSEC);
	claim = atomic64_read(&dtfd_finish_claim);
	if (at <= now || at == KTIME_MAX || claim == at ||
	    atomic64_cmpxchg(&dtfd_finish_claim, claim, at) != claim)
		return;
	hrtimer_start(&rq->finisher, at, HRTIMER_MODE_ABS_PINNED_SOFT);
}

/*
 * This CPU ticked at or after the jiffy its rider was aimed at.  Its own
 * queue's due timers go to their readers here (on an idle tick, as
 * lazy.c's dtfd_idle_tick_ok() allows); every queue's, when this CPU is
 * busy.  Then the rider is aimed: the next tick while busy and anything
 * is queued anywhere (or was within the last second), else its own
 * queue's earliest, else a second from now (a CPU that turns busy then
 * starts looking).
 */
static void dtfd_rider_fn(struct timer_list *t)
{
	struct dtfd_rq *rq = timer_container_of(rq, t, rider);
	bool busy, more = false;
	unsigned long flags, when;
	s64 now, root;

	dtfd_race_delay();
	busy = dtfd_cpu_busy();
	now = ktime_get();
	if (busy || dtfd_idle_tick_ok(now - READ_ONCE(rq->next)))
		more = dtfd_rq_serve(rq, now);
	else
		more = READ_ONCE(rq->next) <= now;	/* again next tick */
	if (busy || READ_ONCE(ride_idle_ticks))
		more |= dtfd_ride_serve_all(now);

	root = dtfd_tree_root();
	spin_lock_irqsave(&rq->lock, flags);
	if (busy && root != KTIME_MAX)
		rq->seen = jiffies;
	/* a timer for jiffies runs on the next tick: poll each one */
	if (more || (busy && time_before(jiffies, rq->seen + HZ)))
		when = jiffies;
	else if (rq->next != KTIME_MAX)
		when = min(dtfd_ride_jiffy(rq->next, now), jiffies + HZ);
	else
		when = jiffies + HZ;
	if (rq->online)
		mod_timer(&rq->rider, when);
	spin_unlock_irqrestore(&rq->lock, flags);
	if (busy && !more)
		dtfd_ride_finish(rq, now);
}

/* The earliest deadline, reached on a CPU found busy a tick ago. */
static enum hrtimer_restart dtfd_finisher_fn(struct hrtimer *t)
{
	struct dtfd_rq *rq = container_of(t, struct dtfd_rq, finisher);
	s64 now;

	dtfd_race_delay();
	now = ktime_get();
	dtfd_rq_serve(rq, now);
	dtfd_ride_serve_all(now);
	return HRTIMER_NORESTART;
}

/*
 * A window ends (or an interrupt of its CPU came inside it): deliver every
 * due timer, of every queue, then aim at the next window's end.
 */
static enum hrtimer_restart dtfd_backstop_fn(struct hrtimer *t)
{
	struct dtfd_rq *rq = container_of(t, struct dtfd_rq, backstop);
	unsigned long flags;
	s64 now;

	dtfd_race_delay();
	spin_lock_irqsave(&rq->lock, flags);
	rq->backstop_at = KTIME_MAX;
	spin_unlock_irqrestore(&rq->lock, flags);
	now = ktime_get();
	dtfd_rq_serve(rq, now);
	dtfd_ride_serve_all(now);
	spin_lock_irqsave(&rq->lock, flags);
	dtfd_rq_backstop(rq);
	spin_unlock_irqrestore(&rq->lock, flags);
	return HRTIMER_NORESTART;
}

static void dtfd_ride_setup(struct dtfd_ctx *ctx)
{
	struct dtfd_ride *r = &ctx->s.ride;

	timerqueue_init(&r->node);
	timerqueue_init(&r->end);
	r->home = -1;
	atomic_set(&r->riding, 0);
}

/* Due, and no CPU that could have carried it did: whoever looks delivers. */
static void dtfd_ride_collect(struct dtfd_ctx *ctx, ktime_t now)
{
	dtfd_ride_unqueue(ctx);
	dtfd_deliver(ctx, now, false);
}

/*
 * Queue the deadline on this CPU, the one of the thread that armed it.
 * A restart may have left the old one queued: collect takes it out.
 */
static void dtfd_ride_arm(struct dtfd_ctx *ctx, ktime_t now)
{
	if (ctx->expires <= now) {
		dtfd_ride_collect(ctx, now);
		return;
	}
	dtfd_ride_queue(ctx, smp_processor_id(), now);
}

/*
 * The deadline's clock jumped against the monotonic one (a realtime step,
 * resume): deliver what became due, re-key the rest in its queue.
 */
static void dtfd_ride_clock_jumped(struct dtfd_ctx *ctx)
{
	ktime_t now;

	if (!ctx->queued || !timerqueue_node_queued(&ctx->s.ride.node))
		return;
	now = dtfd_now(ctx);
	if (now >= ctx->expires) {
		dtfd_ride_collect(ctx, now);
		return;
	}
	dtfd_ride_queue(ctx, ctx->s.ride.home, now);
}

/*
 * A ridden timer counts as one whose callback runs: -1.  Restarted, it
 * stays where it is for dtfd_ride_arm() to move, and nothing waits for a
 * deliverer: one that holds it, or takes it meanwhile, finds it changed
 * (dtfd_ride_deliver_taken() looks at the timer as it is, not as it was
 * taken).
 */
static int dtfd_ride_try_cancel(struct dtfd_ctx *ctx, bool restart)
{
	if (restart)
		return 0;
	dtfd_ride_unqueue(ctx);
	return atomic_read(&ctx->s.ride.riding) ? -1 : 0;
}

static void dtfd_ride_cancel(struct dtfd_ctx *ctx)
{
	wait_var_event(&ctx->s.ride.riding,
		       !atomic_read(&ctx->s.ride.riding));
}

/*
 * Out of its queue, and no deliverer left holding it; no longer queued
 * (dtfd_timer_free()), so none puts it back.
 */
static void dtfd_ride_shutdown(struct dtfd_ctx *ctx)
{
	spin_lock_irq(&ctx->wqh.lock);
	dtfd_ride_unqueue(ctx);
	spin_unlock_irq(&ctx->wqh.lock);
	dtfd_ride_cancel(ctx);
}

static int dtfd_ride_online(unsigned int cpu)
{
	struct dtfd_rq *rq = per_cpu_ptr(&dtfd_rq, cpu);
	unsigned long flags;

	spin_lock_irqsave(&rq->lock, flags);
	WRITE_ONCE(rq->online, housekeeping_cpu(cpu, HK_TYPE_TIMER));
	dtfd_rq_aim(rq, rq->next != KTIME_MAX ?
		    dtfd_ride_jiffy(rq->next, ktime_get()) : jiffies + HZ);
	spin_unlock_irqrestore(&rq->lock, flags);
	return 0;
}

/*
 * Before the CPU goes: its rider and finisher go with it (their
 * replacements are the other CPUs').  Its queue stays, served by busy CPUs
 * and its backstop (an hrtimer the kernel moves to a CPU that stays), and
 * by every access of its timers.
 */
static int dtfd_ride_offline(unsigned int cpu)
{
	struct dtfd_rq *rq = per_cpu_ptr(&dtfd_rq, cpu);
	unsigned long flags;

	spin_lock_irqsave(&rq->lock, flags);
	WRITE_ONCE(rq->online, false);
	spin_unlock_irqrestore(&rq->lock, flags);
	timer_delete_sync(&rq->rider);
	hrtimer_cancel(&rq->finisher);
	return 0;
}

static int dtfd_ride_init(void)
{
	struct dtfd_rq *rq;
	unsigned int cpu;
	int ret;

	ret = dtfd_tree_init();
	if (ret) {
		dtfd_tree_exit();
		return ret;
	}
	for_each_possible_cpu(cpu) {
		rq = per_cpu_ptr(&dtfd_rq, cpu);
		spin_lock_init(&rq->lock);
		timerqueue_init_head(&rq->due);
		timerqueue_init_head(&rq->ends);
		rq->next = KTIME_MAX;
		rq->backstop_at = KTIME_MAX;
		rq->cpu = cpu;
		rq->online = false;
		timer_setup(&rq->rider, dtfd_rider_fn,
			    TIMER_DEFERRABLE | TIMER_PINNED);
		hrtimer_setup(&rq->finisher, dtfd_finisher_fn, CLOCK_MONOTONIC,
			      HRTIMER_MODE_ABS_PINNED_SOFT);
		hrtimer_setup(&rq->backstop, dtfd_backstop_fn, CLOCK_MONOTONIC,
			      HRTIMER_MODE_ABS);
	}
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "dtimerfd:rider",
				dtfd_ride_online, dtfd_ride_offline);
	if (ret < 0) {
		dtfd_tree_exit();
		return ret;
	}
	dtfd_ride_hp = ret;
	return 0;
}

static void dtfd_ride_exit(void)
{
	struct dtfd_rq *rq;
	unsigned int cpu;

	cpuhp_remove_state(dtfd_ride_hp);
	for_each_possible_cpu(cpu) {
		rq = per_cpu_ptr(&dtfd_rq, cpu);
		timer_shutdown_sync(&rq->rider);
		hrtimer_cancel(&rq->finisher);
		hrtimer_cancel(&rq->backstop);
	}
	dtfd_tree_exit();
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
