// SPDX-License-Identifier: GPL-2.0
/*
 * 10,000 timers at once: created, armed, all delivered through one epoll
 * set, read once each, closed.  RLIMIT_NOFILE is raised for it.
 */
#include <sys/epoll.h>
#include <sys/resource.h>

#include "harness.h"

#define NTIMERS 10000

static void raise_nofile(void)
{
	struct rlimit rl;

	ASSERT_OK(getrlimit(RLIMIT_NOFILE, &rl));
	if (rl.rlim_max < NTIMERS + 64) {
		struct rlimit want = { NTIMERS + 64, NTIMERS + 64 };

		if (setrlimit(RLIMIT_NOFILE, &want))
			h_skip("RLIMIT_NOFILE hard limit %llu and cannot raise it: %s",
			       (unsigned long long)rl.rlim_max,
			       strerror(errno));
		return;
	}
	rl.rlim_cur = rl.rlim_max;
	ASSERT_OK(setrlimit(RLIMIT_NOFILE, &rl));
}

static int *fds;

/* the timers, on the three clocks in turn, each in the epoll set @ep */
static int make_timers(const struct tfd_ops *ops, int ep)
{
	struct epoll_event ev;
	int i, made = 0;

	for (i = 0; i < NTIMERS; i++) {
		static const clockid_t clocks[] = {
			CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME,
		};

		fds[i] = ops->create(clocks[i % 3], TFD_NONBLOCK | TFD_CLOEXEC);
		if (fds[i] < 0) {
			h_fail(__FILE__, __LINE__, "create", "#%d: %s", i,
			       strerror(errno));
			break;
		}
		made++;
		ev.events = EPOLLIN;
		ev.data.u32 = i;
		ASSERT_OK(epoll_ctl(ep, EPOLL_CTL_ADD, fds[i], &ev));
	}
	return made;
}

/*
 * Read each timer the epoll set @ep reports, once, until all are or
 * @deadline passes: the timers read; a repeat, an unknown event or a
 * count other than 1 is one more in *@bad_out.
 */
static int collect(int ep, unsigned char *seen, long long deadline,
		   int *bad_out)
{
	struct epoll_event out[512];
	int i, n, got = 0, bad = 0;

	while (got < NTIMERS && h_now(CLOCK_MONOTONIC) < deadline) {
		n = epoll_wait(ep, out, 512, 1000);
		for (i = 0; i < n; i++) {
			unsigned int k = out[i].data.u32;
			uint64_t ticks = 0;

			if (k >= NTIMERS || seen[k]) {
				bad++;
				continue;
			}
			if (h_read(fds[k], &ticks) != 8 || ticks != 1)
				bad++;
			seen[k] = 1;
			got++;
		}
	}
	*bad_out += bad;
	return got;
}

/* every timer expires in a 1 s window starting 200 ms after arming */
TEST(ten_thousand, 0, 240)
{
	struct epoll_event out[512];
	long long t0, t1, t2, deadline;
	unsigned char *seen;
	int i, ep, got, bad = 0, made;

	raise_nofile();
	fds = calloc(NTIMERS, sizeof(*fds));
	seen = calloc(NTIMERS, 1);
	ASSERT(fds && seen);
	ep = epoll_create1(EPOLL_CLOEXEC);
	ASSERT_OK(ep);

	t0 = h_now(CLOCK_MONOTONIC);
	made = make_timers(ops, ep);
	REC(made, "timers made");
	ASSERT(made == NTIMERS);
	t1 = h_now(CLOCK_MONOTONIC);
	for (i = 0; i < NTIMERS; i++) {
		struct itimerspec its = h_its(MS(200) + (i % 1000) * MS(1), 0);

		if (ops->settime(fds[i], 0, &its, NULL))
			bad++;
	}
	t2 = h_now(CLOCK_MONOTONIC);
	EXPECT(REC(bad, "settime failures") == 0);
	h_diag("create+epoll %lld ms, settime %lld ms", (t1 - t0) / MS(1),
	       (t2 - t1) / MS(1));

	deadline = h_now(CLOCK_MONOTONIC) + SEC(120);
	got = collect(ep, seen, deadline, &bad);
	h_diag("all delivered %lld ms after arming",
	       (h_now(CLOCK_MONOTONIC) - t2) / MS(1));
	EXPECT(REC(got, "timers delivered") == NTIMERS);
	EXPECT(REC(bad, "bad events or counts") == 0);
	EXPECT(REC(epoll_wait(ep, out, 512, 100), "events after") == 0);

	/* re-arm them all far away, check a few, close them all armed */
	for (i = 0; i < NTIMERS; i++) {
		struct itimerspec its = h_its(SEC(3600), SEC(1));

		if (ops->settime(fds[i], 0, &its, NULL))
			bad++;
	}
	for (i = 0; i < NTIMERS; i += 997) {
		struct itimerspec cur;

		EXPECT_OK(ops->gettime(fds[i], &cur));
		EXPECT(h_its_value(&cur) > SEC(3500));
	}
	for (i = 0; i < NTIMERS; i++)
		close(fds[i]);
	EXPECT(REC(bad, "re-arm failures") == 0);
	close(ep);
}

TEST_MAIN()
