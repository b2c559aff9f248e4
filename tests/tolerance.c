// SPDX-License-Identifier: GPL-2.0
/*
 * Beyond timerfd: per-timer slack for strict timers, bounded deferral for
 * deferrable ones, per-timer statistics (DTFD_IOC_SET_TOLERANCE,
 * DTFD_IOC_GET_STATS, fdinfo) and dtimerfd_nanosleep().
 */
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/time.h>

#include "harness.h"

#define TCG_MARGIN	MS(300)		/* a loaded TCG host stalls guests */

static int dcreate(void)
{
	int fd = dtimerfd_create(CLOCK_MONOTONIC, DTFD_CLOEXEC);

	ASSERTF(fd >= 0, "dtimerfd_create: %s", strerror(errno));
	return fd;
}

static int arm_abs(int fd, int flags, long long at, long long interval)
{
	struct itimerspec its = h_its(at, interval);

	return dtimerfd_settime(fd, flags | DTFD_TIMER_ABSTIME, &its, NULL);
}

/* get/set round trip, validation, fdinfo, and the errno on foreign fds */
TEST(tolerance_abi, T_DTFD_ONLY | T_NO_DEFER, 10)
{
	struct dtfd_tolerance tol = { 0 };
	struct h_fdinfo fi;
	int fd = dcreate();

	ASSERT_OK(ioctl(fd, DTFD_IOC_GET_TOLERANCE, &tol));
	EXPECT(tol.slack_ns == 0 && tol.max_defer_ns == 0);
	EXPECT_OK(dtimerfd_set_tolerance(fd, 1234567, 89000000));
	ASSERT_OK(ioctl(fd, DTFD_IOC_GET_TOLERANCE, &tol));
	EXPECT(tol.slack_ns == 1234567 && tol.max_defer_ns == 89000000);
	ASSERT_OK(h_fdinfo(fd, &fi));
	EXPECT(fi.nlines == 5 && fi.ordered);
	EXPECT(strstr(fi.extra, "dtimerfd-slack-ns: 1234567\n") != NULL);
	EXPECT(strstr(fi.extra, "dtimerfd-max-defer-ns: 89000000\n") != NULL);

	tol.flags = 1;
	EXPECT_ERR(ioctl(fd, DTFD_IOC_SET_TOLERANCE, &tol), EINVAL);
	tol.flags = 0;
	tol.pad = 1;
	EXPECT_ERR(ioctl(fd, DTFD_IOC_SET_TOLERANCE, &tol), EINVAL);
	EXPECT_ERR(ioctl(fd, DTFD_IOC_SET_TOLERANCE, h_bad_ptr()), EFAULT);
	/* huge values saturate instead of failing */
	EXPECT_OK(dtimerfd_set_tolerance(fd, UINT64_MAX, UINT64_MAX));
	ASSERT_OK(ioctl(fd, DTFD_IOC_GET_TOLERANCE, &tol));
	EXPECT(tol.slack_ns == (uint64_t)INT64_MAX);

	EXPECT_ERR(dtimerfd_set_tolerance(-1, 0, 0), EBADF);
	EXPECT_ERR(dtimerfd_set_tolerance(0, 0, 0), EINVAL);
	EXPECT_ERR(dtimerfd_get_stats(-1, &(struct dtfd_stats){ 0 }), EBADF);
	close(fd);
}

/*
 * Slack: never early, never later than the slack (plus TCG's margin);
 * with a timer due later on the same CPU, the slack lets the first ride
 * on the second's interrupt.
 */
TEST(slack_window, T_DTFD_ONLY | T_NO_DEFER, 60)
{
	int a = dcreate(), b = dcreate(), k, rode = 0;

	h_pin(0);
	ASSERT_OK(dtimerfd_set_tolerance(a, MS(400), 0));
	for (k = 0; k < 5; k++) {
		long long t0 = h_now(CLOCK_MONOTONIC), got;
		uint64_t ticks;

		ASSERT_OK(arm_abs(a, 0, t0 + MS(50), 0));
		ASSERT_OK(arm_abs(b, 0, t0 + MS(250), 0));
		ASSERT(h_read(a, &ticks) == 8 && ticks == 1);
		got = h_now(CLOCK_MONOTONIC) - t0;
		EXPECTF(got >= MS(50), "early: %lld ns", got);
		EXPECTF(got <= MS(450) + TCG_MARGIN, "late: %lld ns", got);
		if (got >= MS(240))
			rode++;
		ASSERT(h_read(b, &ticks) == 8 && ticks == 1);
	}
	h_diag("50 ms timer with 400 ms slack rode on the 250 ms timer %d of 5 times",
	       rode);
	close(a);
	close(b);
}

/* Slack 0 is timerfd: a strict timer stays on time. */
TEST(slack_zero_is_exact, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	int fd = dcreate(), k;
	long long worst = 0;

	for (k = 0; k < 10; k++) {
		long long t0 = h_now(CLOCK_MONOTONIC), late;
		uint64_t ticks;

		ASSERT_OK(arm_abs(fd, 0, t0 + MS(20), 0));
		ASSERT(h_read(fd, &ticks) == 8);
		late = h_now(CLOCK_MONOTONIC) - t0 - MS(20);
		EXPECT(late >= 0);
		if (late > worst)
			worst = late;
	}
	h_diag("worst lateness %.3f ms", worst / 1e6);
	EXPECT(worst < TCG_MARGIN);
	close(fd);
}

/*
 * Bounded deferral: armed on CPU 0, which then idles, read from a busy
 * CPU 1.  Without a bound the expiry waits for CPU 0; with one it arrives
 * by the bound, delivered by the backstop.
 */
TEST(bounded_deferral, T_DTFD_ONLY | T_NO_DEFER, 90)
{
	int fd = dcreate(), k, backstopped = 0;
	struct dtfd_stats st;
	struct h_spinner s;

	if (h_ncpus() < 2)
		h_skip("needs two CPUs");
	ASSERT_OK(dtimerfd_set_tolerance(fd, 0, MS(30)));
	h_idle_spinner(&s, 1);
	for (k = 0; k < 10; k++) {
		long long t0, got;
		uint64_t ticks;

		h_pin(0);
		t0 = h_now(CLOCK_MONOTONIC);
		ASSERT_OK(arm_abs(fd, DTFD_TIMER_DEFERRABLE, t0 + MS(20), 0));
		h_pin(1);
		ASSERT(h_read(fd, &ticks) == 8 && ticks == 1);
		got = h_now(CLOCK_MONOTONIC) - t0;
		EXPECTF(got >= MS(20), "early: %lld ns", got);
		EXPECTF(got <= MS(50) + TCG_MARGIN, "round %d: %lld ns", k, got);
	}
	h_spinner_stop(&s);
	ASSERT_OK(dtimerfd_get_stats(fd, &st));
	backstopped = (int)st.backstop;
	h_diag("10 deliveries, %d by the backstop, latest %.3f ms late",
	       backstopped, st.late_max_ns / 1e6);
	EXPECT(st.deliveries == 10 && st.expirations == 10);
	EXPECT(st.backstop <= st.deliveries);
	close(fd);
}

/*
 * One wake-up serves every window it falls in, across CPUs: A armed on
 * CPU 0 with the window [100, 150] ms, B on CPU 1 with [120, 320] ms, the
 * guest otherwise idle.  A's bound forces a wake-up at 150 ms at the
 * latest, and that one delivers B too (its deadline has passed): B comes
 * with A's wake-up, not by its own bound.  A round in which CPU 0 woke
 * for something else before B was due delivers A alone, rightly: it says
 * nothing.  Never early, each within its bound, the statistics right.
 */
#define SHARE_ROUNDS	8
TEST(bounded_windows_share_a_wakeup, T_DTFD_ONLY | T_NO_DEFER, 60)
{
	int a = dcreate(), b = dcreate(), k, shared = 0, alone = 0, fired;
	unsigned long long b_bound = 0;
	struct dtfd_stats sa, sb;

	if (h_ncpus() < 2)
		h_skip("needs two CPUs");
	ASSERT_OK(dtimerfd_set_tolerance(a, 0, MS(50)));
	ASSERT_OK(dtimerfd_set_tolerance(b, 0, MS(200)));
	for (k = 0; k < SHARE_ROUNDS; k++) {
		long long t0 = h_now(CLOCK_MONOTONIC), ga = 0, gb = 0;
		struct pollfd p[2] = { { .fd = a, .events = POLLIN },
				       { .fd = b, .events = POLLIN } };
		unsigned long long bound_before;
		uint64_t ticks;

		ASSERT_OK(dtimerfd_get_stats(b, &sb));
		bound_before = sb.backstop;
		h_pin(0);
		ASSERT_OK(arm_abs(a, DTFD_TIMER_DEFERRABLE, t0 + MS(100), 0));
		h_pin(1);
		ASSERT_OK(arm_abs(b, DTFD_TIMER_DEFERRABLE, t0 + MS(120), 0));
		/* sleep past both deadlines in one go, then look */
		fired = 0;
		while (fired != 3) {
			ASSERT(poll(p, 2, 1000) > 0);
			if (p[0].revents && !(fired & 1)) {
				ga = h_now(CLOCK_MONOTONIC) - t0;
				fired |= 1;
			}
			if (p[1].revents && !(fired & 2)) {
				gb = h_now(CLOCK_MONOTONIC) - t0;
				fired |= 2;
			}
			p[0].events = fired & 1 ? 0 : POLLIN;
			p[1].events = fired & 2 ? 0 : POLLIN;
		}
		ASSERT(h_read(a, &ticks) == 8 && ticks == 1);
		ASSERT(h_read(b, &ticks) == 8 && ticks == 1);
		ASSERT_OK(dtimerfd_get_stats(b, &sb));
		EXPECTF(ga >= MS(100) && gb >= MS(120),
			"early: A at %lld, B at %lld ns", ga, gb);
		EXPECTF(ga <= MS(150) + TCG_MARGIN && gb <= MS(320) + TCG_MARGIN,
			"late: A at %lld, B at %lld ns", ga, gb);
		if (ga < MS(120)) {
			alone++;
			continue;
		}
		/* B no later than A's wake-up and a little: the same one */
		if (gb <= ga + MS(20)) {
			shared++;
			continue;
		}
		b_bound += sb.backstop - bound_before;
		h_diag("round %d: A at %.1f ms, B only at %.1f ms%s", k,
		       ga / 1e6, gb / 1e6,
		       sb.backstop > bound_before ? ", by its own bound" : "");
	}
	ASSERT_OK(dtimerfd_get_stats(a, &sa));
	h_diag("%d rounds: B delivered with A's wake-up %d times, A alone before B was due %d; backstop deliveries A %llu, B %llu; latest A %.1f ms, B %.1f ms",
	       SHARE_ROUNDS, shared, alone, (unsigned long long)sa.backstop,
	       (unsigned long long)sb.backstop, sa.late_max_ns / 1e6,
	       sb.late_max_ns / 1e6);
	EXPECT(sa.deliveries == SHARE_ROUNDS && sb.deliveries == SHARE_ROUNDS);
	EXPECTF(shared + alone >= SHARE_ROUNDS - 1,
		"B rode A's wake-up %d times of %d it could", shared,
		SHARE_ROUNDS - alone);
	EXPECTF(b_bound <= 1, "B's own bound forced %llu of those", b_bound);
	EXPECTF(shared >= SHARE_ROUNDS / 2,
		"CPU 0 woke before B was due in %d rounds of %d: nothing checked",
		alone, SHARE_ROUNDS);
	close(a);
	close(b);
}

/*
 * A periodic bounded timer counts every period exactly once, whichever of
 * the wheel and the backstop delivers: no double ticks, none lost.
 */
TEST(bounded_no_double_tick, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	int fd = dcreate();
	long long start = h_now(CLOCK_MONOTONIC) + MS(10), end, due;
	unsigned long long total = 0;
	struct dtfd_stats st;
	uint64_t ticks;

	ASSERT_OK(dtimerfd_set_tolerance(fd, 0, MS(8)));
	ASSERT_OK(arm_abs(fd, DTFD_TIMER_DEFERRABLE, start, MS(10)));
	while (h_now(CLOCK_MONOTONIC) < start + SEC(1)) {
		ASSERT(h_read(fd, &ticks) == 8);
		total += ticks;
	}
	h_set_nonblock(fd, 1);
	if (h_read(fd, &ticks) == 8)
		total += ticks;
	end = h_now(CLOCK_MONOTONIC);
	due = (end - start) / MS(10) + 1;
	EXPECTF((long long)total <= due && (long long)total >= due - 1,
		"%llu expirations read, %lld due", total, due);
	ASSERT_OK(dtimerfd_get_stats(fd, &st));
	EXPECT(st.deliveries <= st.expirations);
	EXPECTF(st.expirations >= total, "stats %llu, read %llu",
		(unsigned long long)st.expirations, total);
	close(fd);
}

/* Statistics: expirations include overruns; lateness is recorded. */
TEST(stats_counts, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	int fd = dcreate();
	long long start = h_now(CLOCK_MONOTONIC) + MS(10);
	struct dtfd_stats st;
	struct h_fdinfo fi;
	uint64_t ticks;
	char want[64];

	ASSERT_OK(dtimerfd_get_stats(fd, &st));
	EXPECT(st.expirations == 0 && st.deliveries == 0);
	ASSERT_OK(arm_abs(fd, 0, start, MS(10)));
	h_sleep_ns(start + MS(105) - h_now(CLOCK_MONOTONIC));
	ASSERT(h_read(fd, &ticks) == 8);
	/* stop it, so that stats and fdinfo below see the same numbers */
	ASSERT_OK(arm_abs(fd, 0, 0, 0));
	ASSERT_OK(dtimerfd_get_stats(fd, &st));
	/*
	 * One delivery by the hrtimer, the rest counted when read re-armed;
	 * one more may have fired between the read and the disarm.
	 */
	EXPECTF(st.expirations >= ticks && st.expirations <= ticks + 1,
		"%llu vs %llu", (unsigned long long)st.expirations,
		(unsigned long long)ticks);
	EXPECT(st.deliveries == 1 + (st.expirations - ticks));
	EXPECT(st.late_total_ns <= st.late_max_ns * st.deliveries);
	ASSERT_OK(h_fdinfo(fd, &fi));
	snprintf(want, sizeof(want), "dtimerfd-expirations: %llu\n",
		 (unsigned long long)st.expirations);
	EXPECT(strstr(fi.extra, want) != NULL);
	snprintf(want, sizeof(want), "dtimerfd-deliveries: %llu\n",
		 (unsigned long long)st.deliveries);
	EXPECT(strstr(fi.extra, want) != NULL);
	close(fd);
}

/* A deferrable timer read from an idle CPU's point of view is deferred. */
TEST(stats_deferred, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	int fd = dcreate();
	struct dtfd_stats st;
	uint64_t ticks;

	h_pin(0);
	/* due 10 ms from now; look after 300 ms: delivered on access at least */
	ASSERT_OK(arm_abs(fd, DTFD_TIMER_DEFERRABLE,
			  h_now(CLOCK_MONOTONIC) + MS(10), 0));
	h_sleep_ns(MS(300));
	h_set_nonblock(fd, 1);
	ASSERT(h_read(fd, &ticks) == 8 && ticks == 1);
	ASSERT_OK(dtimerfd_get_stats(fd, &st));
	EXPECT(st.deliveries == 1 && st.expirations == 1);
	h_diag("delivered %.3f ms late, deferred=%llu", st.late_max_ns / 1e6,
	       (unsigned long long)st.deferred);
	EXPECT(st.late_max_ns > 0);
	EXPECT(st.deferred == (st.late_max_ns > 4000000ULL ? 1 : 0) ||
	       st.late_max_ns <= 10000000ULL);
	close(fd);
}

/*
 * A periodic CLOCK_REALTIME timer that expired, then the clock stepped back
 * behind its deadline: read(2) gives 0, as timerfd's does (its forward
 * finds nothing to forward and takes the delivered tick back), but the
 * statistics only count up: one expiration, one delivery.
 */
TEST(stats_clock_stepped_back, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	int mode;

	h_require_clock_set();
	for (mode = 0; mode < 2; mode++) {
		int flags = mode ? DTFD_TIMER_DEFERRABLE : 0;
		int fd = dtimerfd_create(CLOCK_REALTIME, DTFD_CLOEXEC);
		struct itimerspec its;
		struct dtfd_stats st;
		uint64_t ticks = 0;

		ASSERT_OK(fd);
		its = h_its(h_now(CLOCK_REALTIME) + MS(20), SEC(5));
		ASSERT_OK(dtimerfd_settime(fd, flags | DTFD_TIMER_ABSTIME,
					   &its, NULL));
		ASSERT(h_poll(fd, 5000, NULL) == 1);
		ASSERT_OK(h_clock_step(-SEC(30)));
		EXPECTF(read(fd, &ticks, 8) == 0, "mode %d: ticks %llu", mode,
			(unsigned long long)ticks);
		ASSERT_OK(dtimerfd_get_stats(fd, &st));
		EXPECTF(st.expirations == 1 && st.deliveries == 1,
			"mode %d: expirations %llu deliveries %llu", mode,
			(unsigned long long)st.expirations,
			(unsigned long long)st.deliveries);
		h_clock_restore();
		close(fd);
	}
}

/*
 * A deadline already past when it is set (absolute, near the epoch) fires
 * at once, and is late by the time since the settime, not since 1970:
 * a few of those used to wrap late_total_ns.
 */
TEST(stats_past_deadline, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	int mode, i;

	for (mode = 0; mode < 2; mode++) {
		int flags = (mode ? DTFD_TIMER_DEFERRABLE : 0) |
			    DTFD_TIMER_ABSTIME;
		int fd = dtimerfd_create(CLOCK_REALTIME, DTFD_CLOEXEC);
		struct itimerspec its = h_its(SEC(1), 0);
		struct dtfd_stats st;
		uint64_t ticks;

		ASSERT_OK(fd);
		for (i = 0; i < 20; i++) {
			ASSERT_OK(dtimerfd_settime(fd, flags, &its, NULL));
			ASSERT(h_wait_read(fd, 5000, &ticks) == 8 && ticks == 1);
		}
		ASSERT_OK(dtimerfd_get_stats(fd, &st));
		EXPECT(st.expirations == 20 && st.deliveries == 20);
		EXPECTF(st.late_max_ns < (uint64_t)TCG_MARGIN &&
			st.late_total_ns >= st.late_max_ns &&
			st.late_total_ns <= 20 * st.late_max_ns,
			"mode %d: late total %llu max %llu", mode,
			(unsigned long long)st.late_total_ns,
			(unsigned long long)st.late_max_ns);
		close(fd);
	}
}

/*
 * late_total_ns saturates rather than wrapping: three deliveries, each
 * about 200 years late (CLOCK_REALTIME stepped that far past an absolute
 * deadline; clock_settime() takes dates up to 2232), add up to more than
 * 2^64 ns.
 */
TEST(stats_late_saturates, T_DTFD_ONLY | T_NO_DEFER | T_CLOCK, 60)
{
	const long long jump = 200LL * 365 * 86400 * SEC(1);
	struct dtfd_stats st;
	uint64_t ticks;
	int fd, i;

	h_require_clock_set();
	if (sizeof(time_t) < 8)
		h_skip("a 32-bit time_t cannot name a date past 2038");
	fd = dtimerfd_create(CLOCK_REALTIME, DTFD_CLOEXEC);
	ASSERT_OK(fd);
	for (i = 0; i < 3; i++) {
		struct itimerspec its = h_its(h_now(CLOCK_REALTIME) + SEC(10), 0);

		ASSERT_OK(dtimerfd_settime(fd, DTFD_TIMER_ABSTIME, &its, NULL));
		ASSERT_OK(h_clock_step(jump));
		ASSERT(h_wait_read(fd, 5000, &ticks) == 8 && ticks == 1);
		h_clock_restore();
	}
	ASSERT_OK(dtimerfd_get_stats(fd, &st));
	EXPECT(st.deliveries == 3);
	EXPECTF(st.late_total_ns == UINT64_MAX &&
		st.late_max_ns > (uint64_t)(jump - SEC(60)),
		"late total %llu max %llu", (unsigned long long)st.late_total_ns,
		(unsigned long long)st.late_max_ns);
	close(fd);
}

/* ---- dtimerfd_nanosleep() ---- */

static void on_alarm(int sig)
{
	(void)sig;
}

TEST(nanosleep_basics, T_DTFD_ONLY | T_NO_DEFER, 60)
{
	struct timespec req = { 0, MS(50) }, rem = { 0, 0 };
	struct h_spinner s;
	long long t0, got;

	h_pin(0);
	h_idle_spinner(&s, 0);
	/* relative, strict and deferrable: never short */
	t0 = h_now(CLOCK_MONOTONIC);
	EXPECT(dtimerfd_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL) == 0);
	got = h_now(CLOCK_MONOTONIC) - t0;
	EXPECTF(got >= MS(50) && got < MS(50) + TCG_MARGIN, "%lld ns", got);
	t0 = h_now(CLOCK_MONOTONIC);
	EXPECT(dtimerfd_nanosleep(CLOCK_MONOTONIC, DTFD_TIMER_DEFERRABLE,
				  &req, NULL) == 0);
	got = h_now(CLOCK_MONOTONIC) - t0;
	EXPECTF(got >= MS(50) && got < MS(50) + TCG_MARGIN, "%lld ns", got);
	/* absolute */
	t0 = h_now(CLOCK_MONOTONIC);
	req = h_ns_ts(t0 + MS(30));
	EXPECT(dtimerfd_nanosleep(CLOCK_MONOTONIC,
				  DTFD_TIMER_ABSTIME | DTFD_TIMER_DEFERRABLE,
				  &req, NULL) == 0);
	EXPECT(h_now(CLOCK_MONOTONIC) >= t0 + MS(30));
	/* in the past, and zero: at once */
	req = h_ns_ts(t0 - SEC(1));
	EXPECT(dtimerfd_nanosleep(CLOCK_MONOTONIC, DTFD_TIMER_ABSTIME, &req,
				  NULL) == 0);
	req.tv_sec = 0;
	req.tv_nsec = 0;
	EXPECT(dtimerfd_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL) == 0);
	h_spinner_stop(&s);

	/* errors, as clock_nanosleep(2) numbers them */
	req.tv_nsec = 1000000000;
	EXPECT(dtimerfd_nanosleep(CLOCK_MONOTONIC, 0, &req, NULL) == EINVAL);
	req.tv_nsec = 0;
	EXPECT(dtimerfd_nanosleep(CLOCK_TAI, 0, &req, NULL) == EINVAL);
	EXPECT(dtimerfd_nanosleep(CLOCK_MONOTONIC, 0x100, &req, NULL) ==
	       EINVAL);
	EXPECT(dtimerfd_nanosleep(CLOCK_MONOTONIC, 0, h_bad_ptr(), NULL) ==
	       EFAULT);
	EXPECT(dtimerfd_nanosleep(CLOCK_MONOTONIC, 0, NULL, NULL) == EFAULT);
	(void)rem;
}

TEST(nanosleep_eintr, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	struct timespec req = { 2, 0 }, rem = { 0, 0 };
	struct itimerval it = { { 0, 0 }, { 0, 200000 } };
	long long left;

	ASSERT_OK(sigaction(SIGALRM, &sa, NULL));
	ASSERT_OK(setitimer(ITIMER_REAL, &it, NULL));
	EXPECT(dtimerfd_nanosleep(CLOCK_MONOTONIC, 0, &req, &rem) == EINTR);
	left = h_ts_ns(&rem);
	EXPECTF(left > 0 && left <= SEC(2) - MS(150), "remain %lld ns", left);
}

/*
 * A handler installed with SA_RESTART ends a sleep all the same:
 * clock_nanosleep(2) is never restarted after a handler, whatever
 * SA_RESTART says.  Both, side by side.
 */
TEST(nanosleep_eintr_sa_restart, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	struct itimerval it = { { 0, 0 }, { 0, 200000 } };
	struct timespec req = { 2, 0 }, rem = { 0, 0 };
	int i, r;

	ASSERT_OK(sigaction(SIGALRM, &sa, NULL));
	for (i = 0; i < 2; i++) {
		long long t0 = h_now(CLOCK_MONOTONIC), took;

		ASSERT_OK(setitimer(ITIMER_REAL, &it, NULL));
		r = i ? dtimerfd_nanosleep(CLOCK_MONOTONIC, DTFD_TIMER_DEFERRABLE,
					   &req, &rem) :
			clock_nanosleep(CLOCK_MONOTONIC, 0, &req, &rem);
		took = h_now(CLOCK_MONOTONIC) - t0;
		EXPECTF(r == EINTR && took < SEC(1), "%s: %s after %lld ns",
			i ? "dtimerfd_nanosleep" : "clock_nanosleep",
			strerror(r), took);
	}
}

TEST_MAIN()
