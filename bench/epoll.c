// SPDX-License-Identifier: GPL-2.0
/*
 * cfg.epoll_timers periodic timers (1 s) in one epoll set: every expiry
 * must be delivered, exactly once, through read(2)'s counts.
 *
 * Deadlines are absolute: timer j expires at T0 + phase_j + k s, with the
 * phases in [0, 0.5) s.  The epoll loop reads whatever is ready for
 * cfg.epoll_periods periods, then at 0.6 s into the next period a final
 * sweep reads every timer once more without blocking.  At that point the
 * number of expiries each timer has had is known exactly (none can be in
 * flight: the last was at least 0.1 s ago, the next is 0.4 s away), and
 * the sum of what read(2) returned must equal it: lost = expected - read,
 * extra = read - expected, both 0.  A sweep that runs into the next
 * expiry is reported (ambiguous) rather than guessed at.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "bench.h"

static void one(int mode, int rep)
{
	int n = cfg.epoll_timers, i, ep;
	int64_t *first = calloc(n, sizeof(*first));
	uint64_t *got = calloc(n, sizeof(*got));
	int *fds = calloc(n, sizeof(*fds));
	struct epoll_event ev, evs[1024];
	int64_t t0, sweep, ta, tb, armed;
	uint64_t expected = 0, delivered = 0, lost = 0, extra = 0, reads = 0;
	uint64_t overrun_reads = 0;
	int ambiguous = 0;

	ep = epoll_create1(EPOLL_CLOEXEC);
	for (i = 0; i < n; i++) {
		fds[i] = t_create(mode, TFD_NONBLOCK | TFD_CLOEXEC);
		if (fds[i] < 0)
			die("create %s: %s", mode_name[mode], strerror(errno));
		ev.events = EPOLLIN;
		ev.data.u32 = i;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev))
			die("epoll_ctl: %s", strerror(errno));
	}
	t0 = now_ns() + 300000000LL;
	for (i = 0; i < n; i++) {
		struct itimerspec its;

		first[i] = t0 + (int64_t)(frand() * 0.5e9);
		its.it_value = h_ns_ts(first[i]);
		its.it_interval = h_ns_ts(NSEC_PER_SEC);
		if (t_settime(mode, fds[i], TFD_TIMER_ABSTIME, &its, NULL))
			die("settime: %s", strerror(errno));
	}
	armed = now_ns();

	sweep = t0 + cfg.epoll_periods * NSEC_PER_SEC + 600000000LL;
	for (;;) {
		int64_t left = sweep - now_ns();
		int k;

		if (left <= 0)
			break;
		k = epoll_wait(ep, evs, 1024, (int)((left + 999999) / 1000000));
		for (i = 0; i < k; i++) {
			int j = evs[i].data.u32;
			uint64_t u;

			if (read(fds[j], &u, sizeof(u)) == sizeof(u)) {
				got[j] += u;
				reads++;
				overrun_reads += u > 1;
			}
		}
	}

	ta = now_ns();
	for (i = 0; i < n; i++) {
		uint64_t u;

		if (read(fds[i], &u, sizeof(u)) == sizeof(u))
			got[i] += u;
	}
	tb = now_ns();

	for (i = 0; i < n; i++) {
		uint64_t lo = ta >= first[i] ? (ta - first[i]) / NSEC_PER_SEC + 1 : 0;
		uint64_t hi = tb >= first[i] ? (tb - first[i]) / NSEC_PER_SEC + 1 : 0;

		expected += lo;
		delivered += got[i];
		if (hi != lo)
			ambiguous++;
		if (got[i] < lo)
			lost += lo - got[i];
		if (got[i] > hi)
			extra += got[i] - hi;
		close(fds[i]);
	}
	close(ep);

	out_r("epoll", mode, "expected", rep, (double)expected);
	out_r("epoll", mode, "delivered", rep, (double)delivered);
	out_r("epoll", mode, "lost", rep, (double)lost);
	out_r("epoll", mode, "extra", rep, (double)extra);
	out_r("epoll", mode, "ambiguous", rep, ambiguous);
	out_r("epoll", mode, "reads", rep, (double)reads);
	out_r("epoll", mode, "overrun_reads", rep, (double)overrun_reads);
	out_r("epoll", mode, "arm_late_ms", rep,
	      armed > t0 ? (double)(armed - t0) / 1e6 : 0);
	out_r("epoll", mode, "sweep_ms", rep, (double)(tb - ta) / 1e6);
	free(first);
	free(got);
	free(fds);
}

void bench_epoll(void)
{
	int rep, i;

	progress("epoll: %d periodic 1 s timers, %d periods per mode",
		 cfg.epoll_timers, cfg.epoll_periods);
	pin_self(cfg.cpu);
	for (rep = 0; rep < cfg.reps; rep++) {
		for (i = 0; i < NMODES; i++)
			one(mode_at(rep, i), rep);
		out_flush();
	}
}
