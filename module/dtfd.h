/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dtimerfd internals.
 *
 * A timer (struct dtfd_ctx) keeps its next expiry as a ktime on the clock
 * it is measured on (@expires on @eclock).  That deadline is the only truth
 * about when the timer is due: a wake-up source (struct dtfd_source) only
 * says "look now", and overruns, remaining time and re-arming are computed
 * from the deadline, identically for every source, in timer.c.
 *
 * Where things are (the one map of module/; README.md, CONTRIBUTING.md
 * and docs/design.md point here).  A wake-up source's "mode" is what
 * fdinfo's dtimerfd-mode line says for its timers.
 *   main.c	the device: control and timer file operations, ioctl
 *		decoding, copying to and from user space
 *   timer.c	the timer's state and its transitions: settime, gettime,
 *		delivery, the read harvest, re-arming, statistics, the
 *		walk of clock steps; the table of wake-up sources,
 *		dtfd_sources[]
 *   hrtimer.c	wake-up source "strict": an hrtimer (strict timers on the
 *		non-alarm clocks, as timerfd)
 *   alarm.c	wake-up source "strict": an alarm (the _ALARM clocks)
 *   ride.c	wake-up source "deferrable" (DTFD_TIMER_DEFERRABLE):
 *		deferral to whichever CPU is awake, from per-CPU queues
 *		(struct dtfd_rq); delivered by the home CPU's rider, by any
 *		busy CPU's rider or finisher, and for the bounded by one
 *		backstop hrtimer per queue
 *   tree.c	the lock-free tree of the queues' earliest keys, fan-out 8,
 *		that tells a ticking CPU which queues are due, for ride.c
 *   percpu.c	wake-up source "deferrable-percpu" (DTFD_TIMER_DEFERRABLE
 *		| DTFD_TIMER_PERCPU): a deferrable timer_list on the arming
 *		CPU, composed with a backstop hrtimer when the deferral is
 *		bounded
 *   lazy.c	what the deferrable sources share: when a timer may ride
 *		an idle CPU's tick, where to aim on the timer wheel
 *   clock.c	clock steps, resume and time namespaces
 *   trace.h	tracepoints dtimerfd:dtfd_arm and dtimerfd:dtfd_deliver,
 *		each timer's window and its delivery (bench/optimum)
 *   compat.h	API differences between kernels, decided by the probes in
 *		module/Kbuild
 */
#ifndef DTFD_INTERNAL_H
#define DTFD_INTERNAL_H

#include <linux/alarmtimer.h>
#include <linux/atomic.h>
#include <linux/build_bug.h>
#include <linux/hrtimer.h>
#include <linux/list.h>
#include <linux/timekeeping.h>
#include <linux/mutex.h>
#include <linux/stddef.h>
#include <linux/timer.h>
#include <linux/timerqueue.h>
#include <linux/types.h>
#include <linux/wait.h>
#include <linux/workqueue.h>

#include <linux/dtimerfd.h>

/* The bits timerfd itself knows; fdinfo's "settime flags" shows only these. */
#define DTFD_TFD_FLAGS		(DTFD_TIMER_ABSTIME | DTFD_TIMER_CANCEL_ON_SET)
#define DTFD_SETTIME_FLAGS	(DTFD_TFD_FLAGS | DTFD_SOURCE_FLAGS)
/* The settime bits that choose the wake-up source. */
#define DTFD_SOURCE_FLAGS	(DTFD_TIMER_DEFERRABLE | DTFD_TIMER_PERCPU)

/* The clocks timerfd_create(2) takes, by bit number. */
#define DTFD_CLOCKS	(BIT(CLOCK_REALTIME) | BIT(CLOCK_MONOTONIC) | \
			 BIT(CLOCK_BOOTTIME) | BIT(CLOCK_REALTIME_ALARM) | \
			 BIT(CLOCK_BOOTTIME_ALARM))

#define DTFD_ALARM_CLOCKS	(BIT(CLOCK_REALTIME_ALARM) | BIT(CLOCK_BOOTTIME_ALARM))

/* Why a timer sits on the clock-change list (clock.c). */
#define DTFD_WATCH_CANCEL	BIT(0)	/* CANCEL_ON_SET armed */
#define DTFD_WATCH_REARM	BIT(1)	/* source follows clock jumps itself */

struct dtfd_ctx;

/**
 * struct dtfd_source - a wake-up source: what tells a timer to look now
 * @mode:	  what fdinfo's dtimerfd-mode line says
 * @clocks:	  the clocks it serves, bit N for clock id N
 * @flags:	  the DTFD_SOURCE_FLAGS bits of the settimes it serves; the
 *		  first source in timer.c's table whose @clocks and @flags
 *		  match a settime is the timer's (indexed at load)
 * @init:	  optional: module load, before any timer exists
 * @exit:	  optional: module unload, after the last timer is gone
 * @setup:	  make the source ready for the context's clocks, when it
 *		  becomes the timer's or the clock changes; it is neither
 *		  armed nor running
 * @arm:	  watch ctx->expires, or deliver at once when it is not after
 *		  @now
 * @collect:	  optional: deliver the expiry that is due at @now but that
 *		  the source has not delivered (a deferrable timer whose CPU
 *		  sleeps); every access of a queued, due timer calls it
 * @clock_jumped: optional: the clock ctx->expires is measured on jumped;
 *		  re-aim, or deliver when now due (from clock.c's work)
 * @try_cancel:	  stop watching; -1 when a callback runs and the caller
 *		  must drop the lock and @cancel_sync.  @restart: @arm follows
 *		  under the same lock (settime arming on the same source and
 *		  clock), so a source may leave the timer queued for @arm to
 *		  move in one step, as hrtimer_start() moves an active hrtimer
 * @cancel_sync:  wait for running callbacks, without the context lock
 * @shutdown:	  release: nothing may run or re-arm once this returns
 * @hres_period:  periods are at least hrtimer_resolution, as
 *		  hrtimer_forward() makes them (alarm_forward() does not)
 * @wake_alarm:	  it wakes a suspended system: arming needs CAP_WAKE_ALARM
 *		  (descriptors travel), as timerfd_settime(2) asks
 *
 * Every operation but @setup, @cancel_sync and @shutdown runs under the
 * context lock; the source's own callbacks take it and deliver through
 * dtfd_deliver().  Choosing a source is a lookup in data, not a call: the
 * operations are indirect calls, which retpolines make dear, and settime
 * makes two of them.  A new source is one file defining one of these and
 * one entry in dtfd_sources[] (timer.c).
 */
struct dtfd_source {
	const char *mode;
	unsigned long clocks;
	unsigned int flags;
	int (*init)(void);
	void (*exit)(void);
	void (*setup)(struct dtfd_ctx *ctx);
	void (*arm)(struct dtfd_ctx *ctx, ktime_t now);
	void (*collect)(struct dtfd_ctx *ctx, ktime_t now);
	void (*clock_jumped)(struct dtfd_ctx *ctx);
	int (*try_cancel)(struct dtfd_ctx *ctx, bool restart);
	void (*cancel_sync)(struct dtfd_ctx *ctx);
	void (*shutdown)(struct dtfd_ctx *ctx);
	bool hres_period;
	bool wake_alarm;
};

extern const struct dtfd_source dtfd_hrtimer_source;
extern const struct dtfd_source dtfd_alarm_source;
extern const struct dtfd_source dtfd_percpu_source;
extern const struct dtfd_source dtfd_ride_source;

/*
 * The deferrable source's state.  @backstop comes first so that it lies
 * exactly where the hrtimer source's timer does: a timer switching
 * between the two by settime re-initialises an hrtimer where an hrtimer
 * was, never a timer_list over one (debugobjects track by address).
 */
struct dtfd_percpu {
	struct hrtimer backstop;
	struct timer_list wheel;
	/* @backstop is armed for this deadline */
	bool backstop_armed;
};

/*
 * The system-wide deferrable source's state: no timer of its own, two
 * places in its home CPU's queues (ride.c).
 */
struct dtfd_ride {
	/* in the home queue, by the monotonic time it falls due */
	struct timerqueue_node node;
	/* bounded: in the home queue of windows, by the window's end */
	struct timerqueue_node end;
	/* the CPU whose queues hold it; -1 before the first arming */
	int home;
	/* deliverers holding it out of its queue */
	atomic_t riding;
};

struct dtfd_ctx {
	/* the source watching the deadline; changes only in settime */
	const struct dtfd_source *src;
	/*
	 * Per-source state.  The clock is fixed at creation, and an alarm
	 * clock's timer never uses another source, so only the hrtimer and
	 * the deferrable sources ever share this space, in turn.
	 */
	union {
		struct hrtimer hrt;
		struct alarm alarm;
		struct dtfd_percpu percpu;
		struct dtfd_ride ride;
	} s;
	/*
	 * Serialises settime: it re-initialises the source, which another
	 * settime waiting for a running callback (without wqh.lock) must
	 * not see half-written.
	 */
	struct mutex setup_lock;
	/*
	 * wqh.lock is the context lock: it guards every field below except
	 * those marked otherwise, and the programming of the sources.  The
	 * hrtimer callbacks take it from hard irq, so process context uses
	 * the _irq variants.
	 */
	wait_queue_head_t wqh;
	/* next expiry on @eclock; 0 when never armed */
	ktime_t expires;
	/*
	 * @eclock's time at the last settime: lateness counts from the later
	 * of this and @expires, so that a deadline already past when it was
	 * set is not decades late.
	 */
	ktime_t armed_at;
	ktime_t tintv;
	/* dtfd_set_tolerance(), applied whenever the timer is armed */
	ktime_t slack;
	ktime_t max_defer;
	/* expirations not yet read: what read(2) returns */
	u64 ticks;
	struct dtfd_stats stats;
	/*
	 * The clock-change count (clock.c) when CANCEL_ON_SET was armed or
	 * last reported: any other value means the realtime clock was set.
	 */
	unsigned int cseq;
	/* the clock of timerfd_create(), and the one @expires is measured on */
	int clockid;
	int eclock;
	/* the timerfd settime bits of the last successful settime, for fdinfo */
	u8 settime_flags;
	/* DTFD_WATCH_*; written under both the clock-list lock and wqh.lock */
	u8 watch;
	/* the clock was set since @cseq: ECANCELED for the next access */
	bool canceled;
	/* a source fired and read/gettime has not re-armed it yet */
	bool expired;
	/* a source is armed for @expires and has not fired */
	bool queued;
	/* on the clock-change list; guarded by its lock (clock.c) */
	struct list_head clist;
};

/* struct dtfd_percpu's layout rule: its backstop where the hrtimer is */
static_assert(offsetof(struct dtfd_ctx, s.percpu.backstop) ==
	      offsetof(struct dtfd_ctx, s.hrt));

/*
 * What the module knows of each clock a timer may have: the differences
 * of the three clocks in one place (timer.c's dtfd_clocks[], as
 * alarmtimer.c keeps alarm_bases[]), indexed by clockid.
 */
struct dtfd_clock {
	/* the clock an absolute and a relative deadline are measured on */
	int abs_clock;
	int rel_clock;
	/* as a clock measured on: its offset from CLOCK_MONOTONIC, if any */
	bool offset;
	enum tk_offsets offs;
	/* whose time namespace offset its absolute times carry; -1: none */
	int timens;
	/* an alarm: it wakes the system, so CAP_WAKE_ALARM to use it */
	bool alarm;
};

extern const struct dtfd_clock dtfd_clocks[MAX_CLOCKS];

static inline bool dtfd_alarm_clock(int clockid)
{
	return dtfd_clocks[clockid].alarm;
}

/* timer.c: the timer's state and transitions */
int dtfd_timer_init(void);
void dtfd_timer_exit(void);
int dtfd_valid_clock(int clockid);
struct dtfd_ctx *dtfd_timer_new(int clockid);
void dtfd_timer_free(struct dtfd_ctx *ctx);
const struct dtfd_source *dtfd_source_for(int clockid, unsigned int flags);
int dtfd_timer_settime(struct dtfd_ctx *ctx, unsigned int flags,
		       const struct itimerspec64 *new, struct itimerspec64 *old);
void dtfd_timer_gettime(struct dtfd_ctx *ctx, struct itimerspec64 *cur);
ssize_t dtfd_read_ticks(struct dtfd_ctx *ctx, bool nonblock, u64 *ticks);
bool dtfd_readable(struct dtfd_ctx *ctx);
int dtfd_set_ticks(struct dtfd_ctx *ctx, u64 ticks);
void dtfd_set_tolerance(struct dtfd_ctx *ctx, u64 slack_ns, u64 max_defer_ns);
void dtfd_get_tolerance(struct dtfd_ctx *ctx, u64 *slack_ns, u64 *max_defer_ns);
void dtfd_get_stats(struct dtfd_ctx *ctx, struct dtfd_stats *st);

/*
 * What fdinfo shows, taken in one go under the lock: timerfd's five
 * lines, then ours.
 */
struct dtfd_snapshot {
	struct timespec64 value;
	struct timespec64 interval;
	struct dtfd_stats stats;
	ktime_t slack;
	ktime_t max_defer;
	u64 ticks;
	const char *mode;
	int clockid;
	unsigned int settime_flags;
};

void dtfd_snapshot(struct dtfd_ctx *ctx, struct dtfd_snapshot *snap);

/* timer.c: for the sources */
void dtfd_deliver(struct dtfd_ctx *ctx, ktime_t now, bool by_bound);

/* The time on the clock the deadline is measured on. */
static inline ktime_t dtfd_now(const struct dtfd_ctx *ctx)
{
	const struct dtfd_clock *c = &dtfd_clocks[ctx->eclock];

	return c->offset ? ktime_get_with_offset(c->offs) : ktime_get();
}

/*
 * @t, a time on the clock the deadline is measured on, as
 * CLOCK_MONOTONIC, by the clock's offset now: exact while the offsets do
 * not jump (the clock walk re-keys what depends on it when they do).
 */
static inline ktime_t dtfd_to_mono(const struct dtfd_ctx *ctx, ktime_t t)
{
	const struct dtfd_clock *c = &dtfd_clocks[ctx->eclock];

	return c->offset ? ktime_sub(t, ktime_mono_to_any(0, c->offs)) : t;
}

/*
 * Debug builds only (make KCFLAGS=-DDTFD_DEBUG, or any lockdep kernel):
 * the race_delay_us parameter delays every callback before it takes
 * wqh.lock, so that tests explore the interleavings of callbacks with
 * process context that a fast machine almost never shows.
 */
#if defined(DTFD_DEBUG) || IS_ENABLED(CONFIG_PROVE_LOCKING)
void dtfd_race_delay(void);
#else
static inline void dtfd_race_delay(void) { }
#endif

/*
 * tree.c: the earliest key of each CPU's queue of deferrable timers, in
 * groups of DTFD_FANOUT, as the timer-migration hierarchy groups CPUs
 */
#define DTFD_FANOUT		8
typedef bool (*dtfd_serve_fn)(unsigned int cpu, s64 now);
int dtfd_tree_init(void);
void dtfd_tree_exit(void);
void dtfd_tree_set(unsigned int cpu, s64 key);
s64 dtfd_tree_root(void);
bool dtfd_tree_serve(s64 now, dtfd_serve_fn serve);
s64 dtfd_tree_soonest(s64 limit);

/* lazy.c: for the deferrable sources */
unsigned long dtfd_wheel_jiffies(s64 delta);
bool dtfd_cpu_busy(void);
bool dtfd_idle_tick_ok(s64 waited);

/* clock.c: clock changes, resume and time namespaces, for timer.c */
extern unsigned int dtfd_clock_seq;
int dtfd_clock_init(work_func_t walk);
void dtfd_clock_exit(void);
ktime_t dtfd_timens_to_host(int clockid, ktime_t tim);

#endif /* DTFD_INTERNAL_H */
