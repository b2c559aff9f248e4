/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * dtimerfd: timerfd-compatible timers with an optional deferrable mode
 * that never wakes an idle CPU.
 *
 * /dev/dtimerfd is a factory, as /dev/userfaultfd is: opening it gives a
 * control descriptor, and DTFD_IOC_CREATE on that returns a new timer
 * descriptor (anon_inode:[dtimerfd]), bound to its clock for life, as
 * timerfd_create(2) returns one.  Every other ioctl, read(2), poll(2) and
 * fdinfo work on the timer descriptor, which is an ordinary descriptor:
 * dup, fork, exec and SCM_RIGHTS carry it, close frees it.  The control
 * descriptor holds no state; one per process is enough.
 *
 * Every structure below has the same layout for 32-bit and 64-bit
 * processes; padding must be zero and unknown flag bits are rejected with
 * EINVAL, so fields can be given a meaning later.  Time values are read
 * from and written to the caller's own struct itimerspec, with one ioctl
 * per layout as timerfd has one system call per layout (settime and
 * settime64), so a bad pointer fails with EFAULT exactly where
 * timerfd_settime(2) would fail.
 */
#ifndef _UAPI_LINUX_DTIMERFD_H
#define _UAPI_LINUX_DTIMERFD_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define DTFD_ABI_VERSION	2

/*
 * settime flags.  The first two equal TFD_TIMER_ABSTIME and
 * TFD_TIMER_CANCEL_ON_SET; DTFD_TIMER_DEFERRABLE is rejected by
 * timerfd_settime(2), so a program cannot pass it there by mistake.
 */
#define DTFD_TIMER_ABSTIME		(1 << 0)
#define DTFD_TIMER_CANCEL_ON_SET	(1 << 1)
#define DTFD_TIMER_DEFERRABLE		(1 << 2)
/*
 * With DTFD_TIMER_DEFERRABLE only: ride the wake-ups of the CPU that armed
 * the timer, not those of whichever CPU is awake (the kernel's own
 * TIMER_DEFERRABLE).  Without DTFD_TIMER_DEFERRABLE, EINVAL.
 */
#define DTFD_TIMER_PERCPU		(1 << 3)

/* Bits of dtfd_features.features */
#define DTFD_FEATURE_DEFERRABLE		(1ULL << 0)
#define DTFD_FEATURE_CANCEL_ON_SET	(1ULL << 1)
#define DTFD_FEATURE_ALARM		(1ULL << 2)
#define DTFD_FEATURE_TIMENS		(1ULL << 3)
#define DTFD_FEATURE_SLACK		(1ULL << 4)	/* dtfd_tolerance.slack_ns */
#define DTFD_FEATURE_BOUNDED		(1ULL << 5)	/* dtfd_tolerance.max_defer_ns */
#define DTFD_FEATURE_STATS		(1ULL << 6)	/* DTFD_IOC_GET_STATS */
#define DTFD_FEATURE_ANY_CPU		(1ULL << 7)	/* deferrable rides any CPU */

/**
 * struct dtfd_features - what this module supports (DTFD_IOC_FEATURES)
 * @version:	  DTFD_ABI_VERSION of the module
 * @pad:	  zero
 * @features:	  DTFD_FEATURE_* bits
 * @settime_flags: every flag bit DTFD_IOC_SETTIME accepts
 * @clocks:	  bit N set when clock id N can be bound
 */
struct dtfd_features {
	__u32 version;
	__u32 pad;
	__u64 features;
	__u64 settime_flags;
	__u64 clocks;
};

/**
 * struct dtfd_create - make a timer (DTFD_IOC_CREATE on the control fd)
 * @clockid:	CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME,
 *		CLOCK_REALTIME_ALARM or CLOCK_BOOTTIME_ALARM
 * @flags:	O_CLOEXEC and O_NONBLOCK, as timerfd_create(2) takes them
 *		(TFD_CLOEXEC, TFD_NONBLOCK)
 *
 * The ioctl returns the new timer descriptor.  Errors as
 * timerfd_create(2): EINVAL for other flags or clocks, EPERM for an alarm
 * clock without CAP_WAKE_ALARM, EMFILE, ENFILE, ENOMEM.
 */
struct dtfd_create {
	__s32 clockid;
	__u32 flags;
};

/**
 * struct dtfd_settime - arm or disarm the timer (DTFD_IOC_SETTIME64 and
 * DTFD_IOC_SETTIME32)
 * @flags:	DTFD_TIMER_* bits
 * @pad:	zero
 * @new_value:	user address of the new struct itimerspec
 * @old_value:	user address receiving the previous setting, or 0
 *
 * DTFD_IOC_SETTIME64 reads and writes struct __kernel_itimerspec (64-bit
 * time_t, struct dtfd_itimerspec64); DTFD_IOC_SETTIME32 the old 32-bit
 * struct itimerspec (struct dtfd_itimerspec32), only on kernels that keep
 * 32-bit time (CONFIG_COMPAT_32BIT_TIME; ENOTTY otherwise).
 */
struct dtfd_settime {
	__u32 flags;
	__u32 pad;
	__u64 new_value;
	__u64 old_value;
};

/**
 * struct dtfd_itimerspec64 - struct __kernel_itimerspec: the 64-bit time_t
 * struct itimerspec, the argument of DTFD_IOC_GETTIME64 itself
 * @interval_sec: it_interval.tv_sec
 * @interval_nsec: it_interval.tv_nsec
 * @value_sec:	  it_value.tv_sec
 * @value_nsec:	  it_value.tv_nsec
 */
struct dtfd_itimerspec64 {
	__s64 interval_sec;
	__s64 interval_nsec;
	__s64 value_sec;
	__s64 value_nsec;
};

/**
 * struct dtfd_itimerspec32 - the old 32-bit struct itimerspec, the argument
 * of DTFD_IOC_GETTIME32 itself
 * @interval_sec: it_interval.tv_sec
 * @interval_nsec: it_interval.tv_nsec
 * @value_sec:	  it_value.tv_sec
 * @value_nsec:	  it_value.tv_nsec
 */
struct dtfd_itimerspec32 {
	__s32 interval_sec;
	__s32 interval_nsec;
	__s32 value_sec;
	__s32 value_nsec;
};

/**
 * struct dtfd_tolerance - how late the timer may be delivered
 * @slack_ns:	  strict timers: any time in [expiry, expiry + slack_ns], so
 *		  the kernel can serve it with another wake-up
 *		  (hrtimer_start_range_ns()); 0, the default, is timerfd's
 *		  exact expiry.  Alarm timers ignore it.
 * @max_defer_ns: deferrable timers: delivered no later than expiry +
 *		  max_defer_ns even when their CPU stays idle; 0, the
 *		  default, defers without bound.
 * @flags:	  zero
 * @pad:	  zero
 *
 * DTFD_IOC_SET_TOLERANCE takes effect from the next time the timer is
 * armed: settime, or the re-arming of a periodic timer by read or gettime.
 */
struct dtfd_tolerance {
	__u64 slack_ns;
	__u64 max_defer_ns;
	__u32 flags;
	__u32 pad;
};

/**
 * struct dtfd_stats - what the timer did since it was created
 * @expirations:   expiry times passed, overruns included
 * @deliveries:	   times expirations were delivered (woke readers), by the
 *		   timer itself or by a read, poll or gettime that found them due
 * @late_total_ns: sum over the deliveries of how late each was
 * @late_max_ns:   the latest delivery
 * @deferred:	   deliveries later than one jiffy past their expiry
 * @backstop:	   deliveries made by the max_defer_ns bound
 *
 * A delivery is late by the time from its expiry, or from the settime that
 * set it when that expiry had already passed, to the delivery, on the
 * timer's clock (a CLOCK_REALTIME step past an expiry counts); the sum
 * saturates at ~0.
 */
struct dtfd_stats {
	__u64 expirations;
	__u64 deliveries;
	__u64 late_total_ns;
	__u64 late_max_ns;
	__u64 deferred;
	__u64 backstop;
};

#define DTFD_IOC_MAGIC		0xD7

/* On the control descriptor (an open /dev/dtimerfd) */
#define DTFD_IOC_FEATURES	_IOR(DTFD_IOC_MAGIC, 0x00, struct dtfd_features)
#define DTFD_IOC_CREATE		_IOW(DTFD_IOC_MAGIC, 0x01, struct dtfd_create)

/* On a timer descriptor; timerfd_settime(2) and timerfd_gettime(2) */
#define DTFD_IOC_SETTIME64	_IOW(DTFD_IOC_MAGIC, 0x10, struct dtfd_settime)
#define DTFD_IOC_SETTIME32	_IOW(DTFD_IOC_MAGIC, 0x11, struct dtfd_settime)
#define DTFD_IOC_GETTIME64	_IOR(DTFD_IOC_MAGIC, 0x12, struct dtfd_itimerspec64)
#define DTFD_IOC_GETTIME32	_IOR(DTFD_IOC_MAGIC, 0x13, struct dtfd_itimerspec32)
/* Same rules as TFD_IOC_SET_TICKS: 0 is EINVAL, sets (not adds) the count */
#define DTFD_IOC_SET_TICKS	_IOW(DTFD_IOC_MAGIC, 0x14, __u64)
#define DTFD_IOC_SET_TOLERANCE	_IOW(DTFD_IOC_MAGIC, 0x15, struct dtfd_tolerance)
#define DTFD_IOC_GET_TOLERANCE	_IOR(DTFD_IOC_MAGIC, 0x16, struct dtfd_tolerance)
#define DTFD_IOC_GET_STATS	_IOR(DTFD_IOC_MAGIC, 0x17, struct dtfd_stats)

#endif /* _UAPI_LINUX_DTIMERFD_H */
