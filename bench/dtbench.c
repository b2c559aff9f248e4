// SPDX-License-Identifier: GPL-2.0
/*
 * dtbench: native timerfd vs dtimerfd strict vs dtimerfd deferrable, in
 * one guest run.  bench/run boots the guest and parses what this prints
 * (the format is described in bench.h).
 *
 *   dtbench [--quick] [--reps N] [--cpu N] [--slack US,US] [--bound US,US]
 *           [TEST...]
 *
 * TEST is lat, ops, wake, late, mem, epoll, cross, scale or growth; all of
 * them by default.
 * --slack and --bound: the two slacks (strict) and the two bounds
 * (deferrable) of the tolerance variants in wake and late, in
 * microseconds (default 1000,10000 and 20000,100000).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <dtimerfd.h>

#include "bench.h"

struct bench_cfg cfg;

/* @full: only in a full run or when named (not in --quick's smoke run) */
static const struct {
	const char *name;
	void (*fn)(void);
	int full;
} tests[] = {
	{ "lat", bench_lat, 0 },
	{ "ops", bench_ops, 0 },
	{ "wake", bench_wake, 0 },
	{ "late", bench_late, 0 },
	{ "mem", bench_mem, 0 },
	{ "epoll", bench_epoll, 0 },
	{ "cross", bench_cross, 0 },
	{ "scale", bench_scale, 1 },
	{ "growth", bench_growth, 1 },
};
#define NTESTS	(sizeof(tests) / sizeof(tests[0]))

static void defaults(int quick)
{
	cfg.quick = quick;
	cfg.reps = quick ? 3 : 5;
	cfg.cpu = 1;
	cfg.lat_oneshot_samples = quick ? 40 : 300;
	cfg.lat_periodic_samples = quick ? 60 : 400;
	cfg.lat_periodic_us = 5000;
	cfg.lat_defer_cap_ms = 100;
	cfg.ops_iters = quick ? 20000 : 200000;
	cfg.wake_window_s = quick ? 1.0 : 2.0;
	cfg.wake_nmax = quick ? 10 : 100;
	cfg.late_duration_s = quick ? 3.0 : 12.5;
	cfg.late_10s = !quick;
	cfg.mem_timers = quick ? 20000 : 100000;
	cfg.epoll_timers = quick ? 2000 : 10000;
	cfg.epoll_periods = quick ? 2 : 5;
	cfg.slack_ns[0] = 1000000;
	cfg.slack_ns[1] = 10000000;
	cfg.bound_ns[0] = 20000000;
	cfg.bound_ns[1] = 100000000;
}

/* "A,B" in microseconds into @v[0], @v[1] */
static void two_us(const char *arg, int64_t *v)
{
	long long a, b;

	if (sscanf(arg, "%lld,%lld", &a, &b) != 2 || a <= 0 || b <= 0)
		die("expected two positive microsecond values A,B: %s", arg);
	v[0] = a * 1000;
	v[1] = b * 1000;
}

static void raise_limits(int n)
{
	struct rlimit rl = { .rlim_cur = n + 1024, .rlim_max = n + 1024 };
	char buf[32];

	snprintf(buf, sizeof(buf), "%d", 4 * n + 65536);
	h_write_file("/proc/sys/fs/file-max", buf);
	h_write_file("/proc/sys/fs/nr_open", buf);
	if (setrlimit(RLIMIT_NOFILE, &rl))
		die("setrlimit(RLIMIT_NOFILE, %d): %s", n + 1024,
		    strerror(errno));
}

static void facts(void)
{
	struct utsname u;
	char buf[128] = "?";
	FILE *f;

	uname(&u);
	out_i("kernel", "%s", u.release);
	out_i("ncpus", "%d", cfg.ncpus);
	f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	if (f) {
		if (fgets(buf, sizeof(buf), f))
			buf[strcspn(buf, "\n")] = 0;
		fclose(f);
	}
	out_i("clocksource", "%s", buf);
	out_i("quick", "%d", cfg.quick);
	out_i("reps", "%d", cfg.reps);
	out_i("cpu", "%d", cfg.cpu);
	out_i("measuring_fifo", "%d", !cfg.no_fifo);
	out_i("spin_nice", "%d", cfg.spin_nice);
	out_i("lat_periodic_us", "%d", cfg.lat_periodic_us);
	out_i("lat_defer_cap_ms", "%d", cfg.lat_defer_cap_ms);
	out_i("ops_iters", "%d", cfg.ops_iters);
	out_i("wake_window_s", "%g", cfg.wake_window_s);
	out_i("wake_reader", "%s", cfg.wake_unpinned ? "any-cpu" : "pinned");
	out_i("mem_timers", "%d", cfg.mem_timers);
	out_i("epoll_timers", "%d", cfg.epoll_timers);
	out_i("epoll_periods", "%d", cfg.epoll_periods);
	out_i("late_duration_s", "%g", cfg.late_duration_s);
	out_i("late_spinners", "%s", cfg.late_spin_one ? "timer-cpu" : "all-cpus");
	out_i("slack_ns", "%lld %lld", (long long)cfg.slack_ns[0],
	      (long long)cfg.slack_ns[1]);
	out_i("bound_ns", "%lld %lld", (long long)cfg.bound_ns[0],
	      (long long)cfg.bound_ns[1]);
	out_i("modes", "%s %s %s %s %s %s %s%s", mode_name[0], mode_name[1],
	      mode_name[2], mode_name[3], mode_name[4], mode_name[5],
	      mode_name[6], have_intree ? " intree" : "");
}

int main(int argc, char **argv)
{
	static char obuf[1 << 20];
	int i, j, first, fd, quick = 0, reps = 0, cpu = -1, ran = 0, ops_iters = 0;
	int late_spin_all = 0;
	double wake_window = 0;
	const char *slack = NULL, *bound = NULL;
	int64_t t0, t1;

	for (i = 1; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--quick"))
			quick = 1;
		else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
			reps = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--cpu") && i + 1 < argc)
			cpu = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--wake-only") && i + 1 < argc)
			sscanf(argv[++i], "%d:%d", &cfg.wake_only_n,
			       &cfg.wake_only_ms);
		else if (!strcmp(argv[i], "--wake-modes") && i + 1 < argc)
			cfg.wake_modes = strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--wake-window") && i + 1 < argc)
			wake_window = atof(argv[++i]);
		else if (!strcmp(argv[i], "--wake-unpinned"))
			cfg.wake_unpinned = 1;
		else if (!strcmp(argv[i], "--ops-iters") && i + 1 < argc)
			ops_iters = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--late-spin-all"))
			late_spin_all = 1;
		else if (!strcmp(argv[i], "--no-fifo"))
			cfg.no_fifo = 1;
		else if (!strcmp(argv[i], "--spin-nice") && i + 1 < argc)
			cfg.spin_nice = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--slack") && i + 1 < argc)
			slack = argv[++i];
		else if (!strcmp(argv[i], "--bound") && i + 1 < argc)
			bound = argv[++i];
		else
			die("usage: dtbench [--quick] [--reps N] [--cpu N] [--wake-unpinned] [--wake-window S] [--slack US,US] [--bound US,US] [TEST...]");
	}
	first = i;
	defaults(quick);
	if (reps > 0)
		cfg.reps = reps;
	if (ops_iters > 0)
		cfg.ops_iters = ops_iters;
	if (wake_window > 0)
		cfg.wake_window_s = wake_window;
	cfg.late_spin_one = !late_spin_all;
	if (slack)
		two_us(slack, cfg.slack_ns);
	if (bound)
		two_us(bound, cfg.bound_ns);
	mode_names_init();
	probe_intree();
	cfg.ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (cpu >= 0)
		cfg.cpu = cpu;
	if (cfg.cpu >= cfg.ncpus)
		cfg.cpu = cfg.ncpus - 1;
	/* printing must never overlap a measurement: flush by hand */
	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	srandom(12345);
	raise_limits(NMODES * cfg.mem_timers > cfg.epoll_timers ?
		     NMODES * cfg.mem_timers : cfg.epoll_timers);

	fd = dtimerfd_create(CLOCK_MONOTONIC, 0);
	if (fd < 0)
		die("dtimerfd_create: %s (is dtimerfd.ko loaded?)",
		    strerror(errno));
	close(fd);

	facts();
	pin_self(cfg.cpu);
	tsc_calibrate();
	out_flush();

	for (j = 0; j < (int)NTESTS; j++) {
		int want = first == argc && !(cfg.quick && tests[j].full);

		for (i = first; i < argc; i++)
			if (!strcmp(argv[i], tests[j].name))
				want = 1;
		if (!want)
			continue;
		t0 = now_ns();
		tests[j].fn();
		t1 = now_ns();
		out_i("seconds", "%s %.1f", tests[j].name, (t1 - t0) / 1e9);
		out_flush();
		ran++;
	}
	printf("@@ END %d\n", ran);
	out_flush();
	return 0;
}
