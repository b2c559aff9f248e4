// SPDX-License-Identifier: MIT
/*
 * The `make demo` program, run in the guest by vm/demo: one strict and one
 * deferrable periodic dtimerfd timer on an otherwise idle machine.
 *
 * Four phases of the same length: no timer (the baseline), the strict
 * timer alone, the deferrable timer alone, both at once.  For each timer:
 * wakeups/s (read(2) calls that returned) and ticks/s (the expiration
 * counts they returned, overruns included); for each CPU: local timer
 * interrupts/s (the local timer's row of /proc/interrupts, irqs.h).  The
 * demo pins itself to one CPU so that the timers live there.
 *
 *   demo [-p PERIOD_MS] [-s SECONDS_PER_PHASE] [-c CPU]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "dtimerfd.h"
#include "irqs.h"	/* the reader of /proc/interrupts */

#define MAX_CPUS	64

struct timer_stats {
	uint64_t wakeups;
	uint64_t ticks;
};

struct phase {
	const char *name;
	int strict, deferrable;	/* which timers run */
	struct timer_stats st[2];
	double loc[MAX_CPUS];	/* interrupts per second */
	double secs;		/* how long it really ran */
};

static int ncpus;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The local timer's row of /proc/interrupts: one count per online CPU. */
static int read_loc(unsigned long long *loc)
{
	return irq_row_read(DTFD_TIMER_IRQ, loc, ncpus) == ncpus ? 0 : -1;
}

static int arm(int fd, int flags, long period_ms)
{
	struct itimerspec its = {
		.it_interval = { period_ms / 1000, (period_ms % 1000) * 1000000 },
		.it_value = { period_ms / 1000, (period_ms % 1000) * 1000000 },
	};

	return dtimerfd_settime(fd, flags, &its, NULL);
}

static int disarm(int fd)
{
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };

	return dtimerfd_settime(fd, 0, &its, NULL);
}

static int run_phase(struct phase *ph, int fds[2], long period_ms,
		     double seconds)
{
	unsigned long long before[MAX_CPUS], after[MAX_CPUS];
	struct pollfd pfd[2];
	double t0, t1, end;
	int i, n = 0;

	memset(ph->st, 0, sizeof(ph->st));
	if (read_loc(before))
		return -1;
	t0 = now();
	end = t0 + seconds;
	if (ph->strict) {
		if (arm(fds[0], 0, period_ms))
			return -1;
		pfd[n++] = (struct pollfd){ .fd = fds[0], .events = POLLIN };
	}
	if (ph->deferrable) {
		if (arm(fds[1], DTFD_TIMER_DEFERRABLE, period_ms))
			return -1;
		pfd[n++] = (struct pollfd){ .fd = fds[1], .events = POLLIN };
	}
	for (;;) {
		int left = (int)((end - now()) * 1000);

		if (left <= 0)
			break;
		if (poll(pfd, n, left) < 0 && errno != EINTR)
			return -1;
		for (i = 0; i < n; i++) {
			uint64_t ticks;
			int which = pfd[i].fd == fds[0] ? 0 : 1;

			if (!(pfd[i].revents & POLLIN))
				continue;
			if (read(pfd[i].fd, &ticks, sizeof(ticks)) ==
			    sizeof(ticks)) {
				ph->st[which].wakeups++;
				ph->st[which].ticks += ticks;
			}
		}
	}
	disarm(fds[0]);
	disarm(fds[1]);
	t1 = now();
	if (read_loc(after))
		return -1;
	for (i = 0; i < ncpus; i++)
		ph->loc[i] = (after[i] - before[i]) / (t1 - t0);
	ph->secs = t1 - t0;
	return 0;
}

static void cell(int on, uint64_t v, double secs)
{
	if (on)
		printf(" %9.1f", v / secs);
	else
		printf(" %9s", "-");
}

int main(int argc, char **argv)
{
	struct phase phases[] = {
		{ .name = "idle, no timer" },
		{ .name = "strict only", .strict = 1 },
		{ .name = "deferrable only", .deferrable = 1 },
		{ .name = "strict + deferrable", .strict = 1, .deferrable = 1 },
	};
	int nphases = sizeof(phases) / sizeof(phases[0]);
	long period_ms = 10;
	double seconds = 5;
	int cpu = -1, opt, i, c, fds[2], have_defer = 1;
	struct itimerspec probe = { { 0, 0 }, { 3600, 0 } };
	struct utsname u;
	cpu_set_t set;

	while ((opt = getopt(argc, argv, "p:s:c:")) != -1) {
		switch (opt) {
		case 'p':
			period_ms = atol(optarg);
			break;
		case 's':
			seconds = atof(optarg);
			break;
		case 'c':
			cpu = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-p PERIOD_MS] [-s SECONDS] [-c CPU]\n",
				argv[0]);
			return 2;
		}
	}
	if (period_ms <= 0 || seconds <= 0) {
		fprintf(stderr, "demo: period and seconds must be positive\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	ncpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (ncpus > MAX_CPUS)
		ncpus = MAX_CPUS;
	if (cpu < 0)
		cpu = ncpus - 1;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		perror("demo: sched_setaffinity");

	fds[0] = dtimerfd_create(CLOCK_MONOTONIC, DTFD_CLOEXEC);
	fds[1] = dtimerfd_create(CLOCK_MONOTONIC, DTFD_CLOEXEC);
	if (fds[0] < 0 || fds[1] < 0) {
		printf("demo: dtimerfd_create: %s\n", strerror(errno));
		return 1;
	}
	if (dtimerfd_settime(fds[1], DTFD_TIMER_DEFERRABLE, &probe, NULL)) {
		if (errno != EINVAL) {
			printf("demo: deferrable settime: %s\n", strerror(errno));
			return 1;
		}
		have_defer = 0;
		nphases = 2;
	}
	disarm(fds[1]);

	uname(&u);
	printf("dtimerfd demo: a %ld ms periodic timer, strict and deferrable, on an idle guest\n",
	       period_ms);
	printf("(Linux %s, %d CPUs, demo pinned to CPU%d, %.0f s per phase)\n\n",
	       u.release, ncpus, cpu, seconds);
	if (!have_defer)
		printf("The deferrable backend is not available yet (DTFD_TIMER_DEFERRABLE: EINVAL):\nshowing the strict timer only.\n\n");

	/* Let the boot's last deferred work settle. */
	sleep(1);

	printf("%-20s %9s %9s %9s %9s  %s\n", "", "strict", "strict",
	       "deferr.", "deferr.", "local timer interrupts/s (" DTFD_TIMER_IRQ ")");
	printf("%-20s %9s %9s %9s %9s ", "phase", "wakeups/s", "ticks/s",
	       "wakeups/s", "ticks/s");
	for (c = 0; c < ncpus; c++)
		printf(" %6s%-2d", "CPU", c);
	printf("  %7s\n", "total");

	for (i = 0; i < nphases; i++) {
		struct phase *ph = &phases[i];
		double total = 0;

		if (run_phase(ph, fds, period_ms, seconds)) {
			printf("demo: phase '%s' failed: %s\n", ph->name,
			       strerror(errno));
			return 1;
		}
		printf("%-20s", ph->name);
		cell(ph->strict, ph->st[0].wakeups, ph->secs);
		cell(ph->strict, ph->st[0].ticks, ph->secs);
		cell(ph->deferrable, ph->st[1].wakeups, ph->secs);
		cell(ph->deferrable, ph->st[1].ticks, ph->secs);
		printf(" ");
		for (c = 0; c < ncpus; c++) {
			printf(" %8.1f", ph->loc[c]);
			total += ph->loc[c];
		}
		printf("  %7.1f\n", total);
	}

	printf("\nwakeups/s: reads that returned; ticks/s: the expirations they reported.\n");
	printf("A deferrable timer counts every period (overruns included) but does not\n");
	printf("wake an idle CPU: its expirations are delivered when the CPU wakes anyway.\n");
	return 0;
}
