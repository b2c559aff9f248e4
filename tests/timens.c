// SPDX-License-Identifier: GPL-2.0
/*
 * Time namespaces: ABSTIME values on MONOTONIC, BOOTTIME and
 * BOOTTIME_ALARM are in the caller's namespace; relative values and
 * REALTIME are not affected.  Item 51 (after LTP timerfd04 and the
 * timens/timerfd.c selftest).  Needs root and CONFIG_TIME_NS.
 */
#include <sched.h>
#include <sys/wait.h>

#include "harness.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME	0x00000080
#endif

/* a new time namespace for our children, with these offsets (seconds) */
static void new_timens(long long mono_s, long long boot_s)
{
	char buf[128];
	int fd, n;

	h_require_root();
	if (access("/proc/self/timens_offsets", F_OK))
		h_skip("no time namespaces (CONFIG_TIME_NS)");
	if (unshare(CLONE_NEWTIME))
		h_skip("unshare(CLONE_NEWTIME): %s", strerror(errno));
	fd = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
	ASSERT_OK(fd);
	n = snprintf(buf, sizeof(buf), "%d %lld 0\n%d %lld 0\n",
		     CLOCK_MONOTONIC, mono_s, CLOCK_BOOTTIME, boot_s);
	ASSERTF(write(fd, buf, n) == n, "timens_offsets '%s': %s", buf,
		strerror(errno));
	close(fd);
}

/* run fn in a child (inside the new namespace); its checks count here */
static void in_child(const struct tfd_ops *ops,
		     void (*fn)(const struct tfd_ops *ops, long long arg),
		     long long arg)
{
	int status;
	pid_t pid;

	fflush(stdout);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		fn(ops, arg);
		fflush(stdout);
		_exit(0);
	}
	ASSERT(waitpid(pid, &status, 0) == pid);
	EXPECTF(WIFEXITED(status) && !WEXITSTATUS(status), "child status %#x",
		status);
}

static void abs40(const struct tfd_ops *ops, long long off)
{
	static const clockid_t clocks[] = {
		CLOCK_MONOTONIC, CLOCK_BOOTTIME, CLOCK_REALTIME,
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(clocks); i++) {
		clockid_t c = clocks[i];
		struct itimerspec its;
		long long t0, dt;
		uint64_t ticks = 0;
		int fd = ops->create(c, 0);

		ASSERT_OK(fd);
		t0 = h_now(c);
		its = h_its(t0 + MS(40), 0);
		ASSERT_OK(ops->settime(fd, TFD_TIMER_ABSTIME, &its, NULL));
		EXPECT(h_poll(fd, 5000, NULL) == 1);
		EXPECT(REC(h_read(fd, &ticks), "offset %+llds %s read", off,
			   h_clock_name(c)) == 8);
		dt = h_now(c) - t0;
		EXPECT(REC(ticks, "offset %+llds %s ticks", off,
			   h_clock_name(c)) == 1);
		EXPECTF(dt >= MS(40), "offset %+llds %s: slept too short, %lld us",
			off, h_clock_name(c), dt / 1000);
		EXPECTF(dt <= MS(1500), "offset %+llds %s: slept too long, %lld us",
			off, h_clock_name(c), dt / 1000);
		close(fd);
	}
}

/* LTP timerfd04: offsets +-10 s, ABSTIME now + 40 ms fires in 40 ms */
TEST(abstime_offsets, 0, 60)
{
	long long up = h_now(CLOCK_MONOTONIC) / NSEC_PER_SEC;
	long long boot = h_now(CLOCK_BOOTTIME) / NSEC_PER_SEC;
	long long neg = up < 12 ? up - 2 : 10;

	new_timens(10, 10);
	in_child(ops, abs40, 10);
	/* negative offsets must leave the clocks >= 0 */
	if (neg > boot - 2)
		neg = boot - 2;
	if (neg < 1)
		h_skip("uptime too short for a negative offset");
	new_timens(-neg, -neg);
	in_child(ops, abs40, -10);
}

static void hour(const struct tfd_ops *ops, long long unused)
{
	static const clockid_t clocks[] = {
		CLOCK_BOOTTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME_ALARM,
	};
	size_t i;
	int abs;

	(void)unused;
	for (i = 0; i < ARRAY_SIZE(clocks); i++)
	for (abs = 0; abs < 2; abs++) {
		clockid_t c = clocks[i];
		clockid_t base = h_clock_base(c);
		struct itimerspec its, cur;
		int fd;

		if (!h_clock_usable(c))
			continue;
		fd = ops->create(c, 0);
		ASSERT_OK(fd);
		its = h_its((abs ? h_now(base) : 0) + SEC(3600), SEC(1));
		ASSERT_OK(ops->settime(fd, abs ? TFD_TIMER_ABSTIME : 0, &its,
				       NULL));
		EXPECT_OK(ops->gettime(fd, &cur));
		EXPECTF(cur.it_value.tv_sec >= 3540 &&
			cur.it_value.tv_sec <= 3660,
			"%s %s: %lld s", h_clock_name(c),
			abs ? "abstime" : "relative",
			(long long)cur.it_value.tv_sec);
		h_rec_approx(cur.it_value.tv_sec, 60, "%s %s remaining s",
			     h_clock_name(c), abs ? "abstime" : "relative");
		close(fd);
	}
}

/* selftests/timens/timerfd.c: +70 days and +9 days, 3600 s +- 60 s */
TEST(hour_with_day_offsets, 0, 60)
{
	new_timens(70LL * 24 * 3600, 9LL * 24 * 3600);
	in_child(ops, hour, 0);
}

static void below_offset(const struct tfd_ops *ops, long long unused)
{
	static const clockid_t clocks[] = { CLOCK_MONOTONIC, CLOCK_BOOTTIME };
	size_t i;

	(void)unused;
	for (i = 0; i < ARRAY_SIZE(clocks); i++) {
		struct itimerspec its = h_its(SEC(1), 0), cur;
		uint64_t ticks = 0;
		int fd = ops->create(clocks[i], TFD_NONBLOCK);

		ASSERT_OK(fd);
		ASSERT_OK(ops->settime(fd, TFD_TIMER_ABSTIME, &its, NULL));
		EXPECT(REC(h_poll(fd, 2000, NULL), "%s abstime 1 s readable",
			   h_clock_name(clocks[i])) == 1);
		EXPECT(h_read(fd, &ticks) == 8);
		EXPECT(REC(ticks, "%s ticks", h_clock_name(clocks[i])) == 1);
		/* an ABSTIME value far beyond: remaining is ~ value - now */
		its = h_its(h_now(clocks[i]) + SEC(100), 0);
		ASSERT_OK(ops->settime(fd, TFD_TIMER_ABSTIME, &its, NULL));
		EXPECT_OK(ops->gettime(fd, &cur));
		h_rec_approx(cur.it_value.tv_sec, 5, "%s +100 s",
			     h_clock_name(clocks[i]));
		EXPECT(cur.it_value.tv_sec >= 95 && cur.it_value.tv_sec <= 100);
		close(fd);
	}
}

/* a target below the namespace offset is already expired */
TEST(abstime_below_offset, 0, 30)
{
	new_timens(70LL * 24 * 3600, 70LL * 24 * 3600);
	in_child(ops, below_offset, 0);
}

TEST_MAIN()
