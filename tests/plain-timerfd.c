// SPDX-License-Identifier: GPL-2.0
/*
 * A program that knows nothing of dtimerfd: plain glibc timerfd, linked
 * dynamically, for the LD_PRELOAD shim (ecosystem.sh).  Prints what the
 * shim must have changed: where the descriptor points, the fdinfo mode,
 * and that the timer works (read, gettime, errors on a foreign fd).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

int main(void)
{
	struct itimerspec its = { { 0, 20000000 }, { 0, 20000000 } }, cur;
	char path[64], link[256], line[256];
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	uint64_t ticks = 0;
	ssize_t n;
	FILE *f;
	int ret;

	if (fd < 0) {
		perror("timerfd_create");
		return 1;
	}
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
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "dtimerfd-mode:", 14))
			printf("%s", line);
	if (f)
		fclose(f);
	/* a foreign fd and a bad one: timerfd's errors */
	ret = timerfd_settime(0, 0, &its, NULL);
	printf("stdin: %d %s\n", ret, strerror(errno));
	ret = timerfd_gettime(-1, &cur);
	printf("badfd: %d %s\n", ret, strerror(errno));
	return 0;
}
