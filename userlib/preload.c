// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libdtimerfd-preload.so: LD_PRELOAD=libdtimerfd-preload.so makes an
 * unmodified program's timerfd_create/settime/gettime use /dev/dtimerfd,
 * arming deferrable timers as a policy from the environment says:
 *
 *   DTIMERFD_POLICY=all                 every timer deferrable (default)
 *   DTIMERFD_POLICY=none                dtimerfd, but strict: timerfd's twin
 *   DTIMERFD_POLICY=min-interval=DUR    periodic timers whose interval is
 *                                       at least DUR (e.g. 100ms, 1s, 500us)
 *   DTIMERFD_POLICY=min-value=DUR       timers first due DUR or more ahead
 *   anything else                       one line on stderr, then as none
 *
 * Everything else passes through untouched: the descriptors are ordinary
 * file descriptors (close, read, poll, epoll, dup, fork and exec work as
 * with a timerfd); alarm clocks, programs whose timers are not dtimerfds
 * and machines without the module get the real timerfd calls.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "dtimerfd.h"
#include "internal.h"

#define DTFD_API __attribute__((visibility("default")))

enum policy { POL_ALL, POL_NONE, POL_MIN_INTERVAL, POL_MIN_VALUE };

static enum policy pol = POL_ALL;
static long long pol_ns;

typedef int (*create_fn)(clockid_t, int);
typedef int (*settime_fn)(int, int, const struct itimerspec *,
			  struct itimerspec *);
typedef int (*gettime_fn)(int, struct itimerspec *);

static create_fn real_create;
static settime_fn real_settime;
static gettime_fn real_gettime;

/* for dtimerfd.c, built into this shim with DTFD_PRELOAD */
int dtfd_real_timerfd_create(clockid_t clockid, int flags)
{
	return real_create(clockid, flags);
}

int dtfd_real_timerfd_settime(int fd, int flags, const struct itimerspec *nv,
			      struct itimerspec *ov)
{
	return real_settime(fd, flags, nv, ov);
}

int dtfd_real_timerfd_gettime(int fd, struct itimerspec *cur)
{
	return real_gettime(fd, cur);
}

/* v units of @scale ns, saturated (a double past LLONG_MAX is undefined) */
static long long dur_ns(double v, double scale)
{
	v *= scale;
	return v >= 9.2e18 ? LLONG_MAX : (long long)v;
}

/* "100ms", "1s", "500us", "2000000ns", "3" (seconds); -1 if not one */
static long long parse_duration(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || !(v >= 0))	/* also NaN */
		return -1;
	if (!*end || !strcmp(end, "s"))
		return dur_ns(v, 1e9);
	if (!strcmp(end, "ms"))
		return dur_ns(v, 1e6);
	if (!strcmp(end, "us"))
		return dur_ns(v, 1e3);
	if (!strcmp(end, "ns"))
		return dur_ns(v, 1);
	return -1;
}

__attribute__((constructor)) static void preload_init(void)
{
	const char *p = getenv("DTIMERFD_POLICY");
	long long ns;

	real_create = (create_fn)dlsym(RTLD_NEXT, "timerfd_create");
	real_settime = (settime_fn)dlsym(RTLD_NEXT, "timerfd_settime");
	real_gettime = (gettime_fn)dlsym(RTLD_NEXT, "timerfd_gettime");

	if (!p || !*p || !strcmp(p, "all"))
		return;
	if (!strcmp(p, "none")) {
		pol = POL_NONE;
	} else if (!strncmp(p, "min-interval=", 13) &&
		   (ns = parse_duration(p + 13)) >= 0) {
		pol = POL_MIN_INTERVAL;
		pol_ns = ns;
	} else if (!strncmp(p, "min-value=", 10) &&
		   (ns = parse_duration(p + 10)) >= 0) {
		pol = POL_MIN_VALUE;
		pol_ns = ns;
	} else {
		/*
		 * A typo must not make every timer deferrable (a watchdog's
		 * among them): say so once, and keep timerfd's strictness.
		 */
		pol = POL_NONE;
		fprintf(stderr,
			"libdtimerfd-preload: DTIMERFD_POLICY=%s not understood (all, none, min-interval=DUR, min-value=DUR); timers stay strict\n",
			p);
	}
}

/*
 * A timespec in ns, saturated at LLONG_MAX (tv_sec up to max time_t);
 * -1 for one the kernel rejects as EINVAL anyway.
 */
static long long ts_ns(const struct timespec *ts)
{
	if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000L)
		return -1;
	if (ts->tv_sec > (LLONG_MAX - 999999999LL) / 1000000000LL)
		return LLONG_MAX;
	return ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

/*
 * Copy the caller's itimerspec without risking a SIGSEGV where timerfd
 * would have said EFAULT: the kernel does the reading.
 */
static int peek(const struct itimerspec *uptr, struct itimerspec *val)
{
	struct iovec local = { val, sizeof(*val) };
	struct iovec remote = { (void *)uptr, sizeof(*val) };

	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) ==
	       (ssize_t)sizeof(*val) ? 0 : -1;
}

static int want_deferrable(int flags, const struct itimerspec *uptr)
{
	struct itimerspec v;

	switch (pol) {
	case POL_NONE:
		return 0;
	case POL_MIN_INTERVAL:
		return !peek(uptr, &v) && ts_ns(&v.it_interval) &&
		       ts_ns(&v.it_interval) >= pol_ns;
	case POL_MIN_VALUE:
		/* an absolute time says nothing about how far ahead it is */
		return !(flags & TFD_TIMER_ABSTIME) && !peek(uptr, &v) &&
		       ts_ns(&v.it_value) >= pol_ns;
	default:
		return 1;
	}
}

DTFD_API int timerfd_create(clockid_t clockid, int flags)
{
	int fd;

	/* an alarm must wake the machine: leave those to timerfd */
	if (clockid == CLOCK_REALTIME_ALARM || clockid == CLOCK_BOOTTIME_ALARM)
		return real_create(clockid, flags);
	fd = dtimerfd_create(clockid, flags);
	if (fd < 0 && errno == ENODEV)
		return real_create(clockid, flags);
	return fd;
}

DTFD_API int timerfd_settime(int fd, int flags,
			     const struct itimerspec *new_value,
			     struct itimerspec *old_value)
{
	int dflags = flags;

	if (want_deferrable(flags, new_value))
		dflags |= DTFD_TIMER_DEFERRABLE;
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
