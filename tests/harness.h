/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small TAP harness for differential timerfd tests.
 *
 * Every test body is written once against a struct tfd_ops and runs in a
 * forked child (own process group, with a timeout) once per backend:
 *
 *   native      timerfd_create/settime/gettime from <sys/timerfd.h>
 *   dtimerfd    dtimerfd_create/settime/gettime from libdtimerfd
 *   deferrable  the same, with DTFD_TIMER_DEFERRABLE added to every settime
 *
 * A body reports in two ways.  EXPECT()/ASSERT() check what the behaviour
 * list says must happen (a failure fails that backend's case).  REC_*()
 * record observations (return value and errno, exact values, times with a
 * tolerance) into a trace kept in shared memory; the trace of each dtimerfd
 * run must equal the trace of the native run step by step, so both halves
 * of a differential test are always run through the same code.
 *
 * TAP output follows kselftest: "TAP version 13", "1..N", "ok N name",
 * "not ok N name", "ok N name # SKIP reason", "# " diagnostics, a final
 * "# Totals:" line; exit 0 when all passed, 1 on any failure, 4 when every
 * case was skipped.
 */
#ifndef DTFD_TESTS_HARNESS_H
#define DTFD_TESTS_HARNESS_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "dtimerfd.h"
#include "util.h"

#ifndef CLOCK_REALTIME_ALARM
#define CLOCK_REALTIME_ALARM	8
#endif
#ifndef CLOCK_BOOTTIME_ALARM
#define CLOCK_BOOTTIME_ALARM	9
#endif
#ifndef TFD_TIMER_CANCEL_ON_SET
#define TFD_TIMER_CANCEL_ON_SET	(1 << 1)
#endif

enum backend {
	BK_NATIVE,
	BK_DTFD,
	BK_DEFER,
};

/*
 * The three calls a test body uses to make and program a timer.  @kind
 * is the implementation (the in-tree backend is the kernel's timerfd);
 * @defers says that settime adds a deferrable flag of its own.
 */
struct tfd_ops {
	const char *name;
	enum backend kind;
	int (*create)(clockid_t clockid, int flags);
	int (*settime)(int fd, int flags, const struct itimerspec *new_value,
		       struct itimerspec *old_value);
	int (*gettime)(int fd, struct itimerspec *curr_value);
	int defers;
};

extern const struct tfd_ops native_ops;
extern const struct tfd_ops dtfd_ops;
extern const struct tfd_ops defer_ops;
extern const struct tfd_ops intree_ops;


/* Test flags */
#define T_NO_DEFER	(1u << 0)	/* no deferrable variant (no settime) */
#define T_NO_COMPARE	(1u << 1)	/* dtimerfd runs only its own EXPECTs */
#define T_DTFD_ONLY	(1u << 2)	/* no native run: dtimerfd-only facts */
#define T_CLOCK		(1u << 3)	/* steps CLOCK_REALTIME (restored) */
#define T_NATIVE_MAY_SKIP (1u << 4)	/* native skips: dtimerfd runs alone */
/*
 * A dtimerfd-only case that states a fact of deferrable timers, not of the
 * module: -b intree runs it on the kernel's TFD_TIMER_DEFERRABLE too.
 */
#define T_INTREE	(1u << 5)

struct test_case {
	const char *name;
	void (*fn)(const struct tfd_ops *ops);
	unsigned int flags;
	int timeout;		/* seconds, per backend run */
	int line;
	int unit;		/* TEST_UNIT of its file */
	struct test_case *next;
};

void h_register(struct test_case *tc);
int h_main(int argc, char **argv);

/*
 * TEST(name, flags, timeout_seconds) { body using ops }
 * Cases run in the order they appear in the file.  In a program of
 * several files (NAME.c and the units in NAME/, tests/Makefile), each
 * unit with cases defines TEST_UNIT before this header: 1, 2, ... in the
 * order its cases run after NAME.c's (TEST_UNIT 0).
 */
#ifndef TEST_UNIT
#define TEST_UNIT	0
#endif

#define TEST(fname, fl, tmo)						\
	static void fname(const struct tfd_ops *ops);			\
	static struct test_case fname##_case = {			\
		#fname, fname, (fl), (tmo), __LINE__, TEST_UNIT, NULL };	\
	__attribute__((constructor)) static void fname##_reg(void)	\
	{								\
		h_register(&fname##_case);				\
	}								\
	static void fname(const struct tfd_ops *ops __attribute__((unused)))

#define TEST_MAIN()							\
	int main(int argc, char **argv) { return h_main(argc, argv); }

/* The backend of the running child. */
extern const struct tfd_ops *h_ops;

/* ---- results and observations (valid in the child) ---- */

void h_fail(const char *file, int line, const char *cond,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void h_skip(const char *fmt, ...) __attribute__((format(printf, 1, 2),
						 noreturn));
void h_abort(void) __attribute__((noreturn));
void h_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

void h_rec_ret(long long ret, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void h_rec_val(long long v, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void h_rec_approx(long long v, long long tol, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void h_rec_its(const struct itimerspec *its, long long tol,
	       const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void h_rec_str(const char *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * REC(expr, "label", ...): evaluate a call, record its return value and
 * (when negative) errno for the differential comparison, and give the
 * return value back with errno preserved.
 */
#define REC(expr, ...) ({						\
	long long __r;							\
	int __e;							\
	__r = (long long)(expr);					\
	__e = errno;							\
	h_rec_ret(__r, __e, __VA_ARGS__);				\
	errno = __e;							\
	__r; })

/*
 * REC_WITHIN(v, lo, hi, "label"): where timing decides a value, record
 * only whether it lies in the window computed from measured timestamps
 * (the EXPECT next to it says why it fails).
 */
#define REC_WITHIN(v, lo, hi, ...) \
	h_rec_val((long long)(v) >= (long long)(lo) && \
		  (long long)(v) <= (long long)(hi), __VA_ARGS__)

/* REC_FD(expr, "label"): like REC() but any fd >= 0 is recorded as 0 */
#define REC_FD(expr, ...) ({						\
	long long __r;							\
	int __e;							\
	__r = (long long)(expr);					\
	__e = errno;							\
	h_rec_ret(__r >= 0 ? 0 : __r, __e, __VA_ARGS__);		\
	errno = __e;							\
	__r; })

#define EXPECT(cond) do {						\
	if (!(cond))							\
		h_fail(__FILE__, __LINE__, #cond, NULL);		\
} while (0)

#define EXPECTF(cond, ...) do {						\
	if (!(cond))							\
		h_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);		\
} while (0)

#define ASSERT(cond) do {						\
	if (!(cond)) {							\
		h_fail(__FILE__, __LINE__, #cond, NULL);		\
		h_abort();						\
	}								\
} while (0)

#define ASSERTF(cond, ...) do {						\
	if (!(cond)) {							\
		h_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);		\
		h_abort();						\
	}								\
} while (0)

/* ret must be -1 with errno eno */
#define EXPECT_ERR(ret, eno) do {					\
	long long __ret = (ret);					\
	int __en = errno;						\
	if (__ret != -1 || __en != (eno))				\
		h_fail(__FILE__, __LINE__, #ret " fails with " #eno,	\
		       "got %lld, errno %d (%s)", __ret, __en,		\
		       __ret == -1 ? strerror(__en) : "-");		\
} while (0)

#define EXPECT_OK(ret) do {						\
	long long __ret = (ret);					\
	int __en = errno;						\
	if (__ret < 0)							\
		h_fail(__FILE__, __LINE__, #ret " succeeds",		\
		       "got %lld, errno %d (%s)", __ret, __en,		\
		       strerror(__en));					\
} while (0)

#define ASSERT_OK(ret) do {						\
	long long __ret = (ret);					\
	int __en = errno;						\
	if (__ret < 0) {						\
		h_fail(__FILE__, __LINE__, #ret " succeeds",		\
		       "got %lld, errno %d (%s)", __ret, __en,		\
		       strerror(__en));					\
		h_abort();						\
	}								\
} while (0)

/* ---- helpers.c: helpers that skip or fail the case (util.h: the rest) ---- */

extern const clockid_t h_clocks[5];	/* the five timerfd clocks */
const char *h_clock_name(clockid_t clockid);
int h_have_alarm(void);		/* kernel has the *_ALARM clocks */
int h_can_wake_alarm(void);	/* caller has CAP_WAKE_ALARM */
int h_clock_usable(clockid_t c);	/* timers on c can be armed here */
clockid_t h_clock_base(clockid_t c);	/* the clock an alarm clock counts */
void h_require_root(void);	/* skip unless uid 0 */
void h_require_alarm(void);	/* skip unless alarm clocks usable */

/* an address in a PROT_NONE page: EFAULT bait */
void *h_bad_ptr(void);

/* h_pin_cpu() or a failed case */
void h_pin(int cpu);
/* a SCHED_IDLE spinner on @cpu (h_spinner_stop()), or a failed case */
void h_idle_spinner(struct h_spinner *s, int cpu);

/*
 * Every kind of descriptor that is not a timer, for the differential
 * error checks (items 10 and 20): fd -1, a closed fd, O_PATH descriptors
 * (of a file, a directory, a char device and of @timer itself), a
 * directory, regular files, a pipe, /dev/null, sockets, an eventfd, an
 * epoll fd, a signalfd, a memfd; where /dev/dtimerfd exists, its control
 * descriptor and a timer of the other implementation (a dtimerfd timer
 * for the native backend, a timerfd for the others).  Fills up to @max
 * entries and returns
 * how many; h_not_timers_close() closes them.  @bad is 1 where timerfd
 * answers EBADF (no usable descriptor), 0 where it answers EINVAL.
 */
struct h_not_timer {
	const char *name;
	int fd;
	int bad;
};
int h_not_timers(int timer, struct h_not_timer *out, int max);
void h_not_timers_close(struct h_not_timer *nt, int n);

/* ---- harness.c: the clock, restored after every run ---- */

/*
 * CLOCK_REALTIME changes.  The harness remembers a (MONOTONIC, REALTIME)
 * pair before each run; h_clock_restore() and, whatever the child did,
 * the parent after it, put REALTIME back to that pair plus the monotonic
 * time elapsed.
 */
int h_clock_step(long long delta_ns);	/* 0, or -1 and errno */
int h_clock_set(long long realtime_ns);
void h_clock_restore(void);
void h_require_clock_set(void);		/* skip unless settable */

/* running under valgrind-like slowness: multiply waits by this */
extern int h_slow;

#endif /* DTFD_TESTS_HARNESS_H */
