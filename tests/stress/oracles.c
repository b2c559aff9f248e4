// SPDX-License-Identifier: GPL-2.0
/*
 * tests/stress: the oracle timers, whose every access is checked, the
 * CANCEL_ON_SET oracle, and CPU 1's hotplug.
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

#include "../harness.h"
#include "stress.h"

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

static const char *const vname[V_N] = {
	"delivered before the deadline", "read of 0", "expirations != read + pending",
	"no ECANCELED after a clock step", "ECANCELED without a clock step",
};

unsigned long long violations[V_N];
unsigned long long oracle_checks, oracle_epochs, hotplugs;

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

struct oracle oracles[NORACLES];

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

void oracle_open(struct oracle *o)
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

void oracle_close(struct oracle *o)
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
void *oracle_main(void *arg)
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

void *oracle_side(void *arg)
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
int cancel_fd, cancel_ep;

void cancel_open(void)
{
	struct epoll_event ev = { .events = EPOLLIN };

	cancel_fd = high_fd(dtimerfd_create(CLOCK_REALTIME,
					    DTFD_NONBLOCK | DTFD_CLOEXEC));
	cancel_ep = high_fd(epoll_create1(EPOLL_CLOEXEC));
	if (epoll_ctl(cancel_ep, EPOLL_CTL_ADD, cancel_fd, &ev))
		st_fail("cancel oracle: %s", strerror(errno));
}

void *cancel_main(void *arg)
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
void *hotplug_main(void *arg)
{
	struct worker *w = arg;

	private_fds();
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		h_sleep_ns(MS(100) + (long long)below(w, MS(400)));
		if (h_cpu_set_online(1, 0)) {
			st_fail("cpu1 offline: %s", strerror(errno));
			break;
		}
		h_sleep_ns(MS(20) + (long long)below(w, MS(200)));
		/* EBUSY while the kernel is busy: try again */
		while (h_cpu_set_online(1, 1))
			h_sleep_ns(MS(10));
		hotplugs++;
	}
	return NULL;
}

