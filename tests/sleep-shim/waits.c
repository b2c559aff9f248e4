// SPDX-License-Identifier: GPL-2.0
/*
 * tests/sleep-shim: poll, ppoll, select, pselect, the epoll waits and the
 * sleeps, each the program's and libc's side by side, and waits in a
 * signal handler that interrupted a wait.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

void t_poll(const struct calls *c)
{
	int p[2], r, e;
	struct pollfd pf;
	long long t0;

	if (pipe(p))
		abort();
	pf = (struct pollfd){ .fd = p[0], .events = POLLIN, .revents = 77 };
	t0 = now(CLOCK_MONOTONIC);
	r = c->poll(&pf, 1, 60);
	ok(r == 0 && pf.revents == 0, "%s: poll times out: %d revents %d",
	   c->name, r, pf.revents);
	timed(c, "poll 60 ms", t0, MS(60));

	t0 = now(CLOCK_MONOTONIC);
	r = c->poll(NULL, 0, 40);
	ok(r == 0, "%s: poll(NULL, 0, 40): %d", c->name, r);
	timed(c, "poll(NULL, 0, 40)", t0, MS(40));

	if (write(p[1], "x", 1) != 1)
		abort();
	r = c->poll(&pf, 1, 5000);
	ok(r == 1 && pf.revents == POLLIN, "%s: poll ready: %d revents %#x",
	   c->name, r, pf.revents);

	close(p[1]);
	close(p[0]);
	pf.revents = 0;
	r = c->poll(&pf, 1, 50);
	ok(r == 1 && pf.revents == POLLNVAL, "%s: poll closed fd: %d %#x",
	   c->name, r, pf.revents);

	errno = 0;
	r = c->poll((struct pollfd *)8, 1, 50);
	e = errno;
	ok(r == -1 && e == EFAULT, "%s: poll bad array: %d %s", c->name, r,
	   strerror(e));

	alarm_in(MS(50));
	t0 = now(CLOCK_MONOTONIC);
	r = c->poll(NULL, 0, 3000);
	e = errno;
	ok(r == -1 && e == EINTR && handled == 1 &&
	   now(CLOCK_MONOTONIC) - t0 < MS(2000),
	   "%s: poll interrupted (SA_RESTART): %d %s", c->name, r, strerror(e));

	r = c->poll(NULL, 0, 0);
	ok(r == 0, "%s: poll timeout 0: %d", c->name, r);
}

void t_ppoll(const struct calls *c)
{
	struct timespec ts = { 0, MS(50) };
	sigset_t block, none, old;
	long long t0;
	int r, e;

	usr1_pending(&block, &none, &old);
	t0 = now(CLOCK_MONOTONIC);
	r = c->ppoll(NULL, 0, &ts, &block);	/* still blocked: times out */
	ok(r == 0 && handled == 0, "%s: ppoll with the signal blocked: %d",
	   c->name, r);
	timed(c, "ppoll 50 ms", t0, MS(50));
	r = c->ppoll(NULL, 0, &ts, &none);	/* unblocked: EINTR at once */
	e = errno;
	ok(r == -1 && e == EINTR && handled == 1,
	   "%s: ppoll's mask lets the signal in: %d %s", c->name, r,
	   strerror(e));
	sigprocmask(SIG_SETMASK, &old, NULL);

	ts.tv_nsec = 1000000000L;
	r = c->ppoll(NULL, 0, &ts, NULL);
	e = errno;
	ok(r == -1 && e == EINVAL, "%s: ppoll bad timeout: %d %s", c->name,
	   r, strerror(e));
}

void t_select(const struct calls *c)
{
	struct timeval tv = { 0, 60000 };
	int p[2], r, e;
	long long t0, left;
	fd_set rd;

	if (pipe(p))
		abort();
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	t0 = now(CLOCK_MONOTONIC);
	r = c->select(p[0] + 1, &rd, NULL, NULL, &tv);
	ok(r == 0 && !FD_ISSET(p[0], &rd) && !tv.tv_sec && !tv.tv_usec,
	   "%s: select times out, set cleared, time left 0: %d %ld.%06ld",
	   c->name, r, (long)tv.tv_sec, (long)tv.tv_usec);
	timed(c, "select 60 ms", t0, MS(60));

	if (write(p[1], "x", 1) != 1)
		abort();
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	tv = (struct timeval){ 5, 0 };
	r = c->select(p[0] + 1, &rd, NULL, NULL, &tv);
	ok(r == 1 && FD_ISSET(p[0], &rd) && tv.tv_sec >= 4,
	   "%s: select ready: %d, left %ld s", c->name, r, (long)tv.tv_sec);

	e = dup(p[0]);				/* a number not open */
	close(e);
	FD_ZERO(&rd);
	FD_SET(e, &rd);
	tv = (struct timeval){ 0, 50000 };
	r = c->select(e + 1, &rd, NULL, NULL, &tv);
	e = errno;
	ok(r == -1 && e == EBADF, "%s: select closed fd: %d %s", c->name, r,
	   strerror(e));

	tv = (struct timeval){ 0, 50000 };
	r = c->select(-1, NULL, NULL, NULL, &tv);
	e = errno;
	ok(r == -1 && e == EINVAL, "%s: select nfds -1: %d %s", c->name, r,
	   strerror(e));

	alarm_in(MS(100));
	tv = (struct timeval){ 2, 0 };
	t0 = now(CLOCK_MONOTONIC);
	r = c->select(0, NULL, NULL, NULL, &tv);
	e = errno;
	left = tv.tv_sec * 1000000000LL + tv.tv_usec * 1000LL;
	ok(r == -1 && e == EINTR && left_ok(left, MS(2000), MS(100), t0),
	   "%s: select interrupted, time left %.3f s: %d %s", c->name,
	   left / 1e9, r, strerror(e));

	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	r = c->pselect(p[0] + 1, &rd, NULL, NULL,
		       &(struct timespec){ 1, 0 }, NULL);
	ok(r == 1 && FD_ISSET(p[0], &rd), "%s: pselect ready: %d", c->name, r);
	t0 = now(CLOCK_MONOTONIC);
	r = c->pselect(0, NULL, NULL, NULL, &(struct timespec){ 0, MS(40) },
		       NULL);
	ok(r == 0, "%s: pselect times out: %d", c->name, r);
	timed(c, "pselect 40 ms", t0, MS(40));
	close(p[0]);
	close(p[1]);
}

void t_epoll(const struct calls *c)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0x1234 },
			   out[4];
	int ep = epoll_create1(EPOLL_CLOEXEC), p[2], r, e;
	long long t0;
	sigset_t block, none, old;

	if (ep < 0 || pipe(p) || epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev))
		abort();
	t0 = now(CLOCK_MONOTONIC);
	r = c->epoll_wait(ep, out, 4, 60);
	ok(r == 0, "%s: epoll_wait times out: %d", c->name, r);
	timed(c, "epoll_wait 60 ms", t0, MS(60));

	t0 = now(CLOCK_MONOTONIC);
	r = c->epoll_pwait2(ep, out, 4, &(struct timespec){ 0, MS(45) }, NULL);
	ok(r == 0, "%s: epoll_pwait2 times out: %d", c->name, r);
	timed(c, "epoll_pwait2 45 ms", t0, MS(45));

	if (write(p[1], "x", 1) != 1)
		abort();
	memset(out, 0, sizeof(out));
	r = c->epoll_wait(ep, out, 4, 5000);
	ok(r == 1 && out[0].data.u64 == 0x1234 && out[0].events == EPOLLIN,
	   "%s: epoll_wait ready: %d data %#llx", c->name, r,
	   (unsigned long long)out[0].data.u64);
	if (read(p[0], &e, 1) != 1)
		abort();

	r = c->epoll_wait(p[0], out, 4, 50);
	e = errno;
	ok(r == -1 && e == EINVAL, "%s: epoll_wait on a pipe: %d %s", c->name,
	   r, strerror(e));
	r = c->epoll_wait(ep, out, 0, 50);
	e = errno;
	ok(r == -1 && e == EINVAL, "%s: epoll_wait maxevents 0: %d %s",
	   c->name, r, strerror(e));
	r = c->epoll_wait(p[1] + 10, out, 4, 50);
	e = errno;
	ok(r == -1 && e == EBADF, "%s: epoll_wait closed fd: %d %s", c->name,
	   r, strerror(e));

	alarm_in(MS(50));
	r = c->epoll_wait(ep, out, 4, 3000);
	e = errno;
	ok(r == -1 && e == EINTR && handled == 1,
	   "%s: epoll_wait interrupted (SA_RESTART): %d %s", c->name, r,
	   strerror(e));

	usr1_pending(&block, &none, &old);
	r = c->epoll_pwait(ep, out, 4, 40, &block);
	ok(r == 0 && handled == 0, "%s: epoll_pwait, signal blocked: %d",
	   c->name, r);
	r = c->epoll_pwait(ep, out, 4, 3000, &none);
	e = errno;
	ok(r == -1 && e == EINTR && handled == 1,
	   "%s: epoll_pwait's mask lets the signal in: %d %s", c->name, r,
	   strerror(e));
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(p[0]);
	close(p[1]);
	close(ep);
}

void t_sleeps(const struct calls *c)
{
	struct timespec rem = { 9, 9 };
	long long t0, deadline, left;
	int r, e;
	unsigned int u;

	t0 = now(CLOCK_MONOTONIC);
	r = c->nanosleep(&(struct timespec){ 0, MS(50) }, NULL);
	ok(r == 0, "%s: nanosleep: %d", c->name, r);
	timed(c, "nanosleep 50 ms", t0, MS(50));

	r = c->nanosleep(&(struct timespec){ 0, 1000000000L }, NULL);
	e = errno;
	ok(r == -1 && e == EINVAL, "%s: nanosleep bad nsec: %d %s", c->name, r,
	   strerror(e));
	r = c->nanosleep(&(struct timespec){ -1, 0 }, NULL);
	e = errno;
	ok(r == -1 && e == EINVAL, "%s: nanosleep negative: %d %s", c->name,
	   r, strerror(e));
	r = c->nanosleep((struct timespec *)8, NULL);
	e = errno;
	ok(r == -1 && e == EFAULT, "%s: nanosleep bad pointer: %d %s",
	   c->name, r, strerror(e));

	alarm_in(MS(100));
	t0 = now(CLOCK_MONOTONIC);
	r = c->nanosleep(&(struct timespec){ 2, 0 }, &rem);
	e = errno;
	left = rem.tv_sec * 1000000000LL + rem.tv_nsec;
	ok(r == -1 && e == EINTR && handled == 1 &&
	   left_ok(left, MS(2000), MS(100), t0),
	   "%s: nanosleep interrupted, %.3f s left: %d %s", c->name,
	   left / 1e9, r, strerror(e));

	deadline = now(CLOCK_REALTIME) + MS(50);
	r = c->clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME,
			       &(struct timespec){ deadline / 1000000000LL,
						   deadline % 1000000000LL },
			       NULL);
	ok(r == 0 && now(CLOCK_REALTIME) >= deadline,
	   "%s: clock_nanosleep realtime absolute, not early: %d", c->name, r);
	t0 = now(CLOCK_BOOTTIME);
	r = c->clock_nanosleep(CLOCK_BOOTTIME, 0,
			       &(struct timespec){ 0, MS(40) }, NULL);
	ok(r == 0 && now(CLOCK_BOOTTIME) - t0 >= MS(40),
	   "%s: clock_nanosleep boottime 40 ms: %d", c->name, r);
	r = c->clock_nanosleep(12345, 0, &(struct timespec){ 0, 1000 }, NULL);
	ok(r == EINVAL, "%s: clock_nanosleep bad clock: %s", c->name,
	   strerror(r));
	r = c->clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0,
			       &(struct timespec){ 0, 1000 }, NULL);
	ok(r == EINVAL, "%s: clock_nanosleep thread CPU clock: %s", c->name,
	   strerror(r));
	alarm_in(MS(50));
	r = c->clock_nanosleep(CLOCK_MONOTONIC, 0,
			       &(struct timespec){ 3, 0 }, &rem);
	ok(r == EINTR && rem.tv_sec >= 2, "%s: clock_nanosleep EINTR, %ld s left",
	   c->name, (long)rem.tv_sec);

	t0 = now(CLOCK_MONOTONIC);
	r = c->usleep(30000);
	ok(r == 0, "%s: usleep: %d", c->name, r);
	timed(c, "usleep 30 ms", t0, MS(30));

	alarm_in(MS(300));
	errno = 1234;
	u = c->sleep(3);
	ok(u == 2 && handled == 1, "%s: sleep(3) interrupted at 0.3 s: %u",
	   c->name, u);
	errno = 1234;
	u = c->sleep(0);
	ok(u == 0 && errno == 1234, "%s: sleep(0): %u, errno kept", c->name,
	   u);
}

/*
 * A signal handler that sleeps while its thread sleeps: the interrupted
 * sleep ends EINTR or after its whole time, never early and never stuck.
 * The handler's own wait must not share the thread's timer with the wait
 * it interrupted: when it did, a handler's usleep() made the interrupted
 * sleep return 0 early, and a handler's poll() ended by a descriptor
 * disarmed the interrupted sleep's timer (a hang, until another signal).
 * The signal comes at offsets swept across the first few hundred
 * microseconds, where the shim arms its timer; a watchdog signal 2 s
 * later ends a stuck sleep, for the check to see.
 */
int handler_tfd = -1;

void on_signal_usleep(int sig)
{
	int e = errno;

	(void)sig;
	usleep(2000);
	errno = e;
}

void on_signal_poll(int sig)
{
	struct itimerspec its = { { 0, 0 }, { 0, 1000000 } };
	struct pollfd pf = { .fd = handler_tfd, .events = POLLIN };
	uint64_t ticks;
	int e = errno;

	(void)sig;
	timerfd_settime(handler_tfd, 0, &its, NULL);
	if (poll(&pf, 1, 50) == 1 && read(handler_tfd, &ticks, 8) != 8)
		abort();
	errno = e;
}

void t_handler_waits(const struct calls *c, void (*handler)(int),
		     const char *what)
{
	struct sigaction sa = { .sa_handler = handler }, wd = {
		.sa_handler = on_signal };
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL,
				.sigev_signo = SIGUSR2 };
	long long want = MS(8), t0, el, worst = 0;
	int i, r, e, early = 0, stuck = 0, eintr = 0;
	timer_t watchdog;

	if (handler_tfd < 0)
		handler_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	sigaction(SIGALRM, &sa, NULL);
	sigaction(SIGUSR2, &wd, NULL);
	if (handler_tfd < 0 || timer_create(CLOCK_MONOTONIC, &sev, &watchdog))
		abort();
	for (i = 0; i < 120; i++) {
		struct itimerval it = { { 0, 0 }, { 0, 1 + i * 3 } };
		struct itimerspec wdog = { { 0, 0 }, { 2, 0 } };

		timer_settime(watchdog, 0, &wdog, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
		t0 = now(CLOCK_MONOTONIC);
		r = c->nanosleep(&(struct timespec){ 0, want }, NULL);
		e = errno;
		el = now(CLOCK_MONOTONIC) - t0;
		timer_settime(watchdog, 0, &(struct itimerspec){ 0 }, NULL);
		if (r == 0 && el < want)
			early++;
		else if (r == -1 && e == EINTR)
			eintr++;
		if (el >= MS(1000))	/* the watchdog came at 2 s */
			stuck++;
		if (el > worst)
			worst = el;
	}
	timer_delete(watchdog);
	signal(SIGALRM, SIG_DFL);
	ok(!early && !stuck,
	   "%s: a handler that %s while nanosleep(8 ms) sleeps: %d early, %d stuck (longest %.1f ms), %d EINTR of 120",
	   c->name, what, early, stuck, worst / 1e6, eintr);
}

