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
 *
 * Built by tests/Makefile with the units of sleep-shim/ (shim.h: what
 * they share): waits.c, the waits and sleeps side by side; fds.c, the
 * shim's descriptors and seccomp; edges.c, longjmp, threads and fork.
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

#include "sleep-shim/shim.h"

/* the TAP lines so far, and those not ok */
int tap_n;
static int failed;

void ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	failed += !cond;
}

long long now(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

struct calls prog = {
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

volatile sig_atomic_t handled;

void on_signal(int sig)
{
	(void)sig;
	handled++;
}

/* A SIGALRM handler installed with SA_RESTART: sleeps and polls still end. */
void alarm_in(long long ns)
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
bool left_ok(long long left, long long total, long long signal_after,
		    long long t0)
{
	long long elapsed = now(CLOCK_MONOTONIC) - t0;

	return left >= total - elapsed - MS(1) &&
	       left <= total - signal_after / 2;
}

/* Elapsed @ns of a wait for @want: never early, never very late. */
void timed(const struct calls *c, const char *what, long long t0,
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
void usr1_pending(sigset_t *block, sigset_t *none, sigset_t *old)
{
	sigemptyset(block);
	sigaddset(block, SIGUSR1);
	sigemptyset(none);
	alarm_in(0);
	sigprocmask(SIG_BLOCK, block, old);
	raise(SIGUSR1);
}


/*
 * The open descriptors whose target starts with @what: "" for all of them,
 * "anon_inode:[dtimerfd]" for the shim's own timers (dtimerfds the program
 * did not make), "/dev/dtimerfd" for the library's control descriptor.
 */
int count_fds(const char *what)
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
	printf("1..%d\n", tap_n);
	return failed ? 1 : 0;
}
