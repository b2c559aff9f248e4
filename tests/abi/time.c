// SPDX-License-Identifier: GPL-2.0
/*
 * tests/abi, unit 1: the settime and gettime ioctls through raw calls,
 * both itimerspec layouts, and against timerfd's system calls per layout.
 */
#define TEST_UNIT	1

#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "../harness.h"
#include "abi.h"

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
/* a kernel without 32-bit time: both 32-bit ioctls fail, nothing changed */
static void its32_missing(int fd)
{
	struct dtfd_itimerspec32 in32 = { 3, 7, 100, 5 }, out32;
	struct dtfd_itimerspec64 out64;

	EXPECT_ERR(raw_settime(fd, DTFD_IOC_SETTIME32, 0, &in32, NULL),
		   ENOTTY);
	EXPECT_ERR(ioctl(fd, DTFD_IOC_GETTIME32, &out32), ENOTTY);
	EXPECT_OK(ioctl(fd, DTFD_IOC_GETTIME64, &out64));
	EXPECT(out64.value_sec == 0 && out64.value_nsec == 0);
	h_diag("no 32-bit time ioctls: kernel without COMPAT_32BIT_TIME");
}

/* each layout reads and writes exactly its own size, old value and current */
static void its_sizes(int fd)
{
	struct dtfd_itimerspec32 in32 = { 3, 7, 100, 5 }, out32;
	struct dtfd_itimerspec64 in64 = { 4, 11, 200, 9 }, out64;
	unsigned char buf[64];
	int r;

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
}

/* the same values through SETTIME32 on @fd and SETTIME64 on @fd2 */
static void its_same_values(int fd, int fd2)
{
	static const struct { long long v, iv; } vals[] = {
		{ 0, 0 }, { 1, 0 }, { SEC(100) + 5, SEC(2) + 7 },
		{ NSEC_PER_SEC - 1, 1 }, { SEC(0x7fffffffLL), 0 },
		{ SEC(5), SEC(0x7fffffffLL) },
	};
	size_t i;
	int r, r2, e, e2;

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
}

/* SETTIME32 and SETTIME64 refuse the same values, flags, pad, pointers */
static void its_same_errors(int fd)
{
	struct dtfd_itimerspec32 in32, out32;
	struct dtfd_itimerspec32 b32[] = {
		{ 0, 0, 0, 1000000000 }, { 0, 0, 0, -1 }, { 0, 0, -1, 0 },
		{ 0, 1000000000, 1, 0 }, { -1, 0, 1, 0 },
	};
	struct dtfd_itimerspec64 b64[] = {
		{ 0, 0, 0, 1000000000 }, { 0, 0, 0, -1 }, { 0, 0, -1, 0 },
		{ 0, 1000000000, 1, 0 }, { -1, 0, 1, 0 },
	};
	struct dtfd_settime s = { 0, 0, 0, 0 };
	size_t i;

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

TEST(its_layouts, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	int ctl = ctl_open(), fd = timer_open(ctl), fd2, has32;

	has32 = have_its32(fd);
	if (sizeof(time_t) == 4)
		EXPECTF(has32, "a 32-bit time_t process needs SETTIME32");
	if (!has32) {
		/* both 32-bit ioctls missing together, nothing changed */
		its32_missing(fd);
		close(fd);
		close(ctl);
		return;
	}
	its_sizes(fd);

	/* SETTIME32 == SETTIME64: the same values on two timers */
	fd2 = timer_open(ctl);
	its_same_values(fd, fd2);
	/* and the same errors: values, flags, pad, pointers */
	its_same_errors(fd);
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

struct lay_val {
	long long v, iv, vns, ivns;
	int flags;
};

/*
 * Value @i of @vals set in the layout @l32 and its old value recorded; one
 * beyond 32 bits' reach is set through 64 bits, to be read back in 32.
 */
static void lay_set(const struct tfd_ops *ops, int fd, int l32,
		    const struct lay_val *vals, size_t i)
{
	unsigned char nv[32], ov[64];
	size_t sz = l32 ? 16 : 32;
	int r;

	if (l32 && vals[i].v > 0x7fffffffLL) {
		/*
		 * Read the 64-bit one back through 32 bits.  In seconds: in
		 * ns (its64(SEC(...))) 2^40 s overflows a long long, which
		 * only happened to work while its64() was inlined here.
		 */
		struct dtfd_itimerspec64 n64 = { 0, 0, vals[i].v, 0 };

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
}

/* the timer read back in the layout @l32, after value @i */
static void lay_get(const struct tfd_ops *ops, int fd, int l32, size_t i)
{
	unsigned char cur[64];
	size_t sz = l32 ? 16 : 32;
	int r;

	memset(cur, 0xa5, sizeof(cur));
	r = REC(lay_gettime(ops, fd, l32, cur), "gettime%s %d",
		l32 ? "32" : "64", (int)i);
	if (!r) {
		rec_lay(l32, cur, "cur", (int)i);
		REC(untouched(cur, sz, sizeof(cur)),
		    "cur %d: size", (int)i);
	}
}

/* bad pointers, in the layout @l32 */
static void lay_bad_pointers(const struct tfd_ops *ops, int fd, int l32)
{
	REC(lay_settime(ops, fd, l32, 0, NULL, NULL), "settime%s NULL",
	    l32 ? "32" : "64");
	REC(lay_settime(ops, fd, l32, 0, h_bad_ptr(), NULL),
	    "settime%s bad", l32 ? "32" : "64");
	REC(lay_gettime(ops, fd, l32, NULL), "gettime%s NULL",
	    l32 ? "32" : "64");
	REC(lay_gettime(ops, fd, l32, h_bad_ptr()), "gettime%s bad",
	    l32 ? "32" : "64");
}

TEST(settime_layouts, T_NO_DEFER, 60)
{
	static const struct lay_val vals[] = {
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
	size_t i;

	ASSERT_OK(fd);
	if (ops->kind == BK_NATIVE)
		has32 = NATIVE_HAS_32;
	else
		has32 = NATIVE_HAS_32 && have_its32(fd);
	EXPECT(has32 == NATIVE_HAS_32);
	for (l32 = 0; l32 <= has32; l32++) {
		for (i = 0; i < ARRAY_SIZE(vals); i++) {
			lay_set(ops, fd, l32, vals, i);
			lay_get(ops, fd, l32, i);
		}
		/* bad pointers, in each layout */
		lay_bad_pointers(ops, fd, l32);
	}
	close(fd);
}
