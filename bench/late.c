// SPDX-License-Identifier: GPL-2.0
/*
 * Deferrable lateness on a busy CPU: periodic deferrable timers of 10 ms,
 * 100 ms, 1 s and 10 s run together on a CPU that a spinning thread keeps
 * busy, so its tick never stops.  Lateness is the time from each expiry's
 * deadline to the return of the read(2) that reports it, as the program
 * sees it.  The design target is one jiffy (the timer runs on the first
 * tick at or after its deadline) plus 0.5 ms.
 *
 * Strict timers of the same intervals run beside them in the same epoll
 * set, read by the same thread: they are the reference for what the
 * wake-up path itself costs on this (emulated) CPU, with exactly the same
 * exposure to the host.  Each timer starts at a random phase; a repetition
 * lasts cfg.late_duration_s, so each 10 s timer contributes one expiry per
 * repetition and there are many of them.
 *
 * The tolerance variants (issue 8) run in the same set: deferrable timers
 * with a bound, which a busy CPU should serve as it serves unbounded ones
 * (on its tick), and strict timers with a slack.  With overruns, lateness
 * is that of the oldest expiry a read reports (the one the timer was armed
 * for).  The per-timer statistics of each mode's first 100 ms timer
 * (dtimerfd_get_stats()) are read at the end of each repetition.
 *
 * Only the timers' CPU spins (--late-spin-all: every CPU): under TCG each
 * busy vCPU is a busy host thread, and with both busy QEMU's own timer
 * thread waits for a host CPU, which adds milliseconds to every wake-up
 * whatever the timer.  The reader runs SCHED_FIFO (see lat.c), the
 * spinner SCHED_OTHER.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <dtimerfd.h>

#include "bench.h"

struct late_group {
	const char *name;
	int64_t interval;
	int count;
};

static const struct late_group groups[] = {
	{ "10ms", 10000000LL, 4 },
	{ "100ms", 100000000LL, 10 },
	{ "1s", 1000000000LL, 10 },
	{ "10s", 10000000000LL, 40 },
};
#define NGROUPS	((int)(sizeof(groups) / sizeof(groups[0])))

struct late_timer {
	int fd;
	int mode;	/* index into late_modes */
	int group;
	int64_t first;
	uint64_t k;
};

static int ngroups(void)
{
	return cfg.late_10s ? NGROUPS : NGROUPS - 1;
}

static const int late_modes[] = { M_DEFER, M_STRICT, M_BOUND_A, M_BOUND_B,
				   M_SLACK_A, M_SLACK_B, M_INTREE };
#define NLATE_MAX	((int)(sizeof(late_modes) / sizeof(late_modes[0])))
/* the modes run here: M_INTREE, last, only where the kernel has it */
#define NLATE	(have_intree ? NLATE_MAX : NLATE_MAX - 1)
#define STATS_GROUP	1	/* the 100 ms timers */

/*
 * One repetition, every mode at once; fills @s[mode index][group] and
 * @st[mode index] (the first STATS_GROUP timer's statistics).
 */
static void late_run(double duration_s, struct samples s[NLATE_MAX][NGROUPS],
		     struct dtfd_stats st[NLATE_MAX])
{
	struct epoll_event ev, evs[64];
	struct late_timer *t;
	int g, i, n = 0, ep;
	int64_t start, end;

	for (g = 0; g < ngroups(); g++)
		n += NLATE * groups[g].count;
	t = calloc(n, sizeof(*t));
	ep = epoll_create1(EPOLL_CLOEXEC);
	start = now_ns();
	end = start + (int64_t)(duration_s * 1e9);
	for (g = 0, i = 0; g < ngroups(); g++) {
		int64_t iv = groups[g].interval;
		int64_t spread = iv < 2000000000LL ? iv : 2000000000LL;
		int j;

		for (j = 0; j < NLATE * groups[g].count; j++, i++) {
			struct itimerspec its;

			t[i].mode = j % NLATE;
			t[i].group = g;
			t[i].fd = t_create(late_modes[t[i].mode],
					   TFD_NONBLOCK | TFD_CLOEXEC);
			if (t[i].fd < 0)
				die("create: %s", strerror(errno));
			t[i].first = start + 200000000LL +
				     (int64_t)(frand() * (double)spread);
			its.it_value = h_ns_ts(t[i].first);
			its.it_interval = h_ns_ts(iv);
			if (t_settime(late_modes[t[i].mode], t[i].fd,
				      TFD_TIMER_ABSTIME, &its, NULL))
				die("settime: %s", strerror(errno));
			ev.events = EPOLLIN;
			ev.data.u32 = i;
			epoll_ctl(ep, EPOLL_CTL_ADD, t[i].fd, &ev);
		}
	}

	for (;;) {
		int64_t left = end - now_ns();
		int k;

		if (left <= 0)
			break;
		k = epoll_wait(ep, evs, 64, (int)(left / 1000000) + 1);
		for (i = 0; i < k; i++) {
			struct late_timer *x = &t[evs[i].data.u32];
			int64_t iv = groups[x->group].interval, now;
			uint64_t u;

			if (read(x->fd, &u, sizeof(u)) != sizeof(u))
				continue;
			now = now_ns();
			/* the oldest expiry reported: the one armed for */
			samples_add(&s[x->mode][x->group], (double)(now - x->first -
				    (int64_t)x->k * iv) / 1000.0);
			x->k += u;
		}
	}
	/* the first timer of each mode in STATS_GROUP (the groups are in order) */
	for (i = 0; i < n; i++)
		if (t[i].group == STATS_GROUP &&
		    (i < NLATE || t[i - NLATE].group != STATS_GROUP) &&
		    !mode_is_timerfd(late_modes[t[i].mode]) &&
		    dtimerfd_get_stats(t[i].fd, &st[t[i].mode]))
			die("dtimerfd_get_stats: %s", strerror(errno));
	for (i = 0; i < n; i++)
		close(t[i].fd);
	close(ep);
	free(t);
}

void bench_late(void)
{
	struct samples s[NLATE_MAX][NGROUPS], pooled[NLATE_MAX][NGROUPS];
	struct dtfd_stats st[NLATE_MAX];
	int rep, g, i, spin = cfg.late_spin_one ? cfg.cpu : -1;
	char metric[32];

	progress("late: busy CPU, %d intervals, %.1f s per rep",
		 ngroups(), cfg.late_duration_s);
	memset(pooled, 0, sizeof(pooled));
	memset(s, 0, sizeof(s));
	pin_self(cfg.cpu);
	for (rep = 0; rep < cfg.reps; rep++) {
		spinners_start_on(spin);
		measuring_prio(1);
		for (i = 0; i < NLATE; i++)
			for (g = 0; g < NGROUPS; g++)
				samples_reset(&s[i][g]);
		memset(st, 0, sizeof(st));
		late_run(cfg.late_duration_s, s, st);
		measuring_prio(0);
		spinners_stop();
		for (i = 0; i < NLATE; i++) {
			const struct dtfd_stats *y = &st[i];
			int mo = late_modes[i];

			if (mode_is_timerfd(mo))	/* no statistics */
				continue;

			out_r("late.stats", mo, "expirations", rep, y->expirations);
			out_r("late.stats", mo, "deliveries", rep, y->deliveries);
			out_r("late.stats", mo, "late_mean_us", rep, y->deliveries ?
			      (double)y->late_total_ns / y->deliveries / 1000.0 : 0);
			out_r("late.stats", mo, "late_max_us", rep,
			      y->late_max_ns / 1000.0);
			out_r("late.stats", mo, "deferred", rep, y->deferred);
			out_r("late.stats", mo, "backstop", rep, y->backstop);
		}
		for (i = 0; i < NLATE; i++)
			for (g = 0; g < ngroups(); g++) {
				struct samples *x = &s[i][g];
				size_t j;

				if (!x->n)
					continue;
				for (j = 0; j < x->n; j++)
					samples_add(&pooled[i][g], x->v[j]);
				snprintf(metric, sizeof(metric), "p50_%s",
					 groups[g].name);
				out_r("late", late_modes[i], metric, rep,
				      samples_pct(x, 50));
				snprintf(metric, sizeof(metric), "p99_%s",
					 groups[g].name);
				out_r("late", late_modes[i], metric, rep,
				      samples_pct(x, 99));
				snprintf(metric, sizeof(metric), "max_%s",
					 groups[g].name);
				out_r("late", late_modes[i], metric, rep,
				      samples_max(x));
				snprintf(metric, sizeof(metric), "n_%s",
					 groups[g].name);
				out_r("late", late_modes[i], metric, rep,
				      (double)x->n);
			}
		out_flush();
	}
	for (i = 0; i < NLATE; i++)
		for (g = 0; g < ngroups(); g++) {
			char test[32];

			snprintf(test, sizeof(test), "late.%s", groups[g].name);
			out_q(test, late_modes[i], &pooled[i][g]);
			/* the pooled p99, over every repetition's samples */
			out_r("late.pooled", late_modes[i], groups[g].name, 0,
			      samples_pct(&pooled[i][g], 99));
			samples_free(&pooled[i][g]);
			samples_free(&s[i][g]);
		}
	out_flush();
}
