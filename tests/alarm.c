// SPDX-License-Identifier: GPL-2.0
/*
 * The alarm clocks: they work for a caller with CAP_WAKE_ALARM; without
 * it create and settime fail with EPERM, after the flag and clock checks.
 * Item 5 (and the alarm halves of 17, 21).
 */
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>

#include "harness.h"

static const clockid_t alarms[2] = {
	CLOCK_REALTIME_ALARM, CLOCK_BOOTTIME_ALARM,
};

/* clear CAP_WAKE_ALARM from this thread's effective and permitted sets */
static void drop_wake_alarm(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];
	unsigned int bit = 1U << (CAP_WAKE_ALARM % 32);

	ASSERT_OK(syscall(SYS_capget, &hdr, data));
	data[CAP_WAKE_ALARM / 32].effective &= ~bit;
	data[CAP_WAKE_ALARM / 32].permitted &= ~bit;
	data[CAP_WAKE_ALARM / 32].inheritable &= ~bit;
	ASSERT_OK(syscall(SYS_capset, &hdr, data));
	ASSERT(!h_can_wake_alarm());
}

/* privileged: relative, absolute and periodic alarm timers fire */
TEST(privileged, 0, 60)
{
	size_t i;

	h_require_alarm();
	for (i = 0; i < ARRAY_SIZE(alarms); i++) {
		clockid_t c = alarms[i];
		clockid_t base = h_clock_base(c);
		const char *cn = h_clock_name(c);
		struct itimerspec its, cur;
		long long t0, dt;
		uint64_t ticks = 0;
		int fd = REC_FD(ops->create(c, TFD_CLOEXEC), "%s create", cn);

		ASSERT_OK(fd);
		its = h_its(MS(100), 0);
		t0 = h_now(CLOCK_MONOTONIC);
		ASSERT_OK(REC(ops->settime(fd, 0, &its, NULL), "%s relative",
			      cn));
		EXPECT_OK(ops->gettime(fd, &cur));
		EXPECT(h_its_value(&cur) > 0 && h_its_value(&cur) <= MS(100));
		EXPECT(REC(h_read(fd, &ticks), "%s read", cn) == 8);
		dt = h_now(CLOCK_MONOTONIC) - t0;
		EXPECT(REC(ticks, "%s ticks", cn) == 1);
		EXPECTF(dt >= MS(99) && dt < SEC(2), "%s fired after %lld us",
			cn, dt / 1000);

		its = h_its(h_now(base) + MS(100), MS(50));
		t0 = h_now(CLOCK_MONOTONIC);
		ASSERT_OK(REC(ops->settime(fd, TFD_TIMER_ABSTIME, &its, NULL),
			      "%s abstime periodic", cn));
		h_sleep_ns(MS(300));
		EXPECT(REC(h_read(fd, &ticks), "%s periodic read", cn) == 8);
		dt = h_now(CLOCK_MONOTONIC) - t0;
		EXPECTF((long long)ticks >= 1 &&
			(long long)ticks <= (dt - MS(100)) / MS(50) + 1,
			"%s: %llu ticks after %lld ms", cn,
			(unsigned long long)ticks, dt / MS(1));
		REC_WITHIN(ticks, 1, (dt - MS(100)) / MS(50) + 1,
			   "%s periodic ticks", cn);
		close(fd);
	}
}

/* without CAP_WAKE_ALARM: EPERM at create, after the EINVAL checks */
TEST(unprivileged_create, T_NO_DEFER, 30)
{
	size_t i;
	int fd;

	if (!h_have_alarm())
		h_skip("kernel has no alarm timers");
	h_require_root();
	drop_wake_alarm();
	for (i = 0; i < ARRAY_SIZE(alarms); i++) {
		const char *cn = h_clock_name(alarms[i]);

		fd = REC_FD(ops->create(alarms[i], 0), "%s", cn);
		EXPECT_ERR(fd, EPERM);
		fd = REC_FD(ops->create(alarms[i], TFD_NONBLOCK | TFD_CLOEXEC),
			    "%s good flags", cn);
		EXPECT_ERR(fd, EPERM);
		/* flags are checked first */
		fd = REC_FD(ops->create(alarms[i], 0x10), "%s bad flags", cn);
		EXPECT_ERR(fd, EINVAL);
		fd = REC_FD(ops->create(alarms[i], -1), "%s flags -1", cn);
		EXPECT_ERR(fd, EINVAL);
	}
	/* the other clocks need nothing */
	for (i = 0; i < 3; i++) {
		fd = REC_FD(ops->create(h_clocks[i], 0), "%s",
			    h_clock_name(h_clocks[i]));
		EXPECT(fd >= 0);
		if (fd >= 0)
			close(fd);
	}
}

/*
 * A timer created while privileged, programmed after the capability is
 * gone: settime EPERM (after EFAULT/EINVAL/EBADF, before copy-out);
 * gettime and read still work.
 */
TEST(unprivileged_settime, 0, 30)
{
	struct itimerspec its = h_its(MS(50), 0), bad, cur, old;
	uint64_t ticks;
	size_t i;
	int fds[2];

	h_require_alarm();
	for (i = 0; i < 2; i++) {
		fds[i] = ops->create(alarms[i], TFD_NONBLOCK);
		ASSERT_OK(fds[i]);
		ASSERT_OK(ops->settime(fds[i], 0, &its, NULL));
	}
	h_sleep_ns(MS(150));
	drop_wake_alarm();
	bad = its;
	bad.it_value.tv_nsec = -1;
	for (i = 0; i < 2; i++) {
		const char *cn = h_clock_name(alarms[i]);
		int fd = fds[i];

		EXPECT_ERR(REC(ops->settime(fd, 0, &its, NULL), "%s settime",
			       cn), EPERM);
		EXPECT_ERR(REC(ops->settime(fd, 0, &its, &old),
			       "%s settime with old", cn), EPERM);
		EXPECT_ERR(REC(ops->settime(fd, 0, &its, h_bad_ptr()),
			       "%s settime bad old", cn), EPERM);
		EXPECT_ERR(REC(ops->settime(fd, 0, NULL, NULL),
			       "%s settime NULL", cn), EFAULT);
		EXPECT_ERR(REC(ops->settime(fd, 0, &bad, NULL),
			       "%s settime invalid", cn), EINVAL);
		EXPECT_ERR(REC(ops->settime(fd, 0x10, &its, NULL),
			       "%s settime bad flags", cn), EINVAL);
		/* the earlier expiry is still there: EPERM changed nothing */
		EXPECT(REC(h_read(fd, &ticks), "%s read", cn) == 8);
		EXPECT(REC(ticks, "%s ticks", cn) == 1);
		EXPECT_OK(REC(ops->gettime(fd, &cur), "%s gettime", cn));
		h_rec_its(&cur, 0, "%s gettime", cn);
		close(fd);
	}
}

/* setuid(nobody) in a child: EPERM for alarms, the rest works */
TEST(setuid_nobody, T_NO_DEFER, 30)
{
	int status, fd;
	pid_t pid;

	if (!h_have_alarm())
		h_skip("kernel has no alarm timers");
	h_require_root();
	fd = ops->create(CLOCK_REALTIME_ALARM, 0);
	ASSERT_OK(fd);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct itimerspec its = h_its(SEC(10), 0);
		int t;

		if (setgid(65534) || setuid(65534)) {
			h_fail(__FILE__, __LINE__, "setuid", "%s",
			       strerror(errno));
			_exit(1);
		}
		t = ops->create(CLOCK_BOOTTIME_ALARM, 0);
		EXPECT_ERR(t, EPERM);
		t = ops->create(CLOCK_MONOTONIC, 0);
		EXPECTF(t >= 0, "unprivileged MONOTONIC create: %s",
			strerror(errno));
		if (t >= 0) {
			EXPECT_OK(ops->settime(t, 0, &its, NULL));
			close(t);
		}
		EXPECT_ERR(ops->settime(fd, 0, &its, NULL), EPERM);
		EXPECT_OK(ops->gettime(fd, &its));
		fflush(stdout);
		_exit(0);
	}
	ASSERT(pid > 0 && waitpid(pid, &status, 0) == pid);
	EXPECT(REC(status, "child status") == 0);
	close(fd);
}

TEST_MAIN()
