/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * What the library and the preload shim share, not installed:
 * ioctl.c, the one marshaling of the ioctls, linked into both; the
 * policy, between the shim's two files.  Hidden whatever the compiler's
 * flags: neither libdtimerfd.so nor the shim exports any of it.
 */
#ifndef DTFD_INTERNAL_H
#define DTFD_INTERNAL_H

#include <stdint.h>
#include <time.h>
#include <linux/dtimerfd.h>

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
int dtfd_stats_ioctl(int fd, struct dtfd_stats *stats);

/* preload.c: the policy, for preload-sleep.c */
#define DTFD_PRELOAD_CONF	"/etc/dtimerfd/preload.conf"
extern int dtfd_pol_waits;
int dtfd_policy(long long dur, unsigned long long *max_defer);

#pragma GCC visibility pop

#endif /* DTFD_INTERNAL_H */
