// SPDX-License-Identifier: GPL-2.0
/*
 * exec-helper FD [MODE]: run by lifetime.t after execve() to show that an
 * inherited timer fd still works.  MODE "read" (default) waits for the
 * timer and prints the count; "closed" expects FD to be closed.
 * Exit 0 on success, 1 otherwise, 2 on usage errors.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct pollfd p;
	uint64_t ticks = 0;
	int fd;

	if (argc < 2)
		return 2;
	fd = atoi(argv[1]);
	if (argc > 2 && !strcmp(argv[2], "closed")) {
		if (fcntl(fd, F_GETFD) == -1 && errno == EBADF)
			return 0;
		printf("# exec-helper: fd %d is still open\n", fd);
		return 1;
	}
	p.fd = fd;
	p.events = POLLIN;
	if (poll(&p, 1, 10000) != 1) {
		printf("# exec-helper: fd %d not readable\n", fd);
		return 1;
	}
	if (read(fd, &ticks, sizeof(ticks)) != sizeof(ticks)) {
		printf("# exec-helper: read: %s\n", strerror(errno));
		return 1;
	}
	printf("# exec-helper: read %llu\n", (unsigned long long)ticks);
	return ticks >= 1 ? 0 : 1;
}
