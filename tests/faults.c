// SPDX-License-Identifier: GPL-2.0
/*
 * Every call on a timer under injected faults: /proc/thread-self/fail-nth
 * (CONFIG_FAULT_INJECTION) fails the Nth fault site the calling thread
 * reaches, whether a slab allocation (failslab), a page allocation
 * (fail_page_alloc) or a copy to or from user space (fail_usercopy).
 * Each call runs with N = 1, 2, 3, ... until a run reaches no Nth site
 * (the fault was not injected); every failure on the way must be an
 * errno the call's timerfd counterpart gives (ENOMEM, ENFILE, EMFILE,
 * EFAULT), no call may fail without an injected fault, no descriptor may
 * be left behind, and the timer must work afterwards.  The guest's
 * kmemleak scan and kernel log scan (vm/init.c) then find what the
 * failed paths leaked or reported.  vm/check-debug runs it on the debug
 * kernel; elsewhere it skips.
 *
 * Each case prints one "# fault-nth: CALL: C calls, F faults injected,
 * errors E" line per call it tested; vm/check-debug adds them up.
 */
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>

#include "harness.h"

#define FAIL_NTH	"/proc/thread-self/fail-nth"
#define DEBUGFS		"/sys/kernel/debug/"
/* No call here reaches that many fault sites; more is a runaway loop. */
#define MAX_NTH		4096

/*
 * By default failslab and fail_page_alloc leave GFP_KERNEL allocations
 * alone (ignore-gfp-wait) and fail_page_alloc order-0 pages (min-order
 * 1), which is nearly everything a system call allocates; verbose 0:
 * an injected fault must not print a stack trace, which the guest's log
 * scan would report.
 */
static const char *const knobs[][2] = {
	{ DEBUGFS "failslab/ignore-gfp-wait", "N" },
	{ DEBUGFS "failslab/verbose", "0" },
	{ DEBUGFS "fail_page_alloc/ignore-gfp-wait", "N" },
	{ DEBUGFS "fail_page_alloc/ignore-gfp-highmem", "N" },
	{ DEBUGFS "fail_page_alloc/min-order", "0" },
	{ DEBUGFS "fail_page_alloc/verbose", "0" },
	{ DEBUGFS "fail_usercopy/verbose", "0" },
};

static int nth_fd = -1;

/*
 * fail-nth for this thread, knobs set, memory locked; or skip the case.
 * One timer made and closed first: libdtimerfd opens its control
 * descriptor then, so that the descriptor count of the runs is stable.
 */
static void faults_setup(const struct tfd_ops *ops)
{
	unsigned int i;
	int fd;

	h_require_root();
	nth_fd = open(FAIL_NTH, O_RDWR | O_CLOEXEC);
	if (nth_fd < 0)
		h_skip("no %s (a kernel without CONFIG_FAULT_INJECTION)",
		       FAIL_NTH);
	for (i = 0; i < ARRAY_SIZE(knobs); i++)
		if (h_write_file(knobs[i][0], knobs[i][1]))
			h_skip("cannot write %s: %s (CONFIG_FAULT_INJECTION_DEBUG_FS, FAILSLAB, FAIL_PAGE_ALLOC, FAULT_INJECTION_USERCOPY)",
			       knobs[i][0], strerror(errno));
	/* no page fault inside a window: it would take the injected fault */
	if (mlockall(MCL_CURRENT | MCL_FUTURE))
		h_skip("mlockall: %s", strerror(errno));
	fd = ops->create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	ASSERT_OK(fd);
	close(fd);
}

/* The next call's Nth fault site fails. */
static void nth_arm(unsigned int n)
{
	char buf[16];
	int len = snprintf(buf, sizeof(buf), "%u", n);

	ASSERTF(write(nth_fd, buf, len) == len, "write %s: %s", FAIL_NTH,
		strerror(errno));
}

/*
 * Was the fault injected?  fail-nth reads 0 once it was.  When it was
 * not, the read's own copy to user space is a fault site and may take
 * it (EFAULT): that too says "not injected".  Writing 0 disarms.
 */
static int nth_injected(void)
{
	char buf[16] = "";
	ssize_t n = pread(nth_fd, buf, sizeof(buf) - 1, 0);
	int injected = n > 0 && atoi(buf) == 0;

	if (write(nth_fd, "0", 1) != 1 && errno != EFAULT)
		h_fail(__FILE__, __LINE__, "disarm fail-nth", "%s",
		       strerror(errno));
	return injected;
}

/* The lowest free descriptor number: a call that failed must not move it. */
static int lowest_free_fd(void)
{
	int fd = dup(0);

	if (fd >= 0)
		close(fd);
	return fd;
}

#define ERRNO_BIT(e)	((e) > 0 && (e) < 64 ? 1ULL << (e) : 1ULL << 63)

struct call {
	const char *name;
	/* the call; -1 and errno on failure */
	long (*fn)(const struct tfd_ops *ops, void *arg);
	/* after each run: undo what a success did (close the new fd ...) */
	void (*after)(const struct tfd_ops *ops, void *arg, long ret);
	unsigned long long allowed;	/* ERRNO_BIT()s */
};

static const char *errno_names(unsigned long long set, char *buf, size_t len)
{
	static const struct { int e; const char *name; } names[] = {
		{ ENOMEM, "ENOMEM" }, { EFAULT, "EFAULT" }, { ENFILE, "ENFILE" },
		{ EMFILE, "EMFILE" }, { EINVAL, "EINVAL" }, { EBADF, "EBADF" },
		{ EAGAIN, "EAGAIN" }, { ENODEV, "ENODEV" }, { EPERM, "EPERM" },
	};
	size_t i, off = 0;

	buf[0] = '\0';
	for (i = 0; i < ARRAY_SIZE(names); i++)
		if (set & ERRNO_BIT(names[i].e))
			off += snprintf(buf + off, len - off, "%s%s",
					off ? " " : "", names[i].name);
	if (set & ~0ULL && !off)
		snprintf(buf, len, "other");
	else if (!set)
		snprintf(buf, len, "none");
	return buf;
}

/*
 * Run @c under fail-nth = 1, 2, ... until no fault is injected; returns
 * the set of errnos seen.  The last run must succeed.
 */
static unsigned long long under_faults(const struct tfd_ops *ops,
				       const struct call *c, void *arg)
{
	unsigned long long seen = 0;
	unsigned int n, injected = 0;
	int free_fd = lowest_free_fd();
	char names[128];

	for (n = 1; n <= MAX_NTH; n++) {
		long ret;
		int err, inj;

		nth_arm(n);
		ret = c->fn(ops, arg);
		err = errno;
		inj = nth_injected();
		if (ret < 0) {
			seen |= ERRNO_BIT(err);
			EXPECTF(c->allowed & ERRNO_BIT(err),
				"%s, fault %u: errno %d (%s), which its timerfd counterpart never gives",
				c->name, n, err, strerror(err));
			EXPECTF(inj, "%s failed (%s) with no fault injected",
				c->name, strerror(err));
		}
		if (c->after)
			c->after(ops, arg, ret);
		EXPECTF(lowest_free_fd() == free_fd,
			"%s, fault %u: descriptor %d left open", c->name, n,
			free_fd);
		if (!inj)
			break;
		injected++;
	}
	EXPECTF(n <= MAX_NTH, "%s: still failing after %u faults", c->name,
		MAX_NTH);
	h_diag("fault-nth: %s: %u calls, %u faults injected, errors %s",
	       c->name, n, injected, errno_names(seen, names, sizeof(names)));
	return seen;
}

/* ---- the calls ---- */

struct create_arg {
	clockid_t clockid;
	int flags;
};

static long do_create(const struct tfd_ops *ops, void *arg)
{
	struct create_arg *a = arg;

	return ops->create(a->clockid, a->flags);
}

static void close_fd(const struct tfd_ops *ops __attribute__((unused)),
		     void *arg __attribute__((unused)), long ret)
{
	if (ret >= 0)
		close((int)ret);
}

/* timerfd_create(2): ENOMEM, ENFILE, EMFILE (EINVAL, EPERM, ENODEV aside) */
TEST(create_timer, 0, 300)
{
	static const clockid_t clocks[] = {
		CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME,
	};
	struct call c = {
		.name = "create", .fn = do_create, .after = close_fd,
		.allowed = ERRNO_BIT(ENOMEM) | ERRNO_BIT(ENFILE) |
			   ERRNO_BIT(EMFILE),
	};
	unsigned int i;

	faults_setup(ops);
	for (i = 0; i < ARRAY_SIZE(clocks); i++) {
		struct create_arg a = { clocks[i], i ? TFD_CLOEXEC | TFD_NONBLOCK : 0 };

		/* the set of errors, compared: ENOMEM both ways */
		REC(!!(under_faults(ops, &c, &a) & ERRNO_BIT(ENOMEM)),
		    "create %s: ENOMEM seen", h_clock_name(clocks[i]));
	}
}

struct settime_arg {
	int fd;
	int flags;
	struct itimerspec new, old;
	int with_old;
};

static long do_settime(const struct tfd_ops *ops, void *arg)
{
	struct settime_arg *a = arg;

	return ops->settime(a->fd, a->flags, &a->new,
			    a->with_old ? &a->old : NULL);
}

static long do_gettime(const struct tfd_ops *ops, void *arg)
{
	struct settime_arg *a = arg;

	return ops->gettime(a->fd, &a->old);
}

/* timerfd_settime(2) and timerfd_gettime(2): EFAULT */
TEST(settime_gettime, 0, 300)
{
	struct call set = {
		.name = "settime", .fn = do_settime,
		.allowed = ERRNO_BIT(EFAULT),
	};
	struct call get = {
		.name = "gettime", .fn = do_gettime,
		.allowed = ERRNO_BIT(EFAULT),
	};
	static const struct {
		clockid_t clockid;
		int flags;
		const char *name;
	} modes[] = {
		{ CLOCK_MONOTONIC, 0, "monotonic relative" },
		{ CLOCK_BOOTTIME, 0, "boottime relative" },
		{ CLOCK_REALTIME, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET,
		  "realtime absolute, cancel on set" },
	};
	unsigned int i, old;

	faults_setup(ops);
	for (i = 0; i < ARRAY_SIZE(modes); i++)
	for (old = 0; old < 2; old++) {
		struct settime_arg a = { .flags = modes[i].flags, .with_old = old };
		long long value = SEC(3600);

		a.fd = ops->create(modes[i].clockid, TFD_CLOEXEC);
		ASSERT_OK(a.fd);
		if (modes[i].flags & TFD_TIMER_ABSTIME)
			value += h_now(modes[i].clockid);
		a.new = h_its(value, SEC(60));
		REC(!!(under_faults(ops, &set, &a) & ERRNO_BIT(EFAULT)),
		    "settime %s%s: EFAULT seen", modes[i].name,
		    old ? " with old value" : "");
		/* armed as asked: an hour left, a minute's period */
		EXPECT_OK(ops->gettime(a.fd, &a.old));
		EXPECT(h_its_value(&a.old) > SEC(3500));
		EXPECT(h_its_interval(&a.old) == SEC(60));
		REC(!!(under_faults(ops, &get, &a) & ERRNO_BIT(EFAULT)),
		    "gettime %s: EFAULT seen", modes[i].name);
		EXPECT(h_its_value(&a.old) > SEC(3500));
		close(a.fd);
	}
}

struct read_arg {
	int fd;
	uint64_t ticks;
};

static long do_read(const struct tfd_ops *ops __attribute__((unused)), void *arg)
{
	struct read_arg *a = arg;

	a->ticks = 0;
	return read(a->fd, &a->ticks, sizeof(a->ticks));
}

/* ticks again for the next run: an EFAULT took them (item 29) */
static void wait_ticks(const struct tfd_ops *ops __attribute__((unused)),
		       void *arg, long ret __attribute__((unused)))
{
	struct read_arg *a = arg;

	h_poll(a->fd, 5000, NULL);
}

/*
 * read(2): EFAULT, and the ticks are gone, as timerfd's (item 29).  Each
 * run finds ticks to read.  Before 6.8 timerfd copies with put_user(),
 * which fail_usercopy does not reach: there the native half sees no
 * error.
 */
TEST(read_ticks, 0, 300)
{
	struct call c = {
		.name = "read", .fn = do_read, .after = wait_ticks,
		.allowed = ERRNO_BIT(EFAULT),
	};
	struct read_arg a;
	struct itimerspec its = h_its(MS(1), MS(1));

	faults_setup(ops);
	a.fd = ops->create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	ASSERT_OK(a.fd);
	/* periodic: every run of the loop finds ticks to read */
	ASSERT_OK(ops->settime(a.fd, 0, &its, NULL));
	ASSERT(h_poll(a.fd, 5000, NULL) == 1);
	h_sleep_ns(MS(5));
	under_faults(ops, &c, &a);
	/* the timer goes on */
	h_sleep_ns(MS(5));
	EXPECT(h_wait_read(a.fd, 5000, &a.ticks) == 8 && a.ticks >= 1);
	close(a.fd);
}

struct ticks_arg {
	int fd;
	uint64_t v;
};

static long do_set_ticks(const struct tfd_ops *ops, void *arg)
{
	struct ticks_arg *a = arg;

	return ioctl(a->fd, ops->kind == BK_NATIVE ? TFD_IOC_SET_TICKS :
		     DTFD_IOC_SET_TICKS, &a->v);
}

/* TFD_IOC_SET_TICKS and DTFD_IOC_SET_TICKS: EFAULT */
TEST(set_ticks_count, T_NATIVE_MAY_SKIP, 60)
{
	struct call c = {
		.name = "set_ticks", .fn = do_set_ticks,
		.allowed = ERRNO_BIT(EFAULT),
	};
	struct ticks_arg a = { .v = 5 };
	uint64_t ticks;

	faults_setup(ops);
	a.fd = ops->create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	ASSERT_OK(a.fd);
	if (ops->kind == BK_NATIVE && sizeof(long) == 4)
		h_skip("TFD_IOC_SET_TICKS is ENOTTY for 32-bit processes (timerfd has no compat_ioctl)");
	REC(!!(under_faults(ops, &c, &a) & ERRNO_BIT(EFAULT)),
	    "set_ticks: EFAULT seen");
	EXPECT(REC(h_read(a.fd, &ticks), "read") == 8);
	EXPECT(REC(ticks, "ticks") == 5);
	close(a.fd);
}

struct tol_arg {
	int fd;
	struct dtfd_tolerance tol;
	struct dtfd_stats st;
	uint64_t features[8];
	int ctl;
};

static long do_set_tolerance(const struct tfd_ops *ops __attribute__((unused)), void *arg)
{
	struct tol_arg *a = arg;

	return dtimerfd_set_tolerance(a->fd, 1000, 2000000);
}

static long do_get_tolerance(const struct tfd_ops *ops __attribute__((unused)), void *arg)
{
	struct tol_arg *a = arg;

	return ioctl(a->fd, DTFD_IOC_GET_TOLERANCE, &a->tol);
}

static long do_get_stats(const struct tfd_ops *ops __attribute__((unused)), void *arg)
{
	struct tol_arg *a = arg;

	return dtimerfd_get_stats(a->fd, &a->st);
}

static long do_features(const struct tfd_ops *ops __attribute__((unused)), void *arg)
{
	struct tol_arg *a = arg;

	return ioctl(a->ctl, DTFD_IOC_FEATURES, a->features);
}

/* beyond timerfd: tolerance, statistics, features; EFAULT, as for a bad pointer */
TEST(tolerance_stats, T_DTFD_ONLY | T_NO_DEFER, 60)
{
	struct call calls[] = {
		{ "set_tolerance", do_set_tolerance, NULL, ERRNO_BIT(EFAULT) },
		{ "get_tolerance", do_get_tolerance, NULL, ERRNO_BIT(EFAULT) },
		{ "get_stats", do_get_stats, NULL, ERRNO_BIT(EFAULT) },
		{ "features", do_features, NULL, ERRNO_BIT(EFAULT) },
	};
	struct tol_arg a;
	unsigned int i;

	faults_setup(ops);
	a.fd = ops->create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	ASSERT_OK(a.fd);
	a.ctl = open("/dev/dtimerfd", O_RDONLY | O_CLOEXEC);
	ASSERT_OK(a.ctl);
	for (i = 0; i < ARRAY_SIZE(calls); i++)
		under_faults(ops, &calls[i], &a);
	ASSERT_OK(ioctl(a.fd, DTFD_IOC_GET_TOLERANCE, &a.tol));
	EXPECT(a.tol.slack_ns == 1000 && a.tol.max_defer_ns == 2000000);
	close(a.ctl);
	close(a.fd);
}

struct close_arg {
	const struct tfd_ops *ops;
	int fd;
	int armed;
};

static long do_close(const struct tfd_ops *ops __attribute__((unused)), void *arg)
{
	struct close_arg *a = arg;

	return close(a->fd);
}

/* a closed timer is a new one */
static void reopen(const struct tfd_ops *ops, void *arg, long ret)
{
	struct close_arg *a = arg;
	struct itimerspec its = h_its(MS(1), MS(1));

	if (ret)
		close(a->fd);
	a->fd = ops->create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (a->fd >= 0 && a->armed)
		ops->settime(a->fd, 0, &its, NULL);
}

/* close(2) of a timer, disarmed and armed (periodic, firing): never fails */
TEST(close_timer, 0, 60)
{
	struct call c = {
		.name = "close", .fn = do_close, .after = reopen,
		.allowed = 0,
	};
	struct close_arg a = { ops, -1, 0 };

	faults_setup(ops);
	for (a.armed = 0; a.armed < 2; a.armed++) {
		reopen(ops, &a, 0);
		ASSERT_OK(a.fd);
		REC(under_faults(ops, &c, &a) != 0, "close %s: an error",
		    a.armed ? "armed" : "disarmed");
		close(a.fd);
	}
}

TEST_MAIN()
