// SPDX-License-Identifier: GPL-2.0
/*
 * TFD_TIMER_CANCEL_ON_SET and ECANCELED: which timers are cancelled, the
 * wake-up of blocked readers and pollers, priority over pending counts,
 * settime on a cancelled timer, and the CVE-2017-10661 toggle race.
 * Items 28, 39-43, 45.  Needs root and a settable CLOCK_REALTIME; every
 * case puts CLOCK_REALTIME back (and the harness does it again after).
 */
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/time.h>
#include <sys/timex.h>

#include "harness.h"

#define CANCEL_FLAGS	(TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET)

/* a clock change that moves nothing: set REALTIME to what it reads now */
static void clock_touch(void)
{
	ASSERT_OK(h_clock_step(0));
}

static int arm(const struct tfd_ops *ops, int fd, clockid_t c, int flags,
	       long long value, long long interval)
{
	struct itimerspec its;
	clockid_t base = h_clock_base(c);

	if ((flags & TFD_TIMER_ABSTIME) && value)
		value += h_now(base);
	its = h_its(value, interval);
	return ops->settime(fd, flags, &its, NULL);
}

/* 39: only REALTIME(_ALARM) with ABSTIME|CANCEL_ON_SET is cancelled */
TEST(cancel_scope, T_CLOCK, 60)
{
	static const int flagv[] = {
		CANCEL_FLAGS, TFD_TIMER_CANCEL_ON_SET, TFD_TIMER_ABSTIME, 0,
	};
	int fds[5][4], ci, fi, nclk = h_have_alarm() && h_can_wake_alarm() ?
		5 : 3;
	uint64_t ticks;

	h_require_clock_set();
	for (ci = 0; ci < nclk; ci++)
		for (fi = 0; fi < 4; fi++) {
			fds[ci][fi] = ops->create(h_clocks[ci], TFD_NONBLOCK);
			ASSERT_OK(fds[ci][fi]);
			ASSERT_OK(arm(ops, fds[ci][fi], h_clocks[ci],
				      flagv[fi], SEC(3600), 0));
		}
	/* a timer that had cancel-on-set and then lost it by settime */
	{
		int fd = ops->create(CLOCK_REALTIME, TFD_NONBLOCK);

		ASSERT_OK(fd);
		ASSERT_OK(arm(ops, fd, CLOCK_REALTIME, CANCEL_FLAGS, SEC(3600),
			      0));
		ASSERT_OK(arm(ops, fd, CLOCK_REALTIME, TFD_TIMER_ABSTIME,
			      SEC(3600), 0));
		clock_touch();
		h_sleep_ns(MS(200));
		EXPECT_ERR(REC(h_read(fd, &ticks), "re-set without cancel"),
			   EAGAIN);
		close(fd);
	}
	for (ci = 0; ci < nclk; ci++)
		for (fi = 0; fi < 4; fi++) {
			int want = (h_clocks[ci] == CLOCK_REALTIME ||
				    h_clocks[ci] == CLOCK_REALTIME_ALARM) &&
				   flagv[fi] == CANCEL_FLAGS;

			if (want)
				h_poll(fds[ci][fi], 2000, NULL);
			EXPECT_ERR(REC(h_read(fds[ci][fi], &ticks),
				       "%s flags %d read",
				       h_clock_name(h_clocks[ci]), flagv[fi]),
				   want ? ECANCELED : EAGAIN);
			close(fds[ci][fi]);
		}
	h_clock_restore();
}

/* 40: a clock change cancels at once: poll, epoll, then read; once */
TEST(cancel_immediate, T_CLOCK, 30)
{
	struct epoll_event ev = { .events = EPOLLIN }, out;
	uint64_t ticks;
	short rev = 0;
	int fd, ep;

	h_require_clock_set();
	fd = ops->create(CLOCK_REALTIME, TFD_NONBLOCK);
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_OK(fd);
	ASSERT_OK(ep);
	ASSERT_OK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	ASSERT_OK(arm(ops, fd, CLOCK_REALTIME, CANCEL_FLAGS, SEC(3600), 0));
	EXPECT(REC(h_poll(fd, 0, NULL), "poll before") == 0);
	clock_touch();
	EXPECT(REC(h_poll(fd, 2000, &rev), "poll after change") == 1);
	EXPECT(REC(rev, "revents") == POLLIN);
	EXPECT(REC(epoll_wait(ep, &out, 1, 2000), "epoll after change") == 1);
	EXPECT_ERR(REC(h_read(fd, &ticks), "read"), ECANCELED);
	EXPECT_ERR(REC(h_read(fd, &ticks), "read again"), EAGAIN);
	EXPECT(REC(h_poll(fd, 0, NULL), "poll after read") == 0);

	/* two changes before a read still give one ECANCELED */
	clock_touch();
	h_sleep_ns(MS(50));
	clock_touch();
	EXPECT(h_poll(fd, 2000, NULL) == 1);
	h_sleep_ns(MS(100));
	EXPECT_ERR(REC(h_read(fd, &ticks), "read after two changes"),
		   ECANCELED);
	EXPECT_ERR(REC(h_read(fd, &ticks), "and then"), EAGAIN);

	/* settimeofday and an adjtimex step count as changes too */
	{
		struct timeval tv;
		struct timex tx = { .modes = ADJ_SETOFFSET | ADJ_NANO };

		gettimeofday(&tv, NULL);
		EXPECT_OK(settimeofday(&tv, NULL));
		EXPECT(h_poll(fd, 2000, NULL) == 1);
		EXPECT_ERR(REC(h_read(fd, &ticks), "after settimeofday"),
			   ECANCELED);
		tx.time.tv_sec = 0;
		tx.time.tv_usec = 1000;	/* ns with ADJ_NANO */
		EXPECT(adjtimex(&tx) >= 0);
		EXPECT(h_poll(fd, 2000, NULL) == 1);
		EXPECT_ERR(REC(h_read(fd, &ticks), "after adjtimex step"),
			   ECANCELED);
		tx.modes = ADJ_SETOFFSET | ADJ_NANO;
		tx.time.tv_sec = -1;
		tx.time.tv_usec = NSEC_PER_SEC - 1000;
		EXPECT(adjtimex(&tx) >= 0);
		EXPECT(h_poll(fd, 2000, NULL) == 1);
		EXPECT_ERR(h_read(fd, &ticks), ECANCELED);
	}
	h_clock_restore();
	close(ep);
	close(fd);
}

/*
 * 40: the first access after clock_settime() returns knows: timerfd marks
 * its timers inside clock_was_set(), before the call returns, so an
 * immediate non-blocking read is ECANCELED, never EAGAIN and never an
 * expiry (the step is past the deadline), and so are a poll(0), the read
 * after epoll_wait() reports it and a settime (issue 13 item 3: dtimerfd
 * decided it in a work item, later).  20 tries of each.
 */
TEST(cancel_first_access, T_CLOCK, 120)
{
	static const char *const hn[] = { "read", "poll", "epoll", "settime" };
	int how, i, n[4][3] = { { 0 } };

	h_require_clock_set();
	for (how = 0; how < 4; how++) {
		for (i = 0; i < 20; i++) {
			struct epoll_event ev = { .events = EPOLLIN }, out;
			struct itimerspec its;
			uint64_t ticks = 0;
			long r;
			int fd, ep;

			fd = ops->create(CLOCK_REALTIME, TFD_NONBLOCK);
			ep = epoll_create1(EPOLL_CLOEXEC);
			ASSERT_OK(fd);
			ASSERT_OK(ep);
			ASSERT_OK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
			ASSERT_OK(arm(ops, fd, CLOCK_REALTIME, CANCEL_FLAGS,
				      SEC(5), 0));
			ASSERT_OK(h_clock_step(SEC(10)));
			if (how == 1) {
				r = h_poll(fd, 0, NULL);
				r = r == 1 ? h_read(fd, &ticks) : -2;
			} else if (how == 2) {
				/*
				 * epoll reports what was woken, and dtimerfd's
				 * wake-up comes from its clock work, moments
				 * after the step (docs/semantics.md: Differences
				 * from timerfd); the read is what must know at
				 * once
				 */
				r = epoll_wait(ep, &out, 1, 2000);
				r = r == 1 ? h_read(fd, &ticks) : -2;
			} else if (how == 3) {
				its = h_its(h_now(CLOCK_REALTIME) + SEC(5), 0);
				r = ops->settime(fd, CANCEL_FLAGS, &its, NULL);
			} else {
				r = h_read(fd, &ticks);
			}
			/* [0] ECANCELED, [1] not ready / EAGAIN, [2] other */
			if (r == -1 && errno == ECANCELED)
				n[how][0]++;
			else if (r == -2 || (r == -1 && errno == EAGAIN))
				n[how][1]++;
			else
				n[how][2]++;
			h_clock_restore();
			close(ep);
			close(fd);
		}
		EXPECTF(n[how][0] == 20,
			"first access %s: ECANCELED %d, not ready %d, else (an expiry, 0 or success) %d, of 20",
			hn[how], n[how][0], n[how][1], n[how][2]);
		REC(n[how][0], "%s ECANCELED of 20", hn[how]);
	}
}

struct waiter {
	const struct tfd_ops *ops;
	int fd;
	int how;		/* 0 read, 1 poll, 2 epoll_wait */
	long ret;
	int err;
	long long woke;
};

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;
	uint64_t ticks;

	if (w->how == 0) {
		w->ret = h_read(w->fd, &ticks);
	} else if (w->how == 1) {
		w->ret = h_poll(w->fd, -1, NULL);
	} else {
		struct epoll_event ev = { .events = EPOLLIN }, out;
		int ep = epoll_create1(EPOLL_CLOEXEC);

		epoll_ctl(ep, EPOLL_CTL_ADD, w->fd, &ev);
		w->ret = epoll_wait(ep, &out, 1, -1);
		close(ep);
	}
	w->err = errno;
	w->woke = h_now(CLOCK_MONOTONIC);
	return NULL;
}

/* 40: readers and pollers blocked on the timer wake at the change */
TEST(cancel_wakes_waiters, T_CLOCK, 60)
{
	static const char *hn[] = { "read", "poll", "epoll_wait" };
	int how;

	h_require_clock_set();
	for (how = 0; how < 3; how++) {
		struct waiter w = { ops, -1, how, 0, 0, 0 };
		uint64_t ticks;
		pthread_t th;
		long long t0;

		w.fd = ops->create(CLOCK_REALTIME, 0);
		ASSERT_OK(w.fd);
		ASSERT_OK(arm(ops, w.fd, CLOCK_REALTIME, CANCEL_FLAGS,
			      SEC(3600), 0));
		pthread_create(&th, NULL, wait_thread, &w);
		h_sleep_ns(MS(300));
		t0 = h_now(CLOCK_MONOTONIC);
		clock_touch();
		pthread_join(th, NULL);
		errno = w.err;
		if (how == 0)
			EXPECT_ERR(w.ret, ECANCELED);
		else
			EXPECT(w.ret == 1);
		REC(w.ret, "blocked %s woke", hn[how]);
		EXPECTF(w.woke - t0 < SEC(1), "%s woke %lld ms after the change",
			hn[how], (w.woke - t0) / MS(1));
		if (how) {
			h_set_nonblock(w.fd, 1);
			EXPECT_ERR(REC(h_read(w.fd, &ticks), "%s then read",
				       hn[how]), ECANCELED);
		}
		close(w.fd);
	}
	h_clock_restore();
}

/* 41: a disarmed timer set with ABSTIME|CANCEL_ON_SET reports changes */
TEST(cancel_disarmed, T_CLOCK, 30)
{
	struct itimerspec zero = h_its(0, 0), cur;
	uint64_t ticks;
	int fd;

	h_require_clock_set();
	fd = ops->create(CLOCK_REALTIME, TFD_NONBLOCK);
	ASSERT_OK(fd);
	ASSERT_OK(REC(ops->settime(fd, CANCEL_FLAGS, &zero, NULL),
		      "settime 0 ABSTIME|CANCEL_ON_SET"));
	EXPECT(REC(h_poll(fd, 0, NULL), "poll before") == 0);
	clock_touch();
	EXPECT(REC(h_poll(fd, 2000, NULL), "poll after change") == 1);
	EXPECT_ERR(REC(h_read(fd, &ticks), "read"), ECANCELED);
	EXPECT_OK(ops->gettime(fd, &cur));
	h_rec_its(&cur, 0, "gettime after");
	/* and keeps watching */
	clock_touch();
	EXPECT(REC(h_poll(fd, 2000, NULL), "poll after 2nd change") == 1);
	EXPECT_ERR(REC(h_read(fd, &ticks), "read 2"), ECANCELED);
	h_clock_restore();
	close(fd);
}

/* 28: ECANCELED wins over pending expirations, which are discarded */
TEST(cancel_priority, T_CLOCK, 30)
{
	uint64_t ticks;
	int nb;

	h_require_clock_set();
	for (nb = 0; nb < 2; nb++) {
		int fd = ops->create(CLOCK_REALTIME, nb ? TFD_NONBLOCK : 0);

		ASSERT_OK(fd);
		ASSERT_OK(arm(ops, fd, CLOCK_REALTIME, CANCEL_FLAGS, MS(10),
			      0));
		EXPECT(h_poll(fd, 5000, NULL) == 1);
		clock_touch();
		h_sleep_ns(MS(200));
		EXPECT_ERR(REC(h_read(fd, &ticks), "%s read",
			       nb ? "nonblocking" : "blocking"), ECANCELED);
		h_set_nonblock(fd, 1);
		EXPECT_ERR(REC(h_read(fd, &ticks), "%s read again",
			       nb ? "nonblocking" : "blocking"), EAGAIN);
		close(fd);
	}
	h_clock_restore();
}

/*
 * 42: after ECANCELED an expired periodic timer is not re-armed; a still
 * pending one keeps running.
 */
TEST(cancel_periodic, T_CLOCK, 30)
{
	struct itimerspec cur;
	uint64_t ticks;
	int fd;

	h_require_clock_set();
	fd = ops->create(CLOCK_REALTIME, TFD_NONBLOCK);
	ASSERT_OK(fd);
	ASSERT_OK(arm(ops, fd, CLOCK_REALTIME, CANCEL_FLAGS, MS(10), MS(50)));
	EXPECT(h_poll(fd, 5000, NULL) == 1);
	h_sleep_ns(MS(20));
	clock_touch();
	h_sleep_ns(MS(200));
	EXPECT_ERR(REC(h_read(fd, &ticks), "expired periodic read"),
		   ECANCELED);
	EXPECT(REC(h_poll(fd, 400, NULL), "no re-arm") == 0);
	EXPECT_OK(ops->gettime(fd, &cur));
	h_rec_its(&cur, 0, "gettime");

	ASSERT_OK(arm(ops, fd, CLOCK_REALTIME, CANCEL_FLAGS, MS(600),
		      MS(200)));
	clock_touch();
	EXPECT(h_poll(fd, 2000, NULL) == 1);
	EXPECT_ERR(REC(h_read(fd, &ticks), "pending periodic read"),
		   ECANCELED);
	EXPECT(REC(h_poll(fd, 5000, NULL), "still fires") == 1);
	EXPECT(REC(h_read(fd, &ticks), "read") == 8);
	EXPECT(ticks >= 1);
	h_clock_restore();
	close(fd);
}

/*
 * 43: re-arming a cancelled, unread timer with ABSTIME|CANCEL_ON_SET fails
 * with ECANCELED, yet the new setting is applied and old_value is not
 * written; the next settime succeeds.  Re-arming without CANCEL_ON_SET
 * leaves the cancel list first and so succeeds; re-arming with value 0
 * succeeds but keeps the cancelled state for the next settime.
 */
TEST(settime_on_cancelled, T_CLOCK, 30)
{
	struct itimerspec its, old, cur;
	struct h_fdinfo fi;
	uint64_t ticks;
	int fd;

	h_require_clock_set();
	fd = ops->create(CLOCK_REALTIME, TFD_NONBLOCK);
	ASSERT_OK(fd);

	/* same flags */
	ASSERT_OK(arm(ops, fd, CLOCK_REALTIME, CANCEL_FLAGS, SEC(3600), 0));
	clock_touch();
	EXPECT(h_poll(fd, 2000, NULL) == 1);
	its = h_its(h_now(CLOCK_REALTIME) + SEC(7200), SEC(3));
	memset(&old, 0x5a, sizeof(old));
	EXPECT_ERR(REC(ops->settime(fd, CANCEL_FLAGS, &its, &old),
		       "re-arm with cancel flags"), ECANCELED);
	EXPECT(REC(old.it_interval.tv_nsec == (long)0x5a5a5a5a5a5a5a5aLL,
		   "old_value untouched") == 1);
	EXPECT_OK(ops->gettime(fd, &cur));
	h_rec_its(&cur, SEC(5), "gettime after");
	EXPECT(h_its_value(&cur) > SEC(7100) && h_its_interval(&cur) == SEC(3));
	ASSERT_OK(h_fdinfo(fd, &fi));
	REC(fi.settime_flags & 3, "fdinfo settime flags");
	EXPECT(REC(h_poll(fd, 0, NULL), "poll after") == 0);
	EXPECT_ERR(REC(h_read(fd, &ticks), "read after"), EAGAIN);
	EXPECT_OK(REC(ops->settime(fd, CANCEL_FLAGS, &its, &old),
		      "second settime"));
	h_rec_its(&old, SEC(5), "second old");

	/* flags 0: off the cancel list first, so no error */
	clock_touch();
	EXPECT(h_poll(fd, 2000, NULL) == 1);
	its = h_its(SEC(100), 0);
	EXPECT_OK(REC(ops->settime(fd, 0, &its, NULL), "re-arm flags 0"));
	EXPECT_ERR(REC(h_read(fd, &ticks), "read after flags 0"), EAGAIN);

	/*
	 * the cancelled state outlived the flags-0 call: arming with the
	 * cancel flags again reports it (and arms)
	 */
	EXPECT_ERR(REC(arm(ops, fd, CLOCK_REALTIME, CANCEL_FLAGS, SEC(3600),
			   0), "re-arm with cancel flags after flags 0"),
		   ECANCELED);
	EXPECT_OK(REC(arm(ops, fd, CLOCK_REALTIME, CANCEL_FLAGS, SEC(3600),
			  0), "and again"));

	/* value 0 with the cancel flags: no error, state kept */
	clock_touch();
	EXPECT(h_poll(fd, 2000, NULL) == 1);
	its = h_its(0, 0);
	EXPECT_OK(REC(ops->settime(fd, CANCEL_FLAGS, &its, NULL),
		      "re-arm value 0"));
	REC(h_read(fd, &ticks), "read after value 0");
	its = h_its(h_now(CLOCK_REALTIME) + SEC(3600), 0);
	REC(ops->settime(fd, CANCEL_FLAGS, &its, NULL), "then re-arm");
	h_clock_restore();
	close(fd);
}

struct racer {
	const struct tfd_ops *ops;
	int fd;
	volatile int stop;
	long loops;
	long fails;
};

static void *toggle_plain(void *arg)
{
	struct racer *r = arg;
	struct itimerspec zero = h_its(0, 0);

	while (!r->stop)
		r->ops->settime(r->fd, 0, &zero, NULL);
	return NULL;
}

static unsigned long tainted(void)
{
	unsigned long t = 0;
	FILE *f = fopen("/proc/sys/kernel/tainted", "re");

	if (f) {
		if (fscanf(f, "%lu", &t) != 1)
			t = 0;
		fclose(f);
	}
	return t;
}

/* 45: CVE-2017-10661: toggling cancel-on-set from two threads */
TEST(cancel_toggle_race, 0, 60)
{
	struct itimerspec zero = h_its(0, 0);
	struct racer r = { ops, -1, 0, 0, 0 };
	unsigned long t0 = tainted();
	long long end;
	pthread_t th;

	r.fd = ops->create(CLOCK_REALTIME, 0);
	ASSERT_OK(r.fd);
	pthread_create(&th, NULL, toggle_plain, &r);
	end = h_now(CLOCK_MONOTONIC) + SEC(3);
	while (h_now(CLOCK_MONOTONIC) < end) {
		int i;

		for (i = 0; i < 1000; i++, r.loops++)
			if (ops->settime(r.fd, CANCEL_FLAGS, &zero, NULL))
				r.fails++;
	}
	r.stop = 1;
	pthread_join(th, NULL);
	h_diag("%ld toggles, %ld failures, tainted %lu -> %lu", r.loops,
	       r.fails, t0, tainted());
	EXPECT(r.fails == 0);
	REC(r.fails, "failed settime calls");
	/* W (warning, 512) and D (die, 128) must not appear */
	EXPECT(!((tainted() & ~t0) & (512 | 128)));
	close(r.fd);
	/* a timer list still intact: a fresh cancel timer works */
	h_ops = ops;
}

TEST_MAIN()
