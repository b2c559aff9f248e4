// SPDX-License-Identifier: GPL-2.0
/*
 * Idle wake-ups: exits from idle per second, every interrupt counted (the
 * local timer's, reschedule and function-call IPIs, other IPIs, devices:
 * every row of /proc/interrupts, summed over the CPUs, and by kind) while
 * N periodic timers run on an otherwise idle guest, against a baseline
 * window with no timer.  (The metric keeps its old name, wake.loc: until
 * issue 26 it counted the local timer alone, which misses the IPI that
 * wakes a reader on another CPU.)
 *
 * A reader thread pinned to cfg.cpu creates and arms the timers (so a
 * deferrable one lives on that CPU), with a random phase each, and reads
 * every expiry through epoll, as a real program must: periodic timers are
 * only re-armed by read.  The main thread sleeps on another CPU and reads
 * the counters.  Each configuration gets its own baseline window, taken
 * next to its mode windows.
 *
 * Every mode runs here, the tolerance variants too (issue 8): strict
 * timers with a slack may fire anywhere in [deadline, deadline + slack],
 * so the kernel can serve several with one interrupt; deferrable timers
 * with a bound are delivered by deadline + bound at the latest even on
 * this idle CPU.  So each window also records how late every expiry was
 * delivered: from the deadline of the oldest expiry a read reports (the
 * one the timer was armed for) to the return of that read, measured with
 * CLOCK_MONOTONIC by the reader; negative would be early.  And the
 * per-timer statistics of the window's first timer (dtimerfd_get_stats()),
 * read just before it is closed.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <dtimerfd.h>

#include "bench.h"

#define WAKE_NCFG	8	/* N in 1, 10, 100, 1000 x {10, 100} ms */

struct wake_run {
	int mode;		/* -1: baseline, no timer */
	int n;
	int64_t interval;
	int efd;		/* written to stop the reader */
	volatile int ready;
	volatile int measuring;	/* record lateness: inside the window */
	uint64_t expiries;
	struct samples *late;	/* us after the deadline, while measuring */
	struct dtfd_stats st;	/* the first timer's, dtimerfd modes */
	int have_stats;
	double kind[IRQ_KINDS];	/* idle exits per second by kind */
};

static void *reader(void *arg)
{
	struct wake_run *w = arg;
	struct epoll_event ev, evs[128];
	int *fds = NULL, ep, i, stop = 0;
	int64_t now, *next = NULL;

	/* --wake-unpinned: where the scheduler puts it, as most programs run */
	pin_self(cfg.wake_unpinned ? -1 : cfg.cpu);
	ep = epoll_create1(EPOLL_CLOEXEC);
	ev.events = EPOLLIN;
	ev.data.u32 = ~0U;
	epoll_ctl(ep, EPOLL_CTL_ADD, w->efd, &ev);
	if (w->mode >= 0) {
		fds = calloc(w->n, sizeof(*fds));
		next = calloc(w->n, sizeof(*next));
		now = now_ns();
		for (i = 0; i < w->n; i++) {
			struct itimerspec its;

			fds[i] = t_create(w->mode, TFD_NONBLOCK | TFD_CLOEXEC);
			if (fds[i] < 0)
				die("create: %s", strerror(errno));
			next[i] = now + 20000000 +
				  (int64_t)(frand() * (double)w->interval);
			its.it_value = h_ns_ts(next[i]);
			its.it_interval = h_ns_ts(w->interval);
			if (t_settime(w->mode, fds[i], TFD_TIMER_ABSTIME, &its,
				      NULL))
				die("settime: %s", strerror(errno));
			ev.data.u32 = i;
			epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev);
		}
	}
	w->ready = 1;
	while (!stop) {
		int k = epoll_wait(ep, evs, 128, -1);

		for (i = 0; i < k; i++) {
			uint32_t t = evs[i].data.u32;
			uint64_t u;

			if (t == ~0U) {
				stop = 1;
				continue;
			}
			if (read(fds[t], &u, sizeof(u)) != sizeof(u))
				continue;
			now = now_ns();
			/* the oldest expiry this read reports: the armed one */
			if (w->measuring)
				samples_add(w->late,
					    (double)(now - next[t]) / 1000.0);
			next[t] += (int64_t)u * w->interval;
			w->expiries += u;
		}
	}
	if (fds) {
		if (!mode_is_timerfd(w->mode) &&
		    dtimerfd_get_stats(fds[0], &w->st) == 0)
			w->have_stats = 1;
		for (i = 0; i < w->n; i++)
			close(fds[i]);
		free(fds);
		free(next);
	}
	close(ep);
	return NULL;
}

/*
 * Idle exits (interrupts of every kind) per second during one window, all
 * CPUs; *cpu_rate: those of the timers' CPU; w->kind: per kind, all CPUs;
 * expiries per second too.
 */
static double window(struct wake_run *w, double *exp_rate, double *cpu_rate)
{
	struct irq_counts a, b;
	uint64_t e0, one = 1;
	int64_t t0, t1, settle;
	pthread_t tid;
	double secs;
	int k;

	w->efd = eventfd(0, EFD_CLOEXEC);
	if (pthread_create(&tid, NULL, reader, w))
		die("pthread_create");
	while (!w->ready)
		h_sleep_ns(1000000);
	/* past the first expiry of every timer, into the steady state */
	settle = w->interval + 100000000;
	h_sleep_ns(settle > 300000000 ? settle : 300000000);
	e0 = w->expiries;
	w->measuring = 1;
	idle_exits(&a);
	t0 = now_ns();
	h_sleep_ns((int64_t)(cfg.wake_window_s * 1e9));
	idle_exits(&b);
	t1 = now_ns();
	w->measuring = 0;
	secs = (double)(t1 - t0) / 1e9;
	*exp_rate = (double)(w->expiries - e0) / secs;
	*cpu_rate = (double)(irq_counts_sum(&b, cfg.cpu, -1) -
			     irq_counts_sum(&a, cfg.cpu, -1)) / secs;
	for (k = 0; k < IRQ_KINDS; k++)
		w->kind[k] = (double)(irq_counts_sum(&b, -1, k) -
				      irq_counts_sum(&a, -1, k)) / secs;
	if (write(w->efd, &one, sizeof(one)) != sizeof(one))
		die("eventfd write");
	pthread_join(tid, NULL);
	close(w->efd);
	return (double)(irq_counts_sum(&b, -1, -1) -
			irq_counts_sum(&a, -1, -1)) / secs;
}

/* The window's idle exits by kind, as "wake.kind.KIND" (or basekind) */
static void out_kinds(const char *test, int mode, const char *cfgname,
		      int rep, const struct wake_run *w)
{
	char name[48];
	int k;

	for (k = 0; k < IRQ_KINDS; k++) {
		snprintf(name, sizeof(name), "%s.%s", test, irq_kind_name[k]);
		out_r(name, mode, cfgname, rep, w->kind[k]);
	}
}

static void out_stats(const char *test, int mode, const char *cfgname,
		      int rep, const struct dtfd_stats *st)
{
	char metric[64];

#define STAT(name, v) do { \
		snprintf(metric, sizeof(metric), "%s_%.40s", name, cfgname); \
		out_r(test, mode, metric, rep, (double)(v)); \
	} while (0)
	STAT("expirations", st->expirations);
	STAT("deliveries", st->deliveries);
	STAT("late_mean_us", st->deliveries ?
	     (double)st->late_total_ns / (double)st->deliveries / 1000.0 : 0);
	STAT("late_max_us", (double)st->late_max_ns / 1000.0);
	STAT("deferred", st->deferred);
	STAT("backstop", st->backstop);
#undef STAT
}

/* one window of one mode; its figures for repetition @rep */
static void mode_window(int m, int n, int64_t iv, const char *cfgname, int rep,
			struct samples *pooled)
{
	struct samples late = { 0 };
	struct wake_run w = { .mode = m, .n = n, .interval = iv,
			      .late = &late };
	char metric[64];
	double r, e, c;
	size_t j;

	r = window(&w, &e, &c);
	out_kinds("wake.kind", m, cfgname, rep, &w);
	out_r("wake.loc", m, cfgname, rep, r);
	out_r("wake.loc1", m, cfgname, rep, c);
	out_r("wake.exp", m, cfgname, rep, e);
	snprintf(metric, sizeof(metric), "n_%.40s", cfgname);
	out_r("wake.late", m, metric, rep, (double)late.n);
	if (late.n) {
		snprintf(metric, sizeof(metric), "p50_%.40s", cfgname);
		out_r("wake.late", m, metric, rep, samples_pct(&late, 50));
		snprintf(metric, sizeof(metric), "p99_%.40s", cfgname);
		out_r("wake.late", m, metric, rep, samples_pct(&late, 99));
		snprintf(metric, sizeof(metric), "max_%.40s", cfgname);
		out_r("wake.late", m, metric, rep, samples_max(&late));
		snprintf(metric, sizeof(metric), "min_%.40s", cfgname);
		out_r("wake.late", m, metric, rep, samples_pct(&late, 0));
	}
	for (j = 0; j < late.n; j++)
		samples_add(pooled, late.v[j]);
	samples_free(&late);
	if (w.have_stats)
		out_stats("wake.stats", m, cfgname, rep, &w.st);
}

void bench_wake(void)
{
	static const int ns[] = { 1, 10, 100, 1000 };
	static const int ivs_ms[] = { 10, 100 };
	static struct samples pooled[WAKE_NCFG][NALLMODES];
	static char cfgnames[WAKE_NCFG][32];
	int rep, a, b, i, m, cfgno;
	double r, e, c;

	progress("wake: idle exits/s, N timers x {10, 100} ms, %d modes, %.1f s windows",
		 NALLMODES, cfg.wake_window_s);
	/* the main thread, which sleeps and samples, stays off cfg.cpu */
	pin_self(cfg.cpu ? 0 : 1);
	for (rep = 0; rep < cfg.reps; rep++) {
		cfgno = 0;
		for (a = 0; a < 4 && ns[a] <= cfg.wake_nmax; a++)
			for (b = 0; b < 2; b++, cfgno++) {
				int64_t iv = ivs_ms[b] * 1000000LL;
				char *metric = cfgnames[cfgno];

				if (cfg.wake_only_n &&
				    (ns[a] != cfg.wake_only_n ||
				     ivs_ms[b] != cfg.wake_only_ms))
					continue;

				snprintf(metric, sizeof(cfgnames[0]), "N%d_%dms",
					 ns[a], ivs_ms[b]);
				/* baseline first or last, alternately */
				if ((rep + cfgno) % 2 == 0) {
					struct wake_run w = { .mode = -1,
							      .interval = iv };

					r = window(&w, &e, &c);
					out_kinds("wake.basekind", -1, metric,
						  rep, &w);
					out_r("wake.base", -1, metric, rep, r);
					out_r("wake.base1", -1, metric, rep, c);
				}
				for (i = 0; i < NALLMODES; i++) {
					m = (rep + cfgno + i) % NALLMODES;
					if ((cfg.wake_modes &&
					     !(cfg.wake_modes & (1U << m))) ||
					    !mode_available(m))
						continue;
					mode_window(m, ns[a], iv, metric, rep,
						    &pooled[cfgno][m]);
				}
				if ((rep + cfgno) % 2 == 1) {
					struct wake_run w = { .mode = -1,
							      .interval = iv };

					r = window(&w, &e, &c);
					out_kinds("wake.basekind", -1, metric,
						  rep, &w);
					out_r("wake.base", -1, metric, rep, r);
					out_r("wake.base1", -1, metric, rep, c);
				}
				out_flush();
			}
	}
	/* pooled lateness: a p99 per configuration, distributions at N = 10 */
	for (cfgno = 0; cfgno < WAKE_NCFG; cfgno++)
		for (m = 0; m < NALLMODES; m++) {
			struct samples *s = &pooled[cfgno][m];
			char test[64];

			if (!s->n)
				continue;
			out_r("wake.late.pooled", m, cfgnames[cfgno], 0,
			      samples_pct(s, 99));
			if (!strncmp(cfgnames[cfgno], "N10_", 4)) {
				snprintf(test, sizeof(test), "wake.late.%.40s",
					 cfgnames[cfgno]);
				out_q(test, m, s);
			}
			samples_free(s);
		}
	out_flush();
	pin_self(cfg.cpu);
}
