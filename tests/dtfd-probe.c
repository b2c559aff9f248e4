// SPDX-License-Identifier: GPL-2.0
/*
 * libdtimerfd seen from a program, for ecosystem.sh: creates a timer,
 * arms it deferrable, reads one expiration, and says what it got (a
 * dtimerfd or, with DTIMERFD_FALLBACK=1 and no device, a native timerfd)
 * and whether its number is the one timerfd_create() would have given.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <dtimerfd.h>

int main(void)
{
	struct itimerspec its = { { 0, 0 }, { 0, 10000000 } };
	int lowest = open("/dev/null", O_RDONLY), fd;
	char path[64], link[256];
	uint64_t ticks = 0;
	ssize_t n;

	/* the number timerfd_create() would give: the lowest free one */
	close(lowest);
	fd = dtimerfd_create(CLOCK_MONOTONIC, 0);
	if (fd < 0) {
		printf("create: %s\n", strerror(errno));
		return 0;
	}
	if (fd == lowest)
		printf("number: the lowest free\n");
	else
		printf("number: %d, not the lowest free (%d)\n", fd, lowest);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = 0;
	printf("fd: %s\n", link);
	if (dtimerfd_settime(fd, DTFD_TIMER_DEFERRABLE, &its, NULL))
		printf("settime: %s\n", strerror(errno));
	else if (read(fd, &ticks, 8) == 8)
		printf("read: %llu\n", (unsigned long long)ticks);
	return 0;
}
