// SPDX-License-Identifier: MIT
/*
 * The timerfd_create(2) example, ported to libdtimerfd: same arguments,
 * same output.  With --deferrable the timer does not wake an idle CPU.
 *
 *   timer-demo [--deferrable] initial-secs [interval-secs max-expirations]
 *
 * A first argument of the form "+N" arms the timer relative to now, as
 * the man page's program does with a plain number; plain numbers are
 * relative too.  The output lines are "secs.msecs: read: N; total=T".
 */
#include <err.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dtimerfd.h>

static struct timespec start;

static void print_elapsed(void)
{
	struct timespec now;
	long long ms;

	if (clock_gettime(CLOCK_MONOTONIC, &now) == -1)
		err(EXIT_FAILURE, "clock_gettime");
	ms = (now.tv_sec - start.tv_sec) * 1000LL +
	     (now.tv_nsec - start.tv_nsec) / 1000000;
	printf("%lld.%03lld: ", ms / 1000, ms % 1000);
}

int main(int argc, char *argv[])
{
	uint64_t exp, total = 0, max_exp = 1;
	struct itimerspec its = { 0 };
	int flags = 0, fd, a = 1;

	if (argc > 1 && !strcmp(argv[1], "--deferrable")) {
		flags = DTFD_TIMER_DEFERRABLE;
		a++;
	}
	if (argc - a != 1 && argc - a != 3) {
		fprintf(stderr, "%s [--deferrable] init-secs [interval-secs max-exp]\n",
			argv[0]);
		return EXIT_FAILURE;
	}

	its.it_value.tv_sec = atoi(argv[a]);
	if (argc - a == 3) {
		its.it_interval.tv_sec = atoi(argv[a + 1]);
		max_exp = strtoull(argv[a + 2], NULL, 10);
	}

	fd = dtimerfd_create(CLOCK_MONOTONIC, DTFD_CLOEXEC);
	if (fd == -1)
		err(EXIT_FAILURE, "dtimerfd_create");
	if (clock_gettime(CLOCK_MONOTONIC, &start) == -1)
		err(EXIT_FAILURE, "clock_gettime");
	if (dtimerfd_settime(fd, flags, &its, NULL) == -1)
		err(EXIT_FAILURE, "dtimerfd_settime");

	print_elapsed();
	printf("timer started%s\n", flags ? " (deferrable)" : "");

	while (total < max_exp) {
		if (read(fd, &exp, sizeof(exp)) != sizeof(exp))
			err(EXIT_FAILURE, "read");
		total += exp;
		print_elapsed();
		printf("read: %" PRIu64 "; total=%" PRIu64 "\n", exp, total);
	}
	close(fd);
	return EXIT_SUCCESS;
}
