// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libdtimerfd: timerfd_create/settime/gettime on /dev/dtimerfd.
 *
 * The fast path of every call is one system call: timers are made by an
 * ioctl on one control descriptor per process (/dev/dtimerfd is a
 * factory, see dtimerfd(4)), opened on first use; ioctl.c marshals every
 * ioctl, for this file and the preload shim.  Errors are shaped
 * after timerfd's only when the kernel could not shape them itself: the
 * module sees nothing when the fd is bad or is not a dtimerfd, so for
 * those the library reproduces the order in which timerfd_settime(2)
 * checks its arguments, without ever dereferencing a caller's pointer
 * (a bad pointer must give EFAULT, not SIGSEGV).
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/timerfd.h>
#include <unistd.h>
#include <linux/capability.h>

#include "dtimerfd.h"
#include "internal.h"

#define DTFD_CREATE_FLAGS	(DTFD_CLOEXEC | DTFD_NONBLOCK)
/* the bits timerfd does not know, which the fallback and errors drop */
#define DTFD_OWN_FLAGS		(DTFD_TIMER_DEFERRABLE | DTFD_TIMER_PERCPU)

#ifndef CLOCK_BOOTTIME_ALARM
#define CLOCK_BOOTTIME_ALARM	9
#endif
#ifndef CLOCK_REALTIME_ALARM
#define CLOCK_REALTIME_ALARM	8
#endif

#if defined(SYS_timerfd_settime64) && !defined(__LP64__)
#define DTFD_SYS_TIMERFD_SETTIME \
	(sizeof(time_t) == 8 ? SYS_timerfd_settime64 : SYS_timerfd_settime)
#else
#define DTFD_SYS_TIMERFD_SETTIME	SYS_timerfd_settime
#endif

/*
 * DTIMERFD_FALLBACK=1: when the device is missing, hand out native
 * timerfds (deferrable timers become strict ones), so one binary runs
 * with and without the module.  Read once: the choice must not change
 * under a running program.
 */
static int fallback_enabled(void)
{
	static int enabled = -1;

	if (enabled < 0) {
		const char *v = getenv("DTIMERFD_FALLBACK");

		enabled = v && *v && strcmp(v, "0") != 0;
	}
	return enabled;
}

static int valid_clock(clockid_t clockid)
{
	switch (clockid) {
	case CLOCK_REALTIME:
	case CLOCK_MONOTONIC:
	case CLOCK_BOOTTIME:
	case CLOCK_REALTIME_ALARM:
	case CLOCK_BOOTTIME_ALARM:
		return 1;
	default:
		return 0;
	}
}

static int is_alarm_clock(clockid_t clockid)
{
	return clockid == CLOCK_REALTIME_ALARM ||
	       clockid == CLOCK_BOOTTIME_ALARM;
}

/* Whether the calling thread holds CAP_WAKE_ALARM in its effective set. */
static int have_wake_alarm(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data))
		return 1;	/* unknown: let the caller's errno stand */
	return !!(data[CAP_WAKE_ALARM / 32].effective &
		  (1U << (CAP_WAKE_ALARM % 32)));
}

/*
 * 1 when @fd is a dtimerfd timer, 0 when it is some other file, and -1
 * when it is not a descriptor timerfd would look at: not open, or opened
 * with O_PATH (timerfd's fd lookup skips those, so its answer is EBADF,
 * and our ioctl never reached the module).  Only used on error paths: a
 * timer answers DTFD_IOC_GET_STATS, which has no side effect.
 */
static int is_dtimerfd(int fd)
{
	struct dtfd_stats st;
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || (fl & O_PATH))
		return -1;
	return !dtfd_stats_ioctl(fd, &st);
}

DTFD_API int dtimerfd_create(clockid_t clockid, int flags)
{
	int fd, err;

	/* timerfd_create(2) checks flags and clock before anything else. */
	if ((flags & ~DTFD_CREATE_FLAGS) || !valid_clock(clockid)) {
		errno = EINVAL;
		return -1;
	}

	fd = dtfd_create_ioctl(clockid, flags);
	if (fd >= 0)
		return fd;
	err = errno;
	if ((err == ENOENT || err == ENXIO || err == ENODEV) &&
	    fallback_enabled())
		return timerfd_create(clockid, flags);
	/* ... and the capability before allocating a descriptor. */
	if (is_alarm_clock(clockid) && !have_wake_alarm())
		err = EPERM;
	else if (err == ENOENT || err == ENXIO)
		err = ENODEV;	/* module not loaded: see dtimerfd_create(3) */
	/*
	 * The module could not read our own struct dtfd_create, on our
	 * stack: the kernel could not fault the page in, out of memory.
	 * timerfd_create(2) never says EFAULT.
	 */
	else if (err == EFAULT)
		err = ENOMEM;
	errno = err;
	return -1;
}

/*
 * The module rejected nothing because it never saw the call: @fd is bad
 * or foreign.  timerfd_settime(2) would first copy in @new_value (EFAULT),
 * then check flags and values (EINVAL), and only then look at the fd.  The
 * kernel itself answers the first two questions when asked with fd -1,
 * which also keeps the caller's pointer out of our hands.
 */
static int settime_foreign(int flags, const struct itimerspec *new_value,
			   int fd_err)
{
	/* unknown bits stay set, so timerfd rejects them as we would */
	int mapped = flags & ~DTFD_OWN_FLAGS;

	/*
	 * The system call itself, never libc's wrapper: glibc's 32-bit one
	 * converts the caller's struct in user space and would crash on a
	 * bad pointer.  The syscall matching this build's struct itimerspec.
	 */
	if (syscall(DTFD_SYS_TIMERFD_SETTIME, -1, mapped, new_value, NULL) &&
	    errno != EBADF)
		return errno == ENOSYS ? fd_err : errno;
	return fd_err;
}

DTFD_API int dtimerfd_settime(int fd, int flags,
			      const struct itimerspec *new_value,
			      struct itimerspec *old_value)
{
	int err, kind;

	if (!dtfd_settime_ioctl(fd, flags, new_value, old_value))
		return 0;

	/* not a timer: a native timerfd from the fallback, or anything */
	if (errno == ENOTTY && fallback_enabled())
		return timerfd_settime(fd, flags & ~DTFD_OWN_FLAGS,
				       new_value, old_value);
	err = errno;
	kind = is_dtimerfd(fd);
	if (kind < 0)
		err = settime_foreign(flags, new_value, EBADF);
	else if (!kind)
		err = settime_foreign(flags, new_value, EINVAL);
	errno = err;
	return -1;
}

DTFD_API int dtimerfd_gettime(int fd, struct itimerspec *curr_value)
{
	int err, kind;

	if (!dtfd_gettime_ioctl(fd, curr_value))
		return 0;

	if (errno == ENOTTY && fallback_enabled())
		return timerfd_gettime(fd, curr_value);

	/* timerfd_gettime(2): EBADF, then EINVAL (not a timerfd), then EFAULT */
	err = errno;
	kind = is_dtimerfd(fd);
	if (kind < 0)
		err = EBADF;
	else if (!kind)
		err = EINVAL;
	errno = err;
	return -1;
}

/* Tolerance and statistics failed: EINVAL on anything but ours. */
static int ioctl_error(int fd)
{
	int err = errno, kind = is_dtimerfd(fd);

	errno = kind < 0 ? EBADF : kind ? err : EINVAL;
	return -1;
}

DTFD_API int dtimerfd_set_tolerance(int fd, uint64_t slack_ns,
				    uint64_t max_defer_ns)
{
	if (!dtfd_tolerance_ioctl(fd, slack_ns, max_defer_ns))
		return 0;
	return ioctl_error(fd);
}

DTFD_API int dtimerfd_get_stats(int fd, struct dtfd_stats *stats)
{
	if (!dtfd_stats_ioctl(fd, stats))
		return 0;
	return ioctl_error(fd);
}

/*
 * A sleep on a one-shot timer of its own: deferrable, it never wakes an
 * idle CPU.  Error numbers as clock_nanosleep(2): EINVAL for a bad clock,
 * flags or request, EINTR (with *remain for relative sleeps) when a signal
 * handler interrupted it, ENODEV without the module.
 */
DTFD_API int dtimerfd_nanosleep(clockid_t clockid, int flags,
				const struct timespec *request,
				struct timespec *remain)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } }, left;
	uint64_t ticks;
	int fd, err = 0;
	ssize_t r;

	if (flags & ~(DTFD_TIMER_ABSTIME | DTFD_OWN_FLAGS))
		return EINVAL;
	fd = dtimerfd_create(clockid, DTFD_CLOEXEC);
	if (fd < 0)
		return errno;

	/* the request is the kernel's to read: EFAULT, not SIGSEGV */
	its.it_value.tv_sec = 0;
	if (syscall(SYS_process_vm_readv, getpid(),
		    &(struct iovec){ &its.it_value, sizeof(its.it_value) }, 1UL,
		    &(struct iovec){ (void *)request, sizeof(its.it_value) }, 1UL,
		    0UL) != (long)sizeof(its.it_value)) {
		err = EFAULT;
		goto out;
	}
	if (its.it_value.tv_nsec < 0 || its.it_value.tv_nsec >= 1000000000L ||
	    its.it_value.tv_sec < 0) {
		err = EINVAL;
		goto out;
	}
	/* a zero relative request returns at once; settime would disarm */
	if (!its.it_value.tv_sec && !its.it_value.tv_nsec) {
		if (flags & DTFD_TIMER_ABSTIME)
			its.it_value.tv_nsec = 1;	/* long past: fires at once */
		else
			goto out;
	}
	if (dtimerfd_settime(fd, flags, &its, NULL)) {
		err = errno;
		goto out;
	}
	/*
	 * poll(), not read(): a handler installed with SA_RESTART would
	 * restart a read, and a sleep ends whatever SA_RESTART says.
	 */
	r = poll(&(struct pollfd){ .fd = fd, .events = POLLIN }, 1, -1);
	if (r > 0)
		r = read(fd, &ticks, sizeof(ticks));
	if (r < 0) {
		err = errno;
		if (err == EINTR && remain && !(flags & DTFD_TIMER_ABSTIME) &&
		    !dtimerfd_gettime(fd, &left))
			*remain = left.it_value;
	}
out:
	close(fd);
	return err;
}
