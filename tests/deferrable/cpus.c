// SPDX-License-Identifier: GPL-2.0
/*
 * tests/deferrable, unit 1: which CPU delivers a deferrable timer, with
 * and without DTFD_TIMER_PERCPU, delivery on access, and the wake-ups
 * counted by kind.
 */
#define TEST_UNIT	1

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/utsname.h>

#include "../harness.h"
#include "../../examples/irqs.h"	/* wake-ups by kind */
#include "deferrable.h"

/*
 * All interrupts CPU @cpu has taken (every row of /proc/interrupts).  The
 * file stays open and is re-read with pread(): opening and closing files
 * queues RCU work, and RCU grace periods keep idle CPUs ticking.
 */
static unsigned long long cpu_irqs(int pfd, int cpu)
{
	static char buf[1 << 16];
	unsigned long long sum = 0;
	char *line, *save = NULL;
	ssize_t n = pread(pfd, buf, sizeof(buf) - 1, 0);

	ASSERT(n > 0);
	buf[n] = 0;
	line = strtok_r(buf, "\n", &save);	/* the CPUn header */
	while ((line = strtok_r(NULL, "\n", &save))) {
		char *p = strchr(line, ':'), *end;
		unsigned long long v = 0;
		int c;

		if (!p)
			continue;
		p++;
		for (c = 0; c <= cpu; c++) {
			v = strtoull(p, &end, 10);
			if (end == p)
				break;
			p = end;
		}
		if (c > cpu)
			sum += v;
	}
	return sum;
}

/* fdinfo's ticks, read through a kept-open fdinfo file (see above) */
static unsigned long long fdinfo_ticks(int ifd)
{
	char buf[1024], *p;
	ssize_t n = pread(ifd, buf, sizeof(buf) - 1, 0);

	ASSERT(n > 0);
	buf[n] = 0;
	p = strstr(buf, "\nticks: ");
	ASSERT(p);
	return strtoull(p + 8, NULL, 10);
}

/*
 * DTFD_TIMER_PERCPU: where the timer lives is the CPU of the thread that
 * armed it, and it never wakes that CPU.  Armed from CPU 0, then watched from CPU 1 (busy): in
 * every window after the deadline in which CPU 0 took no interrupt at all,
 * the timer must not have fired (fdinfo looks without delivering).  When
 * CPU 0 wakes for something else, it fires.  Armed from CPU 0 while CPU 0
 * spins: on time, every time.
 */
TEST(pinned_to_arming_cpu, T_DTFD_ONLY | T_NO_DEFER, 120)
{
	int fd = dcreate(CLOCK_MONOTONIC), k, quiet = 0, woke = 0, gone = 0;
	int pfd = open("/proc/interrupts", O_RDONLY | O_CLOEXEC);
	char path[64];
	struct h_spinner s;
	int ifd;

	if (h_ncpus() < 2)
		h_skip("needs two CPUs");
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	ifd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT(pfd >= 0 && ifd >= 0);

	h_idle_spinner(&s, 1);
	for (k = 0; k < 30; k++) {
		unsigned long long before, ticks0, ticks;
		long long deadline;

		h_pin(0);
		deadline = h_now(CLOCK_MONOTONIC) + MS(100);
		ASSERT_OK(arm(fd, DTFD_TIMER_DEFERRABLE | DTFD_TIMER_PERCPU |
			      DTFD_TIMER_ABSTIME, deadline, 0));
		h_pin(1);
		h_sleep_ns(deadline + MS(1) - h_now(CLOCK_MONOTONIC));
		/*
		 * Our wake-up on busy CPU 1 can come late, and CPU 0 may have
		 * woken and fired the timer before we look: only what happens
		 * between the two looks, bracketed by the interrupt counts,
		 * is a verdict.
		 */
		before = cpu_irqs(pfd, 0);
		ticks0 = fdinfo_ticks(ifd);
		h_sleep_ns(MS(100));
		ticks = fdinfo_ticks(ifd);
		if (ticks0) {
			gone++;
			continue;
		}
		if (cpu_irqs(pfd, 0) == before) {
			quiet++;
			EXPECTF(ticks == 0,
				"round %d: fired on CPU 0 without an interrupt",
				k);
		} else if (ticks) {
			woke++;
		}
	}
	h_spinner_stop(&s);
	h_diag("CPU 0 quiet after the deadline in %d of 30 rounds (the timer waited), woke and fired in %d, had fired before the first look in %d",
	       quiet, woke, gone);
	if (!quiet)
		h_diag("CPU 0 never stayed quiet for 100 ms: nothing checked");

	h_pin(0);
	h_idle_spinner(&s, 0);
	for (k = 0; k < 10; k++) {
		ASSERT_OK(arm(fd, DTFD_TIMER_DEFERRABLE | DTFD_TIMER_PERCPU,
			      MS(20), 0));
		h_sleep_ns(MS(200));
		EXPECTF(fdinfo_ticks(ifd) == 1, "busy arming CPU, round %d", k);
	}
	h_spinner_stop(&s);
	close(ifd);
	close(pfd);
	close(fd);
}

/*
 * The promise of DTFD_TIMER_DEFERRABLE: on time whenever any CPU is awake.
 * Armed from CPU 0, which then idles, and waited for from the last CPU,
 * kept busy: delivered near a jiffy after the deadline, never before (a
 * timer that waits for CPU 0 is hundreds of ms late on these guests).
 * Each clock the deadline can be measured on, one-shot and periodic.
 */
TEST(rides_any_cpu, T_DTFD_ONLY | T_NO_DEFER | T_INTREE, 120)
{
	static const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_BOOTTIME,
					    CLOCK_REALTIME };
	int last = h_ncpus() - 1, k, c;
	struct lates lates = { 0 };
	struct h_spinner s;

	if (last < 1)
		h_skip("needs two CPUs");
	h_idle_spinner(&s, last);
	for (c = 0; c < (int)ARRAY_SIZE(clocks); c++) {
		int fd = dcreate(clocks[c]);

		for (k = 0; k < 10; k++) {
			long long deadline, late;
			uint64_t ticks;

			h_pin(0);
			deadline = h_now(clocks[c]) + MS(100);
			ASSERT_OK(arm(fd, DTFD_TIMER_DEFERRABLE |
				      DTFD_TIMER_ABSTIME, deadline,
				      k & 1 ? MS(500) : 0));
			h_pin(last);
			EXPECT(h_poll(fd, 2000, NULL) == 1);
			late = h_now(clocks[c]) - deadline;
			EXPECTF(late >= 0, "%s: %lld ns early",
				h_clock_name(clocks[c]), -late);
			ASSERT(h_read(fd, &ticks) == 8);
			EXPECT(ticks == 1);
			late_add(&lates, late);
		}
		close(fd);
	}
	h_spinner_stop(&s);
	late_check(&lates, "armed on idle CPU 0, read on a busy CPU");
}

/*
 * A deferrable timer that another, busy CPU expires wakes its reader there,
 * not on the reader's idle CPU (the in-tree flag: WF_CURRENT_CPU, which no
 * module can use).  The reader arms from CPU 0, may then run on any CPU,
 * and blocks in read() on CPU 0, which idles; the last CPU spins.  On a
 * kernel that expires the timer on CPU 0, or wakes the reader where it
 * slept, read() returns on CPU 0.
 */
TEST(reader_runs_on_expiring_cpu, T_DTFD_ONLY | T_NO_DEFER | T_INTREE, 60)
{
	int last = h_ncpus() - 1, fd, k, here = 0;
	struct h_spinner s;

	if (!intree())
		h_skip("the module wakes the reader on its own CPU: a module cannot use WF_CURRENT_CPU");
	if (last < 1)
		h_skip("needs two CPUs");
	fd = dcreate(CLOCK_MONOTONIC);
	h_idle_spinner(&s, last);
	for (k = 0; k < 10; k++) {
		uint64_t ticks;

		h_pin(0);
		ASSERT_OK(arm(fd, DTFD_TIMER_DEFERRABLE, MS(100), 0));
		h_pin(-1);	/* still on CPU 0: it blocks there */
		ASSERT(h_read(fd, &ticks) == 8);
		here += sched_getcpu() == last;
	}
	h_spinner_stop(&s);
	close(fd);
	h_diag("read() returned on busy CPU %d in %d of 10 rounds", last, here);
	EXPECTF(here >= 8, "the reader ran on the expiring CPU in %d of 10 rounds",
		here);
}

/* DTFD_TIMER_PERCPU is a kind of deferral: never alone, never an alarm. */
TEST(percpu_flag, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	int fd = dcreate(CLOCK_MONOTONIC), afd;
	struct h_fdinfo fi;

	EXPECT_ERR(arm(fd, DTFD_TIMER_PERCPU, MS(10), 0), EINVAL);
	ASSERT_OK(arm(fd, DTFD_TIMER_DEFERRABLE | DTFD_TIMER_PERCPU, SEC(10),
		      0));
	ASSERT_OK(h_fdinfo(fd, &fi));
	EXPECT(strstr(fi.extra, "dtimerfd-mode: deferrable-percpu") != NULL);
	ASSERT_OK(arm(fd, DTFD_TIMER_DEFERRABLE, SEC(10), 0));
	ASSERT_OK(h_fdinfo(fd, &fi));
	EXPECT(strstr(fi.extra, "dtimerfd-mode: deferrable\n") != NULL);
	close(fd);
	afd = dtimerfd_create(CLOCK_BOOTTIME_ALARM, DTFD_CLOEXEC);
	if (afd >= 0) {
		EXPECT_ERR(arm(afd, DTFD_TIMER_DEFERRABLE | DTFD_TIMER_PERCPU,
			       MS(10), 0), EINVAL);
		close(afd);
	}
}

/* A due deferrable timer is delivered to whoever looks (poll, gettime). */
TEST(delivered_on_access, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	int fd = dcreate(CLOCK_MONOTONIC), k, ok = 0;
	struct itimerspec cur;
	uint64_t ticks;

	h_pin(0);
	for (k = 0; k < 5; k++) {
		ASSERT_OK(arm(fd, DTFD_TIMER_DEFERRABLE, MS(20), MS(30)));
		h_sleep_ns(MS(100));
		/* poll(0) checks the clock: readable whether or not it fired */
		EXPECT(h_poll(fd, 0, NULL) == 1);
		ASSERT_OK(dtimerfd_gettime(fd, &cur));
		EXPECT(h_its_value(&cur) > 0 && h_its_value(&cur) <= MS(30));
		h_set_nonblock(fd, 1);
		/* 20, 50 and 80 ms have passed; 110 ms only on a slow guest */
		if (h_read(fd, &ticks) == 8 && (ticks == 3 || ticks == 4))
			ok++;
		h_set_nonblock(fd, 0);
	}
	EXPECTF(ok == 5, "%d of 5 reads counted the expirations", ok);
	close(fd);
}

/*
 * The wake-up instrument sees what a delivery costs the reader's CPU.  A
 * thread on CPU 0, busy, arms a deferrable timer (its home is CPU 0) each
 * time a reader on CPU 1, idle in between, has read the last expiry: CPU
 * 0 delivers, and wakes the reader with the scheduler's IPI, not with CPU
 * 1's local timer.  Those wake-ups must show up beyond what the local
 * timer's count explains; a count of the local timer alone misses them.
 */
struct armer {
	int fd, n;
	atomic_int done;	/* expiries the reader has read */
};

static void *armer_fn(void *arg)
{
	struct armer *a = arg;
	int k;

	h_pin(0);
	for (k = 0; k < a->n; k++) {
		while (atomic_load(&a->done) < k)
			;		/* busy: CPU 0 stays awake */
		if (arm(a->fd, DTFD_TIMER_DEFERRABLE, MS(20), 0))
			break;
	}
	return NULL;
}

TEST(wakeups_counted_by_kind, T_DTFD_ONLY | T_NO_DEFER, 60)
{
	const int reader = 1;
	struct armer a = { .n = 40 };
	unsigned long long exits, loc, ipis;
	struct irq_counts c0, c1;
	pthread_t th;
	uint64_t ticks;
	int k;

	if (h_ncpus() < 2)
		h_skip("needs two CPUs");
	a.fd = dcreate(CLOCK_MONOTONIC);
	h_pin(reader);
	ASSERT_OK(irq_counts_read(&c0));
	ASSERT(!pthread_create(&th, NULL, armer_fn, &a));
	for (k = 0; k < a.n; k++) {
		if (h_read(a.fd, &ticks) != 8)
			break;
		atomic_store(&a.done, k + 1);
	}
	ASSERT_OK(irq_counts_read(&c1));
	pthread_join(th, NULL);
	close(a.fd);
	exits = irq_counts_sum(&c1, reader, -1) - irq_counts_sum(&c0, reader, -1);
	loc = irq_counts_sum(&c1, reader, IRQ_TIMER) -
	      irq_counts_sum(&c0, reader, IRQ_TIMER);
	ipis = irq_counts_sum(&c1, reader, IRQ_RESCHED) +
	       irq_counts_sum(&c1, reader, IRQ_CALL) -
	       irq_counts_sum(&c0, reader, IRQ_RESCHED) -
	       irq_counts_sum(&c0, reader, IRQ_CALL);
	h_diag("CPU %d over %d deliveries by busy CPU 0: %llu exits from idle (%s), %llu " DTFD_TIMER_IRQ ", %llu reschedule and function-call IPIs",
	       reader, k, exits, c1.have_exits ? "power:cpu_idle" : "every interrupt",
	       loc, ipis);
	EXPECT(k == a.n);
	EXPECTF(ipis >= (unsigned long long)a.n / 2,
		"CPU %d: %llu IPIs counted for %d cross-CPU deliveries", reader,
		ipis, a.n);
}
