/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Backfills of current kernel APIs for the older kernels dtimerfd builds
 * on.  The sources use mainline names only; each block below is decided
 * by a probe of the target kernel's headers (module/Kbuild), never by a
 * version number, because stable kernels backport (6.1.y has
 * timer_shutdown_sync()).  Force-included into every object.
 */
#ifndef DTIMERFD_COMPAT_H
#define DTIMERFD_COMPAT_H

#include <linux/version.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0)
#error "dtimerfd needs Linux 6.1 or later"
#endif

#include <linux/alarmtimer.h>
#include <linux/hrtimer.h>
#include <linux/timer.h>

/* 6.2: timer_delete() replaced del_timer() (backported to 6.1.y) */
#ifndef DTFD_HAVE_TIMER_DELETE
#define timer_delete(t)			del_timer(t)
#endif

/* 6.2: timer_shutdown_sync() (backported to 6.1.y) */
#ifndef DTFD_HAVE_TIMER_SHUTDOWN_SYNC
#define timer_shutdown_sync(t)		del_timer_sync(t)
#endif

/* 6.15: timer_delete_sync_try() renamed try_to_del_timer_sync() */
#ifndef DTFD_HAVE_TIMER_DELETE_SYNC_TRY
#define timer_delete_sync_try(t)	try_to_del_timer_sync(t)
#endif

/* 6.16: timer_container_of() replaced from_timer() */
#ifndef DTFD_HAVE_TIMER_CONTAINER_OF
#define timer_container_of(var, t, field)	from_timer(var, t, field)
#endif

/* 6.13: hrtimer_setup() replaced hrtimer_init() + setting .function */
#ifndef DTFD_HAVE_HRTIMER_SETUP
static inline void hrtimer_setup(struct hrtimer *timer,
				 enum hrtimer_restart (*fn)(struct hrtimer *),
				 clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = fn;
}
#endif

/*
 * 7.2 has alarm_start_timer() instead of alarm_start(); like the new
 * hrtimer_start_range_ns_user() it leaves an already expired alarm
 * unqueued and says so, and the caller delivers.  The old alarm_start()
 * queues it and the callback runs at once: report "queued".
 */
#ifndef DTFD_HAVE_ALARM_START_TIMER
static inline bool alarm_start_timer(struct alarm *alarm, ktime_t expires,
				     bool relative)
{
	if (relative)
		alarm_start_relative(alarm, expires);
	else
		alarm_start(alarm, expires);
	return true;
}
#endif

/*
 * 7.2 alarm callbacks return void (alarms are never restarted by their
 * callback); before, they returned enum alarmtimer_restart.
 */
#ifdef DTFD_HAVE_ALARMTIMER_RESTART
#define dtfd_alarm_ret			enum alarmtimer_restart
#define DTFD_ALARM_DONE			ALARMTIMER_NORESTART
#else
#define dtfd_alarm_ret			void
#define DTFD_ALARM_DONE
#endif

#endif /* DTIMERFD_COMPAT_H */
