// SPDX-License-Identifier: GPL-2.0
/*
 * Idle wake-ups: local timer interrupts per second (the LOC row of
 * /proc/interrupts, summed over the CPUs) while N periodic timers run on
 * an otherwise idle guest, against a baseline window with no timer.
 *
 * A reader thread pinned to cfg.cpu creates and arms the timers (so a
 * deferrable one lives on that CPU), with a random phase each, and reads
 * every expiry through epoll, as a real program must: periodic timers are
 * only re-armed by read.  The main thread sleeps on another CPU and reads
 * the counters.  Each configuration gets its own baseline window, taken
 * next to its three mode windows.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "bench.h"

struct wake_run {
	int mode;		/* -1: baseline, no timer */
	int n;
	int64_t interval;
	int efd;		/* written to stop the reader */
	volatile int ready;
	uint64_t expiries;
};

static void *reader(void *arg)
{
	struct wake_run *w = arg;
	struct epoll_event ev, evs[128];
	int *fds = NULL, ep, i, stop = 0;
	int64_t now;

	pin_self(cfg.cpu);
	ep = epoll_create1(EPOLL_CLOEXEC);
	ev.events = EPOLLIN;
	ev.data.u32 = ~0U;
	epoll_ctl(ep, EPOLL_CTL_ADD, w->efd, &ev);
	if (w->mode >= 0) {
		fds = calloc(w->n, sizeof(*fds));
		now = now_ns();
		for (i = 0; i < w->n; i++) {
			struct itimerspec its;

			fds[i] = t_create(w->mode, TFD_NONBLOCK | TFD_CLOEXEC);
			if (fds[i] < 0)
				die("create: %s", strerror(errno));
			ts_from_ns(&its.it_value, now + 20000000 +
				   (int64_t)(frand() * (double)w->interval));
			ts_from_ns(&its.it_interval, w->interval);
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
			uint64_t u;

			if (evs[i].data.u32 == ~0U) {
				stop = 1;
				continue;
			}
			if (read(fds[evs[i].data.u32], &u, sizeof(u)) == sizeof(u))
				w->expiries += u;
		}
	}
	if (fds) {
		for (i = 0; i < w->n; i++)
			close(fds[i]);
		free(fds);
	}
	close(ep);
	return NULL;
}

/* LOC interrupts per second during one window; expiries per second too */
static double window(int mode, int n, int64_t interval, double *exp_rate,
		     double *cpu_rate)
{
	struct wake_run w = { .mode = mode, .n = n, .interval = interval };
	uint64_t l0, l1, c0 = 0, c1 = 0, e0, one = 1;
	int64_t t0, t1, settle;
	pthread_t tid;

	w.efd = eventfd(0, EFD_CLOEXEC);
	if (pthread_create(&tid, NULL, reader, &w))
		die("pthread_create");
	while (!w.ready)
		sleep_ns(1000000);
	/* past the first expiry of every timer, into the steady state */
	settle = interval + 100000000;
	sleep_ns(settle > 300000000 ? settle : 300000000);
	e0 = w.expiries;
	l0 = loc_interrupts(cfg.cpu, &c0);
	t0 = now_ns();
	sleep_ns((int64_t)(cfg.wake_window_s * 1e9));
	l1 = loc_interrupts(cfg.cpu, &c1);
	t1 = now_ns();
	*exp_rate = (double)(w.expiries - e0) * 1e9 / (double)(t1 - t0);
	*cpu_rate = (double)(c1 - c0) * 1e9 / (double)(t1 - t0);
	if (write(w.efd, &one, sizeof(one)) != sizeof(one))
		die("eventfd write");
	pthread_join(tid, NULL);
	close(w.efd);
	return (double)(l1 - l0) * 1e9 / (double)(t1 - t0);
}

void bench_wake(void)
{
	static const int ns[] = { 1, 10, 100, 1000 };
	static const int ivs_ms[] = { 10, 100 };
	int rep, a, b, i, m, cfgno;
	char metric[64];
	double r, e, c;

	progress("wake: LOC/s, N timers x {10, 100} ms, %.1f s windows",
		 cfg.wake_window_s);
	/* the main thread, which sleeps and samples, stays off cfg.cpu */
	pin_self(cfg.cpu ? 0 : 1);
	for (rep = 0; rep < cfg.reps; rep++) {
		cfgno = 0;
		for (a = 0; a < 4 && ns[a] <= cfg.wake_nmax; a++)
			for (b = 0; b < 2; b++, cfgno++) {
				int64_t iv = ivs_ms[b] * 1000000LL;

				if (cfg.wake_only_n &&
				    (ns[a] != cfg.wake_only_n ||
				     ivs_ms[b] != cfg.wake_only_ms))
					continue;

				snprintf(metric, sizeof(metric), "N%d_%dms",
					 ns[a], ivs_ms[b]);
				/* baseline first or last, alternately */
				if ((rep + cfgno) % 2 == 0) {
					r = window(-1, 0, iv, &e, &c);
					out_r("wake.base", -1, metric, rep, r);
					out_r("wake.base1", -1, metric, rep, c);
				}
				for (i = 0; i < NMODES; i++) {
					m = mode_at(rep + cfgno, i);
					if (cfg.wake_modes &&
					    !(cfg.wake_modes & (1U << m)))
						continue;
					r = window(m, ns[a], iv, &e, &c);
					out_r("wake.loc", m, metric, rep, r);
					out_r("wake.loc1", m, metric, rep, c);
					out_r("wake.exp", m, metric, rep, e);
				}
				if ((rep + cfgno) % 2 == 1) {
					r = window(-1, 0, iv, &e, &c);
					out_r("wake.base", -1, metric, rep, r);
					out_r("wake.base1", -1, metric, rep, c);
				}
				out_flush();
			}
	}
	pin_self(cfg.cpu);
}
