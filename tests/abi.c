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
 * 2, 3, 5, 12, 46, 54, 55 for the raw interface.  The cases go on in
 * abi/time.c and abi/misc.c (abi/abi.h: what they share).
 */
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include "harness.h"
#include "ioctls.h"
#include "abi/abi.h"

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

int ctl_open(void)
{
	int fd = open(DTIMERFD_DEVICE, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		h_skip("%s: %s", DTIMERFD_DEVICE, strerror(errno));
	return fd;
}

/* DTFD_IOC_CREATE: the new timer descriptor, or -1 and errno */
int raw_create(int ctl, int clockid, unsigned int flags)
{
	struct dtfd_create c = { .clockid = clockid, .flags = flags };

	return ioctl(ctl, DTFD_IOC_CREATE, &c);
}

/* a CLOCK_MONOTONIC timer, close-on-exec, for the rest of the case */
int timer_open(int ctl)
{
	int fd = raw_create(ctl, CLOCK_MONOTONIC, O_CLOEXEC);

	ASSERT_OK(fd);
	return fd;
}

int raw_settime(int fd, unsigned long cmd, unsigned int flags,
		       const void *nv, void *ov)
{
	struct dtfd_settime st = {
		.flags = flags,
		.new_value = (uintptr_t)nv,
		.old_value = (uintptr_t)ov,
	};

	return ioctl(fd, cmd, &st);
}

struct dtfd_features get_features(int fd)
{
	struct dtfd_features f;

	memset(&f, 0xff, sizeof(f));
	ASSERT_OK(ioctl(fd, DTFD_IOC_FEATURES, &f));
	return f;
}

/* the lowest free descriptor number, as the next open would get it */
int next_fd(void)
{
	int fd = dup(0);

	if (fd >= 0)
		close(fd);
	return fd;
}

struct dtfd_itimerspec64 its64(long long v, long long iv)
{
	struct dtfd_itimerspec64 t = {
		iv / NSEC_PER_SEC, iv % NSEC_PER_SEC,
		v / NSEC_PER_SEC, v % NSEC_PER_SEC,
	};

	return t;
}

struct dtfd_itimerspec32 its32(long long v, long long iv)
{
	struct dtfd_itimerspec32 t = {
		(int32_t)(iv / NSEC_PER_SEC), (int32_t)(iv % NSEC_PER_SEC),
		(int32_t)(v / NSEC_PER_SEC), (int32_t)(v % NSEC_PER_SEC),
	};

	return t;
}

/* 1 when this kernel has the 32-bit time ioctls (COMPAT_32BIT_TIME) */
int have_its32(int timer)
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

/* the five clocks, each the timer's; the features' mask, no fd lost */
static void create_clocks(int ctl, const struct dtfd_features *f)
{
	struct h_fdinfo fi;
	int c, fd, n;

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
		if (f->clocks & (1ULL << c))
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
}

/* O_CLOEXEC and O_NONBLOCK; every other bit EINVAL, a bad argument EFAULT */
static void create_flags(int ctl)
{
	int c, fd;

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
}

/*
 * Bound at birth, for life (v1's INIT-once and EBUSY): CREATE is not
 * a timer ioctl, settime does not change the clock.
 */
static void create_clock_for_life(int ctl, const struct itimerspec *itsp)
{
	struct itimerspec its = *itsp;
	struct h_fdinfo fi;
	int fd, n;

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
	int ctl;

	ctl = ctl_open();
	f = get_features(ctl);
	create_clocks(ctl, &f);
	/* flags: O_CLOEXEC and O_NONBLOCK; every other bit alone EINVAL */
	create_flags(ctl);
	create_clock_for_life(ctl, &its);

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

int fd_cloexec(int fd)
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

TEST_MAIN()
