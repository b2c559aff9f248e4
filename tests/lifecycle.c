// SPDX-License-Identifier: GPL-2.0
/*
 * lifecycle: load and unload dtimerfd again and again, with timers armed
 * and closed in between, in the test guest (tests/lifecycle runs it there;
 * vm/init.c has loaded /dtimerfd.ko before).
 *
 *   lifecycle [-n CYCLES] [-m MODULE.ko] [-q]
 *
 * Each cycle makes timers of every kind (strict, deferrable, bounded
 * deferrable, CANCEL_ON_SET on CLOCK_REALTIME, deferrable on BOOTTIME and
 * absolute REALTIME (the clock-change list), a 1 ns period, an alarm),
 * each by DTFD_IOC_CREATE on a control descriptor that is closed at once,
 * lets some fire, reads some, and checks that delete_module() is refused
 * (EWOULDBLOCK or EBUSY) while any fd is open: its own timers (the
 * anonymous-inode files hold the module by themselves), one inherited by
 * a child (blocked in read, or exiting with the timers armed), one in an
 * epoll set another thread waits on, or a control descriptor alone.  Then
 * everything is closed and the module unloaded at once (timers that were
 * armed a moment ago must not fire into freed memory or unloaded code)
 * and loaded again.  Some cycles run a thread that opens the device and
 * creates a timer in a loop, racing misc_open() and CREATE with the
 * unload, and one that steps CLOCK_REALTIME, racing the clock-change work
 * with dtfd_clock_exit().
 *
 * The kernel log is watched through /dev/kmsg: any report (BUG, WARNING,
 * ODEBUG, KASAN, lockdep...) stops the run at the cycle that caused it.
 * On the debug kernel the DEBUG_OBJECTS warning count must not move.
 * The module is left loaded, as vm/init.c expects it.  Exit 0 when clean.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/dtimerfd.h>

#define MODULE_NAME	"dtimerfd"
#define DEVICE		"/dev/dtimerfd"
#define ODEBUG_STATS	"/sys/kernel/debug/debug_objects/stats"
#define MAX_TIMERS	16

#ifndef CLOCK_BOOTTIME_ALARM
#define CLOCK_BOOTTIME_ALARM	9
#endif

static const char *module_path = "/dtimerfd.ko";
static int quiet;
static int kmsg_fd = -1;
static unsigned long long kmsg_lines;
static int failed;
static long cycle;

static long long now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void sleep_ns(long long ns)
{
	struct timespec ts = { ns / 1000000000LL, ns % 1000000000LL };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void __attribute__((format(printf, 1, 2))) fail(const char *fmt, ...)
{
	va_list ap;

	printf("lifecycle: FAIL (cycle %ld): ", cycle);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	failed++;
}

/* ---- the kernel log ---- */

/* splat_match(): made by make from vm/splat.txt */
#include "splat.h"

static void kmsg_open(void)
{
	kmsg_fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (kmsg_fd >= 0)
		lseek(kmsg_fd, 0, SEEK_END);
	else
		printf("lifecycle: /dev/kmsg: %s (the final scan still runs)\n",
		       strerror(errno));
}

/*
 * Kernel messages since the last look: "pri,seq,usec,flags;text".  Only
 * the kernel's own (facility 0, pri < 8) count.  Returns the reports.
 */
static int kmsg_scan(void)
{
	char rec[8192];
	int found = 0;
	ssize_t n;

	if (kmsg_fd < 0)
		return 0;
	for (;;) {
		char *text;
		int pri;

		n = read(kmsg_fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue;	/* overwritten records: go on */
		if (n <= 0)
			break;
		rec[n] = '\0';
		text = strchr(rec, ';');
		if (!text || sscanf(rec, "%d", &pri) != 1 || pri >= 8)
			continue;
		text++;
		text[strcspn(text, "\n")] = '\0';
		if (kmsg_lines++ < 20)
			printf("lifecycle: kernel said: %.200s\n", text);
		if (splat_match(text) && found++ < 10)
			printf("lifecycle: kernel: %s\n", text);
	}
	if (found)
		fail("%d kernel reports", found);
	return found;
}

/* DEBUG_OBJECTS' own count of its warnings; -1 without it */
static long odebug_warnings(void)
{
	char line[128];
	long v = -1;
	FILE *f = fopen(ODEBUG_STATS, "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "warnings : %ld", &v) == 1 ||
		    sscanf(line, "warnings: %ld", &v) == 1)
			break;
	fclose(f);
	return v;
}

/* ---- the module ---- */

static int load(void)
{
	struct stat st;
	int fd, i;

	fd = open(module_path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		fail("%s: %s", module_path, strerror(errno));
		return -1;
	}
	if (syscall(SYS_finit_module, fd, "", 0)) {
		fail("finit_module: %s", strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	/* devtmpfs has the node once misc_register() returned; allow 2 s */
	for (i = 0; i < 2000; i++) {
		if (!stat(DEVICE, &st) && S_ISCHR(st.st_mode))
			return 0;
		sleep_ns(1000000);
	}
	fail("%s did not appear after loading", DEVICE);
	return -1;
}

/* delete_module(), O_NONBLOCK as rmmod: 0, or -1 and errno */
static int unload_once(void)
{
	return (int)syscall(SYS_delete_module, MODULE_NAME, O_NONBLOCK);
}

static unsigned long long refusals;

static int refused(const char *why)
{
	refusals++;
	if (!unload_once()) {
		fail("the module unloaded while %s", why);
		return 0;
	}
	if (errno != EWOULDBLOCK && errno != EBUSY) {
		fail("delete_module while %s: %s, not EWOULDBLOCK or EBUSY",
		     why, strerror(errno));
		return 0;
	}
	return 1;
}

static unsigned long long unload_retries;

/*
 * Unload; a racing open (the opener thread) may hold a reference for a
 * moment: retry EWOULDBLOCK/EBUSY for up to 5 s.
 */
static int unload(void)
{
	long long deadline = now_ns(CLOCK_MONOTONIC) + 5000000000LL;

	for (;;) {
		if (!unload_once())
			return 0;
		if (errno != EWOULDBLOCK && errno != EBUSY) {
			fail("delete_module: %s", strerror(errno));
			return -1;
		}
		if (now_ns(CLOCK_MONOTONIC) > deadline) {
			fail("delete_module: still %s after 5 s with every fd closed",
			     strerror(errno));
			return -1;
		}
		unload_retries++;
		sleep_ns(200000);
	}
}

/* ---- timers ---- */

struct tmr {
	int clockid, flags;
	long long value, interval, max_defer;
	int abs;
};

static int alarm_ok = 1;

/* A timer from a control descriptor of its own, closed before it returns. */
static int dtfd_open(int clockid, int nonblock)
{
	struct dtfd_create c = {
		.clockid = clockid,
		.flags = O_CLOEXEC | (nonblock ? O_NONBLOCK : 0),
	};
	int ctl = open(DEVICE, O_RDWR | O_CLOEXEC), fd;

	if (ctl < 0) {
		fail("open %s: %s", DEVICE, strerror(errno));
		return -1;
	}
	fd = ioctl(ctl, DTFD_IOC_CREATE, &c);
	close(ctl);
	if (fd < 0) {
		if (clockid == CLOCK_BOOTTIME_ALARM && alarm_ok) {
			printf("lifecycle: no alarm timers here (%s)\n",
			       strerror(errno));
			alarm_ok = 0;
		} else if (clockid != CLOCK_BOOTTIME_ALARM) {
			fail("CREATE clock %d: %s", clockid, strerror(errno));
		}
		return -1;
	}
	return fd;
}

static int arm(int fd, const struct tmr *t)
{
	struct dtfd_itimerspec64 its;
	struct dtfd_settime a = {
		.flags = (unsigned int)t->flags,
		.new_value = (uintptr_t)&its,
	};
	struct dtfd_tolerance tol = { .max_defer_ns = (uint64_t)t->max_defer };
	long long v = t->value;

	if (t->abs)
		v += now_ns(t->clockid == CLOCK_BOOTTIME_ALARM ?
			    CLOCK_BOOTTIME : t->clockid);
	its.value_sec = v / 1000000000LL;
	its.value_nsec = v % 1000000000LL;
	its.interval_sec = t->interval / 1000000000LL;
	its.interval_nsec = t->interval % 1000000000LL;
	if (t->max_defer && ioctl(fd, DTFD_IOC_SET_TOLERANCE, &tol)) {
		fail("SET_TOLERANCE: %s", strerror(errno));
		return -1;
	}
	/*
	 * CANCEL_ON_SET and a clock step (the clocker thread) while arming:
	 * armed all the same, and ECANCELED, as timerfd says.
	 */
	if (ioctl(fd, DTFD_IOC_SETTIME64, &a) &&
	    !((t->flags & DTFD_TIMER_CANCEL_ON_SET) && errno == ECANCELED)) {
		fail("SETTIME clock %d flags %#x: %s", t->clockid, t->flags,
		     strerror(errno));
		return -1;
	}
	return 0;
}

static const struct tmr kinds[] = {
	/* strict periodic */
	{ CLOCK_MONOTONIC, 0, 1000000, 1000000, 0, 0 },
	/* deferrable periodic, fast */
	{ CLOCK_MONOTONIC, DTFD_TIMER_DEFERRABLE, 100000, 100000, 0, 0 },
	/* bounded deferrable one-shot: the backstop hrtimer */
	{ CLOCK_MONOTONIC, DTFD_TIMER_DEFERRABLE, 500000, 0, 1000000, 0 },
	/* bounded deferrable periodic */
	{ CLOCK_MONOTONIC, DTFD_TIMER_DEFERRABLE, 200000, 300000, 1000, 0 },
	/* CANCEL_ON_SET on REALTIME: the clock-change list */
	{ CLOCK_REALTIME, DTFD_TIMER_ABSTIME | DTFD_TIMER_CANCEL_ON_SET,
	  3600000000000LL, 0, 0, 1 },
	{ CLOCK_REALTIME, DTFD_TIMER_ABSTIME | DTFD_TIMER_CANCEL_ON_SET,
	  300000, 200000, 0, 1 },
	/* deferrable on absolute REALTIME and BOOTTIME: re-armed on steps */
	{ CLOCK_REALTIME, DTFD_TIMER_ABSTIME | DTFD_TIMER_DEFERRABLE,
	  400000, 400000, 0, 1 },
	{ CLOCK_BOOTTIME, DTFD_TIMER_DEFERRABLE, 700000, 0, 0, 0 },
	/* 1 ns period, fired and waiting for a read */
	{ CLOCK_MONOTONIC, 0, 1, 1, 0, 0 },
	/* far away, strict */
	{ CLOCK_MONOTONIC, 0, 3600000000000LL, 1000000000, 0, 0 },
	/* an alarm (root has CAP_WAKE_ALARM) */
	{ CLOCK_BOOTTIME_ALARM, 0, 1000000, 2000000, 0, 0 },
};

#define NKINDS	(int)(sizeof(kinds) / sizeof(kinds[0]))

static int open_all(int *fds, int nonblock)
{
	int i, n = 0;

	for (i = 0; i < NKINDS; i++) {
		if (kinds[i].clockid == CLOCK_BOOTTIME_ALARM && !alarm_ok)
			continue;
		fds[n] = dtfd_open(kinds[i].clockid, nonblock);
		if (fds[n] < 0)
			continue;
		if (arm(fds[n], &kinds[i])) {
			close(fds[n]);
			continue;
		}
		n++;
	}
	return n;
}

static void close_all(int *fds, int n)
{
	while (n-- > 0)
		close(fds[n]);
}

/* ---- racing threads ---- */

static int opener_on, clocker_on, stop_threads;
static unsigned long long opens_ok, opens_refused;

/*
 * Opens the device whenever it exists and makes an armed timer:
 * misc_open() and CREATE against the unload.  Once the control
 * descriptor is open, the module stays, and CREATE must work.
 */
static void *opener_main(void *arg)
{
	struct dtfd_itimerspec64 its = { 0, 0, 0, 50000 };
	struct dtfd_settime a = { DTFD_TIMER_DEFERRABLE, 0,
				  (uintptr_t)&its, 0 };
	struct dtfd_create c = { CLOCK_MONOTONIC, O_CLOEXEC };

	(void)arg;
	while (!__atomic_load_n(&stop_threads, __ATOMIC_RELAXED)) {
		int fd, t;

		if (!__atomic_load_n(&opener_on, __ATOMIC_RELAXED)) {
			sleep_ns(1000000);
			continue;
		}
		fd = open(DEVICE, O_RDWR | O_CLOEXEC);
		if (fd < 0) {
			if (errno != ENOENT && errno != ENXIO &&
			    errno != ENODEV)
				fail("racing open: %s", strerror(errno));
			opens_refused++;
			sleep_ns(50000);
			continue;
		}
		opens_ok++;
		t = ioctl(fd, DTFD_IOC_CREATE, &c);
		if (t < 0) {
			fail("racing CREATE: %s", strerror(errno));
		} else {
			/* the timer outlives the control descriptor */
			close(fd);
			fd = t;
			if (ioctl(fd, DTFD_IOC_SETTIME64, &a))
				fail("racing SETTIME64: %s", strerror(errno));
		}
		close(fd);
	}
	return NULL;
}

/* steps CLOCK_REALTIME back and forth: clock-change work during exit */
static void *clocker_main(void *arg)
{
	int sign = 1;

	(void)arg;
	while (!__atomic_load_n(&stop_threads, __ATOMIC_RELAXED)) {
		struct timespec ts;

		if (!__atomic_load_n(&clocker_on, __ATOMIC_RELAXED)) {
			sleep_ns(1000000);
			continue;
		}
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += sign * 50000;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_nsec -= 1000000000L;
			ts.tv_sec++;
		} else if (ts.tv_nsec < 0) {
			ts.tv_nsec += 1000000000L;
			ts.tv_sec--;
		}
		if (clock_settime(CLOCK_REALTIME, &ts))
			fail("clock_settime: %s", strerror(errno));
		sign = -sign;
		sleep_ns(1000000);
	}
	return NULL;
}

struct waiter {
	int ep;
	pthread_t tid;
};

static void *epoll_waiter(void *arg)
{
	struct waiter *w = arg;
	struct epoll_event ev[8];
	int i;

	/* until the epoll fd goes away; the timers' files go first */
	for (i = 0; i < 20; i++)
		if (epoll_wait(w->ep, ev, 8, 2) < 0 && errno != EINTR)
			break;
	return NULL;
}

/* ---- one cycle ---- */

static pid_t child_blocked_in_read(int fd)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct dtfd_itimerspec64 its = { 0, 0, 0, 0 };
		struct dtfd_settime a = { 0, 0, (uintptr_t)&its, 0 };
		int fl = fcntl(fd, F_GETFL);
		uint64_t t;

		/* disarmed and blocking: read waits until killed */
		ioctl(fd, DTFD_IOC_SETTIME64, &a);
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
		while (read(fd, &t, sizeof(t)) >= 0 || errno == EINTR)
			;
		_exit(1);
	}
	return pid;
}

static void reap(pid_t pid, int expect_kill)
{
	int status;

	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			fail("waitpid: %s", strerror(errno));
			return;
		}
	if (expect_kill && !(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL))
		fail("child ended with status %#x, not killed", status);
	if (!expect_kill && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		fail("child ended with status %#x", status);
}

/* a child exits with every timer armed: the last close; the fds still open */
static int child_holds_armed(int *fds, int n)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe2(p, O_CLOEXEC)) {
		fail("pipe: %s", strerror(errno));
		return n;
	}
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(p[0]);
	close_all(fds, n);
	refused("a child holds the armed timers");
	close(p[1]);	/* the child exits now */
	reap(pid, 0);
	return 0;
}

/* an epoll set with the timers, a thread waiting on it; unload, load */
static void in_epoll_set(int *fds, int n)
{
	struct waiter w;
	int k;

	w.ep = epoll_create1(EPOLL_CLOEXEC);
	for (k = 0; k < n; k++) {
		struct epoll_event ev = { .events = EPOLLIN };

		ev.data.u32 = (uint32_t)k;
		epoll_ctl(w.ep, EPOLL_CTL_ADD, fds[k], &ev);
	}
	pthread_create(&w.tid, NULL, epoll_waiter, &w);
	sleep_ns(500000);
	refused("timers are in an epoll set");
	close_all(fds, n);
	/* the set itself holds no reference */
	if (unload())
		return;
	pthread_join(w.tid, NULL);
	close(w.ep);
	load();
}

static void one_cycle(long i)
{
	int fds[MAX_TIMERS], n, k;
	int variant = (int)(i % 8);
	uint64_t t;

	n = open_all(fds, 1);
	if (n < NKINDS - !alarm_ok)
		fail("only %d of %d timers armed", n, NKINDS - !alarm_ok);

	/* let some fire, read a few, re-arm one as the other mode */
	if (i % 3)
		sleep_ns((i % 5) * 400000);
	for (k = 0; k < n; k += 3)
		if (read(fds[k], &t, sizeof(t)) < 0 && errno != EAGAIN &&
		    errno != ECANCELED)
			fail("read: %s", strerror(errno));

	refused("timers are open");

	switch (variant) {
	case 1: {
		/* a child inherits one fd and blocks in read on it */
		pid_t pid;

		if (!n)
			break;
		pid = child_blocked_in_read(fds[i % n]);
		close_all(fds, n);
		n = 0;
		sleep_ns(1000000);
		refused("a child holds an inherited fd");
		kill(pid, SIGKILL);
		reap(pid, 1);
		break;
	}
	case 3:
		n = child_holds_armed(fds, n);
		break;
	case 5:
		in_epoll_set(fds, n);
		return;
	case 7: {
		/* a control descriptor alone holds the module too */
		int ctl = open(DEVICE, O_RDWR | O_CLOEXEC);

		close_all(fds, n);
		n = 0;
		if (ctl < 0) {
			fail("open %s: %s", DEVICE, strerror(errno));
			break;
		}
		refused("only a control descriptor is open");
		close(ctl);
		break;
	}
	default:
		break;
	}

	close_all(fds, n);
	if (unload())
		return;
	if (!__atomic_load_n(&opener_on, __ATOMIC_RELAXED)) {
		int fd = open(DEVICE, O_RDWR | O_CLOEXEC);

		if (fd >= 0) {
			fail("%s opens after the unload", DEVICE);
			close(fd);
		}
	}
	load();
}

int main(int argc, char **argv)
{
	long cycles = 1000;
	long long t0, t;
	long ow0, ow1;
	pthread_t otid, ctid;
	int opt;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "n:m:q")) != -1) {
		switch (opt) {
		case 'n':
			cycles = atol(optarg);
			break;
		case 'm':
			module_path = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		default:
			fprintf(stderr, "usage: %s [-n CYCLES] [-m MODULE.ko] [-q]\n",
				argv[0]);
			return 2;
		}
	}
	if (access(DEVICE, F_OK) && load())
		return 1;

	kmsg_open();
	ow0 = odebug_warnings();
	printf("lifecycle: %ld load/unload cycles of %s, %d timers a cycle; DEBUG_OBJECTS %s\n",
	       cycles, module_path, NKINDS,
	       ow0 < 0 ? "absent" : "present");
	pthread_create(&otid, NULL, opener_main, NULL);
	pthread_create(&ctid, NULL, clocker_main, NULL);

	t0 = now_ns(CLOCK_MONOTONIC);
	for (cycle = 1; cycle <= cycles && !failed; cycle++) {
		/* racing threads in some cycles, not in others */
		__atomic_store_n(&opener_on, cycle % 4 == 2, __ATOMIC_RELAXED);
		__atomic_store_n(&clocker_on, cycle % 4 >= 2, __ATOMIC_RELAXED);
		one_cycle(cycle);
		if (access(DEVICE, F_OK))
			fail("%s missing after the cycle", DEVICE);
		kmsg_scan();
		if (!quiet && cycle % 100 == 0) {
			t = now_ns(CLOCK_MONOTONIC);
			printf("lifecycle: %ld cycles, %.1f s, %.1f ms a cycle\n",
			       cycle, (t - t0) / 1e9, (t - t0) / 1e6 / cycle);
		}
	}
	cycle--;
	__atomic_store_n(&stop_threads, 1, __ATOMIC_RELAXED);
	pthread_join(otid, NULL);
	pthread_join(ctid, NULL);
	t = now_ns(CLOCK_MONOTONIC);

	/* the module stays loaded: vm/init.c unloads it and checks */
	if (access(DEVICE, F_OK))
		load();
	sleep_ns(100000000);
	kmsg_scan();
	ow1 = odebug_warnings();
	if (ow0 >= 0 && ow1 != ow0)
		fail("DEBUG_OBJECTS warnings went from %ld to %ld", ow0, ow1);
	printf("lifecycle: %ld load/unload cycles in %.1f s (%.1f ms a cycle), delete_module refused %llu times with fds open, %llu unload retries, racing opens %llu ok / %llu refused, %llu kernel log lines, DEBUG_OBJECTS warnings %ld -> %ld: %s\n",
	       cycle, (t - t0) / 1e9, cycle ? (t - t0) / 1e6 / cycle : 0.0,
	       refusals, unload_retries, opens_ok, opens_refused, kmsg_lines,
	       ow0, ow1, failed ? "FAILED" : "clean");
	return failed ? 1 : 0;
}
