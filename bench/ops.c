// SPDX-License-Identifier: GPL-2.0
/*
 * Cost per call of settime, gettime and read, in ns.
 *
 * Each repetition splits cfg.ops_iters calls per mode into 100 chunks and
 * alternates the modes chunk by chunk (ABC BCA CAB ...); a mode's figure
 * is the median over its chunks, so a burst of host load that lands on a
 * few chunks does not move it.  settime re-arms a one-shot timer 1 s
 * ahead (cancel + arm, as a program re-arming a timeout does); gettime
 * reads an armed timer.  read is timed call by call: before each one,
 * SET_TICKS gives the timer a pending expiry so read never blocks; the
 * cost of the timing itself (two TSC reads) is measured and subtracted.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include <dtimerfd.h>

#include "bench.h"
#include "ioctls.h"

#define OPS_CHUNKS	100

enum { OP_SETTIME, OP_GETTIME, OP_READ, NOPS };
static const char *const op_name[NOPS] = { "settime", "gettime", "read" };

static double tsc_overhead;	/* cycles of an empty rdtsc pair */

static void measure_overhead(void)
{
	uint64_t sum = 0;
	int i;

	for (i = 0; i < 100000; i++) {
		uint64_t a = rdtsc(), b = rdtsc();

		sum += b - a;
	}
	tsc_overhead = (double)sum / 100000.0;
	out_i("rdtsc_pair_ns", "%.1f", tsc_to_ns((int64_t)tsc_overhead));
}

static uint64_t chunk(int op, int mode, int fd, int n)
{
	struct itimerspec its = { .it_value = { 1, 0 } }, cur;
	uint64_t c0, sum = 0, ticks;
	int i;

	switch (op) {
	case OP_SETTIME:
		c0 = rdtsc();
		for (i = 0; i < n; i++)
			if (t_settime(mode, fd, 0, &its, NULL))
				die("settime: %s", strerror(errno));
		return rdtsc() - c0;
	case OP_GETTIME:
		c0 = rdtsc();
		for (i = 0; i < n; i++)
			if (t_gettime(mode, fd, &cur))
				die("gettime: %s", strerror(errno));
		return rdtsc() - c0;
	default:
		for (i = 0; i < n; i++) {
			uint64_t a, b;

			if (t_set_ticks(mode, fd, 1))
				die("set_ticks: %s", strerror(errno));
			a = rdtsc();
			if (read(fd, &ticks, sizeof(ticks)) != sizeof(ticks))
				die("read: %s", strerror(errno));
			b = rdtsc();
			sum += b - a;
		}
		return sum - (uint64_t)(tsc_overhead * n);
	}
}

/*
 * What the TCG guest charges for the pieces every call is made of, to
 * explain the ratios: a system call that does nothing (getppid), one
 * reading the clock (clock_gettime: the guest's clocksource is the
 * emulated HPET, an MMIO exit per read), an ioctl that the module
 * rejects at once (DTFD_IOC_NONE, ENOTTY: fd lookup, the LSM hooks,
 * do_vfs_ioctl), and the cheapest ioctl that does something
 * (DTFD_IOC_GET_TOLERANCE: the context lock and a 24-byte copy_to_user).
 */
static void diagnostics(int rep, int dfd)
{
	static const char *const name[4] = {
		"null_syscall_ns", "clock_gettime_ns", "null_ioctl_ns",
		"get_tolerance_ns"
	};
	struct samples per[4];
	struct dtfd_tolerance tol;
	int i, c, k, n = cfg.ops_iters / OPS_CHUNKS;
	struct timespec ts;

	memset(per, 0, sizeof(per));
	for (c = 0; c < OPS_CHUNKS; c++)
		for (k = 0; k < 4; k++) {
			uint64_t c0 = rdtsc();

			for (i = 0; i < n; i++)
				if (k == 0)
					syscall(SYS_getppid);
				else if (k == 1)
					clock_gettime(CLOCK_MONOTONIC, &ts);
				else if (k == 2)
					ioctl(dfd, DTFD_IOC_NONE);
				else if (ioctl(dfd, DTFD_IOC_GET_TOLERANCE, &tol))
					die("DTFD_IOC_GET_TOLERANCE: %s",
					    strerror(errno));
			samples_add(&per[k], tsc_to_ns((int64_t)(rdtsc() - c0)) / n);
		}
	for (k = 0; k < 4; k++) {
		out_r("ops.diag", -1, name[k], rep, samples_pct(&per[k], 50));
		samples_free(&per[k]);
	}
}

void bench_ops(void)
{
	struct itimerspec far = { .it_value = { 3600, 0 } };
	int fds[NALLMODES], rep, op, c, i, m, k;
	int n = cfg.ops_iters / OPS_CHUNKS;
	/* native, strict, deferrable, and the in-tree flag where it exists */
	int modes[NMODES + 1], nm = 0;
	char metric[32];

	for (m = 0; m < NMODES; m++)
		modes[nm++] = m;
	if (have_intree)
		modes[nm++] = M_INTREE;
	progress("ops: settime, gettime, read x %d per mode per rep",
		 n * OPS_CHUNKS);
	pin_self(cfg.cpu);
	measure_overhead();
	for (k = 0; k < nm; k++) {
		m = modes[k];
		fds[m] = t_create(m, TFD_CLOEXEC);
		if (fds[m] < 0)
			die("create %s: %s", mode_name[m], strerror(errno));
	}

	for (rep = 0; rep < cfg.reps; rep++) {
		for (op = 0; op < NOPS; op++) {
			struct samples per[NALLMODES];

			memset(per, 0, sizeof(per));
			/* the timer under gettime and read is armed, far off */
			for (k = 0; k < nm; k++)
				t_settime(modes[k], fds[modes[k]], 0, &far, NULL);
			/* warm the caches and the branch predictors */
			for (k = 0; k < nm; k++)
				chunk(op, modes[k], fds[modes[k]], n);
			/*
			 * Rounds of one chunk per mode, back to back, each
			 * mode first in turn: the median over the rounds
			 * shrugs off bursts of host load that hit a few chunks.
			 */
			for (c = 0; c < OPS_CHUNKS; c++)
				for (i = 0; i < nm; i++) {
					m = modes[(rep + c + i) % nm];
					samples_add(&per[m], tsc_to_ns((int64_t)
						    chunk(op, m, fds[m], n)) / n);
				}
			for (k = 0; k < nm; k++) {
				m = modes[k];
				snprintf(metric, sizeof(metric), "%s_ns",
					 op_name[op]);
				out_r("ops", m, metric, rep,
				      samples_pct(&per[m], 50));
				samples_free(&per[m]);
			}
		}
		diagnostics(rep, fds[M_STRICT]);
		out_flush();
	}
	for (k = 0; k < nm; k++)
		close(fds[modes[k]]);
}
