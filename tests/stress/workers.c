// SPDX-License-Identifier: GPL-2.0
/*
 * tests/stress: the workers, each a storm of random calls on the shared
 * table of timers, and the thread that steps CLOCK_REALTIME under them.
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

/* the next call, drawn by the calls' weights (per mille) */
static int pick_call(struct worker *w)
{
	unsigned int x = (unsigned int)below(w, 1000);
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
	return c;
}

/* call @c on @fd, or on the table or slot it works on */
static void do_call(struct worker *w, int c, int fd)
{
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

void *worker_main(void *arg)
{
	struct worker *w = arg;

	guard_init(w);

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		int c = pick_call(w);
		int fd = slot_fd(w);

		w->n[c]++;
		do_call(w, c, fd);
	}
	if (w->have_guard)
		timer_delete(w->guard);
	return NULL;
}

/* clock steps begun and ended: an access after an end must see one */
unsigned long steps_begun, steps_done;

/* Steps of CLOCK_REALTIME, +-100 us, every few milliseconds. */
void *clock_main(void *arg)
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

