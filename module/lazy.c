// SPDX-License-Identifier: GPL-2.0
/*
 * What the two deferrable sources (ride.c, percpu.c) share: when a timer
 * may ride a tick, and where on the timer wheel to aim for a deadline.
 *
 * When may a deferrable timer ride a tick that found its CPU idle?
 *
 * Always while the CPU is busy: that is what deferrable timers are for.
 * A tick that finds the CPU idle is one the idle loop kept for a moment
 * before stopping it (current kernels stop the tick only on the second
 * idle iteration), and a timer may ride on it once.  But delivering wakes
 * a reader, whose brief run re-enters idle and keeps the next tick too:
 * timers due on every tick would keep an otherwise idle CPU ticking
 * forever.  So no delivery on two consecutive idle ticks (unless the
 * second runs a task anyway, below): the second one finds nothing to do,
 * and the idle loop stops the tick.
 *
 * A tick alone costs more than itself, though: a CPU that ran a task on
 * its way back to idle keeps its tick for one more jiffy (the idle
 * governor predicts a short sleep after a run), so waking readers on a
 * tick that would have run nothing else costs one more tick per delivery.
 * On a tick that runs another task anyway (a timer of the wheel that
 * wakes a kworker or a sleeper) the readers share that task's kept tick
 * and cost nothing.  So a due timer waits lone_tick_wait_ms for such a
 * tick (or a busy CPU, or its bound) before it rides a lone one: at most
 * one extra tick per wait and CPU.  0 rides every tick: less late while
 * the system idles, at one extra tick per delivery (docs/performance.md
 * has both sides measured).
 *
 * "Idle" is judged by who the tick interrupted.  Timer callbacks run in
 * the softirq of the interrupted task, the idle task when the CPU was
 * idle.  On PREEMPT_RT, and under softirq load, they run in a per-CPU
 * kthread (ktimers, ksoftirqd): that is idle's stand-in when it is the
 * only runnable task, or when the CPU spent most of the time since the
 * last look idle (on PREEMPT_RT the tick wakes ktimers and ksoftirqd
 * together).
 */

#include <linux/jiffies.h>
#include <linux/kernel_stat.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/moduleparam.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/sched/stat.h>
#include <linux/tick.h>

#include "dtfd.h"

static unsigned int lone_tick_wait_ms = 250;
module_param(lone_tick_wait_ms, uint, 0644);
MODULE_PARM_DESC(lone_tick_wait_ms,
		 "how long a due deferrable timer waits on an idle CPU for a tick that runs a task anyway before it rides a tick that runs nothing else, which costs about one more tick (default 250; 0: ride every tick)");

/*
 * Ticks that hit this CPU's idle loop: jiffies of the last one on which a
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

/* Did this tick find the CPU idle? */
static bool dtfd_tick_found_idle(void)
{
	if (is_idle_task(current))
		return true;
	if (!(current->flags & PF_KTHREAD))
		return false;
	return single_task_running() || dtfd_cpu_mostly_idle();
}

/*
 * Is this CPU busy, so that an interrupt before its next tick would not
 * pull it out of idle?  Busy when the interrupt came, and idle less than
 * half the time since a callback last asked: a CPU that idles but for the
 * short runs of the readers it wakes does not count.
 */
bool dtfd_cpu_busy(void)
{
	return !dtfd_tick_found_idle() && !dtfd_cpu_mostly_idle();
}

/*
 * Will this idle CPU run a task after this tick anyway?  Timers of the
 * deferrable base run last in the timer softirq, after those that wake
 * their kworkers and sleepers, and a task woken here set need_resched on
 * the idle task; a kthread standing in for idle (PREEMPT_RT's ktimers)
 * has company on the run queue.
 */
static bool dtfd_tick_runs_task(void)
{
	if (is_idle_task(current))
		return need_resched();
	return !single_task_running();
}

/*
 * May a deferrable timer due for @waited be delivered on this tick?
 * Always on a busy CPU, and on a tick that runs a task anyway; on a lone
 * idle tick, once a tick, not twice in a row, and only after
 * lone_tick_wait_ms.
 */
bool dtfd_idle_tick_ok(s64 waited)
{
	unsigned long now = jiffies, last;

	if (!dtfd_tick_found_idle())
		return true;
	last = __this_cpu_read(dtfd_idle_tick);
	if (last == now)
		return true;		/* share the tick already taken */
	if (!dtfd_tick_runs_task() &&
	    (now - last == 1 ||
	     waited < (s64)READ_ONCE(lone_tick_wait_ms) * NSEC_PER_MSEC))
		return false;
	__this_cpu_write(dtfd_idle_tick, now);
	return true;
}

/*
 * Timer wheel geometry (kernel/time/timer.c, identical from 6.1 to 7.2):
 * level 0 has 1-jiffy buckets for the first 63 jiffies; each further level
 * is 8 times coarser and rounds the expiry up to its granularity, which is
 * at most 8/63 of the delta.  Deltas beyond the wheel's cutoff (63 << 21
 * jiffies at HZ <= 100, 63 << 24 above) are clamped and fire early, so a
 * single arm never goes further than DTFD_WHEEL_MAX_CHUNK.
 */
#define DTFD_WHEEL_LVL0		63UL
#define DTFD_WHEEL_MAX_CHUNK	(63UL << 20)

/*
 * Jiffies from now at which to arm the timer_list for a deadline @delta ns
 * ahead.
 *
 * A timer armed for jiffies + n fires on the (n + 1)th tick from now: the
 * wheel adds a jiffy at level 0 so a timer armed just before a tick is not
 * early.  Aiming at jiffies + floor((delta - 1) / TICK_NSEC) makes that tick
 * land less than a jiffy either side of the deadline; when it lands early
 * the callback finds the deadline ahead and re-arms for the next tick.
 * Beyond level 0 aim 7/8 of the way, short of the wheel's rounding, and
 * close in from there.
 */
unsigned long dtfd_wheel_jiffies(s64 delta)
{
	u64 n = div_u64(delta - 1, TICK_NSEC);

	if (n >= DTFD_WHEEL_LVL0)
		n -= n >> 3;
	return min_t(u64, n, DTFD_WHEEL_MAX_CHUNK);
}
