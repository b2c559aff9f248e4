/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * libdtimerfd: timerfd_create(2), timerfd_settime(2) and timerfd_gettime(2)
 * on /dev/dtimerfd, plus DTFD_TIMER_DEFERRABLE.  Porting a timerfd program
 * is a rename: every function returns -1 and sets errno as its timerfd
 * counterpart does.
 */
#ifndef DTIMERFD_H
#define DTIMERFD_H

#include <fcntl.h>		/* O_CLOEXEC, O_NONBLOCK */
#include <time.h>		/* clockid_t, struct itimerspec */
#include <linux/dtimerfd.h>	/* the uapi header: flag values, ioctls */

#ifdef __cplusplus
extern "C" {
#endif

/* creation flags, equal to the open(2) flags as TFD_* are */
#define DTFD_CLOEXEC		O_CLOEXEC
#define DTFD_NONBLOCK		O_NONBLOCK

/* The device the library opens; the DTIMERFD_DEVICE variable overrides it. */
#define DTIMERFD_DEVICE		"/dev/dtimerfd"

int dtimerfd_create(clockid_t clockid, int flags);
int dtimerfd_settime(int fd, int flags, const struct itimerspec *new_value,
		     struct itimerspec *old_value);
int dtimerfd_gettime(int fd, struct itimerspec *curr_value);

#ifdef __cplusplus
}
#endif

#endif /* DTIMERFD_H */
