/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tests/sleep-shim: what sleep-shim.c (the two ways of calling, the
 * checks, main) shares with its units in sleep-shim/.
 */
#ifndef DTFD_TESTS_SLEEP_SHIM_H
#define DTFD_TESTS_SLEEP_SHIM_H

#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>

#define MS(x)	((long long)(x) * 1000000LL)
/* late beyond the policy's bound (10 %, at most 1 s) a busy guest may add */
#define MARGIN	MS(250)

#define DTIMERFD_LINK "anon_inode:[dtimerfd]"

/* The two ways of calling: the program's symbol, and libc's own. */
struct calls {
	const char *name;
	int (*poll)(struct pollfd *, nfds_t, int);
	int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *,
		     const sigset_t *);
	int (*select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
	int (*pselect)(int, fd_set *, fd_set *, fd_set *,
		       const struct timespec *, const sigset_t *);
	int (*epoll_wait)(int, struct epoll_event *, int, int);
	int (*epoll_pwait)(int, struct epoll_event *, int, int,
			   const sigset_t *);
	int (*epoll_pwait2)(int, struct epoll_event *, int,
			    const struct timespec *, const sigset_t *);
	int (*nanosleep)(const struct timespec *, struct timespec *);
	int (*clock_nanosleep)(clockid_t, int, const struct timespec *,
			       struct timespec *);
	int (*usleep)(useconds_t);
	unsigned int (*sleep)(unsigned int);
};


/* sleep-shim.c */
extern struct calls prog;
extern int tap_n;		/* the TAP lines so far: a SKIP line takes ++tap_n */
extern volatile sig_atomic_t handled;
void ok(int cond, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
long long now(clockid_t c);
void on_signal(int sig);
void alarm_in(long long ns);
bool left_ok(long long left, long long total, long long signal_after,
	     long long t0);
void timed(const struct calls *c, const char *what, long long t0,
	   long long want);
void usr1_pending(sigset_t *block, sigset_t *none, sigset_t *old);
int count_fds(const char *what);

/* sleep-shim/waits.c */
extern int handler_tfd;
void on_signal_usleep(int sig);
void on_signal_poll(int sig);
void t_poll(const struct calls *c);
void t_ppoll(const struct calls *c);
void t_select(const struct calls *c);
void t_epoll(const struct calls *c);
void t_sleeps(const struct calls *c);
void t_handler_waits(const struct calls *c, void (*handler)(int),
		     const char *what);

/* sleep-shim/fds.c */
void t_number_taken(const char *expect);
void t_number_replaced_in_sleep(const char *expect);
void t_seccomp(void);
void t_seccomp_allowlist(const char *expect);

/* sleep-shim/edges.c */
void t_longjmp(const struct calls *c);
void t_select_nfds(const struct calls *c);
void t_realtime_relative(const struct calls *c);
void t_small_nofile(void);
void t_threads(void);
void t_fork(const char *expect);

#endif
