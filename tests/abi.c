// SPDX-License-Identifier: GPL-2.0
/*
 * The dtimerfd ioctl ABI, through raw ioctls on /dev/dtimerfd: one layout
 * for 32- and 64-bit processes (checked at build time against the same
 * numbers in both builds), zero padding and unknown bits -> EINVAL,
 * unknown commands -> ENOTTY, the features query, DTFD_IOC_INIT's rules,
 * both itimerspec layouts.  Items 2, 12, 46, 54, 55 for the raw interface.
 */
#include <stddef.h>
#include <sys/ioctl.h>

#include "harness.h"

/* the same literals in the -m32 and the -m64 build: one layout */
#define CHECK_LAYOUT(type, size) \
	_Static_assert(sizeof(struct type) == (size), #type " size")
#define CHECK_OFF(type, field, off) \
	_Static_assert(offsetof(struct type, field) == (off), \
		       #type "." #field " offset")

CHECK_LAYOUT(dtfd_features, 32);
CHECK_OFF(dtfd_features, version, 0);
CHECK_OFF(dtfd_features, pad, 4);
CHECK_OFF(dtfd_features, features, 8);
CHECK_OFF(dtfd_features, settime_flags, 16);
CHECK_OFF(dtfd_features, clocks, 24);
CHECK_LAYOUT(dtfd_init, 8);
CHECK_OFF(dtfd_init, clockid, 0);
CHECK_OFF(dtfd_init, flags, 4);
CHECK_LAYOUT(dtfd_settime, 24);
CHECK_OFF(dtfd_settime, flags, 0);
CHECK_OFF(dtfd_settime, layout, 4);
CHECK_OFF(dtfd_settime, new_value, 8);
CHECK_OFF(dtfd_settime, old_value, 16);
CHECK_LAYOUT(dtfd_gettime, 16);
CHECK_OFF(dtfd_gettime, layout, 0);
CHECK_OFF(dtfd_gettime, pad, 4);
CHECK_OFF(dtfd_gettime, curr_value, 8);
_Static_assert(DTFD_IOC_FEATURES == 0x8020D700u, "FEATURES number");
_Static_assert(DTFD_IOC_INIT == 0x4008D701u, "INIT number");
_Static_assert(DTFD_IOC_SETTIME == 0x4018D702u, "SETTIME number");
_Static_assert(DTFD_IOC_GETTIME == 0x4010D703u, "GETTIME number");
_Static_assert(DTFD_IOC_SET_TICKS == 0x4008D704u, "SET_TICKS number");
CHECK_LAYOUT(dtfd_tolerance, 24);
CHECK_OFF(dtfd_tolerance, max_defer_ns, 8);
CHECK_OFF(dtfd_tolerance, flags, 16);
CHECK_LAYOUT(dtfd_stats, 48);
CHECK_LAYOUT(dtfd_itimerspec64, 32);
CHECK_OFF(dtfd_itimerspec64, value_sec, 16);
_Static_assert(DTFD_IOC_SET_TOLERANCE == 0x4018D705u, "SET_TOLERANCE number");
_Static_assert(DTFD_IOC_GET_TOLERANCE == 0x8018D706u, "GET_TOLERANCE number");
_Static_assert(DTFD_IOC_GET_STATS == 0x8030D707u, "GET_STATS number");
_Static_assert(DTFD_IOC_GETTIME64 == 0x8020D708u, "GETTIME64 number");
_Static_assert(DTFD_TIMER_ABSTIME == TFD_TIMER_ABSTIME, "ABSTIME");
_Static_assert(DTFD_TIMER_CANCEL_ON_SET == TFD_TIMER_CANCEL_ON_SET,
	       "CANCEL_ON_SET");
/* DEFERRABLE must not collide with timerfd's flags nor the open flags */
_Static_assert(!(DTFD_TIMER_DEFERRABLE & (TFD_TIMER_ABSTIME |
					  TFD_TIMER_CANCEL_ON_SET)),
	       "DEFERRABLE bit");
_Static_assert(!(DTFD_TIMER_DEFERRABLE & (O_CLOEXEC | O_NONBLOCK)),
	       "DEFERRABLE vs O_*");

/* struct itimerspec: it_interval first, then it_value */
struct its32 {
	int32_t interval_sec, interval_nsec, value_sec, value_nsec;
};

static int raw_open(void)
{
	int fd = open(DTIMERFD_DEVICE, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		h_skip("%s: %s", DTIMERFD_DEVICE, strerror(errno));
	return fd;
}

static struct dtfd_features get_features(int fd)
{
	struct dtfd_features f;

	memset(&f, 0xff, sizeof(f));
	ASSERT_OK(ioctl(fd, DTFD_IOC_FEATURES, &f));
	return f;
}

TEST(features, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	int fd = raw_open();
	struct dtfd_features f = get_features(fd);

	h_diag("version %u features %#llx settime_flags %#llx clocks %#llx",
	       f.version, (unsigned long long)f.features,
	       (unsigned long long)f.settime_flags,
	       (unsigned long long)f.clocks);
	EXPECT(f.version == DTFD_ABI_VERSION);
	EXPECT(f.pad == 0);
	EXPECT((f.settime_flags & 3) == 3);
	EXPECT(!!(f.settime_flags & DTFD_TIMER_DEFERRABLE) ==
	       !!(f.features & DTFD_FEATURE_DEFERRABLE));
	EXPECT(!(f.settime_flags & ~7ULL));
	EXPECT((f.clocks & 0x83) == 0x83);	/* REALTIME MONOTONIC BOOTTIME */
	EXPECT(!!(f.features & DTFD_FEATURE_ALARM) ==
	       ((f.clocks & 0x300) == 0x300));
	EXPECT(!(f.clocks & ~0x383ULL));
	/* only bits the header defines */
	EXPECT(!(f.features & ~(DTFD_FEATURE_DEFERRABLE |
				DTFD_FEATURE_CANCEL_ON_SET |
				DTFD_FEATURE_ALARM | DTFD_FEATURE_TIMENS |
				DTFD_FEATURE_SLACK | DTFD_FEATURE_BOUNDED |
				DTFD_FEATURE_STATS)));
	/* works before and after INIT, with a NULL pointer EFAULT */
	EXPECT_ERR(ioctl(fd, DTFD_IOC_FEATURES, NULL), EFAULT);
	EXPECT_ERR(ioctl(fd, DTFD_IOC_FEATURES, h_bad_ptr()), EFAULT);
	close(fd);
}

TEST(init_rules, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	struct itimerspec its = h_its(SEC(100), 0);
	struct dtfd_settime st = { 0, DTFD_ITS_64, 0, 0 };
	struct dtfd_init in;
	struct h_fdinfo fi;
	int c, fd;

	for (c = -2; c <= 12; c++) {
		int valid = c == 0 || c == 1 || c == 7 || c == 8 || c == 9;

		fd = raw_open();
		in.clockid = c;
		in.flags = 0;
		if (valid)
			EXPECTF(!ioctl(fd, DTFD_IOC_INIT, &in) ||
				(c >= 8 && errno == EPERM && !h_can_wake_alarm()),
				"clock %d: %s", c, strerror(errno));
		else
			EXPECT_ERR(ioctl(fd, DTFD_IOC_INIT, &in), EINVAL);
		close(fd);
	}
	/* flags must be zero: every bit */
	for (c = 0; c < 32; c++) {
		fd = raw_open();
		in.clockid = CLOCK_MONOTONIC;
		in.flags = 1u << c;
		EXPECT_ERR(ioctl(fd, DTFD_IOC_INIT, &in), EINVAL);
		close(fd);
	}
	/* once only; not after settime; NULL EFAULT */
	fd = raw_open();
	EXPECT_ERR(ioctl(fd, DTFD_IOC_INIT, NULL), EFAULT);
	in.clockid = CLOCK_BOOTTIME;
	in.flags = 0;
	EXPECT_OK(ioctl(fd, DTFD_IOC_INIT, &in));
	ASSERT_OK(h_fdinfo(fd, &fi));
	EXPECT(fi.clockid == CLOCK_BOOTTIME);
	in.clockid = CLOCK_REALTIME;
	EXPECT_ERR(ioctl(fd, DTFD_IOC_INIT, &in), EBUSY);
	close(fd);

	/* never bound: MONOTONIC; settime then makes INIT EBUSY */
	fd = raw_open();
	st.new_value = (uintptr_t)&its;
	st.layout = sizeof(time_t) == 8 ? DTFD_ITS_64 : DTFD_ITS_32;
	EXPECT_OK(ioctl(fd, DTFD_IOC_SETTIME, &st));
	ASSERT_OK(h_fdinfo(fd, &fi));
	EXPECT(fi.clockid == CLOCK_MONOTONIC);
	in.clockid = CLOCK_REALTIME;
	EXPECT_ERR(ioctl(fd, DTFD_IOC_INIT, &in), EBUSY);
	close(fd);
}

TEST(settime_raw, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	struct itimerspec its = h_its(SEC(100), 0), cur;
	int layout = sizeof(time_t) == 8 ? DTFD_ITS_64 : DTFD_ITS_32;
	struct dtfd_settime st;
	struct dtfd_features f;
	int fd = raw_open(), bit;

	f = get_features(fd);
	memset(&st, 0, sizeof(st));
	st.layout = layout;
	st.new_value = (uintptr_t)&its;
	EXPECT_OK(ioctl(fd, DTFD_IOC_SETTIME, &st));
	for (bit = 0; bit < 32; bit++) {
		st.flags = 1u << bit;
		if (f.settime_flags & st.flags)
			continue;
		EXPECT_ERR(ioctl(fd, DTFD_IOC_SETTIME, &st), EINVAL);
	}
	st.flags = 0;
	st.layout = 2;
	EXPECT_ERR(ioctl(fd, DTFD_IOC_SETTIME, &st), EINVAL);
	st.layout = 0xffffffffu;
	EXPECT_ERR(ioctl(fd, DTFD_IOC_SETTIME, &st), EINVAL);
	st.layout = layout;
	st.new_value = 0;
	EXPECT_ERR(ioctl(fd, DTFD_IOC_SETTIME, &st), EFAULT);
	st.new_value = (uintptr_t)h_bad_ptr();
	EXPECT_ERR(ioctl(fd, DTFD_IOC_SETTIME, &st), EFAULT);
	/* an address no 32-bit process could hold */
	st.new_value = 0xdead00000000ULL;
	EXPECT_ERR(ioctl(fd, DTFD_IOC_SETTIME, &st), EFAULT);
	st.new_value = (uintptr_t)&its;
	st.old_value = (uintptr_t)h_bad_ptr();
	EXPECT_ERR(ioctl(fd, DTFD_IOC_SETTIME, &st), EFAULT);
	/* and that EFAULT came after the new setting took effect */
	its = h_its(SEC(50), 0);
	st.old_value = (uintptr_t)h_bad_ptr();
	EXPECT_ERR(ioctl(fd, DTFD_IOC_SETTIME, &st), EFAULT);
	ASSERT_OK(dtimerfd_gettime(fd, &cur));
	EXPECT(h_its_value(&cur) <= SEC(50) && h_its_value(&cur) > SEC(45));
	EXPECT_ERR(ioctl(fd, DTFD_IOC_SETTIME, NULL), EFAULT);
	close(fd);
}

TEST(gettime_raw, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	struct itimerspec its = h_its(SEC(100), SEC(2)), cur;
	int layout = sizeof(time_t) == 8 ? DTFD_ITS_64 : DTFD_ITS_32;
	struct dtfd_gettime gt;
	int fd = raw_open();

	ASSERT_OK(dtimerfd_settime(fd, 0, &its, NULL));
	memset(&gt, 0, sizeof(gt));
	gt.layout = layout;
	gt.curr_value = (uintptr_t)&cur;
	EXPECT_OK(ioctl(fd, DTFD_IOC_GETTIME, &gt));
	EXPECT(h_its_interval(&cur) == SEC(2));
	gt.pad = 1;
	EXPECT_ERR(ioctl(fd, DTFD_IOC_GETTIME, &gt), EINVAL);
	gt.pad = 0x80000000u;
	EXPECT_ERR(ioctl(fd, DTFD_IOC_GETTIME, &gt), EINVAL);
	gt.pad = 0;
	gt.layout = 7;
	EXPECT_ERR(ioctl(fd, DTFD_IOC_GETTIME, &gt), EINVAL);
	gt.layout = layout;
	gt.curr_value = 0;
	EXPECT_ERR(ioctl(fd, DTFD_IOC_GETTIME, &gt), EFAULT);
	EXPECT_ERR(ioctl(fd, DTFD_IOC_GETTIME, NULL), EFAULT);

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
	close(fd);
}

/* both itimerspec layouts work, whatever this process's word size */
TEST(its_layouts, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	struct its32 in32 = { 3, 7, 100, 5 }, out32;
	struct {
		int64_t interval_sec, interval_nsec, value_sec, value_nsec;
	} in64 = { 4, 11, 200, 9 }, out64;
	struct dtfd_settime st = { 0, DTFD_ITS_32, 0, 0 };
	struct dtfd_gettime gt = { DTFD_ITS_64, 0, 0 };
	int fd = raw_open();
	int r;

	st.new_value = (uintptr_t)&in32;
	r = ioctl(fd, DTFD_IOC_SETTIME, &st);
	if (r) {
		h_diag("DTFD_ITS_32 from this process: %s", strerror(errno));
		EXPECT_ERR(r, EINVAL);
	} else {
		gt.curr_value = (uintptr_t)&out64;
		EXPECT_OK(ioctl(fd, DTFD_IOC_GETTIME, &gt));
		EXPECT(out64.interval_sec == 3 && out64.interval_nsec == 7);
		EXPECT(out64.value_sec >= 95 && out64.value_sec <= 100);
	}
	st.layout = DTFD_ITS_64;
	st.new_value = (uintptr_t)&in64;
	st.old_value = (uintptr_t)&out64;
	r = ioctl(fd, DTFD_IOC_SETTIME, &st);
	if (r) {
		h_diag("DTFD_ITS_64 from this process: %s", strerror(errno));
		EXPECT_ERR(r, EINVAL);
		EXPECT(sizeof(long) == 4);
	} else {
		gt.layout = DTFD_ITS_32;
		gt.curr_value = (uintptr_t)&out32;
		if (!ioctl(fd, DTFD_IOC_GETTIME, &gt)) {
			EXPECT(out32.interval_sec == 4 &&
			       out32.interval_nsec == 11);
			EXPECT(out32.value_sec >= 195 && out32.value_sec <= 200);
		}
	}
	/* a 64-bit value too big for the 32-bit layout */
	in64.value_sec = 1LL << 40;
	st.old_value = 0;
	if (!ioctl(fd, DTFD_IOC_SETTIME, &st)) {
		gt.layout = DTFD_ITS_32;
		gt.curr_value = (uintptr_t)&out32;
		r = ioctl(fd, DTFD_IOC_GETTIME, &gt);
		h_diag("2^40 s read back in the 32-bit layout: %d %s, sec %d",
		       r, r ? strerror(errno) : "", out32.value_sec);
	}
	close(fd);
}

TEST(unknown_ioctls, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	unsigned long cmds[] = {
		_IO(DTFD_IOC_MAGIC, 0), _IO(DTFD_IOC_MAGIC, 5),
		_IOW(DTFD_IOC_MAGIC, 5, uint64_t),
		_IOR(DTFD_IOC_MAGIC, 9, uint64_t),
		_IOW(DTFD_IOC_MAGIC, 2, uint64_t),	/* SETTIME, wrong size */
		_IOR(DTFD_IOC_MAGIC, 2, struct dtfd_settime),
		TFD_IOC_SET_TICKS,			/* timerfd's number */
		_IO('T', 0x7f), 0, 0xffffffffUL,
	};
	uint64_t buf[8] = { 1 };
	size_t i;
	int fd = raw_open();
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	struct dtfd_features f;

	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		EXPECTF(ioctl(fd, cmds[i], buf) == -1 && errno == ENOTTY,
			"cmd %#lx: %s", cmds[i], strerror(errno));
	/* our numbers on a timerfd and on another device: ENOTTY */
	ASSERT_OK(tfd);
	EXPECT_ERR(ioctl(tfd, DTFD_IOC_FEATURES, &f), ENOTTY);
	EXPECT_ERR(ioctl(tfd, DTFD_IOC_SET_TICKS, buf), ENOTTY);
	EXPECT_ERR(ioctl(null, DTFD_IOC_FEATURES, &f), ENOTTY);
	close(null);
	close(tfd);
	close(fd);
}

/* documented: an alarm timer cannot be deferrable (EINVAL, no change) */
TEST(deferrable_alarm_einval, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	struct itimerspec its = h_its(SEC(100), 0), cur;
	struct dtfd_features f;
	int fd = raw_open();
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

/* the library opens the device read-write and binds the clock */
TEST(library_open, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	struct h_fdinfo fi;
	int fd = dtimerfd_create(CLOCK_REALTIME, 0);

	ASSERT_OK(fd);
	EXPECT((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR);
	ASSERT_OK(h_fdinfo(fd, &fi));
	EXPECT(fi.clockid == CLOCK_REALTIME);
	EXPECT(fi.ordered);
	if (fi.extra[0])
		h_diag("dtimerfd lines: %s", fi.extra);
	close(fd);
}

TEST_MAIN()
