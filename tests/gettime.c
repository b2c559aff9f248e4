// SPDX-License-Identifier: GPL-2.0
/*
 * gettime: error order, remaining time, the side effects on an expired
 * periodic timer, and fdinfo's side-effect-free view.  Items 20-23.
 */
#include "harness.h"

static int regular_file(void)
{
	char path[] = "/tmp/dtfd-gettime-XXXXXX";
	int fd = mkstemp(path);

	if (fd >= 0)
		unlink(path);
	return fd;
}

/* 20: EBADF -> EINVAL (not a timer) -> EFAULT */
TEST(error_order, T_NO_DEFER, 30)
{
	struct itimerspec cur;
	int timer = ops->create(CLOCK_MONOTONIC, 0);
	int file = regular_file();
	int p[2];

	ASSERT_OK(timer);
	ASSERT_OK(file);
	ASSERT_OK(pipe(p));
	close(1000);
	EXPECT_ERR(REC(ops->gettime(-1, NULL), "fd -1, NULL"), EBADF);
	EXPECT_ERR(REC(ops->gettime(-1, &cur), "fd -1"), EBADF);
	EXPECT_ERR(REC(ops->gettime(1000, h_bad_ptr()), "closed fd, bad"),
		   EBADF);
	EXPECT_ERR(REC(ops->gettime(file, NULL), "regular file, NULL"),
		   EINVAL);
	EXPECT_ERR(REC(ops->gettime(file, &cur), "regular file"), EINVAL);
	EXPECT_ERR(REC(ops->gettime(p[0], h_bad_ptr()), "pipe, bad"), EINVAL);
	EXPECT_ERR(REC(ops->gettime(timer, h_bad_ptr()), "timer, PROT_NONE"),
		   EFAULT);
	EXPECT_ERR(REC(ops->gettime(timer, NULL), "timer, NULL"), EFAULT);
	EXPECT_OK(REC(ops->gettime(timer, &cur), "timer"));
	close(p[0]);
	close(p[1]);
	close(file);
	close(timer);
}

/*
 * 20: every kind of descriptor that is not a timer: EBADF where there is
 * no usable descriptor (-1, closed, O_PATH), EINVAL for any other file,
 * before the pointer is looked at.
 */
TEST(not_a_timer, T_NO_DEFER, 30)
{
	struct itimerspec cur;
	struct h_not_timer nt[32];
	int timer = ops->create(CLOCK_MONOTONIC, 0);
	int i, n, p;

	ASSERT_OK(timer);
	n = h_not_timers(timer, nt, ARRAY_SIZE(nt));
	for (i = 0; i < n; i++)
	for (p = 0; p < 3; p++) {
		struct itimerspec *cv = p == 0 ? &cur : p == 1 ? NULL :
					h_bad_ptr();
		int expect = nt[i].bad ? EBADF : EINVAL;
		int r;

		r = REC(ops->gettime(nt[i].fd, cv), "%s, %s", nt[i].name,
			p == 0 ? "good" : p == 1 ? "NULL" : "PROT_NONE");
		if (r != -1 || errno != expect)
			h_fail(__FILE__, __LINE__, "not_a_timer",
			       "%s, %s: %d %s, want %s", nt[i].name,
			       p == 0 ? "good" : p == 1 ? "NULL" : "PROT_NONE",
			       r, r ? strerrorname_np(errno) : "",
			       strerrorname_np(expect));
	}
	h_not_timers_close(nt, n);
	EXPECT_OK(REC(ops->gettime(timer, &cur), "timer"));
	close(timer);
}

/*
 * 21: remaining time, relative even for ABSTIME timers, never more than
 * asked.  Bounds come from timestamps taken around the calls, so a slow
 * guest cannot make a correct answer fail.
 */
TEST(remaining, 0, 60)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(h_clocks); i++) {
		clockid_t c = h_clocks[i];
		clockid_t base = h_clock_base(c);
		const char *cn = h_clock_name(c);
		struct itimerspec its, cur;
		long long t0, t1, t2, rem;
		int fd;

		if (!h_clock_usable(c))
			continue;
		fd = ops->create(c, 0);
		ASSERT_OK(fd);

		/* LTP timerfd01: ABSTIME now+50 ms, interval 50 ms */
		its = h_its(h_now(base) + MS(50), MS(50));
		ASSERT_OK(ops->settime(fd, TFD_TIMER_ABSTIME, &its, NULL));
		EXPECT_OK(ops->gettime(fd, &cur));
		EXPECTF(cur.it_value.tv_sec == 0 &&
			cur.it_value.tv_nsec <= MS(50),
			"%s: {%lld, %ld}", cn, (long long)cur.it_value.tv_sec,
			cur.it_value.tv_nsec);
		h_rec_its(&cur, MS(50), "%s abstime +50 ms", cn);

		/* glibc: relative 2 s, sleep 1 s: about 1 s left */
		its = h_its(SEC(2), 0);
		t0 = h_now(CLOCK_MONOTONIC);
		ASSERT_OK(ops->settime(fd, 0, &its, NULL));
		t1 = h_now(CLOCK_MONOTONIC);
		h_sleep_ns(SEC(1));
		t2 = h_now(CLOCK_MONOTONIC);
		EXPECT_OK(ops->gettime(fd, &cur));
		rem = h_its_value(&cur);
		REC_WITHIN(rem, SEC(2) - (h_now(CLOCK_MONOTONIC) - t0) - MS(10),
			   SEC(2) - (t2 - t1), "%s relative 2 s after 1 s", cn);
		EXPECTF(rem <= SEC(2) - (t2 - t1) &&
			rem >= SEC(2) - (h_now(CLOCK_MONOTONIC) - t0) -
			       MS(10),
			"%s: remaining %lld ns after %lld ns", cn, rem,
			t2 - t1);

		/* selftests/timens: 3600 s, within a minute */
		its = h_its(SEC(3600), SEC(1));
		ASSERT_OK(ops->settime(fd, 0, &its, NULL));
		EXPECT_OK(ops->gettime(fd, &cur));
		EXPECT(cur.it_value.tv_sec >= 3540 &&
		       cur.it_value.tv_sec <= 3600);
		h_rec_its(&cur, SEC(60), "%s 3600 s", cn);
		its = h_its(h_now(base) + SEC(3600), 0);
		ASSERT_OK(ops->settime(fd, TFD_TIMER_ABSTIME, &its, NULL));
		EXPECT_OK(ops->gettime(fd, &cur));
		EXPECT(cur.it_value.tv_sec >= 3540 &&
		       cur.it_value.tv_sec <= 3600);
		h_rec_its(&cur, SEC(60), "%s abstime +3600 s", cn);

		/* nanosecond values come back exactly as far as they can */
		its = h_its(SEC(100) + 123456789, 987654321);
		ASSERT_OK(ops->settime(fd, 0, &its, NULL));
		EXPECT_OK(ops->gettime(fd, &cur));
		EXPECT(h_its_interval(&cur) == 987654321);
		EXPECT(h_its_value(&cur) <= SEC(100) + 123456789);
		close(fd);
	}
}

/* 22: gettime on an expired periodic timer advances it, banks overruns */
TEST(expired_periodic, 0, 60)
{
	struct itimerspec its = h_its(MS(10), MS(10)), cur;
	long long t0, t1, t2, t3, t4, t5, lo, hi, next;
	uint64_t ticks = 0;
	int fd = ops->create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	long r;
	int e, ok;

	ASSERT_OK(fd);
	t0 = h_now(CLOCK_MONOTONIC);
	ASSERT_OK(ops->settime(fd, 0, &its, NULL));
	t1 = h_now(CLOCK_MONOTONIC);
	h_sleep_ns(MS(105));
	t2 = h_now(CLOCK_MONOTONIC);
	EXPECT_OK(ops->gettime(fd, &cur));
	t3 = h_now(CLOCK_MONOTONIC);
	EXPECTF(h_its_value(&cur) > 0 && h_its_value(&cur) <= MS(10),
		"it_value %lld", h_its_value(&cur));
	EXPECT(h_its_interval(&cur) == MS(10));
	h_rec_its(&cur, MS(10), "gettime after 105 ms");
	/*
	 * The banked count is fixed by the gettime call's time.  The next
	 * expiry is due it_value after the gettime (after t2 at the
	 * earliest): a loaded host may let the reads below reach it, and
	 * then one more tick is right (timerfd's too).
	 */
	next = t2 + h_its_value(&cur);
	EXPECT(h_read(fd, &ticks) == 8);
	t4 = h_now(CLOCK_MONOTONIC);
	lo = (t2 - t1) / MS(10);
	hi = (t4 < next ? t3 - t0 : t4 - t0) / MS(10);
	EXPECTF((long long)ticks >= lo && (long long)ticks <= hi,
		"ticks %llu, want %lld..%lld", (unsigned long long)ticks, lo,
		hi);
	REC_WITHIN(ticks, lo, hi, "ticks");
	r = h_read(fd, &ticks);
	e = errno;
	t5 = h_now(CLOCK_MONOTONIC);
	ok = (r < 0 && e == EAGAIN) || (r == 8 && t5 >= next);
	EXPECTF(ok, "read again: %ld (%s) %lld ns before the next expiry", r,
		r < 0 ? strerror(e) : "-", next - t5);
	h_rec_val(ok, "read again: EAGAIN unless the next expiry came");

	/* expired one-shot: gettime zeros, the expiration stays readable */
	its = h_its(MS(10), 0);
	ASSERT_OK(ops->settime(fd, 0, &its, NULL));
	h_sleep_ns(MS(60));
	EXPECT_OK(ops->gettime(fd, &cur));
	h_rec_its(&cur, 0, "expired one-shot");
	EXPECT(h_its_value(&cur) == 0 && h_its_interval(&cur) == 0);
	EXPECT(REC(h_read(fd, &ticks), "read one-shot") == 8);
	EXPECT(REC(ticks, "one-shot ticks") == 1);
	close(fd);
}

/* 23 (with 47): fdinfo shows the same values, without side effects */
TEST(fdinfo_no_side_effects, 0, 60)
{
	struct itimerspec its = h_its(MS(10), MS(10)), cur;
	struct h_fdinfo fi;
	uint64_t ticks = 0;
	int fd = ops->create(CLOCK_MONOTONIC, TFD_NONBLOCK);

	ASSERT_OK(fd);
	ASSERT_OK(ops->settime(fd, 0, &its, NULL));
	h_sleep_ns(MS(100));
	ASSERT_OK(h_fdinfo(fd, &fi));
	/* raw: one pending expiry, nothing advanced, value clamped at 0 */
	EXPECT(REC(fi.ticks, "fdinfo ticks before gettime") == 1);
	EXPECT(REC(fi.value_sec, "fdinfo it_value sec") == 0);
	EXPECT(REC(fi.value_nsec, "fdinfo it_value nsec") == 0);
	EXPECT(fi.interval_sec == 0 && fi.interval_nsec == MS(10));
	ASSERT_OK(h_fdinfo(fd, &fi));
	EXPECT(REC(fi.ticks, "fdinfo ticks, second look") == 1);
	EXPECT_OK(ops->gettime(fd, &cur));
	ASSERT_OK(h_fdinfo(fd, &fi));
	EXPECTF(fi.ticks >= 5, "fdinfo ticks after gettime %llu", fi.ticks);
	REC_WITHIN(fi.ticks, 5, 100000, "fdinfo ticks after gettime");
	EXPECT(h_read(fd, &ticks) == 8);
	EXPECT(ticks >= fi.ticks);

	/* a pending, unexpired timer: fdinfo it_value within the request */
	its = h_its(SEC(50), 0);
	ASSERT_OK(ops->settime(fd, 0, &its, NULL));
	ASSERT_OK(h_fdinfo(fd, &fi));
	EXPECT(fi.value_sec >= 45 && fi.value_sec <= 50);
	h_rec_approx(fi.value_sec, 5, "fdinfo it_value 50 s");
	EXPECT(REC(fi.ticks, "fdinfo ticks armed") == 0);
	close(fd);
}

TEST_MAIN()
