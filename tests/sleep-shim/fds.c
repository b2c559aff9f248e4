// SPDX-License-Identifier: GPL-2.0
/*
 * tests/sleep-shim: the shim's own descriptors (a number taken or
 * replaced under it) and a seccomp filter around its calls.
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
void t_number_taken(const char *expect)
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
void t_number_replaced_in_sleep(const char *expect)
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
void t_seccomp(void)
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
		       ++tap_n);
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
void t_seccomp_allowlist(const char *expect)
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
		       ++tap_n);
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
		       ++tap_n);
		return;
	}
	ok(WIFEXITED(st) && !WEXITSTATUS(st),
	   "seccomp: a filter that allows the waits and nothing else: status %#x%s",
	   st, WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS ? " (SIGSYS)" : "");
}

