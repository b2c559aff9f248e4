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
 * changes (timer.c, as timerfd_clock_was_set() is timerfd.c's):
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
#include <linux/notifier.h>
#include <linux/nsproxy.h>
#include <linux/pvclock_gtod.h>
#include <linux/sched.h>
#include <linux/time_namespace.h>
#include <linux/timekeeper_internal.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>

#include "dtfd.h"

/*
 * Changes of the monotonic-to-realtime offset so far, and the offset they
 * were counted against; written by the notifier only, under the
 * timekeeper lock.
 */
unsigned int dtfd_clock_seq;
static ktime_t dtfd_offs_real;

/* The walk of the timers that watch the clock (timer.c), as a work item. */
static struct work_struct dtfd_clock_work;

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

	switch (dtfd_clocks[clockid].timens) {
	case CLOCK_MONOTONIC:
		offset = timespec64_to_ktime(ns->monotonic);
		break;
	case CLOCK_BOOTTIME:
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

/* Have @walk run, in a work item, after each step of the clock. */
int dtfd_clock_init(work_func_t walk)
{
	INIT_WORK(&dtfd_clock_work, walk);
	dtfd_offs_real = ktime_mono_to_real(0);
	return pvclock_gtod_register_notifier(&dtfd_gtod_nb);
}

void dtfd_clock_exit(void)
{
	pvclock_gtod_unregister_notifier(&dtfd_gtod_nb);
	irq_work_sync(&dtfd_clock_irq_work);
	cancel_work_sync(&dtfd_clock_work);
}
