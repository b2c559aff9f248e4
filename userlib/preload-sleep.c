// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The shim's sleeps and timeouts (dtimerfd-preload(8)): nanosleep,
 * clock_nanosleep, usleep, sleep, poll, ppoll, select, pselect,
 * epoll_wait, epoll_pwait and epoll_pwait2 wait on a deferrable dtimerfd
 * of the calling thread, armed with the policy's bound, instead of the
 * kernel's exact timeout.
 *
 * Each keeps its call's contract: the same return values and errors (the
 * real call, with a zero timeout, runs first where it can: it checks the
 * arguments and returns what is ready at once), the caller's descriptors
 * and events only, EINTR with the remaining time where the call reports
 * it, the p* variants' signal masks, and zero or infinite timeouts passed
 * through untouched.  Whenever the shim cannot wait its way (no module,
 * too many descriptors, a descriptor limit), the real call waits exactly.
 *
 * The timer a wait relies on can be lost (the program closed or dup2()ed
 * over its number), stolen (the number now holds a file of the program's)
 * or disarmed, and none of that may make a wait hang or end early:
 *  - the inner wait has a timeout of its own, the end of the window
 *    (deadline + bound): a timer that never fires costs the bound;
 *  - whatever ends the inner wait, the deadline's clock decides: before
 *    the deadline, the real call waits out the rest, exactly;
 *  - a thread's timer serves one wait at a time: a signal handler that
 *    sleeps while its thread sleeps gets the real call;
 *  - the shim closes only a number it has proved is still its own timer,
 *    and only in a forked child; a thread's timers go back to the
 *    process's pool when it exits, for the next thread.
 *
 * The timers (preload-wait.c): made on first use, one per clock and
 * thread, close-on-exec, in the top quarter of the numbers the program
 * may open, at most 32 in a process (beyond, the real call); none under a
 * small RLIMIT_NOFILE (the program needs every number).  Without the device (no module yet, a
 * sandbox) or the room, the shim tries again ten seconds later and
 * meanwhile makes no system call of its own.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "dtimerfd.h"
#include "internal.h"
#include "preload.h"

/* Descriptors a poll may have for the shim to add its own. */
#define DTFD_POLL_MAX	256

typedef int (*poll_fn)(struct pollfd *, nfds_t, int);
typedef int (*ppoll_fn)(struct pollfd *, nfds_t, const struct timespec *,
			const sigset_t *);
typedef int (*pselect_fn)(int, fd_set *, fd_set *, fd_set *,
			  const struct timespec *, const sigset_t *);
typedef int (*select_fn)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
typedef int (*epoll_pwait_fn)(int, struct epoll_event *, int, int,
			      const sigset_t *);
typedef int (*epoll_pwait2_fn)(int, struct epoll_event *, int,
			       const struct timespec *, const sigset_t *);
typedef int (*clock_nanosleep_fn)(clockid_t, int, const struct timespec *,
				  struct timespec *);

static struct {
	poll_fn poll;
	ppoll_fn ppoll;
	select_fn select;
	pselect_fn pselect;
	epoll_pwait_fn epoll_pwait;
	epoll_pwait2_fn epoll_pwait2;
	clock_nanosleep_fn clock_nanosleep;
} real;

static int sys_epoll_pwait2(int epfd, struct epoll_event *ev, int max,
			    const struct timespec *ts, const sigset_t *mask)
{
	return (int)syscall(SYS_epoll_pwait2, epfd, ev, max, ts, mask,
			    _NSIG / 8);
}

__attribute__((constructor)) static void sleep_init(void)
{
	real.poll = (poll_fn)dlsym(RTLD_NEXT, "poll");
	real.ppoll = (ppoll_fn)dlsym(RTLD_NEXT, "ppoll");
	real.select = (select_fn)dlsym(RTLD_NEXT, "select");
	real.pselect = (pselect_fn)dlsym(RTLD_NEXT, "pselect");
	real.epoll_pwait = (epoll_pwait_fn)dlsym(RTLD_NEXT, "epoll_pwait");
	real.epoll_pwait2 = (epoll_pwait2_fn)dlsym(RTLD_NEXT, "epoll_pwait2");
	if (!real.epoll_pwait2)		/* glibc before 2.35 */
		real.epoll_pwait2 = sys_epoll_pwait2;
	real.clock_nanosleep = (clock_nanosleep_fn)dlsym(RTLD_NEXT,
							 "clock_nanosleep");
	dtfd_wait_init();
}

/*
 * Whether the policy defers a timeout of @ts (relative, valid, not zero)
 * and with what bound.
 */
static int deferred(const struct timespec *ts, unsigned long long *bound)
{
	return dtfd_policy_bounded() && dtfd_ts_valid(ts) && (ts->tv_sec || ts->tv_nsec) &&
	       dtfd_policy(dtfd_ts_ns(ts), bound);
}

/*
 * ppoll() on the caller's descriptors plus our timer, armed for @ts: the
 * real call first with a zero timeout (errors, and what is ready now).
 * @ms: poll()'s timeout, for the real poll() where the shim steps aside;
 * -1: the caller called ppoll().
 */
static int ppoll_deferred(struct pollfd *fds, nfds_t n,
			  const struct timespec *ts, const sigset_t *mask,
			  int ms)
{
	static const struct timespec zero;
	struct pollfd copy[DTFD_POLL_MAX + 1];
	unsigned long long bound;
	struct timespec win;
	struct deadline d;
	int r, fired, err;
	nfds_t i;

	if (n > DTFD_POLL_MAX || !deferred(ts, &bound))
		goto exact;
	r = real.ppoll(fds, n, &zero, mask);
	if (r)
		return r;
	if (dtfd_wait_begin(&d, W_MONOTONIC,
		       dtfd_add_sat(dtfd_now_ns(CLOCK_MONOTONIC), dtfd_ts_ns(ts)), bound))
		goto exact;
	memcpy(copy, fds, n * sizeof(*fds));
	copy[n] = (struct pollfd){ .fd = d.w->fd, .events = POLLIN };
	win = dtfd_wait_window(&d);
	r = real.ppoll(copy, n + 1, &win, mask);
	err = errno;
	fired = r > 0 && copy[n].revents;
	dtfd_wait_end(&d, fired);
	if (r < 0 && err == EINVAL)	/* one descriptor over the limit */
		goto exact;
	if (r < 0) {
		errno = err;
		return -1;
	}
	for (i = 0; i < n; i++)
		fds[i].revents = copy[i].revents;
	if (r - fired > 0 || dtfd_wait_due(&d))
		return r - fired;
	/* before the deadline with nothing ready: the rest, exactly */
	win = dtfd_wait_left(&d);
	return real.ppoll(fds, n, &win, mask);
exact:
	return ms >= 0 ? real.poll(fds, n, ms) : real.ppoll(fds, n, ts, mask);
}

DTFD_API int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	struct timespec ts = { timeout / 1000, timeout % 1000 * 1000000L };

	if (timeout <= 0 || !dtfd_policy_bounded())
		return real.poll(fds, n, timeout);
	return ppoll_deferred(fds, n, &ts, NULL, timeout);
}

/* The timeout read with a plain load, as the C library's ppoll() does. */
DTFD_API int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		   const sigset_t *mask)
{
	struct timespec t;

	if (!ts || !dtfd_policy_bounded() || !dtfd_user_ok(ts, sizeof(*ts)))
		return real.ppoll(fds, n, ts, mask);
	t = *ts;
	return ppoll_deferred(fds, n, &t, mask, -1);
}

/* The bytes of an fd_set the kernel reads and writes for @nfds. */
#define FDS_BYTES(nfds) \
	(((size_t)(nfds) + 8 * sizeof(long) - 1) / (8 * sizeof(long)) * \
	 sizeof(long))

/* Clear the bits of @set from @nfds on: the kernel looks at none of them. */
static void fds_trim(fd_set *set, int nfds)
{
	int fd;

	for (fd = nfds; fd < (int)(FDS_BYTES(nfds) * 8); fd++)
		FD_CLR(fd, set);
}

/*
 * pselect() with our timer added to the read set; the sets the caller
 * gets back never name it.  *left: the time that was left when it ended.
 * -2: not deferred, the caller makes the real call.
 */
static int pselect_deferred(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
			    const struct timespec *ts, const sigset_t *mask,
			    struct timespec *left)
{
	fd_set set[3], *user[3] = { rd, wr, ex }, *arg[3];
	size_t bytes = FDS_BYTES(nfds);
	unsigned long long bound;
	struct timespec win;
	struct deadline d;
	int i, r, fd, fired, err;

	if (nfds < 0 || nfds > FD_SETSIZE || !deferred(ts, &bound))
		return -2;
	for (i = 0; i < 3; i++) {
		arg[i] = user[i] ? &set[i] : NULL;
		if (!user[i])
			continue;
		if (!dtfd_user_ok(user[i], bytes))
			return -2;
		FD_ZERO(&set[i]);
		memcpy(&set[i], user[i], bytes);
		fds_trim(&set[i], nfds);
	}
	if (dtfd_wait_begin(&d, W_MONOTONIC,
		       dtfd_add_sat(dtfd_now_ns(CLOCK_MONOTONIC), dtfd_ts_ns(ts)), bound))
		return -2;
	fd = d.w->fd;
	if (fd >= FD_SETSIZE) {
		dtfd_wait_end(&d, 0);
		return -2;
	}
	if (!rd) {
		FD_ZERO(&set[0]);
		arg[0] = &set[0];
	}
	FD_SET(fd, &set[0]);
	win = dtfd_wait_window(&d);
	r = real.pselect(fd >= nfds ? fd + 1 : nfds, arg[0], arg[1], arg[2],
			 &win, mask);
	err = errno;
	fired = r > 0 && FD_ISSET(fd, &set[0]);
	dtfd_wait_end(&d, fired);
	if (r >= 0 && r - fired == 0 && !dtfd_wait_due(&d)) {
		/* before the deadline with nothing ready: the rest, exactly */
		win = dtfd_wait_left(&d);
		r = real.pselect(nfds, rd, wr, ex, &win, mask);
		err = errno;
	} else if (r >= 0) {
		FD_CLR(fd, &set[0]);
		for (i = 0; i < 3; i++)
			if (user[i])
				memcpy(user[i], &set[i], bytes);
		r -= fired;
	}
	if (left)
		*left = fired ? dtfd_ns_ts(0) : dtfd_wait_left(&d);
	errno = err;
	return r;
}

/* As the C library's pselect(), which reads the timeout itself. */
DTFD_API int pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
		     const struct timespec *ts, const sigset_t *mask)
{
	struct timespec t;
	int r;

	if (!ts || !dtfd_policy_bounded() || !dtfd_user_ok(ts, sizeof(*ts)))
		return real.pselect(nfds, rd, wr, ex, ts, mask);
	t = *ts;
	r = pselect_deferred(nfds, rd, wr, ex, &t, mask, NULL);
	return r == -2 ? real.pselect(nfds, rd, wr, ex, ts, mask) : r;
}

/* select(2) reports the time left in *tv, as Linux does. */
DTFD_API int select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
		    struct timeval *tv)
{
	struct timespec t, left;
	int r;

	if (!tv || !dtfd_policy_bounded() || !dtfd_user_ok(tv, sizeof(*tv)) ||
	    tv->tv_sec < 0 || tv->tv_usec < 0 || tv->tv_usec >= 1000000)
		return real.select(nfds, rd, wr, ex, tv);
	t.tv_sec = tv->tv_sec;
	t.tv_nsec = tv->tv_usec * 1000;
	r = pselect_deferred(nfds, rd, wr, ex, &t, NULL, &left);
	if (r == -2)
		return real.select(nfds, rd, wr, ex, tv);
	tv->tv_sec = left.tv_sec;
	tv->tv_usec = left.tv_nsec / 1000;
	return r;
}

/*
 * Wait for the epoll instance to become readable, or our timer to fire,
 * in a ppoll() with the caller's mask; then collect without blocking.
 * Another thread may take the events first: then wait again.  @ms:
 * epoll_wait()'s timeout, for the real call; -1: epoll_pwait2()'s @ts.
 */
static int epoll_deferred(int epfd, struct epoll_event *ev, int max,
			  const struct timespec *ts, const sigset_t *mask,
			  int ms)
{
	struct pollfd pfd[2] = { { .fd = epfd, .events = POLLIN } };
	unsigned long long bound;
	struct timespec win;
	struct deadline d;
	int r, err;

	if (!deferred(ts, &bound))
		goto exact;
	r = real.epoll_pwait(epfd, ev, max, 0, mask);
	if (r)
		return r;
	if (dtfd_wait_begin(&d, W_MONOTONIC,
		       dtfd_add_sat(dtfd_now_ns(CLOCK_MONOTONIC), dtfd_ts_ns(ts)), bound))
		goto exact;
	pfd[1] = (struct pollfd){ .fd = d.w->fd, .events = POLLIN };
	do {
		win = dtfd_wait_window(&d);
		r = real.ppoll(pfd, 2, &win, mask);
		if (r > 0 && pfd[0].revents)
			r = real.epoll_pwait(epfd, ev, max, 0, NULL);
		else if (r > 0)
			r = 0;		/* our timer alone */
	} while (r == 0 && !pfd[1].revents && !dtfd_wait_due(&d));
	err = errno;
	dtfd_wait_end(&d, pfd[1].revents);
	if (r == 0 && !dtfd_wait_due(&d)) {
		/* before the deadline with nothing ready: the rest, exactly */
		win = dtfd_wait_left(&d);
		return real.epoll_pwait2(epfd, ev, max, &win, mask);
	}
	errno = err;
	return r;
exact:
	return ms >= 0 ? real.epoll_pwait(epfd, ev, max, ms, mask) :
			 real.epoll_pwait2(epfd, ev, max, ts, mask);
}

static int epoll_ms(int epfd, struct epoll_event *ev, int max, int timeout,
		    const sigset_t *mask)
{
	struct timespec ts = { timeout / 1000, timeout % 1000 * 1000000L };

	if (timeout <= 0 || !dtfd_policy_bounded())
		return real.epoll_pwait(epfd, ev, max, timeout, mask);
	return epoll_deferred(epfd, ev, max, &ts, mask, timeout);
}

DTFD_API int epoll_wait(int epfd, struct epoll_event *ev, int max,
			int timeout)
{
	return epoll_ms(epfd, ev, max, timeout, NULL);
}

DTFD_API int epoll_pwait(int epfd, struct epoll_event *ev, int max,
			 int timeout, const sigset_t *mask)
{
	return epoll_ms(epfd, ev, max, timeout, mask);
}

DTFD_API int epoll_pwait2(int epfd, struct epoll_event *ev, int max,
			  const struct timespec *ts, const sigset_t *mask)
{
	struct timespec t;

	if (!ts || !dtfd_policy_bounded() || !dtfd_user_ok(ts, sizeof(*ts)))
		return real.epoll_pwait2(epfd, ev, max, ts, mask);
	t = *ts;
	return epoll_deferred(epfd, ev, max, &t, mask, -1);
}

/*
 * clock_nanosleep(2) on our timer: it returns an error number, and fills
 * *rem on EINTR for relative sleeps.  A ppoll() with no descriptor of the
 * caller's, so a signal handler ends it with EINTR whatever SA_RESTART
 * says, as it ends a sleep; stopped and continued, it sleeps on.  A
 * relative sleep is measured on CLOCK_MONOTONIC, as the kernel measures
 * it, even when the caller names CLOCK_REALTIME: a clock step neither
 * shortens it nor changes the time left.
 */
DTFD_API int clock_nanosleep(clockid_t clk, int flags,
			     const struct timespec *req, struct timespec *rem)
{
	int abs = flags & TIMER_ABSTIME, i, r, fired, err = errno;
	unsigned long long bound;
	struct timespec t, win;
	long long now, at;
	struct deadline d;
	struct pollfd pfd;

	i = dtfd_wait_index(!abs && clk == CLOCK_REALTIME ? CLOCK_MONOTONIC : clk);
	if (!dtfd_policy_bounded() || i < 0 || dtfd_wait_index(clk) < 0 ||
	    (flags & ~TIMER_ABSTIME) || !dtfd_user_ok(req, sizeof(*req)))
		return real.clock_nanosleep(clk, flags, req, rem);
	t = *req;
	if (!dtfd_ts_valid(&t))
		return real.clock_nanosleep(clk, flags, req, rem);
	now = dtfd_now_ns(dtfd_wait_clock(i));
	at = abs ? dtfd_ts_ns(&t) : dtfd_add_sat(now, dtfd_ts_ns(&t));
	if (at <= now || !dtfd_policy(at - now, &bound) ||
	    dtfd_wait_begin(&d, i, at, bound))
		return real.clock_nanosleep(clk, flags, req, rem);
	pfd = (struct pollfd){ .fd = d.w->fd, .events = POLLIN };
	win = dtfd_wait_window(&d);
	r = real.ppoll(&pfd, 1, &win, NULL);
	r = r < 0 ? errno : 0;
	errno = err;		/* it reports in its return value, not errno */
	fired = !r && pfd.revents;
	dtfd_wait_end(&d, fired);
	if (!r && !dtfd_wait_due(&d)) {
		/* woken before the deadline: the rest, exactly */
		win = dtfd_ns_ts(d.at);
		r = real.clock_nanosleep(d.clk, TIMER_ABSTIME, &win, NULL);
	}
	if (r != EINTR || !rem || abs)
		return r;
	if (!dtfd_user_ok(rem, sizeof(*rem)))
		return EFAULT;
	*rem = dtfd_wait_left(&d);
	return EINTR;
}

DTFD_API int nanosleep(const struct timespec *req, struct timespec *rem)
{
	int r = clock_nanosleep(CLOCK_MONOTONIC, 0, req, rem);

	if (!r)
		return 0;
	errno = r;
	return -1;
}

DTFD_API int usleep(useconds_t usec)
{
	struct timespec ts = { usec / 1000000, usec % 1000000 * 1000L };

	return nanosleep(&ts, NULL);
}

/* The whole seconds not slept, as glibc's sleep(3); errno kept on success. */
DTFD_API unsigned int sleep(unsigned int seconds)
{
	struct timespec ts = { seconds, 0 };
	int err = errno;

	if (nanosleep(&ts, &ts) < 0)
		return (unsigned int)ts.tv_sec;
	errno = err;
	return 0;
}
