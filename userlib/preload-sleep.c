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
 * A thread's timers are created on first use, one per clock, close-on-exec
 * and above the descriptors a program usually uses, at most 32 kept in a
 * process (beyond, a wait's own timer is closed after it); closed in a
 * forked child and at thread exit; and never closed once the program has
 * closed or reused their number.  Without the device (no module yet, a
 * sandbox), the shim tries again ten seconds later.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "dtimerfd.h"
#include "internal.h"

#define DTFD_API __attribute__((visibility("default")))

/* Descriptors a poll may have for the shim to add its own. */
#define DTFD_POLL_MAX	256

#define NSEC	1000000000LL

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

static long long ts_to_ns(const struct timespec *ts)
{
	if (ts->tv_sec > (INT64_MAX - NSEC) / NSEC)
		return INT64_MAX;
	return ts->tv_sec * NSEC + ts->tv_nsec;
}

static int ts_valid(const struct timespec *ts)
{
	return ts->tv_sec >= 0 && ts->tv_nsec >= 0 && ts->tv_nsec < NSEC;
}

static long long now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts_to_ns(&ts);
}

static struct timespec ns_to_ts(long long ns)
{
	struct timespec ts = { (time_t)(ns / NSEC), (long)(ns % NSEC) };

	return ts;
}

/*
 * The timers the shim keeps: a thread's, one per clock, and at most
 * DTFD_KEPT in the whole process.  Beyond that a wait makes its own and
 * closes it after: a program near its descriptor limit must not lose its
 * slots to many threads' timers.
 */
#define DTFD_KEPT	32
static atomic_int kept[DTFD_KEPT];	/* fd + 1 of each kept timer; 0: free */

struct waiter {
	int fd;
	int slot;				/* in kept[] */
	unsigned long long max_defer;		/* the bound it was last given */
};

enum { W_MONOTONIC, W_REALTIME, W_BOOTTIME, W_CLOCKS };

static __thread struct waiter waiters[W_CLOCKS] = {
	{ -1, -1, 0 }, { -1, -1, 0 }, { -1, -1, 0 }
};
static pthread_key_t waiter_key;

/* No device (no module yet, a sandbox without it): retry only later. */
static atomic_llong no_device_until;
#define DTFD_NO_DEVICE_RETRY	(10 * NSEC)

static int kept_take(int fd)
{
	int s, free;

	for (s = 0; s < DTFD_KEPT; s++) {
		free = 0;
		if (atomic_compare_exchange_strong(&kept[s], &free, fd + 1))
			return s;
	}
	return -1;
}

/* Forget a thread's timer; close it unless the program took its number. */
static void waiter_forget(struct waiter *w, int ours)
{
	if (w->fd >= 0 && ours)
		close(w->fd);
	if (w->slot >= 0)
		atomic_store(&kept[w->slot], 0);
	*w = (struct waiter){ -1, -1, 0 };
}

/* At thread exit. */
static void drop_waiters(void *unused)
{
	int i;

	(void)unused;
	for (i = 0; i < W_CLOCKS; i++)
		waiter_forget(&waiters[i], 1);
}

/*
 * A forked child has its parent's timers, and of their threads only the
 * one that forked: it closes them all and makes its own.
 */
static void atfork_child(void)
{
	int s, v, i;

	for (s = 0; s < DTFD_KEPT; s++) {
		v = atomic_exchange(&kept[s], 0);
		if (v)
			close(v - 1);
	}
	for (i = 0; i < W_CLOCKS; i++)
		waiters[i] = (struct waiter){ -1, -1, 0 };
}

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
	pthread_key_create(&waiter_key, drop_waiters);
	pthread_atfork(NULL, NULL, atfork_child);
}

static int waiter_index(clockid_t clk)
{
	switch (clk) {
	case CLOCK_MONOTONIC:
		return W_MONOTONIC;
	case CLOCK_REALTIME:
		return W_REALTIME;
	case CLOCK_BOOTTIME:
		return W_BOOTTIME;
	default:
		return -1;
	}
}

/*
 * A new timer, moved above the numbers a program usually uses (but below
 * FD_SETSIZE, for select): a program that closes or dup2()s onto a low
 * number must not meet it.
 */
static int waiter_create(clockid_t clk)
{
	long long t = now_ns(CLOCK_MONOTONIC);
	rlim_t top = FD_SETSIZE;
	struct rlimit rl;
	int fd, hi;

	if (t < atomic_load(&no_device_until))
		return -1;
	fd = dtfd_create_ioctl(clk, DTFD_CLOEXEC | DTFD_NONBLOCK);
	if (fd < 0) {
		if (errno != EMFILE && errno != ENFILE && errno != ENOMEM)
			atomic_store(&no_device_until, t + DTFD_NO_DEVICE_RETRY);
		return -1;
	}
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < top)
		top = rl.rlim_cur;
	hi = fcntl(fd, F_DUPFD_CLOEXEC, (int)(top - top / 4));
	if (hi >= 0) {
		close(fd);
		fd = hi;
	}
	return fd;
}

/* Arm @fd, deferrable within @max_defer (*cur: the bound it has). */
static int arm_fd(int fd, int abs, const struct timespec *ts,
		  unsigned long long max_defer, unsigned long long *cur)
{
	struct itimerspec its = { { 0, 0 }, *ts };

	if (*cur != max_defer && dtfd_tolerance_ioctl(fd, 0, max_defer))
		return -1;
	*cur = max_defer;
	return dtfd_settime_ioctl(fd, DTFD_TIMER_DEFERRABLE |
				  (abs ? DTFD_TIMER_ABSTIME : 0), &its, NULL);
}

/*
 * Arm a timer of this thread on @clk for @ts (absolute with @abs),
 * deferrable within @max_defer: its descriptor (*temp: to be closed
 * after the wait), or -1: then the caller waits exactly.  ENOTTY or
 * EBADF: the program closed or reused our number, which is then its own:
 * forget it and make another, once.
 */
static int waiter_arm(clockid_t clk, int abs, const struct timespec *ts,
		      unsigned long long max_defer, int *temp)
{
	int i = waiter_index(clk), tries, err = errno, fd;
	unsigned long long none = 0;
	struct waiter *w;

	*temp = 0;
	if (i < 0)
		return -1;
	w = &waiters[i];
	for (tries = 0; tries < 2; tries++) {
		if (w->fd < 0) {
			fd = waiter_create(clk);
			if (fd < 0)
				break;
			w->slot = kept_take(fd);
			if (w->slot < 0) {
				*temp = 1;
				if (!arm_fd(fd, abs, ts, max_defer, &none)) {
					errno = err;
					return fd;
				}
				close(fd);
				break;
			}
			w->fd = fd;
			w->max_defer = 0;
			pthread_setspecific(waiter_key, waiters);
		}
		if (!arm_fd(w->fd, abs, ts, max_defer, &w->max_defer)) {
			errno = err;
			return w->fd;
		}
		if (errno != ENOTTY && errno != EBADF)
			break;
		waiter_forget(w, 0);
	}
	errno = err;
	return -1;
}

/*
 * The wait is over: a temporary timer is closed, a kept one disarmed
 * unless it fired, so that it wakes nobody later.
 */
static void waiter_release(int fd, int temp, int fired)
{
	static const struct itimerspec zero;
	int err = errno;

	if (temp)
		close(fd);
	else if (!fired)
		dtfd_settime_ioctl(fd, 0, &zero, NULL);
	errno = err;
}

/*
 * Whether the policy defers a timeout of @ts (relative, valid, not zero)
 * and with what bound.
 */
static int deferred(const struct timespec *ts, unsigned long long *max_defer)
{
	return dtfd_pol_waits && ts_valid(ts) && (ts->tv_sec || ts->tv_nsec) &&
	       dtfd_policy(ts_to_ns(ts), max_defer);
}

/* Copy the caller's memory where the kernel would say EFAULT, not SIGSEGV. */
static int copy_in(void *to, const void *from, size_t size)
{
	struct iovec local = { to, size }, remote = { (void *)from, size };

	return !size || process_vm_readv(getpid(), &local, 1, &remote, 1, 0) ==
			(ssize_t)size ? 0 : -1;
}

/*
 * ppoll() on the caller's descriptors plus our timer, armed for @ts: the
 * real call first with a zero timeout (errors, and what is ready now).
 */
static int ppoll_deferred(struct pollfd *fds, nfds_t n,
			  const struct timespec *ts, const sigset_t *mask)
{
	static const struct timespec zero;
	struct pollfd copy[DTFD_POLL_MAX + 1];
	unsigned long long max_defer;
	int r, fd, fired, err, temp;
	nfds_t i;

	if (n > DTFD_POLL_MAX || !deferred(ts, &max_defer))
		return real.ppoll(fds, n, ts, mask);
	r = real.ppoll(fds, n, &zero, mask);
	if (r)
		return r;
	memcpy(copy, fds, n * sizeof(*fds));
	fd = waiter_arm(CLOCK_MONOTONIC, 0, ts, max_defer, &temp);
	if (fd < 0)
		return real.ppoll(fds, n, ts, mask);
	copy[n] = (struct pollfd){ .fd = fd, .events = POLLIN };
	r = real.ppoll(copy, n + 1, NULL, mask);
	err = errno;
	fired = r > 0 && copy[n].revents;
	waiter_release(fd, temp, fired);
	if (r < 0 && err == EINVAL)	/* one descriptor over the limit */
		return real.ppoll(fds, n, ts, mask);
	if (r < 0) {
		errno = err;
		return -1;
	}
	for (i = 0; i < n; i++)
		fds[i].revents = copy[i].revents;
	return r - fired;
}

DTFD_API int poll(struct pollfd *fds, nfds_t n, int timeout)
{
	struct timespec ts = { timeout / 1000, timeout % 1000 * 1000000L };

	if (timeout <= 0 || !dtfd_pol_waits)
		return real.poll(fds, n, timeout);
	return ppoll_deferred(fds, n, &ts, NULL);
}

DTFD_API int ppoll(struct pollfd *fds, nfds_t n, const struct timespec *ts,
		   const sigset_t *mask)
{
	struct timespec t;

	if (!ts || copy_in(&t, ts, sizeof(t)))
		return real.ppoll(fds, n, ts, mask);
	return ppoll_deferred(fds, n, &t, mask);
}

/*
 * pselect() with our timer added to the read set; the sets the caller
 * gets back never name it.  *left: the time that was left when it ended.
 */
static int pselect_deferred(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
			    const struct timespec *ts, const sigset_t *mask,
			    struct timespec *left)
{
	unsigned long long max_defer;
	fd_set set[3], *user[3] = { rd, wr, ex }, *arg[3];
	size_t bytes = ((size_t)nfds + 7) / 8;
	long long deadline;
	int i, r, fd, fired, err, temp;

	if (nfds < 0 || nfds > FD_SETSIZE || !deferred(ts, &max_defer))
		return -2;
	for (i = 0; i < 3; i++) {
		arg[i] = user[i] ? &set[i] : NULL;
		if (user[i]) {
			FD_ZERO(&set[i]);
			if (copy_in(&set[i], user[i], bytes))
				return -2;
		}
	}
	deadline = now_ns(CLOCK_MONOTONIC) + ts_to_ns(ts);
	fd = waiter_arm(CLOCK_MONOTONIC, 0, ts, max_defer, &temp);
	if (fd < 0 || fd >= FD_SETSIZE) {
		if (fd >= 0)
			waiter_release(fd, temp, 0);
		return -2;
	}
	if (!rd) {
		FD_ZERO(&set[0]);
		arg[0] = &set[0];
	}
	FD_SET(fd, &set[0]);
	r = real.pselect(fd >= nfds ? fd + 1 : nfds, arg[0], arg[1], arg[2],
			 NULL, mask);
	err = errno;
	fired = r > 0 && FD_ISSET(fd, &set[0]);
	waiter_release(fd, temp, fired);
	if (left) {
		long long rest = deadline - now_ns(CLOCK_MONOTONIC);

		*left = ns_to_ts(fired || rest < 0 ? 0 : rest);
	}
	if (r < 0) {
		errno = err;
		return -1;
	}
	FD_CLR(fd, &set[0]);
	for (i = 0; i < 3; i++)
		if (user[i])
			memcpy(user[i], &set[i], bytes);
	return r - fired;
}

DTFD_API int pselect(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
		     const struct timespec *ts, const sigset_t *mask)
{
	struct timespec t;
	int r;

	if (!ts || copy_in(&t, ts, sizeof(t)))
		return real.pselect(nfds, rd, wr, ex, ts, mask);
	r = pselect_deferred(nfds, rd, wr, ex, &t, mask, NULL);
	return r == -2 ? real.pselect(nfds, rd, wr, ex, ts, mask) : r;
}

/* select(2) reports the time left in *tv, as Linux does. */
DTFD_API int select(int nfds, fd_set *rd, fd_set *wr, fd_set *ex,
		    struct timeval *tv)
{
	struct timespec t, left;
	struct timeval v;
	int r;

	if (!tv || copy_in(&v, tv, sizeof(v)) || v.tv_usec < 0 ||
	    v.tv_usec >= 1000000)
		return real.select(nfds, rd, wr, ex, tv);
	t.tv_sec = v.tv_sec;
	t.tv_nsec = v.tv_usec * 1000;
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
 * Another thread may take the events first: then wait again.
 */
static int epoll_deferred(int epfd, struct epoll_event *ev, int max,
			  const struct timespec *ts, const sigset_t *mask)
{
	struct pollfd pfd[2] = { { .fd = epfd, .events = POLLIN } };
	unsigned long long max_defer;
	int r, fd, temp;

	if (!deferred(ts, &max_defer))
		return real.epoll_pwait2(epfd, ev, max, ts, mask);
	r = real.epoll_pwait(epfd, ev, max, 0, mask);
	if (r)
		return r;
	fd = waiter_arm(CLOCK_MONOTONIC, 0, ts, max_defer, &temp);
	if (fd < 0)
		return real.epoll_pwait2(epfd, ev, max, ts, mask);
	pfd[1] = (struct pollfd){ .fd = fd, .events = POLLIN };
	do {
		r = real.ppoll(pfd, 2, NULL, mask);
		if (r > 0 && pfd[0].revents)
			r = real.epoll_pwait(epfd, ev, max, 0, NULL);
		else if (r > 0)
			r = 0;		/* our timer alone: the timeout */
	} while (r == 0 && !pfd[1].revents);
	waiter_release(fd, temp, pfd[1].revents);
	return r;
}

static int epoll_ms(int epfd, struct epoll_event *ev, int max, int timeout,
		    const sigset_t *mask)
{
	struct timespec ts = { timeout / 1000, timeout % 1000 * 1000000L };

	if (timeout <= 0 || !dtfd_pol_waits)
		return real.epoll_pwait(epfd, ev, max, timeout, mask);
	return epoll_deferred(epfd, ev, max, &ts, mask);
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

	if (!ts || copy_in(&t, ts, sizeof(t)))
		return real.epoll_pwait2(epfd, ev, max, ts, mask);
	return epoll_deferred(epfd, ev, max, &t, mask);
}

/*
 * clock_nanosleep(2) on our timer: it returns an error number, and fills
 * *rem on EINTR for relative sleeps.  A ppoll() with no descriptor of the
 * caller's, so a signal handler ends it with EINTR whatever SA_RESTART
 * says, as it ends a sleep; stopped and continued, it sleeps on.
 */
DTFD_API int clock_nanosleep(clockid_t clk, int flags,
			     const struct timespec *req, struct timespec *rem)
{
	unsigned long long max_defer;
	long long dur, deadline;
	struct timespec t;
	struct pollfd pfd;
	int fd, r, temp, abs = flags & TIMER_ABSTIME;

	if (!dtfd_pol_waits || waiter_index(clk) < 0 || (flags & ~TIMER_ABSTIME) ||
	    copy_in(&t, req, sizeof(t)) || !ts_valid(&t))
		return real.clock_nanosleep(clk, flags, req, rem);
	deadline = abs ? ts_to_ns(&t) : now_ns(clk) + ts_to_ns(&t);
	dur = abs ? deadline - now_ns(clk) : ts_to_ns(&t);
	if (dur <= 0 || !dtfd_policy(dur, &max_defer))
		return real.clock_nanosleep(clk, flags, req, rem);
	fd = waiter_arm(clk, abs, &t, max_defer, &temp);
	if (fd < 0)
		return real.clock_nanosleep(clk, flags, req, rem);
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	r = real.ppoll(&pfd, 1, NULL, NULL);
	waiter_release(fd, temp, r > 0);
	if (r > 0)
		return 0;
	r = errno;
	if (r == EINTR && rem && !abs) {
		long long rest = deadline - now_ns(clk);

		*rem = ns_to_ts(rest > 0 ? rest : 0);
	}
	return r;
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
