// SPDX-License-Identifier: GPL-2.0
/*
 * The preload shim's sleeps and timeouts against the real calls (TAP),
 * run by preload-sleep.sh with and without LD_PRELOAD, under several
 * policies.  Every case runs the same scenario through the symbol the
 * program sees (the shim's, when preloaded) and through libc's own
 * (dlsym on libc.so.6), and compares: return value, errno, the events
 * and sets returned, the remaining time reported, never early, and late
 * by no more than the policy allows plus a generous margin.
 *
 *   sleep-shim EXPECT     EXPECT: "deferred" (the shim must have used a
 *                         dtimerfd) or "exact" (it must not have)
 */
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MS(x)	((long long)(x) * 1000000LL)
/* late beyond the policy's bound (10 %, at most 1 s) a busy guest may add */
#define MARGIN	MS(250)

static int n, failed;

static void ok(int cond, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d ", cond ? "" : "not ", ++n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	failed += !cond;
}

static long long now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* The two ways of calling: the program's symbol, and libc's own. */
struct calls {
	const char *name;
	int (*poll)(struct pollfd *, nfds_t, int);
	int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *,
		     const sigset_t *);
	int (*select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
	int (*pselect)(int, fd_set *, fd_set *, fd_set *,
		       const struct timespec *, const sigset_t *);
	int (*epoll_wait)(int, struct epoll_event *, int, int);
	int (*epoll_pwait)(int, struct epoll_event *, int, int,
			   const sigset_t *);
	int (*epoll_pwait2)(int, struct epoll_event *, int,
			    const struct timespec *, const sigset_t *);
	int (*nanosleep)(const struct timespec *, struct timespec *);
	int (*clock_nanosleep)(clockid_t, int, const struct timespec *,
			       struct timespec *);
	int (*usleep)(useconds_t);
	unsigned int (*sleep)(unsigned int);
};

static struct calls prog = {
	"program", poll, ppoll, select, pselect, epoll_wait, epoll_pwait,
	epoll_pwait2, nanosleep, clock_nanosleep, usleep, sleep,
};
static struct calls libc = { .name = "libc" };

static void load_libc(void)
{
	void *h = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);

	if (!h) {
		printf("Bail out! dlopen libc.so.6: %s\n", dlerror());
		exit(1);
	}
#define L(f) (*(void **)&libc.f = dlsym(h, #f))
	L(poll); L(ppoll); L(select); L(pselect); L(epoll_wait);
	L(epoll_pwait); L(epoll_pwait2); L(nanosleep); L(clock_nanosleep);
	L(usleep); L(sleep);
#undef L
}

static volatile sig_atomic_t handled;

static void on_signal(int sig)
{
	(void)sig;
	handled++;
}

/* A SIGALRM handler installed with SA_RESTART: sleeps and polls still end. */
static void alarm_in(long long ns)
{
	struct itimerval it = { { 0, 0 }, { ns / 1000000000LL,
					   ns % 1000000000LL / 1000 } };
	struct sigaction sa = { .sa_handler = on_signal,
				.sa_flags = SA_RESTART };

	sigaction(SIGALRM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	handled = 0;
	setitimer(ITIMER_REAL, &it, NULL);
}

/*
 * The time @left that a wait of @total, interrupted by a signal armed
 * @signal_after before @t0, reports. The call measured its own time inside
 * ours, so it may not have seen more time pass than we did (however late we
 * ran after the handler); the millisecond covers select's rounding to
 * microseconds. The signal came no sooner than @signal_after, but a TCG
 * guest's vCPUs disagree on the time by a few milliseconds (libc's own
 * nanosleep once reported 1.905 s left of 2 s after a 100 ms itimer), so
 * the upper bound only says that the call did not report all of @total.
 */
static bool left_ok(long long left, long long total, long long signal_after,
		    long long t0)
{
	long long elapsed = now(CLOCK_MONOTONIC) - t0;

	return left >= total - elapsed - MS(1) &&
	       left <= total - signal_after / 2;
}

/* Elapsed @ns of a wait for @want: never early, never very late. */
static void timed(const struct calls *c, const char *what, long long t0,
		  long long want)
{
	long long late = now(CLOCK_MONOTONIC) - t0 - want;

	ok(late >= 0 && late <= want / 10 + MARGIN,
	   "%s: %s: %.3f ms late (want %.0f ms)", c->name, what, late / 1e6,
	   want / 1e6);
}

/*
 * SIGUSR1 blocked (*block) and pending, its handler armed; *none: no
 * signal blocked, for a p* call's mask to let it in; *old: the mask before.
 */
static void usr1_pending(sigset_t *block, sigset_t *none, sigset_t *old)
{
	sigemptyset(block);
	sigaddset(block, SIGUSR1);
	sigemptyset(none);
	alarm_in(0);
	sigprocmask(SIG_BLOCK, block, old);
	raise(SIGUSR1);
}

static void t_poll(const struct calls *c)
{
	int p[2], r, e;
	struct pollfd pf;
	long long t0;

	if (pipe(p))
		abort();
	pf = (struct pollfd){ .fd = p[0], .events = POLLIN, .revents = 77 };
	t0 = now(CLOCK_MONOTONIC);
	r = c->poll(&pf, 1, 60);
	ok(r == 0 && pf.revents == 0, "%s: poll times out: %d revents %d",
	   c->name, r, pf.revents);
	timed(c, "poll 60 ms", t0, MS(60));

	t0 = now(CLOCK_MONOTONIC);
	r = c->poll(NULL, 0, 40);
	ok(r == 0, "%s: poll(NULL, 0, 40): %d", c->name, r);
	timed(c, "poll(NULL, 0, 40)", t0, MS(40));

	if (write(p[1], "x", 1) != 1)
		abort();
	r = c->poll(&pf, 1, 5000);
	ok(r == 1 && pf.revents == POLLIN, "%s: poll ready: %d revents %#x",
	   c->name, r, pf.revents);

	close(p[1]);
	close(p[0]);
	pf.revents = 0;
	r = c->poll(&pf, 1, 50);
	ok(r == 1 && pf.revents == POLLNVAL, "%s: poll closed fd: %d %#x",
	   c->name, r, pf.revents);

	errno = 0;
	r = c->poll((struct pollfd *)8, 1, 50);
	e = errno;
	ok(r == -1 && e == EFAULT, "%s: poll bad array: %d %s", c->name, r,
	   strerror(e));

	alarm_in(MS(50));
	t0 = now(CLOCK_MONOTONIC);
	r = c->poll(NULL, 0, 3000);
	e = errno;
	ok(r == -1 && e == EINTR && handled == 1 &&
	   now(CLOCK_MONOTONIC) - t0 < MS(2000),
	   "%s: poll interrupted (SA_RESTART): %d %s", c->name, r, strerror(e));

	r = c->poll(NULL, 0, 0);
	ok(r == 0, "%s: poll timeout 0: %d", c->name, r);
}

static void t_ppoll(const struct calls *c)
{
	struct timespec ts = { 0, MS(50) };
	sigset_t block, none, old;
	long long t0;
	int r, e;

	usr1_pending(&block, &none, &old);
	t0 = now(CLOCK_MONOTONIC);
	r = c->ppoll(NULL, 0, &ts, &block);	/* still blocked: times out */
	ok(r == 0 && handled == 0, "%s: ppoll with the signal blocked: %d",
	   c->name, r);
	timed(c, "ppoll 50 ms", t0, MS(50));
	r = c->ppoll(NULL, 0, &ts, &none);	/* unblocked: EINTR at once */
	e = errno;
	ok(r == -1 && e == EINTR && handled == 1,
	   "%s: ppoll's mask lets the signal in: %d %s", c->name, r,
	   strerror(e));
	sigprocmask(SIG_SETMASK, &old, NULL);

	ts.tv_nsec = 1000000000L;
	r = c->ppoll(NULL, 0, &ts, NULL);
	e = errno;
	ok(r == -1 && e == EINVAL, "%s: ppoll bad timeout: %d %s", c->name,
	   r, strerror(e));
}

static void t_select(const struct calls *c)
{
	struct timeval tv = { 0, 60000 };
	int p[2], r, e;
	long long t0, left;
	fd_set rd;

	if (pipe(p))
		abort();
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	t0 = now(CLOCK_MONOTONIC);
	r = c->select(p[0] + 1, &rd, NULL, NULL, &tv);
	ok(r == 0 && !FD_ISSET(p[0], &rd) && !tv.tv_sec && !tv.tv_usec,
	   "%s: select times out, set cleared, time left 0: %d %ld.%06ld",
	   c->name, r, (long)tv.tv_sec, (long)tv.tv_usec);
	timed(c, "select 60 ms", t0, MS(60));

	if (write(p[1], "x", 1) != 1)
		abort();
	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	tv = (struct timeval){ 5, 0 };
	r = c->select(p[0] + 1, &rd, NULL, NULL, &tv);
	ok(r == 1 && FD_ISSET(p[0], &rd) && tv.tv_sec >= 4,
	   "%s: select ready: %d, left %ld s", c->name, r, (long)tv.tv_sec);

	e = dup(p[0]);				/* a number not open */
	close(e);
	FD_ZERO(&rd);
	FD_SET(e, &rd);
	tv = (struct timeval){ 0, 50000 };
	r = c->select(e + 1, &rd, NULL, NULL, &tv);
	e = errno;
	ok(r == -1 && e == EBADF, "%s: select closed fd: %d %s", c->name, r,
	   strerror(e));

	tv = (struct timeval){ 0, 50000 };
	r = c->select(-1, NULL, NULL, NULL, &tv);
	e = errno;
	ok(r == -1 && e == EINVAL, "%s: select nfds -1: %d %s", c->name, r,
	   strerror(e));

	alarm_in(MS(100));
	tv = (struct timeval){ 2, 0 };
	t0 = now(CLOCK_MONOTONIC);
	r = c->select(0, NULL, NULL, NULL, &tv);
	e = errno;
	left = tv.tv_sec * 1000000000LL + tv.tv_usec * 1000LL;
	ok(r == -1 && e == EINTR && left_ok(left, MS(2000), MS(100), t0),
	   "%s: select interrupted, time left %.3f s: %d %s", c->name,
	   left / 1e9, r, strerror(e));

	FD_ZERO(&rd);
	FD_SET(p[0], &rd);
	r = c->pselect(p[0] + 1, &rd, NULL, NULL,
		       &(struct timespec){ 1, 0 }, NULL);
	ok(r == 1 && FD_ISSET(p[0], &rd), "%s: pselect ready: %d", c->name, r);
	t0 = now(CLOCK_MONOTONIC);
	r = c->pselect(0, NULL, NULL, NULL, &(struct timespec){ 0, MS(40) },
		       NULL);
	ok(r == 0, "%s: pselect times out: %d", c->name, r);
	timed(c, "pselect 40 ms", t0, MS(40));
	close(p[0]);
	close(p[1]);
}

static void t_epoll(const struct calls *c)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = 0x1234 },
			   out[4];
	int ep = epoll_create1(EPOLL_CLOEXEC), p[2], r, e;
	long long t0;
	sigset_t block, none, old;

	if (ep < 0 || pipe(p) || epoll_ctl(ep, EPOLL_CTL_ADD, p[0], &ev))
		abort();
	t0 = now(CLOCK_MONOTONIC);
	r = c->epoll_wait(ep, out, 4, 60);
	ok(r == 0, "%s: epoll_wait times out: %d", c->name, r);
	timed(c, "epoll_wait 60 ms", t0, MS(60));

	t0 = now(CLOCK_MONOTONIC);
	r = c->epoll_pwait2(ep, out, 4, &(struct timespec){ 0, MS(45) }, NULL);
	ok(r == 0, "%s: epoll_pwait2 times out: %d", c->name, r);
	timed(c, "epoll_pwait2 45 ms", t0, MS(45));

	if (write(p[1], "x", 1) != 1)
		abort();
	memset(out, 0, sizeof(out));
	r = c->epoll_wait(ep, out, 4, 5000);
	ok(r == 1 && out[0].data.u64 == 0x1234 && out[0].events == EPOLLIN,
	   "%s: epoll_wait ready: %d data %#llx", c->name, r,
	   (unsigned long long)out[0].data.u64);
	if (read(p[0], &e, 1) != 1)
		abort();

	r = c->epoll_wait(p[0], out, 4, 50);
	e = errno;
	ok(r == -1 && e == EINVAL, "%s: epoll_wait on a pipe: %d %s", c->name,
	   r, strerror(e));
	r = c->epoll_wait(ep, out, 0, 50);
	e = errno;
	ok(r == -1 && e == EINVAL, "%s: epoll_wait maxevents 0: %d %s",
	   c->name, r, strerror(e));
	r = c->epoll_wait(p[1] + 10, out, 4, 50);
	e = errno;
	ok(r == -1 && e == EBADF, "%s: epoll_wait closed fd: %d %s", c->name,
	   r, strerror(e));

	alarm_in(MS(50));
	r = c->epoll_wait(ep, out, 4, 3000);
	e = errno;
	ok(r == -1 && e == EINTR && handled == 1,
	   "%s: epoll_wait interrupted (SA_RESTART): %d %s", c->name, r,
	   strerror(e));

	usr1_pending(&block, &none, &old);
	r = c->epoll_pwait(ep, out, 4, 40, &block);
	ok(r == 0 && handled == 0, "%s: epoll_pwait, signal blocked: %d",
	   c->name, r);
	r = c->epoll_pwait(ep, out, 4, 3000, &none);
	e = errno;
	ok(r == -1 && e == EINTR && handled == 1,
	   "%s: epoll_pwait's mask lets the signal in: %d %s", c->name, r,
	   strerror(e));
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(p[0]);
	close(p[1]);
	close(ep);
}

static void t_sleeps(const struct calls *c)
{
	struct timespec rem = { 9, 9 };
	long long t0, deadline, left;
	int r, e;
	unsigned int u;

	t0 = now(CLOCK_MONOTONIC);
	r = c->nanosleep(&(struct timespec){ 0, MS(50) }, NULL);
	ok(r == 0, "%s: nanosleep: %d", c->name, r);
	timed(c, "nanosleep 50 ms", t0, MS(50));

	r = c->nanosleep(&(struct timespec){ 0, 1000000000L }, NULL);
	e = errno;
	ok(r == -1 && e == EINVAL, "%s: nanosleep bad nsec: %d %s", c->name, r,
	   strerror(e));
	r = c->nanosleep(&(struct timespec){ -1, 0 }, NULL);
	e = errno;
	ok(r == -1 && e == EINVAL, "%s: nanosleep negative: %d %s", c->name,
	   r, strerror(e));
	r = c->nanosleep((struct timespec *)8, NULL);
	e = errno;
	ok(r == -1 && e == EFAULT, "%s: nanosleep bad pointer: %d %s",
	   c->name, r, strerror(e));

	alarm_in(MS(100));
	t0 = now(CLOCK_MONOTONIC);
	r = c->nanosleep(&(struct timespec){ 2, 0 }, &rem);
	e = errno;
	left = rem.tv_sec * 1000000000LL + rem.tv_nsec;
	ok(r == -1 && e == EINTR && handled == 1 &&
	   left_ok(left, MS(2000), MS(100), t0),
	   "%s: nanosleep interrupted, %.3f s left: %d %s", c->name,
	   left / 1e9, r, strerror(e));

	deadline = now(CLOCK_REALTIME) + MS(50);
	r = c->clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME,
			       &(struct timespec){ deadline / 1000000000LL,
						   deadline % 1000000000LL },
			       NULL);
	ok(r == 0 && now(CLOCK_REALTIME) >= deadline,
	   "%s: clock_nanosleep realtime absolute, not early: %d", c->name, r);
	t0 = now(CLOCK_BOOTTIME);
	r = c->clock_nanosleep(CLOCK_BOOTTIME, 0,
			       &(struct timespec){ 0, MS(40) }, NULL);
	ok(r == 0 && now(CLOCK_BOOTTIME) - t0 >= MS(40),
	   "%s: clock_nanosleep boottime 40 ms: %d", c->name, r);
	r = c->clock_nanosleep(12345, 0, &(struct timespec){ 0, 1000 }, NULL);
	ok(r == EINVAL, "%s: clock_nanosleep bad clock: %s", c->name,
	   strerror(r));
	r = c->clock_nanosleep(CLOCK_THREAD_CPUTIME_ID, 0,
			       &(struct timespec){ 0, 1000 }, NULL);
	ok(r == EINVAL, "%s: clock_nanosleep thread CPU clock: %s", c->name,
	   strerror(r));
	alarm_in(MS(50));
	r = c->clock_nanosleep(CLOCK_MONOTONIC, 0,
			       &(struct timespec){ 3, 0 }, &rem);
	ok(r == EINTR && rem.tv_sec >= 2, "%s: clock_nanosleep EINTR, %ld s left",
	   c->name, (long)rem.tv_sec);

	t0 = now(CLOCK_MONOTONIC);
	r = c->usleep(30000);
	ok(r == 0, "%s: usleep: %d", c->name, r);
	timed(c, "usleep 30 ms", t0, MS(30));

	alarm_in(MS(300));
	errno = 1234;
	u = c->sleep(3);
	ok(u == 2 && handled == 1, "%s: sleep(3) interrupted at 0.3 s: %u",
	   c->name, u);
	errno = 1234;
	u = c->sleep(0);
	ok(u == 0 && errno == 1234, "%s: sleep(0): %u, errno kept", c->name,
	   u);
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
static void t_threads(void)
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

#define DTIMERFD_LINK "anon_inode:[dtimerfd]"
static int count_fds(const char *what);

/*
 * A forked child's sleeps are its own, not the parent's timer's; it
 * closes the timers it inherited.
 */
static void t_fork(void)
{
	long long t0 = now(CLOCK_MONOTONIC);
	int st = -1, early;
	pid_t pid;

	poll(NULL, 0, 1);		/* the parent's timer exists */
	pid = fork();
	if (!pid) {
		int inherited = count_fds(DTIMERFD_LINK);

		t0 = now(CLOCK_MONOTONIC);
		poll(NULL, 0, 300);
		_exit((now(CLOCK_MONOTONIC) - t0 < MS(300)) | (inherited << 1));
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

/*
 * The open descriptors whose target starts with @what: "" for all of them,
 * "anon_inode:[dtimerfd]" for the shim's own timers (dtimerfds the program
 * did not make), "/dev/dtimerfd" for the library's control descriptor.
 */
static int count_fds(const char *what)
{
	char path[64], link[64];
	int fd, count = 0;
	ssize_t len;

	for (fd = 0; fd < 4096; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, link, sizeof(link) - 1);
		if (len > 0) {
			link[len] = 0;
			count += !strncmp(link, what, strlen(what));
		}
	}
	return count;
}

int main(int argc, char **argv)
{
	const char *expect = argc > 1 ? argv[1] : "exact";
	const struct calls *c[] = { &libc, &prog };
	int i, fds, ctl, before, after;

	setvbuf(stdout, NULL, _IOLBF, 0);
	load_libc();
	before = count_fds("") - count_fds("/dev/dtimerfd");
	printf("TAP version 13\n");
	for (i = 0; i < 2; i++) {
		t_poll(c[i]);
		t_ppoll(c[i]);
		t_select(c[i]);
		t_epoll(c[i]);
		t_sleeps(c[i]);
	}
	t_threads();
	t_fork();
	fds = count_fds(DTIMERFD_LINK);
	ok(!strcmp(expect, "deferred") ? fds == 3 : fds == 0,
	   "the shim's own timers: %d (%s)", fds, expect);
	/*
	 * Whatever the shim falls back to, it keeps no more than its timers,
	 * besides the library's one control descriptor.
	 */
	ctl = count_fds("/dev/dtimerfd");
	after = count_fds("") - ctl;
	ok(ctl <= 1 && after - before == fds,
	   "no descriptor leaked: %d open before, %d after (%d of them the shim's timers), besides %d control",
	   before, after, fds, ctl);
	printf("1..%d\n", n);
	return failed ? 1 : 0;
}
