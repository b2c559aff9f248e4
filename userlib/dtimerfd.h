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
#include <stdint.h>
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

/*
 * Beyond timerfd (dtimerfd(7)):
 * - dtimerfd_set_tolerance(): slack_ns lets a strict timer fire anywhere in
 *   [expiry, expiry + slack_ns]; max_defer_ns bounds how long a deferrable
 *   timer waits for its CPU to wake.  0 and 0 are timerfd's behaviour and
 *   unbounded deferral.  From the next arming on.
 * - dtimerfd_get_stats(): expirations, deliveries and their lateness.
 * - dtimerfd_nanosleep(): clock_nanosleep(2) with DTFD_TIMER_DEFERRABLE
 *   (and TIMER_ABSTIME == DTFD_TIMER_ABSTIME); like clock_nanosleep it
 *   returns 0 or an error number, and fills remain on EINTR.
 */
int dtimerfd_set_tolerance(int fd, uint64_t slack_ns, uint64_t max_defer_ns);
int dtimerfd_get_stats(int fd, struct dtfd_stats *stats);
int dtimerfd_nanosleep(clockid_t clockid, int flags,
		       const struct timespec *request, struct timespec *remain);

#ifdef __cplusplus
}
#endif

#endif /* DTIMERFD_H */
