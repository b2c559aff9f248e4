// SPDX-License-Identifier: GPL-2.0
/*
 * Memory per timer and arm throughput with cfg.mem_timers open timers.
 *
 * For each mode: give the slab caches' empty slabs back, read Slab: from
 * /proc/meminfo, create the timers, arm each one (one-shot, random
 * deadline 1 to 2 h ahead, so an hrtimer tree of that size is really
 * searched), read Slab: again, close them all.  Memory per timer is the
 * slab growth divided by the count: the file, the context, and for
 * timerfd the anonymous-inode dentry.  The fd table is grown once before
 * the first measurement and is the same for every mode.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "bench.h"

static void one(int mode, int rep, int *fds, int n)
{
	int64_t t0, t1, t2, t3;
	long s0, s1, u0, u1;
	int i;

	slab_shrink();
	sleep_ns(100000000);
	s0 = meminfo_kb("Slab");
	u0 = meminfo_kb("SUnreclaim");

	t0 = now_ns();
	for (i = 0; i < n; i++) {
		fds[i] = t_create(mode, TFD_CLOEXEC);
		if (fds[i] < 0)
			die("create %s #%d: %s", mode_name[mode], i,
			    strerror(errno));
	}
	t1 = now_ns();
	for (i = 0; i < n; i++) {
		struct itimerspec its = { 0 };

		ts_from_ns(&its.it_value, 3600000000000LL +
			   (int64_t)(frand() * 3600e9));
		if (t_settime(mode, fds[i], 0, &its, NULL))
			die("settime: %s", strerror(errno));
	}
	t2 = now_ns();
	s1 = meminfo_kb("Slab");
	u1 = meminfo_kb("SUnreclaim");
	for (i = 0; i < n; i++)
		close(fds[i]);
	t3 = now_ns();

	out_r("mem", mode, "bytes_per_timer", rep, (double)(s1 - s0) * 1024 / n);
	out_r("mem", mode, "unrecl_bytes_per_timer", rep,
	      (double)(u1 - u0) * 1024 / n);
	out_r("mem", mode, "create_per_s", rep, n * 1e9 / (double)(t1 - t0));
	out_r("mem", mode, "arm_per_s", rep, n * 1e9 / (double)(t2 - t1));
	out_r("mem", mode, "close_per_s", rep, n * 1e9 / (double)(t3 - t2));
}

void bench_mem(void)
{
	int n = cfg.mem_timers, rep, i, *fds;

	progress("mem: %d armed timers per mode", n);
	fds = calloc(n, sizeof(*fds));
	pin_self(cfg.cpu);

	/* grow the fd table and warm every cache once, unmeasured */
	for (i = 0; i < NMODES; i++) {
		int j;

		for (j = 0; j < n; j++) {
			fds[j] = t_create(i, TFD_CLOEXEC);
			if (fds[j] < 0)
				die("create %s #%d: %s", mode_name[i], j,
				    strerror(errno));
		}
		for (j = 0; j < n; j++)
			close(fds[j]);
	}

	for (rep = 0; rep < cfg.reps; rep++) {
		for (i = 0; i < NMODES; i++)
			one(mode_at(rep, i), rep, fds, n);
		out_flush();
	}
	free(fds);
}
