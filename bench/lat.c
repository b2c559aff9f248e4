// SPDX-License-Identifier: GPL-2.0
/*
 * Expiry latency: how long after its deadline a blocked read(2) returns,
 * for one-shot and periodic timers, on an idle and on a busy guest.
 *
 * The measuring thread is pinned and runs SCHED_FIFO, so what is measured
 * is the timer's wake-up path, not how long CFS makes a woken thread wait
 * behind the spinner of the busy guest (which every mode would pay alike).
 * The deadline is absolute on CLOCK_MONOTONIC and the wake-up time is
 * taken from the TSC relative to a (TSC, CLOCK_MONOTONIC) anchor taken
 * just before, so the system call of clock_gettime() is never inside the
 * measured interval.
 *
 * The modes are interleaved finely, so bursts of host load (the guest's
 * vCPUs are host threads that other work preempts) hit them alike: one-shot
 * samples go round the modes one by one, periodic timers run in turns of
 * LAT_TURN periods.
 *
 * An idle CPU never runs a deferrable timer: a deferrable wait on the idle
 * guest gives up after cfg.lat_defer_cap_ms (poll timeout, then read, which
 * delivers the overdue expiry) and is counted as "capped"; those waits
 * being long, the idle deferrable mode gets fewer samples (LAT_DEFER_IDLE).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "bench.h"

#define LAT_TURN		20	/* periodic expiries per mode per turn */
#define LAT_DEFER_IDLE		(cfg.quick ? 10 : 30)

struct lat_block {
	struct samples s;
	int capped;
	int overruns;
};

static uint64_t wait_expiry(int mode, int fd, int busy, int *capped)
{
	uint64_t ticks = 0;

	if (mode == M_DEFER && !busy) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int64_t t0 = now_ns();

		/* the poll timer's own wake-up may deliver it: look at time */
		poll(&p, 1, cfg.lat_defer_cap_ms);
		if (now_ns() - t0 >= cfg.lat_defer_cap_ms * 1000000LL)
			(*capped)++;
	}
	while (read(fd, &ticks, sizeof(ticks)) != sizeof(ticks))
		if (errno != EINTR)
			die("read: %s", strerror(errno));
	return ticks;
}

static void oneshot_sample(int mode, int fd, int busy, struct lat_block *b)
{
	/* 1 to 5 ms: every phase against the 4 ms jiffy */
	int64_t d = 1000000 + (int64_t)(frand() * 4000000);
	struct itimerspec its = { 0 };
	uint64_t c0, c1;
	int64_t t0;

	tsc_anchor(&c0, &t0);
	its.it_value = h_ns_ts(t0 + d);
	if (t_settime(mode, fd, TFD_TIMER_ABSTIME, &its, NULL))
		die("settime: %s", strerror(errno));
	wait_expiry(mode, fd, busy, &b->capped);
	c1 = rdtsc();
	samples_add(&b->s, (tsc_to_ns(c1 - c0) - d) / 1000.0);
}

/* @n expiries of a periodic timer started afresh */
static void periodic_turn(int mode, int fd, int busy, int n,
			  struct lat_block *b)
{
	int64_t p = cfg.lat_periodic_us * 1000LL;
	struct itimerspec its = { 0 };
	int64_t ta, first;
	uint64_t ca, k = 0;
	int i;

	tsc_anchor(&ca, &ta);
	first = ta + p;
	its.it_value = h_ns_ts(first);
	its.it_interval = h_ns_ts(p);
	if (t_settime(mode, fd, TFD_TIMER_ABSTIME, &its, NULL))
		die("settime: %s", strerror(errno));

	for (i = 0; i < n; i++) {
		uint64_t u = wait_expiry(mode, fd, busy, &b->capped);
		uint64_t c1 = rdtsc();
		double now = (double)ta + tsc_to_ns(c1 - ca);

		k += u;
		if (u > 1)
			b->overruns++;
		/* latency of the newest expiry this read reported */
		samples_add(&b->s, (now - (double)(first + (int64_t)(k - 1) * p)) /
			    1000.0);
		tsc_anchor(&ca, &ta);
	}
	memset(&its, 0, sizeof(its));
	t_settime(mode, fd, 0, &its, NULL);
}

static int quota(int mode, int busy, int n)
{
	return mode == M_DEFER && !busy && n > LAT_DEFER_IDLE ? LAT_DEFER_IDLE : n;
}

static void one_rep(int rep, int busy, int *fds, struct lat_block b[2][NMODES])
{
	int i, m, more;

	/* one-shot: the modes take turns sample by sample */
	for (i = 0; i < cfg.lat_oneshot_samples; i++) {
		m = mode_at(rep + i, 0);
		if ((int)b[0][m].s.n < quota(m, busy, cfg.lat_oneshot_samples))
			oneshot_sample(m, fds[m], busy, &b[0][m]);
		m = mode_at(rep + i, 1);
		if ((int)b[0][m].s.n < quota(m, busy, cfg.lat_oneshot_samples))
			oneshot_sample(m, fds[m], busy, &b[0][m]);
		m = mode_at(rep + i, 2);
		if ((int)b[0][m].s.n < quota(m, busy, cfg.lat_oneshot_samples))
			oneshot_sample(m, fds[m], busy, &b[0][m]);
	}

	/* periodic: turns of LAT_TURN expiries */
	do {
		more = 0;
		for (i = 0; i < NMODES; i++) {
			int left;

			m = mode_at(rep + (int)b[1][0].s.n / LAT_TURN, i);
			left = quota(m, busy, cfg.lat_periodic_samples) -
			       (int)b[1][m].s.n;
			if (left <= 0)
				continue;
			periodic_turn(m, fds[m], busy,
				      left < LAT_TURN ? left : LAT_TURN, &b[1][m]);
			more = 1;
		}
	} while (more);
}

static void scenario(int busy)
{
	static const char *const kinds[2] = { "oneshot", "periodic" };
	/* [rep][kind][mode] */
	struct lat_block (*blk)[2][NMODES];
	struct samples pooled[2][NMODES];
	int fds[NMODES];
	int rep, kind, m;
	char test[64];

	blk = calloc(cfg.reps, sizeof(*blk));
	memset(pooled, 0, sizeof(pooled));
	for (m = 0; m < NMODES; m++) {
		fds[m] = t_create(m, TFD_CLOEXEC);
		if (fds[m] < 0)
			die("create %s: %s", mode_name[m], strerror(errno));
	}

	pin_self(cfg.cpu);
	measuring_prio(1);
	if (busy)
		spinners_start();
	for (rep = 0; rep < cfg.reps; rep++)
		one_rep(rep, busy, fds, blk[rep]);
	if (busy)
		spinners_stop();
	measuring_prio(0);

	for (kind = 0; kind < 2; kind++) {
		snprintf(test, sizeof(test), "lat.%s.%s",
			 busy ? "busy" : "idle", kinds[kind]);
		for (m = 0; m < NMODES; m++) {
			for (rep = 0; rep < cfg.reps; rep++) {
				struct lat_block *b = &blk[rep][kind][m];
				size_t j;

				out_r(test, m, "p50", rep, samples_pct(&b->s, 50));
				out_r(test, m, "p99", rep, samples_pct(&b->s, 99));
				out_r(test, m, "max", rep, samples_max(&b->s));
				out_r(test, m, "n", rep, (double)b->s.n);
				out_r(test, m, "capped", rep, b->capped);
				out_r(test, m, "overruns", rep, b->overruns);
				for (j = 0; j < b->s.n; j++)
					samples_add(&pooled[kind][m], b->s.v[j]);
				samples_free(&b->s);
			}
			out_q(test, m, &pooled[kind][m]);
			samples_free(&pooled[kind][m]);
		}
		out_flush();
	}
	for (m = 0; m < NMODES; m++)
		close(fds[m]);
	free(blk);
}

void bench_lat(void)
{
	progress("lat: idle guest");
	scenario(0);
	progress("lat: busy guest");
	scenario(1);
}
