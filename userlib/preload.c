// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * libdtimerfd-preload.so: LD_PRELOAD=libdtimerfd-preload.so (or a line in
 * /etc/ld.so.preload) makes an unmodified program's timers and timeouts
 * deferrable, within the bounds of a policy (dtimerfd-preload(8)):
 *
 *   bound=10%,max=1s     the default: each timer or timeout may come up
 *                        to 10 % of its own duration late, at most 1 s
 *   all                  deferrable without bound (timerfd timers only)
 *   none                 nothing deferred; timerfds are strict dtimerfds
 *   min-interval=DUR     timerfd timers with an interval of DUR or more
 *   min-value=DUR        timerfd timers first due DUR or more ahead
 *   ...,exclude=A:B      programs A and B (executable or argv[0] name)
 *                        keep every timer and timeout exact
 *
 * from DTIMERFD_POLICY, else the first line of /etc/dtimerfd/preload.conf.
 * Text the shim does not understand: one line on stderr, then none.
 * Never early, alarm clocks and TFD_TIMER_CANCEL_ON_SET timers exact.
 *
 * This file: the policy and the timerfd interposers; preload-sleep.c the
 * sleeps and the waits with a timeout; ioctl.c, the library's own, every
 * ioctl of both (hidden: the shim exports only preload.map's names).
 * Everything else passes through:
 * the descriptors are ordinary file descriptors, and programs whose timers
 * are not dtimerfds and machines without the module get the real calls.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "dtimerfd.h"
#include "internal.h"

#define DTFD_API __attribute__((visibility("default")))

enum policy { POL_ALL, POL_NONE, POL_MIN_INTERVAL, POL_MIN_VALUE, POL_BOUND };

static enum policy pol = POL_BOUND;
static long long pol_ns;		/* min-interval, min-value */
static unsigned int pol_pct = 10;	/* bound */
static long long pol_max = 1000000000LL;
/* sleeps and timeouts: only under bound (see preload-sleep.c) */
int dtfd_pol_waits = 1;

typedef int (*create_fn)(clockid_t, int);
typedef int (*settime_fn)(int, int, const struct itimerspec *,
			  struct itimerspec *);
typedef int (*gettime_fn)(int, struct itimerspec *);

static create_fn real_create;
static settime_fn real_settime;
static gettime_fn real_gettime;

/* v units of @scale ns, saturated (a double past LLONG_MAX is undefined) */
static long long dur_ns(double v, double scale)
{
	v *= scale;
	return v >= 9.2e18 ? LLONG_MAX : (long long)v;
}

/* "100ms", "1s", "500us", "2000000ns", "3" (seconds); -1 if not one */
static long long parse_duration(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || !(v >= 0))	/* also NaN */
		return -1;
	if (!*end || !strcmp(end, "s"))
		return dur_ns(v, 1e9);
	if (!strcmp(end, "ms"))
		return dur_ns(v, 1e6);
	if (!strcmp(end, "us"))
		return dur_ns(v, 1e3);
	if (!strcmp(end, "ns"))
		return dur_ns(v, 1);
	return -1;
}

/* The program's names: argv[0]'s and the executable's. */
static int excluded(const char *list)
{
	char exe[PATH_MAX], *base = NULL;
	const char *p = list, *e;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n > 0) {
		exe[n] = 0;
		base = strrchr(exe, '/');
		base = base ? base + 1 : exe;
	}
	for (; *p; p = *e ? e + 1 : e) {
		size_t len;

		e = strchrnul(p, ':');
		len = (size_t)(e - p);
		if (!len)
			continue;
		if ((strlen(program_invocation_short_name) == len &&
		     !strncmp(program_invocation_short_name, p, len)) ||
		    (base && strlen(base) == len && !strncmp(base, p, len)))
			return 1;
	}
	return 0;
}

/* One item of the policy text; 0 if understood. */
static int parse_item(char *item, int *exclude)
{
	char *v = strchr(item, '=');
	long long ns;
	char *end;

	if (v)
		*v++ = 0;
	if (!v && !strcmp(item, "all")) {
		pol = POL_ALL;
	} else if (!v && !strcmp(item, "none")) {
		pol = POL_NONE;
	} else if (v && !strcmp(item, "bound")) {
		unsigned long pct = strtoul(v, &end, 10);

		if (end == v || strcmp(end, "%") || pct > 1000)
			return -1;
		pol = POL_BOUND;
		pol_pct = (unsigned int)pct;
	} else if (v && !strcmp(item, "max") && (ns = parse_duration(v)) >= 0) {
		pol_max = ns;
	} else if (v && !strcmp(item, "min-interval") &&
		   (ns = parse_duration(v)) >= 0) {
		pol = POL_MIN_INTERVAL;
		pol_ns = ns;
	} else if (v && !strcmp(item, "min-value") &&
		   (ns = parse_duration(v)) >= 0) {
		pol = POL_MIN_VALUE;
		pol_ns = ns;
	} else if (v && !strcmp(item, "exclude")) {
		*exclude = excluded(v);
	} else {
		return -1;
	}
	return 0;
}

/* DTIMERFD_POLICY, else the configuration file's first policy line. */
static const char *policy_text(char *buf, size_t size, const char **from)
{
	const char *p = getenv("DTIMERFD_POLICY");
	FILE *f;

	*from = "DTIMERFD_POLICY";
	if (p)
		return p;
	*from = DTFD_PRELOAD_CONF;
	f = fopen(DTFD_PRELOAD_CONF, "re");
	if (!f)
		return NULL;
	while (fgets(buf, (int)size, f)) {
		buf[strcspn(buf, "#\n")] = 0;
		p = buf + strspn(buf, " \t");
		if (*p)
			break;
		p = NULL;
	}
	fclose(f);
	return p;
}

__attribute__((constructor)) static void preload_init(void)
{
	char buf[512], text[512], *item, *save;
	int exclude = 0, bad = 0;
	const char *p, *from;

	real_create = (create_fn)dlsym(RTLD_NEXT, "timerfd_create");
	real_settime = (settime_fn)dlsym(RTLD_NEXT, "timerfd_settime");
	real_gettime = (gettime_fn)dlsym(RTLD_NEXT, "timerfd_gettime");

	p = policy_text(buf, sizeof(buf), &from);
	if (!p || !*p)
		return;
	snprintf(text, sizeof(text), "%s", p);
	text[strcspn(text, " \t")] = 0;
	for (item = strtok_r(text, ",", &save); item && !bad;
	     item = strtok_r(NULL, ",", &save))
		bad = parse_item(item, &exclude);
	if (bad) {
		/*
		 * A typo must not make every timer deferrable (a watchdog's
		 * among them): say so once, and keep timerfd's strictness.
		 */
		fprintf(stderr,
			"libdtimerfd-preload: %s=%s not understood (see dtimerfd-preload(8)); timers stay strict\n",
			from, p);
		exclude = 1;
	}
	if (exclude)
		pol = POL_NONE;
	dtfd_pol_waits = pol == POL_BOUND;
}

/*
 * How a timer or timeout @dur ns long (the interval of a periodic timer,
 * else the time to its expiry; < 0: not known) is armed: 0 exact, 1
 * deferrable with *max_defer (0: without bound).
 */
int dtfd_policy(long long dur, unsigned long long *max_defer)
{
	*max_defer = 0;
	if (pol == POL_ALL)
		return 1;
	if (pol != POL_BOUND || dur <= 0)
		return 0;
	*max_defer = dur / 100 * pol_pct + dur % 100 * pol_pct / 100;
	if (*max_defer > (unsigned long long)pol_max)
		*max_defer = pol_max;
	return *max_defer > 0;
}

/*
 * A timespec in ns, saturated at LLONG_MAX (tv_sec up to max time_t);
 * -1 for one the kernel rejects as EINVAL anyway.
 */
static long long ts_ns(const struct timespec *ts)
{
	if (ts->tv_sec < 0 || ts->tv_nsec < 0 || ts->tv_nsec >= 1000000000L)
		return -1;
	if (ts->tv_sec > (LLONG_MAX - 999999999LL) / 1000000000LL)
		return LLONG_MAX;
	return ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

/*
 * The caller's itimerspec, read with a plain load (internal.h says why);
 * an address no mapping can have is left to the settime ioctl, which
 * says EFAULT as timerfd_settime(2) would.
 */
static int peek(const struct itimerspec *uptr, struct itimerspec *val)
{
	if (!dtfd_user_ok(uptr, sizeof(*uptr)))
		return -1;
	*val = *uptr;
	return 0;
}

/* The clocks of the timers created here, + 1, for absolute times. */
static unsigned char fd_clock[4096];

/* What the policy calls a timer's duration: its interval, else its wait. */
static long long timer_duration(int fd, int flags, const struct itimerspec *v)
{
	long long val = ts_ns(&v->it_value), ivl = ts_ns(&v->it_interval);
	struct timespec now;
	long long n;

	if (val <= 0 || ivl < 0)
		return -1;
	if (ivl)
		return ivl;
	if (!(flags & TFD_TIMER_ABSTIME))
		return val;
	if (fd < 0 || fd >= (int)sizeof(fd_clock) || !fd_clock[fd] ||
	    clock_gettime(fd_clock[fd] - 1, &now))
		return -1;
	n = ts_ns(&now);
	return val > n ? val - n : -1;
}

static int want_deferrable(int fd, int flags, const struct itimerspec *uptr,
			   unsigned long long *max_defer)
{
	struct itimerspec v;

	*max_defer = 0;
	switch (pol) {
	case POL_NONE:
		return 0;
	case POL_MIN_INTERVAL:
		return !peek(uptr, &v) && ts_ns(&v.it_interval) &&
		       ts_ns(&v.it_interval) >= pol_ns;
	case POL_MIN_VALUE:
		/* an absolute time says nothing about how far ahead it is */
		return !(flags & TFD_TIMER_ABSTIME) && !peek(uptr, &v) &&
		       ts_ns(&v.it_value) >= pol_ns;
	case POL_BOUND:
		/* a timer told of clock steps is about wall-clock time: exact */
		return !(flags & TFD_TIMER_CANCEL_ON_SET) && !peek(uptr, &v) &&
		       dtfd_policy(timer_duration(fd, flags, &v), max_defer);
	default:
		return 1;
	}
}

DTFD_API int timerfd_create(clockid_t clockid, int flags)
{
	int fd;

	/* an alarm must wake the machine: leave those to timerfd */
	if (clockid == CLOCK_REALTIME_ALARM || clockid == CLOCK_BOOTTIME_ALARM)
		return real_create(clockid, flags);
	/*
	 * Any failure, not only a missing module: a service's DeviceAllow=
	 * makes the open EPERM, and systemd-logind failed to start when that
	 * reached it.  The real call then fails, or not, as timerfd does.
	 */
	fd = dtfd_create_ioctl(clockid, flags);
	if (fd < 0)
		return real_create(clockid, flags);
	if (fd >= 0 && fd < (int)sizeof(fd_clock))
		fd_clock[fd] = (unsigned char)(clockid + 1);
	return fd;
}

DTFD_API int timerfd_settime(int fd, int flags,
			     const struct itimerspec *new_value,
			     struct itimerspec *old_value)
{
	unsigned long long max_defer;
	int dflags = flags;

	if (want_deferrable(fd, flags, new_value, &max_defer)) {
		dflags |= DTFD_TIMER_DEFERRABLE;
		/* the bound, from this arming on; not ours: settime says so */
		if (pol == POL_BOUND)
			dtfd_tolerance_ioctl(fd, 0, max_defer);
	}
	if (!dtfd_settime_ioctl(fd, dflags, new_value, old_value))
		return 0;
	/*
	 * Not a dtimerfd (ENOTTY) or not a descriptor (EBADF): the real call
	 * does whatever timerfd does, errors in timerfd's order included.
	 */
	if (errno == ENOTTY || errno == EBADF)
		return real_settime(fd, flags, new_value, old_value);
	return -1;
}

DTFD_API int timerfd_gettime(int fd, struct itimerspec *curr_value)
{
	if (!dtfd_gettime_ioctl(fd, curr_value))
		return 0;
	if (errno == ENOTTY || errno == EBADF)
		return real_gettime(fd, curr_value);
	return -1;
}
