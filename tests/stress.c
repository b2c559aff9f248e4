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
 */
#include <poll.h>
#include <pthread.h>
#include <sched.h>
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
static int ctl_fd;	/* the control descriptor: never in tbl */
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
	return h_mix(&w->rng);
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
 * and EINVAL (the number now belongs to the epoll fd or to the control
 * descriptor), EINTR (guard), EAGAIN, ECANCELED (a clock step).
 */
static void check_err(struct worker *w, const char *what, long r)
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

/* strict, deferrable (any CPU) or per-CPU deferrable, at random */
static int any_mode(struct worker *w)
{
	static const int mode[] = { 0, DTFD_TIMER_DEFERRABLE,
				    DTFD_TIMER_DEFERRABLE | DTFD_TIMER_PERCPU };

	return mode[below(w, 3)];
}

static void do_settime(struct worker *w, int fd)
{
	int flags = any_mode(w);
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

/*
 * A fresh timer in slot @i, from DTFD_IOC_CREATE on the control
 * descriptor (MONOTONIC, or one of the three clocks); the old fd closed
 * while others may use it.
 */
static void reopen(struct worker *w, int i)
{
	static const clockid_t clocks[] = {
		CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME,
	};
	struct dtfd_create c = {
		.clockid = below(w, 2) ? clocks[below(w, 3)] : CLOCK_MONOTONIC,
		.flags = O_CLOEXEC | (below(w, 4) ? O_NONBLOCK : 0),
	};
	struct epoll_event ev = { .events = EPOLLIN };
	int fd = ioctl(ctl_fd, DTFD_IOC_CREATE, &c);
	int old;

	if (fd < 0) {
		st_fail("create: %s", strerror(errno));
		return;
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
		unsigned long cmd = sizeof(time_t) == 8 ? DTFD_IOC_SETTIME64 :
							  DTFD_IOC_SETTIME32;
		struct dtfd_settime a = {
			.flags = 0, .new_value = (uintptr_t)&its,
		};
		uint64_t ticks;
		struct iovec iov = { &ticks, sizeof(ticks) };
		struct timespec ts = { 0, 200000 };

		for (i = 0; i < 40; i++) {
			int fd = snap[i % NSLOTS];

			a.flags = i & 1 ? DTFD_TIMER_DEFERRABLE : 0;
			ioctl(fd, cmd, &a);
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

/* this thread's guard: a signal that ends its blocking calls */
static void guard_init(struct worker *w)
{
	struct sigevent sev;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGUSR1;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	w->have_guard = !timer_create(CLOCK_MONOTONIC, &sev, &w->guard);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	guard_init(w);

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

/* clock steps begun and ended: an access after an end must see one */
static unsigned long steps_begun, steps_done;

/* Steps of CLOCK_REALTIME, +-100 us, every few milliseconds. */
static void *clock_main(void *arg)
{
	struct worker *w = arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		long long d = (long long)below(w, 200001) - 100000;

		if (!d)
			d = 1;	/* a step that moves the offset */
		__atomic_add_fetch(&steps_begun, 1, __ATOMIC_SEQ_CST);
		if (h_clock_step(d))
			st_fail("clock step: %s", strerror(errno));
		__atomic_add_fetch(&steps_done, 1, __ATOMIC_SEQ_CST);
		w->n[C_CLOCK]++;
		h_sleep_ns(MS(2) + (long long)below(w, MS(20)));
	}
	return NULL;
}

/* ---- oracles: timers whose every access is checked ---------------------- */

/*
 * The workers close and reopen the slots' numbers on purpose, and any
 * file another thread opens meanwhile takes the lowest free number: a
 * worker then polls a sysfs file (POLLERR) or reads /proc text.  The
 * oracle, cancel and hotplug threads open files during the storm, so
 * they do it in a copy of the fd table of their own; the timers and
 * epoll sets they share were opened before and are never closed early.
 */
static void private_fds(void)
{
	if (unshare(CLONE_FILES))
		st_fail("unshare(CLONE_FILES): %s", strerror(errno));
}

#define NORACLES	3

enum { V_EARLY, V_ZERO, V_COUNT, V_CANCEL, V_SPURIOUS, V_N };

static const char *const vname[V_N] = {
	"delivered before the deadline", "read of 0", "expirations != read + pending",
	"no ECANCELED after a clock step", "ECANCELED without a clock step",
};

static unsigned long long violations[V_N];
static unsigned long long oracle_checks, oracle_epochs, hotplugs;

static void __attribute__((format(printf, 2, 3))) violate(int v, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	__atomic_add_fetch(&violations[v], 1, __ATOMIC_RELAXED);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	st_fail("%s: %s", vname[v], msg);
}

struct oracle {
	int fd, ep[2];
	clockid_t clock;
	int flags;
	long long t0, value, period, max_defer;
	uint64_t read;		/* expirations read this epoch */
	int halt;		/* the epoch is over */
	pthread_barrier_t bar;
	struct worker w[2];
	char what[96];
};

static struct oracle oracles[NORACLES];

/* the oracle's expiries due by @t at most (t0 was read before settime) */
static uint64_t due_by(const struct oracle *o, long long t)
{
	long long first = o->t0 + o->value;

	return t < first ? 0 : (uint64_t)((t - first) / o->period) + 1;
}

static void oracle_got(struct oracle *o, uint64_t ticks, const char *how)
{
	uint64_t total = __atomic_add_fetch(&o->read, ticks, __ATOMIC_SEQ_CST);
	long long t = h_now(o->clock);

	__atomic_add_fetch(&oracle_checks, 1, __ATOMIC_RELAXED);
	if (total > due_by(o, t))
		violate(V_EARLY, "%s, %s: %llu expirations read at +%lld us, %llu due",
			o->what, how, (unsigned long long)total,
			(t - o->t0) / 1000, (unsigned long long)due_by(o, t));
}

/* readable at @t: one more expiry than was read before @before is due */
static void oracle_ready(struct oracle *o, uint64_t before, const char *how)
{
	long long t = h_now(o->clock);

	__atomic_add_fetch(&oracle_checks, 1, __ATOMIC_RELAXED);
	if (before + 1 > due_by(o, t))
		violate(V_EARLY, "%s, %s: readable at +%lld us with %llu read, %llu due",
			o->what, how, (t - o->t0) / 1000,
			(unsigned long long)before, (unsigned long long)due_by(o, t));
}

static void oracle_op(struct oracle *o, struct worker *w, int side)
{
	unsigned int x = (unsigned int)below(w, 100);
	uint64_t ticks = 0, before;
	struct iovec iov = { &ticks, sizeof(ticks) };
	long r;

	if (x < 55) {
		/* non-blocking, or blocking until the guard's signal */
		int block = x >= 40;
		const char *how = block ? "blocking read" : "read";

		if (block)
			guard(w, MS(2) + (long long)below(w, MS(10)));
		r = syscall(SYS_preadv2, o->fd, &iov, 1, -1L, -1L,
			    block ? 0 : RWF_NOWAIT);
		if (block)
			guard(w, 0);
		if (r == 8)
			oracle_got(o, ticks, how);
		else if (r == 0)
			violate(V_ZERO, "%s: a %s returned 0", o->what, how);
		else if (errno != (block ? EINTR : EAGAIN))
			st_fail("%s: %s: %s", o->what, how, strerror(errno));
	} else if (x < 75) {
		struct pollfd p = { .fd = o->fd, .events = POLLIN };

		before = __atomic_load_n(&o->read, __ATOMIC_SEQ_CST);
		r = poll(&p, 1, (int)below(w, 6));
		if (r == 1)
			oracle_ready(o, before, "poll");
	} else if (x < 90) {
		struct epoll_event ev;

		before = __atomic_load_n(&o->read, __ATOMIC_SEQ_CST);
		r = epoll_wait(o->ep[side], &ev, 1, (int)below(w, 6));
		if (r == 1)
			oracle_ready(o, before, "epoll event");
	} else {
		struct itimerspec cur;

		if (dtimerfd_gettime(o->fd, &cur))
			st_fail("%s: gettime: %s", o->what, strerror(errno));
	}
}

/* expirations and pending ticks under one lock of the module's */
static void oracle_counts(int fd, unsigned long long *exp,
			  unsigned long long *pending)
{
	static const char *const keys[] = { "dtimerfd-expirations", "ticks" };
	unsigned long long v[2];

	/* this thread's table: /proc/self is the leader's */
	h_fdinfo_vals(fd, 1, 2, keys, v, 0);
	*exp = v[0];
	*pending = v[1];
}

/*
 * The workers reuse fd numbers under each other's feet on purpose; the
 * oracles' timers must be theirs alone.  So they live above every number
 * a worker can see, opened before the workers start, never closed early.
 */
#define ORACLE_FD0	600

static int oracle_fds = ORACLE_FD0;

static int high_fd(int fd)
{
	int hi = fcntl(fd, F_DUPFD_CLOEXEC, oracle_fds++);

	if (hi < 0)
		st_fail("oracle: dup: %s", strerror(errno));
	close(fd);
	return hi;
}

static void oracle_open(struct oracle *o)
{
	int i;

	o->fd = dtimerfd_create(o->clock, DTFD_CLOEXEC);
	if (o->fd < 0) {
		st_fail("oracle: create: %s", strerror(errno));
		return;
	}
	o->fd = high_fd(o->fd);
	for (i = 0; i < 2; i++) {
		struct epoll_event ev = { .events = EPOLLIN };

		o->ep[i] = high_fd(epoll_create1(EPOLL_CLOEXEC));
		epoll_ctl(o->ep[i], EPOLL_CTL_ADD, o->fd, &ev);
	}
}

static void oracle_close(struct oracle *o)
{
	close(o->ep[0]);
	close(o->ep[1]);
	close(o->fd);
}

/* A new epoch's setting: strict, deferrable or bounded, periodic. */
static void oracle_arm(struct oracle *o, struct worker *w)
{
	static const long long bound[] = { 1, 20000, MS(1) };
	static const char *const name[] = { "strict", "deferrable",
					    "bounded deferrable", "per-CPU deferrable" };
	unsigned int m = (unsigned int)below(w, 4);
	struct itimerspec its;

	o->value = 100000 + (long long)below(w, MS(3));
	o->period = 100000 + (long long)below(w, MS(3));
	o->max_defer = m == 2 ? bound[below(w, 3)] : 0;
	o->flags = m ? DTFD_TIMER_DEFERRABLE : 0;
	if (m == 3)
		o->flags |= DTFD_TIMER_PERCPU;
	snprintf(o->what, sizeof(o->what), "%s %s period %lld us max_defer %lld ns",
		 o->clock == CLOCK_BOOTTIME ? "BOOTTIME" : "MONOTONIC",
		 name[m], o->period / 1000, o->max_defer);
	if (dtimerfd_set_tolerance(o->fd, 0, o->max_defer))
		st_fail("%s: tolerance: %s", o->what, strerror(errno));
	its = h_its(o->value, o->period);
	o->read = 0;
	o->t0 = h_now(o->clock);
	if (dtimerfd_settime(o->fd, o->flags, &its, NULL))
		st_fail("%s: settime: %s", o->what, strerror(errno));
}

/* side 0: arms, runs and checks the epochs; side 1 reads along */
static void *oracle_main(void *arg)
{
	struct oracle *o = arg;
	struct worker *w = &o->w[0];
	unsigned long long e0, p0, e1, p1;
	int epoch;

	private_fds();
	guard_init(w);
	for (epoch = 0;; epoch++) {
		long long end;

		oracle_arm(o, w);
		oracle_counts(o->fd, &e0, &p0);
		__atomic_store_n(&o->halt, __atomic_load_n(&stop, __ATOMIC_RELAXED) ? 2 : 0,
				 __ATOMIC_SEQ_CST);
		pthread_barrier_wait(&o->bar);
		if (o->halt == 2)
			break;
		end = h_now(CLOCK_MONOTONIC) + MS(50) + (long long)below(w, MS(250));
		while (h_now(CLOCK_MONOTONIC) < end)
			oracle_op(o, w, 0);
		__atomic_store_n(&o->halt, 1, __ATOMIC_SEQ_CST);
		pthread_barrier_wait(&o->bar);
		oracle_counts(o->fd, &e1, &p1);
		__atomic_add_fetch(&oracle_epochs, 1, __ATOMIC_RELAXED);
		if (e1 - e0 != o->read + p1 - p0)
			violate(V_COUNT, "%s: expirations %llu != read %llu + pending %llu (epoch start: %llu, %llu pending)",
				o->what, e1 - e0, (unsigned long long)o->read,
				p1, e0, p0);
	}
	if (w->have_guard)
		timer_delete(w->guard);
	return NULL;
}

static void *oracle_side(void *arg)
{
	struct oracle *o = arg;

	private_fds();
	guard_init(&o->w[1]);
	for (;;) {
		pthread_barrier_wait(&o->bar);
		if (__atomic_load_n(&o->halt, __ATOMIC_SEQ_CST) == 2) {
			if (o->w[1].have_guard)
				timer_delete(o->w[1].guard);
			return NULL;
		}
		while (!__atomic_load_n(&o->halt, __ATOMIC_SEQ_CST))
			oracle_op(o, &o->w[1], 1);
		pthread_barrier_wait(&o->bar);
	}
}

/*
 * One thread on an absolute CLOCK_REALTIME CANCEL_ON_SET timer an hour
 * ahead (strict or deferrable): after a step that began once the timer
 * was armed (or last reported ECANCELED) has ended, the first read or
 * settime is ECANCELED and a poll or epoll_wait of 0 readable; with no
 * step begun since, nothing is cancelled.
 */
static int cancel_fd, cancel_ep;

static void cancel_open(void)
{
	struct epoll_event ev = { .events = EPOLLIN };

	cancel_fd = high_fd(dtimerfd_create(CLOCK_REALTIME,
					    DTFD_NONBLOCK | DTFD_CLOEXEC));
	cancel_ep = high_fd(epoll_create1(EPOLL_CLOEXEC));
	if (epoll_ctl(cancel_ep, EPOLL_CTL_ADD, cancel_fd, &ev))
		st_fail("cancel oracle: %s", strerror(errno));
}

static void *cancel_main(void *arg)
{
	struct worker *w = arg;
	/*
	 * armed: the first step that must cancel, one begun after the timer
	 * was armed (or last reported ECANCELED); quiet: the steps ended
	 * before that access began.  A step in flight during the access may
	 * cancel it or not; with no step begun beyond @quiet, nothing may.
	 */
	unsigned long armed = 0, quiet = 0;
	int fd = cancel_fd, ep = cancel_ep, flags = 0;
	struct epoll_event ev;

	private_fds();
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		unsigned int x = (unsigned int)below(w, 100);
		unsigned long done = __atomic_load_n(&steps_done, __ATOMIC_SEQ_CST);
		unsigned long pre = done;
		int must = armed && done >= armed, got;
		uint64_t ticks;
		long r;

		if (!armed || x < 15) {
			struct itimerspec its;

			flags = DTFD_TIMER_ABSTIME | DTFD_TIMER_CANCEL_ON_SET |
				any_mode(w);
			its = h_its(h_now(CLOCK_REALTIME) + SEC(3600), 0);
			r = dtimerfd_settime(fd, flags, &its, NULL);
			got = r < 0 && errno == ECANCELED;
			if (r < 0 && !got)
				st_fail("cancel oracle: settime: %s", strerror(errno));
			if (armed && must && !got)
				violate(V_CANCEL, "settime succeeded after %lu steps ended since arming",
					done - armed + 1);
		} else if (x < 70) {
			r = h_read(fd, &ticks);
			got = r < 0 && errno == ECANCELED;
			if (must && !got)
				violate(V_CANCEL, "read: %ld (%s), %lu steps ended since arming",
					r, r < 0 ? strerror(errno) : "an expiry",
					done - armed + 1);
		} else {
			struct pollfd p = { .fd = fd, .events = POLLIN };
			/*
			 * epoll_wait() polls only what was woken, and that
			 * wake-up comes from the clock work, moments after
			 * the step (docs/semantics.md: Differences from
			 * timerfd)
			 */
			int ready = x < 85 ? poll(&p, 1, 0) :
				    epoll_wait(ep, &ev, 1, must ? 1000 : 0);

			if (must && ready != 1)
				violate(V_CANCEL, "%s not readable, %lu steps ended since arming",
					x < 85 ? "poll" : "epoll_wait", done - armed + 1);
			got = 0;	/* readiness does not report it */
			if (!must && ready == 1 &&
			    __atomic_load_n(&steps_begun, __ATOMIC_SEQ_CST) <= quiet)
				violate(V_SPURIOUS, "%s readable with no step begun",
					x < 85 ? "poll" : "epoll_wait");
		}
		__atomic_add_fetch(&oracle_checks, 1, __ATOMIC_RELAXED);
		if (got && __atomic_load_n(&steps_begun, __ATOMIC_SEQ_CST) <= quiet)
			violate(V_SPURIOUS, "ECANCELED with no step begun since arming");
		/* the next step to count is one begun from now on */
		if (got || !armed || x < 15) {
			armed = __atomic_load_n(&steps_begun, __ATOMIC_SEQ_CST) + 1;
			quiet = pre;
		}
		h_sleep_ns((long long)below(w, 2000000));
	}
	close(ep);
	close(fd);
	return NULL;
}

/* CPU 1 off and on again, with timers queued on it. */
static int cpu1_online(int on)
{
	return h_write_file("/sys/devices/system/cpu/cpu1/online", on ? "1" : "0");
}

static void *hotplug_main(void *arg)
{
	struct worker *w = arg;

	private_fds();
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		h_sleep_ns(MS(100) + (long long)below(w, MS(400)));
		if (cpu1_online(0)) {
			st_fail("cpu1 offline: %s", strerror(errno));
			break;
		}
		h_sleep_ns(MS(20) + (long long)below(w, MS(200)));
		/* EBUSY while the kernel is busy: try again */
		while (cpu1_online(1))
			h_sleep_ns(MS(10));
		hotplugs++;
	}
	return NULL;
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
