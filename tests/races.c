// SPDX-License-Identifier: GPL-2.0
/*
 * The races between the module's callbacks and process context, each
 * forced open with the debug builds' race_delay_us parameter (a callback
 * waits that long before its first lock) when the module has it, and
 * tried many times without it otherwise.  Issue 13 items 1 and 2:
 *
 * clock_step_close  a deferrable callback runs late on CPU 0 while CPU 1
 *                   re-arms the timer, the clock is stepped and CPU 1
 *                   closes the fd: release must wait for that callback
 *                   (the clock work moved the running timer to another
 *                   CPU's base, close freed it under the callback).
 * backstop_early    two threads read one bounded periodic deferrable
 *                   timer: no expiry may be delivered before its deadline,
 *                   no blocking read returns 0, and the statistics count
 *                   exactly what was read plus what is pending.
 *
 * Needs 2 CPUs; clock_step_close needs root.  DTFD_TEST_RACE_SECONDS: the
 * length of backstop_early (default 8).
 */
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "harness.h"

#ifndef RWF_NOWAIT
#define RWF_NOWAIT	0x00000008
#endif

static long long race_seconds = 8;

static int have_knob(void)
{
	return h_param_get("race_delay_us") >= 0 && !geteuid();
}

static void require_cpus(int n)
{
	if (h_ncpus() < n)
		h_skip("needs %d online CPUs", n);
}

/* keeps CPU 0 busy, so its tick runs the deferrable callback */
static void spinner_start(struct h_spinner *s)
{
	ASSERT(!h_spinner_start(s, 0, SCHED_OTHER, 0));
}

/*
 * Issue 13 item 1.  With the knob each round holds the callback 300 ms on
 * CPU 0; before the fix the guest's kernel then runs it on freed, poisoned
 * memory (a hang, a panic or a KASAN report fail the run).
 */
TEST(clock_step_close, T_DTFD_ONLY | T_NO_DEFER | T_CLOCK, 120)
{
	int rounds, i, knob = have_knob();
	long long hold = knob ? MS(300) : 0;
	struct h_spinner spin;

	require_cpus(2);
	h_require_clock_set();
	if (knob) {
		ASSERT_OK(h_param_set("race_delay_fixed", 1));
		ASSERT_OK(h_param_set("race_delay_us", hold / 1000));
	}
	rounds = knob ? 4 : 400;
	h_diag("%d rounds, callbacks held %lld ms", rounds, hold / MS(1));
	spinner_start(&spin);
	for (i = 0; i < rounds; i++) {
		struct itimerspec its = h_its(MS(1), MS(1)), cur;
		int fd;

		/* armed on CPU 0: its callback runs there, held */
		h_pin(0);
		fd = dtimerfd_create(i & 1 ? CLOCK_BOOTTIME : CLOCK_REALTIME,
				     DTFD_NONBLOCK);
		ASSERT_OK(fd);
		if (!(i & 1)) {
			its = h_its(h_now(CLOCK_REALTIME) + MS(1), MS(1));
			ASSERT_OK(dtimerfd_settime(fd, DTFD_TIMER_DEFERRABLE |
						   DTFD_TIMER_ABSTIME, &its,
						   NULL));
		} else {
			ASSERT_OK(dtimerfd_settime(fd, DTFD_TIMER_DEFERRABLE,
						   &its, NULL));
		}
		h_pin(1);
		h_sleep_ns(knob ? MS(50) : (i % 8) * 500000LL);
		/* CPU 1 delivers and re-arms while the callback waits */
		EXPECT_OK(dtimerfd_gettime(fd, &cur));
		/* the clock work re-arms the deferrable timer... */
		ASSERT_OK(h_clock_step(0));
		h_sleep_ns(knob ? MS(20) : 0);
		/* ...and close must still wait for the held callback */
		close(fd);
		h_sleep_ns(knob ? hold + MS(100) : 0);
	}
	h_spinner_stop(&spin);
	if (knob)
		h_param_set("race_delay_us", 0);
	h_clock_restore();
}

/*
 * Issue 15's riders: one takes a due CLOCK_REALTIME deferrable timer out
 * of the queue and (with the knob) holds it 300 ms before delivering it;
 * meanwhile the clock steps back behind the deadline and the timer is
 * closed.  Before the fix the rider put the closing timer back in the
 * queue, where it was freed, and arming the next timer walked poisoned
 * memory.  Only with the debug module (make check-stress): without the
 * knob the window is a few instructions wide.
 */
TEST(ride_step_back_close, T_DTFD_ONLY | T_NO_DEFER | T_CLOCK, 120)
{
	long long hold = MS(300);
	struct h_spinner spin;
	int i;

	require_cpus(2);
	h_require_clock_set();
	if (!have_knob())
		h_skip("needs the debug module's race_delay_us (make check-stress)");
	ASSERT_OK(h_param_set("race_delay_fixed", 1));
	ASSERT_OK(h_param_set("race_delay_us", hold / 1000));
	spinner_start(&spin);
	h_pin(1);
	for (i = 0; i < 3; i++) {
		struct itimerspec its = h_its(h_now(CLOCK_REALTIME) + MS(5), 0);
		int fd = dtimerfd_create(CLOCK_REALTIME, DTFD_NONBLOCK);

		ASSERT_OK(fd);
		ASSERT_OK(dtimerfd_settime(fd, DTFD_TIMER_DEFERRABLE |
					   DTFD_TIMER_ABSTIME, &its, NULL));
		/* a rider waits 300 ms, takes it, holds it 300 ms more */
		h_sleep_ns(MS(5) + hold + MS(100));
		ASSERT_OK(h_clock_step(-SEC(10)));
		close(fd);			/* waits for the rider */
		ASSERT_OK(h_clock_step(SEC(10)));
		/* the next timer walks the queue the closed one was in */
		fd = dtimerfd_create(CLOCK_REALTIME, DTFD_NONBLOCK);
		ASSERT_OK(fd);
		its = h_its(h_now(CLOCK_REALTIME) + SEC(1), 0);
		EXPECT_OK(dtimerfd_settime(fd, DTFD_TIMER_DEFERRABLE |
					   DTFD_TIMER_ABSTIME, &its, NULL));
		close(fd);
	}
	h_spinner_stop(&spin);
	h_param_set("race_delay_us", 0);
	h_clock_restore();
}

/* ---- backstop_early ---------------------------------------------------- */

struct shared {
	int fd;
	long long t0, value, period;	/* settime's start, its arguments */
	uint64_t read;			/* expirations read, all threads */
	int stop;
	int violations;
};

static void violation(struct shared *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void violation(struct shared *s, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (__atomic_add_fetch(&s->violations, 1, __ATOMIC_RELAXED) > 10)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	h_fail(__FILE__, __LINE__, "invariant", "%s", msg);
}

/* expiries due by @t at most: those with a deadline at or before it */
static uint64_t due_by(const struct shared *s, long long t)
{
	long long first = s->t0 + s->value;

	return t < first ? 0 : (uint64_t)((t - first) / s->period) + 1;
}

static void account(struct shared *s, uint64_t ticks, const char *how)
{
	uint64_t total = __atomic_add_fetch(&s->read, ticks, __ATOMIC_SEQ_CST);
	long long t = h_now(CLOCK_MONOTONIC);

	if (total > due_by(s, t))
		violation(s, "%s: %llu expirations read at +%lld ns, only %llu due",
			  how, (unsigned long long)total, t - s->t0,
			  (unsigned long long)due_by(s, t));
}

static void *reader(void *arg)
{
	struct shared *s = arg;
	static int next_cpu;
	int cpu = __atomic_fetch_add(&next_cpu, 1, __ATOMIC_RELAXED) % 2;
	unsigned long n = 0;

	h_pin(cpu);
	while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED)) {
		uint64_t ticks = 0;
		struct iovec iov = { &ticks, sizeof(ticks) };
		struct itimerspec cur;
		long r;

		if (++n % 64 == 0) {
			/* blocking: returns 0 only after a realtime step back */
			struct pollfd p = { .fd = s->fd, .events = POLLIN };

			if (poll(&p, 1, 5) == 1) {
				r = syscall(SYS_preadv2, s->fd, &iov, 1, -1L,
					    -1L, 0);
				if (r == 0)
					violation(s, "a blocking read returned 0 (CLOCK_MONOTONIC)");
				else if (r == 8)
					account(s, ticks, "blocking read");
			}
			continue;
		}
		if (n % 5 == 0) {
			/* gettime delivers and re-arms too */
			dtimerfd_gettime(s->fd, &cur);
			continue;
		}
		r = syscall(SYS_preadv2, s->fd, &iov, 1, -1L, -1L, RWF_NOWAIT);
		if (r == 8)
			account(s, ticks, "read");
		else if (r == 0)
			violation(s, "a non-blocking read returned 0");
		else if (errno != EAGAIN)
			violation(s, "read: %s", strerror(errno));
	}
	return NULL;
}

/*
 * Issue 13 item 2.  A stale backstop callback, which waited for wqh.lock
 * while another CPU delivered and re-armed, delivered the next period
 * early: a blocking read of 0, an expiry read before its deadline, one
 * expiration counted that nobody can read.
 */
TEST(backstop_early, T_DTFD_ONLY | T_NO_DEFER, 120)
{
	static const long long bounds[] = { 1, 20000 };
	int knob = have_knob(), b;
	struct shared s;
	pthread_t th[2];
	struct h_spinner spin;

	require_cpus(2);
	if (knob) {
		ASSERT_OK(h_param_set("race_delay_fixed", 0));
		ASSERT_OK(h_param_set("race_delay_us", 200));
	}
	spinner_start(&spin);
	for (b = 0; b < (int)ARRAY_SIZE(bounds); b++) {
		static const char *const keys[] = {
			"ticks", "dtimerfd-expirations", "dtimerfd-backstop",
		};
		unsigned long long v[3], exp, pending;
		struct itimerspec its;
		long long t1;

		memset(&s, 0, sizeof(s));
		s.fd = dtimerfd_create(CLOCK_MONOTONIC, DTFD_CLOEXEC);
		ASSERT_OK(s.fd);
		ASSERT_OK(dtimerfd_set_tolerance(s.fd, 0, bounds[b]));
		s.value = s.period = MS(1);
		its = h_its(s.value, s.period);
		s.t0 = h_now(CLOCK_MONOTONIC);
		ASSERT_OK(dtimerfd_settime(s.fd, DTFD_TIMER_DEFERRABLE, &its,
					   NULL));
		ASSERT(!pthread_create(&th[0], NULL, reader, &s));
		ASSERT(!pthread_create(&th[1], NULL, reader, &s));
		t1 = h_now(CLOCK_MONOTONIC);
		while (h_now(CLOCK_MONOTONIC) - t1 < SEC(race_seconds) / 2 &&
		       !__atomic_load_n(&s.violations, __ATOMIC_RELAXED))
			h_sleep_ns(MS(100));
		__atomic_store_n(&s.stop, 1, __ATOMIC_RELAXED);
		pthread_join(th[0], NULL);
		pthread_join(th[1], NULL);
		/* one snapshot: pending and counted agree */
		/* one read: the module fills it under one lock */
		h_fdinfo_vals(s.fd, 0, 3, keys, v, 0);
		pending = v[0];
		exp = v[1];
		if (exp != s.read + pending)
			violation(&s, "max_defer %lld ns: expirations %llu != read %llu + pending %llu",
				  bounds[b], exp, (unsigned long long)s.read,
				  pending);
		h_diag("max_defer %lld ns: %llu expirations, %llu read, %llu pending, backstop %llu, %d violations",
		       bounds[b], exp, (unsigned long long)s.read, pending,
		       v[2], s.violations);
		close(s.fd);
	}
	h_spinner_stop(&spin);
	if (knob)
		h_param_set("race_delay_us", 0);
}

int main(int argc, char **argv)
{
	const char *e = getenv("DTFD_TEST_RACE_SECONDS");

	if (e && atoll(e) > 0)
		race_seconds = atoll(e);
	backstop_early_case.timeout = (int)(race_seconds + 60);
	return h_main(argc, argv);
}
