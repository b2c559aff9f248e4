// SPDX-License-Identifier: GPL-2.0
/*
 * The harness's backends (harness.h: struct tfd_ops): the kernel's
 * timerfd, dtimerfd, dtimerfd with DTFD_TIMER_DEFERRABLE added to every
 * settime, and (-b intree, on a kernel with patches/ applied) the kernel's
 * timerfd with TFD_TIMER_DEFERRABLE added to every settime.
 */
#include <sys/syscall.h>

#include "harness.h"

static int fd_clockid(int fd)
{
	struct h_fdinfo fi;

	return h_fdinfo(fd, &fi) || fi.nlines < 1 ? -1 : fi.clockid;
}

/*
 * DTFD_TIMER_DEFERRABLE added to every settime.  An alarm timer cannot be
 * deferrable (it exists to wake the machine): the module documents EINVAL
 * for that, which is checked here, and the call is then made without the
 * flag so the rest of the body still compares with native.
 */
typedef int settime_fn(int fd, int flags, const struct itimerspec *nv,
		       struct itimerspec *ov);

/* @settime with the deferrable bit (1 << 2), which both flags spell */
static int settime_deferred(settime_fn *settime, int fd, int flags,
			    const struct itimerspec *nv, struct itimerspec *ov)
{
	/*
	 * A test passing bit 3 means timerfd's unknown bit: PERCPU alone,
	 * which is EINVAL as timerfd's answer is, not deferral per CPU.
	 */
	int r = settime(fd, flags & DTFD_TIMER_PERCPU ? flags :
			flags | DTFD_TIMER_DEFERRABLE, nv, ov);
	int c;

	if (!r || errno != EINVAL)
		return r;
	c = fd_clockid(fd);
	errno = EINVAL;
	if (c != CLOCK_REALTIME_ALARM && c != CLOCK_BOOTTIME_ALARM)
		return r;
	return settime(fd, flags, nv, ov);
}

static int defer_settime(int fd, int flags, const struct itimerspec *nv,
			 struct itimerspec *ov)
{
	return settime_deferred(dtimerfd_settime, fd, flags, nv, ov);
}

/*
 * The native reference is the kernel's timerfd.  On x86_64 glibc's
 * wrappers are plain system calls; a 32-bit glibc with 32-bit time_t
 * converts struct itimerspec in user space, dereferencing the caller's
 * pointers (SIGSEGV instead of EFAULT), so there the legacy 32-bit system
 * calls are made directly, which is what the kernel itself answers.
 */
static int native_settime(int fd, int flags, const struct itimerspec *nv,
			  struct itimerspec *ov)
{
	if (sizeof(time_t) == 8)
		return timerfd_settime(fd, flags, nv, ov);
	return syscall(SYS_timerfd_settime, fd, flags, nv, ov);
}

static int native_gettime(int fd, struct itimerspec *cur)
{
	if (sizeof(time_t) == 8)
		return timerfd_gettime(fd, cur);
	return syscall(SYS_timerfd_gettime, fd, cur);
}

/*
 * The in-tree flag is the module's DTFD_TIMER_DEFERRABLE value, with the
 * same EINVAL on the alarm clocks: one wrapper serves both.
 */
_Static_assert(TFD_TIMER_DEFERRABLE == DTFD_TIMER_DEFERRABLE,
	       "the in-tree flag and the module's differ");

static int intree_settime(int fd, int flags, const struct itimerspec *nv,
			  struct itimerspec *ov)
{
	return settime_deferred(native_settime, fd, flags, nv, ov);
}

const struct tfd_ops native_ops = {
	"native", BK_NATIVE, timerfd_create, native_settime, native_gettime, 0,
};
const struct tfd_ops dtfd_ops = {
	"dtimerfd", BK_DTFD, dtimerfd_create, dtimerfd_settime,
	dtimerfd_gettime, 0,
};
const struct tfd_ops defer_ops = {
	"deferrable", BK_DEFER, dtimerfd_create, defer_settime,
	dtimerfd_gettime, 1,
};
const struct tfd_ops intree_ops = {
	"intree", BK_NATIVE, timerfd_create, intree_settime, native_gettime, 1,
};
