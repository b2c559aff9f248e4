// SPDX-License-Identifier: GPL-2.0
/*
 * Memory per timer and arm throughput with cfg.mem_timers open timers per
 * mode.
 *
 * Each repetition creates cfg.mem_timers timers of every mode, one mode
 * after the other (order rotating): before each mode the slab caches give
 * their empty slabs back and Slab: is read from /proc/meminfo, and again
 * after its timers exist.  Memory per timer is that growth divided by the
 * count: the file, the context, and for timerfd the anonymous-inode dentry.
 * Then every timer is armed (one-shot, a random deadline 1 to 2 h ahead,
 * so the hrtimer tree really is searched), in chunks that alternate
 * between the modes, so each mode arms into trees of the same size under
 * the same host load; arming allocates nothing (checked: arm_slab_bytes).
 * The fd table is grown once, before the first measurement.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "bench.h"

#define MEM_CHUNKS	20

static void arm(int mode, int *fds, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		struct itimerspec its = { 0 };

		its.it_value = h_ns_ts(3600000000000LL +
				       (int64_t)(frand() * 3600e9));
		if (t_settime(mode, fds[i], 0, &its, NULL))
			die("settime: %s", strerror(errno));
	}
}

static void one_rep(int rep, int **fds, int n)
{
	struct samples rate[NMODES];
	int64_t t0, t1;
	long s0, s1;
	int i, c, m, k = n / MEM_CHUNKS;

	for (i = 0; i < NMODES; i++) {
		m = mode_at(rep, i);
		slab_shrink();
		h_sleep_ns(100000000);
		s0 = meminfo_kb("Slab");
		t0 = now_ns();
		for (c = 0; c < n; c++) {
			fds[m][c] = t_create(m, TFD_CLOEXEC);
			if (fds[m][c] < 0)
				die("create %s #%d: %s", mode_name[m], c,
				    strerror(errno));
		}
		t1 = now_ns();
		s1 = meminfo_kb("Slab");
		out_r("mem", m, "bytes_per_timer", rep, (double)(s1 - s0) * 1024 / n);
		out_r("mem", m, "create_per_s", rep, n * 1e9 / (double)(t1 - t0));
	}

	memset(rate, 0, sizeof(rate));
	s0 = meminfo_kb("Slab");
	for (c = 0; c < MEM_CHUNKS; c++)
		for (i = 0; i < NMODES; i++) {
			m = mode_at(rep + c, i);
			t0 = now_ns();
			arm(m, fds[m] + c * k, k);
			samples_add(&rate[m], k * 1e9 / (double)(now_ns() - t0));
		}
	s1 = meminfo_kb("Slab");
	out_r("mem", -1, "arm_slab_bytes", rep,
	      (double)(s1 - s0) * 1024 / (NMODES * n));

	for (i = 0; i < NMODES; i++) {
		m = mode_at(rep, i);
		/* median over the chunks, each at a larger tree */
		out_r("mem", m, "arm_per_s", rep, samples_pct(&rate[m], 50));
		samples_free(&rate[m]);
		t0 = now_ns();
		for (c = 0; c < n; c++)
			close(fds[m][c]);
		out_r("mem", m, "close_per_s", rep, n * 1e9 / (double)(now_ns() - t0));
	}
}

void bench_mem(void)
{
	int n = cfg.mem_timers, rep, i, j, *fds[NMODES];

	progress("mem: %d armed timers per mode", n);
	pin_self(cfg.cpu);
	for (i = 0; i < NMODES; i++)
		fds[i] = calloc(n, sizeof(int));

	/* grow the fd table and warm every cache once, unmeasured */
	for (i = 0; i < NMODES; i++)
		for (j = 0; j < n; j++) {
			fds[i][j] = t_create(i, TFD_CLOEXEC);
			if (fds[i][j] < 0)
				die("create %s #%d: %s", mode_name[i], j,
				    strerror(errno));
		}
	for (i = 0; i < NMODES; i++)
		for (j = 0; j < n; j++)
			close(fds[i][j]);

	for (rep = 0; rep < cfg.reps; rep++) {
		one_rep(rep, fds, n);
		out_flush();
	}
	for (i = 0; i < NMODES; i++)
		free(fds[i]);
}
