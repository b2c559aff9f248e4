/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tests/abi: what abi.c (the control descriptor, CREATE) shares with its
 * units, abi/time.c (the settime and gettime ioctls, both layouts) and
 * abi/misc.c (unknown ioctls, alarm clocks, the library's descriptors).
 */
#ifndef DTFD_TESTS_ABI_H
#define DTFD_TESTS_ABI_H

#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>

#include "dtimerfd.h"

/* the settime and gettime ioctls of this build's struct itimerspec */
#define SETTIME_NATIVE \
	(sizeof(time_t) == 8 ? DTFD_IOC_SETTIME64 : DTFD_IOC_SETTIME32)
#define GETTIME_NATIVE \
	(sizeof(time_t) == 8 ? DTFD_IOC_GETTIME64 : DTFD_IOC_GETTIME32)

/* timerfd's system calls per layout (32: only in 32-bit processes) */
#if defined(SYS_timerfd_settime64) && !defined(__LP64__)
#define SYS_SETTIME64	SYS_timerfd_settime64
#define SYS_GETTIME64	SYS_timerfd_gettime64
#else
#define SYS_SETTIME64	SYS_timerfd_settime
#define SYS_GETTIME64	SYS_timerfd_gettime
#endif
#define NATIVE_HAS_32	(sizeof(long) == 4)

int ctl_open(void);
int raw_create(int ctl, int clockid, unsigned int flags);
int timer_open(int ctl);
int raw_settime(int fd, unsigned long cmd, unsigned int flags,
		const void *nv, void *ov);
struct dtfd_features get_features(int fd);
int next_fd(void);
struct dtfd_itimerspec64 its64(long long v, long long iv);
struct dtfd_itimerspec32 its32(long long v, long long iv);
int have_its32(int timer);
int fd_cloexec(int fd);

#endif
