// SPDX-License-Identifier: GPL-2.0
/*
 * The deferrable backend's own promises (DTFD_TIMER_DEFERRABLE):
 *  - never delivered before the deadline, on every clock, one-shot and
 *    periodic, over many iterations and intervals from 1 ms to 2 s;
 *  - overrun counts and remaining time equal the strict mode's;
 *  - on a busy CPU, delivered within a (generous, TCG) bound of the
 *    deadline; the exact figure is the benchmark's;
 *  - long intervals (60 days) accepted and not early;
 *  - absolute CLOCK_REALTIME deadlines follow clock steps both ways;
 *  - strict <-> deferrable switching, alarm clocks refused, fdinfo mode;
 *  - it rides the wake-ups of whichever CPU is awake: armed on a CPU that
 *    then idles, it is delivered on time by another, busy one;
 *  - with DTFD_TIMER_PERCPU it belongs to the CPU of the thread that armed
 *    it, and waits for that CPU;
 *  - on an idle guest neither mode adds wake-ups.
 *
 * "Busy" is a SCHED_IDLE spinner on the test thread's CPU: it keeps the
 * tick running without delaying the test thread when it wakes.
 *
 * The cases go on in deferrable/cpus.c (which CPU delivers, the wake-ups
 * by kind) and deferrable/idle.c (no wake-ups added on an idle guest);
 * deferrable/deferrable.h: what they share.
 */
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>

#include "harness.h"
#include "deferrable/deferrable.h"

/*
 * TCG is slow and noisy, more so when the host is loaded: lateness bounds
 * here only catch gross errors (a wheel rounding up by 12 %, a timer that
 * waits for an idle CPU).  The median must be near a jiffy; single
 * outliers only within LATE_MAX.  The benchmark holds the real target.
 */
#define LATE_MEDIAN	MS(50)
#define LATE_MAX	SEC(2)

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}


void late_add(struct lates *l, long long late)
{
	if (l->n < (int)ARRAY_SIZE(l->v))
		l->v[l->n++] = late;
}

void late_check(struct lates *l, const char *what)
{
	long long med;

	if (!l->n)
		return;
	qsort(l->v, l->n, sizeof(l->v[0]), cmp_ll);
	med = l->v[l->n / 2];
	h_diag("%s: %d samples, median %.3f ms, p90 %.3f ms, max %.3f ms late",
	       what, l->n, med / 1e6, l->v[l->n * 9 / 10] / 1e6,
	       l->v[l->n - 1] / 1e6);
	EXPECTF(med < LATE_MEDIAN, "%s: median %lld ns late", what, med);
	EXPECTF(l->v[l->n - 1] < LATE_MAX, "%s: %lld ns late", what,
		l->v[l->n - 1]);
}

/*
 * The timer under test: the module's, or on the in-tree backend (-b
 * intree, T_INTREE cases) the kernel's timerfd with TFD_TIMER_DEFERRABLE,
 * the same bit.  The in-tree flag makes the module's promise (any CPU
 * awake delivers it) and has no DTFD_TIMER_PERCPU: the cases of that mode
 * are not T_INTREE, and the bit is dropped where a case passes it along.
 */
int intree(void)
{
	return h_ops == &intree_ops;
}

/* its calls as they are, without a backend's added flag */
static const struct tfd_ops *impl(void)
{
	return intree() ? &native_ops : &dtfd_ops;
}

int dcreate(clockid_t clk)
{
	int fd = impl()->create(clk, DTFD_CLOEXEC);

	ASSERTF(fd >= 0, "create(%s): %s", h_clock_name(clk),
		strerror(errno));
	return fd;
}

int dsettime(int fd, int flags, const struct itimerspec *its,
	     struct itimerspec *old)
{
	return impl()->settime(fd, intree() ? flags & ~DTFD_TIMER_PERCPU :
				   flags, its, old);
}

int dgettime(int fd, struct itimerspec *cur)
{
	return impl()->gettime(fd, cur);
}

int arm(int fd, int flags, long long value, long long interval)
{
	struct itimerspec its = h_its(value, interval);

	return dsettime(fd, flags, &its, NULL);
}

/*
 * fdinfo names the mode ("strict", "deferrable", "deferrable-percpu"):
 * the module in a line of its own, the in-tree flag in "settime flags".
 */
void expect_mode(const struct h_fdinfo *fi, const char *mode)
{
	char line[64];

	if (intree()) {
		EXPECTF(!(fi->settime_flags & TFD_TIMER_DEFERRABLE) ==
			!strcmp(mode, "strict"), "settime flags %s, want %s",
			fi->settime_flags_str, mode);
		return;
	}
	snprintf(line, sizeof(line), "dtimerfd-mode: %s\n", mode);
	EXPECTF(strstr(fi->extra, line) != NULL, "no '%s' in '%s'", mode,
		fi->extra);
}

/*
 * One-shot timers on a busy CPU: a relative timer armed at t0 must not be
 * read before t0 + interval; an absolute one not before its deadline.
 */
static void oneshot_never_early(clockid_t clk, long long interval, int iters,
				int abs, struct lates *lates)
{
	int fd = dcreate(clk), i;

	for (i = 0; i < iters; i++) {
		long long t0, t1, deadline;
		uint64_t ticks;
		int flags = DTFD_TIMER_DEFERRABLE;

		t0 = h_now(clk);
		deadline = t0 + interval;
		if (abs) {
			flags |= DTFD_TIMER_ABSTIME;
			ASSERT_OK(arm(fd, flags, deadline, 0));
		} else {
			ASSERT_OK(arm(fd, flags, interval, 0));
		}
		ASSERT(h_read(fd, &ticks) == 8);
		t1 = h_now(clk);
		EXPECTF(ticks == 1, "%s %lld ns: %llu ticks", h_clock_name(clk),
			interval, (unsigned long long)ticks);
		EXPECTF(t1 >= deadline, "%s %s %lld ns: early by %lld ns",
			h_clock_name(clk), abs ? "abs" : "rel", interval,
			deadline - t1);
		late_add(lates, t1 - deadline);
	}
	close(fd);
}

TEST(never_early_oneshot, T_DTFD_ONLY | T_NO_DEFER | T_INTREE, 120)
{
	static const long long ivals[] = {
		MS(1), MS(2), MS(5), MS(10), MS(20), MS(50), MS(100),
		MS(500), SEC(2),
	};
	static const clockid_t clks[] = {
		CLOCK_MONOTONIC, CLOCK_BOOTTIME, CLOCK_REALTIME,
	};
	static struct lates lates;
	struct h_spinner s;
	size_t i, c;

	h_pin(0);
	h_idle_spinner(&s, 0);
	for (c = 0; c < ARRAY_SIZE(clks); c++) {
		for (i = 0; i < ARRAY_SIZE(ivals); i++) {
			int iters = ivals[i] <= MS(10) ? 20 :
				    ivals[i] <= MS(100) ? 5 : 1;

			/* the long ones once per clock, absolute on MONOTONIC */
			oneshot_never_early(clks[c], ivals[i], iters, 0, &lates);
			if (ivals[i] <= MS(100) || clks[c] == CLOCK_MONOTONIC)
				oneshot_never_early(clks[c], ivals[i], iters, 1,
						    &lates);
		}
	}
	h_spinner_stop(&s);
	late_check(&lates, "busy CPU, every clock and interval");
}

/*
 * Periodic: after every read, the total count must not exceed the number
 * of schedule points that have passed.
 */
TEST(never_early_periodic, T_DTFD_ONLY | T_NO_DEFER | T_INTREE, 60)
{
	static const long long ivals[] = { MS(1), MS(4), MS(10), MS(25) };
	struct h_spinner s;
	size_t i;

	h_pin(0);
	h_idle_spinner(&s, 0);
	for (i = 0; i < ARRAY_SIZE(ivals); i++) {
		int fd = dcreate(CLOCK_MONOTONIC);
		long long start = h_now(CLOCK_MONOTONIC) + ivals[i];
		unsigned long long total = 0;

		ASSERT_OK(arm(fd, DTFD_TIMER_DEFERRABLE | DTFD_TIMER_ABSTIME,
			      start, ivals[i]));
		while (h_now(CLOCK_MONOTONIC) < start + MS(600)) {
			uint64_t ticks;
			long long now, due;

			ASSERT(h_read(fd, &ticks) == 8);
			now = h_now(CLOCK_MONOTONIC);
			total += ticks;
			due = (now - start) / ivals[i] + 1;
			EXPECTF((long long)total <= due,
				"%lld ns period: %llu ticks, %lld due",
				ivals[i], total, due);
		}
		close(fd);
	}
	h_spinner_stop(&s);
}

/*
 * A strict and a deferrable timer on the same schedule, read mid-period on
 * an idle CPU, report the same counts: overruns come from the deadline.
 */
TEST(overruns_match_strict, T_DTFD_ONLY | T_NO_DEFER | T_INTREE, 60)
{
	int sfd = dcreate(CLOCK_MONOTONIC), dfd = dcreate(CLOCK_MONOTONIC);
	long long period = MS(40), start = h_now(CLOCK_MONOTONIC) + MS(20);
	int round, equal = 0;

	ASSERT_OK(arm(sfd, DTFD_TIMER_ABSTIME, start, period));
	ASSERT_OK(arm(dfd, DTFD_TIMER_ABSTIME | DTFD_TIMER_DEFERRABLE, start,
		      period));
	for (round = 0; round < 8; round++) {
		uint64_t st = 0, dt = 0;
		long long next;

		/* sleep to the middle of a period, a few periods ahead */
		next = start + (round * 3 + 3) * period + period / 2;
		h_sleep_ns(next - h_now(CLOCK_MONOTONIC));
		h_set_nonblock(sfd, 1);
		h_set_nonblock(dfd, 1);
		read(sfd, &st, 8);
		read(dfd, &dt, 8);
		if (st == dt)
			equal++;
		else
			h_diag("round %d: strict %llu deferrable %llu", round,
			       (unsigned long long)st, (unsigned long long)dt);
	}
	/* one round may straddle a boundary on a slow guest */
	EXPECTF(equal >= 7, "%d of 8 rounds equal", equal);
	close(sfd);
	close(dfd);
}

/* gettime never reports more than was asked, in either mode */
TEST(gettime_not_above_request, T_DTFD_ONLY | T_NO_DEFER | T_INTREE, 30)
{
	static const long long req[] = { MS(3), MS(250), SEC(1), SEC(3600),
					 SEC(60LL * 86400) };
	int fd = dcreate(CLOCK_MONOTONIC);
	size_t i;
	int k;

	for (i = 0; i < ARRAY_SIZE(req); i++) {
		for (k = 0; k < 20; k++) {
			struct itimerspec cur;
			long long v;

			ASSERT_OK(arm(fd, DTFD_TIMER_DEFERRABLE, req[i], req[i]));
			ASSERT_OK(dgettime(fd, &cur));
			v = h_its_value(&cur);
			EXPECTF(v <= req[i], "asked %lld, remaining %lld",
				req[i], v);
			EXPECT(h_its_interval(&cur) == req[i]);
		}
	}
	close(fd);
}

/*
 * Lateness on a busy CPU: median near a jiffy.  Reported as a
 * diagnostic; the benchmark holds the real target (1 jiffy + 0.5 ms).
 */
TEST(busy_cpu_lateness, T_DTFD_ONLY | T_NO_DEFER | T_INTREE, 120)
{
	static const long long ivals[] = { MS(10), MS(100), SEC(1) };
	int fd = dcreate(CLOCK_MONOTONIC);
	struct h_spinner s;
	size_t i;

	h_pin(0);
	h_idle_spinner(&s, 0);
	for (i = 0; i < ARRAY_SIZE(ivals); i++) {
		int n = ivals[i] < SEC(1) ? 10 : 3, k;
		struct lates l = { .n = 0 };
		char what[32];

		for (k = 0; k < n; k++) {
			long long deadline = h_now(CLOCK_MONOTONIC) + ivals[i];
			uint64_t ticks;
			long long late;

			ASSERT_OK(arm(fd, DTFD_TIMER_DEFERRABLE |
				      DTFD_TIMER_ABSTIME, deadline, 0));
			ASSERT(h_read(fd, &ticks) == 8);
			late = h_now(CLOCK_MONOTONIC) - deadline;
			EXPECT(late >= 0);
			late_add(&l, late);
		}
		snprintf(what, sizeof(what), "%lld ms", ivals[i] / MS(1));
		late_check(&l, what);
	}
	h_spinner_stop(&s);
	close(fd);
}

/* 60 days: accepted, reported by gettime, not fired early */
TEST(long_interval_60_days, T_DTFD_ONLY | T_NO_DEFER | T_INTREE, 30)
{
	long long days60 = SEC(60LL * 86400);
	int fd = dcreate(CLOCK_MONOTONIC);
	struct itimerspec cur;
	struct h_fdinfo fi;
	struct h_spinner s;

	h_pin(0);
	h_idle_spinner(&s, 0);
	ASSERT_OK(arm(fd, DTFD_TIMER_DEFERRABLE, days60, days60));
	ASSERT_OK(dgettime(fd, &cur));
	EXPECT(h_its_value(&cur) <= days60);
	EXPECT(h_its_value(&cur) > days60 - SEC(5));
	EXPECT(h_its_interval(&cur) == days60);
	h_sleep_ns(SEC(1));
	ASSERT_OK(h_fdinfo(fd, &fi));
	EXPECT(fi.ticks == 0);
	expect_mode(&fi, "deferrable");
	ASSERT_OK(dgettime(fd, &cur));
	EXPECT(h_its_value(&cur) < days60 - MS(900));
	h_spinner_stop(&s);
	close(fd);
}

/*
 * Absolute realtime deadlines follow clock steps: a step past the deadline
 * makes a 60-day timer due; a step back never makes one early.
 */
TEST(realtime_steps, T_DTFD_ONLY | T_NO_DEFER | T_INTREE | T_CLOCK, 60)
{
	int fd = dcreate(CLOCK_REALTIME);
	long long deadline;
	struct h_fdinfo fi;
	struct h_spinner s;
	uint64_t ticks;
	short rev;

	h_require_clock_set();
	h_pin(0);
	h_idle_spinner(&s, 0);

	/* forward: 60 days ahead, step to 1 s before it */
	deadline = h_now(CLOCK_REALTIME) + SEC(60LL * 86400);
	ASSERT_OK(arm(fd, DTFD_TIMER_DEFERRABLE | DTFD_TIMER_ABSTIME,
		      deadline, 0));
	ASSERT_OK(h_clock_set(deadline - SEC(1)));
	EXPECT(h_poll(fd, 5000, &rev) == 1);
	EXPECTF(h_now(CLOCK_REALTIME) >= deadline, "early by %lld ns",
		deadline - h_now(CLOCK_REALTIME));
	EXPECT(h_read(fd, &ticks) == 8 && ticks == 1);
	h_clock_restore();

	/* forward past the deadline: due at once */
	deadline = h_now(CLOCK_REALTIME) + SEC(3600);
	ASSERT_OK(arm(fd, DTFD_TIMER_DEFERRABLE | DTFD_TIMER_ABSTIME,
		      deadline, 0));
	ASSERT_OK(h_clock_step(SEC(7200)));
	EXPECT(h_poll(fd, 2000, &rev) == 1);
	h_clock_restore();
	EXPECT(h_read(fd, &ticks) == 8 && ticks == 1);

	/* back: a deadline 1 s ahead, clock stepped back 1 h: not due */
	deadline = h_now(CLOCK_REALTIME) + SEC(1);
	ASSERT_OK(arm(fd, DTFD_TIMER_DEFERRABLE | DTFD_TIMER_ABSTIME,
		      deadline, 0));
	ASSERT_OK(h_clock_step(-SEC(3600)));
	h_sleep_ns(SEC(2));
	ASSERT_OK(h_fdinfo(fd, &fi));
	EXPECTF(fi.ticks == 0, "fired after a step back: %llu", fi.ticks);
	h_clock_restore();
	EXPECT(h_poll(fd, 2000, &rev) == 1);

	h_spinner_stop(&s);
	close(fd);
}

/*
 * A forward step makes the earlier of two timers due and brings the later
 * one closer: the later one is delivered at its own new distance, in
 * whichever order the two were armed (the clock walk visits the newest
 * watcher first; the riders were aimed for the earlier's old distance).
 */
TEST(realtime_step_two_timers, T_DTFD_ONLY | T_NO_DEFER | T_INTREE | T_CLOCK, 90)
{
	struct h_spinner s;
	int order;

	h_require_clock_set();
	h_pin(0);
	h_idle_spinner(&s, 0);
	for (order = 0; order < 2; order++) {
		long long t0 = h_now(CLOCK_REALTIME), late;
		long long a_at = t0 + SEC(10), b_at = t0 + SEC(20);
		int fa, fb;
		uint64_t ticks;

		/* A, due first, armed first in one order and last in the other */
		if (order == 0) {
			fa = dcreate(CLOCK_REALTIME);
			fb = dcreate(CLOCK_REALTIME);
		} else {
			fb = dcreate(CLOCK_REALTIME);
			fa = dcreate(CLOCK_REALTIME);
		}
		ASSERT_OK(arm(fa, DTFD_TIMER_DEFERRABLE | DTFD_TIMER_ABSTIME,
			      a_at, 0));
		ASSERT_OK(arm(fb, DTFD_TIMER_DEFERRABLE | DTFD_TIMER_ABSTIME,
			      b_at, 0));
		ASSERT_OK(h_clock_step(SEC(15)));
		EXPECTF(h_poll(fa, 2000, NULL) == 1,
			"order %d: A not due after the step", order);
		EXPECT(h_read(fa, &ticks) == 8 && ticks == 1);
		EXPECTF(h_poll(fb, 10000, NULL) == 1,
			"order %d: B not delivered", order);
		late = h_now(CLOCK_REALTIME) - b_at;
		EXPECTF(late >= 0, "order %d: B early by %lld ns", order,
			-late);
		EXPECTF(late <= SEC(1),
			"order %d: B %.3f s late (riders left aimed for A's old distance)",
			order, late / 1e9);
		h_clock_restore();
		close(fa);
		close(fb);
	}
	h_spinner_stop(&s);
}

/* strict <-> deferrable: each settime chooses, old values stay right */
TEST(mode_switch, T_DTFD_ONLY | T_NO_DEFER | T_INTREE, 30)
{
	int fd = dcreate(CLOCK_MONOTONIC), i;
	struct itimerspec its = h_its(MS(20), MS(20)), old;
	struct h_fdinfo fi;
	struct h_spinner s;

	h_pin(0);
	h_idle_spinner(&s, 0);
	for (i = 0; i < 12; i++) {
		int flags = i & 1 ? DTFD_TIMER_DEFERRABLE : 0;
		uint64_t ticks;

		ASSERT_OK(dsettime(fd, flags, &its, &old));
		if (i) {
			EXPECT(h_its_interval(&old) == MS(20));
			EXPECT(h_its_value(&old) > 0 &&
			       h_its_value(&old) <= MS(20));
		}
		ASSERT_OK(h_fdinfo(fd, &fi));
		expect_mode(&fi, flags ? "deferrable" : "strict");
		/* the module keeps its mode out of timerfd's flags */
		if (!intree())
			EXPECT(fi.settime_flags == 0);
		ASSERT(h_read(fd, &ticks) == 8);
		EXPECT(ticks >= 1);
	}
	h_spinner_stop(&s);
	close(fd);
}

struct racer {
	int fd;
	atomic_int stop;
};

static void *race_settime(void *arg)
{
	struct racer *r = arg;
	unsigned int i = 0;

	while (!atomic_load(&r->stop)) {
		long long v = 1000LL << (i % 14);	/* 1 us .. 8 ms */
		struct itimerspec its = h_its(v, i % 3 ? v : 0), old;

		dsettime(r->fd, i & 1 ? DTFD_TIMER_DEFERRABLE : 0, &its, &old);
		i++;
	}
	return NULL;
}

static void *race_reader(void *arg)
{
	struct racer *r = arg;

	while (!atomic_load(&r->stop)) {
		struct itimerspec cur;
		struct pollfd p = { .fd = r->fd, .events = POLLIN };
		uint64_t t;

		poll(&p, 1, 1);
		read(r->fd, &t, sizeof(t));
		dgettime(r->fd, &cur);
	}
	return NULL;
}

/* settime racing callbacks, reads and gettime, switching modes */
TEST(mode_switch_race, T_DTFD_ONLY | T_NO_DEFER | T_INTREE, 60)
{
	struct racer r = { .fd = dcreate(CLOCK_MONOTONIC) };
	pthread_t a, b, c;
	struct itimerspec cur;

	h_set_nonblock(r.fd, 1);
	ASSERT(pthread_create(&a, NULL, race_settime, &r) == 0);
	ASSERT(pthread_create(&b, NULL, race_settime, &r) == 0);
	ASSERT(pthread_create(&c, NULL, race_reader, &r) == 0);
	h_sleep_ns(SEC(3));
	atomic_store(&r.stop, 1);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	pthread_join(c, NULL);
	/* still a working timer */
	ASSERT_OK(arm(r.fd, DTFD_TIMER_DEFERRABLE, MS(5), 0));
	ASSERT_OK(dgettime(r.fd, &cur));
	EXPECT(h_its_value(&cur) <= MS(5));
	EXPECT(h_poll(r.fd, 2000, NULL) == 1);
	close(r.fd);
}

/* an alarm must wake the system: it cannot be deferrable */
TEST(alarm_not_deferrable, T_DTFD_ONLY | T_NO_DEFER | T_INTREE, 10)
{
	int fd;

	h_require_alarm();
	fd = dcreate(CLOCK_BOOTTIME_ALARM);
	ASSERT(fd >= 0);
	EXPECT_ERR(arm(fd, DTFD_TIMER_DEFERRABLE, MS(10), 0), EINVAL);
	EXPECT_OK(arm(fd, 0, MS(10), 0));
	close(fd);
	fd = dcreate(CLOCK_REALTIME_ALARM);
	ASSERT(fd >= 0);
	EXPECT_ERR(arm(fd, DTFD_TIMER_DEFERRABLE | DTFD_TIMER_ABSTIME,
		       h_now(CLOCK_REALTIME) + SEC(1), 0), EINVAL);
	close(fd);
}

TEST_MAIN()
