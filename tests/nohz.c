// SPDX-License-Identifier: GPL-2.0
/*
 * nohz_full: timers armed and read by threads on CPU 0 must not interrupt
 * an isolated CPU 1 that runs a user-space busy loop (the promise of
 * nohz_full, and of a deferrable timer: it never wakes or disturbs a CPU
 * for itself).  Only in a guest booted with nohz_full=1 (vm/check-nohz
 * boots one with nohz_full=1 isolcpus=1); elsewhere it skips.
 *
 * First a control: a strict 1 ms timer read on CPU 1 itself must show up in
 * the count.  Then for each load (native timerfd; dtimerfd strict,
 * deferrable, deferrable per-CPU and bounded deferrable) two windows of
 * DTFD_TEST_NOHZ_SECONDS (default 10) each: one with the busy loop alone,
 * then one with the busy loop and the load on CPU 0.  CPU 1's interrupts
 * (every row of /proc/interrupts, its column) during each are counted;
 * the load's window may have at most NOHZ_SLACK_PER_S per second more
 * than the quiet one (the residual tick of a nohz_full CPU under TCG
 * wanders by a few a second), where a source that aims timers or IPIs at
 * CPU 1 adds hundreds a second.  Each case prints both windows, row by
 * row, for the rows that changed.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/wait.h>

#include "harness.h"

#define NOHZ_SLACK_PER_S	2	/* extra interrupts a second allowed */
#define NOHZ_LOADERS		5	/* timer threads on CPU 0 */
#define NOHZ_MAX_ROWS		64

struct irq_rows {
	int n;
	char name[NOHZ_MAX_ROWS][16];
	unsigned long long count[NOHZ_MAX_ROWS];
};

/* CPU @cpu's column of every row of /proc/interrupts; 0, or -1 */
static int irq_snapshot(int cpu, struct irq_rows *r)
{
	FILE *f = fopen("/proc/interrupts", "re");
	char line[4096];
	int ncol = 0;

	r->n = 0;
	if (!f)
		return -1;
	/* the header: CPU0 CPU1 ... (online CPUs only) */
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -1;
	}
	for (char *p = line; (p = strstr(p, "CPU")); p += 3)
		ncol++;
	while (fgets(line, sizeof(line), f) && r->n < NOHZ_MAX_ROWS) {
		char *p = line, *colon = strchr(line, ':'), *end;
		int col;

		if (!colon)
			continue;
		while (*p == ' ')
			p++;
		snprintf(r->name[r->n], sizeof(r->name[0]), "%.*s",
			 (int)(colon - p), p);
		/* rows with one total (ERR, MIS) have no per-CPU column */
		for (col = 0, p = colon + 1; col < ncol; col++, p = end) {
			unsigned long long v = strtoull(p, &end, 10);

			if (end == p)
				break;
			if (col == cpu)
				r->count[r->n] = v;
		}
		if (col == ncol)
			r->n++;
	}
	fclose(f);
	return r->n ? 0 : -1;
}

/* @after - @before, row by row (rows matched by name); the total */
static unsigned long long irq_delta(const struct irq_rows *before,
				    const struct irq_rows *after,
				    struct irq_rows *d)
{
	unsigned long long total = 0;
	int i, j;

	d->n = 0;
	for (i = 0; i < after->n; i++) {
		unsigned long long b = 0;

		for (j = 0; j < before->n; j++)
			if (!strcmp(before->name[j], after->name[i]))
				b = before->count[j];
		memcpy(d->name[d->n], after->name[i], sizeof(d->name[0]));
		d->count[d->n] = after->count[i] - b;
		total += d->count[d->n++];
	}
	return total;
}

/* Is @cpu in the list of /sys/devices/system/cpu/nohz_full ("1", "1-3,5")? */
static int nohz_full_cpu(int cpu)
{
	FILE *f = fopen("/sys/devices/system/cpu/nohz_full", "re");
	char buf[256] = "", *p = buf;
	int in = 0;

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	while (*p >= '0' && *p <= '9') {
		long lo = strtol(p, &p, 10), hi = lo;

		if (*p == '-')
			hi = strtol(p + 1, &p, 10);
		if (cpu >= lo && cpu <= hi)
			in = 1;
		if (*p == ',')
			p++;
	}
	return in;
}

enum load {
	LOAD_STRICT,		/* settime flags 0 */
	LOAD_DEFERRABLE,	/* DTFD_TIMER_DEFERRABLE: rides any CPU */
	LOAD_PERCPU,		/* ... | DTFD_TIMER_PERCPU */
	LOAD_BOUNDED,		/* deferrable, max_defer_ns 1 ms */
	LOAD_CONTROL,		/* strict, one reader on CPU 1 itself */
};

static const char *const load_names[] = {
	"strict", "deferrable", "deferrable per-CPU", "bounded deferrable",
	"control (a reader on CPU 1)",
};

struct loader {
	pthread_t thread;
	const struct tfd_ops *ops;
	enum load load;
	int index;
	atomic_int *stop;
	unsigned long long reads, settimes;
	int err;
};

static int load_flags(enum load load)
{
	switch (load) {
	case LOAD_DEFERRABLE:
	case LOAD_BOUNDED:
		return DTFD_TIMER_DEFERRABLE;
	case LOAD_PERCPU:
		return DTFD_TIMER_DEFERRABLE | DTFD_TIMER_PERCPU;
	default:
		return 0;
	}
}

static int load_settime(struct loader *l, int fd, long long value_ns,
			long long interval_ns)
{
	struct itimerspec its = h_its(value_ns, interval_ns);

	l->settimes++;
	if (l->ops->kind == BK_NATIVE)
		return timerfd_settime(fd, 0, &its, NULL);
	return dtimerfd_settime(fd, load_flags(l->load), &its, NULL);
}

/*
 * On CPU 0: loaders 0-3 read periodic timers of 1, 2, 5 and 10 ms;
 * loader 4 re-arms a one-shot timer every millisecond to 1-20 ms ahead,
 * so the earliest deadline keeps moving earlier (what aims the riders).
 */
static void *loader_fn(void *arg)
{
	static const long long periods[] = { MS(1), MS(2), MS(5), MS(10) };
	struct loader *l = arg;
	uint64_t seed = 0x5eed + l->index, ticks;
	int fd;

	if (h_pin_cpu(l->load == LOAD_CONTROL && !l->index ? 1 : 0)) {
		l->err = errno;
		return NULL;
	}
	fd = l->ops->create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (fd < 0) {
		l->err = errno;
		return NULL;
	}
	if (l->load == LOAD_BOUNDED && dtimerfd_set_tolerance(fd, 0, MS(1))) {
		l->err = errno;
		goto out;
	}
	if (l->index < 4) {
		if (load_settime(l, fd, periods[l->index], periods[l->index])) {
			l->err = errno;
			goto out;
		}
		while (!atomic_load(l->stop))
			if (h_wait_read(fd, 100, &ticks) == 8)
				l->reads++;
	} else {
		while (!atomic_load(l->stop)) {
			if (load_settime(l, fd, MS(1 + h_mix(&seed) % 20), 0)) {
				l->err = errno;
				break;
			}
			h_sleep_ns(MS(1));
		}
	}
out:
	close(fd);
	return NULL;
}

static int nohz_seconds(void)
{
	const char *v = getenv("DTFD_TEST_NOHZ_SECONDS");
	int s = v ? atoi(v) : 0;

	return s > 0 ? s : 10;
}

/*
 * The busy loop: a process of its own on CPU 1, not a thread of ours.
 * A thread would share our address space, and every mmap, mprotect and
 * munmap of ours (a thread's stack) would send CPU 1 a TLB shootdown.
 */
static pid_t busy_start(void)
{
	pid_t pid = fork();

	ASSERTF(pid >= 0, "fork: %s", strerror(errno));
	if (!pid) {
		volatile unsigned long spins = 0;

		if (h_pin_cpu(1))
			_exit(1);
		for (;;)
			spins++;
	}
	return pid;
}

static void busy_stop(pid_t pid)
{
	int status;

	kill(pid, SIGKILL);
	EXPECT(waitpid(pid, &status, 0) == pid);
	EXPECTF(WIFSIGNALED(status), "the busy loop ended by itself: not on CPU 1?");
}

/* One window of @seconds: CPU 1's interrupts, row by row, into @d. */
static unsigned long long window(int seconds, struct irq_rows *d)
{
	struct irq_rows before, after;

	ASSERT(!irq_snapshot(1, &before));
	h_sleep_ns(SEC(seconds));
	ASSERT(!irq_snapshot(1, &after));
	return irq_delta(&before, &after, d);
}

static void show(const char *what, const struct irq_rows *quiet,
		 const struct irq_rows *loaded)
{
	char buf[1024];
	int i, off = 0;

	for (i = 0; i < loaded->n && i < quiet->n; i++)
		if (quiet->count[i] || loaded->count[i])
			off += snprintf(buf + off, sizeof(buf) - off,
					" %s %llu/%llu", loaded->name[i],
					quiet->count[i], loaded->count[i]);
	buf[off] = '\0';
	h_diag("nohz_full: %s: CPU 1 interrupts quiet/loaded by row:%s",
	       what, off ? buf : " none");
}

static void isolated(const struct tfd_ops *ops, enum load load)
{
	struct loader l[NOHZ_LOADERS];
	struct irq_rows quiet, loaded;
	unsigned long long q, w, reads = 0, settimes = 0, bound;
	atomic_int stop = 0;
	pid_t busy;
	int s = nohz_seconds(), i;

	if (h_ncpus() < 2 || !nohz_full_cpu(1))
		h_skip("CPU 1 is not nohz_full (boot with nohz_full=1: vm/check-nohz)");
	if (nohz_full_cpu(0))
		h_skip("CPU 0 is nohz_full too: no CPU to arm timers from");
	h_pin(0);
	busy = busy_start();
	/* the busy loop alone on CPU 1: its tick stops */
	h_sleep_ns(SEC(1));
	q = window(s, &quiet);

	for (i = 0; i < NOHZ_LOADERS; i++) {
		l[i] = (struct loader){ .ops = ops, .load = load, .index = i,
					.stop = &stop };
		ASSERT(!pthread_create(&l[i].thread, NULL, loader_fn, &l[i]));
	}
	w = window(s, &loaded);
	atomic_store(&stop, 1);
	for (i = 0; i < NOHZ_LOADERS; i++) {
		pthread_join(l[i].thread, NULL);
		EXPECTF(!l[i].err, "loader %d: %s", i, strerror(l[i].err));
		reads += l[i].reads;
		settimes += l[i].settimes;
	}
	busy_stop(busy);

	show(load_names[load], &quiet, &loaded);
	bound = q + (unsigned long long)NOHZ_SLACK_PER_S * s;
	h_diag("nohz_full: %s: CPU 1 interrupts in %d s: %llu quiet, %llu with %llu reads and %llu settimes on CPU 0 (bound %llu)",
	       load_names[load], s, q, w, reads, settimes, bound);
	EXPECT(reads > 0);
	if (load == LOAD_CONTROL) {
		EXPECTF(w > bound,
			"a 1 ms timer read on CPU 1 itself interrupted it only %llu times in %d s: the count does not see CPU 1",
			w, s);
		return;
	}
	EXPECTF(w <= bound,
		"%s timers armed on CPU 0 interrupted the isolated CPU 1 %llu times in %d s, against %llu without them",
		load_names[load], w, s, q);
}

/*
 * The measurement itself: a strict timer read on CPU 1 interrupts it a thousand
 * times a second, which the count must see.
 */
TEST(control_reader_on_cpu1, T_DTFD_ONLY | T_NO_DEFER, 120)
{
	isolated(ops, LOAD_CONTROL);
}

/* native timerfd, the control; dtimerfd's strict timers */
TEST(isolated_strict, T_NO_DEFER | T_NO_COMPARE, 120)
{
	isolated(ops, LOAD_STRICT);
}

TEST(isolated_deferrable, T_DTFD_ONLY | T_NO_DEFER, 120)
{
	isolated(ops, LOAD_DEFERRABLE);
}

TEST(isolated_deferrable_percpu, T_DTFD_ONLY | T_NO_DEFER, 120)
{
	isolated(ops, LOAD_PERCPU);
}

TEST(isolated_bounded, T_DTFD_ONLY | T_NO_DEFER, 120)
{
	isolated(ops, LOAD_BOUNDED);
}

TEST_MAIN()
