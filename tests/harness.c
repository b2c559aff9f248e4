// SPDX-License-Identifier: GPL-2.0
/*
 * The TAP harness behind every test program: case registration, one
 * forked child per backend with a timeout, the shared-memory trace, the
 * differential comparison and the TAP output.  The backends are in
 * backends.c; the helpers the bodies share are in helpers.c (those that
 * skip or fail a case) and util.c (those the benchmark shares too).
 */
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "harness.h"
#include "trace.h"

const struct tfd_ops *h_ops;
int h_slow = 1;

/* ---- verdicts ---- */

static const char *bk_name(void)
{
	return h_ops ? h_ops->name : "?";
}

void h_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# [%s] ", bk_name());
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

void h_fail(const char *file, int line, const char *cond,
	    const char *fmt, ...)
{
	va_list ap;

	printf("# [%s] %s:%d: expected %s", bk_name(), file, line, cond);
	if (fmt) {
		printf(": ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
	}
	printf("\n");
	fflush(stdout);
	if (h_run)
		__atomic_add_fetch(&h_run->failed, 1, __ATOMIC_SEQ_CST);
}

void h_abort(void)
{
	fflush(stdout);
	_exit(1);
}

void h_skip(const char *fmt, ...)
{
	va_list ap;

	if (h_run) {
		va_start(ap, fmt);
		vsnprintf(h_run->skip_reason, sizeof(h_run->skip_reason),
			  fmt, ap);
		va_end(ap);
		h_run->skipped = 1;
	}
	fflush(stdout);
	_exit(4);
}

/* ---- registration ---- */

static struct test_case *h_cases;

void h_register(struct test_case *tc)
{
	struct test_case **p = &h_cases;

	/* by unit, then by line */
	while (*p && ((*p)->unit < tc->unit ||
		      ((*p)->unit == tc->unit && (*p)->line < tc->line)))
		p = &(*p)->next;
	tc->next = *p;
	*p = tc;
}

/* ---- running ---- */

struct verdict {
	int result;		/* 0 pass, 1 fail, 4 skip */
	char reason[200];
};

static void restore_clock(struct h_run *run)
{
	long long target = run->real0 + (h_now(CLOCK_MONOTONIC) - run->mono0);
	struct timespec ts = h_ns_ts(target);

	if (clock_settime(CLOCK_REALTIME, &ts))
		printf("# WARNING: could not restore CLOCK_REALTIME: %s\n",
		       strerror(errno));
	run->clock_dirty = 0;
}

/*
 * A deferrable timer only runs when its CPU ticks.  While a deferrable
 * case runs, one SCHED_IDLE spinner per CPU keeps every CPU out of idle
 * (so the tick keeps running) without delaying the test itself: API
 * results are compared, not the idle-CPU timing.
 */
static pid_t keepers[64];
static int nkeepers;

static void keepers_start(void)
{
	long ncpu = h_ncpus();
	long cpu;

	if (getenv("DTFD_TEST_NO_KEEPERS"))
		return;
	for (cpu = 0; cpu < ncpu && nkeepers < (int)ARRAY_SIZE(keepers);
	     cpu++) {
		pid_t pid;

		fflush(stdout);
		pid = fork();
		if (pid == 0) {
			struct sched_param sp = { 0 };

			h_pin_cpu((int)cpu);
			sched_setscheduler(0, SCHED_IDLE, &sp);
			for (;;)
				__asm__ __volatile__("" ::: "memory");
		}
		if (pid > 0)
			keepers[nkeepers++] = pid;
	}
}

static void keepers_stop(void)
{
	while (nkeepers > 0) {
		pid_t pid = keepers[--nkeepers];

		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/*
 * Wait for the child @pid of case @tc, sleeping on SIGCHLD (blocked in
 * @chld) until its timeout; kill its process group past that, with a
 * failed verdict in @v.  Its wait status, or -1.
 */
static int wait_child(const struct test_case *tc, pid_t pid,
		      const sigset_t *chld, struct verdict *v)
{
	long long deadline;
	struct timespec ts;
	int status = 0;
	pid_t w;

	deadline = h_now(CLOCK_MONOTONIC) + SEC(tc->timeout) * h_slow;
	for (;;) {
		w = waitpid(pid, &status, WNOHANG);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			status = -1;
			break;
		}
		if (h_now(CLOCK_MONOTONIC) > deadline) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			v->result = 1;
			snprintf(v->reason, sizeof(v->reason),
				 "timeout after %d s", tc->timeout * h_slow);
			break;
		}
		ts = h_ns_ts(deadline - h_now(CLOCK_MONOTONIC) > 0 ?
			     deadline - h_now(CLOCK_MONOTONIC) : 0);
		sigtimedwait(chld, NULL, &ts);
	}
	return status;
}

/*
 * The verdict of a child that ended in time with @status: killed, failed,
 * skipped (exit 4 after h_skip()), another exit, or a trace overflow.
 */
static void judge_child(const struct h_run *run, int status,
			struct verdict *v)
{
	if (WIFSIGNALED(status)) {
		v->result = 1;
		snprintf(v->reason, sizeof(v->reason), "killed by signal %d (%s)",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
	} else if (run->failed) {
		v->result = 1;
	} else if (WIFEXITED(status) && WEXITSTATUS(status) == 4 &&
		   run->skipped) {
		v->result = 4;
		snprintf(v->reason, sizeof(v->reason), "%s", run->skip_reason);
	} else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		v->result = 1;
		snprintf(v->reason, sizeof(v->reason), "exit status %d",
			 WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	}
	if (!v->result && run->overflow) {
		v->result = 1;
		snprintf(v->reason, sizeof(v->reason), "trace overflow");
	}
}

/* One run of case @tc on backend @ops: its trace in @run, verdict in @v. */
static void run_child(const struct test_case *tc, const struct tfd_ops *ops,
		      struct h_run *run, struct verdict *v)
{
	sigset_t chld, oldmask;
	int status;
	pid_t pid;

	memset(run, 0, sizeof(*run));
	run->real0 = h_now(CLOCK_REALTIME);
	run->mono0 = h_now(CLOCK_MONOTONIC);
	memset(v, 0, sizeof(*v));

	/*
	 * Wait for the child by sleeping on SIGCHLD, not by polling: a
	 * polling parent would wake a CPU every few milliseconds and spoil
	 * every idle-CPU measurement the tests make.
	 */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &oldmask);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
		v->result = 1;
		snprintf(v->reason, sizeof(v->reason), "fork: %s",
			 strerror(errno));
		return;
	}
	if (pid == 0) {
		sigprocmask(SIG_SETMASK, &oldmask, NULL);
		setpgid(0, 0);
		h_ops = ops;
		h_run = run;
		tc->fn(ops);
		fflush(stdout);
		_exit(run->failed ? 1 : 0);
	}
	setpgid(pid, pid);

	status = wait_child(tc, pid, &chld, v);
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	/* anything the body forked and left behind */
	kill(-pid, SIGKILL);
	if (run->clock_dirty)
		restore_clock(run);
	if (!v->result)
		judge_child(run, status, v);
}

/* ---- TAP ---- */

static int tap_n, n_pass, n_fail, n_skip;

static void tap(int result, const char *name, const char *suffix,
		const char *reason)
{
	tap_n++;
	if (result == 4) {
		n_skip++;
		printf("ok %d %s.%s # SKIP %s\n", tap_n, name, suffix, reason);
	} else if (result == 0) {
		n_pass++;
		printf("ok %d %s.%s\n", tap_n, name, suffix);
	} else {
		n_fail++;
		if (reason && *reason)
			printf("# %s.%s: %s\n", name, suffix, reason);
		printf("not ok %d %s.%s\n", tap_n, name, suffix);
	}
	fflush(stdout);
}

static int probe_dtfd(char *why, size_t len)
{
	int fd = dtimerfd_create(CLOCK_MONOTONIC, DTFD_CLOEXEC);

	if (fd < 0) {
		snprintf(why, len, "dtimerfd not available (%s: %s)",
			 DTIMERFD_DEVICE, strerror(errno));
		return 0;
	}
	close(fd);
	return 1;
}

static int probe_defer(char *why, size_t len)
{
	struct itimerspec its = h_its(SEC(3600), 0);
	int fd = dtimerfd_create(CLOCK_MONOTONIC, DTFD_CLOEXEC);
	int ret;

	if (fd < 0) {
		snprintf(why, len, "dtimerfd not available (%s)",
			 strerror(errno));
		return 0;
	}
	ret = dtimerfd_settime(fd, DTFD_TIMER_DEFERRABLE, &its, NULL);
	if (ret && errno == EINVAL)
		snprintf(why, len, "deferrable backend not available");
	else if (ret)
		snprintf(why, len, "deferrable settime fails: %s",
			 strerror(errno));
	close(fd);
	return ret == 0;
}

static void usage(const char *argv0)
{
	printf("usage: %s [-l] [-t TEST]... [-b native|dtimerfd|deferrable|intree]...\n"
	       "  -l          list the cases\n"
	       "  -t TEST     run only TEST (repeatable)\n"
	       "  -b BACKEND  run only these backends (native always runs when\n"
	       "              a dtimerfd case compares against it); intree, the\n"
	       "              kernel's TFD_TIMER_DEFERRABLE (patches/), only\n"
	       "              when named\n"
	       "  DTFD_TEST_SLOW=N multiplies every timeout by N\n"
	       "  DTFD_TEST_BACKENDS=B,B... the backends when -b is not given\n",
	       argv0);
}

#define BIT_NATIVE	1
#define BIT_DTFD	2
#define BIT_DEFER	4
#define BIT_INTREE	8

/* The command line: the cases asked for (none: all), backends, -l. */
struct h_args {
	const char *only[64];
	int nonly, backends, list;
};

static int backend_bit(const char *name)
{
	if (!strcmp(name, "native"))
		return BIT_NATIVE;
	if (!strcmp(name, "dtimerfd"))
		return BIT_DTFD;
	if (!strcmp(name, "deferrable"))
		return BIT_DEFER;
	if (!strcmp(name, "intree"))
		return BIT_INTREE;
	return 0;
}

/* DTFD_TEST_BACKENDS (vm/check passes it on): a comma list, or 0 */
static int env_backends(void)
{
	const char *s = getenv("DTFD_TEST_BACKENDS");
	char buf[128], *tok, *save;
	int bits = 0, b;

	if (!s || !*s)
		return 0;
	snprintf(buf, sizeof(buf), "%s", s);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		b = backend_bit(tok);
		if (!b) {
			fprintf(stderr, "DTFD_TEST_BACKENDS: no backend '%s'\n",
				tok);
			return -1;
		}
		bits |= b;
	}
	return bits;
}

/* Read the options into @a: -1, or the status to exit with. */
static int parse_args(int argc, char **argv, struct h_args *a)
{
	const char *s;
	int opt;

	while ((opt = getopt(argc, argv, "lt:b:h")) != -1) {
		switch (opt) {
		case 'l':
			a->list = 1;
			break;
		case 't':
			if (a->nonly < (int)ARRAY_SIZE(a->only))
				a->only[a->nonly++] = optarg;
			break;
		case 'b':
			if (!backend_bit(optarg)) {
				usage(argv[0]);
				return 1;
			}
			a->backends |= backend_bit(optarg);
			break;
		default:
			usage(argv[0]);
			return opt == 'h' ? 0 : 1;
		}
	}
	if (!a->backends)
		a->backends = env_backends();
	if (a->backends < 0)
		return 1;
	if (!a->backends)
		a->backends = BIT_NATIVE | BIT_DTFD | BIT_DEFER;
	s = getenv("DTFD_TEST_SLOW");
	if (s && atoi(s) > 0)
		h_slow = atoi(s);
	return -1;
}

/* The in-tree backend: every case with a deferrable variant, and T_INTREE's. */
static int runs_intree(const struct test_case *tc)
{
	return (tc->flags & T_INTREE) ||
	       !(tc->flags & (T_NO_DEFER | T_DTFD_ONLY));
}

/*
 * Deselect (timeout -1) the cases not asked for; list the others with
 * -l, else count the runs they plan.
 */
static int plan_cases(const struct h_args *a)
{
	struct test_case *tc;
	int planned = 0;

	for (tc = h_cases; tc; tc = tc->next) {
		int i, sel = !a->nonly;

		for (i = 0; i < a->nonly; i++)
			if (!strcmp(a->only[i], tc->name))
				sel = 1;
		if (!sel) {
			tc->timeout = -1;	/* deselected */
			continue;
		}
		if (a->list) {
			printf("%s%s%s\n", tc->name,
			       tc->flags & T_DTFD_ONLY ? " (dtimerfd only)" : "",
			       tc->flags & T_NO_DEFER ? " (no deferrable)" : "");
			continue;
		}
		if (!(tc->flags & T_DTFD_ONLY) && (a->backends & BIT_NATIVE))
			planned++;
		if (a->backends & BIT_DTFD)
			planned++;
		if (!(tc->flags & T_NO_DEFER) && (a->backends & BIT_DEFER))
			planned++;
		if (runs_intree(tc) && (a->backends & BIT_INTREE))
			planned++;
	}
	return planned;
}

/* Whether the kernel's timerfd takes TFD_TIMER_DEFERRABLE (patches/). */
static int probe_intree(char *why, size_t len)
{
	if (h_timerfd_deferrable())
		return 1;
	snprintf(why, len, "this kernel's timerfd has no TFD_TIMER_DEFERRABLE: %s",
		 strerror(errno));
	return 0;
}

/* The backends after native, their -b bits, whether they run here and why not. */
static const struct {
	const struct tfd_ops *ops;
	int bit;
	unsigned int not_for;	/* the cases it skips: their flags */
} others[] = {
	{ &dtfd_ops, BIT_DTFD, 0 },
	{ &defer_ops, BIT_DEFER, T_NO_DEFER },
	{ &intree_ops, BIT_INTREE, 0 },	/* runs_intree() */
};

static struct {
	int have;
	char why[200];
} avail[ARRAY_SIZE(others)];

static void probe_backends(int backends)
{
	avail[0].have = probe_dtfd(avail[0].why, sizeof(avail[0].why));
	avail[1].have = avail[0].have &&
			probe_defer(avail[1].why, sizeof(avail[1].why));
	if (!avail[0].have)
		snprintf(avail[1].why, sizeof(avail[1].why), "%s", avail[0].why);
	if (backends & BIT_INTREE)
		avail[2].have = probe_intree(avail[2].why, sizeof(avail[2].why));
}

/* The runs of a case: native's and its trace, the other backend's. */
struct h_runs {
	struct h_run *nrun, *drun;
	struct verdict nv;
	int native_ran;
};

/*
 * Case @tc on others[@b]: skipped where the backend is missing or native
 * skipped, else run and, unless the case says not to, compared with
 * native's trace.
 */
static void run_backend(const struct test_case *tc, int b,
			struct h_runs *r)
{
	const struct tfd_ops *ops = others[b].ops;
	struct verdict v;
	int keep;

	if (!avail[b].have) {
		tap(4, tc->name, ops->name, avail[b].why);
		return;
	}
	if (r->native_ran && r->nv.result == 4 &&
	    !(tc->flags & T_NATIVE_MAY_SKIP)) {
		char why[220];

		snprintf(why, sizeof(why), "native: %s", r->nv.reason);
		tap(4, tc->name, ops->name, why);
		return;
	}
	/*
	 * A differential case keeps every CPU busy on a deferrable backend,
	 * so that timing compares with native; a dtimerfd-only case (the
	 * in-tree backend's T_INTREE ones) measures idle CPUs itself.
	 */
	keep = ops->defers && !(tc->flags & T_DTFD_ONLY);
	if (keep)
		keepers_start();
	run_child(tc, ops, r->drun, &v);
	if (keep)
		keepers_stop();
	if (v.result != 4 && r->native_ran && r->nv.result != 4 &&
	    !(tc->flags & T_NO_COMPARE) &&
	    compare(r->nrun, r->drun, ops->name)) {
		v.result = 1;
		if (!v.reason[0])
			snprintf(v.reason, sizeof(v.reason),
				 "differs from native timerfd");
	}
	tap(v.result, tc->name, ops->name, v.reason);
}

/* Case @tc on every backend asked for: native first, the reference. */
static void run_case(const struct test_case *tc, int backends,
		     struct h_runs *r)
{
	r->nv = (struct verdict){ 4, "not run" };
	r->native_ran = 0;
	if (!(tc->flags & T_DTFD_ONLY) && backends) {
		run_child(tc, &native_ops, r->nrun, &r->nv);
		r->native_ran = 1;
		if (backends & BIT_NATIVE)
			tap(r->nv.result, tc->name, "native", r->nv.reason);
	}
	for (size_t b = 0; b < ARRAY_SIZE(others); b++) {
		if (!(backends & others[b].bit))
			continue;
		if (tc->flags & others[b].not_for)
			continue;
		if (others[b].ops == &intree_ops && !runs_intree(tc))
			continue;
		run_backend(tc, b, r);
	}
}

int h_main(int argc, char **argv)
{
	struct h_args a = { .nonly = 0 };
	struct test_case *tc;
	struct h_runs r;
	int planned, rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	planned = plan_cases(&a);
	if (a.list)
		return 0;

	probe_backends(a.backends);
	/* as kselftest: no version line when nested under a TAP runner */
	if (!getenv("KSFT_TAP_LEVEL"))
		printf("TAP version 13\n");
	printf("1..%d\n", planned);
	if (!avail[0].have)
		printf("# %s\n", avail[0].why);
	else if (!avail[1].have)
		printf("# %s\n", avail[1].why);
	if ((a.backends & BIT_INTREE) && !avail[2].have)
		printf("# %s\n", avail[2].why);

	r.nrun = run_alloc();
	r.drun = run_alloc();
	for (tc = h_cases; tc; tc = tc->next)
		if (tc->timeout >= 0)
			run_case(tc, a.backends, &r);

	if (tap_n != planned)
		printf("# Planned tests != run tests (%d != %d)\n", planned,
		       tap_n);
	printf("# Totals: pass:%d fail:%d xfail:0 xpass:0 skip:%d error:0\n",
	       n_pass, n_fail, n_skip);
	if (n_fail)
		return 1;
	if (n_skip && !n_pass)
		return 4;
	return 0;
}

/* ---- the clock (h_run knows what to restore) ---- */

int h_clock_set(long long realtime_ns)
{
	struct timespec ts = h_ns_ts(realtime_ns);

	if (h_run)
		h_run->clock_dirty = 1;
	return clock_settime(CLOCK_REALTIME, &ts);
}

int h_clock_step(long long delta_ns)
{
	return h_clock_set(h_now(CLOCK_REALTIME) + delta_ns);
}

void h_clock_restore(void)
{
	if (h_run && h_run->clock_dirty)
		restore_clock(h_run);
}

void h_require_clock_set(void)
{
	struct timespec ts;

	h_require_root();
	clock_gettime(CLOCK_REALTIME, &ts);
	if (clock_settime(CLOCK_REALTIME, &ts))
		h_skip("cannot set CLOCK_REALTIME: %s", strerror(errno));
	if (h_run)
		h_run->clock_dirty = 1;
}
