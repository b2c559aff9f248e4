// SPDX-License-Identifier: LGPL-2.1-or-later OR MIT
/*
 * The shim's policy (dtimerfd-preload(8)): read once at load from
 * DTIMERFD_POLICY, else the first line of /etc/dtimerfd/preload.conf;
 * text it does not understand is one line on stderr and timers stay
 * strict.  Asked by preload.c for timerfd timers and by preload-sleep.c
 * for sleeps and timeouts (internal.h).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

enum policy { POL_ALL, POL_NONE, POL_MIN_INTERVAL, POL_MIN_VALUE, POL_BOUND };

static enum policy pol = POL_BOUND;
static long long pol_ns;		/* min-interval, min-value */
static unsigned int pol_pct = 10;	/* bound */
static long long pol_max = 1000000000LL;
/* pol == POL_BOUND, read on every sleep */
static int pol_bounded = 1;

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

/* At load, before any timer or wait: the policy, once. */
void dtfd_policy_init(void)
{
	char buf[512], text[512], *item, *save;
	int exclude = 0, bad = 0;
	const char *p, *from;

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
	pol_bounded = pol == POL_BOUND;
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
 * Whether the policy is a bound: then timerfd timers get theirs, and
 * sleeps and timeouts are deferred (never without one).
 */
int dtfd_policy_bounded(void)
{
	return pol_bounded;
}

/*
 * Whether a timerfd timer armed with settime @flags and value @v (NULL:
 * unreadable, the settime will say EFAULT), due in @dur ns (its interval,
 * else its wait; < 0: not known), is made deferrable, and its bound.
 */
int dtfd_policy_timer(int flags, const struct itimerspec *v, long long dur,
		      unsigned long long *max_defer)
{
	*max_defer = 0;
	switch (pol) {
	case POL_NONE:
		return 0;
	case POL_MIN_INTERVAL:
		return v && dtfd_ts_valid(&v->it_interval) &&
		       dtfd_ts_ns(&v->it_interval) &&
		       dtfd_ts_ns(&v->it_interval) >= pol_ns;
	case POL_MIN_VALUE:
		/* an absolute time says nothing about how far ahead it is */
		return !(flags & TFD_TIMER_ABSTIME) && v &&
		       dtfd_ts_valid(&v->it_value) &&
		       dtfd_ts_ns(&v->it_value) >= pol_ns;
	case POL_BOUND:
		/* a timer told of clock steps is about wall-clock time: exact */
		return !(flags & TFD_TIMER_CANCEL_ON_SET) && v &&
		       dtfd_policy(dur, max_defer);
	default:
		return 1;
	}
}
