/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tests/deferrable: what deferrable.c shares with its units,
 * deferrable/cpus.c and deferrable/idle.c.
 */
#ifndef DTFD_TESTS_DEFERRABLE_H
#define DTFD_TESTS_DEFERRABLE_H

#include <time.h>

/* lateness samples of one test */
struct lates {
	long long v[512];
	int n;
};

void late_add(struct lates *l, long long late);
void late_check(struct lates *l, const char *what);
/* a dtimerfd timer on @clk, close-on-exec */
int dcreate(clockid_t clk);
/* dtimerfd_settime of @value and @interval with @flags */
int arm(int fd, int flags, long long value, long long interval);
/* the timer under test is the kernel's TFD_TIMER_DEFERRABLE (-b intree) */
int intree(void);
/* the settime and gettime of the timer under test (module or in-tree) */
int dsettime(int fd, int flags, const struct itimerspec *its,
	     struct itimerspec *old);
int dgettime(int fd, struct itimerspec *cur);
struct h_fdinfo;
/* fdinfo says the timer is in @mode: strict, deferrable, deferrable-percpu */
void expect_mode(const struct h_fdinfo *fi, const char *mode);

#endif
