// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The one marshaling of the ioctls (include/uapi/linux/dtimerfd.h), for
 * the library (dtimerfd.c) and the preload shim (preload.c,
 * preload-sleep.c) alike: the control descriptor and DTFD_IOC_CREATE, the
 * settime and gettime ioctls of this build's struct itimerspec, tolerance
 * and statistics.  Each returns what ioctl(2) returned, errno as the
 * module (or open(2), or the VFS for a descriptor that is not ours) set
 * it: shaping errors after timerfd's is the caller's business.  Nothing
 * here is exported (internal.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <unistd.h>

#include "dtimerfd.h"
#include "internal.h"

/* The ioctls matching this build's struct itimerspec */
#define DTFD_IOC_SETTIME \
	(sizeof(time_t) == 8 ? DTFD_IOC_SETTIME64 : DTFD_IOC_SETTIME32)
#define DTFD_IOC_GETTIME \
	(sizeof(time_t) == 8 ? DTFD_IOC_GETTIME64 : DTFD_IOC_GETTIME32)

static const char *device_path(void)
{
	const char *path = secure_getenv("DTIMERFD_DEVICE");

	return path && *path ? path : DTIMERFD_DEVICE;
}

/*
 * The lowest number dtfd_fd_high() moves a descriptor to: the top quarter
 * of what the program may open (and of what select() can name), where a
 * program's own descriptors, always the lowest free numbers, rarely go.
 */
int dtfd_fd_floor(void)
{
	struct rlimit rl;
	rlim_t top = FD_SETSIZE;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < top)
		top = rl.rlim_cur;
	return (int)(top - top / 4);
}

int dtfd_fd_high(int fd, int floor)
{
	int hi;

	if (fd >= floor)
		return fd;
	hi = fcntl(fd, F_DUPFD_CLOEXEC, floor);
	if (hi < 0)
		return -1;
	close(fd);
	return hi;
}

/*
 * The control descriptor, opened on first use, O_CLOEXEC: it holds no
 * state, so a child of fork() shares it and a new program opens its own.
 * Threads race to open it and the first to publish wins.  The library and
 * the shim, both in one process, each have their own.  It sits high, as
 * the shim's timers do: a program's descriptors get the numbers they
 * would get with timerfd (the first timer of a program is 3, not 4).
 */
static atomic_int ctl_fd = -1;

static int control_fd(void)
{
	int fd = atomic_load_explicit(&ctl_fd, memory_order_acquire);
	int expected = -1, hi;

	if (fd >= 0)
		return fd;
	fd = open(device_path(), O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -1;
	/* no room up there (a small RLIMIT_NOFILE): where it is, then */
	hi = dtfd_fd_high(fd, dtfd_fd_floor());
	if (hi >= 0)
		fd = hi;
	if (!atomic_compare_exchange_strong(&ctl_fd, &expected, fd)) {
		close(fd);
		fd = expected;
	}
	return fd;
}

/*
 * The program closed the control descriptor under us (daemons close
 * every descriptor they did not open; close_range() after fork()), and
 * the number may now be one of its own files: forget it, never close it,
 * and open another.
 */
static void control_fd_lost(int fd)
{
	atomic_compare_exchange_strong(&ctl_fd, &fd, -1);
}

int dtfd_create_ioctl(clockid_t clockid, int flags)
{
	struct dtfd_create arg = { .clockid = clockid, .flags = flags };
	int ctl, fd, tries;

	for (tries = 0; tries < 2; tries++) {
		ctl = control_fd();
		if (ctl < 0)
			return -1;
		fd = ioctl(ctl, DTFD_IOC_CREATE, &arg);
		if (fd >= 0 || (errno != EBADF && errno != ENOTTY))
			return fd;
		control_fd_lost(ctl);
	}
	return -1;
}

/* The caller's pointers go to the module as they are: EFAULT, not SIGSEGV. */
int dtfd_settime_ioctl(int fd, int flags, const struct itimerspec *new_value,
		       struct itimerspec *old_value)
{
	struct dtfd_settime arg = {
		.flags = (unsigned int)flags,
		.new_value = (uintptr_t)new_value,
		.old_value = (uintptr_t)old_value,
	};

	return ioctl(fd, DTFD_IOC_SETTIME, &arg);
}

/* The itimerspec itself is the argument. */
int dtfd_gettime_ioctl(int fd, struct itimerspec *curr_value)
{
	return ioctl(fd, DTFD_IOC_GETTIME, curr_value);
}

int dtfd_tolerance_ioctl(int fd, uint64_t slack_ns, uint64_t max_defer_ns)
{
	struct dtfd_tolerance tol = {
		.slack_ns = slack_ns,
		.max_defer_ns = max_defer_ns,
	};

	return ioctl(fd, DTFD_IOC_SET_TOLERANCE, &tol);
}

int dtfd_get_tolerance_ioctl(int fd, uint64_t *slack_ns, uint64_t *max_defer_ns)
{
	struct dtfd_tolerance tol;
	int r = ioctl(fd, DTFD_IOC_GET_TOLERANCE, &tol);

	if (!r) {
		*slack_ns = tol.slack_ns;
		*max_defer_ns = tol.max_defer_ns;
	}
	return r;
}

int dtfd_stats_ioctl(int fd, struct dtfd_stats *stats)
{
	return ioctl(fd, DTFD_IOC_GET_STATS, stats);
}
