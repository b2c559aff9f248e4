// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The shim's timers and a wait's use of one (preload.h): one deferrable
 * dtimerfd per clock and thread, made on first use, kept by the process
 * in kept[] so that no number is closed unless proved the shim's, pooled
 * when a thread exits, reaped lazily in a forked child.  The waits
 * themselves are preload-sleep.c's.
 *
 * The rules (dtimerfd-preload(8), GUARANTEES): the shim closes only a
 * number it has proved is still its own timer, and only in a forked
 * child; a thread's timers go back to the process's pool when it exits,
 * for the next thread; a thread's timer serves one wait at a time.
 */

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include "dtimerfd.h"
#include "internal.h"
#include "preload.h"

static const clockid_t w_clock[W_CLOCKS] = {
	CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME,
};

clockid_t dtfd_wait_clock(int i)
{
	return w_clock[i];
}

/* The index of @clk's timer, or -1: a clock the shim does not defer. */
int dtfd_wait_index(clockid_t clk)
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
 * The process's timers: at most DTFD_KEPT, each in a slot of kept[], 0
 * when free, else its descriptor, clock and state packed together:
 * K_USED by a thread (or being made), K_POOLED (its thread exited; the
 * next thread to need that clock takes it), K_INHERITED (a forked child's
 * copy of its parent's, to be closed once proved ours).
 */
#define DTFD_KEPT	32
enum { K_USED = 1, K_POOLED, K_INHERITED };
#define K_PACK(fd, clk, st) \
	((long long)(unsigned int)(fd) | (long long)(clk) << 32 | \
	 (long long)(st) << 40)
#define K_FD(v)		((int)((v) & 0xffffffff))
#define K_CLOCK(v)	((int)((v) >> 32 & 0xff))
#define K_STATE(v)	((int)((v) >> 40))

static atomic_llong kept[DTFD_KEPT];
/* kept[] holds a parent's timers: the first to need one closes them */
static atomic_int inherited;

static __thread struct waiter waiters[W_CLOCKS] = {
	{ -1, -1, 0, 0 }, { -1, -1, 0, 0 }, { -1, -1, 0, 0 }
};
static pthread_key_t waiter_key;

/*
 * The shim's mark on its timers: their slack, a number of this process's
 * that no program would choose (slack means nothing to a deferrable
 * timer, the only kind the shim arms).  A descriptor whose tolerance says
 * it is the shim's; any other, not even a dtimerfd, the program's.
 */
static unsigned long long mark;

/* No device (no module yet, a sandbox) or no room: real calls until then. */
static atomic_llong off_until;
#define DTFD_RETRY	(10 * DTFD_NSEC)
/* Below this RLIMIT_NOFILE the program needs every number it may open. */
#define DTFD_NOFILE_MIN	64

static int shim_off(void)
{
	return dtfd_now_ns(CLOCK_MONOTONIC) < atomic_load(&off_until);
}

static void shim_off_a_while(void)
{
	atomic_store(&off_until, dtfd_now_ns(CLOCK_MONOTONIC) + DTFD_RETRY);
}

/*
 * In a forked child the timers of kept[] are its parent's too (the same
 * open files): close those still the shim's (the program may have closed
 * the number and opened a file of its own there), before the child makes
 * its own.  Not in the fork handler: a child that execs, as most do,
 * closes them (close-on-exec) without a system call of ours.
 */
static void reap_inherited(void)
{
	uint64_t slack, bound;
	long long v;
	int s;

	if (!atomic_load(&inherited) || !atomic_exchange(&inherited, 0))
		return;
	for (s = 0; s < DTFD_KEPT; s++) {
		v = atomic_load(&kept[s]);
		if (K_STATE(v) != K_INHERITED ||
		    !atomic_compare_exchange_strong(&kept[s], &v, 0))
			continue;
		if (!dtfd_get_tolerance_ioctl(K_FD(v), &slack, &bound) &&
		    slack == mark)
			close(K_FD(v));
	}
}

/* A timer of clock @i a thread left behind: its slot, *fd; or -1. */
static int pool_take(int i, int *fd)
{
	long long v;
	int s;

	for (s = 0; s < DTFD_KEPT; s++) {
		v = atomic_load(&kept[s]);
		if (K_STATE(v) == K_POOLED && K_CLOCK(v) == i &&
		    atomic_compare_exchange_strong(&kept[s], &v,
						   K_PACK(K_FD(v), i, K_USED))) {
			*fd = K_FD(v);
			return s;
		}
	}
	return -1;
}

/* A free slot, held for a timer about to be made; or -1. */
static int slot_reserve(int i)
{
	long long free;
	int s;

	for (s = 0; s < DTFD_KEPT; s++) {
		free = 0;
		if (atomic_compare_exchange_strong(&kept[s], &free,
						   K_PACK(-1, i, K_USED)))
			return s;
	}
	return -1;
}

/*
 * A new timer of clock @i, moved up to the top quarter of the numbers the
 * program may open and marked; -1 if it cannot be made or put there.
 */
static int timer_make(int i)
{
	int floor = dtfd_fd_floor(), fd, hi;

	if (floor < DTFD_NOFILE_MIN - DTFD_NOFILE_MIN / 4) {
		shim_off_a_while();
		return -1;
	}
	fd = dtfd_create_ioctl(w_clock[i], DTFD_CLOEXEC | DTFD_NONBLOCK);
	if (fd < 0) {
		shim_off_a_while();
		return -1;
	}
	hi = dtfd_fd_high(fd, floor);
	if (hi < 0 || dtfd_tolerance_ioctl(hi, mark, 0)) {
		/* ours, made a moment ago: no room up there */
		close(hi < 0 ? fd : hi);
		shim_off_a_while();
		return -1;
	}
	return hi;
}

/* This thread's timer of clock @i, made or taken from the pool; or NULL. */
static struct waiter *waiter_get(int i)
{
	struct waiter *w = &waiters[i];
	int fd, s;

	if (w->fd >= 0)
		return w;
	if (shim_off())
		return NULL;
	reap_inherited();
	s = pool_take(i, &fd);
	if (s < 0) {
		s = slot_reserve(i);
		if (s < 0)
			return NULL;
		fd = timer_make(i);
		if (fd < 0) {
			atomic_store(&kept[s], 0);
			return NULL;
		}
		atomic_store(&kept[s], K_PACK(fd, i, K_USED));
	}
	w->fd = fd;
	w->slot = s;
	w->bound = ULLONG_MAX;		/* unknown: set it at the next arming */
	pthread_setspecific(waiter_key, waiters);
	return w;
}

/* The program closed or reused the number: forget it, never close it. */
static void waiter_lost(struct waiter *w)
{
	atomic_store(&kept[w->slot], 0);
	w->fd = -1;
	w->slot = -1;
}

/* At thread exit: the thread's timers go to the pool, open. */
static void drop_waiters(void *unused)
{
	struct waiter *w;
	int i;

	(void)unused;
	for (i = 0; i < W_CLOCKS; i++) {
		w = &waiters[i];
		if (w->fd >= 0)
			atomic_store(&kept[w->slot], K_PACK(w->fd, i, K_POOLED));
		*w = (struct waiter){ -1, -1, 0, 0 };
	}
}

/*
 * A forked child has its parent's timers, and of its threads only the one
 * that forked: none of them is the child's to arm.  No system call here.
 */
static void atfork_child(void)
{
	long long v;
	int s, i;

	for (s = 0; s < DTFD_KEPT; s++) {
		v = atomic_load(&kept[s]);
		if (v)
			atomic_store(&kept[s], K_PACK(K_FD(v), K_CLOCK(v),
						      K_INHERITED));
	}
	atomic_store(&inherited, 1);
	for (i = 0; i < W_CLOCKS; i++)
		waiters[i] = (struct waiter){ -1, -1, 0, 0 };
}

/*
 * Arm this thread's timer of clock @i for @at, deferrable within @bound,
 * and mark it busy until dtfd_wait_end(): 0; or -1, and the real call waits
 * exactly (no timer, a signal handler's wait inside its thread's, a timer
 * lost twice).  ENOTTY or EBADF: the program closed or reused the number,
 * which is then its own: forget it and make another, once.
 */
int dtfd_wait_begin(struct deadline *d, int i, long long at,
		    unsigned long long bound)
{
	struct itimerspec its = { { 0, 0 }, dtfd_ns_ts(at) };
	struct waiter *w = &waiters[i];
	int tries, err = errno;

	if (w->busy)
		return -1;
	/* before arming: a handler running from here on keeps off it */
	w->busy = 1;
	for (tries = 0; tries < 2; tries++) {
		w = waiter_get(i);
		if (!w)
			break;
		if (w->bound != bound &&
		    dtfd_tolerance_ioctl(w->fd, mark, bound)) {
			w->bound = ULLONG_MAX;
		} else {
			w->bound = bound;
			if (!dtfd_settime_ioctl(w->fd, DTFD_TIMER_DEFERRABLE |
						DTFD_TIMER_ABSTIME, &its, NULL)) {
				*d = (struct deadline){ w_clock[i], at,
							(long long)bound, w };
				errno = err;
				return 0;
			}
		}
		if (errno != ENOTTY && errno != EBADF)
			break;
		waiter_lost(w);
	}
	waiters[i].busy = 0;
	errno = err;
	return -1;
}

/* The inner wait's own timeout: the end of the window, from now. */
struct timespec dtfd_wait_window(const struct deadline *d)
{
	long long left = d->at - dtfd_now_ns(d->clk);

	return dtfd_ns_ts(dtfd_add_sat(left > 0 ? left : 0, d->bound));
}

/* What is left until the deadline, from now; 0 when it has passed. */
struct timespec dtfd_wait_left(const struct deadline *d)
{
	long long left = d->at - dtfd_now_ns(d->clk);

	return dtfd_ns_ts(left > 0 ? left : 0);
}

/* Whether the deadline has passed, on its own clock. */
int dtfd_wait_due(const struct deadline *d)
{
	return dtfd_now_ns(d->clk) >= d->at;
}

/*
 * The wait is over: the timer disarmed unless it fired (so that it wakes
 * nobody later), and free for this thread's next wait.
 */
void dtfd_wait_end(struct deadline *d, int fired)
{
	static const struct itimerspec zero;
	int err = errno;

	if (!fired)
		dtfd_settime_ioctl(d->w->fd, 0, &zero, NULL);
	d->w->busy = 0;
	errno = err;
}

/*
 * At load: the mark, from the kernel's random bytes for this process (no
 * system call), and the thread-exit and fork handlers.
 */
void dtfd_wait_init(void)
{
	const unsigned char *r = (const unsigned char *)getauxval(AT_RANDOM);
	unsigned long long m = (uintptr_t)&mark;

	if (r)
		memcpy(&m, r + 8, sizeof(m));
	mark = (m ^ (unsigned long long)dtfd_now_ns(CLOCK_MONOTONIC)) >> 2 |
	       1ULL << 61;
	pthread_key_create(&waiter_key, drop_waiters);
	pthread_atfork(NULL, NULL, atfork_child);
}
