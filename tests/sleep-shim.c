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

/*
 * A signal handler that sleeps while its thread sleeps: the interrupted
 * sleep ends EINTR or after its whole time, never early and never stuck.
 * The handler's own wait must not share the thread's timer with the wait
 * it interrupted: when it did, a handler's usleep() made the interrupted
 * sleep return 0 early, and a handler's poll() ended by a descriptor
 * disarmed the interrupted sleep's timer (a hang, until another signal).
 * The signal comes at offsets swept across the first few hundred
 * microseconds, where the shim arms its timer; a watchdog signal 2 s
 * later ends a stuck sleep, for the check to see.
 */
static int handler_tfd = -1;

static void on_signal_usleep(int sig)
{
	int e = errno;

	(void)sig;
	usleep(2000);
	errno = e;
}

static void on_signal_poll(int sig)
{
	struct itimerspec its = { { 0, 0 }, { 0, 1000000 } };
	struct pollfd pf = { .fd = handler_tfd, .events = POLLIN };
	uint64_t ticks;
	int e = errno;

	(void)sig;
	timerfd_settime(handler_tfd, 0, &its, NULL);
	if (poll(&pf, 1, 50) == 1 && read(handler_tfd, &ticks, 8) != 8)
		abort();
	errno = e;
}

static void t_handler_waits(const struct calls *c, void (*handler)(int),
			    const char *what)
{
	struct sigaction sa = { .sa_handler = handler }, wd = {
		.sa_handler = on_signal };
	struct sigevent sev = { .sigev_notify = SIGEV_SIGNAL,
				.sigev_signo = SIGUSR2 };
	long long want = MS(8), t0, el, worst = 0;
	int i, r, e, early = 0, stuck = 0, eintr = 0;
	timer_t watchdog;

	if (handler_tfd < 0)
		handler_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	sigaction(SIGALRM, &sa, NULL);
	sigaction(SIGUSR2, &wd, NULL);
	if (handler_tfd < 0 || timer_create(CLOCK_MONOTONIC, &sev, &watchdog))
		abort();
	for (i = 0; i < 120; i++) {
		struct itimerval it = { { 0, 0 }, { 0, 1 + i * 3 } };
		struct itimerspec wdog = { { 0, 0 }, { 2, 0 } };

		timer_settime(watchdog, 0, &wdog, NULL);
		setitimer(ITIMER_REAL, &it, NULL);
		t0 = now(CLOCK_MONOTONIC);
		r = c->nanosleep(&(struct timespec){ 0, want }, NULL);
		e = errno;
		el = now(CLOCK_MONOTONIC) - t0;
		timer_settime(watchdog, 0, &(struct itimerspec){ 0 }, NULL);
		if (r == 0 && el < want)
			early++;
		else if (r == -1 && e == EINTR)
			eintr++;
		if (el >= MS(1000))	/* the watchdog came at 2 s */
			stuck++;
		if (el > worst)
			worst = el;
	}
	timer_delete(watchdog);
	signal(SIGALRM, SIG_DFL);
	ok(!early && !stuck,
	   "%s: a handler that %s while nanosleep(8 ms) sleeps: %d early, %d stuck (longest %.1f ms), %d EINTR of 120",
	   c->name, what, early, stuck, worst / 1e6, eintr);
}

/*
 * The numbers of the open dtimerfds the program did not make: the ones
 * open only (a scan of every possible number is slow on a debug kernel).
 */
static int dtimerfd_numbers(int *out, int max)
{
	char path[300], link[64];
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;
	ssize_t len;

	while (d && (e = readdir(d)) && n < max) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = 0;
		if (!strcmp(link, "anon_inode:[dtimerfd]"))
			out[n++] = atoi(e->d_name);
	}
	if (d)
		closedir(d);
	return n;
}

/* The shim's timer that is armed now (a sleep in progress); -1: none. */
static int armed_dtimerfd(void)
{
	int fds[64], n = dtimerfd_numbers(fds, 64), i;
	char path[64], line[128];
	long long s, ns;

	for (i = 0; i < n; i++) {
		FILE *f;
		int armed = 0;

		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fds[i]);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "it_value: (%lld, %lld)", &s, &ns) == 2)
				armed = s || ns;
		if (f)
			fclose(f);
		if (armed)
			return fds[i];
	}
	return -1;
}

/* Whether @fd is open on /dev/null. */
static int is_devnull(int fd)
{
	struct stat st, null;

	return !fstat(fd, &st) && !stat("/dev/null", &null) &&
	       S_ISCHR(st.st_mode) && st.st_rdev == null.st_rdev;
}

/* A thread that sleeps @ms once, then waits for @go before it exits. */
struct napper {
	pthread_t th;
	int ms;
	volatile int go;
	volatile long long t0, slept;
};

static void *napper_fn(void *arg)
{
	struct napper *n = arg;
	struct timespec ts = { n->ms / 1000, n->ms % 1000 * 1000000L };

	n->t0 = now(CLOCK_MONOTONIC);
	nanosleep(&ts, NULL);
	n->slept = now(CLOCK_MONOTONIC) - n->t0;
	while (!n->go)
		usleep(1000);
	return NULL;
}

/* The timer @n sleeps on, looked for while it sleeps; -1: none. */
static int napper_timer(struct napper *n)
{
	int fd = -1;

	while (!n->t0)
		usleep(1000);
	while (fd < 0 && !n->slept &&
	       now(CLOCK_MONOTONIC) - n->t0 < MS(n->ms) * 3 / 4) {
		usleep(5000);
		fd = armed_dtimerfd();
	}
	return fd;
}

/*
 * The program closes the shim's timer and opens a file of its own at that
 * number (daemons close "every descriptor they did not open"): neither
 * the thread's exit nor a forked child may close the program's file.
 */
static void t_number_taken(const char *expect)
{
	struct napper n = { .ms = 300 };
	int num, st = -1, thread_kept, child_kept, null;
	pid_t pid;

	pthread_create(&n.th, NULL, napper_fn, &n);
	num = napper_timer(&n);		/* the thread's, while it sleeps */
	while (!n.slept)
		usleep(1000);
	null = open("/dev/null", O_RDONLY);
	if (num >= 0)
		dup2(null, num);	/* closes the shim's timer */
	close(null);
	n.go = 1;
	pthread_join(n.th, NULL);
	thread_kept = num < 0 || is_devnull(num);

	pid = fork();
	if (!pid) {
		poll(NULL, 0, 5);	/* the child's first wait: it tidies up */
		_exit(num >= 0 && !is_devnull(num));
	}
	waitpid(pid, &st, 0);
	child_kept = WIFEXITED(st) && !WEXITSTATUS(st);
	if (num >= 0)
		close(num);
	ok(thread_kept && child_kept && (strcmp(expect, "deferred") || num >= 0),
	   "the program's file at the number of a thread's timer: kept at the thread's exit %d, in a forked child %d (number %d)",
	   thread_kept, child_kept, num);
}

/*
 * dup2() onto the shim's number while its thread sleeps: the sleep ends
 * on time all the same (it used to hang: ppoll() kept waiting on the old
 * file's queue, and nothing woke it).  A stuck thread gets a signal after
 * 3 s, for the check to see it.
 */
static void t_number_replaced_in_sleep(const char *expect)
{
	struct napper n = { .ms = 400, .go = 1 };
	struct sigaction sa = { .sa_handler = on_signal };
	int num, p[2], i, stuck;

	if (pipe(p))
		abort();
	sigaction(SIGUSR2, &sa, NULL);
	pthread_create(&n.th, NULL, napper_fn, &n);
	num = napper_timer(&n);
	if (num >= 0)
		dup2(p[0], num);	/* a pipe nobody writes */
	for (i = 0; i < 3000 && !n.slept; i++)
		usleep(1000);
	stuck = !n.slept;
	if (stuck)
		pthread_kill(n.th, SIGUSR2);
	pthread_join(n.th, NULL);
	if (num >= 0)
		close(num);
	close(p[0]);
	close(p[1]);
	ok(!stuck && n.slept >= MS(400) && n.slept <= MS(440) + MARGIN &&
	   (strcmp(expect, "deferred") || num >= 0),
	   "nanosleep(400 ms) while the program dup2()s a pipe onto its timer's number %d: %s after %.1f ms",
	   num, stuck ? "stuck" : "ended", n.slept / 1e6);
}

/*
 * Under a seccomp filter that kills the process on a call the program
 * never makes (process_vm_readv, outside systemd's @system-service
 * without @ipc): every wait still works.  The shim read the caller's
 * timeouts with it, and killed the program at its first sleep.
 */
static void t_seccomp(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	struct timeval tv = { 0, 5000 };
	int st = -1, ep;
	pid_t pid = fork();

	if (!pid) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
			_exit(3);
		ep = epoll_create1(0);
		nanosleep(&(struct timespec){ 0, MS(5) }, NULL);
		clock_nanosleep(CLOCK_MONOTONIC, 0,
				&(struct timespec){ 0, MS(5) }, NULL);
		usleep(5000);
		poll(NULL, 0, 5);
		ppoll(NULL, 0, &(struct timespec){ 0, MS(5) }, NULL);
		select(0, NULL, NULL, NULL, &tv);
		pselect(0, NULL, NULL, NULL, &(struct timespec){ 0, MS(5) },
			NULL);
		epoll_wait(ep, &(struct epoll_event){ 0 }, 1, 5);
		epoll_pwait2(ep, &(struct epoll_event){ 0 }, 1,
			     &(struct timespec){ 0, MS(5) }, NULL);
		_exit(0);
	}
	waitpid(pid, &st, 0);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 3) {
		printf("ok %d seccomp: every wait under a filter # SKIP no seccomp filters on this kernel\n",
		       ++n);
		return;
	}
	ok(WIFEXITED(st) && !WEXITSTATUS(st),
	   "seccomp: every wait under a filter that kills on process_vm_readv: status %#x%s",
	   st, WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS ? " (SIGSYS)" : "");
}

/*
 * Where the shim steps aside (no device, a policy that defers no wait),
 * it makes no system call of its own but its attempt, every ten seconds,
 * to make a timer (the descriptor limit read, the device opened): a
 * filter that allows the program's waits and nothing else must not kill
 * it.
 */
static void t_seccomp_allowlist(const char *expect)
{
	/* the older calls are not on every architecture (arm64) */
	static const int allowed[] = {
#ifdef SYS_nanosleep
		SYS_nanosleep,
#endif
#ifdef SYS_poll
		SYS_poll,
#endif
#ifdef SYS_select
		SYS_select,
#endif
#ifdef SYS_epoll_wait
		SYS_epoll_wait,
#endif
#ifdef SYS_getrlimit
		SYS_getrlimit,
#endif
		SYS_clock_nanosleep, SYS_ppoll, SYS_pselect6, SYS_epoll_pwait,
		SYS_epoll_pwait2, SYS_exit_group, SYS_clock_gettime,
		SYS_openat, SYS_prlimit64,
	};
	struct sock_filter f[1 + 2 * sizeof(allowed) / sizeof(allowed[0]) + 1];
	struct sock_fprog prog = { 0, f };
	struct timeval tv = { 0, 5000 };
	int st = -1, ep, i, k = 0;
	pid_t pid;

	if (!strcmp(expect, "deferred")) {
		printf("ok %d seccomp: only the waits allowed # SKIP the shim defers: it arms timers of its own\n",
		       ++n);
		return;
	}
	f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
				offsetof(struct seccomp_data, nr));
	for (i = 0; i < (int)(sizeof(allowed) / sizeof(allowed[0])); i++) {
		f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
						      allowed[i], 0, 1);
		f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
						      SECCOMP_RET_ALLOW);
	}
	f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
					      SECCOMP_RET_KILL_PROCESS);
	prog.len = (unsigned short)k;
	ep = epoll_create1(0);
	pid = fork();
	if (!pid) {
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
			_exit(3);
		for (i = 0; i < 2; i++) {
			nanosleep(&(struct timespec){ 0, MS(5) }, NULL);
			poll(NULL, 0, 5);
			ppoll(NULL, 0, &(struct timespec){ 0, MS(5) }, NULL);
			select(0, NULL, NULL, NULL, &tv);
			epoll_wait(ep, &(struct epoll_event){ 0 }, 1, 5);
		}
		_exit(0);
	}
	waitpid(pid, &st, 0);
	close(ep);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 3) {
		printf("ok %d seccomp: only the waits allowed # SKIP no seccomp filters on this kernel\n",
		       ++n);
		return;
	}
	ok(WIFEXITED(st) && !WEXITSTATUS(st),
	   "seccomp: a filter that allows the waits and nothing else: status %#x%s",
	   st, WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS ? " (SIGSYS)" : "");
}

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

static void t_longjmp(const struct calls *c)
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
static void t_select_nfds(const struct calls *c)
{
	int p[2], closed = 13, ready = 15, r, e;
	struct timeval tv = { 0, 30000 };
	fd_set rd;

	if (fcntl(closed, F_GETFD) >= 0 || fcntl(ready, F_GETFD) >= 0) {
		printf("ok %d %s: select, nfds 11 # SKIP 13 or 15 in use\n",
		       ++n, c->name);
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

static void t_realtime_relative(const struct calls *c)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct timespec rem = { 0, 0 }, ts;
	long long t0, el, left;
	pthread_t th;
	int r;

	clock_gettime(CLOCK_REALTIME, &ts);
	if (clock_settime(CLOCK_REALTIME, &ts)) {
		printf("ok %d %s: relative realtime sleep over a clock step # SKIP cannot set the clock: %s\n",
		       ++n, c->name, strerror(errno));
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
static void t_small_nofile(void)
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
 * A forked child's sleeps are its own, not the parent's timer's; at its
 * first wait it closes the timers it inherited (one that execs has
 * close-on-exec do it), and keeps only the one it made.
 */
static void t_fork(const char *expect)
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
	for (i = 0; i < 2; i++) {
		t_select_nfds(c[i]);
		t_realtime_relative(c[i]);
		t_handler_waits(c[i], on_signal_usleep, "usleep()s");
		t_handler_waits(c[i], on_signal_poll,
				"poll()s until a timerfd fires");
	}
	/* a dtimerfd under the shim: not one of the shim's own, counted below */
	close(handler_tfd);
	t_threads();
	t_fork(expect);
	t_number_taken(expect);
	t_number_replaced_in_sleep(expect);
	t_seccomp();
	t_seccomp_allowlist(expect);
	t_small_nofile();
	/* last: it leaves this thread's monotonic waits to the C library */
	for (i = 0; i < 2; i++)
		t_longjmp(c[i]);
	/* the threads' timers stay, in the pool: at most 32 in all */
	fds = count_fds(DTIMERFD_LINK);
	ok(!strcmp(expect, "deferred") ? fds >= 3 && fds <= 32 : fds == 0,
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
