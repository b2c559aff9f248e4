// SPDX-License-Identifier: MIT
/*
 * Many timers served by one epoll loop: N periodic timers with staggered
 * phases, read as they expire, and a summary of expirations delivered
 * against the number the schedule calls for.
 *
 *   epoll-timers [--deferrable] [timers [period-ms [seconds]]]
 */
#include <err.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <dtimerfd.h>

/* expirations the schedules of @n timers call for by @t */
static long long due(long long start, long long period, int n, long long t)
{
	long long sum = 0;
	int i;

	for (i = 0; i < n; i++) {
		long long first = start + i * period / n;

		if (t >= first)
			sum += (t - first) / period + 1;
	}
	return sum;
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int main(int argc, char *argv[])
{
	int a = 1, flags = DTFD_TIMER_ABSTIME, n = 100, period_ms = 10, secs = 2;
	long long start, end, period, before, after;
	uint64_t total = 0;
	struct rlimit rl;
	int ep, endfd, i, *fds, done = 0;

	if (argc > 1 && !strcmp(argv[1], "--deferrable")) {
		flags |= DTFD_TIMER_DEFERRABLE;
		a++;
	}
	if (argc > a)
		n = atoi(argv[a]);
	if (argc > a + 1)
		period_ms = atoi(argv[a + 1]);
	if (argc > a + 2)
		secs = atoi(argv[a + 2]);
	if (n < 1 || period_ms < 1 || secs < 1)
		errx(EXIT_FAILURE, "usage: %s [--deferrable] [timers [period-ms [seconds]]]",
		     argv[0]);

	/* one descriptor per timer */
	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < (rlim_t)n + 16) {
		rl.rlim_cur = rl.rlim_max < (rlim_t)n + 16 ? rl.rlim_max : (rlim_t)n + 16;
		setrlimit(RLIMIT_NOFILE, &rl);
	}

	fds = calloc(n, sizeof(*fds));
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (!fds)
		err(EXIT_FAILURE, "calloc");
	if (ep == -1)
		err(EXIT_FAILURE, "epoll_create1");
	period = period_ms * 1000000LL;
	start = now_ns() + 50000000LL;
	for (i = 0; i < n; i++) {
		long long first = start + i * period / n;
		struct itimerspec its = {
			.it_value = { first / 1000000000LL, first % 1000000000LL },
			.it_interval = { period / 1000000000LL, period % 1000000000LL },
		};
		struct epoll_event ev = { .events = EPOLLIN };
		int fd = dtimerfd_create(CLOCK_MONOTONIC, DTFD_CLOEXEC | DTFD_NONBLOCK);

		if (fd == -1)
			err(EXIT_FAILURE, "dtimerfd_create (timer %d)", i);
		if (dtimerfd_settime(fd, flags, &its, NULL) == -1)
			err(EXIT_FAILURE, "dtimerfd_settime");
		fds[i] = fd;
		ev.data.fd = fd;
		if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev) == -1)
			err(EXIT_FAILURE, "epoll_ctl");
	}

	/*
	 * The end of the run is one more timer, strict, in the same set: an
	 * epoll_wait() timeout would wake the CPU on its own every time, and
	 * the deferrable timers would save nothing.
	 */
	end = start + secs * 1000000000LL;
	endfd = dtimerfd_create(CLOCK_MONOTONIC, DTFD_CLOEXEC | DTFD_NONBLOCK);
	if (endfd == -1)
		err(EXIT_FAILURE, "dtimerfd_create (end)");
	if (dtimerfd_settime(endfd, DTFD_TIMER_ABSTIME, &(struct itimerspec){
			.it_value = { end / 1000000000LL, end % 1000000000LL } }, NULL) == -1)
		err(EXIT_FAILURE, "dtimerfd_settime (end)");
	if (epoll_ctl(ep, EPOLL_CTL_ADD, endfd,
		      &(struct epoll_event){ .events = EPOLLIN, .data.fd = endfd }) == -1)
		err(EXIT_FAILURE, "epoll_ctl (end)");
	while (!done) {
		struct epoll_event evs[256];
		int r = epoll_wait(ep, evs, 256, -1);

		if (r == -1 && errno != EINTR)
			err(EXIT_FAILURE, "epoll_wait");
		for (i = 0; i < r; i++) {
			uint64_t exp;

			if (evs[i].data.fd == endfd)
				done = 1;
			else if (read(evs[i].data.fd, &exp, sizeof(exp)) == sizeof(exp))
				total += exp;
		}
	}
	close(endfd);

	/*
	 * Drain: a read checks the clock, so due deferrable timers count.
	 * A strict expiry counts once its interrupt has run (on PREEMPT_RT,
	 * a thread does that): give the ones due by now a moment first.
	 */
	before = due(start, period, n, now_ns());
	nanosleep(&(struct timespec){ .tv_nsec = 50 * 1000000 }, NULL);
	for (i = 0; i < n; i++) {
		uint64_t exp;

		if (read(fds[i], &exp, sizeof(exp)) == sizeof(exp))
			total += exp;
	}
	after = due(start, period, n, now_ns());

	printf("%d %s timers at %d ms for %d s: %llu expirations, %lld..%lld due: %s\n",
	       n, flags & DTFD_TIMER_DEFERRABLE ? "deferrable" : "strict",
	       period_ms, secs, (unsigned long long)total, before, after,
	       (long long)total >= before && (long long)total <= after ?
	       "none lost" : "MISMATCH");
	return (long long)total >= before && (long long)total <= after ?
	       EXIT_SUCCESS : EXIT_FAILURE;
}
