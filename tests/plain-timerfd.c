// SPDX-License-Identifier: GPL-2.0
/*
 * A program that knows nothing of dtimerfd: plain glibc timerfd, linked
 * dynamically, for the LD_PRELOAD shim (ecosystem.sh).  Prints what the
 * shim must have changed: where the descriptor points, the fdinfo mode,
 * and that the timer works (read, gettime, errors on a foreign fd); and
 * what it must not: the number, the one timerfd_create() would give.
 *
 * With two arguments, VALUE_S INTERVAL_S (whole seconds, any long long),
 * it only arms a timer with them and prints settime's result and the
 * fdinfo mode and bound: what DTIMERFD_POLICY made of those values.  A
 * third, "abs" or "cancel", arms VALUE_S from now as an absolute time, on
 * CLOCK_MONOTONIC or (cancel) on CLOCK_REALTIME with
 * TFD_TIMER_CANCEL_ON_SET.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

static void print_mode(int fd)
{
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "dtimerfd-mode:", 14) ||
		    !strncmp(line, "dtimerfd-max-defer-ns:", 22))
			printf("%s", line);
	if (f)
		fclose(f);
}

static int arm_only(const char *value, const char *interval, const char *how)
{
	int cancel = !strcmp(how, "cancel"), flags = 0;
	clockid_t clk = cancel ? CLOCK_REALTIME : CLOCK_MONOTONIC;
	struct itimerspec its = { { 0, 0 }, { 0, 0 } };
	int fd = timerfd_create(clk, TFD_CLOEXEC);
	struct timespec now;

	if (fd < 0) {
		perror("timerfd_create");
		return 1;
	}
	its.it_value.tv_sec = (time_t)strtoll(value, NULL, 0);
	its.it_interval.tv_sec = (time_t)strtoll(interval, NULL, 0);
	if (*how) {
		clock_gettime(clk, &now);
		its.it_value.tv_sec += now.tv_sec;
		its.it_value.tv_nsec = now.tv_nsec;
		flags = TFD_TIMER_ABSTIME | (cancel ? TFD_TIMER_CANCEL_ON_SET : 0);
	}
	printf("settime: %d\n", timerfd_settime(fd, flags, &its, NULL));
	print_mode(fd);
	return 0;
}

int main(int argc, char **argv)
{
	struct itimerspec its = { { 0, 20000000 }, { 0, 20000000 } }, cur;
	char path[64], link[256];
	uint64_t ticks = 0;
	ssize_t n;
	int ret, fd, lowest;

	if (argc == 3 || argc == 4)
		return arm_only(argv[1], argv[2], argc == 4 ? argv[3] : "");
	/* the number timerfd_create() gives: the lowest free one */
	lowest = open("/dev/null", O_RDONLY);
	close(lowest);
	fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (fd < 0) {
		perror("timerfd_create");
		return 1;
	}
	if (fd == lowest)
		printf("number: the lowest free\n");
	else
		printf("number: %d, not the lowest free (%d)\n", fd, lowest);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	printf("fd: %s\n", link);
	if (timerfd_settime(fd, 0, &its, NULL) || read(fd, &ticks, 8) != 8 ||
	    timerfd_gettime(fd, &cur)) {
		perror("timer");
		return 1;
	}
	printf("read: %s\n", ticks >= 1 ? "ok" : "none");
	printf("interval: %ld\n", cur.it_interval.tv_nsec);
	print_mode(fd);
	/* a foreign fd and a bad one: timerfd's errors */
	ret = timerfd_settime(0, 0, &its, NULL);
	printf("stdin: %d %s\n", ret, strerror(errno));
	ret = timerfd_gettime(-1, &cur);
	printf("badfd: %d %s\n", ret, strerror(errno));
	return 0;
}
