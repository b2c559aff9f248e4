/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every ioctl of <linux/dtimerfd.h>, listed once for the tests and the
 * benchmark: the fuzzer (fuzz.c, fuzz/) draws its calls, builds and checks
 * their arguments and checks their errnos from here, abi.c pins the
 * numbers and walks the descriptor kinds from here.
 *
 * DTFD_IOCTLS(X) calls X(NAME, number, argument, descriptor, errnos):
 *   NAME	 DTFD_IOC_NAME
 *   number	 its value, the same in the 32- and 64-bit builds (one layout): abi.c
 *		 turns these into _Static_asserts, so the ABI cannot drift
 *   argument	 the type the ioctl reads or writes
 *   descriptor	 IOC_CTL (the control descriptor, an open /dev/dtimerfd)
 *		 or IOC_TIMER (a descriptor DTFD_IOC_CREATE returned)
 *   errnos	 (E1, E2, ...): every errno the call may give on its own
 *		 kind of descriptor; EBADF because the fuzzer calls fd -1
 *
 * The build fails when the uapi header defines an ioctl that this table
 * lacks (ioctls-check.c against build/uapi-ioctls.h, generated from the
 * header by the Makefile), and a row the header lacks does not compile.
 */
#ifndef DTFD_TESTS_IOCTLS_H
#define DTFD_TESTS_IOCTLS_H

#include <errno.h>
#include <linux/dtimerfd.h>

#define IOC_CTL		0
#define IOC_TIMER	1

#define DTFD_IOCTLS(X)							\
	X(FEATURES, 0x8020D700u, struct dtfd_features, IOC_CTL,		\
	  (EFAULT, EBADF))						\
	X(CREATE, 0x4008D701u, struct dtfd_create, IOC_CTL,		\
	  (EFAULT, EINVAL, EPERM, EBADF))				\
	X(SETTIME64, 0x4018D710u, struct dtfd_settime, IOC_TIMER,	\
	  (EFAULT, EINVAL, EPERM, ECANCELED, EBADF))			\
	X(SETTIME32, 0x4018D711u, struct dtfd_settime, IOC_TIMER,	\
	  (EFAULT, EINVAL, EPERM, ECANCELED, EBADF))			\
	X(GETTIME64, 0x8020D712u, struct dtfd_itimerspec64, IOC_TIMER,	\
	  (EFAULT, EBADF))						\
	X(GETTIME32, 0x8010D713u, struct dtfd_itimerspec32, IOC_TIMER,	\
	  (EFAULT, EBADF))						\
	X(SET_TICKS, 0x4008D714u, __u64, IOC_TIMER,			\
	  (EFAULT, EINVAL, ECANCELED, EBADF))				\
	X(SET_TOLERANCE, 0x4018D715u, struct dtfd_tolerance, IOC_TIMER,	\
	  (EFAULT, EINVAL, EBADF))					\
	X(GET_TOLERANCE, 0x8018D716u, struct dtfd_tolerance, IOC_TIMER,	\
	  (EFAULT, EBADF))						\
	X(GET_STATS, 0x8030D717u, struct dtfd_stats, IOC_TIMER,	\
	  (EFAULT, EBADF))

/* IOC_FEATURES, IOC_CREATE, ...: an ioctl's index in the table */
#define IOC_ENUM(name, nr, arg, fd, errs)	IOC_##name,
enum dtfd_ioctl {
	DTFD_IOCTLS(IOC_ENUM)
	IOC_N
};
#undef IOC_ENUM

/* errnos as an initializer: { IOC_ERRS(errs) } */
#define IOC_ERRS(errs)		IOC_UNPAREN errs
#define IOC_UNPAREN(...)	__VA_ARGS__

struct dtfd_ioctl_info {
	const char *name;	/* "FEATURES" */
	unsigned long cmd;	/* DTFD_IOC_FEATURES */
	unsigned int size;	/* sizeof its argument */
	int fd;			/* IOC_CTL or IOC_TIMER */
};

#define IOC_INFO(name, nr, arg, fd, errs) \
	[IOC_##name] = { #name, DTFD_IOC_##name, sizeof(arg), fd },
static const struct dtfd_ioctl_info dtfd_ioctls[IOC_N]
	__attribute__((unused)) = {
	DTFD_IOCTLS(IOC_INFO)
};
#undef IOC_INFO

/* The table's index of @cmd; IOC_N when it is none of ours. */
static inline enum dtfd_ioctl dtfd_ioctl_index(unsigned long cmd)
{
	unsigned int i;

	for (i = 0; i < IOC_N; i++)
		if (dtfd_ioctls[i].cmd == cmd)
			return (enum dtfd_ioctl)i;
	return IOC_N;
}

/*
 * A number of our type that is no ioctl of ours: the module rejects it
 * with ENOTTY before any work (the benchmark's "null ioctl").
 */
#define DTFD_IOC_NONE		_IO(DTFD_IOC_MAGIC, 0x7f)
/*
 * Numbers that are not ours, ENOTTY on either kind of descriptor: v1's
 * SETTIME, GETTIME, SET_TICKS and GETTIME64 (ABI 1, gone), the next free
 * number and the last, ours with no argument or a stray one, ours with
 * the other layout's or kind's argument, DTFD_IOC_NONE, timerfd's
 * SET_TICKS, 'T' 0x7f and the extremes.  Ours with another size or
 * direction are made from the table as well (abi.c, fuzz.c).
 */
#define DTFD_IOC_NOT_OURS						\
	0x4018D702UL, 0x4010D703UL, 0x4008D704UL, 0x8020D708UL,	\
	_IOW(DTFD_IOC_MAGIC, 0x18, __u64),				\
	_IOW(DTFD_IOC_MAGIC, 255, __u64),				\
	_IO(DTFD_IOC_MAGIC, 0), _IO(DTFD_IOC_MAGIC, 5),			\
	_IOW(DTFD_IOC_MAGIC, 5, __u64), _IOR(DTFD_IOC_MAGIC, 9, __u64),	\
	_IOW(DTFD_IOC_MAGIC, 0x00, struct dtfd_features),		\
	_IOR(DTFD_IOC_MAGIC, 0x01, struct dtfd_create),			\
	_IOW(DTFD_IOC_MAGIC, 0x10, __u64),				\
	_IOR(DTFD_IOC_MAGIC, 0x10, struct dtfd_settime),		\
	_IOW(DTFD_IOC_MAGIC, 0x12, struct dtfd_itimerspec64),		\
	_IOR(DTFD_IOC_MAGIC, 0x13, struct dtfd_itimerspec64),		\
	DTFD_IOC_NONE, _IOW('T', 0, __u64), _IO('T', 0x7f),		\
	0, 1, 0xffffffffUL

#define IOC_NOT_NONE(name, nr, arg, fd, errs) \
	_Static_assert(_IOC_NR(DTFD_IOC_##name) != _IOC_NR(DTFD_IOC_NONE), \
		       "DTFD_IOC_NONE is DTFD_IOC_" #name);
DTFD_IOCTLS(IOC_NOT_NONE)
#undef IOC_NOT_NONE

#endif /* DTFD_TESTS_IOCTLS_H */
