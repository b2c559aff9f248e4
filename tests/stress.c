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
 * DTFD_STRESS_SECONDS (or DTFD_TEST_STRESS_SECONDS): duration, default 30.
 * DTFD_STRESS_THREADS: worker threads, default 8.
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/epoll.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "harness.h"

#define NSLOTS		12
#define MAX_THREADS	32

#ifndef RWF_NOWAIT
#define RWF_NOWAIT	0x00000008
#endif

static int tbl[NSLOTS];
static int epfd;
static int stop;
static int nthreads = 8;
static long long seconds = 30;
static int failures;

enum {
	C_SETTIME, C_GETTIME, C_READ, C_READ_BLOCK, C_POLL, C_EPOLL,
	C_TICKS, C_TOL, C_REOPEN, C_DUP, C_FORK, C_STATS, C_CLOCK, C_N
};

static const char *const cname[C_N] = {
	"settime", "gettime", "read", "blocking read", "poll", "epoll_wait",
	"set_ticks", "tolerance", "close+reopen", "dup", "fork", "stats",
	"clock step",
};

struct worker {
	int id;
	uint64_t rng;
	timer_t guard;
	int have_guard;
	unsigned long long n[C_N], errs, ticks, zero_reads;
};

static struct worker workers[MAX_THREADS];
static struct worker clocker;

static uint64_t rnd(struct worker *w)
{
	uint64_t z = (w->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(struct worker *w, uint64_t n)
{
	return rnd(w) % n;
}

static void __attribute__((format(printf, 1, 2))) st_fail(const char *fmt, ...)
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
 * and EINVAL (the number now belongs to the epoll fd), EINTR (guard),
 * EAGAIN, ECANCELED (a clock step), EBUSY (INIT after settime).
 */
static void check_err(struct worker *w, const char *what, long r)
{
	int e = errno;

	if (r >= 0)
		return;
	w->errs++;
	switch (e) {
	case EBADF: case ENOTTY: case EINVAL: case EINTR: case EAGAIN:
	case ECANCELED: case EBUSY:
		return;
	default:
		st_fail("%s: errno %d (%s)", what, e, strerror(e));
	}
}

/* 1 us .. 10 ms, spread evenly over the decades */
static long long period(struct worker *w)
{
	static const long long dec[] = { 1000, 10000, 100000, 1000000 };
	long long d = dec[below(w, 4)];

	return d + (long long)below(w, (uint64_t)(d * 9 + 1));
}

static int slot_fd(struct worker *w)
{
	return __atomic_load_n(&tbl[below(w, NSLOTS)], __ATOMIC_RELAXED);
}

static void on_guard(int sig)
{
	(void)sig;
}

/* periodic, in case the first signal comes before the call blocks */
static void guard(struct worker *w, long long ns)
{
	struct itimerspec its = h_its(ns, ns);

	if (w->have_guard)
		timer_settime(w->guard, 0, &its, NULL);
}

static void check_its(const struct itimerspec *its, const char *what)
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

static void do_settime(struct worker *w, int fd)
{
	int flags = below(w, 2) ? DTFD_TIMER_DEFERRABLE : 0;
	long long v = period(w), iv = below(w, 3) ? period(w) : 0;
	struct itimerspec its, old;
	long r;

	if (!below(w, 4)) {
		/* absolute, maybe cancelled by the clock stepper */
		clockid_t c = below(w, 2) ? CLOCK_REALTIME : CLOCK_MONOTONIC;

		flags |= DTFD_TIMER_ABSTIME;
		if (c == CLOCK_REALTIME && below(w, 2))
			flags |= DTFD_TIMER_CANCEL_ON_SET;
		v += h_now(c);
	}
	if (!below(w, 20))
		v = 0;		/* disarm */
	its = h_its(v, iv);
	r = dtimerfd_settime(fd, flags, &its, below(w, 2) ? &old : NULL);
	check_err(w, "settime", r);
}

static void do_read(struct worker *w, int fd, int block)
{
	uint64_t ticks = 0;
	long r;

	if (block) {
		guard(w, MS(1) + (long long)below(w, MS(20)));
		r = read(fd, &ticks, sizeof(ticks));
		guard(w, 0);
	} else {
		struct iovec iov = { &ticks, sizeof(ticks) };

		r = syscall(SYS_preadv2, fd, &iov, 1, -1L, -1L, RWF_NOWAIT);
	}
	check_err(w, "read", r);
	/*
	 * 0: a periodic deadline that fired, then CLOCK_REALTIME stepped
	 * back below it: the re-arm finds no period passed and the count
	 * comes to 1 - 1, which timerfd's read returns the same way.
	 */
	if (r == 0)
		w->zero_reads++;
	else if (r > 0 && (r != 8 || !ticks))
		st_fail("read: %ld bytes, count %llu", r,
			(unsigned long long)ticks);
	if (r == 8)
		w->ticks += ticks;
}

static void do_poll(struct worker *w)
{
	struct pollfd p[4];
	int i, r;

	for (i = 0; i < 4; i++) {
		p[i].fd = slot_fd(w);
		p[i].events = POLLIN;
	}
	r = poll(p, 4, (int)below(w, 11));
	check_err(w, "poll", r);
	for (i = 0; r > 0 && i < 4; i++)
		if (p[i].revents & ~(POLLIN | POLLNVAL | POLLRDNORM))
			st_fail("poll: revents %#x", p[i].revents);
}

static void do_epoll(struct worker *w)
{
	struct epoll_event ev[8];
	int r, i;

	r = epoll_wait(epfd, ev, 8, (int)below(w, 11));
	check_err(w, "epoll_wait", r);
	for (i = 0; i < r; i++) {
		uint64_t ticks;
		struct iovec iov = { &ticks, sizeof(ticks) };

		if (ev[i].events & ~(uint32_t)EPOLLIN)
			st_fail("epoll: events %#x", ev[i].events);
		/* drain, or level-triggered readiness spins */
		syscall(SYS_preadv2, ev[i].data.fd, &iov, 1, -1L, -1L,
			RWF_NOWAIT);
	}
}

/* A fresh timer in slot @i; the old fd closed while others may use it. */
static void reopen(struct worker *w, int i)
{
	int fd = open(DTIMERFD_DEVICE, O_RDWR | O_CLOEXEC |
		      (below(w, 4) ? O_NONBLOCK : 0));
	struct epoll_event ev = { .events = EPOLLIN };
	int old;

	if (fd < 0) {
		st_fail("open: %s", strerror(errno));
		return;
	}
	if (below(w, 2)) {
		static const clockid_t clocks[] = {
			CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME,
		};
		struct dtfd_init in = { .clockid = clocks[below(w, 3)] };

		check_err(w, "init", ioctl(fd, DTFD_IOC_INIT, &in));
	}
	ev.data.fd = fd;
	if (below(w, 2))
		epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev);
	old = __atomic_exchange_n(&tbl[i], fd, __ATOMIC_RELAXED);
	close(old);
}

static void do_dup(struct worker *w)
{
	int from = slot_fd(w), i = (int)below(w, NSLOTS);
	int fd = fcntl(from, F_DUPFD_CLOEXEC, 3), old;

	check_err(w, "dup", fd);
	if (fd < 0)
		return;
	old = __atomic_exchange_n(&tbl[i], fd, __ATOMIC_RELAXED);
	close(old);
}

/*
 * A child on a copy of the fd table, for a few milliseconds: arms, reads
 * and closes the timers it inherited (raw calls only: the parent's other
 * threads may hold libc locks), and exits, which closes the rest.
 */
static void do_fork(struct worker *w)
{
	int snap[NSLOTS], i, status;
	pid_t pid;

	for (i = 0; i < NSLOTS; i++)
		snap[i] = __atomic_load_n(&tbl[i], __ATOMIC_RELAXED);
	pid = fork();
	if (pid == 0) {
		struct itimerspec its = h_its(MS(1), 100000);
		struct dtfd_settime a = {
			.flags = 0, .layout = sizeof(time_t) == 8 ?
				DTFD_ITS_64 : DTFD_ITS_32,
			.new_value = (uintptr_t)&its,
		};
		uint64_t ticks;
		struct iovec iov = { &ticks, sizeof(ticks) };
		struct timespec ts = { 0, 200000 };

		for (i = 0; i < 40; i++) {
			int fd = snap[i % NSLOTS];

			a.flags = i & 1 ? DTFD_TIMER_DEFERRABLE : 0;
			ioctl(fd, DTFD_IOC_SETTIME, &a);
			nanosleep(&ts, NULL);
			syscall(SYS_preadv2, fd, &iov, 1, -1L, -1L, RWF_NOWAIT);
			if (i % 7 == 6)
				close(fd);
		}
		_exit(0);
	}
	if (pid < 0) {
		check_err(w, "fork", pid);
		return;
	}
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
}

static void do_stats(struct worker *w, int fd)
{
	struct dtfd_stats s;
	struct dtfd_tolerance tol;
	struct itimerspec cur;
	long r;

	r = dtimerfd_get_stats(fd, &s);
	check_err(w, "stats", r);
	if (!r && (s.deliveries > s.expirations ||
		   s.backstop > s.deliveries || s.deferred > s.deliveries))
		st_fail("stats: expirations %llu deliveries %llu deferred %llu backstop %llu",
			(unsigned long long)s.expirations,
			(unsigned long long)s.deliveries,
			(unsigned long long)s.deferred,
			(unsigned long long)s.backstop);
	r = ioctl(fd, DTFD_IOC_GET_TOLERANCE, &tol);
	check_err(w, "get tolerance", r);
	r = dtimerfd_gettime(fd, &cur);
	check_err(w, "gettime", r);
	if (!r)
		check_its(&cur, "gettime");
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct sigevent sev;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGUSR1;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	w->have_guard = !timer_create(CLOCK_MONOTONIC, &sev, &w->guard);

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		unsigned int x = (unsigned int)below(w, 1000);
		int fd = slot_fd(w);
		int c;

		if (x < 250)
			c = C_SETTIME;
		else if (x < 330)
			c = C_GETTIME;
		else if (x < 450)
			c = C_READ;
		else if (x < 520)
			c = C_READ_BLOCK;
		else if (x < 600)
			c = C_POLL;
		else if (x < 680)
			c = C_EPOLL;
		else if (x < 720)
			c = C_TICKS;
		else if (x < 780)
			c = C_TOL;
		else if (x < 850)
			c = C_REOPEN;
		else if (x < 900)
			c = C_DUP;
		else if (x < 902)
			c = C_FORK;
		else
			c = C_STATS;
		w->n[c]++;

		switch (c) {
		case C_SETTIME:
			do_settime(w, fd);
			break;
		case C_GETTIME: {
			struct itimerspec cur;
			long r = dtimerfd_gettime(fd, &cur);

			check_err(w, "gettime", r);
			if (!r)
				check_its(&cur, "gettime");
			break;
		}
		case C_READ:
			do_read(w, fd, 0);
			break;
		case C_READ_BLOCK:
			do_read(w, fd, 1);
			break;
		case C_POLL:
			do_poll(w);
			break;
		case C_EPOLL:
			do_epoll(w);
			break;
		case C_TICKS: {
			uint64_t t = 1 + below(w, 1000);

			check_err(w, "set_ticks",
				  ioctl(fd, DTFD_IOC_SET_TICKS, &t));
			break;
		}
		case C_TOL:
			check_err(w, "tolerance", dtimerfd_set_tolerance(fd,
				  below(w, 2) ? 0 : below(w, MS(1)),
				  below(w, 2) ? 0 : below(w, MS(2))));
			break;
		case C_REOPEN:
			reopen(w, (int)below(w, NSLOTS));
			break;
		case C_DUP:
			do_dup(w);
			break;
		case C_FORK:
			do_fork(w);
			break;
		default:
			do_stats(w, fd);
			break;
		}
	}
	if (w->have_guard)
		timer_delete(w->guard);
	return NULL;
}

/* Steps of CLOCK_REALTIME, +-100 us, every few milliseconds. */
static void *clock_main(void *arg)
{
	struct worker *w = arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		long long d = (long long)below(w, 200001) - 100000;

		if (h_clock_step(d))
			st_fail("clock step: %s", strerror(errno));
		w->n[C_CLOCK]++;
		h_sleep_ns(MS(2) + (long long)below(w, MS(20)));
	}
	return NULL;
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

TEST(stress, T_DTFD_ONLY | T_NO_DEFER | T_CLOCK, 120)
{
	pthread_t tids[MAX_THREADS], ctid;
	unsigned long long tot[C_N] = { 0 }, all = 0, errs = 0, ticks = 0;
	unsigned long long zero_reads = 0;
	struct sigaction sa;
	long long t0, t1;
	char line[512];
	int i, c, n;
	uint64_t seed;

	h_require_clock_set();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_guard;	/* no SA_RESTART */
	sigaction(SIGUSR1, &sa, NULL);
	epfd = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_OK(epfd);
	for (i = 0; i < NSLOTS; i++) {
		struct epoll_event ev = { .events = EPOLLIN };

		tbl[i] = dtimerfd_create(i % 3 ? CLOCK_MONOTONIC : CLOCK_REALTIME,
					 DTFD_NONBLOCK | DTFD_CLOEXEC);
		ASSERT_OK(tbl[i]);
		ev.data.fd = tbl[i];
		ASSERT_OK(epoll_ctl(epfd, EPOLL_CTL_ADD, tbl[i], &ev));
	}
	seed = (uint64_t)h_now(CLOCK_REALTIME);
	h_diag("%d threads and a clock stepper on %d shared timers for %lld s",
	       nthreads, NSLOTS, seconds);

	t0 = h_now(CLOCK_MONOTONIC);
	clocker.rng = seed ^ 0xc10c;
	ASSERT(!pthread_create(&ctid, NULL, clock_main, &clocker));
	for (i = 0; i < nthreads; i++) {
		workers[i].id = i;
		workers[i].rng = seed + (uint64_t)i * 0x1234567;
		ASSERT(!pthread_create(&tids[i], NULL, worker_main, &workers[i]));
	}
	while (h_now(CLOCK_MONOTONIC) - t0 < SEC(seconds) && !failures)
		h_sleep_ns(MS(200));
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	for (i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);
	pthread_join(ctid, NULL);
	t1 = h_now(CLOCK_MONOTONIC);
	h_clock_restore();

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
	EXPECTF(failures == 0, "%d failures", failures);

	sanity();
	for (i = 0; i < NSLOTS; i++)
		close(tbl[i]);
	close(epfd);
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
