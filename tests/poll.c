// SPDX-License-Identifier: GPL-2.0
/*
 * poll, select and epoll (level- and edge-triggered).  Items 32-35.
 */
#include <poll.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/syscall.h>

#include "harness.h"

#define ALL_EVENTS (POLLIN | POLLPRI | POLLOUT | POLLRDNORM | POLLRDBAND | \
		    POLLWRNORM | POLLWRBAND | POLLMSG | POLLRDHUP)

static int poll_all(int fd, int timeout)
{
	struct pollfd p = { .fd = fd, .events = ALL_EVENTS };

	if (poll(&p, 1, timeout) < 0)
		return -1;
	return p.revents;
}

/* readable, writable, exceptional as select() sees them, as 3 bits */
static int select_bits(int fd, int timeout_ms)
{
	struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
	fd_set r, w, e;
	int n;

	FD_ZERO(&r);
	FD_ZERO(&w);
	FD_ZERO(&e);
	FD_SET(fd, &r);
	FD_SET(fd, &w);
	FD_SET(fd, &e);
	n = select(fd + 1, &r, &w, &e, timeout_ms < 0 ? NULL : &tv);
	if (n < 0)
		return -1;
	return FD_ISSET(fd, &r) | FD_ISSET(fd, &w) << 1 | FD_ISSET(fd, &e) << 2;
}

/* 32: POLLIN exactly when something is pending; no other bit, ever */
TEST(event_bits, 0, 30)
{
	struct itimerspec its = h_its(SEC(3600), 0);
	uint64_t ticks;
	int fd = ops->create(CLOCK_MONOTONIC, TFD_NONBLOCK);

	ASSERT_OK(fd);
	EXPECT(REC(poll_all(fd, 0), "revents disarmed") == 0);
	EXPECT(REC(select_bits(fd, 0), "select disarmed") == 0);
	ASSERT_OK(ops->settime(fd, 0, &its, NULL));
	EXPECT(REC(poll_all(fd, 0), "revents armed") == 0);
	its = h_its(MS(10), 0);
	ASSERT_OK(ops->settime(fd, 0, &its, NULL));
	EXPECT(h_poll(fd, 5000, NULL) == 1);
	EXPECT(REC(poll_all(fd, 0), "revents expired") == POLLIN);
	EXPECT(REC(select_bits(fd, 0), "select expired") == 1);
	/* POLLOUT alone: never ready */
	{
		struct pollfd p = { .fd = fd, .events = POLLOUT };

		EXPECT(REC(poll(&p, 1, 0), "poll POLLOUT only") == 0);
		EXPECT(p.revents == 0);
	}
	EXPECT(h_read(fd, &ticks) == 8);
	EXPECT(REC(poll_all(fd, 0), "revents after read") == 0);
	close(fd);
}

/* 33: blocking poll, select and epoll_wait wake on expiry */
TEST(blocking_wakeup, 0, 60)
{
	struct epoll_event ev = { .events = EPOLLIN }, out;
	int kind;

	for (kind = 0; kind < 3; kind++) {
		static const char *kn[] = { "poll", "select", "epoll_wait" };
		struct itimerspec its = h_its(MS(300), 0);
		long long t0, dt;
		int fd = ops->create(CLOCK_MONOTONIC, TFD_NONBLOCK);
		int ep = epoll_create1(EPOLL_CLOEXEC), r;
		uint64_t ticks;

		ASSERT_OK(fd);
		ASSERT_OK(ep);
		ev.data.fd = fd;
		ASSERT_OK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
		t0 = h_now(CLOCK_MONOTONIC);
		ASSERT_OK(ops->settime(fd, 0, &its, NULL));
		if (kind == 0)
			r = poll_all(fd, -1);
		else if (kind == 1)
			r = select_bits(fd, -1);
		else
			r = epoll_wait(ep, &out, 1, -1) == 1 ? (int)out.events :
							       -1;
		dt = h_now(CLOCK_MONOTONIC) - t0;
		EXPECT(REC(r, "%s infinite wait", kn[kind]) ==
		       (kind == 1 ? 1 : POLLIN));
		EXPECTF(dt >= MS(299), "%s woke after %lld us", kn[kind],
			dt / 1000);
		EXPECTF(dt < MS(300) + MS(700), "%s woke after %lld us",
			kn[kind], dt / 1000);
		EXPECT(REC(h_read(fd, &ticks), "%s read", kn[kind]) == 8);
		EXPECT(ticks == 1);
		close(ep);
		close(fd);
	}
}

/* 34: EPOLL_CTL_ADD works; a disarmed timer times every wait out */
TEST(epoll_timeouts, 0, 30)
{
	static const long long waits_ns[] = {
		MS(100), MS(10), MS(1), 1000, 1,
	};
	struct epoll_event ev = { .events = EPOLLIN }, out[2];
	int fd = ops->create(CLOCK_MONOTONIC, 0);
	int ep = epoll_create1(EPOLL_CLOEXEC);
	size_t i;

	ASSERT_OK(fd);
	ASSERT_OK(ep);
	EXPECT_OK(REC(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), "EPOLL_CTL_ADD"));
	EXPECT_ERR(REC(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev), "add twice"),
		   EEXIST);
	for (i = 0; i < ARRAY_SIZE(waits_ns); i++) {
		/* epoll_pwait2 takes a __kernel_timespec: 64-bit fields */
		struct { int64_t sec, nsec; } ts = {
			waits_ns[i] / NSEC_PER_SEC, waits_ns[i] % NSEC_PER_SEC,
		};
		long r;

		if (waits_ns[i] >= MS(1))
			r = epoll_wait(ep, out, 2, waits_ns[i] / MS(1));
		else
			r = syscall(SYS_epoll_pwait2, ep, out, 2, &ts, NULL,
				    (size_t)8);
		if (r < 0 && errno == ENOSYS)
			continue;
		EXPECT(REC(r, "epoll wait %lld ns", waits_ns[i]) == 0);
	}
	EXPECT(REC(epoll_wait(ep, out, 2, 0), "epoll wait 0") == 0);
	ev.events = EPOLLIN | EPOLLET;
	EXPECT_OK(REC(epoll_ctl(ep, EPOLL_CTL_MOD, fd, &ev), "EPOLL_CTL_MOD"));
	EXPECT_OK(REC(epoll_ctl(ep, EPOLL_CTL_DEL, fd, NULL), "EPOLL_CTL_DEL"));
	close(ep);
	close(fd);
}

/* 34: level-triggered: ready until read */
TEST(epoll_level, 0, 30)
{
	struct epoll_event ev = { .events = EPOLLIN }, out;
	struct itimerspec its = h_its(MS(20), 0);
	uint64_t ticks;
	int fd = ops->create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	int ep = epoll_create1(EPOLL_CLOEXEC);

	ASSERT_OK(fd);
	ASSERT_OK(ep);
	ev.data.u64 = 42;
	ASSERT_OK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	ASSERT_OK(ops->settime(fd, 0, &its, NULL));
	EXPECT(REC(epoll_wait(ep, &out, 1, 5000), "first wait") == 1);
	EXPECT(REC(out.events, "events") == EPOLLIN);
	EXPECT(out.data.u64 == 42);
	EXPECT(REC(epoll_wait(ep, &out, 1, 0), "second wait") == 1);
	EXPECT(REC(epoll_wait(ep, &out, 1, 0), "third wait") == 1);
	EXPECT(h_read(fd, &ticks) == 8);
	EXPECT(REC(epoll_wait(ep, &out, 1, 0), "after read") == 0);
	close(ep);
	close(fd);
}

/*
 * 34 and 36: edge-triggered: one event per expiry.  An unread periodic
 * timer is not re-armed by its own expiry, so it gives no new edge until
 * it is read.
 */
TEST(epoll_edge, 0, 30)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLET }, out;
	struct itimerspec its = h_its(MS(30), MS(30));
	uint64_t ticks;
	long long t0;
	int fd = ops->create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	int ep = epoll_create1(EPOLL_CLOEXEC);

	ASSERT_OK(fd);
	ASSERT_OK(ep);
	ASSERT_OK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));
	t0 = h_now(CLOCK_MONOTONIC);
	ASSERT_OK(ops->settime(fd, 0, &its, NULL));
	EXPECT(REC(epoll_wait(ep, &out, 1, 5000), "first edge") == 1);
	EXPECT(REC(epoll_wait(ep, &out, 1, 0), "no new edge") == 0);
	h_sleep_ns(MS(150));
	EXPECT(REC(epoll_wait(ep, &out, 1, 0), "unread periodic: no edge") ==
	       0);
	EXPECT(h_read(fd, &ticks) == 8);
	t0 = (h_now(CLOCK_MONOTONIC) - t0) / MS(30);
	REC_WITHIN(ticks, 5, t0, "count");
	EXPECTF((long long)ticks >= 5 && (long long)ticks <= t0,
		"count %llu, at most %lld", (unsigned long long)ticks, t0);
	EXPECT(REC(epoll_wait(ep, &out, 1, 5000), "edge after read") == 1);
	EXPECT(REC(epoll_wait(ep, &out, 1, 0), "and only one") == 0);
	/* SET_TICKS-free re-arm: settime gives a fresh edge on expiry */
	its = h_its(MS(10), 0);
	ASSERT_OK(ops->settime(fd, 0, &its, NULL));
	EXPECT(REC(epoll_wait(ep, &out, 1, 5000), "edge after settime") == 1);
	close(ep);
	close(fd);
}

/* 35: readiness drops after a draining read and after any settime */
TEST(readiness_drops, 0, 30)
{
	struct epoll_event ev = { .events = EPOLLIN }, out;
	struct itimerspec its = h_its(MS(10), 0);
	struct itimerspec far = h_its(SEC(3600), 0);
	struct itimerspec off = h_its(0, 0);
	uint64_t ticks;
	int fd = ops->create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	int ep = epoll_create1(EPOLL_CLOEXEC);

	ASSERT_OK(fd);
	ASSERT_OK(ep);
	ASSERT_OK(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev));

	ASSERT_OK(ops->settime(fd, 0, &its, NULL));
	EXPECT(h_poll(fd, 5000, NULL) == 1);
	EXPECT(h_read(fd, &ticks) == 8);
	EXPECT(REC(h_poll(fd, 0, NULL), "poll after read") == 0);
	EXPECT(REC(select_bits(fd, 0), "select after read") == 0);
	EXPECT(REC(epoll_wait(ep, &out, 1, 0), "epoll after read") == 0);

	ASSERT_OK(ops->settime(fd, 0, &its, NULL));
	EXPECT(h_poll(fd, 5000, NULL) == 1);
	ASSERT_OK(ops->settime(fd, 0, &far, NULL));
	EXPECT(REC(h_poll(fd, 0, NULL), "poll after re-arm") == 0);
	EXPECT(REC(epoll_wait(ep, &out, 1, 0), "epoll after re-arm") == 0);

	ASSERT_OK(ops->settime(fd, 0, &its, NULL));
	EXPECT(h_poll(fd, 5000, NULL) == 1);
	ASSERT_OK(ops->settime(fd, 0, &off, NULL));
	EXPECT(REC(h_poll(fd, 0, NULL), "poll after disarm") == 0);
	EXPECT(REC(epoll_wait(ep, &out, 1, 0), "epoll after disarm") == 0);
	close(ep);
	close(fd);
}

/* many timers in one epoll set: each reports its own expiry once */
TEST(epoll_many, 0, 60)
{
	struct epoll_event ev, out[64];
	int fds[32], seen[32] = { 0 };
	int ep = epoll_create1(EPOLL_CLOEXEC);
	int i, n, got = 0;
	long long deadline;

	ASSERT_OK(ep);
	for (i = 0; i < 32; i++) {
		struct itimerspec its = h_its(MS(20) + MS(10) * i, 0);

		fds[i] = ops->create(i & 1 ? CLOCK_BOOTTIME : CLOCK_MONOTONIC,
				     TFD_NONBLOCK);
		ASSERT_OK(fds[i]);
		ev.events = EPOLLIN | EPOLLET;
		ev.data.u32 = i;
		ASSERT_OK(epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev));
		ASSERT_OK(ops->settime(fds[i], 0, &its, NULL));
	}
	deadline = h_now(CLOCK_MONOTONIC) + SEC(10);
	while (got < 32 && h_now(CLOCK_MONOTONIC) < deadline) {
		n = epoll_wait(ep, out, 64, 1000);
		for (i = 0; i < n; i++) {
			unsigned int k = out[i].data.u32;

			EXPECT(k < 32 && out[i].events == EPOLLIN);
			if (k < 32 && !seen[k]++)
				got++;
		}
	}
	EXPECT(REC(got, "timers seen") == 32);
	for (i = 0; i < 32; i++) {
		EXPECTF(seen[i] == 1, "timer %d seen %d times", i, seen[i]);
		close(fds[i]);
	}
	close(ep);
}

TEST_MAIN()
