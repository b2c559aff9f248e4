/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the tests and the benchmark (bench/ builds util.c
 * too): time, timer reads and polls, CPU pinning and spinners, the local
 * timer interrupt count and fdinfo parsing.  Nothing here knows about the
 * TAP harness: errors are return values, the caller decides whether they
 * fail a case or end a benchmark.
 */
#ifndef DTFD_TESTS_UTIL_H
#define DTFD_TESTS_UTIL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#ifndef TFD_IOC_SET_TICKS	/* <linux/timerfd.h> clashes with glibc's */
#include <sys/ioctl.h>
#define TFD_IOC_SET_TICKS	_IOW('T', 0, uint64_t)
#endif

#ifndef TFD_TIMER_DEFERRABLE
/* patches/: the in-tree flag, the 2014 RFC's value (1 << 2) */
#define TFD_TIMER_DEFERRABLE	(1 << 2)
#endif

/*
 * Whether the kernel's timerfd takes TFD_TIMER_DEFERRABLE (a kernel with
 * patches/ applied): 1, or 0 with errno saying why not.
 */
int h_timerfd_deferrable(void);

#define NSEC_PER_SEC	1000000000LL
#define NSEC_PER_MSEC	1000000LL
#define MS(x)		((long long)(x) * NSEC_PER_MSEC)
#define SEC(x)		((long long)(x) * NSEC_PER_SEC)
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* ---- time ---- */

long long h_ts_ns(const struct timespec *ts);
struct timespec h_ns_ts(long long ns);	/* tv_nsec in [0, 1e9) */
long long h_now(clockid_t clockid);	/* -1 when the clock fails */
void h_sleep_ns(long long ns);		/* CLOCK_MONOTONIC, EINTR resumed */
struct itimerspec h_its(long long value_ns, long long interval_ns);
long long h_its_value(const struct itimerspec *its);
long long h_its_interval(const struct itimerspec *its);

/* splitmix64: the next value of the stream @s, for seeded, replayable runs */
static inline uint64_t h_mix(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* ---- descriptors ---- */

/* read() of a timer: returns read()'s result, count in *ticks */
long h_read(int fd, uint64_t *ticks);
/* poll for POLLIN: 1 readable, 0 timeout, -1 error; revents in *revents */
int h_poll(int fd, int timeout_ms, short *revents);
/* wait up to timeout_ms for readability, then read once (nonblocking) */
long h_wait_read(int fd, int timeout_ms, uint64_t *ticks);
void h_set_nonblock(int fd, int on);

/* write s to the file at path (sysfs, debugfs): 0, or -1 with errno */
int h_write_file(const char *path, const char *s);

/*
 * The module's parameter @name (/sys/module/dtimerfd/parameters/): its
 * value (Y/N as 1/0), -1 when this build has none; set: 0, or -1 and errno.
 */
long h_param_get(const char *name);
int h_param_set(const char *name, long v);

/* ---- CPUs ---- */

int h_ncpus(void);			/* online CPUs */
int h_pin_cpu(int cpu);			/* this thread (-1: any CPU): 0, or -1 and errno */
int h_cpu_set_online(int cpu, int on);	/* CPU hotplug: 0, or -1 and errno */

/*
 * Run @fn(@arg) on CPU 0 with every other CPU offline, then bring those
 * CPUs back and this thread's affinity with them; @fn's result.  For a
 * write that patches kernel text (a sched feature, a core trace event):
 * x86 puts an INT3 on the site for the duration, and QEMU's multi-threaded
 * TCG (seen with 7.2 and 10.0) can keep another vCPU's translation of that
 * INT3 after the patch is done, which then oopses ("Oops: int3") in
 * 6.12 and 7.2 guests and hangs 6.1 ones; one vCPU online cannot race
 * with itself (TESTING.md).  CPUs
 * that will not go offline are left online, with a diagnostic line.
 */
int h_alone(int (*fn)(void *arg), void *arg);

/*
 * A thread spinning on @cpu (-1: anywhere) at @policy (SCHED_OTHER or
 * SCHED_IDLE) and @nice, never inheriting its creator's SCHED_FIFO: it
 * keeps that CPU's tick running, which is what a deferrable timer rides.
 */
struct h_spinner {
	pthread_t thread;
	int cpu;
	int policy;
	int nice;
	atomic_int stop;
};
/* 0, or pthread_create()'s error */
int h_spinner_start(struct h_spinner *s, int cpu, int policy, int nice);
void h_spinner_stop(struct h_spinner *s);

/* ---- /proc ---- */

/*
 * Local-timer interrupts so far (the row DTFD_TIMER_IRQ of
 * /proc/interrupts, the architecture's, read by ../examples/irqs.h): the
 * sum over CPUs in *all, CPU @cpu's in *one (may be NULL); 0, or -1 if
 * unknown.
 */
int h_local_timer_irqs(unsigned long long *all, int cpu,
		       unsigned long long *one);

/*
 * Exits from idle so far: every interrupt of every kind (local timer,
 * reschedule and function-call IPIs, other IPIs, devices: every row of
 * /proc/interrupts, ../examples/irqs.h), the sum over CPUs in *all, CPU
 * @cpu's in *one (may be NULL); 0, or -1 if unknown.
 */
int h_idle_exits(unsigned long long *all, int cpu, unsigned long long *one);

/*
 * The numbers of the "key:" lines of /proc/self/fdinfo/@fd (@thread:
 * /proc/thread-self, whose table is this thread's own), read in one
 * read(2), so from one call of the driver's show and consistent with
 * each other; a key not found is @missing.  0, or -1 if not readable.
 */
int h_fdinfo_vals(int fd, int thread, int n, const char *const *keys,
		  unsigned long long *vals, unsigned long long missing);

/* parsed /proc/self/fdinfo/FD timer lines */
struct h_fdinfo {
	int clockid;
	unsigned long long ticks;
	unsigned int settime_flags;
	char settime_flags_str[16];
	long long value_sec, value_nsec;
	long long interval_sec, interval_nsec;
	unsigned int flags;		/* generic "flags:" (octal) */
	int nlines;			/* timer lines found, 0..5 */
	int ordered;			/* the five appear consecutively in order */
	char extra[512];		/* any lines after the five */
};
int h_fdinfo(int fd, struct h_fdinfo *fi);

#endif /* DTFD_TESTS_UTIL_H */
