// SPDX-License-Identifier: GPL-2.0
/*
 * How arming scales (issue 27): with the CPUs, and with the timers.
 *
 * scale: threads re-arming their own timers as fast as they can, one
 * pinned to each CPU ("Nt") and one alone ("1t"), each owning SCALE_OWN
 * timers and re-arming them in turn, the modes taking turns
 * (SCALE_SLICE at a time, the order rotating).  Two patterns of
 * absolute deadlines: "earliest", every other arm the earliest deadline
 * of the whole system (1 s ahead, a little earlier each time: whatever
 * a source does when its earliest deadline moves, it does here half the
 * time), the others 3 s ahead; "random", uniform in 1-3 s.  Figures:
 * arms per second, all threads together.
 *
 * growth: the cost of one arm (a random deadline 1-2 h ahead), of one
 * cancel (settime to zero) and of one delivery (a one-shot 2 ms ahead
 * read on a busy CPU: deadline to read's return), with 10, 1,000 and
 * 100,000 other timers armed at random deadlines in the same hour, per
 * mode.  Logarithmic growth means the 100,000 figure stays within a small
 * factor of the 10 one.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "bench.h"

#define SCALE_OWN	64
#define SCALE_MAXT	64

enum { P_EARLIEST, P_RANDOM, NPATTERNS };
static const char *const pattern_name[NPATTERNS] = { "earliest", "random" };

struct scale_thread {
	pthread_t th;
	int cpu, tid, nthreads, mode, pattern;
	int fds[NMODES][SCALE_OWN];
	uint64_t arms;
	unsigned int seed;
};

static atomic_int scale_go, scale_stop;

static void *scale_fn(void *arg)
{
	struct scale_thread *t = arg;
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };
	int64_t base, v;
	uint64_t n = 0;
	int *fds;

	pin_self(t->cpu);
	while (!atomic_load(&scale_go))
		;
	fds = t->fds[t->mode];
	base = now_ns() + 1000000000LL;
	while (!atomic_load_explicit(&scale_stop, memory_order_relaxed)) {
		if (t->pattern == P_RANDOM)
			v = now_ns() + 1000000000LL +
			    (int64_t)(rand_r(&t->seed) % 2000000000U);
		else if (n & 1)
			v = now_ns() + 3000000000LL;
		else	/* each thread's steps interleave with the others' */
			v = base - (int64_t)(n * t->nthreads + t->tid);
		its.it_value = h_ns_ts(v);
		if (t_settime(t->mode, fds[n % SCALE_OWN], TFD_TIMER_ABSTIME,
			      &its, NULL))
			die("settime: %s", strerror(errno));
		n++;
	}
	t->arms = n;
	return NULL;
}

/* @nthreads threads of @mode arming for @secs: arms per second in all. */
static double scale_run(struct scale_thread *t, int nthreads, int mode,
			int pattern, double secs)
{
	int64_t t0, t1;
	uint64_t arms = 0;
	int i;

	atomic_store(&scale_go, 0);
	atomic_store(&scale_stop, 0);
	for (i = 0; i < nthreads; i++) {
		t[i].mode = mode;
		t[i].pattern = pattern;
		t[i].nthreads = nthreads;
		if (pthread_create(&t[i].th, NULL, scale_fn, &t[i]))
			die("pthread_create");
	}
	h_sleep_ns(20000000);
	t0 = now_ns();
	atomic_store(&scale_go, 1);
	h_sleep_ns((int64_t)(secs * 1e9));
	atomic_store(&scale_stop, 1);
	for (i = 0; i < nthreads; i++) {
		pthread_join(t[i].th, NULL);
		arms += t[i].arms;
	}
	t1 = now_ns();
	return arms / ((t1 - t0) / 1e9);
}

void bench_scale(void)
{
	int nthreads = cfg.ncpus < SCALE_MAXT ? cfg.ncpus : SCALE_MAXT;
	double secs = cfg.quick ? 0.3 : 1.0, v;
	struct scale_thread *t = calloc(SCALE_MAXT, sizeof(*t));
	int i, m, k, rep, p, c, counts[2] = { 1, nthreads };
	char metric[48];

	if (!t)
		die("out of memory");
	out_i("scale_threads", "%d", nthreads);
	for (i = 0; i < nthreads; i++) {
		t[i].cpu = i;
		t[i].tid = i;
		t[i].seed = 12345 + i;
		for (m = 0; m < NMODES; m++)
			for (k = 0; k < SCALE_OWN; k++) {
				t[i].fds[m][k] = t_create(m, TFD_CLOEXEC);
				if (t[i].fds[m][k] < 0)
					die("create: %s", strerror(errno));
			}
	}
	for (rep = 0; rep < cfg.reps; rep++) {
		progress("scale: rep %d/%d", rep + 1, cfg.reps);
		for (p = 0; p < NPATTERNS; p++)
			for (c = 0; c < 2; c++)
				for (i = 0; i < NMODES; i++) {
					m = mode_at(rep, i);
					v = scale_run(t, counts[c], m, p, secs);
					snprintf(metric, sizeof(metric),
						 "arms_%s_%s", c ? "Nt" : "1t",
						 pattern_name[p]);
					out_r("scale", m, metric, rep, v);
				}
	}
	for (i = 0; i < nthreads; i++)
		for (m = 0; m < NMODES; m++)
			for (k = 0; k < SCALE_OWN; k++)
				close(t[i].fds[m][k]);
	free(t);
}

/* ---- growth ---- */

#define GROWTH_CALLS	2000
#define GROWTH_LATE	15

static void arm_far(int mode, int fd)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };

	its.it_value = h_ns_ts(3600000000000LL + (int64_t)(frand() * 3600e9));
	if (t_settime(mode, fd, 0, &its, NULL))
		die("settime: %s", strerror(errno));
}

/* ns per arm and per cancel of @fd, and the p50 delivery delay in us */
static void growth_measure(int mode, int fd, double *arm, double *cancel,
			   double *deliver)
{
	static const struct itimerspec zero;
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };
	struct samples s = { 0 };
	int64_t sum_arm = 0, sum_cancel = 0, dl;
	uint64_t a, b, c, ticks;
	int i;

	for (i = 0; i < GROWTH_CALLS; i++) {
		its.it_value = h_ns_ts(3600000000000LL +
				       (int64_t)(frand() * 3600e9));
		a = rdtsc();
		t_settime(mode, fd, 0, &its, NULL);
		b = rdtsc();
		t_settime(mode, fd, 0, &zero, NULL);
		c = rdtsc();
		sum_arm += b - a;
		sum_cancel += c - b;
	}
	*arm = tsc_to_ns(sum_arm) / GROWTH_CALLS;
	*cancel = tsc_to_ns(sum_cancel) / GROWTH_CALLS;

	spinners_start_on(cfg.cpu);
	measuring_prio(1);
	for (i = 0; i < GROWTH_LATE; i++) {
		dl = now_ns() + 2000000;
		its.it_value = h_ns_ts(dl);
		if (t_settime(mode, fd, TFD_TIMER_ABSTIME, &its, NULL) ||
		    read(fd, &ticks, sizeof(ticks)) != sizeof(ticks))
			die("growth: settime/read: %s", strerror(errno));
		samples_add(&s, (now_ns() - dl) / 1e3);
	}
	measuring_prio(0);
	spinners_stop();
	*deliver = samples_pct(&s, 50);
	samples_free(&s);
}

void bench_growth(void)
{
	static const int full[] = { 10, 1000, 100000 }, quick[] = { 10, 1000, 10000 };
	const int *sizes = cfg.quick ? quick : full;
	int nmax = sizes[2], rep, i, j, m, k, fd;
	double arm, cancel, deliver;
	char metric[48];
	int *fds = calloc(nmax, sizeof(int));

	if (!fds)
		die("out of memory");
	for (rep = 0; rep < cfg.reps; rep++) {
		progress("growth: rep %d/%d", rep + 1, cfg.reps);
		for (i = 0; i < NMODES; i++) {
			m = mode_at(rep, i);
			fd = t_create(m, TFD_CLOEXEC);
			if (fd < 0)
				die("create: %s", strerror(errno));
			for (j = 0, k = 0; j < 3; j++) {
				for (; k < sizes[j]; k++) {
					fds[k] = t_create(m, TFD_CLOEXEC);
					if (fds[k] < 0)
						die("create %d: %s", k,
						    strerror(errno));
					arm_far(m, fds[k]);
				}
				growth_measure(m, fd, &arm, &cancel, &deliver);
				snprintf(metric, sizeof(metric), "arm_ns_%d",
					 sizes[j]);
				out_r("growth", m, metric, rep, arm);
				snprintf(metric, sizeof(metric), "cancel_ns_%d",
					 sizes[j]);
				out_r("growth", m, metric, rep, cancel);
				snprintf(metric, sizeof(metric),
					 "deliver_us_%d", sizes[j]);
				out_r("growth", m, metric, rep, deliver);
			}
			for (k = 0; k < nmax; k++)
				close(fds[k]);
			close(fd);
		}
	}
	free(fds);
}
