// SPDX-License-Identifier: GPL-2.0
/*
 * Denial of service: 1,000 timers with a 1 ns period must not take the
 * machine.  The expiry callback never re-arms a periodic timer (the next
 * period is armed by whoever reads it), so once each timer has fired
 * nothing happens until a read, however short the period:
 *
 * - a SCHED_OTHER watchdog thread sleeping on a 10 ms period keeps its
 *   deadlines (a generous bound: TCG is slow), as well as it does with no
 *   timers at all;
 * - the process and the machine stay idle: little CPU time, each timer
 *   delivered exactly once (strict) or at most once (deferrable) while
 *   nobody reads;
 * - the counts read are elapsed time / resolution, at 2^32 and beyond
 *   without overflow, and successive reads add up (no lost or repeated
 *   periods); an absolute CLOCK_REALTIME timer at 1 ns after the epoch
 *   reads the whole time since the epoch (~2^60.6) at once.
 *
 * DTFD_DOS_SECONDS (or DTFD_TEST_DOS_SECONDS): the idle phase, default 5.
 * The softlockup and hung-task detectors of the guest kernel panic it
 * (vm/run's command line) should anything spin in the kernel.
 */
#include <pthread.h>
#include <sched.h>
#include <sys/resource.h>

#include "harness.h"

#define NTIMERS		1000
#define WD_PERIOD	MS(10)
/* TCG on a shared host: a tick can be late by tens of ms on a good day */
#define WD_MAX_LATE	MS(400)

static long long seconds = 5;

/* ---- the watchdog ---- */

struct wd {
	pthread_t tid;
	int stop;
	long long max_late, sum_late, n, missed;
};

static void *wd_main(void *arg)
{
	struct wd *w = arg;
	long long next = h_now(CLOCK_MONOTONIC);

	while (!__atomic_load_n(&w->stop, __ATOMIC_RELAXED)) {
		struct timespec ts;
		long long late;

		next += WD_PERIOD;
		ts = h_ns_ts(next);
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts,
				       NULL) == EINTR)
			;
		late = h_now(CLOCK_MONOTONIC) - next;
		if (late > w->max_late)
			w->max_late = late;
		w->sum_late += late;
		w->n++;
		if (late > WD_PERIOD) {
			/* do not catch up in a burst */
			w->missed += late / WD_PERIOD;
			next += late / WD_PERIOD * WD_PERIOD;
		}
	}
	return NULL;
}

static void wd_start(struct wd *w)
{
	memset(w, 0, sizeof(*w));
	ASSERT(!pthread_create(&w->tid, NULL, wd_main, w));
}

static void wd_stop(struct wd *w, const char *what)
{
	__atomic_store_n(&w->stop, 1, __ATOMIC_RELAXED);
	pthread_join(w->tid, NULL);
	h_diag("watchdog %s: %lld wake-ups, late %.2f ms on average, %.2f ms at most, %lld periods missed",
	       what, w->n, w->n ? w->sum_late / 1e6 / w->n : 0.0,
	       w->max_late / 1e6, w->missed);
}

/* ---- CPU use ---- */

struct cpu {
	long long proc_ns;		/* this process, all threads */
	unsigned long long busy, total;	/* /proc/stat, all CPUs, in ticks */
};

static void cpu_sample(struct cpu *c)
{
	unsigned long long v[10] = { 0 };
	FILE *f = fopen("/proc/stat", "re");
	int i;

	c->proc_ns = h_now(CLOCK_PROCESS_CPUTIME_ID);
	c->busy = c->total = 0;
	if (!f)
		return;
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu",
		   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7],
		   &v[8], &v[9]) >= 4) {
		/* user nice system idle iowait irq softirq steal guest... */
		for (i = 0; i < 8; i++)
			c->total += v[i];
		c->busy = c->total - v[3] - v[4];
	}
	fclose(f);
}

static void raise_nofile(void)
{
	struct rlimit rl;

	ASSERT_OK(getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_cur >= NTIMERS + 64)
		return;
	if (rl.rlim_max < NTIMERS + 64)
		rl.rlim_max = NTIMERS + 64;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		h_skip("cannot raise RLIMIT_NOFILE to %d: %s", NTIMERS + 64,
		       strerror(errno));
}

static long long resolution(void)
{
	struct timespec res;

	ASSERT_OK(clock_getres(CLOCK_MONOTONIC, &res));
	return h_ts_ns(&res) > 0 ? h_ts_ns(&res) : 1;
}

/* the flood's timers, when each was armed and first read, its first count */
static struct {
	int fds[NTIMERS];
	long long armed_lo[NTIMERS], armed_hi[NTIMERS];
	long long read_lo[NTIMERS], read_hi[NTIMERS];
	uint64_t first[NTIMERS];
} fl;

/* NTIMERS timers at a period of 1 ns, after the watchdog alone */
static void flood_arm(int deferrable, struct wd *wd)
{
	struct itimerspec its = h_its(1, 1);
	int i;

	/* the watchdog alone first: what this machine does on a good day */
	wd_start(wd);
	h_sleep_ns(SEC(1));
	wd_stop(wd, "without timers");

	for (i = 0; i < NTIMERS; i++) {
		fl.fds[i] = dtimerfd_create(CLOCK_MONOTONIC,
					    DTFD_NONBLOCK | DTFD_CLOEXEC);
		ASSERT_OK(fl.fds[i]);
		if (deferrable && i % 2)
			ASSERT_OK(dtimerfd_set_tolerance(fl.fds[i], 0, 1000));
	}

	wd_start(wd);
	for (i = 0; i < NTIMERS; i++) {
		fl.armed_lo[i] = h_now(CLOCK_MONOTONIC);
		ASSERT_OK(dtimerfd_settime(fl.fds[i], deferrable ?
					   DTFD_TIMER_DEFERRABLE : 0, &its,
					   NULL));
		fl.armed_hi[i] = h_now(CLOCK_MONOTONIC);
	}
}

/*
 * Nobody reads: each timer fires once and stays quiet, and neither the
 * process nor the machine is kept busy, nor the watchdog late.
 */
static void flood_idle(int deferrable, struct wd *wd)
{
	unsigned long long fired = 0, max_del = 0;
	long long t0, t1, wall, proc;
	struct cpu c0, c1;
	double busy;
	int i;

	cpu_sample(&c0);
	t0 = h_now(CLOCK_MONOTONIC);
	h_sleep_ns(SEC(seconds));
	t1 = h_now(CLOCK_MONOTONIC);
	cpu_sample(&c1);
	wd_stop(wd, "with the timers");

	wall = t1 - t0;
	proc = c1.proc_ns - c0.proc_ns;
	busy = c1.total > c0.total ?
	       100.0 * (double)(c1.busy - c0.busy) / (double)(c1.total - c0.total) : 0;
	for (i = 0; i < NTIMERS; i++) {
		struct dtfd_stats st;

		ASSERT_OK(dtimerfd_get_stats(fl.fds[i], &st));
		fired += st.deliveries;
		if (st.deliveries > max_del)
			max_del = st.deliveries;
	}
	h_diag("idle phase %.2f s: process CPU %.1f ms (%.2f%%), machine busy %.1f%%, %llu deliveries, at most %llu per timer",
	       wall / 1e9, proc / 1e6, 100.0 * (double)proc / (double)wall,
	       busy, fired, max_del);
	EXPECTF(max_del <= 1, "a timer was delivered %llu times without a read: the callback re-arms",
		max_del);
	if (!deferrable)
		EXPECTF(fired == NTIMERS, "%llu of %d strict timers fired",
			fired, NTIMERS);
	/*
	 * A callback re-arming at 1 ns would take the CPU whole; a quiet
	 * process costs 4-9 % here, once 12 % (6.12-rt, tick-based CPU
	 * accounting under TCG), hence a quarter.
	 */
	EXPECTF(proc < wall / 4, "process CPU %.1f ms in %.1f s", proc / 1e6,
		wall / 1e9);
	EXPECTF(busy < 50.0, "machine %.1f%% busy", busy);
	EXPECTF(wd->max_late < WD_MAX_LATE,
		"watchdog %.1f ms late (bound %.0f ms)", wd->max_late / 1e6,
		WD_MAX_LATE / 1e6);
}

/* first read: every period since the arming, once (@res: the resolution) */
static void flood_first_read(long long res)
{
	unsigned long long bad_count = 0, min_count = UINT64_MAX;
	int i;

	for (i = 0; i < NTIMERS; i++) {
		long long lo, hi;

		fl.read_lo[i] = h_now(CLOCK_MONOTONIC);
		if (h_read(fl.fds[i], &fl.first[i]) != 8) {
			h_fail(__FILE__, __LINE__, "read", "timer %d: %s", i,
			       strerror(errno));
			fl.first[i] = 0;
			continue;
		}
		fl.read_hi[i] = h_now(CLOCK_MONOTONIC);
		lo = (fl.read_lo[i] - fl.armed_hi[i]) / res - 2;
		hi = (fl.read_hi[i] - fl.armed_lo[i]) / res + 2;
		if (fl.first[i] < min_count)
			min_count = fl.first[i];
		if ((long long)fl.first[i] < lo || (long long)fl.first[i] > hi) {
			if (bad_count++ < 5)
				h_diag("timer %d: %llu periods, expected %lld..%lld",
				       i, (unsigned long long)fl.first[i], lo, hi);
		}
	}
	h_diag("first read: at least %llu periods a timer (2^32 = %llu)",
	       min_count, 1ULL << 32);
	EXPECTF(bad_count == 0, "%llu timers with counts off elapsed / resolution",
		bad_count);
	if (res == 1 && seconds >= 5)
		EXPECTF(min_count > (1ULL << 32), "counts stay below 2^32");
}

/* a while later: the periods since the first read, no more, no less */
static void flood_second_read(long long res)
{
	unsigned long long bad_sum = 0, bad_its = 0;
	int i;

	h_sleep_ns(MS(300));
	for (i = 0; i < NTIMERS; i++) {
		struct itimerspec cur;
		uint64_t second = 0;
		long long now_lo = h_now(CLOCK_MONOTONIC), now_hi;
		long long lo, hi;

		if (h_read(fl.fds[i], &second) != 8) {
			h_fail(__FILE__, __LINE__, "read", "timer %d again: %s",
			       i, strerror(errno));
			continue;
		}
		now_hi = h_now(CLOCK_MONOTONIC);
		lo = (now_lo - fl.read_hi[i]) / res - 2;
		hi = (now_hi - fl.read_lo[i]) / res + 2;
		if ((long long)second < lo || (long long)second > hi) {
			if (bad_sum++ < 5)
				h_diag("timer %d: %llu more periods, expected %lld..%lld",
				       i, (unsigned long long)second, lo, hi);
		}
		/* and the sum is the time since the arming */
		lo = (now_lo - fl.armed_hi[i]) / res - 4;
		hi = (now_hi - fl.armed_lo[i]) / res + 4;
		if ((long long)(fl.first[i] + second) < lo ||
		    (long long)(fl.first[i] + second) > hi)
			bad_sum++;
		if (dtimerfd_gettime(fl.fds[i], &cur) ||
		    h_its_interval(&cur) != 1 || cur.it_value.tv_sec != 0 ||
		    cur.it_value.tv_nsec < 0 || cur.it_value.tv_nsec > res)
			bad_its++;
	}
	EXPECTF(bad_sum == 0, "%llu timers whose reads do not add up", bad_sum);
	EXPECTF(bad_its == 0, "%llu timers with a bad gettime after the reads",
		bad_its);
}

/*
 * @deferrable: 0 strict, 1 deferrable (every other one bounded by
 * max_defer_ns = 1 us).
 */
static void flood(int deferrable)
{
	long long res = resolution();
	struct wd wd;
	int i;

	raise_nofile();
	h_diag("%d %s timers, period 1 ns (resolution %lld ns), %lld s idle",
	       NTIMERS, deferrable ? "deferrable" : "strict", res, seconds);
	flood_arm(deferrable, &wd);
	flood_idle(deferrable, &wd);
	flood_first_read(res);
	flood_second_read(res);
	for (i = 0; i < NTIMERS; i++)
		close(fl.fds[i]);
}

TEST(strict_1ns, T_DTFD_ONLY | T_NO_DEFER, 120)
{
	flood(0);
}

TEST(deferrable_1ns, T_DTFD_ONLY | T_NO_DEFER, 120)
{
	flood(1);
}

/*
 * A periodic timer whose first expiry was long ago: absolute 1 ns after
 * the epoch (REALTIME) or after boot (BOOTTIME), period 1 ns.  The first
 * read returns every period since, the clock's own value in ns: near
 * 2^60.6 for REALTIME, computed at once, not counted.
 */
TEST(huge_counts, T_DTFD_ONLY | T_NO_DEFER, 60)
{
	static const clockid_t clocks[] = { CLOCK_REALTIME, CLOCK_BOOTTIME };
	long long res = resolution();
	int c, mode;

	for (c = 0; c < 2; c++) {
		for (mode = 0; mode < 2; mode++) {
			struct itimerspec its = h_its(1, 1), cur;
			int flags = DTFD_TIMER_ABSTIME |
				    (mode ? DTFD_TIMER_DEFERRABLE : 0);
			int fd = dtimerfd_create(clocks[c], DTFD_NONBLOCK);
			long long before, after, cpu0, cpu1;
			uint64_t ticks = 0, again = 0;

			ASSERT_OK(fd);
			ASSERT_OK(dtimerfd_settime(fd, flags, &its, NULL));
			h_sleep_ns(MS(20));
			cpu0 = h_now(CLOCK_THREAD_CPUTIME_ID);
			before = h_now(clocks[c]);
			EXPECT(h_read(fd, &ticks) == 8);
			after = h_now(clocks[c]);
			cpu1 = h_now(CLOCK_THREAD_CPUTIME_ID);
			h_diag("%s %s: %llu periods in one read (%.3f ms of CPU)",
			       h_clock_name(clocks[c]),
			       mode ? "deferrable" : "strict",
			       (unsigned long long)ticks, (cpu1 - cpu0) / 1e6);
			/* the count is (the time of the read - 1 ns) / res + 1 */
			EXPECTF((long long)ticks >= (before - 1) / res - 1 &&
				(long long)ticks <= after / res + 1,
				"%llu periods, expected %lld..%lld",
				(unsigned long long)ticks, (before - 1) / res - 1,
				after / res + 1);
			EXPECT_OK(dtimerfd_gettime(fd, &cur));
			EXPECT(cur.it_value.tv_sec == 0 &&
			       cur.it_value.tv_nsec <= res);
			EXPECT(h_its_interval(&cur) == 1);
			h_sleep_ns(MS(10));
			EXPECT(h_read(fd, &again) == 8);
			EXPECTF(again >= (uint64_t)(MS(10) / res) &&
				again < (uint64_t)(SEC(30) / res),
				"second read: %llu periods",
				(unsigned long long)again);
			close(fd);
		}
	}
}

int main(int argc, char **argv)
{
	const char *s = getenv("DTFD_DOS_SECONDS");

	if (!s)
		s = getenv("DTFD_TEST_DOS_SECONDS");
	if (s && atoll(s) > 0)
		seconds = atoll(s);
	strict_1ns_case.timeout = (int)(seconds + 120);
	deferrable_1ns_case.timeout = (int)(seconds + 120);
	return h_main(argc, argv);
}
