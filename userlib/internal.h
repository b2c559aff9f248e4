/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * What the library and the preload shim share, not installed:
 * ioctl.c, the one marshaling of the ioctls, linked into both; the
 * policy, between the shim's two files.  Hidden whatever the compiler's
 * flags: neither libdtimerfd.so nor the shim exports any of it.
 */
#ifndef DTFD_INTERNAL_H
#define DTFD_INTERNAL_H

#include <stddef.h>
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

/* preload.c: the policy, for preload-sleep.c */
#define DTFD_PRELOAD_CONF	"/etc/dtimerfd/preload.conf"
extern int dtfd_pol_waits;
int dtfd_policy(long long dur, unsigned long long *max_defer);

#pragma GCC visibility pop

#endif /* DTFD_INTERNAL_H */
