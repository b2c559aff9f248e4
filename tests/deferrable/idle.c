// SPDX-License-Identifier: GPL-2.0
/*
 * tests/deferrable, unit 2: on an idle guest neither mode adds wake-ups.
 */
#define TEST_UNIT	2

#include <ctype.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/utsname.h>

#include "../harness.h"
#include "../../examples/irqs.h"	/* wake-ups by kind */
#include "deferrable.h"

/* What the idle-wake-up test counts over one window. */
struct loc_count {
	unsigned long long all;		/* idle exits (every kind), every CPU */
	unsigned long long cpu0;	/* local-timer interrupts of CPU 0 */
	unsigned long long jiffies;	/* ticks of a CPU that never stops its tick */
};

static void loc_read(struct loc_count *c)
{
	unsigned long long all;

	ASSERTF(!h_idle_exits(&c->all, 0, NULL), "no /proc/interrupts");
	ASSERTF(!h_local_timer_irqs(&all, 0, &c->cpu0),
		"no " DTFD_TIMER_IRQ " row in /proc/interrupts");
}

/* The kernel's jiffies, from /proc/timer_list (root only, like the module). */
static unsigned long long jiffies_now(void)
{
	unsigned long long j = 0;
	char line[512];
	FILE *f = fopen("/proc/timer_list", "r");

	ASSERT(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "jiffies: %llu", &j) == 1)
			break;
	fclose(f);
	ASSERTF(j, "no jiffies line in /proc/timer_list");
	return j;
}

/*
 * Serve @n timers with one epoll loop on CPU 0 for @ns, armed at 10 ms
 * with staggered phases (so strict timers cannot share wake-ups); count
 * the local-timer interrupts taken meanwhile.  n == 0: the idle baseline.
 */
static void loc_during(int n, int flags, long long ns, struct loc_count *c)
{
	int ep = epoll_create1(EPOLL_CLOEXEC), fds[64], i;
	long long start = h_now(CLOCK_MONOTONIC) + MS(20), end;
	struct loc_count before, after;

	ASSERT(ep >= 0 && n <= 64);
	h_pin(0);
	for (i = 0; i < n; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.fd = 0 };

		fds[i] = dcreate(CLOCK_MONOTONIC);
		ev.data.fd = fds[i];
		ASSERT_OK(epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev));
		ASSERT_OK(arm(fds[i], flags | DTFD_TIMER_ABSTIME,
			      start + i * MS(10) / n, MS(10)));
	}
	h_sleep_ns(MS(100));
	before.jiffies = jiffies_now();
	loc_read(&before);
	end = h_now(CLOCK_MONOTONIC) + ns;
	for (;;) {
		struct epoll_event evs[64];
		long long left = end - h_now(CLOCK_MONOTONIC);
		int r, j;

		if (left <= 0)
			break;
		r = epoll_wait(ep, evs, 64, (int)(left / MS(1)) + 1);
		for (j = 0; j < r; j++) {
			uint64_t t;

			read(evs[j].data.fd, &t, sizeof(t));
		}
	}
	loc_read(&after);
	after.jiffies = jiffies_now();
	for (i = 0; i < n; i++)
		close(fds[i]);
	close(ep);
	c->all = after.all - before.all;
	c->cpu0 = after.cpu0 - before.cpu0;
	c->jiffies = after.jiffies - before.jiffies;
}

/* A PREEMPT_RT kernel says so in its version string (uname -v). */
static int kernel_is_rt(void)
{
	struct utsname u;

	return !uname(&u) && strstr(u.version, "PREEMPT_RT");
}

/*
 * The scheduler's high-resolution preemption tick (sched feature HRTICK,
 * on by default in 7.2's PREEMPT_RT kernels, off in 6.x) arms an hrtimer
 * for the end of the slice of every task that starts running, and a
 * reader that blocks again first leaves the clock event programmed for
 * it: one interrupt without a timer behind it, per wake-up, whatever
 * woke the reader.  Traced on 7.2.13-rt: 1466 hrtick starts on CPU 0 for
 * 19 expiries, and the deferrable phase's 373 interrupts beyond the tick
 * gone with NO_HRTICK.  That is the scheduler's price of running the
 * reader, not a wake-up by the timer, so it is switched off while we
 * count (and put back after); the file is absent without debugfs.
 */
static const char sched_features[] = "/sys/kernel/debug/sched/features";

/* 1 if sched feature @name is on, 0 if off (it reads NO_<name>), -1 unknown */
static int sched_feature_on(const char *name)
{
	char buf[4096], *p = buf;
	size_t n = strlen(name);
	FILE *f = fopen(sched_features, "r");

	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	fclose(f);
	while ((p = strstr(p, name))) {
		if ((p == buf || p[-1] == ' ') &&
		    (p[n] == ' ' || p[n] == '\n' || !p[n]))
			return 1;
		p += n;
	}
	return 0;
}

/* Write each word of @words to the features file: h_alone()'s callback. */
static int sched_features_write(void *words)
{
	char name[32];
	const char *p = words;
	int n, ret = 0;

	while (sscanf(p, "%31s%n", name, &n) == 1) {
		if (h_write_file(sched_features, name))
			ret = -1;
		p += n;
	}
	return ret;
}

/*
 * Turn HRTICK and HRTICK_DL off; the names that were on, for
 * sched_restore().  Each switch patches the scheduler's hot paths, so it
 * is made with the other CPUs offline (h_alone()), and the CPUs brought
 * back get half a second to settle before anything is counted.
 */
static void sched_hrtick_off(char *was, size_t len)
{
	static const char *const feat[] = { "HRTICK", "HRTICK_DL" };
	char off[64] = "";
	size_t i;

	was[0] = 0;
	for (i = 0; i < ARRAY_SIZE(feat); i++) {
		if (sched_feature_on(feat[i]) != 1)
			continue;
		snprintf(off + strlen(off), sizeof(off) - strlen(off), "NO_%s ",
			 feat[i]);
		snprintf(was + strlen(was), len - strlen(was), "%s ", feat[i]);
	}
	if (!was[0])
		return;
	if (h_alone(sched_features_write, off))
		h_diag("sched features: writing \"%s\" failed: %s", off,
		       strerror(errno));
	h_sleep_ns(MS(500));
	h_diag("sched features %sswitched off while counting", was);
}

static void sched_restore(char *was)
{
	if (was[0])
		h_alone(sched_features_write, was);
}

/*
 * A thread that moves itself from CPU to CPU, and sleeps 100 us every 16
 * moves, until told to stop: enqueues and wake-ups on every CPU.
 */
static void *mover_fn(void *arg)
{
	atomic_int *stop = arg;
	int n = (int)sysconf(_SC_NPROCESSORS_CONF), i;

	for (i = 0; !atomic_load(stop); i++) {
		h_pin_cpu(i % n);	/* EINVAL while that CPU is offline */
		if (!(i % 16))
			h_sleep_ns(100000);
	}
	return NULL;
}

/*
 * sched_hrtick_off() must not bring the guest down.  x86 patches a site
 * through an INT3, and with other vCPUs running that code QEMU's TCG can
 * keep a stale translation of the INT3, which fires after the patch is
 * done: "Oops: int3" in enqueue_task_fair (a CI run of 7.2 died so in
 * idle_wakeups), within seconds of switching HRTICK back and forth on
 * 6.12 and 7.2 while threads move between CPUs.  So switch it for 10 s
 * that way, through h_alone(); every switch must take, every CPU come
 * back, and the guest runner fails the run on the oops.
 */
TEST(sched_switch_alone, T_DTFD_ONLY | T_NO_DEFER, 120)
{
	int on = sched_feature_on("HRTICK"), ncpus = h_ncpus(), i;
	char word[2][16] = { "NO_HRTICK", "HRTICK" };
	atomic_int stop = 0;
	long long end;
	pthread_t th[4];
	size_t t;

	if (on < 0)
		h_skip("no %s (debugfs)", sched_features);
	if (ncpus < 2)
		h_skip("one CPU online: nothing to race with");
	for (t = 0; t < ARRAY_SIZE(th); t++)
		ASSERT(!pthread_create(&th[t], NULL, mover_fn, &stop));
	end = h_now(CLOCK_MONOTONIC) + SEC(10);
	for (i = 0; h_now(CLOCK_MONOTONIC) < end; i++) {
		ASSERT_OK(h_alone(sched_features_write, word[i & 1]));
		EXPECTF(sched_feature_on("HRTICK") == (i & 1),
			"switch %d: HRTICK reads %d after writing %s", i,
			sched_feature_on("HRTICK"), word[i & 1]);
		ASSERTF(h_ncpus() == ncpus, "switch %d: %d of %d CPUs online",
			i, h_ncpus(), ncpus);
	}
	atomic_store(&stop, 1);
	for (t = 0; t < ARRAY_SIZE(th); t++)
		pthread_join(th[t], NULL);
	ASSERT_OK(h_alone(sched_features_write, word[on]));
	h_diag("%d switches in 10 s, %zu threads moving between %d CPUs", i,
	       ARRAY_SIZE(th), ncpus);
	EXPECTF(i >= 10, "only %d switches", i);
}

/*
 * The point of it all: on an idle guest, N deferrable timers at 10 ms add
 * at most 2 % of the idle exits (interrupts of every kind, IPIs included)
 * that N strict ones add; the benchmark holds the 1 % target.
 *
 * PREEMPT_RT keeps the tick of an idle CPU that something woke: a ticking
 * idle CPU raises the scheduler's softirq on (nearly) every tick, RT runs
 * it in ksoftirqd, and waking ksoftirqd ends the idle loop before its
 * second pass, the only one that stops the tick (without a cpuidle driver,
 * as in these guests).  Traced on 6.12-rt with no timer armed: in 3 s (750
 * jiffies) CPU 0 raised 758 SCHED softirqs, kept its tick 759 times and
 * stopped it 0 times.  A deferrable timer rides that tick, as it should,
 * so there the promise is the deferrable one proper: CPU 0 takes no
 * interrupt beyond its tick (one per jiffy), give or take 10 % of what
 * strict timers add.  The idle baseline is whichever state CPU 0 happened
 * to be in: no yardstick there.
 */
TEST(idle_wakeups, T_DTFD_ONLY | T_NO_DEFER | T_INTREE, 120)
{
	const int n = 8;
	struct loc_count base, strict, defer;
	double added_strict, added_defer, strict_beyond;

	/*
	 * Deferrable right after the baseline: a PREEMPT_RT guest that had
	 * a CPU ticking (as the strict phase makes it) may keep that tick
	 * for seconds after the timers are gone.
	 */
	char hrtick[64];

	struct loc_count percpu;

	sched_hrtick_off(hrtick, sizeof(hrtick));
	loc_during(0, 0, SEC(3), &base);
	loc_during(n, DTFD_TIMER_DEFERRABLE, SEC(3), &defer);
	loc_during(n, DTFD_TIMER_DEFERRABLE | DTFD_TIMER_PERCPU, SEC(3),
		   &percpu);
	loc_during(n, 0, SEC(3), &strict);
	sched_restore(hrtick);
	added_strict = (double)strict.all - (double)base.all;
	added_defer = (double)defer.all - (double)base.all;
	h_diag("exits from idle over 3 s: idle %llu, %d strict %llu (+%.0f), %d deferrable %llu (+%.0f): ratio %.3f",
	       base.all, n, strict.all, added_strict, n, defer.all,
	       added_defer, added_defer / added_strict);
	h_diag("CPU 0 " DTFD_TIMER_IRQ ": idle %llu, strict %llu, deferrable %llu; jiffies %llu, %llu, %llu",
	       base.cpu0, strict.cpu0, defer.cpu0, base.jiffies,
	       strict.jiffies, defer.jiffies);
	h_diag("%d per-CPU deferrable %llu (+%.0f), CPU 0 %llu in %llu jiffies",
	       n, percpu.all, (double)percpu.all - (double)base.all,
	       percpu.cpu0, percpu.jiffies);
	ASSERTF(added_strict > 300, "strict timers added only %.0f interrupts",
		added_strict);
	/* issue 30: the in-tree flag within 1 % of strict's idle exits */
	if (h_ops == &intree_ops && !kernel_is_rt()) {
		EXPECTF(added_defer <= 0.01 * added_strict,
			"in-tree deferrable added %.0f, strict %.0f",
			added_defer, added_strict);
		return;
	}
	if (!kernel_is_rt()) {
		EXPECTF(added_defer <= 0.02 * added_strict,
			"deferrable added %.0f, strict %.0f", added_defer,
			added_strict);
		EXPECTF((double)percpu.all - (double)base.all <=
			0.02 * added_strict,
			"per-CPU deferrable added %.0f, strict %.0f",
			(double)percpu.all - (double)base.all, added_strict);
		return;
	}
	strict_beyond = (double)strict.cpu0 - (double)strict.jiffies;
	h_diag("PREEMPT_RT: CPU 0 keeps its tick; beyond it, strict +%.0f, deferrable %+.0f",
	       strict_beyond, (double)defer.cpu0 - (double)defer.jiffies);
	ASSERTF(strict_beyond > 300, "strict timers added only %.0f interrupts beyond the tick",
		strict_beyond);
	EXPECTF(defer.cpu0 <= defer.jiffies + 0.10 * strict_beyond,
		"deferrable: CPU 0 took %llu interrupts in %llu jiffies (strict adds %.0f)",
		defer.cpu0, defer.jiffies, strict_beyond);
	EXPECTF(percpu.cpu0 <= percpu.jiffies + 0.10 * strict_beyond,
		"per-CPU deferrable: CPU 0 took %llu interrupts in %llu jiffies (strict adds %.0f)",
		percpu.cpu0, percpu.jiffies, strict_beyond);
}

/*
 * lone_tick_wait_ms: a due deferrable timer on an idle CPU rides only a
 * tick that runs another task anyway (whose kept tick its reader shares)
 * until it has waited that long; a lone tick would cost one more.  Here
 * the wait is longer than the test, the reader sleeps on CPU 0 beside a
 * "ticker" thread that sleeps on the timer wheel (recv() with
 * SO_RCVTIMEO sleeps in schedule_timeout()), so its ticks wake a task,
 * and every delivery CPU 0's idle task makes must find need_resched
 * already set: the "N" (or "n") of the trace's flags, trace_dtfd_deliver()
 * coming before the reader's wake-up.  The first delivery of each tick shows
 * what the module saw; the others of that tick follow the first's
 * wake-up.  Both deferrable modes, 10 ms periods, the ticker at 50 ms, so
 * lone ticks come between (the old rule rode them: seen failing so).
 *
 * On PREEMPT_RT timer callbacks run in ktimers, whose run queue the
 * trace does not show: skipped there, saying so.
 */
#define TRACEFS	"/sys/kernel/tracing/"

struct ticker {
	atomic_int stop;
	int ticks;
};

static void *ticker_fn(void *arg)
{
	struct ticker *t = arg;
	struct timeval tv = { .tv_usec = 50000 };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	char b;

	/* unbound: nothing can arrive, every recv() times out */
	h_pin(0);
	ASSERT(s >= 0);
	ASSERT_OK(setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)));
	while (!atomic_load(&t->stop)) {
		ASSERT(recv(s, &b, 1, 0) < 0 && errno == EAGAIN);
		t->ticks++;
	}
	close(s);
	return NULL;
}

static void trace_write(const char *file, const char *s)
{
	char path[128];

	snprintf(path, sizeof(path), TRACEFS "%s", file);
	ASSERTF(!h_write_file(path, s), "write %s: %s", path, strerror(errno));
}

/* Empty the ring buffer: what opening "trace" for writing with O_TRUNC does. */
static void trace_clear(void)
{
	int fd = open(TRACEFS "trace", O_WRONLY | O_TRUNC | O_CLOEXEC);

	ASSERTF(fd >= 0, "open " TRACEFS "trace: %s", strerror(errno));
	close(fd);
}

/*
 * The pid, the CPU and the need-resched flag of a trace line,
 * "  COMM-PID  [CPU] FLAGS  TIME: EVENT: ..." (COMM may hold spaces).
 */
static void trace_task(const char *line, int *pid, int *cpu, char *resched)
{
	const char *br = strstr(line, "] "), *q;

	ASSERTF(br, "trace line: %s", line);
	for (q = br; q > line && *q != '['; q--)
		;
	*cpu = atoi(q + 1);
	while (q > line && q[-1] == ' ')
		q--;
	while (q > line && isdigit((unsigned char)q[-1]))
		q--;
	ASSERTF(q > line && q[-1] == '-', "trace line: %s", line);
	*pid = atoi(q);
	for (br += 2; *br == ' '; br++)
		;
	ASSERTF(br[0] && br[1], "trace line: %s", line);
	*resched = br[1];
}

/*
 * Deliveries the idle task made on CPU 0, the timers' (*idle), and those
 * of them without need_resched set; all of dtimerfd's (*all).  Another
 * CPU's idle task may deliver too, legitimately: a finisher started when
 * its tick found it busy fires at the deadline, whatever it runs then.
 */
static int lone_deliveries(int *idle, int *all)
{
	char line[512], resched;
	FILE *f = fopen(TRACEFS "trace", "re");
	int lone = 0, pid, cpu;

	ASSERT(f);
	*idle = *all = 0;
	while (fgets(line, sizeof(line), f)) {
		if (line[0] == '#' || !strstr(line, " dtfd_deliver:"))
			continue;
		++*all;
		trace_task(line, &pid, &cpu, &resched);
		if (pid || cpu)
			continue;
		++*idle;
		if (resched == '.' && lone++ < 3)
			h_diag("lone tick: %s", line);
	}
	fclose(f);
	return lone;
}

TEST(lone_ticks_wait, T_DTFD_ONLY | T_NO_DEFER, 60)
{
	static const int modes[] = { DTFD_TIMER_DEFERRABLE,
				     DTFD_TIMER_DEFERRABLE | DTFD_TIMER_PERCPU };
	long old = h_param_get("lone_tick_wait_ms");
	struct ticker t = { 0 };
	pthread_t th;
	size_t m;

	if (kernel_is_rt())
		h_skip("PREEMPT_RT runs timer callbacks in ktimers, whose run queue the trace does not show");
	ASSERTF(old >= 0, "no lone_tick_wait_ms parameter");
	if (access(TRACEFS "trace", W_OK))
		mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL);
	ASSERTF(!access(TRACEFS "events/dtimerfd/dtfd_deliver/enable", W_OK),
		"no dtimerfd:dtfd_deliver event in tracefs");
	/*
	 * The event is switched while no dtimerfd timer is armed, so that no
	 * CPU runs its site during the patch (see sched_switch_alone).
	 */
	trace_write("tracing_on", "0");
	trace_write("events/dtimerfd/dtfd_deliver/enable", "1");
	h_pin(0);
	ASSERT(!pthread_create(&th, NULL, ticker_fn, &t));
	ASSERT_OK(h_param_set("lone_tick_wait_ms", 60000));
	for (m = 0; m < ARRAY_SIZE(modes); m++) {
		int ep = epoll_create1(EPOLL_CLOEXEC), fds[4], i, lone, idle, all;
		long long start = h_now(CLOCK_MONOTONIC) + MS(20), end;
		struct epoll_event ev = { .events = EPOLLIN };

		for (i = 0; i < 4; i++) {
			fds[i] = dcreate(CLOCK_MONOTONIC);
			ev.data.fd = fds[i];
			ASSERT_OK(epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev));
			ASSERT_OK(arm(fds[i], modes[m] | DTFD_TIMER_ABSTIME,
				      start + i * MS(10) / 4, MS(10)));
		}
		h_sleep_ns(MS(100));
		trace_write("tracing_on", "0");
		trace_clear();
		trace_write("tracing_on", "1");
		end = h_now(CLOCK_MONOTONIC) + MS(1500);
		while (h_now(CLOCK_MONOTONIC) < end) {
			struct epoll_event evs[4];
			int r = epoll_wait(ep, evs, 4, 100), j;
			uint64_t n;

			for (j = 0; j < r; j++)
				ASSERT(read(evs[j].data.fd, &n, sizeof(n)) ==
				       sizeof(n));
		}
		trace_write("tracing_on", "0");
		for (i = 0; i < 4; i++)
			close(fds[i]);
		close(ep);
		lone = lone_deliveries(&idle, &all);
		h_diag("%s: %d deliveries, %d by CPU 0's idle task, %d of them on a lone tick; %d ticker wake-ups",
		       m ? "per-CPU" : "deferrable", all, idle, lone, t.ticks);
		EXPECTF(!lone, "%d deliveries on lone ticks", lone);
		EXPECTF(idle >= 5, "only %d deliveries on the ticker's ticks",
			idle);
	}
	trace_write("events/dtimerfd/dtfd_deliver/enable", "0");
	h_param_set("lone_tick_wait_ms", old);
	atomic_store(&t.stop, 1);
	pthread_join(th, NULL);
}
