// SPDX-License-Identifier: GPL-2.0
/*
 * dtfd-user: what an unprivileged program sees of an installed dtimerfd,
 * for the dracut lane (vm/dracut/run).  Linked statically against
 * libdtimerfd.a and started by runas as an ordinary user.
 *
 * Prints one "ok <what>" or "fail <what>: <why>" line per check and exits
 * with the number of failures (0: all passed):
 *   - no privileges: a non-zero uid and no effective capabilities;
 *   - dtimerfd_create() makes a timer through /dev/dtimerfd: an
 *     anonymous-inode descriptor, anon_inode:[dtimerfd] (the library's
 *     fallback to native timerfds is not in play: fdinfo has the dtimerfd
 *     keys), that cannot be reopened through /proc, as a timerfd cannot;
 *   - a strict periodic timer expires and read() counts it, gettime
 *     reports its interval;
 *   - the same timer re-armed deferrable expires too (a deferrable timer
 *     waits for its CPU to wake; poll's own timeout is the backstop);
 *   - the alarm clocks are refused with EPERM, as timerfd_create(2)
 *     refuses them without CAP_WAKE_ALARM.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include <dtimerfd.h>

static int failures;

static void check(int good, const char *what, const char *fmt, ...)
{
	va_list ap;

	if (good) {
		printf("ok %s\n", what);
	} else {
		printf("fail %s: ", what);
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
		putchar('\n');
		failures++;
	}
	fflush(stdout);
}

/* The value of "key:" in a file of "key: value" lines, or "". */
static const char *field(const char *path, const char *key, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t klen = strlen(key);
	char line[256];

	buf[0] = 0;
	if (!f)
		return buf;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, klen) || line[klen] != ':')
			continue;
		snprintf(buf, len, "%s", line + klen + 1 + strspn(line + klen + 1, " \t"));
		buf[strcspn(buf, "\n")] = 0;
		break;
	}
	fclose(f);
	return buf;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Wait (at most 10 s) for expirations and read them; 0 on failure. */
static uint64_t expirations(int fd, double *waited)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	double start = now();
	uint64_t ticks = 0;

	if (poll(&pfd, 1, 10000) == 1 && read(fd, &ticks, sizeof(ticks)) != sizeof(ticks))
		ticks = 0;
	*waited = now() - start;
	return ticks;
}

int main(void)
{
	const struct itimerspec its = { { 0, 20000000 }, { 0, 20000000 } };
	static const struct { clockid_t id; const char *name; } alarms[] = {
		{ CLOCK_REALTIME_ALARM, "CLOCK_REALTIME_ALARM" },
		{ CLOCK_BOOTTIME_ALARM, "CLOCK_BOOTTIME_ALARM" },
	};
	char path[64], buf[128], link[256];
	struct itimerspec cur;
	double waited;
	uint64_t ticks;
	size_t i;
	ssize_t n;
	int fd;

	check(getuid() != 0 && geteuid() != 0, "unprivileged",
	      "uid %u euid %u", getuid(), geteuid());
	field("/proc/self/status", "CapEff", buf, sizeof(buf));
	check(strspn(buf, "0") == strlen(buf) && buf[0], "no capabilities",
	      "CapEff %s", buf);

	fd = dtimerfd_create(CLOCK_MONOTONIC, DTFD_CLOEXEC);
	check(fd >= 0, "dtimerfd_create(CLOCK_MONOTONIC)", "%s", strerror(errno));
	if (fd < 0)
		return failures;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	check(!strcmp(link, "anon_inode:[dtimerfd]") &&
	      *field(path, "dtimerfd-mode", buf, sizeof(buf)),
	      "the fd is a dtimerfd (anon_inode:[dtimerfd], not the fallback)",
	      "fd -> '%s', dtimerfd-mode '%s'", link, buf);
	{
		/*
		 * As a timerfd: the anonymous inode is root's and 0600, so an
		 * ordinary user gets EACCES where root gets ENXIO; compare.
		 */
		int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		int again, err, nagain, nerr;
		char self[64];

		snprintf(self, sizeof(self), "/proc/self/fd/%d", tfd);
		nagain = open(self, O_RDWR | O_CLOEXEC);
		nerr = errno;
		snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
		again = open(self, O_RDWR | O_CLOEXEC);
		err = errno;
		check(tfd >= 0 && again < 0 && nagain < 0 && err == nerr,
		      "reopening it through /proc fails as for a timerfd",
		      "open gave %d (%s), a timerfd's %d (%s)", again,
		      again < 0 ? strerror(err) : "a descriptor", nagain,
		      nagain < 0 ? strerror(nerr) : "a descriptor");
		if (again >= 0)
			close(again);
		if (nagain >= 0)
			close(nagain);
		if (tfd >= 0)
			close(tfd);
	}

	check(!dtimerfd_settime(fd, 0, &its, NULL), "strict: settime 20 ms periodic",
	      "%s", strerror(errno));
	field(path, "dtimerfd-mode", buf, sizeof(buf));
	check(!strcmp(buf, "strict"), "strict: fdinfo says strict", "'%s'", buf);
	ticks = expirations(fd, &waited);
	check(ticks >= 1, "strict: read expirations", "none in %.1f s", waited);
	printf("  strict: %llu expiration(s) after %.3f s\n", (unsigned long long)ticks, waited);
	check(!dtimerfd_gettime(fd, &cur) && cur.it_interval.tv_nsec == 20000000 &&
	      cur.it_interval.tv_sec == 0, "strict: gettime reports the interval",
	      "%s, interval %ld.%09ld", strerror(errno),
	      (long)cur.it_interval.tv_sec, cur.it_interval.tv_nsec);

	check(!dtimerfd_settime(fd, DTFD_TIMER_DEFERRABLE, &its, NULL),
	      "deferrable: settime 20 ms periodic", "%s", strerror(errno));
	field(path, "dtimerfd-mode", buf, sizeof(buf));
	check(!strcmp(buf, "deferrable"), "deferrable: fdinfo says deferrable", "'%s'", buf);
	ticks = expirations(fd, &waited);
	check(ticks >= 1, "deferrable: read expirations", "none in %.1f s", waited);
	printf("  deferrable: %llu expiration(s) after %.3f s\n", (unsigned long long)ticks, waited);
	field(path, "dtimerfd-expirations", buf, sizeof(buf));
	printf("  fdinfo: dtimerfd-expirations %s\n", buf);
	close(fd);

	for (i = 0; i < sizeof(alarms) / sizeof(alarms[0]); i++) {
		int afd, nfd, err, nerr;

		errno = 0;
		afd = dtimerfd_create(alarms[i].id, 0);
		err = errno;
		nfd = timerfd_create(alarms[i].id, 0);	/* what timerfd says */
		nerr = errno;
		snprintf(buf, sizeof(buf), "%s: EPERM, as timerfd_create", alarms[i].name);
		check(afd < 0 && err == EPERM && nfd < 0 && nerr == EPERM, buf,
		      "dtimerfd %d (%s), timerfd %d (%s)", afd, strerror(err), nfd,
		      strerror(nerr));
		if (afd >= 0)
			close(afd);
		if (nfd >= 0)
			close(nfd);
	}
	return failures;
}
