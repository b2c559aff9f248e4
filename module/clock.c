// SPDX-License-Identifier: GPL-2.0
/*
 * Clock changes, resume and time namespaces.
 *
 * timerfd is called by the timekeeping core itself when the realtime clock
 * is set or the system resumes; a module has no such hook.  The nearest
 * exported one is the pvclock_gtod notifier chain, which timekeeping calls
 * on every update with "was_set" true when the clock was stepped (settime,
 * adjtimex step, leap second, resume).  The notifier runs under the
 * timekeeper lock with interrupts off, so it only raises an irq_work; the
 * irq_work queues a work item; the work walks the contexts that asked to
 * hear about clock changes:
 *  - CANCEL_ON_SET timers whose monotonic-to-realtime offset changed are
 *    cancelled exactly as timerfd_clock_was_set() does;
 *  - deferrable timers whose deadline is not on jiffies' clock (absolute
 *    CLOCK_REALTIME, CLOCK_BOOTTIME across suspend) are re-armed from the
 *    new clock, so a step past the deadline makes them due now.
 */

#include <linux/irq_work.h>
#include <linux/mutex.h>
#include <linux/notifier.h>
#include <linux/nsproxy.h>
#include <linux/poll.h>
#include <linux/pvclock_gtod.h>
#include <linux/sched.h>
#include <linux/time_namespace.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>

#include "dtimerfd.h"

static LIST_HEAD(dtfd_clock_list);
static DEFINE_MUTEX(dtfd_clock_lock);

static void dtfd_clock_was_set(struct work_struct *work)
{
	ktime_t moffs = ktime_mono_to_real(0);
	struct dtimerfd_ctx *ctx;

	mutex_lock(&dtfd_clock_lock);
	list_for_each_entry(ctx, &dtfd_clock_list, clist) {
		spin_lock_irq(&ctx->wqh.lock);
		if ((ctx->watch & DTFD_WATCH_CANCEL) && ctx->moffs != moffs) {
			/* read() sees KTIME_MAX and reports ECANCELED */
			ctx->moffs = KTIME_MAX;
			ctx->ticks++;
			wake_up_locked_poll(&ctx->wqh, EPOLLIN);
		}
		if (ctx->watch & DTFD_WATCH_REARM)
			dtfd_clock_jumped(ctx);
		spin_unlock_irq(&ctx->wqh.lock);
	}
	mutex_unlock(&dtfd_clock_lock);
}

static DECLARE_WORK(dtfd_clock_work, dtfd_clock_was_set);

static void dtfd_clock_kick(struct irq_work *work)
{
	schedule_work(&dtfd_clock_work);
}

static DEFINE_IRQ_WORK(dtfd_clock_irq_work, dtfd_clock_kick);

/*
 * Under the timekeeper lock: queueing work from here could take locks that
 * read the clock (KVM hit that deadlock in its own pvclock notifier), so
 * hop through an irq_work.
 */
static int dtfd_gtod_notify(struct notifier_block *nb, unsigned long was_set,
			    void *priv)
{
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
void dtfd_clock_watch(struct dtimerfd_ctx *ctx, unsigned int watch)
{
	if (READ_ONCE(ctx->watch) == watch)
		return;

	mutex_lock(&dtfd_clock_lock);
	if (watch && list_empty(&ctx->clist))
		list_add(&ctx->clist, &dtfd_clock_list);
	else if (!watch)
		list_del_init(&ctx->clist);

	spin_lock_irq(&ctx->wqh.lock);
	/*
	 * Changes from now on count.  timerfd keeps the offset from creation,
	 * but it hears only about real steps; we also hear about changes that
	 * keep the offset and must not cancel on one that predates the arming.
	 */
	if ((watch & ~ctx->watch & DTFD_WATCH_CANCEL) && ctx->moffs != KTIME_MAX)
		ctx->moffs = ktime_mono_to_real(0);
	WRITE_ONCE(ctx->watch, watch);
	spin_unlock_irq(&ctx->wqh.lock);
	mutex_unlock(&dtfd_clock_lock);
}

/*
 * True once after a clock change cancelled @ctx (timerfd_canceled()); the
 * caller then reports ECANCELED.
 */
bool dtfd_canceled(struct dtimerfd_ctx *ctx)
{
	lockdep_assert_held(&ctx->wqh.lock);

	if (!(ctx->watch & DTFD_WATCH_CANCEL) || ctx->moffs != KTIME_MAX)
		return false;
	ctx->moffs = ktime_mono_to_real(0);
	return true;
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
	return pvclock_gtod_register_notifier(&dtfd_gtod_nb);
}

void dtfd_clock_exit(void)
{
	pvclock_gtod_unregister_notifier(&dtfd_gtod_nb);
	irq_work_sync(&dtfd_clock_irq_work);
	cancel_work_sync(&dtfd_clock_work);
}
