// SPDX-License-Identifier: GPL-2.0
/*
 * settime: argument checks and their order, what a new setting does to the
 * old one, past and huge expiry times, clock steps.  Behaviour items 9-19.
 */
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>

#include "harness.h"

#define TIME_T_MAX	((time_t)((1ULL << (sizeof(time_t) * 8 - 1)) - 1))

static int regular_file(void)
{
	char path[] = "/tmp/dtfd-settime-XXXXXX";
	int fd = mkstemp(path);

	if (fd >= 0)
		unlink(path);
	return fd;
}

/*
 * 9: copy-in (EFAULT) -> flags and values (EINVAL) -> fd (EBADF) -> fd type
 * (EINVAL) -> program -> copy-out (EFAULT), over the whole matrix.
 */
TEST(error_order, 0, 60)
{
	struct itimerspec good = h_its(SEC(3600), 0);
	struct itimerspec badts = good, old;
	void *bad = h_bad_ptr();
	int timer = ops->create(CLOCK_MONOTONIC, 0);
	int file = regular_file();
	int fds[4], nf, nfl, nn, no;
	static const char *fdn[] = { "timer", "-1", "closed", "file" };
	static const int flagv[] = { 0, TFD_TIMER_ABSTIME, -1, 0x100 };
	static const char *newn[] = { "good", "NULL", "bad", "invalid" };
	static const char *oldn[] = { "NULL", "good", "bad" };

	ASSERT_OK(timer);
	ASSERT_OK(file);
	badts.it_value.tv_nsec = -1;
	fds[0] = timer;
	fds[1] = -1;
	fds[2] = 1000;	/* not open */
	fds[3] = file;
	close(1000);
	for (nf = 0; nf < 4; nf++)
	for (nfl = 0; nfl < 4; nfl++)
	for (nn = 0; nn < 4; nn++)
	for (no = 0; no < 3; no++) {
		const struct itimerspec *nv = nn == 0 ? &good :
			nn == 1 ? NULL : nn == 2 ? bad : &badts;
		struct itimerspec *ov = no == 0 ? NULL :
			no == 1 ? &old : bad;
		int expect;
		int r;

		if (nn == 1 || nn == 2)
			expect = EFAULT;
		else if (nfl >= 2 || nn == 3)
			expect = EINVAL;
		else if (nf == 1 || nf == 2)
			expect = EBADF;
		else if (nf == 3)
			expect = EINVAL;
		else if (no == 2)
			expect = EFAULT;
		else
			expect = 0;
		r = REC(ops->settime(fds[nf], flagv[nfl], nv, ov),
			"fd %s flags %#x new %s old %s", fdn[nf], flagv[nfl],
			newn[nn], oldn[no]);
		if (expect)
			EXPECT_ERR(r, expect);
		else
			EXPECT(r == 0);
		if (r && expect && errno != expect)
			h_diag("fd %s flags %#x new %s old %s: %s, want %s",
			       fdn[nf], flagv[nfl], newn[nn], oldn[no],
			       strerrorname_np(errno), strerrorname_np(expect));
	}
	close(file);
	close(timer);
}

/* 10: LTP timerfd_settime01's four cases */
TEST(ltp_settime01, 0, 30)
{
	struct itimerspec zero = h_its(0, 0);
	int timer = ops->create(CLOCK_MONOTONIC, 0);
	int file = regular_file();

	ASSERT_OK(timer);
	ASSERT_OK(file);
	EXPECT_ERR(REC(ops->settime(-1, 0, &zero, NULL), "fd -1"), EBADF);
	EXPECT_ERR(REC(ops->settime(timer, 0, &zero, h_bad_ptr()),
		       "old_value PROT_NONE"), EFAULT);
	EXPECT_ERR(REC(ops->settime(file, 0, &zero, NULL), "regular file"),
		   EINVAL);
	EXPECT_ERR(REC(ops->settime(timer, -1, &zero, NULL), "flags -1"),
		   EINVAL);
	/* other foreign fds: a pipe, /dev/null (a char device), a socket */
	{
		int p[2];
		int null = open("/dev/null", O_RDWR);

		ASSERT_OK(pipe(p));
		EXPECT_ERR(REC(ops->settime(p[0], 0, &zero, NULL), "pipe"),
			   EINVAL);
		EXPECT_ERR(REC(ops->settime(null, 0, &zero, NULL),
			       "/dev/null"), EINVAL);
		close(p[0]);
		close(p[1]);
		close(null);
	}
	close(file);
	close(timer);
}

/*
 * 9, 10: every kind of descriptor that is not a timer.  timerfd looks the
 * fd up only after the copy-in and the flag checks, then says EBADF when
 * there is no usable descriptor (-1, closed, O_PATH) and EINVAL for any
 * other file.
 */
TEST(not_a_timer, 0, 60)
{
	struct itimerspec good = h_its(SEC(3600), 0);
	struct h_not_timer nt[32];
	int timer = ops->create(CLOCK_MONOTONIC, 0);
	int i, n, fl, nn, no;

	ASSERT_OK(timer);
	n = h_not_timers(timer, nt, ARRAY_SIZE(nt));
	for (i = 0; i < n; i++)
	for (fl = 0; fl < 2; fl++)
	for (nn = 0; nn < 2; nn++)
	for (no = 0; no < 2; no++) {
		int flags = fl ? -1 : 0;
		const struct itimerspec *nv = nn ? NULL : &good;
		struct itimerspec *ov = no ? h_bad_ptr() : NULL;
		int expect = nn ? EFAULT : fl ? EINVAL :
			     nt[i].bad ? EBADF : EINVAL;
		int r;

		r = REC(ops->settime(nt[i].fd, flags, nv, ov),
			"%s flags %d new %s old %s", nt[i].name, flags,
			nn ? "NULL" : "good", no ? "bad" : "NULL");
		if (r != -1 || errno != expect)
			h_fail(__FILE__, __LINE__, "not_a_timer",
			       "%s, flags %d, new %s, old %s: %d %s, want %s",
			       nt[i].name, flags, nn ? "NULL" : "good",
			       no ? "bad" : "NULL", r,
			       r ? strerrorname_np(errno) : "",
			       strerrorname_np(expect));
	}
	h_not_timers_close(nt, n);
	/* and the timer is still a timer, unarmed */
	EXPECT_OK(REC(ops->settime(timer, 0, &good, NULL), "timer"));
	close(timer);
}

/* 11: invalid timespecs are EINVAL and leave the timer as it was */
TEST(invalid_timespecs, 0, 60)
{
	static const long long bad[][2] = {
		{ -1, 0 }, { 0, -1 }, { 0, 1000000000 }, { 0, 1000000001 },
		{ -1, 999999999 }, { LLONG_MIN / 2, 0 },
	};
	struct itimerspec armed = h_its(SEC(3600), SEC(7)), cur;
	uint64_t ticks;
	size_t i;
	int pass, which, abs;

	for (pass = 0; pass < 2; pass++) {
		int fd = ops->create(CLOCK_REALTIME, TFD_NONBLOCK);

		ASSERT_OK(fd);
		if (pass)
			ASSERT_OK(ops->settime(fd, 0, &armed, NULL));
		for (i = 0; i < ARRAY_SIZE(bad); i++)
		for (which = 0; which < 2; which++)
		for (abs = 0; abs < 2; abs++) {
			struct itimerspec its = h_its(MS(200), 0);
			struct timespec *ts = which ? &its.it_interval :
						      &its.it_value;

			if (abs)
				its.it_value = h_ns_ts(h_now(CLOCK_REALTIME) +
						       SEC(60));
			if (bad[i][0] < LONG_MIN / 2 && sizeof(time_t) < 8)
				ts->tv_sec = INT_MIN;
			else
				ts->tv_sec = (time_t)bad[i][0];
			ts->tv_nsec = bad[i][1];
			EXPECT_ERR(REC(ops->settime(fd,
					abs ? TFD_TIMER_ABSTIME : 0, &its,
					NULL),
				"%s {%lld,%lld} in %s%s",
				pass ? "armed" : "disarmed", bad[i][0],
				bad[i][1], which ? "interval" : "value",
				abs ? " abstime" : ""), EINVAL);
		}
		EXPECT_OK(ops->gettime(fd, &cur));
		h_rec_its(&cur, SEC(5), "after, %s",
			  pass ? "armed" : "disarmed");
		if (pass)
			EXPECT(h_its_value(&cur) > SEC(3500) &&
			       h_its_interval(&cur) == SEC(7));
		else
			EXPECT(h_its_value(&cur) == 0 &&
			       h_its_interval(&cur) == 0);
		h_sleep_ns(MS(300));
		EXPECT(REC(h_poll(fd, 0, NULL), "poll after") == 0);
		EXPECT_ERR(REC(h_read(fd, &ticks), "read after"), EAGAIN);
		close(fd);
	}
}

/*
 * 12: settime flags are ABSTIME and CANCEL_ON_SET; any other bit alone is
 * EINVAL.  Bit 2 is DTFD_TIMER_DEFERRABLE, which native timerfd rejects
 * and dtimerfd accepts by design, so the loop leaves it out and checks
 * native's EINVAL on its own.
 */
TEST(flag_bits, 0, 60)
{
	struct itimerspec its = h_its(SEC(3600), 0);
	struct h_fdinfo fi;
	int bit, fd;
	size_t c;

	fd = ops->create(CLOCK_MONOTONIC, 0);
	ASSERT_OK(fd);
	for (bit = 0; bit < 32; bit++) {
		int fl = (int)(1u << bit);
		int r;

		if (fl == DTFD_TIMER_DEFERRABLE)
			continue;
		r = REC(ops->settime(fd, fl, &its, NULL), "settime flags 1<<%d",
			bit);
		if (fl == TFD_TIMER_ABSTIME || fl == TFD_TIMER_CANCEL_ON_SET)
			EXPECT(r == 0);
		else
			EXPECT_ERR(r, EINVAL);
	}
	/* timerfd refuses bit 2, but on a kernel with patches/ applied */
	if (ops->kind == BK_NATIVE) {
		int r = ops->settime(fd, DTFD_TIMER_DEFERRABLE, &its, NULL);

		if (h_timerfd_deferrable())
			EXPECT_OK(r);
		else
			EXPECT_ERR(r, EINVAL);
	}
	/* CANCEL_ON_SET is accepted on every clock, with or without ABSTIME */
	for (c = 0; c < ARRAY_SIZE(h_clocks); c++) {
		int t;

		if (!h_clock_usable(h_clocks[c]))
			continue;
		t = ops->create(h_clocks[c], 0);
		ASSERT_OK(t);
		EXPECT_OK(REC(ops->settime(t, TFD_TIMER_CANCEL_ON_SET, &its,
					   NULL), "%s CANCEL_ON_SET",
			      h_clock_name(h_clocks[c])));
		close(t);
	}
	/* fdinfo records the bits passed, even where they do nothing */
	its.it_value = h_ns_ts(h_now(CLOCK_MONOTONIC) + SEC(3600));
	ASSERT_OK(REC(ops->settime(fd, TFD_TIMER_ABSTIME |
				   TFD_TIMER_CANCEL_ON_SET, &its, NULL),
		      "MONOTONIC ABSTIME|CANCEL_ON_SET"));
	ASSERT_OK(h_fdinfo(fd, &fi));
	REC(fi.settime_flags & 3, "fdinfo settime flags");
	if (!ops->defers)
		EXPECTF(!strcmp(fi.settime_flags_str, "03"), "got '%s'",
			fi.settime_flags_str);
	close(fd);
}

/* 13: a bad old_value fails after the new setting took effect */
TEST(old_value_efault_after_effect, 0, 30)
{
	struct itimerspec its = h_its(MS(50), 0);
	uint64_t ticks = 0;
	int fd = ops->create(CLOCK_MONOTONIC, 0);

	ASSERT_OK(fd);
	EXPECT_ERR(REC(ops->settime(fd, 0, &its, h_bad_ptr()),
		       "arm 50 ms, old_value bad"), EFAULT);
	EXPECT(REC(h_wait_read(fd, 5000, &ticks), "read") == 8);
	EXPECT(REC(ticks, "ticks") == 1);
	close(fd);
}

/* 14: value 0 disarms, but the interval is stored */
TEST(zero_value_keeps_interval, 0, 30)
{
	struct itimerspec its = h_its(0, SEC(1)), cur;
	struct h_fdinfo fi;
	int fd = ops->create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	uint64_t ticks;

	ASSERT_OK(fd);
	ASSERT_OK(REC(ops->settime(fd, 0, &its, NULL), "value 0 interval 1s"));
	EXPECT_OK(REC(ops->gettime(fd, &cur), "gettime"));
	h_rec_its(&cur, 0, "gettime");
	EXPECT(h_its_value(&cur) == 0 && h_its_interval(&cur) == SEC(1));
	ASSERT_OK(h_fdinfo(fd, &fi));
	REC(fi.value_sec * NSEC_PER_SEC + fi.value_nsec, "fdinfo it_value");
	REC(fi.interval_sec * NSEC_PER_SEC + fi.interval_nsec,
	    "fdinfo it_interval");
	EXPECT(fi.interval_sec == 1 && fi.interval_nsec == 0);
	EXPECT(fi.value_sec == 0 && fi.value_nsec == 0);
	h_sleep_ns(MS(1200));
	EXPECT_ERR(REC(h_read(fd, &ticks), "read after 1.2 s"), EAGAIN);
	close(fd);
}

/* 15: every settime discards pending expirations */
TEST(discards_pending, 0, 30)
{
	struct itimerspec shortt = h_its(MS(10), 0);
	struct itimerspec longt = h_its(SEC(3600), 0);
	struct itimerspec off = h_its(0, 0);
	uint64_t ticks;
	int fd = ops->create(CLOCK_MONOTONIC, TFD_NONBLOCK);

	ASSERT_OK(fd);
	ASSERT_OK(ops->settime(fd, 0, &shortt, NULL));
	h_sleep_ns(MS(100));
	EXPECT(REC(h_poll(fd, 0, NULL), "readable before re-arm") == 1);
	ASSERT_OK(REC(ops->settime(fd, 0, &longt, NULL), "re-arm 1 h"));
	EXPECT(REC(h_poll(fd, 0, NULL), "poll after re-arm") == 0);
	EXPECT_ERR(REC(h_read(fd, &ticks), "read after re-arm"), EAGAIN);

	shortt = h_its(MS(10), MS(10));
	ASSERT_OK(ops->settime(fd, 0, &shortt, NULL));
	h_sleep_ns(MS(100));
	ASSERT_OK(REC(ops->settime(fd, 0, &off, NULL), "disarm"));
	EXPECT(REC(h_poll(fd, 0, NULL), "poll after disarm") == 0);
	EXPECT_ERR(REC(h_read(fd, &ticks), "read after disarm"), EAGAIN);
	close(fd);
}

/* 16: old_value is the previous setting, relative, never absolute */
TEST(old_value_relative, 0, 60)
{
	struct itimerspec its, old;
	long long now;
	int fd = ops->create(CLOCK_MONOTONIC, TFD_NONBLOCK);

	ASSERT_OK(fd);
	its = h_its(0, 0);
	memset(&old, 0x55, sizeof(old));
	ASSERT_OK(ops->settime(fd, 0, &its, &old));
	h_rec_its(&old, 0, "old of a new timer");
	EXPECT(h_its_value(&old) == 0 && h_its_interval(&old) == 0);

	its = h_its(SEC(1), MS(300));
	ASSERT_OK(ops->settime(fd, 0, &its, NULL));
	ASSERT_OK(ops->settime(fd, 0, &its, &old));
	h_rec_its(&old, MS(200), "old after relative 1 s");
	EXPECT(h_its_value(&old) > 0 && h_its_value(&old) <= SEC(1));
	EXPECT(h_its_interval(&old) == MS(300));

	now = h_now(CLOCK_MONOTONIC);
	its = h_its(now + SEC(1), 0);
	ASSERT_OK(ops->settime(fd, TFD_TIMER_ABSTIME, &its, NULL));
	its = h_its(SEC(5), 0);
	ASSERT_OK(ops->settime(fd, 0, &its, &old));
	h_rec_its(&old, MS(200), "old after abstime now+1 s");
	EXPECT(h_its_value(&old) > 0 && h_its_value(&old) <= SEC(1));

	/* an expired periodic timer: advanced to its next boundary */
	its = h_its(MS(10), MS(70));
	ASSERT_OK(ops->settime(fd, 0, &its, NULL));
	h_sleep_ns(MS(150));
	ASSERT_OK(ops->settime(fd, 0, &its, &old));
	EXPECTF(h_its_value(&old) > 0 && h_its_value(&old) <= MS(70),
		"old it_value %lld", h_its_value(&old));
	h_rec_its(&old, MS(70), "old of expired periodic");

	/* an expired one-shot: zeros */
	its = h_its(MS(10), 0);
	ASSERT_OK(ops->settime(fd, 0, &its, NULL));
	h_sleep_ns(MS(100));
	its = h_its(0, 0);
	ASSERT_OK(ops->settime(fd, 0, &its, &old));
	h_rec_its(&old, 0, "old of expired one-shot");
	EXPECT(h_its_value(&old) == 0 && h_its_interval(&old) == 0);
	close(fd);
}

static void past_one(const struct tfd_ops *ops, clockid_t c, int flags,
		     long long value, const char *what)
{
	struct itimerspec its = h_its(value, 0);
	long long t0, dt;
	uint64_t ticks = 0;
	int fd = ops->create(c, TFD_NONBLOCK);

	ASSERT_OK(fd);
	t0 = h_now(CLOCK_MONOTONIC);
	ASSERT_OK(REC(ops->settime(fd, flags, &its, NULL), "%s %s",
		      h_clock_name(c), what));
	EXPECT(REC(h_poll(fd, 2000, NULL), "%s %s readable",
		   h_clock_name(c), what) == 1);
	dt = h_now(CLOCK_MONOTONIC) - t0;
	EXPECTF(dt < MS(500), "%s %s: readable after %lld us",
		h_clock_name(c), what, dt / 1000);
	EXPECT(REC(h_read(fd, &ticks), "%s %s read", h_clock_name(c),
		   what) == 8);
	EXPECT(REC(ticks, "%s %s ticks", h_clock_name(c), what) == 1);
	close(fd);
}

/* 17: an expiry in the past fires at once, with exactly one expiration */
TEST(past_expiry, 0, 60)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(h_clocks); i++) {
		clockid_t c = h_clocks[i];
		clockid_t base = h_clock_base(c);

		if (!h_clock_usable(c))
			continue;
		past_one(ops, c, 0, 1, "relative 1 ns");
		past_one(ops, c, TFD_TIMER_ABSTIME, h_now(base) - SEC(1),
			 "abstime now-1 s");
		past_one(ops, c, TFD_TIMER_ABSTIME, 1, "abstime {0,1}");
	}
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* 18: huge values saturate; the timer is armed far away, read blocks */
TEST(huge_values, 0, 60)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerspec its, cur;
	static const clockid_t clocks[] = {
		CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME,
	};
	uint64_t ticks;
	size_t i;
	int abs;

	sigaction(SIGALRM, &sa, NULL);	/* no SA_RESTART */
	for (i = 0; i < ARRAY_SIZE(clocks); i++)
	for (abs = 0; abs < 2; abs++) {
		const char *cn = h_clock_name(clocks[i]);
		int fd = ops->create(clocks[i], 0);
		long long t0;
		int r;

		ASSERT_OK(fd);
		memset(&its, 0, sizeof(its));
		its.it_value.tv_sec = TIME_T_MAX;
		its.it_value.tv_nsec = 999999999;
		r = REC(ops->settime(fd, abs ? TFD_TIMER_ABSTIME : 0, &its,
				     NULL), "%s %s max time_t", cn,
			abs ? "abstime" : "relative");
		EXPECT(r == 0);
		EXPECT_OK(ops->gettime(fd, &cur));
		/* remaining time in whole seconds, within a minute */
		h_rec_approx(cur.it_value.tv_sec, 60, "%s %s remaining s", cn,
			     abs ? "abstime" : "relative");
		/* > 3 years: 32-bit time_t's ABSTIME max is 2038 */
		EXPECTF(cur.it_value.tv_sec > 100000000,
			"remaining %lld s", (long long)cur.it_value.tv_sec);
		EXPECT(REC(h_poll(fd, 0, NULL), "%s %s poll", cn,
			   abs ? "abstime" : "relative") == 0);
		t0 = h_now(CLOCK_MONOTONIC);
		ualarm(100000, 0);
		EXPECT_ERR(REC(h_read(fd, &ticks), "%s %s read", cn,
			       abs ? "abstime" : "relative"), EINTR);
		EXPECT(h_now(CLOCK_MONOTONIC) - t0 >= MS(90));
		close(fd);
	}
}

/*
 * 19: relative REALTIME timers ignore clock steps, absolute ones follow;
 * relative REALTIME_ALARM timers are absolute underneath and follow too.
 */
TEST(realtime_steps, T_CLOCK, 60)
{
	struct itimerspec its, cur;
	uint64_t ticks = 0;
	int rel, abs, ral = -1, mono;

	h_require_clock_set();
	rel = ops->create(CLOCK_REALTIME, TFD_NONBLOCK);
	abs = ops->create(CLOCK_REALTIME, TFD_NONBLOCK);
	mono = ops->create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	ASSERT(rel >= 0 && abs >= 0 && mono >= 0);
	if (h_have_alarm() && h_can_wake_alarm())
		ral = ops->create(CLOCK_REALTIME_ALARM, TFD_NONBLOCK);

	its = h_its(SEC(10), 0);
	ASSERT_OK(ops->settime(rel, 0, &its, NULL));
	ASSERT_OK(ops->settime(mono, 0, &its, NULL));
	if (ral >= 0)
		ASSERT_OK(ops->settime(ral, 0, &its, NULL));
	its = h_its(h_now(CLOCK_REALTIME) + SEC(10), 0);
	ASSERT_OK(ops->settime(abs, TFD_TIMER_ABSTIME, &its, NULL));

	ASSERT_OK(h_clock_step(SEC(30)));
	h_sleep_ns(MS(100));

	EXPECT(REC(h_poll(abs, 3000, NULL), "abstime readable") == 1);
	EXPECT(REC(h_read(abs, &ticks), "abstime read") == 8);
	EXPECT(REC(ticks, "abstime ticks") == 1);
	EXPECT_OK(ops->gettime(rel, &cur));
	h_rec_approx(h_its_value(&cur), SEC(2), "relative remaining");
	EXPECTF(h_its_value(&cur) > SEC(7), "relative remaining %lld",
		h_its_value(&cur));
	EXPECT(REC(h_poll(rel, 0, NULL), "relative poll") == 0);
	EXPECT(REC(h_poll(mono, 0, NULL), "monotonic poll") == 0);
	if (ral >= 0) {
		EXPECT(h_poll(ral, 3000, NULL) == 1);
		EXPECT(h_read(ral, &ticks) == 8 && ticks == 1);
	}
	h_clock_restore();
	close(rel);
	close(abs);
	close(mono);
	if (ral >= 0)
		close(ral);
}

TEST_MAIN()
