/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * What the library and the preload shim share, not installed:
 * ioctl.c, the one marshaling of the ioctls, linked into both; the
 * policy, between the shim's two files.  Hidden whatever the compiler's
 * flags: neither libdtimerfd.so nor the shim exports any of it.
 */
#ifndef DTFD_INTERNAL_H
#define DTFD_INTERNAL_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <linux/dtimerfd.h>

/* What the library and the shim export; everything else is hidden. */
#define DTFD_API __attribute__((visibility("default")))

#pragma GCC visibility push(hidden)

/*
 * ioctl.c: -1 with errno as the module, open(2) or the VFS set it;
 * timerfd's error order is the caller's to make.
 */
int dtfd_create_ioctl(clockid_t clockid, int flags);
int dtfd_settime_ioctl(int fd, int flags, const struct itimerspec *new_value,
		       struct itimerspec *old_value);
int dtfd_gettime_ioctl(int fd, struct itimerspec *curr_value);
int dtfd_tolerance_ioctl(int fd, uint64_t slack_ns, uint64_t max_defer_ns);
int dtfd_get_tolerance_ioctl(int fd, uint64_t *slack_ns,
			     uint64_t *max_defer_ns);
int dtfd_stats_ioctl(int fd, struct dtfd_stats *stats);

/*
 * ioctl.c: a descriptor of ours moved to @floor or above (the original
 * closed), or -1 (the original kept) when no number is free up there;
 * dtfd_fd_floor(), the top quarter of what the program may open.
 */
int dtfd_fd_floor(void);
int dtfd_fd_high(int fd, int floor);

/*
 * Whether the shim may read or write @size bytes of the caller's at @p
 * with plain loads and stores, as the C library's own wrappers do (select
 * on arm64, the 64-bit time wrappers of 32-bit programs): every address
 * but those no mapping can have, the first page (NULL and small offsets
 * from it) and the upper half, the kernel's.  Those go to the real call,
 * which says EFAULT.  A plain load costs nothing and makes no system
 * call a sandbox could refuse; process_vm_readv(), which did the reading
 * before, killed programs under seccomp filters without @ipc.  The price:
 * a pointer into an unmapped page of user space is a SIGSEGV where the
 * kernel would have said EFAULT, as with the C library's wrappers.
 */
static inline int dtfd_user_ok(const void *p, size_t size)
{
	uintptr_t a = (uintptr_t)p;

	return a >= 4096 && a + size >= a &&
	       (sizeof(a) < 8 || (intptr_t)(a + size) > 0);
}

/* Time in ns, as the shim and the library count it. */
#define DTFD_NSEC	1000000000LL

/* Whether the kernel would take @ts as a time (else EINVAL). */
static inline int dtfd_ts_valid(const struct timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < DTFD_NSEC;
}

/* A valid @ts in ns, saturated at LLONG_MAX (tv_sec up to max time_t). */
static inline long long dtfd_ts_ns(const struct timespec *ts)
{
	long long sec = ts->tv_sec;	/* a 32-bit time_t never saturates */

	if (sec > (LLONG_MAX - DTFD_NSEC) / DTFD_NSEC)
		return LLONG_MAX;
	return sec * DTFD_NSEC + ts->tv_nsec;
}

static inline struct timespec dtfd_ns_ts(long long ns)
{
	struct timespec ts = { (time_t)(ns / DTFD_NSEC),
			       (long)(ns % DTFD_NSEC) };

	return ts;
}

static inline long long dtfd_now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return dtfd_ts_ns(&ts);
}

/* @a + @b, both >= 0, saturated */
static inline long long dtfd_add_sat(long long a, long long b)
{
	return a > LLONG_MAX - b ? LLONG_MAX : a + b;
}

/* preload-policy.c: the shim's policy, for preload.c and preload-sleep.c */
#define DTFD_PRELOAD_CONF	"/etc/dtimerfd/preload.conf"
void dtfd_policy_init(void);
int dtfd_policy_bounded(void);
int dtfd_policy(long long dur, unsigned long long *max_defer);
int dtfd_policy_timer(int flags, const struct itimerspec *v, long long dur,
		      unsigned long long *max_defer);

#pragma GCC visibility pop

#endif /* DTFD_INTERNAL_H */
