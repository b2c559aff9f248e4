// SPDX-License-Identifier: GPL-2.0
/*
 * Races on shared timers: threads settime (strict <-> deferrable, with and
 * without tolerance, periods from 1 us to 10 ms), gettime, read (blocking
 * and not), poll, epoll_wait, SET_TICKS, close and reopen, dup, and fork
 * children that use and close the inherited fds, all on the same small
 * table of fds, while another thread steps CLOCK_REALTIME (CANCEL_ON_SET
 * and the deferrable re-arming on clock changes).  Fd numbers are reused
 * under the callers' feet on purpose: a call may land on another timer,
 * on the epoll fd or on nothing.
 *
 * The kernel must not complain (vm/check fails the run on any report).
 * Checked here: errno only from a small set, gettime's values well-formed,
 * read's counts non-zero, and at the end every timer still works: strict
 * and deferrable, one-shot and periodic.
 *
 * In the same storm, oracle timers whose every access is checked (issue
 * 13: the races that counts at the end missed):
 *  - pairs of threads on periodic CLOCK_MONOTONIC and CLOCK_BOOTTIME timers,
 *    strict, deferrable and bounded deferrable, re-armed every epoch and
 *    now and then closed and reopened: no read, poll wake-up or epoll
 *    event before a deadline; no read of 0 (no realtime clock under them);
 *    at each epoch's end expirations == read + pending;
 *  - an absolute CLOCK_REALTIME CANCEL_ON_SET timer: the first read, poll
 *    or settime after a clock step ends is ECANCELED (or readable), an
 *    epoll_wait() readable within a second, and nothing is cancelled
 *    without a step;
 *  - CPU 1 goes offline and online again every few hundred ms (as root,
 *    when the guest lets it), moving timers between CPUs;
 *  - on a debug build of the module, race_delay_us holds every callback
 *    before its first lock, so that the windows are wide on every run.
 *
 * DTFD_STRESS_SECONDS (or DTFD_TEST_STRESS_SECONDS): duration, default 30.
 * DTFD_STRESS_THREADS: worker threads, default 8.
 * DTFD_STRESS_RACE_US: race_delay_us during the run, default 100 (debug
 * builds only; 0 leaves it alone).  DTFD_STRESS_HOTPLUG=0: no hotplug.
 *
 * The workers and the clock stepper are in stress/workers.c, the oracles
 * and the hotplug thread in stress/oracles.c (stress/stress.h: what they
 * share).
 */
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/epoll.h>
#include <sys/syscall.h>

#include "harness.h"
#include "stress/stress.h"

int tbl[NSLOTS];
int epfd;
int ctl_fd;	/* the control descriptor: never in tbl */
int stop;
static int nthreads = 8;
static long long seconds = 30;
int failures;

static const char *const cname[C_N] = {
	"settime", "gettime", "read", "blocking read", "poll", "epoll_wait",
	"set_ticks", "tolerance", "close+reopen", "dup", "fork", "stats",
	"clock step",
};

static struct worker workers[MAX_THREADS];
static struct worker clocker;

uint64_t rnd(struct worker *w)
{
	return h_mix(&w->rng);
}

uint64_t below(struct worker *w, uint64_t n)
{
	return rnd(w) % n;
}

void __attribute__((format(printf, 1, 2))) st_fail(const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (__atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED) > 20)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	h_fail(__FILE__, __LINE__, "no race", "%s", msg);
}

/*
 * What a call on a racing fd may give: EBADF (closed under us), ENOTTY
 * and EINVAL (the number now belongs to the epoll fd or to the control
 * descriptor), EINTR (guard), EAGAIN, ECANCELED (a clock step).
 */
void check_err(struct worker *w, const char *what, long r)
{
	int e = errno;

	if (r >= 0)
		return;
	w->errs++;
	switch (e) {
	case EBADF: case ENOTTY: case EINVAL: case EINTR: case EAGAIN:
	case ECANCELED:
		return;
	default:
		st_fail("%s: errno %d (%s)", what, e, strerror(e));
	}
}

static void on_guard(int sig)
{
	(void)sig;
}

/* periodic, in case the first signal comes before the call blocks */
void guard(struct worker *w, long long ns)
{
	struct itimerspec its = h_its(ns, ns);

	if (w->have_guard)
		timer_settime(w->guard, 0, &its, NULL);
}

void check_its(const struct itimerspec *its, const char *what)
{
	if (its->it_value.tv_sec < 0 || its->it_value.tv_nsec < 0 ||
	    its->it_value.tv_nsec >= NSEC_PER_SEC ||
	    its->it_interval.tv_sec < 0 || its->it_interval.tv_nsec < 0 ||
	    its->it_interval.tv_nsec >= NSEC_PER_SEC)
		st_fail("%s: value (%lld, %ld) interval (%lld, %ld)", what,
			(long long)its->it_value.tv_sec, its->it_value.tv_nsec,
			(long long)its->it_interval.tv_sec,
			its->it_interval.tv_nsec);
}

/* strict, deferrable (any CPU) or per-CPU deferrable, at random */
int any_mode(struct worker *w)
{
	static const int mode[] = { 0, DTFD_TIMER_DEFERRABLE,
				    DTFD_TIMER_DEFERRABLE | DTFD_TIMER_PERCPU };

	return mode[below(w, 3)];
}

/* this thread's guard: a signal that ends its blocking calls */
void guard_init(struct worker *w)
{
	struct sigevent sev;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGUSR1;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	w->have_guard = !timer_create(CLOCK_MONOTONIC, &sev, &w->guard);
}

static int can_hotplug(void)
{
	const char *e = getenv("DTFD_STRESS_HOTPLUG");

	if (e && !strcmp(e, "0"))
		return 0;
	return !geteuid() && h_ncpus() >= 2 &&
	       !access("/sys/devices/system/cpu/cpu1/online", W_OK);
}

/* race_delay_us := @us on a debug build; the old value, -1 without one */
static long race_delay(long us)
{
	long old = h_param_get("race_delay_us");

	if (old >= 0)
		h_param_set("race_delay_us", us);
	return old;
}

/* After the storm: each slot's timer works, strict and deferrable. */
static void sanity(void)
{
	int i, mode, bad = 0;

	for (i = 0; i < NSLOTS; i++) {
		int fd = tbl[i];
		struct itimerspec cur;

		if (dtimerfd_gettime(fd, &cur)) {
			/* the last reopen may have left an epoll-free slot */
			h_diag("slot %d: gettime: %s", i, strerror(errno));
			bad++;
			continue;
		}
		check_its(&cur, "final gettime");
		for (mode = 0; mode < 3; mode++) {
			struct itimerspec its = h_its(MS(2), mode == 2 ? MS(1) : 0);
			int flags = mode ? DTFD_TIMER_DEFERRABLE : 0;
			uint64_t ticks = 0;

			if (dtimerfd_set_tolerance(fd, 0, mode ? MS(1) : 0) ||
			    dtimerfd_settime(fd, flags, &its, NULL)) {
				h_diag("slot %d mode %d: settime: %s", i, mode,
				       strerror(errno));
				bad++;
				continue;
			}
			if (h_wait_read(fd, 5000, &ticks) != 8 || !ticks ||
			    (mode < 2 && ticks != 1)) {
				h_diag("slot %d mode %d: ticks %llu", i, mode,
				       (unsigned long long)ticks);
				bad++;
			}
		}
		{
			struct itimerspec z = h_its(0, 0);

			dtimerfd_settime(fd, 0, &z, NULL);
		}
	}
	EXPECTF(bad == 0, "%d timers misbehaved after the stress", bad);
}

static long long env_ll(const char *name, const char *alt, long long def)
{
	const char *s = getenv(name);

	if (!s)
		s = getenv(alt);
	return s && *s ? strtoll(s, NULL, 0) : def;
}

/* The guard's handler, the epoll set, the control descriptor, the slots. */
static void stress_setup(void)
{
	struct sigaction sa;
	int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_guard;	/* no SA_RESTART */
	sigaction(SIGUSR1, &sa, NULL);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_OK(epfd);
	/* open for the whole run: its number is never a worker's */
	ctl_fd = open(DTIMERFD_DEVICE, O_RDWR | O_CLOEXEC);
	ASSERT_OK(ctl_fd);
	for (i = 0; i < NSLOTS; i++) {
		struct epoll_event ev = { .events = EPOLLIN };

		tbl[i] = dtimerfd_create(i % 3 ? CLOCK_MONOTONIC : CLOCK_REALTIME,
					 DTFD_NONBLOCK | DTFD_CLOEXEC);
		ASSERT_OK(tbl[i]);
		ev.data.fd = tbl[i];
		ASSERT_OK(epoll_ctl(epfd, EPOLL_CTL_ADD, tbl[i], &ev));
	}
}

/* the run's threads, and the workers of the canceller and the plugger */
struct stress_threads {
	pthread_t tids[MAX_THREADS], ctid, otid[NORACLES][2], cantid, hptid;
	struct worker canceller, plugger;
	int hotplug;
};

/*
 * The clock stepper, the workers, two threads per oracle, the cancel
 * oracle and, with @th->hotplug, the CPU 1 plugger, each with its own
 * generator from @seed.
 */
static void start_threads(struct stress_threads *th, uint64_t seed)
{
	int i;

	clocker.rng = seed ^ 0xc10c;
	ASSERT(!pthread_create(&th->ctid, NULL, clock_main, &clocker));
	for (i = 0; i < nthreads; i++) {
		workers[i].id = i;
		workers[i].rng = seed + (uint64_t)i * 0x1234567;
		ASSERT(!pthread_create(&th->tids[i], NULL, worker_main,
				       &workers[i]));
	}
	for (i = 0; i < NORACLES; i++) {
		struct oracle *o = &oracles[i];

		o->w[0].rng = seed ^ (0x0dac1e00ULL + (uint64_t)i);
		o->w[1].rng = seed ^ (0x51de0000ULL + (uint64_t)i);
		ASSERT(!pthread_create(&th->otid[i][0], NULL, oracle_main, o));
		ASSERT(!pthread_create(&th->otid[i][1], NULL, oracle_side, o));
	}
	th->canceller.rng = seed ^ 0xcace1ULL;
	ASSERT(!pthread_create(&th->cantid, NULL, cancel_main, &th->canceller));
	th->plugger.rng = seed ^ 0x401ULL;
	if (th->hotplug)
		ASSERT(!pthread_create(&th->hptid, NULL, hotplug_main,
				       &th->plugger));
}

/* Stop every thread and wait for it; close the oracles' timers. */
static void join_threads(struct stress_threads *th)
{
	int i;

	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < nthreads; i++)
		pthread_join(th->tids[i], NULL);
	pthread_join(th->ctid, NULL);
	for (i = 0; i < NORACLES; i++) {
		pthread_join(th->otid[i][0], NULL);
		pthread_join(th->otid[i][1], NULL);
		oracle_close(&oracles[i]);
	}
	pthread_join(th->cantid, NULL);
	/* the thread closed its copies; these are the originals */
	close(cancel_ep);
	close(cancel_fd);
	if (th->hotplug)
		pthread_join(th->hptid, NULL);
}

/* The calls of every kind, the run's figures and the invariants' tally. */
static void stress_report(long long t0, long long t1)
{
	unsigned long long tot[C_N] = { 0 }, all = 0, errs = 0, ticks = 0;
	unsigned long long zero_reads = 0;
	char line[512];
	int i, c, n;

	for (i = 0; i < nthreads; i++) {
		for (c = 0; c < C_N; c++)
			tot[c] += workers[i].n[c];
		errs += workers[i].errs;
		ticks += workers[i].ticks;
		zero_reads += workers[i].zero_reads;
	}
	tot[C_CLOCK] = clocker.n[C_CLOCK];
	n = 0;
	for (c = 0; c < C_N; c++) {
		all += tot[c];
		n += snprintf(line + n, sizeof(line) - (size_t)n, "%s%s %llu",
			      c ? ", " : "", cname[c], tot[c]);
	}
	h_diag("%s", line);
	h_diag("stressed %.1f min: %llu calls (%llu failed as allowed), %llu expirations read, %llu reads of 0 (clock stepped back)",
	       (t1 - t0) / 6e10, all, errs, ticks, zero_reads);
	h_diag("invariants: %llu checks in %llu oracle epochs, %lu clock steps, %llu CPU hotplug cycles: violations: %llu early, %llu reads of 0, %llu count, %llu late ECANCELED, %llu spurious ECANCELED",
	       oracle_checks, oracle_epochs, steps_done, hotplugs,
	       violations[V_EARLY], violations[V_ZERO], violations[V_COUNT],
	       violations[V_CANCEL], violations[V_SPURIOUS]);
}

TEST(stress, T_DTFD_ONLY | T_NO_DEFER | T_CLOCK, 120)
{
	struct stress_threads th = { .hotplug = can_hotplug() };
	long race_us = env_ll("DTFD_STRESS_RACE_US", "DTFD_TEST_STRESS_RACE_US",
			      100), race_old = -1;
	long long t0, t1;
	uint64_t seed;
	int i;

	h_require_clock_set();
	stress_setup();
	seed = (uint64_t)h_now(CLOCK_REALTIME);
	if (race_us > 0)
		race_old = race_delay(race_us);
	h_diag("%d threads and a clock stepper on %d shared timers, %d oracle timers with 2 threads each, a cancel oracle, %s, %s, for %lld s",
	       nthreads, NSLOTS, NORACLES,
	       th.hotplug ? "CPU 1 hotplug" : "no hotplug",
	       race_old >= 0 ? "callbacks held up to race_delay_us" : "no race_delay_us (not a debug build)",
	       seconds);

	/* before any worker can see their numbers */
	for (i = 0; i < NORACLES; i++) {
		oracles[i].clock = i % 2 ? CLOCK_BOOTTIME : CLOCK_MONOTONIC;
		pthread_barrier_init(&oracles[i].bar, NULL, 2);
		oracle_open(&oracles[i]);
	}
	cancel_open();

	t0 = h_now(CLOCK_MONOTONIC);
	start_threads(&th, seed);
	while (h_now(CLOCK_MONOTONIC) - t0 < SEC(seconds) && !failures)
		h_sleep_ns(MS(200));
	join_threads(&th);
	t1 = h_now(CLOCK_MONOTONIC);
	h_clock_restore();
	if (race_old >= 0)
		race_delay(race_old);

	stress_report(t0, t1);
	EXPECTF(failures == 0, "%d failures", failures);

	sanity();
	for (i = 0; i < NSLOTS; i++)
		close(tbl[i]);
	close(epfd);
	close(ctl_fd);
}

int main(int argc, char **argv)
{
	seconds = env_ll("DTFD_STRESS_SECONDS", "DTFD_TEST_STRESS_SECONDS",
			 seconds);
	nthreads = (int)env_ll("DTFD_STRESS_THREADS",
			       "DTFD_TEST_STRESS_THREADS", nthreads);
	if (seconds < 1)
		seconds = 1;
	if (nthreads < 1)
		nthreads = 1;
	if (nthreads > MAX_THREADS)
		nthreads = MAX_THREADS;
	/* the stress, the sanity check (up to 5 s a timer), slack */
	stress_case.timeout = (int)(seconds + 60 + NSLOTS * 3 * 5);
	return h_main(argc, argv);
}
