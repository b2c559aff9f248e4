/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tests/stress: what stress.c (the shared table, the helpers, the case)
 * shares with stress/workers.c (the workers and the clock stepper) and
 * stress/oracles.c (the oracle, cancel and hotplug threads).
 */
#ifndef DTFD_TESTS_STRESS_H
#define DTFD_TESTS_STRESS_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

#define NSLOTS		12
#define MAX_THREADS	32

#ifndef RWF_NOWAIT
#define RWF_NOWAIT	0x00000008
#endif

enum {
	C_SETTIME, C_GETTIME, C_READ, C_READ_BLOCK, C_POLL, C_EPOLL,
	C_TICKS, C_TOL, C_REOPEN, C_DUP, C_FORK, C_STATS, C_CLOCK, C_N
};

struct worker {
	int id;
	uint64_t rng;
	timer_t guard;
	int have_guard;
	unsigned long long n[C_N], errs, ticks, zero_reads;
};

#define NORACLES	3

enum { V_EARLY, V_ZERO, V_COUNT, V_CANCEL, V_SPURIOUS, V_N };

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

/* stress.c */
extern int tbl[NSLOTS];
extern int epfd;
extern int ctl_fd;
extern int stop;
extern int failures;
uint64_t rnd(struct worker *w);
uint64_t below(struct worker *w, uint64_t n);
void st_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void check_err(struct worker *w, const char *what, long r);
void guard(struct worker *w, long long ns);
void check_its(const struct itimerspec *its, const char *what);
int any_mode(struct worker *w);
void guard_init(struct worker *w);

/* stress/workers.c */
extern unsigned long steps_begun, steps_done;
void *worker_main(void *arg);
void *clock_main(void *arg);

/* stress/oracles.c */
extern struct oracle oracles[NORACLES];
extern unsigned long long violations[V_N];
extern unsigned long long oracle_checks, oracle_epochs, hotplugs;
extern int cancel_fd, cancel_ep;
void oracle_open(struct oracle *o);
void oracle_close(struct oracle *o);
void *oracle_main(void *arg);
void *oracle_side(void *arg);
void cancel_open(void);
void *cancel_main(void *arg);
void *hotplug_main(void *arg);

#endif
