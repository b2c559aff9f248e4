// SPDX-License-Identifier: GPL-2.0
/*
 * The dtimerfd ioctl ABI (version 2), through raw ioctls: /dev/dtimerfd
 * is a factory, its control descriptor answers DTFD_IOC_FEATURES and
 * DTFD_IOC_CREATE only, and every timer ioctl works on the timer
 * descriptors CREATE returns, and only there (ENOTTY on the other kind).
 * One layout for 32- and 64-bit processes (checked at build time against
 * the same numbers in both builds), zero padding and unknown bits ->
 * EINVAL, unknown commands -> ENOTTY, CREATE's checks in
 * timerfd_create(2)'s order, the flags of the descriptors it returns,
 * both itimerspec layouts (SETTIME64/GETTIME64 and SETTIME32/GETTIME32,
 * compared with timerfd's settime/settime64 system call pair).  Items 1,
 * 2, 3, 5, 12, 46, 54, 55 for the raw interface.
 */
#include <dirent.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include "harness.h"
#include "ioctls.h"

/* the same literals in the 32- and the 64-bit build: one layout */
#define CHECK_LAYOUT(type, size) \
	_Static_assert(sizeof(struct type) == (size), #type " size")
#define CHECK_OFF(type, field, off) \
	_Static_assert(offsetof(struct type, field) == (off), \
		       #type "." #field " offset")

_Static_assert(DTFD_ABI_VERSION == 2, "ABI version");
CHECK_LAYOUT(dtfd_features, 32);
CHECK_OFF(dtfd_features, version, 0);
CHECK_OFF(dtfd_features, pad, 4);
CHECK_OFF(dtfd_features, features, 8);
CHECK_OFF(dtfd_features, settime_flags, 16);
CHECK_OFF(dtfd_features, clocks, 24);
CHECK_LAYOUT(dtfd_create, 8);
CHECK_OFF(dtfd_create, clockid, 0);
CHECK_OFF(dtfd_create, flags, 4);
CHECK_LAYOUT(dtfd_settime, 24);
CHECK_OFF(dtfd_settime, flags, 0);
CHECK_OFF(dtfd_settime, pad, 4);
CHECK_OFF(dtfd_settime, new_value, 8);
CHECK_OFF(dtfd_settime, old_value, 16);
CHECK_LAYOUT(dtfd_itimerspec64, 32);
CHECK_OFF(dtfd_itimerspec64, interval_sec, 0);
CHECK_OFF(dtfd_itimerspec64, interval_nsec, 8);
CHECK_OFF(dtfd_itimerspec64, value_sec, 16);
CHECK_OFF(dtfd_itimerspec64, value_nsec, 24);
CHECK_LAYOUT(dtfd_itimerspec32, 16);
CHECK_OFF(dtfd_itimerspec32, interval_sec, 0);
CHECK_OFF(dtfd_itimerspec32, interval_nsec, 4);
CHECK_OFF(dtfd_itimerspec32, value_sec, 8);
CHECK_OFF(dtfd_itimerspec32, value_nsec, 12);
CHECK_LAYOUT(dtfd_tolerance, 24);
CHECK_OFF(dtfd_tolerance, max_defer_ns, 8);
CHECK_OFF(dtfd_tolerance, flags, 16);
CHECK_OFF(dtfd_tolerance, pad, 20);
CHECK_LAYOUT(dtfd_stats, 48);
/* this build's struct itimerspec is one of the two layouts */
_Static_assert(sizeof(struct itimerspec) ==
	       (sizeof(time_t) == 8 ? sizeof(struct dtfd_itimerspec64) :
				      sizeof(struct dtfd_itimerspec32)),
	       "struct itimerspec is ITS64 or ITS32");
_Static_assert(offsetof(struct itimerspec, it_value) ==
	       sizeof(struct itimerspec) / 2, "it_interval first");
/* the numbers: type 0xD7, the control fd's from 0, the timer's from 0x10 */
#define CHECK_IOCTL(name, nr, arg, fd, errs)				\
	_Static_assert(DTFD_IOC_##name == (nr), #name " number");	\
	_Static_assert(_IOC_SIZE(DTFD_IOC_##name) == sizeof(arg),	\
		       #name " argument");
DTFD_IOCTLS(CHECK_IOCTL)
_Static_assert(DTFD_TIMER_ABSTIME == TFD_TIMER_ABSTIME, "ABSTIME");
_Static_assert(DTFD_TIMER_CANCEL_ON_SET == TFD_TIMER_CANCEL_ON_SET,
	       "CANCEL_ON_SET");
/* DEFERRABLE must not collide with timerfd's flags nor the open flags */
_Static_assert(!(DTFD_TIMER_DEFERRABLE & (TFD_TIMER_ABSTIME |
					  TFD_TIMER_CANCEL_ON_SET)),
	       "DEFERRABLE bit");
_Static_assert(!(DTFD_TIMER_DEFERRABLE & (O_CLOEXEC | O_NONBLOCK)),
	       "DEFERRABLE vs O_*");
/* PERCPU neither, nor DEFERRABLE */
_Static_assert(!(DTFD_TIMER_PERCPU & (TFD_TIMER_ABSTIME |
				      TFD_TIMER_CANCEL_ON_SET |
				      DTFD_TIMER_DEFERRABLE |
				      O_CLOEXEC | O_NONBLOCK)), "PERCPU bit");
/* CREATE's flags are timerfd_create(2)'s */
_Static_assert(DTFD_CLOEXEC == TFD_CLOEXEC && DTFD_NONBLOCK == TFD_NONBLOCK,
	       "create flags");

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

static int ctl_open(void)
{
	int fd = open(DTIMERFD_DEVICE, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		h_skip("%s: %s", DTIMERFD_DEVICE, strerror(errno));
	return fd;
}

/* DTFD_IOC_CREATE: the new timer descriptor, or -1 and errno */
static int raw_create(int ctl, int clockid, unsigned int flags)
{
	struct dtfd_create c = { .clockid = clockid, .flags = flags };

	return ioctl(ctl, DTFD_IOC_CREATE, &c);
}

/* a CLOCK_MONOTONIC timer, close-on-exec, for the rest of the case */
static int timer_open(int ctl)
{
	int fd = raw_create(ctl, CLOCK_MONOTONIC, O_CLOEXEC);

	ASSERT_OK(fd);
	return fd;
}

static int raw_settime(int fd, unsigned long cmd, unsigned int flags,
		       const void *nv, void *ov)
{
	struct dtfd_settime st = {
		.flags = flags,
		.new_value = (uintptr_t)nv,
		.old_value = (uintptr_t)ov,
	};

	return ioctl(fd, cmd, &st);
}

static struct dtfd_features get_features(int fd)
{
	struct dtfd_features f;

	memset(&f, 0xff, sizeof(f));
	ASSERT_OK(ioctl(fd, DTFD_IOC_FEATURES, &f));
	return f;
}

/* the lowest free descriptor number, as the next open would get it */
static int next_fd(void)
{
	int fd = dup(0);

	if (fd >= 0)
		close(fd);
	return fd;
}

static struct dtfd_itimerspec64 its64(long long v, long long iv)
{
	struct dtfd_itimerspec64 t = {
		iv / NSEC_PER_SEC, iv % NSEC_PER_SEC,
		v / NSEC_PER_SEC, v % NSEC_PER_SEC,
	};

	return t;
}

static struct dtfd_itimerspec32 its32(long long v, long long iv)
{
	struct dtfd_itimerspec32 t = {
		(int32_t)(iv / NSEC_PER_SEC), (int32_t)(iv % NSEC_PER_SEC),
		(int32_t)(v / NSEC_PER_SEC), (int32_t)(v % NSEC_PER_SEC),
	};

	return t;
}

/* 1 when this kernel has the 32-bit time ioctls (COMPAT_32BIT_TIME) */
static int have_its32(int timer)
{
	int r = ioctl(timer, DTFD_IOC_GETTIME32, NULL);

	EXPECTF(r == -1 && (errno == EFAULT || errno == ENOTTY),
		"GETTIME32(NULL): %d %s", r, strerror(errno));
	return errno == EFAULT;
}

static void set_cap_wake_alarm(int on)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	unsigned int bit = 1U << (CAP_WAKE_ALARM % 32);

	ASSERT_OK(syscall(SYS_capget, &hdr, data));
	if (on)
		data[CAP_WAKE_ALARM / 32].effective |= bit;
	else
		data[CAP_WAKE_ALARM / 32].effective &= ~bit;
	ASSERT_OK(syscall(SYS_capset, &hdr, data));
}

TEST(features, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	int fd = ctl_open(), t;
	struct dtfd_features f = get_features(fd), g;

	h_diag("version %u features %#llx settime_flags %#llx clocks %#llx",
	       f.version, (unsigned long long)f.features,
	       (unsigned long long)f.settime_flags,
	       (unsigned long long)f.clocks);
	EXPECT(f.version == DTFD_ABI_VERSION);
	EXPECT(f.version == 2);
	EXPECT(f.pad == 0);
	EXPECT((f.settime_flags & 3) == 3);
	EXPECT(!!(f.settime_flags & DTFD_TIMER_DEFERRABLE) ==
	       !!(f.features & DTFD_FEATURE_DEFERRABLE));
	EXPECT(!!(f.settime_flags & DTFD_TIMER_PERCPU) ==
	       !!(f.features & DTFD_FEATURE_ANY_CPU));
	EXPECT(!(f.settime_flags & ~15ULL));
	EXPECT((f.clocks & 0x83) == 0x83);	/* REALTIME MONOTONIC BOOTTIME */
	EXPECT(!!(f.features & DTFD_FEATURE_ALARM) ==
	       ((f.clocks & 0x300) == 0x300));
	EXPECT(!(f.clocks & ~0x383ULL));
	/* only bits the header defines */
	EXPECT(!(f.features & ~(DTFD_FEATURE_DEFERRABLE |
				DTFD_FEATURE_CANCEL_ON_SET |
				DTFD_FEATURE_ALARM | DTFD_FEATURE_TIMENS |
				DTFD_FEATURE_SLACK | DTFD_FEATURE_BOUNDED |
				DTFD_FEATURE_STATS | DTFD_FEATURE_ANY_CPU)));
	/* the same answer before and after a CREATE; NULL and bad: EFAULT */
	t = timer_open(fd);
	g = get_features(fd);
	EXPECT(!memcmp(&f, &g, sizeof(f)));
	EXPECT_ERR(ioctl(fd, DTFD_IOC_FEATURES, NULL), EFAULT);
	EXPECT_ERR(ioctl(fd, DTFD_IOC_FEATURES, h_bad_ptr()), EFAULT);
	/* on the control descriptor only */
	EXPECT_ERR(ioctl(t, DTFD_IOC_FEATURES, &g), ENOTTY);
	close(t);
	close(fd);
}

/*
 * CREATE's arguments: the five clocks (EPERM for an alarm clock without
 * CAP_WAKE_ALARM), O_CLOEXEC and O_NONBLOCK, EINVAL for anything else,
 * EFAULT for a bad argument; the clock is the timer's for life, and what
 * DTFD_IOC_FEATURES announces is what CREATE and SETTIME accept.
 */
TEST(create_rules, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	struct itimerspec its = h_its(SEC(100), 0), cur;
	struct dtfd_features f;
	struct h_fdinfo fi;
	int c, ctl, fd, n;

	ctl = ctl_open();
	f = get_features(ctl);
	for (c = -2; c <= 12; c++) {
		int valid = c == 0 || c == 1 || c == 7 || c == 8 || c == 9;

		fd = raw_create(ctl, c, 0);
		if (valid)
			EXPECTF(fd >= 0 ||
				(c >= 8 && errno == EPERM && !h_can_wake_alarm()),
				"clock %d: %s", c, strerror(errno));
		else
			EXPECT_ERR(fd, EINVAL);
		if (fd >= 0) {
			ASSERT_OK(h_fdinfo(fd, &fi));
			EXPECT(fi.clockid == c);
			close(fd);
		}
	}
	/* the features' clock mask is what CREATE accepts */
	for (c = 0; c < 64; c++) {
		n = next_fd();
		fd = raw_create(ctl, c, 0);
		if (f.clocks & (1ULL << c))
			EXPECTF(fd >= 0 || (errno == EPERM && !h_can_wake_alarm()),
				"clock %d announced: %s", c, strerror(errno));
		else
			EXPECTF(fd == -1 && errno == EINVAL,
				"clock %d not announced: %d %s", c, fd,
				strerror(errno));
		/* a failed CREATE takes no descriptor */
		if (fd < 0)
			EXPECT(next_fd() == n);
		else
			close(fd);
	}
	/* flags: O_CLOEXEC and O_NONBLOCK; every other bit alone EINVAL */
	for (c = 0; c < 32; c++) {
		unsigned int bit = 1u << c;
		int ok = bit == O_CLOEXEC || bit == O_NONBLOCK;

		fd = raw_create(ctl, CLOCK_MONOTONIC, bit);
		if (ok)
			EXPECTF(fd >= 0, "flag %#x: %s", bit, strerror(errno));
		else
			EXPECTF(fd == -1 && errno == EINVAL, "flag %#x: %d %s",
				bit, fd, strerror(errno));
		if (fd >= 0)
			close(fd);
	}
	EXPECT_ERR(raw_create(ctl, CLOCK_MONOTONIC, O_CLOEXEC | O_NONBLOCK |
			      O_RDWR), EINVAL);
	EXPECT_ERR(raw_create(ctl, -1, ~0u), EINVAL);
	/* a bad argument */
	EXPECT_ERR(ioctl(ctl, DTFD_IOC_CREATE, NULL), EFAULT);
	EXPECT_ERR(ioctl(ctl, DTFD_IOC_CREATE, h_bad_ptr()), EFAULT);

	/*
	 * Bound at birth, for life (v1's INIT-once and EBUSY): CREATE is not
	 * a timer ioctl, settime does not change the clock.
	 */
	fd = raw_create(ctl, CLOCK_BOOTTIME, 0);
	ASSERT_OK(fd);
	ASSERT_OK(h_fdinfo(fd, &fi));
	EXPECT(fi.clockid == CLOCK_BOOTTIME);
	n = next_fd();
	EXPECT_ERR(raw_create(fd, CLOCK_REALTIME, 0), ENOTTY);
	EXPECT(next_fd() == n);
	EXPECT_OK(raw_settime(fd, SETTIME_NATIVE, 0, &its, NULL));
	ASSERT_OK(h_fdinfo(fd, &fi));
	EXPECT(fi.clockid == CLOCK_BOOTTIME);
	EXPECT_ERR(raw_create(fd, CLOCK_REALTIME, 0), ENOTTY);
	close(fd);

	/* the control descriptor is no timer: no settime, no fdinfo lines */
	EXPECT_ERR(raw_settime(ctl, SETTIME_NATIVE, 0, &its, NULL), ENOTTY);
	EXPECT_ERR(ioctl(ctl, GETTIME_NATIVE, &cur), ENOTTY);
	ASSERT_OK(h_fdinfo(ctl, &fi));
	EXPECT(fi.nlines == 0);
	close(ctl);
}

/*
 * CREATE answers as timerfd_create(2) in every case: flags and clock
 * first (EINVAL), then CAP_WAKE_ALARM (EPERM), then the descriptor
 * (EMFILE).  Each combination is asked of both.
 */
TEST(create_like_timerfd, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	static const int clocks[] = { -1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
				      11, 12, 100, 0x7fffffff, (int)0x80000000 };
	static const unsigned int flags[] = {
		0, O_CLOEXEC, O_NONBLOCK, O_CLOEXEC | O_NONBLOCK, 1, O_RDWR,
		O_APPEND, O_CLOEXEC | 4, 0x80000000u, ~0u,
	};
	struct rlimit rl;
	int pass, ctl = ctl_open(), busy = -1;
	size_t c, f;

	for (pass = 0; pass < 3; pass++) {
		if (pass == 1) {
			if (!h_can_wake_alarm()) {
				h_diag("no CAP_WAKE_ALARM: the first pass had none");
				continue;
			}
			set_cap_wake_alarm(0);
		}
		if (pass == 2) {
			/* a full table: EMFILE, after EINVAL and EPERM */
			int n = next_fd();

			ASSERT_OK(getrlimit(RLIMIT_NOFILE, &rl));
			rl.rlim_cur = (rlim_t)n + 1;
			ASSERT_OK(setrlimit(RLIMIT_NOFILE, &rl));
			busy = dup(0);
			ASSERT(busy == n);
			ASSERT(next_fd() == -1 && errno == EMFILE);
		}
		for (c = 0; c < ARRAY_SIZE(clocks); c++)
			for (f = 0; f < ARRAY_SIZE(flags); f++) {
				int d = raw_create(ctl, clocks[c], flags[f]);
				int de = errno;
				int t = timerfd_create(clocks[c], (int)flags[f]);
				int te = errno;

				EXPECTF((d < 0) == (t < 0) && (d >= 0 || de == te),
					"pass %d clock %d flags %#x: CREATE %d (%s), timerfd_create %d (%s)",
					pass, clocks[c], flags[f], d,
					d < 0 ? strerror(de) : "-", t,
					t < 0 ? strerror(te) : "-");
				if (d >= 0)
					close(d);
				if (t >= 0)
					close(t);
			}
	}
	close(busy);
	close(ctl);
}

static int fd_cloexec(int fd)
{
	return !!(fcntl(fd, F_GETFD) & FD_CLOEXEC);
}

/*
 * The descriptor CREATE returns carries the flags asked for and nothing
 * of the control descriptor's: F_GETFD and F_GETFL exactly as a timerfd
 * made with the same flags, the lowest free number, O_RDWR.
 */
TEST(create_fd_flags, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	static const unsigned int combos[] = {
		0, O_CLOEXEC, O_NONBLOCK, O_CLOEXEC | O_NONBLOCK,
	};
	size_t i, j;

	for (j = 0; j < 2; j++) {
		/* a control descriptor opened blocking/CLOEXEC, or not */
		int ctl = open(DTIMERFD_DEVICE, j ? O_RDWR | O_NONBLOCK :
			       O_RDWR | O_CLOEXEC);

		if (ctl < 0)
			h_skip("%s: %s", DTIMERFD_DEVICE, strerror(errno));
		for (i = 0; i < ARRAY_SIZE(combos); i++) {
			int t = timerfd_create(CLOCK_MONOTONIC, (int)combos[i]);
			int tn, d, dfl, tfl;

			ASSERT_OK(t);
			tn = t;
			tfl = fcntl(t, F_GETFL);
			EXPECT((tfl & O_ACCMODE) == O_RDWR);
			close(t);
			d = raw_create(ctl, CLOCK_MONOTONIC, combos[i]);
			ASSERT_OK(d);
			EXPECTF(d == tn, "CREATE gave fd %d, timerfd_create %d",
				d, tn);
			dfl = fcntl(d, F_GETFL);
			EXPECTF(dfl == tfl, "flags %#x: F_GETFL %#o, timerfd's %#o",
				combos[i], dfl, tfl);
			EXPECT(fd_cloexec(d) == !!(combos[i] & O_CLOEXEC));
			EXPECT(!!(dfl & O_NONBLOCK) == !!(combos[i] & O_NONBLOCK));
			EXPECT(fcntl(d, F_GETFD) ==
			       (combos[i] & O_CLOEXEC ? FD_CLOEXEC : 0));
			close(d);
		}
		close(ctl);
	}
}

/*
 * Which ioctl works where: FEATURES and CREATE on the control descriptor
 * only, every timer ioctl on a timer descriptor only (ENOTTY on the
 * other kind), with valid arguments that the right kind accepts: every
 * ioctl of ioctls.h, so a new one without an argument here fails.
 */
TEST(descriptor_kinds, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	struct itimerspec cur;
	struct dtfd_itimerspec64 c64, n64 = its64(SEC(100), SEC(1));
	struct dtfd_itimerspec32 c32, n32 = its32(SEC(100), SEC(1));
	struct dtfd_tolerance tol = { 0 };
	struct dtfd_stats st;
	struct dtfd_features f;
	struct dtfd_create cr = { CLOCK_MONOTONIC, O_CLOEXEC };
	uint64_t ticks = 1;
	struct dtfd_settime s64 = { 0, 0, (uintptr_t)&n64, 0 };
	struct dtfd_settime s32 = { 0, 0, (uintptr_t)&n32, 0 };
	int ctl = ctl_open(), t = timer_open(ctl), n, has32 = have_its32(t);
	void *const arg[IOC_N] = {
		[IOC_FEATURES] = &f, [IOC_CREATE] = &cr,
		[IOC_SETTIME64] = &s64, [IOC_SETTIME32] = &s32,
		[IOC_GETTIME64] = &c64, [IOC_GETTIME32] = &c32,
		[IOC_SET_TICKS] = &ticks, [IOC_SET_TOLERANCE] = &tol,
		[IOC_GET_TOLERANCE] = &tol, [IOC_GET_STATS] = &st,
	};
	unsigned int i;

	for (i = 0; i < IOC_N; i++) {
		const struct dtfd_ioctl_info *io = &dtfd_ioctls[i];
		int timer = io->fd == IOC_TIMER, r;

		EXPECTF(arg[i], "no argument for %s", io->name);
		if (!arg[i])
			continue;
		/* the right kind: works (the 32-bit time ones if any) */
		r = ioctl(timer ? t : ctl, io->cmd, arg[i]);
		if ((i == IOC_SETTIME32 || i == IOC_GETTIME32) && !has32)
			EXPECT_ERR(r, ENOTTY);
		else
			EXPECTF(r >= 0, "%s on its kind: %s", io->name,
				strerror(errno));
		if (i == IOC_CREATE && r >= 0)
			close(r);
		/* the other kind: ENOTTY, no effect, no descriptor */
		n = next_fd();
		r = ioctl(timer ? ctl : t, io->cmd, arg[i]);
		EXPECTF(r == -1 && errno == ENOTTY, "%s on the %s fd: %d %s",
			io->name, timer ? "control" : "timer", r,
			strerror(errno));
		EXPECT(next_fd() == n);
	}
	/* the timer is as the calls on it left it, untouched by the rest */
	EXPECT_OK(dtimerfd_gettime(t, &cur));
	EXPECT(h_its_interval(&cur) == SEC(1));
	EXPECT(h_its_value(&cur) > SEC(90));
	/* read(2) and write(2) are no calls of the control descriptor */
	EXPECT(read(ctl, &ticks, sizeof(ticks)) == -1);
	EXPECT(write(ctl, &ticks, sizeof(ticks)) == -1);
	close(t);
	close(ctl);
}

/*
 * The control descriptor holds no state: its timers outlive it, are
 * independent of each other, and any control descriptor (a dup, another
 * open, a forked child's) makes the same timers.
 */
TEST(control_stateless, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	struct itimerspec its = h_its(MS(20), 0), cur;
	int ctl = ctl_open(), ctl2, a, b, status;
	uint64_t ticks = 0;
	pid_t pid;

	a = timer_open(ctl);
	b = timer_open(ctl);
	ASSERT_OK(dtimerfd_settime(a, 0, &its, NULL));
	/* b is another timer: disarmed */
	EXPECT_OK(dtimerfd_gettime(b, &cur));
	EXPECT(h_its_value(&cur) == 0);
	/* a timer outlives its control descriptor */
	close(ctl);
	EXPECT(h_read(a, &ticks) == 8 && ticks == 1);
	EXPECT_OK(dtimerfd_settime(b, 0, &its, NULL));
	EXPECT(h_read(b, &ticks) == 8 && ticks == 1);
	close(a);
	close(b);

	/* a dup of a control descriptor is one */
	ctl = ctl_open();
	ctl2 = dup(ctl);
	ASSERT_OK(ctl2);
	close(ctl);
	a = timer_open(ctl2);
	close(a);
	/* so is the copy a child of fork() has */
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int t = raw_create(ctl2, CLOCK_MONOTONIC, 0);

		_exit(t >= 0 && !dtimerfd_settime(t, 0, &its, NULL) &&
		      h_read(t, &ticks) == 8 && ticks == 1 ? 0 : 1);
	}
	ASSERT_OK(pid);
	waitpid(pid, &status, 0);
	EXPECTF(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		"child: status %#x", status);
	close(ctl2);
}

TEST(settime_raw, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	struct itimerspec its = h_its(SEC(100), 0), cur;
	struct dtfd_settime st;
	struct dtfd_features f;
	int ctl = ctl_open(), fd, bit;
	static const uint32_t pads[] = { 1, 2, 0x80000000u, 0xffffffffu };
	size_t i;

	f = get_features(ctl);
	fd = timer_open(ctl);
	memset(&st, 0, sizeof(st));
	st.new_value = (uintptr_t)&its;
	EXPECT_OK(ioctl(fd, SETTIME_NATIVE, &st));
	for (bit = 0; bit < 32; bit++) {
		st.flags = 1u << bit;
		if (f.settime_flags & st.flags)
			continue;
		EXPECT_ERR(ioctl(fd, SETTIME_NATIVE, &st), EINVAL);
	}
	/*
	 * every announced flag is accepted (a monotonic timer); PERCPU only
	 * qualifies DEFERRABLE: alone it is EINVAL
	 */
	for (bit = 0; bit < 32; bit++) {
		st.flags = 1u << bit;
		if (st.flags == DTFD_TIMER_PERCPU) {
			EXPECT_ERR(ioctl(fd, SETTIME_NATIVE, &st), EINVAL);
			st.flags |= DTFD_TIMER_DEFERRABLE;
		}
		if (f.settime_flags & st.flags)
			EXPECTF(!ioctl(fd, SETTIME_NATIVE, &st),
				"flag %#x: %s", st.flags, strerror(errno));
	}
	st.flags = 0;
	EXPECT_OK(ioctl(fd, SETTIME_NATIVE, &st));
	/* pad must be zero (v1's bad layouts); rejected calls change nothing */
	its = h_its(SEC(10), 0);
	for (i = 0; i < ARRAY_SIZE(pads); i++) {
		st.pad = pads[i];
		EXPECT_ERR(ioctl(fd, SETTIME_NATIVE, &st), EINVAL);
	}
	st.pad = 0;
	ASSERT_OK(dtimerfd_gettime(fd, &cur));
	EXPECT(h_its_value(&cur) > SEC(90));
	its = h_its(SEC(100), 0);
	st.new_value = 0;
	EXPECT_ERR(ioctl(fd, SETTIME_NATIVE, &st), EFAULT);
	st.new_value = (uintptr_t)h_bad_ptr();
	EXPECT_ERR(ioctl(fd, SETTIME_NATIVE, &st), EFAULT);
	/* an address no 32-bit process could hold */
	st.new_value = 0xdead00000000ULL;
	EXPECT_ERR(ioctl(fd, SETTIME_NATIVE, &st), EFAULT);
	st.new_value = (uintptr_t)&its;
	st.old_value = (uintptr_t)h_bad_ptr();
	EXPECT_ERR(ioctl(fd, SETTIME_NATIVE, &st), EFAULT);
	/* and that EFAULT came after the new setting took effect */
	its = h_its(SEC(50), 0);
	st.old_value = (uintptr_t)h_bad_ptr();
	EXPECT_ERR(ioctl(fd, SETTIME_NATIVE, &st), EFAULT);
	ASSERT_OK(dtimerfd_gettime(fd, &cur));
	EXPECT(h_its_value(&cur) <= SEC(50) && h_its_value(&cur) > SEC(45));
	EXPECT_ERR(ioctl(fd, SETTIME_NATIVE, NULL), EFAULT);
	EXPECT_ERR(ioctl(fd, SETTIME_NATIVE, h_bad_ptr()), EFAULT);
	close(fd);
	close(ctl);
}

TEST(gettime_raw, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	struct itimerspec its = h_its(SEC(100), SEC(2)), cur;
	int ctl = ctl_open(), fd = timer_open(ctl);
	void *ro;

	ASSERT_OK(dtimerfd_settime(fd, 0, &its, NULL));
	/* the argument is this build's struct itimerspec itself */
	memset(&cur, 0x5a, sizeof(cur));
	EXPECT_OK(ioctl(fd, GETTIME_NATIVE, &cur));
	EXPECT(h_its_interval(&cur) == SEC(2));
	EXPECT(h_its_value(&cur) > SEC(90) && h_its_value(&cur) <= SEC(100));
	/* nowhere to write: EFAULT (v1's curr_value 0 and bad layouts) */
	EXPECT_ERR(ioctl(fd, GETTIME_NATIVE, NULL), EFAULT);
	EXPECT_ERR(ioctl(fd, GETTIME_NATIVE, h_bad_ptr()), EFAULT);
	ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT(ro != MAP_FAILED);
	EXPECT_ERR(ioctl(fd, GETTIME_NATIVE, ro), EFAULT);
	munmap(ro, 4096);

	/* GETTIME64: the caller's 64-bit itimerspec is the argument */
	{
		struct dtfd_itimerspec64 c64;

		memset(&c64, 0xa5, sizeof(c64));
		EXPECT_OK(ioctl(fd, DTFD_IOC_GETTIME64, &c64));
		EXPECT(c64.interval_sec == 2 && c64.interval_nsec == 0);
		EXPECT(c64.value_sec >= 90 && c64.value_sec <= 100);
		EXPECT(c64.value_nsec >= 0 && c64.value_nsec < 1000000000);
		EXPECT_ERR(ioctl(fd, DTFD_IOC_GETTIME64, NULL), EFAULT);
		EXPECT_ERR(ioctl(fd, DTFD_IOC_GETTIME64, h_bad_ptr()), EFAULT);
	}
	/* GETTIME32: the same in the old 32-bit layout, where it exists */
	if (have_its32(fd)) {
		struct dtfd_itimerspec32 c32;

		memset(&c32, 0xa5, sizeof(c32));
		EXPECT_OK(ioctl(fd, DTFD_IOC_GETTIME32, &c32));
		EXPECT(c32.interval_sec == 2 && c32.interval_nsec == 0);
		EXPECT(c32.value_sec >= 90 && c32.value_sec <= 100);
		EXPECT(c32.value_nsec >= 0 && c32.value_nsec < 1000000000);
		EXPECT_ERR(ioctl(fd, DTFD_IOC_GETTIME32, h_bad_ptr()), EFAULT);
	} else {
		EXPECT(sizeof(time_t) == 8);
		h_diag("no DTFD_IOC_GETTIME32: kernel without COMPAT_32BIT_TIME");
	}
	close(fd);
	close(ctl);
}

/* bytes of @buf past @n still hold the 0xa5 they were filled with */
static int untouched(const void *buf, size_t n, size_t size)
{
	const unsigned char *p = buf;

	for (; n < size; n++)
		if (p[n] != 0xa5)
			return 0;
	return 1;
}

/*
 * Both itimerspec layouts work, whatever this process's word size
 * (32-bit ones where the kernel keeps 32-bit time), each reading and
 * writing exactly its own size, and SETTIME32/GETTIME32 are SETTIME64/
 * GETTIME64 for every value a 32-bit struct can hold.
 */
TEST(its_layouts, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	struct dtfd_itimerspec32 in32 = { 3, 7, 100, 5 }, out32;
	struct dtfd_itimerspec64 in64 = { 4, 11, 200, 9 }, out64;
	unsigned char buf[64];
	int ctl = ctl_open(), fd = timer_open(ctl), fd2, has32;
	int r, r2, e, e2;
	static const struct { long long v, iv; } vals[] = {
		{ 0, 0 }, { 1, 0 }, { SEC(100) + 5, SEC(2) + 7 },
		{ NSEC_PER_SEC - 1, 1 }, { SEC(0x7fffffffLL), 0 },
		{ SEC(5), SEC(0x7fffffffLL) },
	};
	size_t i;

	has32 = have_its32(fd);
	if (sizeof(time_t) == 4)
		EXPECTF(has32, "a 32-bit time_t process needs SETTIME32");
	if (!has32) {
		/* both 32-bit ioctls missing together, nothing changed */
		EXPECT_ERR(raw_settime(fd, DTFD_IOC_SETTIME32, 0, &in32, NULL),
			   ENOTTY);
		EXPECT_ERR(ioctl(fd, DTFD_IOC_GETTIME32, &out32), ENOTTY);
		EXPECT_OK(ioctl(fd, DTFD_IOC_GETTIME64, &out64));
		EXPECT(out64.value_sec == 0 && out64.value_nsec == 0);
		h_diag("no 32-bit time ioctls: kernel without COMPAT_32BIT_TIME");
		close(fd);
		close(ctl);
		return;
	}
	EXPECT_OK(raw_settime(fd, DTFD_IOC_SETTIME32, 0, &in32, NULL));
	EXPECT_OK(ioctl(fd, DTFD_IOC_GETTIME64, &out64));
	EXPECT(out64.interval_sec == 3 && out64.interval_nsec == 7);
	EXPECT(out64.value_sec >= 95 && out64.value_sec <= 100);
	/* SETTIME64 with its old value in the 64-bit layout */
	memset(buf, 0xa5, sizeof(buf));
	EXPECT_OK(raw_settime(fd, DTFD_IOC_SETTIME64, 0, &in64, buf));
	memcpy(&out64, buf, sizeof(out64));
	EXPECT(out64.interval_sec == 3 && out64.interval_nsec == 7);
	EXPECT(untouched(buf, sizeof(out64), sizeof(buf)));
	memset(buf, 0xa5, sizeof(buf));
	EXPECT_OK(ioctl(fd, DTFD_IOC_GETTIME32, buf));
	memcpy(&out32, buf, sizeof(out32));
	EXPECT(out32.interval_sec == 4 && out32.interval_nsec == 11);
	EXPECT(out32.value_sec >= 195 && out32.value_sec <= 200);
	EXPECT(untouched(buf, sizeof(out32), sizeof(buf)));
	/* SETTIME32's old value: the 32-bit layout, 16 bytes */
	memset(buf, 0xa5, sizeof(buf));
	EXPECT_OK(raw_settime(fd, DTFD_IOC_SETTIME32, 0, &in32, buf));
	memcpy(&out32, buf, sizeof(out32));
	EXPECT(out32.interval_sec == 4 && out32.interval_nsec == 11);
	EXPECT(untouched(buf, sizeof(out32), sizeof(buf)));
	memset(buf, 0xa5, sizeof(buf));
	EXPECT_OK(ioctl(fd, DTFD_IOC_GETTIME64, buf));
	EXPECT(untouched(buf, sizeof(out64), sizeof(buf)));

	/* a 64-bit value too big for the 32-bit layout */
	in64.value_sec = 1LL << 40;
	if (!raw_settime(fd, DTFD_IOC_SETTIME64, 0, &in64, NULL)) {
		r = ioctl(fd, DTFD_IOC_GETTIME32, &out32);
		h_diag("2^40 s read back in the 32-bit layout: %d %s, sec %d",
		       r, r ? strerror(errno) : "", out32.value_sec);
	}

	/* SETTIME32 == SETTIME64: the same values on two timers */
	fd2 = timer_open(ctl);
	for (i = 0; i < ARRAY_SIZE(vals); i++) {
		struct dtfd_itimerspec32 n32 = its32(vals[i].v, vals[i].iv), o32;
		struct dtfd_itimerspec64 n64 = its64(vals[i].v, vals[i].iv), o64;
		struct dtfd_itimerspec64 g64a, g64b;
		struct dtfd_itimerspec32 g32a, g32b;

		r = raw_settime(fd, DTFD_IOC_SETTIME32, 0, &n32, &o32);
		e = errno;
		r2 = raw_settime(fd2, DTFD_IOC_SETTIME64, 0, &n64, &o64);
		e2 = errno;
		EXPECTF(r == r2 && (!r || e == e2), "value %d: %d %s / %d %s",
			(int)i, r, strerror(e), r2, strerror(e2));
		if (i > 0 && !r) {
			/* the previous value, in each layout */
			EXPECT(o32.interval_sec == o64.interval_sec &&
			       o32.interval_nsec == o64.interval_nsec);
			EXPECT(llabs((long long)o32.value_sec * NSEC_PER_SEC +
				     o32.value_nsec - o64.value_sec * NSEC_PER_SEC -
				     o64.value_nsec) < SEC(2));
		}
		EXPECT_OK(ioctl(fd, DTFD_IOC_GETTIME64, &g64a));
		EXPECT_OK(ioctl(fd2, DTFD_IOC_GETTIME64, &g64b));
		EXPECT_OK(ioctl(fd, DTFD_IOC_GETTIME32, &g32a));
		EXPECT_OK(ioctl(fd2, DTFD_IOC_GETTIME32, &g32b));
		EXPECTF(g64a.interval_sec == g64b.interval_sec &&
			g64a.interval_nsec == g64b.interval_nsec &&
			g32a.interval_sec == g32b.interval_sec &&
			g32a.interval_nsec == g32b.interval_nsec &&
			g32a.interval_sec == g64a.interval_sec,
			"value %d: intervals differ", (int)i);
		EXPECTF(llabs(g64a.value_sec * NSEC_PER_SEC + g64a.value_nsec -
			      g64b.value_sec * NSEC_PER_SEC - g64b.value_nsec) <
			SEC(2) && llabs((long long)g32a.value_sec - g32b.value_sec) <= 2,
			"value %d: values differ", (int)i);
	}
	/* and the same errors: values, flags, pad, pointers */
	{
		struct dtfd_itimerspec32 b32[] = {
			{ 0, 0, 0, 1000000000 }, { 0, 0, 0, -1 }, { 0, 0, -1, 0 },
			{ 0, 1000000000, 1, 0 }, { -1, 0, 1, 0 },
		};
		struct dtfd_itimerspec64 b64[] = {
			{ 0, 0, 0, 1000000000 }, { 0, 0, 0, -1 }, { 0, 0, -1, 0 },
			{ 0, 1000000000, 1, 0 }, { -1, 0, 1, 0 },
		};
		struct dtfd_settime s = { 0, 0, 0, 0 };

		for (i = 0; i < ARRAY_SIZE(b32); i++) {
			EXPECT_ERR(raw_settime(fd, DTFD_IOC_SETTIME32, 0, &b32[i],
					       NULL), EINVAL);
			EXPECT_ERR(raw_settime(fd, DTFD_IOC_SETTIME64, 0, &b64[i],
					       NULL), EINVAL);
		}
		in32 = its32(SEC(10), 0);
		EXPECT_ERR(raw_settime(fd, DTFD_IOC_SETTIME32, 8, &in32, NULL),
			   EINVAL);
		EXPECT_ERR(raw_settime(fd, DTFD_IOC_SETTIME32, 1u << 31, &in32,
				       NULL), EINVAL);
		s.pad = 1;
		s.new_value = (uintptr_t)&in32;
		EXPECT_ERR(ioctl(fd, DTFD_IOC_SETTIME32, &s), EINVAL);
		EXPECT_ERR(raw_settime(fd, DTFD_IOC_SETTIME32, 0, NULL, NULL),
			   EFAULT);
		EXPECT_ERR(raw_settime(fd, DTFD_IOC_SETTIME32, 0, h_bad_ptr(),
				       NULL), EFAULT);
		EXPECT_ERR(ioctl(fd, DTFD_IOC_SETTIME32, NULL), EFAULT);
		/* a bad old value: EFAULT after the new value took effect */
		EXPECT_ERR(raw_settime(fd, DTFD_IOC_SETTIME32, 0, &in32,
				       h_bad_ptr()), EFAULT);
		EXPECT_OK(ioctl(fd, DTFD_IOC_GETTIME32, &out32));
		EXPECT(out32.value_sec >= 8 && out32.value_sec <= 10);
		EXPECT_ERR(ioctl(fd, DTFD_IOC_GETTIME32, NULL), EFAULT);
	}
	close(fd2);
	close(fd);
	close(ctl);
}

/*
 * Per layout, settime and gettime answer as timerfd's own system call for
 * that layout: the dtimerfd ioctls against timerfd_settime(2) (64-bit
 * time, timerfd_settime64 in 32-bit processes) and, in 32-bit processes,
 * the old 32-bit timerfd_settime(2) against SETTIME32/GETTIME32.
 */
static int lay_settime(const struct tfd_ops *ops, int fd, int l32, int flags,
		       const void *nv, void *ov)
{
	if (ops->kind == BK_NATIVE)
		return (int)syscall(l32 ? SYS_timerfd_settime : SYS_SETTIME64,
				    fd, flags, nv, ov);
	return raw_settime(fd, l32 ? DTFD_IOC_SETTIME32 : DTFD_IOC_SETTIME64,
			   (unsigned int)flags, nv, ov);
}

static int lay_gettime(const struct tfd_ops *ops, int fd, int l32, void *cur)
{
	if (ops->kind == BK_NATIVE)
		return (int)syscall(l32 ? SYS_timerfd_gettime : SYS_GETTIME64,
				    fd, cur);
	return ioctl(fd, l32 ? DTFD_IOC_GETTIME32 : DTFD_IOC_GETTIME64, cur);
}

/* a layout's struct as nanoseconds, for the trace */
static void rec_lay(int l32, const void *p, const char *what, int i)
{
	long long v, iv;

	if (l32) {
		struct dtfd_itimerspec32 t;

		memcpy(&t, p, sizeof(t));
		v = (long long)t.value_sec * NSEC_PER_SEC + t.value_nsec;
		iv = (long long)t.interval_sec * NSEC_PER_SEC + t.interval_nsec;
	} else {
		struct dtfd_itimerspec64 t;

		memcpy(&t, p, sizeof(t));
		v = t.value_sec * NSEC_PER_SEC + t.value_nsec;
		iv = t.interval_sec * NSEC_PER_SEC + t.interval_nsec;
	}
	h_rec_approx(v, SEC(2), "%s %d (%s): value", what, i,
		     l32 ? "32" : "64");
	h_rec_val(iv, "%s %d (%s): interval", what, i, l32 ? "32" : "64");
}

TEST(settime_layouts, T_NO_DEFER, 60)
{
	static const struct { long long v, iv, vns, ivns; int flags; } vals[] = {
		{ 100, 2, 5, 7, 0 },
		{ 0, 0, 1, 0, 0 },
		{ 0, 0, 999999999, 0, 0 },
		{ 0x7fffffffLL, 0, 0, 0, 0 },
		{ 1, 0, 0, 0, TFD_TIMER_ABSTIME },	/* long past */
		{ 1, 0, 1000000000, 0, 0 },
		{ 1, 0, -1, 0, 0 },
		{ -1, 0, 0, 0, 0 },
		{ 1, 0, 0, 1000000000, 0 },
		{ 5, 0, 0, 0, 8 },			/* unknown flag */
		{ 5, 0, 0, 0, (int)(1u << 31) },
		{ 0, 0, 0, 0, 0 },			/* disarm */
		{ 1LL << 40, 0, 0, 0, 0 },		/* not for 32 bits */
	};
	int fd = ops->create(CLOCK_MONOTONIC, TFD_CLOEXEC), l32, has32;
	unsigned char nv[32], ov[64], cur[64];
	size_t i;

	ASSERT_OK(fd);
	if (ops->kind == BK_NATIVE)
		has32 = NATIVE_HAS_32;
	else
		has32 = NATIVE_HAS_32 && have_its32(fd);
	EXPECT(has32 == NATIVE_HAS_32);
	for (l32 = 0; l32 <= has32; l32++) {
		for (i = 0; i < ARRAY_SIZE(vals); i++) {
			size_t sz = l32 ? 16 : 32;
			int r;

			if (l32 && vals[i].v > 0x7fffffffLL) {
				/* read the 64-bit one back through 32 bits */
				struct dtfd_itimerspec64 n64 = its64(SEC(vals[i].v), 0);

				ASSERT_OK(lay_settime(ops, fd, 0, 0, &n64, NULL));
			} else if (l32) {
				struct dtfd_itimerspec32 n32 = {
					(int32_t)vals[i].iv, (int32_t)vals[i].ivns,
					(int32_t)vals[i].v, (int32_t)vals[i].vns,
				};

				memcpy(nv, &n32, sizeof(n32));
				memset(ov, 0xa5, sizeof(ov));
				r = REC(lay_settime(ops, fd, 1, vals[i].flags, nv,
						    ov), "settime32 %d", (int)i);
				if (!r) {
					rec_lay(1, ov, "old", (int)i);
					REC(untouched(ov, sz, sizeof(ov)),
					    "old %d (32): size", (int)i);
				}
			} else {
				struct dtfd_itimerspec64 n64 = {
					vals[i].iv, vals[i].ivns, vals[i].v,
					vals[i].vns,
				};

				memcpy(nv, &n64, sizeof(n64));
				memset(ov, 0xa5, sizeof(ov));
				r = REC(lay_settime(ops, fd, 0, vals[i].flags, nv,
						    ov), "settime64 %d", (int)i);
				if (!r) {
					rec_lay(0, ov, "old", (int)i);
					REC(untouched(ov, sz, sizeof(ov)),
					    "old %d (64): size", (int)i);
				}
			}
			memset(cur, 0xa5, sizeof(cur));
			r = REC(lay_gettime(ops, fd, l32, cur), "gettime%s %d",
				l32 ? "32" : "64", (int)i);
			if (!r) {
				rec_lay(l32, cur, "cur", (int)i);
				REC(untouched(cur, sz, sizeof(cur)),
				    "cur %d: size", (int)i);
			}
		}
		/* bad pointers, in each layout */
		REC(lay_settime(ops, fd, l32, 0, NULL, NULL), "settime%s NULL",
		    l32 ? "32" : "64");
		REC(lay_settime(ops, fd, l32, 0, h_bad_ptr(), NULL),
		    "settime%s bad", l32 ? "32" : "64");
		REC(lay_gettime(ops, fd, l32, NULL), "gettime%s NULL",
		    l32 ? "32" : "64");
		REC(lay_gettime(ops, fd, l32, h_bad_ptr()), "gettime%s bad",
		    l32 ? "32" : "64");
	}
	close(fd);
}

/* ioctl @cmd of ours with another direction (@k 0-2) or size (3, 4) */
static unsigned long ioc_variant(unsigned long cmd, int k)
{
	unsigned int dir = _IOC_DIR(cmd), size = _IOC_SIZE(cmd);

	if (k < 3)
		dir = (dir + (unsigned int)k + 1) & 3;
	else
		size = k == 3 ? size + 8 : 0;
	return _IOC(dir, DTFD_IOC_MAGIC, _IOC_NR(cmd), size);
}

/* not ours: ENOTTY on both kinds of descriptor, and no new descriptor */
static void expect_enotty(int ctl, int t, unsigned long cmd, uint64_t *buf)
{
	int n = next_fd();

	EXPECTF(ioctl(ctl, cmd, buf) == -1 && errno == ENOTTY,
		"control fd, cmd %#lx: %s", cmd, strerror(errno));
	EXPECTF(ioctl(t, cmd, buf) == -1 && errno == ENOTTY,
		"timer fd, cmd %#lx: %s", cmd, strerror(errno));
	EXPECT(next_fd() == n);
}

TEST(unknown_ioctls, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	static const unsigned long cmds[] = { DTFD_IOC_NOT_OURS };
	uint64_t buf[8] = { 1 };
	size_t i;
	int ctl = ctl_open(), t = timer_open(ctl), k;
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	struct dtfd_features f;

	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		expect_enotty(ctl, t, cmds[i], buf);
	for (i = 0; i < IOC_N; i++)
		for (k = 0; k < 5; k++)
			expect_enotty(ctl, t,
				      ioc_variant(dtfd_ioctls[i].cmd, k), buf);
	/* our numbers on a timerfd and on another device: ENOTTY */
	ASSERT_OK(tfd);
	EXPECT_ERR(ioctl(tfd, DTFD_IOC_FEATURES, &f), ENOTTY);
	EXPECT_ERR(ioctl(tfd, DTFD_IOC_SET_TICKS, buf), ENOTTY);
	EXPECT_ERR(ioctl(tfd, DTFD_IOC_GETTIME64, buf), ENOTTY);
	EXPECT_ERR(ioctl(null, DTFD_IOC_FEATURES, &f), ENOTTY);
	EXPECT_ERR(ioctl(null, DTFD_IOC_CREATE, buf), ENOTTY);
	close(null);
	close(tfd);
	close(t);
	close(ctl);
}

/* documented: an alarm timer cannot be deferrable (EINVAL, no change) */
TEST(deferrable_alarm_einval, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	struct itimerspec its = h_its(SEC(100), 0), cur;
	struct dtfd_features f;
	int fd = ctl_open();
	size_t i;

	f = get_features(fd);
	close(fd);
	if (!(f.features & DTFD_FEATURE_DEFERRABLE))
		h_skip("deferrable backend not available");
	h_require_alarm();
	for (i = 3; i < 5; i++) {
		fd = dtimerfd_create(h_clocks[i], 0);
		ASSERT_OK(fd);
		EXPECT_ERR(dtimerfd_settime(fd, DTFD_TIMER_DEFERRABLE, &its,
					    NULL), EINVAL);
		EXPECT_OK(dtimerfd_gettime(fd, &cur));
		EXPECT(h_its_value(&cur) == 0);
		close(fd);
	}
}

/* descriptors of this process whose /proc/self/fd link is @target */
static int count_links(const char *target, int *last)
{
	char path[64], link[128];
	struct dirent *e;
	int n = 0;
	DIR *d = opendir("/proc/self/fd");

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);
		ssize_t len;

		if (e->d_name[0] == '.' || fd == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = 0;
		if (!strcmp(link, target)) {
			n++;
			*last = fd;
		}
	}
	closedir(d);
	return n;
}

/*
 * The library's timers: an anonymous-inode descriptor, read-write, bound
 * to its clock; the library holds one control descriptor, close-on-exec,
 * and when the program closes it, opens another without ever closing the
 * number it no longer owns (dtimerfd_create(3), NOTES).
 */
TEST(library_open, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	struct h_fdinfo fi;
	char path[64], link[128];
	int fd = dtimerfd_create(CLOCK_REALTIME, 0), fds[8], i, ctl = -1;
	int null;
	ssize_t n;

	ASSERT_OK(fd);
	EXPECT((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR);
	ASSERT_OK(h_fdinfo(fd, &fi));
	EXPECT(fi.clockid == CLOCK_REALTIME);
	EXPECT(fi.ordered);
	if (fi.extra[0])
		h_diag("dtimerfd lines: %s", fi.extra);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	ASSERT(n > 0);
	link[n] = 0;
	EXPECTF(!strcmp(link, "anon_inode:[dtimerfd]"), "fd -> %s", link);
	close(fd);

	/* one control descriptor, however many timers */
	for (i = 0; i < 8; i++) {
		fds[i] = dtimerfd_create(CLOCK_MONOTONIC, 0);
		ASSERT_OK(fds[i]);
	}
	EXPECT(count_links(DTIMERFD_DEVICE, &ctl) == 1);
	ASSERT(ctl >= 0);
	EXPECT(fd_cloexec(ctl));
	for (i = 0; i < 8; i++)
		close(fds[i]);

	/* closed under the library and the number reused: left alone */
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	ASSERT_OK(null);
	ASSERT(dup2(null, ctl) == ctl);
	close(null);
	null = ctl;
	fd = dtimerfd_create(CLOCK_MONOTONIC, DTFD_NONBLOCK);
	ASSERT_OK(fd);
	EXPECT(!!(fcntl(fd, F_GETFL) & O_NONBLOCK));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", null);
	n = readlink(path, link, sizeof(link) - 1);
	ASSERT(n > 0);
	link[n] = 0;
	EXPECTF(!strcmp(link, "/dev/null"), "fd %d -> %s", null, link);
	EXPECT(count_links(DTIMERFD_DEVICE, &ctl) == 1);
	close(fd);
	close(null);
}

TEST_MAIN()
