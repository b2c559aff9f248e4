// SPDX-License-Identifier: GPL-2.0
/*
 * TFD_IOC_SET_TICKS (native) and DTFD_IOC_SET_TICKS (dtimerfd): replaces
 * the pending count, wakes waiters, 0 is EINVAL, a bad pointer EFAULT, a
 * pending clock cancel ECANCELED.  Item 46.
 */
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>

#include "harness.h"

/*
 * fs/timerfd.c has no compat_ioctl: a 32-bit process gets ENOTTY for
 * TFD_IOC_SET_TICKS.  There the native half skips and dtimerfd (which
 * has compat_ioctl) runs alone against the expectations.
 */
static void native_compat_skip(const struct tfd_ops *ops)
{
	uint64_t v = 1;
	int fd;

	if (ops->kind != BK_NATIVE || sizeof(long) == 8)
		return;
	fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (fd >= 0 && ioctl(fd, TFD_IOC_SET_TICKS, &v) && errno == ENOTTY)
		h_skip("TFD_IOC_SET_TICKS is ENOTTY for 32-bit processes (timerfd has no compat_ioctl)");
	close(fd);
}

static long do_set_ticks(const struct tfd_ops *ops, int fd, void *p)
{
	return ioctl(fd, ops->kind == BK_NATIVE ? TFD_IOC_SET_TICKS :
		     DTFD_IOC_SET_TICKS, p);
}

static long set_ticks_v(const struct tfd_ops *ops, int fd, uint64_t v)
{
	return do_set_ticks(ops, fd, &v);
}

TEST(set_ticks, T_NATIVE_MAY_SKIP, 30)
{
	struct itimerspec its = h_its(MS(10), 0), cur;
	uint64_t ticks;
	short rev;
	int fd = ops->create(CLOCK_MONOTONIC, TFD_NONBLOCK);

	ASSERT_OK(fd);
	native_compat_skip(ops);
	/* disarmed timer: set 5, readable, read 5 */
	EXPECT_OK(REC(set_ticks_v(ops, fd, 5), "set 5"));
	EXPECT(REC(h_poll(fd, 0, &rev), "poll") == 1);
	EXPECT(REC(rev, "revents") == POLLIN);
	EXPECT(REC(h_read(fd, &ticks), "read") == 8);
	EXPECT(REC(ticks, "ticks") == 5);
	/* 0 is EINVAL, a bad pointer EFAULT, NULL EFAULT */
	EXPECT_ERR(REC(set_ticks_v(ops, fd, 0), "set 0"), EINVAL);
	EXPECT_ERR(REC(do_set_ticks(ops, fd, h_bad_ptr()), "set bad ptr"),
		   EFAULT);
	EXPECT_ERR(REC(do_set_ticks(ops, fd, NULL), "set NULL"), EFAULT);
	EXPECT_ERR(REC(h_read(fd, &ticks), "read after failures"), EAGAIN);
	/* it sets, it does not add */
	ASSERT_OK(ops->settime(fd, 0, &its, NULL));
	EXPECT(h_poll(fd, 5000, NULL) == 1);
	EXPECT_OK(REC(set_ticks_v(ops, fd, 7), "set 7 on expired"));
	EXPECT(REC(h_read(fd, &ticks), "read") == 8);
	EXPECT(REC(ticks, "ticks") == 7);
	/* a huge count survives intact */
	EXPECT_OK(set_ticks_v(ops, fd, 0x123456789abcdefULL));
	EXPECT(h_read(fd, &ticks) == 8);
	EXPECT(REC(ticks == 0x123456789abcdefULL, "64-bit count") == 1);
	/* it does not mark the timer expired: an armed periodic one stays */
	its = h_its(SEC(3600), SEC(10));
	ASSERT_OK(ops->settime(fd, 0, &its, NULL));
	EXPECT_OK(set_ticks_v(ops, fd, 3));
	EXPECT(REC(h_read(fd, &ticks), "read on armed") == 8);
	EXPECT(REC(ticks, "ticks on armed") == 3);
	EXPECT_OK(ops->gettime(fd, &cur));
	h_rec_its(&cur, SEC(5), "gettime");
	EXPECT(h_its_value(&cur) > SEC(3500));
	/* settime discards a count set this way */
	EXPECT_OK(set_ticks_v(ops, fd, 4));
	ASSERT_OK(ops->settime(fd, 0, &its, NULL));
	EXPECT_ERR(REC(h_read(fd, &ticks), "read after settime"), EAGAIN);
	close(fd);
}

struct blocked {
	int fd;
	int epoll;
	long ret;
	uint64_t ticks;
};

static void *blocked_read(void *arg)
{
	struct blocked *b = arg;

	if (b->epoll) {
		struct epoll_event ev = { .events = EPOLLIN }, out;
		int ep = epoll_create1(EPOLL_CLOEXEC);

		epoll_ctl(ep, EPOLL_CTL_ADD, b->fd, &ev);
		b->ret = epoll_wait(ep, &out, 1, 10000);
		close(ep);
	} else {
		b->ret = h_read(b->fd, &b->ticks);
	}
	return NULL;
}

/* waiters wake up when the count is set */
TEST(set_ticks_wakes, T_NATIVE_MAY_SKIP, 30)
{
	int e;

	native_compat_skip(ops);
	for (e = 0; e < 2; e++) {
		struct blocked b = { -1, e, 0, 0 };
		pthread_t th;

		b.fd = ops->create(CLOCK_MONOTONIC, 0);
		ASSERT_OK(b.fd);
		pthread_create(&th, NULL, blocked_read, &b);
		h_sleep_ns(MS(200));
		EXPECT_OK(set_ticks_v(ops, b.fd, 9));
		pthread_join(th, NULL);
		if (e) {
			EXPECT(REC(b.ret, "epoll_wait woke") == 1);
		} else {
			EXPECT(REC(b.ret, "read woke") == 8);
			EXPECT(REC(b.ticks, "ticks") == 9);
		}
		close(b.fd);
	}
}

/* a pending clock cancel: ECANCELED, which consumes the cancel */
TEST(set_ticks_cancelled, T_CLOCK | T_NATIVE_MAY_SKIP, 30)
{
	struct itimerspec its;
	uint64_t ticks;
	int fd;

	native_compat_skip(ops);
	h_require_clock_set();
	fd = ops->create(CLOCK_REALTIME, TFD_NONBLOCK);
	ASSERT_OK(fd);
	its = h_its(h_now(CLOCK_REALTIME) + SEC(3600), 0);
	ASSERT_OK(ops->settime(fd, TFD_TIMER_ABSTIME | TFD_TIMER_CANCEL_ON_SET,
			       &its, NULL));
	ASSERT_OK(h_clock_step(0));
	EXPECT(h_poll(fd, 2000, NULL) == 1);
	EXPECT_ERR(REC(set_ticks_v(ops, fd, 2), "set 2 on cancelled"),
		   ECANCELED);
	REC(h_read(fd, &ticks), "read after");
	REC(ticks, "ticks after");
	EXPECT_OK(REC(set_ticks_v(ops, fd, 2), "set 2 again"));
	EXPECT(REC(h_read(fd, &ticks), "read") == 8);
	EXPECT(REC(ticks, "ticks") == 2);
	h_clock_restore();
	close(fd);
}

TEST_MAIN()
