// SPDX-License-Identifier: GPL-2.0
/*
 * Clock changes, resume and time namespaces.
 *
 * timerfd is called by the timekeeping core itself when the realtime clock
 * is set or the system resumes; a module has no such hook.  The nearest
 * exported one is the pvclock_gtod notifier chain, which timekeeping calls
 * on every update with "was_set" true when the clock was stepped (settime,
 * adjtimex step, leap second, resume).  The notifier runs under the
 * timekeeper lock with interrupts off, before the step returns.  There it
 * only counts the changes of the monotonic-to-realtime offset (what
 * timerfd's cancellation compares) and raises an irq_work, which queues a
 * work item, which walks the contexts that asked to hear about clock
 * changes:
 *  - CANCEL_ON_SET timers are marked and their sleepers woken;
 *  - timers whose source follows the clock itself (deferrable ones, whose
 *    deadline is not on jiffies' clock: absolute CLOCK_REALTIME,
 *    CLOCK_BOOTTIME across suspend) are re-aimed from the new clock, so a
 *    step past the deadline makes them due now.
 * What a reader sees does not wait for that work: every access compares
 * the count with the one its timer was armed at (dtfd_cancel_check() in
 * timer.c), as timerfd marks its timers inside clock_was_set(), and a
 * deferrable timer's deadline is checked against the clock on every
 * access too.
 */

#include <linux/irq_work.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/notifier.h>
#include <linux/nsproxy.h>
#include <linux/poll.h>
#include <linux/pvclock_gtod.h>
#include <linux/sched.h>
#include <linux/time_namespace.h>
#include <linux/timekeeper_internal.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>

#include "dtfd.h"

/*
 * The contexts that watch clock changes.  A spinlock, so that close never
 * waits for more than one batch of the walk below.
 */
static LIST_HEAD(dtfd_clock_list);
static DEFINE_SPINLOCK(dtfd_clock_lock);

/*
 * Changes of the monotonic-to-realtime offset so far, and the offset they
 * were counted against; written by the notifier only, under the
 * timekeeper lock.
 */
unsigned int dtfd_clock_seq;
static ktime_t dtfd_offs_real;

/* Entries the walk handles between two chances to reschedule. */
#define DTFD_CLOCK_BATCH	16

/*
 * Walk the list with a cursor, so that the lock can be dropped between
 * batches: an unprivileged user can make the list long, and every close
 * of a watching timer takes the lock.  Entries added meanwhile go in
 * front of the cursor: they were armed on the new clock.  One walk at a
 * time: a work item does not run on two CPUs at once.
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

static DECLARE_WORK(dtfd_clock_work, dtfd_clock_was_set);

static void dtfd_clock_kick(struct irq_work *work)
{
	schedule_work(&dtfd_clock_work);
}

static DEFINE_IRQ_WORK(dtfd_clock_irq_work, dtfd_clock_kick);

/*
 * Under the timekeeper lock, with the new offsets in @priv (as KVM's
 * notifier reads them): count an offset change here, so that it is
 * visible before clock_settime() returns.  Queueing work from here could
 * take locks that read the clock (KVM hit that deadlock in its own
 * pvclock notifier), so hop through an irq_work.
 */
static int dtfd_gtod_notify(struct notifier_block *nb, unsigned long was_set,
			    void *priv)
{
	const struct timekeeper *tk = priv;

	if (tk->offs_real != dtfd_offs_real) {
		dtfd_offs_real = tk->offs_real;
		WRITE_ONCE(dtfd_clock_seq, dtfd_clock_seq + 1);
	}
	if (was_set)
		irq_work_queue(&dtfd_clock_irq_work);
	return NOTIFY_OK;
}

static struct notifier_block dtfd_gtod_nb = {
	.notifier_call = dtfd_gtod_notify,
};

/*
 * Put @ctx on the clock-change list or take it off.  Only a change of
 * what the timer watches takes the global lock.
 */
void dtfd_clock_watch(struct dtfd_ctx *ctx, unsigned int watch)
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

/*
 * An absolute expiry given in the caller's time namespace, on the host's
 * clock.  The kernel's timens_ktime_to_host() needs the unexported
 * do_timens_ktime_to_host(), so apply the same rules to the offsets here:
 * a target below the offset has already passed (0), and the result
 * saturates at KTIME_MAX.
 */
ktime_t dtfd_timens_to_host(int clockid, ktime_t tim)
{
#ifdef CONFIG_TIME_NS
	struct timens_offsets *ns = &current->nsproxy->time_ns->offsets;
	ktime_t offset;

	switch (clockid) {
	case CLOCK_MONOTONIC:
		offset = timespec64_to_ktime(ns->monotonic);
		break;
	case CLOCK_BOOTTIME:
	case CLOCK_BOOTTIME_ALARM:
		offset = timespec64_to_ktime(ns->boottime);
		break;
	default:
		return tim;
	}
	if (tim < offset)
		return 0;
	if (offset < 0 && tim > KTIME_MAX + offset)
		return KTIME_MAX;
	return ktime_sub(tim, offset);
#else
	return tim;
#endif
}

int dtfd_clock_init(void)
{
	dtfd_offs_real = ktime_mono_to_real(0);
	return pvclock_gtod_register_notifier(&dtfd_gtod_nb);
}

void dtfd_clock_exit(void)
{
	pvclock_gtod_unregister_notifier(&dtfd_gtod_nb);
	irq_work_sync(&dtfd_clock_irq_work);
	cancel_work_sync(&dtfd_clock_work);
}
