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

#endif /* DTIMERFD_COMPAT_H */
