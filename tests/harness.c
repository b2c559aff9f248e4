// SPDX-License-Identifier: GPL-2.0
/*
 * The TAP harness behind every test program: case registration, one
 * forked child per backend with a timeout, the shared-memory trace, the
 * differential comparison and the TAP output.  The helpers the bodies
 * share are in helpers.c (those that skip or fail a case) and util.c
 * (those the benchmark shares too).
 */
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "harness.h"

/* ---- backends ---- */

static int fd_clockid(int fd)
{
	struct h_fdinfo fi;

	return h_fdinfo(fd, &fi) || fi.nlines < 1 ? -1 : fi.clockid;
}

/*
 * DTFD_TIMER_DEFERRABLE added to every settime.  An alarm timer cannot be
 * deferrable (it exists to wake the machine): the module documents EINVAL
 * for that, which is checked here, and the call is then made without the
 * flag so the rest of the body still compares with native.
 */
static int defer_settime(int fd, int flags, const struct itimerspec *nv,
			 struct itimerspec *ov)
{
	/*
	 * A test passing bit 3 means timerfd's unknown bit: PERCPU alone,
	 * which is EINVAL as timerfd's answer is, not deferral per CPU.
	 */
	int r = dtimerfd_settime(fd, flags & DTFD_TIMER_PERCPU ? flags :
				 flags | DTFD_TIMER_DEFERRABLE, nv, ov);
	int c;

	if (!r || errno != EINVAL)
		return r;
	c = fd_clockid(fd);
	errno = EINVAL;
	if (c != CLOCK_REALTIME_ALARM && c != CLOCK_BOOTTIME_ALARM)
		return r;
	return dtimerfd_settime(fd, flags, nv, ov);
}

/*
 * The native reference is the kernel's timerfd.  On x86_64 glibc's
 * wrappers are plain system calls; a 32-bit glibc with 32-bit time_t
 * converts struct itimerspec in user space, dereferencing the caller's
 * pointers (SIGSEGV instead of EFAULT), so there the legacy 32-bit system
 * calls are made directly, which is what the kernel itself answers.
 */
static int native_settime(int fd, int flags, const struct itimerspec *nv,
			  struct itimerspec *ov)
{
	if (sizeof(time_t) == 8)
		return timerfd_settime(fd, flags, nv, ov);
	return syscall(SYS_timerfd_settime, fd, flags, nv, ov);
}

static int native_gettime(int fd, struct itimerspec *cur)
{
	if (sizeof(time_t) == 8)
		return timerfd_gettime(fd, cur);
	return syscall(SYS_timerfd_gettime, fd, cur);
}

const struct tfd_ops native_ops = {
	"native", BK_NATIVE, timerfd_create, native_settime, native_gettime,
};
const struct tfd_ops dtfd_ops = {
	"dtimerfd", BK_DTFD, dtimerfd_create, dtimerfd_settime,
	dtimerfd_gettime,
};
const struct tfd_ops defer_ops = {
	"deferrable", BK_DEFER, dtimerfd_create, defer_settime,
	dtimerfd_gettime,
};

const struct tfd_ops *h_ops;
int h_slow = 1;

/* ---- the trace, shared between a run's child and the parent ---- */

enum obs_kind { OBS_RET, OBS_VAL, OBS_APPROX, OBS_STR };

#define H_LABEL	72
#define H_STR	120
#define H_MAX_OBS 6000

struct h_obs {
	char label[H_LABEL];
	int kind;
	int err;
	long long v;
	long long tol;
	char str[H_STR];
};

struct h_run {
	int nobs;
	int overflow;
	int failed;
	int skipped;
	char skip_reason[160];
	int clock_dirty;
	long long mono0, real0;		/* reference for h_clock_restore */
	struct h_obs obs[H_MAX_OBS];
};

static struct h_run *h_run;

static struct h_run *run_alloc(void)
{
	void *p = mmap(NULL, sizeof(struct h_run), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		printf("Bail out! mmap: %s\n", strerror(errno));
		exit(1);
	}
	return p;
}

/*
 * Append an observation, labelled by fmt, to this run's record; past
 * H_MAX_OBS the run is marked overflowed instead (and fails).
 */
static void obs_add(struct h_obs *o, const char *fmt, va_list ap)
{
	if (!h_run)
		return;
	if (h_run->nobs >= H_MAX_OBS) {
		h_run->overflow = 1;
		return;
	}
	vsnprintf(o->label, sizeof(o->label), fmt, ap);
	h_run->obs[h_run->nobs++] = *o;
}

void h_rec_ret(long long ret, int err, const char *fmt, ...)
{
	struct h_obs o = { .kind = OBS_RET, .v = ret, .err = ret < 0 ? err : 0 };
	va_list ap;

	va_start(ap, fmt);
	obs_add(&o, fmt, ap);
	va_end(ap);
}

void h_rec_val(long long v, const char *fmt, ...)
{
	struct h_obs o = { .kind = OBS_VAL, .v = v };
	va_list ap;

	va_start(ap, fmt);
	obs_add(&o, fmt, ap);
	va_end(ap);
}

void h_rec_approx(long long v, long long tol, const char *fmt, ...)
{
	struct h_obs o = { .kind = OBS_APPROX, .v = v, .tol = tol };
	va_list ap;

	va_start(ap, fmt);
	obs_add(&o, fmt, ap);
	va_end(ap);
}

void h_rec_str(const char *s, const char *fmt, ...)
{
	struct h_obs o = { .kind = OBS_STR };
	va_list ap;

	snprintf(o.str, sizeof(o.str), "%s", s);
	va_start(ap, fmt);
	obs_add(&o, fmt, ap);
	va_end(ap);
}

void h_rec_its(const struct itimerspec *its, long long tol,
	       const char *fmt, ...)
{
	char label[H_LABEL];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(label, sizeof(label), fmt, ap);
	va_end(ap);
	h_rec_approx(h_its_value(its), tol, "%s it_value", label);
	h_rec_val(h_its_interval(its), "%s it_interval", label);
}

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

	while (*p && (*p)->line < tc->line)
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

static void run_child(const struct test_case *tc, const struct tfd_ops *ops,
		      struct h_run *run, struct verdict *v)
{
	sigset_t chld, oldmask;
	long long deadline;
	struct timespec ts;
	int status = 0;
	pid_t pid, w;

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
		sigtimedwait(&chld, NULL, &ts);
	}
	sigprocmask(SIG_SETMASK, &oldmask, NULL);
	/* anything the body forked and left behind */
	kill(-pid, SIGKILL);
	if (run->clock_dirty)
		restore_clock(run);
	if (v->result)
		return;

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

static void obs_show(const char *who, const struct h_obs *o)
{
	switch (o->kind) {
	case OBS_RET:
		if (o->v < 0)
			printf("#   %-10s %lld, errno %s\n", who, o->v,
			       strerrorname_np(o->err) ?: "?");
		else
			printf("#   %-10s %lld\n", who, o->v);
		break;
	case OBS_VAL:
		printf("#   %-10s %lld\n", who, o->v);
		break;
	case OBS_APPROX:
		printf("#   %-10s %lld (+-%lld)\n", who, o->v, o->tol);
		break;
	case OBS_STR:
		printf("#   %-10s \"%s\"\n", who, o->str);
		break;
	}
}

static int obs_equal(const struct h_obs *a, const struct h_obs *b)
{
	long long tol, d;

	if (a->kind != b->kind)
		return 0;
	switch (a->kind) {
	case OBS_RET:
		return a->v == b->v && (a->v >= 0 || a->err == b->err);
	case OBS_VAL:
		return a->v == b->v;
	case OBS_APPROX:
		tol = a->tol > b->tol ? a->tol : b->tol;
		d = a->v - b->v;
		return d <= tol && d >= -tol;
	case OBS_STR:
		return !strcmp(a->str, b->str);
	}
	return 0;
}

/* The differential check: 0 when @b's trace matches native's @a. */
static int compare(const struct h_run *a, const struct h_run *b,
		   const char *bname)
{
	int n = a->nobs > b->nobs ? a->nobs : b->nobs;
	int i, bad = 0;

	for (i = 0; i < n; i++) {
		const struct h_obs *x = i < a->nobs ? &a->obs[i] : NULL;
		const struct h_obs *y = i < b->nobs ? &b->obs[i] : NULL;

		if (!x || !y) {
			printf("# trace length differs: native %d steps, %s %d; first extra step: %s\n",
			       a->nobs, bname, b->nobs,
			       x ? x->label : y->label);
			return 1;
		}
		if (strcmp(x->label, y->label)) {
			printf("# traces diverge at step %d: native '%s', %s '%s'\n",
			       i + 1, x->label, bname, y->label);
			return 1;
		}
		if (!obs_equal(x, y)) {
			if (bad < 10) {
				printf("# differs at step %d '%s':\n", i + 1,
				       x->label);
				obs_show("native:", x);
				obs_show(bname, y);
			}
			bad++;
		}
	}
	if (bad > 10)
		printf("# ... %d differences in all\n", bad);
	return bad != 0;
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
	printf("usage: %s [-l] [-t TEST]... [-b native|dtimerfd|deferrable]...\n"
	       "  -l          list the cases\n"
	       "  -t TEST     run only TEST (repeatable)\n"
	       "  -b BACKEND  run only these backends (native always runs when\n"
	       "              a dtimerfd case compares against it)\n"
	       "  DTFD_TEST_SLOW=N multiplies every timeout by N\n",
	       argv0);
}

#define BIT_NATIVE	1
#define BIT_DTFD	2
#define BIT_DEFER	4

int h_main(int argc, char **argv)
{
	static const char *only[64];
	int nonly = 0, backends = 0, list = 0, opt, planned = 0;
	char dtfd_why[200] = "", defer_why[200] = "";
	int have_dtfd, have_defer;
	struct h_run *nrun, *drun;
	struct test_case *tc;
	const char *s;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "lt:b:h")) != -1) {
		switch (opt) {
		case 'l':
			list = 1;
			break;
		case 't':
			if (nonly < (int)ARRAY_SIZE(only))
				only[nonly++] = optarg;
			break;
		case 'b':
			if (!strcmp(optarg, "native"))
				backends |= BIT_NATIVE;
			else if (!strcmp(optarg, "dtimerfd"))
				backends |= BIT_DTFD;
			else if (!strcmp(optarg, "deferrable"))
				backends |= BIT_DEFER;
			else {
				usage(argv[0]);
				return 1;
			}
			break;
		default:
			usage(argv[0]);
			return opt == 'h' ? 0 : 1;
		}
	}
	if (!backends)
		backends = BIT_NATIVE | BIT_DTFD | BIT_DEFER;
	s = getenv("DTFD_TEST_SLOW");
	if (s && atoi(s) > 0)
		h_slow = atoi(s);

	for (tc = h_cases; tc; tc = tc->next) {
		int i, sel = !nonly;

		for (i = 0; i < nonly; i++)
			if (!strcmp(only[i], tc->name))
				sel = 1;
		if (!sel) {
			tc->timeout = -1;	/* deselected */
			continue;
		}
		if (list) {
			printf("%s%s%s\n", tc->name,
			       tc->flags & T_DTFD_ONLY ? " (dtimerfd only)" : "",
			       tc->flags & T_NO_DEFER ? " (no deferrable)" : "");
			continue;
		}
		if (!(tc->flags & T_DTFD_ONLY) && (backends & BIT_NATIVE))
			planned++;
		if (backends & BIT_DTFD)
			planned++;
		if (!(tc->flags & T_NO_DEFER) && (backends & BIT_DEFER))
			planned++;
	}
	if (list)
		return 0;

	have_dtfd = probe_dtfd(dtfd_why, sizeof(dtfd_why));
	have_defer = have_dtfd && probe_defer(defer_why, sizeof(defer_why));
	if (!have_dtfd)
		snprintf(defer_why, sizeof(defer_why), "%s", dtfd_why);

	/* as kselftest: no version line when nested under a TAP runner */
	if (!getenv("KSFT_TAP_LEVEL"))
		printf("TAP version 13\n");
	printf("1..%d\n", planned);
	if (!have_dtfd)
		printf("# %s\n", dtfd_why);
	else if (!have_defer)
		printf("# %s\n", defer_why);

	nrun = run_alloc();
	drun = run_alloc();

	for (tc = h_cases; tc; tc = tc->next) {
		struct verdict nv = { 4, "not run" }, v;
		int native_ran = 0;

		if (tc->timeout < 0)
			continue;
		if (!(tc->flags & T_DTFD_ONLY) &&
		    (backends & (BIT_NATIVE | BIT_DTFD | BIT_DEFER))) {
			run_child(tc, &native_ops, nrun, &nv);
			native_ran = 1;
			if (backends & BIT_NATIVE)
				tap(nv.result, tc->name, "native", nv.reason);
		}

		for (int b = 0; b < 2; b++) {
			const struct tfd_ops *ops = b ? &defer_ops : &dtfd_ops;
			int avail = b ? have_defer : have_dtfd;
			const char *why = b ? defer_why : dtfd_why;

			if (!(backends & (b ? BIT_DEFER : BIT_DTFD)))
				continue;
			if (b && (tc->flags & T_NO_DEFER))
				continue;
			if (!avail) {
				tap(4, tc->name, ops->name, why);
				continue;
			}
			if (native_ran && nv.result == 4 &&
			    !(tc->flags & T_NATIVE_MAY_SKIP)) {
				char r[220];

				snprintf(r, sizeof(r), "native: %s", nv.reason);
				tap(4, tc->name, ops->name, r);
				continue;
			}
			if (b)
				keepers_start();
			run_child(tc, ops, drun, &v);
			if (b)
				keepers_stop();
			if (v.result != 4 && native_ran && nv.result != 4 &&
			    !(tc->flags & T_NO_COMPARE) &&
			    compare(nrun, drun, ops->name)) {
				v.result = 1;
				if (!v.reason[0])
					snprintf(v.reason, sizeof(v.reason),
						 "differs from native timerfd");
			}
			tap(v.result, tc->name, ops->name, v.reason);
		}
	}

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
