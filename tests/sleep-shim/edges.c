// SPDX-License-Identifier: GPL-2.0
/*
 * tests/sleep-shim: a handler that leaves a wait with siglongjmp(),
 * select's nfds, a relative CLOCK_REALTIME sleep across a clock step, few
 * descriptors left, many threads, and a forked child's own timers.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "shim.h"

/*
 * A handler that leaves a wait with siglongjmp(): the thread's later
 * waits still end on time (that clock's timer is then the C library's).
 */
static sigjmp_buf jump_env;

static void on_signal_jump(int sig)
{
	(void)sig;
	siglongjmp(jump_env, 1);
}

void t_longjmp(const struct calls *c)
{
	struct sigaction sa = { .sa_handler = on_signal_jump };
	struct itimerval it = { { 0, 0 }, { 0, 20000 } };
	long long t0, el = 0;
	volatile int jumped = 0;
	int r;

	sigaction(SIGALRM, &sa, NULL);
	if (!sigsetjmp(jump_env, 1)) {
		setitimer(ITIMER_REAL, &it, NULL);
		c->poll(NULL, 0, 2000);
	} else {
		jumped = 1;
	}
	signal(SIGALRM, SIG_DFL);
	t0 = now(CLOCK_MONOTONIC);
	r = c->poll(NULL, 0, 50);
	el = now(CLOCK_MONOTONIC) - t0;
	ok(jumped && r == 0 && el >= MS(50) && el <= MS(55) + MARGIN,
	   "%s: after a siglongjmp() out of a wait, poll(50 ms): %d after %.1f ms",
	   c->name, r, el / 1e6);
}

/*
 * select() looks at no bit from nfds on: a closed descriptor there is no
 * EBADF, a readable one no event, and the bits come back cleared.
 */
void t_select_nfds(const struct calls *c)
{
	int p[2], closed = 13, ready = 15, r, e;
	struct timeval tv = { 0, 30000 };
	fd_set rd;

	if (fcntl(closed, F_GETFD) >= 0 || fcntl(ready, F_GETFD) >= 0) {
		printf("ok %d %s: select, nfds 11 # SKIP 13 or 15 in use\n",
		       ++tap_n, c->name);
		return;
	}
	if (pipe(p) || write(p[1], "x", 1) != 1 || dup2(p[0], ready) != ready)
		abort();
	FD_ZERO(&rd);
	FD_SET(closed, &rd);
	FD_SET(ready, &rd);
	r = c->select(11, &rd, NULL, NULL, &tv);
	e = errno;
	ok(r == 0 && !FD_ISSET(closed, &rd) && !FD_ISSET(ready, &rd),
	   "%s: select(11) with a closed fd 13 and a readable fd 15 in its set: %d %s, bits %d %d",
	   c->name, r, r < 0 ? strerror(e) : "", FD_ISSET(closed, &rd),
	   FD_ISSET(ready, &rd));
	close(ready);
	close(p[0]);
	close(p[1]);
}

/*
 * A relative CLOCK_REALTIME sleep is measured on CLOCK_MONOTONIC, as the
 * kernel measures it: a step of the clock neither ends it nor changes the
 * time left it reports.  A thread steps the clock 100 s ahead 0.3 s in,
 * and signals the sleeper 0.3 s later.
 */
static pthread_t sleeper_thread;

static void *stepper(void *arg)
{
	struct timespec ts;

	(void)arg;
	usleep(300000);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 100;
	clock_settime(CLOCK_REALTIME, &ts);
	usleep(300000);
	pthread_kill(sleeper_thread, SIGUSR1);
	return NULL;
}

void t_realtime_relative(const struct calls *c)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct timespec rem = { 0, 0 }, ts;
	long long t0, el, left;
	pthread_t th;
	int r;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (clock_settime(CLOCK_REALTIME, &ts)) {
		printf("ok %d %s: relative realtime sleep over a clock step # SKIP cannot set the clock: %s\n",
		       ++tap_n, c->name, strerror(errno));
		return;
	}
	sigaction(SIGUSR1, &sa, NULL);
	sleeper_thread = pthread_self();
	pthread_create(&th, NULL, stepper, NULL);
	t0 = now(CLOCK_MONOTONIC);
	r = c->clock_nanosleep(CLOCK_REALTIME, 0, &(struct timespec){ 10, 0 },
			       &rem);
	el = now(CLOCK_MONOTONIC) - t0;
	pthread_join(th, NULL);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec -= 100;
	clock_settime(CLOCK_REALTIME, &ts);
	left = rem.tv_sec * 1000000000LL + rem.tv_nsec;
	ok(r == EINTR && left >= MS(10000) - el - MS(1) &&
	   left <= MS(10000) - MS(500),
	   "%s: relative realtime sleep of 10 s over a +100 s step: %s after %.3f s, %.3f s left",
	   c->name, r ? strerror(r) : "0", el / 1e9, left / 1e9);
}

/* One short sleep, in a thread of its own. */
static void *one_nap(void *arg)
{
	(void)arg;
	poll(NULL, 0, 5);
	return NULL;
}

/*
 * Under a small RLIMIT_NOFILE the shim takes none of the program's
 * numbers: after three threads slept, the program opens as many files as
 * it has free numbers.  Each thread's timer used to take one.
 */
void t_small_nofile(void)
{
	struct rlimit rl = { 8, 8 };
	int st = -1, fd, free = 0, opened = 0, i;
	pthread_t th[3];
	pid_t pid = fork();

	if (!pid) {
		if (setrlimit(RLIMIT_NOFILE, &rl))
			_exit(100);
		for (fd = 0; fd < 8; fd++)
			free += fcntl(fd, F_GETFD) < 0;
		for (i = 0; i < 3; i++)
			pthread_create(&th[i], NULL, one_nap, NULL);
		for (i = 0; i < 3; i++)
			pthread_join(th[i], NULL);
		poll(NULL, 0, 5);
		while (open("/dev/null", O_RDONLY) >= 0)
			opened++;
		_exit(opened == free ? 0 : 101 + opened);
	}
	waitpid(pid, &st, 0);
	ok(WIFEXITED(st) && !WEXITSTATUS(st),
	   "RLIMIT_NOFILE 8: after three threads slept, the program opens as many files as it has free numbers (status %#x: %d opened)",
	   st, WIFEXITED(st) && WEXITSTATUS(st) > 100 ?
	   WEXITSTATUS(st) - 101 : -1);
}

/* Threads sleeping at once on their own timers: each never early. */
static void *sleeper(void *arg)
{
	long long want = MS(20 + 7 * (long)(size_t)arg), t0, bad = 0;
	int i;

	for (i = 0; i < 5; i++) {
		t0 = now(CLOCK_MONOTONIC);
		if (poll(NULL, 0, (int)(want / 1000000)) != 0 ||
		    now(CLOCK_MONOTONIC) - t0 < want)
			bad++;
	}
	return (void *)(size_t)bad;
}

/* 40 threads: more than the shim keeps timers for (32), the rest its own. */
void t_threads(void)
{
	pthread_t th[40];
	size_t i, bad = 0;
	void *r;

	for (i = 0; i < 40; i++)
		pthread_create(&th[i], NULL, sleeper, (void *)(i % 8));
	for (i = 0; i < 40; i++) {
		pthread_join(th[i], &r);
		bad += (size_t)r;
	}
	ok(bad == 0, "threads: 40 x 5 polls at once, %zu early or failed", bad);
}


/*
 * A forked child's sleeps are its own, not the parent's timer's; at its
 * first wait it closes the timers it inherited (one that execs has
 * close-on-exec do it), and keeps only the one it made.
 */
void t_fork(const char *expect)
{
	long long t0 = now(CLOCK_MONOTONIC);
	int st = -1, early, own = !strcmp(expect, "deferred");
	pid_t pid;

	poll(NULL, 0, 1);		/* the parent's timer exists */
	pid = fork();
	if (!pid) {
		int left;

		t0 = now(CLOCK_MONOTONIC);
		poll(NULL, 0, 300);
		left = count_fds(DTIMERFD_LINK) - own;
		_exit((now(CLOCK_MONOTONIC) - t0 < MS(300)) | (left != 0) << 1);
	}
	usleep(50000);			/* re-arms a shared timer, if shared */
	t0 = now(CLOCK_MONOTONIC);
	poll(NULL, 0, 100);
	early = now(CLOCK_MONOTONIC) - t0 < MS(100);
	waitpid(pid, &st, 0);
	ok(!early && WIFEXITED(st) && !WEXITSTATUS(st),
	   "fork: parent and child sleep on their own timers (early: parent %d, child status %#x)",
	   early, st);
}
