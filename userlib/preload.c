// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libdtimerfd-preload.so: LD_PRELOAD=libdtimerfd-preload.so (or a line in
 * /etc/ld.so.preload) makes an unmodified program's timers and timeouts
 * deferrable, within the bounds of a policy (dtimerfd-preload(8)):
 *
 *   bound=10%,max=1s     the default: each timer or timeout may come up
 *                        to 10 % of its own duration late, at most 1 s
 *   all                  deferrable without bound (timerfd timers only)
 *   none                 nothing deferred; timerfds are strict dtimerfds
 *   min-interval=DUR     timerfd timers with an interval of DUR or more
 *   min-value=DUR        timerfd timers first due DUR or more ahead
 *   ...,exclude=A:B      programs A and B (executable or argv[0] name)
 *                        keep every timer and timeout exact
 *
 * from DTIMERFD_POLICY, else the first line of /etc/dtimerfd/preload.conf.
 * Text the shim does not understand: one line on stderr, then none.
 * Never early, alarm clocks and TFD_TIMER_CANCEL_ON_SET timers exact.
 *
 * This file: the timerfd interposers; preload-policy.c the policy;
 * preload-sleep.c the sleeps and the waits with a timeout, on the
 * thread's timers of preload-wait.c; ioctl.c, the library's own, every
 * ioctl of them all (hidden: the shim exports only preload.map's names).
 * Everything else passes through:
 * the descriptors are ordinary file descriptors, and programs whose timers
 * are not dtimerfds and machines without the module get the real calls.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "dtimerfd.h"
#include "internal.h"

typedef int (*create_fn)(clockid_t, int);
typedef int (*settime_fn)(int, int, const struct itimerspec *,
			  struct itimerspec *);
typedef int (*gettime_fn)(int, struct itimerspec *);

static create_fn real_create;
static settime_fn real_settime;
static gettime_fn real_gettime;

__attribute__((constructor)) static void preload_init(void)
{
	real_create = (create_fn)dlsym(RTLD_NEXT, "timerfd_create");
	real_settime = (settime_fn)dlsym(RTLD_NEXT, "timerfd_settime");
	real_gettime = (gettime_fn)dlsym(RTLD_NEXT, "timerfd_gettime");
	dtfd_policy_init();
}

/* A timespec in ns, saturated; -1 for one the kernel rejects as EINVAL. */
static long long ts_ns(const struct timespec *ts)
{
	return dtfd_ts_valid(ts) ? dtfd_ts_ns(ts) : -1;
}

/*
 * The caller's itimerspec, read with a plain load (internal.h says why);
 * an address no mapping can have is left to the settime ioctl, which
 * says EFAULT as timerfd_settime(2) would.
 */
static int peek(const struct itimerspec *uptr, struct itimerspec *val)
{
	if (!dtfd_user_ok(uptr, sizeof(*uptr)))
		return -1;
	*val = *uptr;
	return 0;
}

/* The clocks of the timers created here, + 1, for absolute times. */
static unsigned char fd_clock[4096];

/* What the policy calls a timer's duration: its interval, else its wait. */
static long long timer_duration(int fd, int flags, const struct itimerspec *v)
{
	long long val = ts_ns(&v->it_value), ivl = ts_ns(&v->it_interval);
	struct timespec now;
	long long n;

	if (val <= 0 || ivl < 0)
		return -1;
	if (ivl)
		return ivl;
	if (!(flags & TFD_TIMER_ABSTIME))
		return val;
	if (fd < 0 || fd >= (int)sizeof(fd_clock) || !fd_clock[fd] ||
	    clock_gettime(fd_clock[fd] - 1, &now))
		return -1;
	n = ts_ns(&now);
	return val > n ? val - n : -1;
}

static int want_deferrable(int fd, int flags, const struct itimerspec *uptr,
			   unsigned long long *max_defer)
{
	struct itimerspec v;

	if (peek(uptr, &v))
		return dtfd_policy_timer(flags, NULL, -1, max_defer);
	return dtfd_policy_timer(flags, &v, timer_duration(fd, flags, &v),
				 max_defer);
}

DTFD_API int timerfd_create(clockid_t clockid, int flags)
{
	int fd;

	/* an alarm must wake the machine: leave those to timerfd */
	if (clockid == CLOCK_REALTIME_ALARM || clockid == CLOCK_BOOTTIME_ALARM)
		return real_create(clockid, flags);
	/*
	 * Any failure, not only a missing module: a service's DeviceAllow=
	 * makes the open EPERM, and systemd-logind failed to start when that
	 * reached it.  The real call then fails, or not, as timerfd does.
	 */
	fd = dtfd_create_ioctl(clockid, flags);
	if (fd < 0)
		return real_create(clockid, flags);
	if (fd >= 0 && fd < (int)sizeof(fd_clock))
		fd_clock[fd] = (unsigned char)(clockid + 1);
	return fd;
}

DTFD_API int timerfd_settime(int fd, int flags,
			     const struct itimerspec *new_value,
			     struct itimerspec *old_value)
{
	unsigned long long max_defer;
	int dflags = flags;

	if (want_deferrable(fd, flags, new_value, &max_defer)) {
		dflags |= DTFD_TIMER_DEFERRABLE;
		/* the bound, from this arming on; not ours: settime says so */
		if (dtfd_policy_bounded())
			dtfd_tolerance_ioctl(fd, 0, max_defer);
	}
	if (!dtfd_settime_ioctl(fd, dflags, new_value, old_value))
		return 0;
	/*
	 * Not a dtimerfd (ENOTTY) or not a descriptor (EBADF): the real call
	 * does whatever timerfd does, errors in timerfd's order included.
	 */
	if (errno == ENOTTY || errno == EBADF)
		return real_settime(fd, flags, new_value, old_value);
	return -1;
}

DTFD_API int timerfd_gettime(int fd, struct itimerspec *curr_value)
{
	if (!dtfd_gettime_ioctl(fd, curr_value))
		return 0;
	if (errno == ENOTTY || errno == EBADF)
		return real_gettime(fd, curr_value);
	return -1;
}
