/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dtbench: native timerfd vs dtimerfd, measured side by side in one guest.
 *
 * Every test interleaves the modes inside each repetition (the order
 * rotates from one repetition to the next), so slow drifts of the TCG host
 * hit all modes alike.  Results go to stdout as lines the host parses
 * (bench/report.awk):
 *
 *   @@ R <test> <mode> <metric> <rep> <value>	one figure of one repetition
 *   @@ Q <test> <mode> <percentile> <value>	pooled distribution (plots)
 *   @@ I <key> <value...>				facts about the guest
 *
 * Times are in microseconds unless the metric name says otherwise.
 */
#ifndef DTBENCH_H
#define DTBENCH_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

#include "util.h"	/* ../tests/util.h: shared with the tests */
#include "../examples/irqs.h"

enum bench_mode {
	M_NATIVE,	/* timerfd_create(2) */
	M_STRICT,	/* dtimerfd, no flag: hrtimer */
	M_DEFER,	/* dtimerfd, DTFD_TIMER_DEFERRABLE */
	NMODES,
	/*
	 * dtimerfd_set_tolerance() variants (issue 8), measured by wake and
	 * late only, against strict and deferrable: strict timers with a
	 * slack, deferrable timers with a bound on the deferral.
	 */
	M_SLACK_A = NMODES,	/* strict, slack cfg.slack_ns[0] */
	M_SLACK_B,		/* strict, slack cfg.slack_ns[1] */
	M_BOUND_A,		/* deferrable, max_defer cfg.bound_ns[0] */
	M_BOUND_B,		/* deferrable, max_defer cfg.bound_ns[1] */
	/*
	 * The kernel's own TFD_TIMER_DEFERRABLE (patches/, issue 30): run
	 * only where timerfd takes the flag (have_intree).
	 */
	M_INTREE,
	NALLMODES
};

/* timerfd takes TFD_TIMER_DEFERRABLE: the kernel has patches/ applied */
extern int have_intree;
int probe_intree(void);
/* whether @mode runs on this kernel */
static inline int mode_available(int mode)
{
	return mode != M_INTREE || have_intree;
}

/* "native", ..., "slack1ms", "bound20ms" (named after the values) */
extern const char *mode_name[NALLMODES];

static inline int mode_is_deferrable(int mode)
{
	return mode == M_DEFER || mode == M_BOUND_A || mode == M_BOUND_B ||
	       mode == M_INTREE;
}

/* the modes made with timerfd_create(2) */
static inline int mode_is_timerfd(int mode)
{
	return mode == M_NATIVE || mode == M_INTREE;
}

struct bench_cfg {
	int quick;
	int reps;
	int cpu;		/* CPU the measuring threads run on */
	int ncpus;
	int no_fifo;		/* experiments: measuring threads SCHED_OTHER */
	int spin_nice;		/* nice value of the spinners */
	/* lat */
	int lat_oneshot_samples;
	int lat_periodic_samples;
	int lat_periodic_us;
	int lat_defer_cap_ms;	/* give up waiting for an idle deferrable */
	/* ops */
	int ops_iters;
	/* wake */
	double wake_window_s;
	int wake_nmax;		/* N in 1, 10, 100 up to this */
	int wake_only_n;	/* experiments: one configuration only */
	int wake_only_ms;
	unsigned int wake_modes;	/* experiments: bit mask of modes */
	int wake_unpinned;	/* the reader runs on any CPU, not cfg.cpu */
	/* late */
	double late_duration_s;
	int late_10s;		/* include the 10 s interval */
	int late_spin_one;	/* spin only on the timers' CPU */
	/* tolerance variants: slack of M_SLACK_A/B, bound of M_BOUND_A/B */
	int64_t slack_ns[2];
	int64_t bound_ns[2];
	/* mem */
	int mem_timers;
	/* epoll */
	int epoll_timers;
	int epoll_periods;
};

extern struct bench_cfg cfg;

/* timer operations for one mode */
int t_create(int mode, int flags);
int t_settime(int mode, int fd, int flags, const struct itimerspec *nv,
	      struct itimerspec *ov);
int t_gettime(int mode, int fd, struct itimerspec *cur);
int t_set_ticks(int mode, int fd, uint64_t ticks);
void mode_names_init(void);

/* time */
/*
 * The CPU's cheap cycle counter: x86's TSC; on arm64 the generic timer's
 * virtual count (CNTVCT_EL0, 62.5 MHz under QEMU: 16 ns a step), after an
 * isb as the lfence orders the TSC read.
 */
static inline uint64_t rdtsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;

	__asm__ __volatile__("lfence; rdtsc" : "=a"(lo), "=d"(hi) :: "memory");
	return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
	uint64_t v;

	__asm__ __volatile__("isb; mrs %0, cntvct_el0" : "=r"(v) :: "memory");
	return v;
#else
#error "no cycle counter for this architecture in bench/bench.h"
#endif
}

static inline int64_t now_ns(void)
{
	return h_now(CLOCK_MONOTONIC);
}

void tsc_calibrate(void);
double tsc_to_ns(int64_t cycles);
/* a (tsc, CLOCK_MONOTONIC) pair taken as close together as possible */
void tsc_anchor(uint64_t *tsc, int64_t *mono);

/* CPU placement and load */
void pin_self(int cpu);
void measuring_prio(int on);
void spinners_start(void);
void spinners_start_on(int only);
void spinners_stop(void);

/* statistics */
struct samples {
	double *v;
	size_t n, cap;
};

void samples_add(struct samples *s, double x);
void samples_reset(struct samples *s);
void samples_free(struct samples *s);
/* sorts in place; p in [0, 100] */
double samples_pct(struct samples *s, double p);
double samples_max(struct samples *s);

/* output */
void out_r(const char *test, int mode, const char *metric, int rep, double v);
void out_q(const char *test, int mode, struct samples *s);
void out_i(const char *key, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void out_flush(void);
void progress(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* /proc readers */
void idle_exits(struct irq_counts *c);
long meminfo_kb(const char *field);
void slab_shrink(void);

/* mode order of repetition @rep: rotates so each mode goes first in turn */
static inline int mode_at(int rep, int i)
{
	return (rep + i) % NMODES;
}

double frand(void);

/* the tests */
void bench_lat(void);
void bench_ops(void);
void bench_wake(void);
void bench_late(void);
void bench_mem(void);
void bench_epoll(void);
void bench_cross(void);
void bench_scale(void);
void bench_growth(void);

#define die(...) do { fprintf(stderr, "dtbench: " __VA_ARGS__); \
		      fprintf(stderr, "\n"); exit(1); } while (0)

#endif /* DTBENCH_H */
