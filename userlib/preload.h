/* SPDX-License-Identifier: LGPL-2.1-or-later OR MIT */
/*
 * Between the shim's waits (preload-sleep.c) and its timers
 * (preload-wait.c); not installed, hidden.
 */
#ifndef DTFD_PRELOAD_H
#define DTFD_PRELOAD_H

#include <time.h>

#pragma GCC visibility push(hidden)

/* The clocks a thread has a timer for, and their order in waiters[]. */
enum { W_MONOTONIC, W_REALTIME, W_BOOTTIME, W_CLOCKS };

struct waiter {
	int fd;				/* -1: none */
	int slot;			/* in kept[] */
	unsigned long long bound;	/* the bound it was last given */
	volatile int busy;		/* a wait of this thread uses it */
};

/*
 * A wait's deadline: @at ns on @clk, delivered within @bound ns after it,
 * by this thread's timer @w.
 */
struct deadline {
	clockid_t clk;
	long long at;
	long long bound;
	struct waiter *w;
};

int dtfd_wait_index(clockid_t clk);
clockid_t dtfd_wait_clock(int i);
int dtfd_wait_begin(struct deadline *d, int i, long long at,
		    unsigned long long bound);
struct timespec dtfd_wait_window(const struct deadline *d);
struct timespec dtfd_wait_left(const struct deadline *d);
int dtfd_wait_due(const struct deadline *d);
void dtfd_wait_end(struct deadline *d, int fired);
void dtfd_wait_init(void);

#pragma GCC visibility pop

#endif /* DTFD_PRELOAD_H */
