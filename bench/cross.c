// SPDX-License-Identifier: GPL-2.0
/*
 * Deferrable lateness when the CPU that armed the timer idles and another
 * CPU is busy: a thread on CPU 0 arms every timer (one-shot, absolute),
 * then sleeps; the reader runs on cfg.cpu, kept busy by a spinner, and
 * after each expiry asks the arming thread to arm the next one.  So every
 * expiry was armed on CPU 0, which idles between requests.  A deferrable
 * timer that rides any awake CPU (DTFD_TIMER_DEFERRABLE) is delivered on
 * the busy CPU's next tick: about one jiffy.  One that rides only its own
 * CPU (DTFD_TIMER_PERCPU) waits for CPU 0 to wake; strict timers beside
 * them are the reference for the wake-up path.  Intervals 10 ms, 100 ms
 * and 1 s, all at once, each timer at a random phase; lateness is the
 * time from the deadline to the return of the read(2) that reports it.
 *
 * Reported as test "cross" (modes deferrable, strict and, where timerfd
 * takes TFD_TIMER_DEFERRABLE, intree) and "cross.percpu" (mode
 * deferrable), metrics p50_<interval>, p99_<...>.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <dtimerfd.h>

#include "bench.h"

static const struct {
	const char *name;
	int64_t interval;
	int count;
} cgroups[] = {
	{ "10ms", 10000000LL, 2 },
	{ "100ms", 100000000LL, 4 },
	{ "1s", 1000000000LL, 10 },
};
#define NCG	((int)(sizeof(cgroups) / sizeof(cgroups[0])))

/*
 * the kinds measured: deferrable (any CPU), per-CPU deferrable, strict and,
 * where timerfd takes it, the in-tree flag (issue 30), last
 */
enum { C_ANY, C_PERCPU, C_STRICT, C_INTREE, NCK_MAX };
#define NCK	(have_intree ? NCK_MAX : NCK_MAX - 1)

struct cross_timer {
	int fd;
	int kind;
	int group;
	int64_t deadline;	/* written by the arming thread before arming */
};

struct cross_run {
	struct cross_timer *t;
	int n;
	int req[2];		/* pipe: indices of timers to re-arm */
	int64_t end;
};

static void cross_arm(struct cross_timer *x)
{
	int flags = TFD_TIMER_ABSTIME;
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };

	if (x->kind == C_ANY)
		flags |= DTFD_TIMER_DEFERRABLE;
	else if (x->kind == C_PERCPU)
		flags |= DTFD_TIMER_DEFERRABLE | DTFD_TIMER_PERCPU;
	its.it_value = h_ns_ts(x->deadline);
	/* M_STRICT: the module's settime with the flags above, as they are */
	if (t_settime(x->kind == C_INTREE ? M_INTREE : M_STRICT, x->fd, flags,
		      &its, NULL))
		die("cross: settime: %s", strerror(errno));
}

/* CPU 0: arm everything, then each timer again when the reader asks. */
static void *cross_armer(void *arg)
{
	struct cross_run *r = arg;
	int i;

	pin_self(0);
	for (i = 0; i < r->n; i++)
		cross_arm(&r->t[i]);
	while (read(r->req[0], &i, sizeof(i)) == sizeof(i)) {
		struct cross_timer *x;
		int64_t iv, now;

		if (i < 0)
			break;
		x = &r->t[i];
		iv = cgroups[x->group].interval;
		now = now_ns();
		x->deadline += iv;
		if (x->deadline <= now)	/* late by more than a period */
			x->deadline += ((now - x->deadline) / iv + 1) * iv;
		cross_arm(x);
	}
	return NULL;
}

static void cross_rep(double duration_s, struct samples s[NCK_MAX][NCG])
{
	struct cross_run r = { 0 };
	struct epoll_event ev, evs[64];
	int64_t start;
	pthread_t armer;
	int g, k, i, ep, stop = -1;

	for (g = 0; g < NCG; g++)
		r.n += NCK * cgroups[g].count;
	r.t = calloc(r.n, sizeof(*r.t));
	if (!r.t || pipe(r.req))
		die("cross: %s", strerror(errno));
	ep = epoll_create1(EPOLL_CLOEXEC);
	start = now_ns() + 200000000LL;
	for (g = 0, i = 0; g < NCG; g++)
		for (k = 0; k < NCK * cgroups[g].count; k++, i++) {
			struct cross_timer *x = &r.t[i];

			x->kind = k % NCK;
			x->group = g;
			x->fd = x->kind == C_INTREE ?
				timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK |
					       TFD_CLOEXEC) :
				dtimerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK |
						TFD_CLOEXEC);
			if (x->fd < 0)
				die("cross: create: %s", strerror(errno));
			x->deadline = start + (int64_t)(frand() *
					(double)cgroups[g].interval);
			ev.events = EPOLLIN;
			ev.data.u32 = i;
			epoll_ctl(ep, EPOLL_CTL_ADD, x->fd, &ev);
		}
	r.end = start + (int64_t)(duration_s * 1e9);
	if (pthread_create(&armer, NULL, cross_armer, &r))
		die("cross: thread");

	for (;;) {
		int64_t left = r.end - now_ns();
		int n;

		if (left <= 0)
			break;
		n = epoll_wait(ep, evs, 64, (int)(left / 1000000) + 1);
		for (i = 0; i < n; i++) {
			int idx = (int)evs[i].data.u32;
			struct cross_timer *x = &r.t[idx];
			int64_t deadline = x->deadline, now;
			uint64_t u;

			if (read(x->fd, &u, sizeof(u)) != sizeof(u))
				continue;
			now = now_ns();
			if (now >= start + 100000000LL)
				samples_add(&s[x->kind][x->group],
					    (double)(now - deadline) / 1000.0);
			if (write(r.req[1], &idx, sizeof(idx)) != sizeof(idx))
				die("cross: pipe");
		}
	}
	if (write(r.req[1], &stop, sizeof(stop)) != sizeof(stop))
		die("cross: pipe");
	pthread_join(armer, NULL);
	for (i = 0; i < r.n; i++)
		close(r.t[i].fd);
	close(r.req[0]);
	close(r.req[1]);
	close(ep);
	free(r.t);
}

void bench_cross(void)
{
	static const char *const test[NCK_MAX] = { "cross", "cross.percpu",
						    "cross", "cross" };
	static const int mode[NCK_MAX] = { M_DEFER, M_DEFER, M_STRICT,
					   M_INTREE };
	struct samples s[NCK_MAX][NCG];
	char metric[32];
	int rep, g, k;

	if (cfg.ncpus < 2 || cfg.cpu == 0) {
		progress("cross: needs a second CPU for the reader; skipped");
		return;
	}
	progress("cross: armed on CPU 0, read on busy CPU %d, %.1f s per rep",
		 cfg.cpu, cfg.late_duration_s);
	memset(s, 0, sizeof(s));
	pin_self(cfg.cpu);
	for (rep = 0; rep < cfg.reps; rep++) {
		spinners_start_on(cfg.cpu);
		measuring_prio(1);
		for (k = 0; k < NCK; k++)
			for (g = 0; g < NCG; g++)
				samples_reset(&s[k][g]);
		cross_rep(cfg.late_duration_s, s);
		measuring_prio(0);
		spinners_stop();
		for (k = 0; k < NCK; k++)
			for (g = 0; g < NCG; g++) {
				if (!s[k][g].n)
					continue;
				snprintf(metric, sizeof(metric), "p50_%s",
					 cgroups[g].name);
				out_r(test[k], mode[k], metric, rep,
				      samples_pct(&s[k][g], 50));
				snprintf(metric, sizeof(metric), "p99_%s",
					 cgroups[g].name);
				out_r(test[k], mode[k], metric, rep,
				      samples_pct(&s[k][g], 99));
				snprintf(metric, sizeof(metric), "n_%s",
					 cgroups[g].name);
				out_r(test[k], mode[k], metric, rep,
				      (double)s[k][g].n);
			}
		out_flush();
	}
	for (k = 0; k < NCK; k++)
		for (g = 0; g < NCG; g++)
			samples_free(&s[k][g]);
}
