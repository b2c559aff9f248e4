/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * Between dtimerfd.c and the preload shim, which links it in (built with
 * DTFD_PRELOAD): one marshaling of the ioctls, and the native timerfd
 * calls the shim hands back to dtimerfd.c.  Not installed.
 */
#ifndef DTFD_INTERNAL_H
#define DTFD_INTERNAL_H

#include <time.h>

/* dtimerfd.c: the ioctls of this build's struct itimerspec */
int dtfd_settime_ioctl(int fd, int flags, const struct itimerspec *new_value,
		       struct itimerspec *old_value);
int dtfd_gettime_ioctl(int fd, struct itimerspec *curr_value);

/* preload.c: libc's timerfd calls, under the shim's interposers */
int dtfd_real_timerfd_create(clockid_t clockid, int flags);
int dtfd_real_timerfd_settime(int fd, int flags, const struct itimerspec *nv,
			      struct itimerspec *ov);
int dtfd_real_timerfd_gettime(int fd, struct itimerspec *cur);

/* preload.c: the policy, for preload-sleep.c */
#define DTFD_PRELOAD_CONF	"/etc/dtimerfd/preload.conf"
extern int dtfd_pol_waits;
int dtfd_policy(long long dur, unsigned long long *max_defer);

#endif /* DTFD_INTERNAL_H */
