// SPDX-License-Identifier: GPL-2.0
/*
 * /proc/self/fdinfo: timerfd's five lines, exact spelling and order, after
 * the generic lines; dtimerfd's own lines only after them.  Items 47, 48.
 */
#include <sys/ioctl.h>

#include "harness.h"

static const char *keys[5] = {
	"clockid:", "ticks:", "settime flags:", "it_value:", "it_interval:",
};

/* the fdinfo text, the five timer lines, and what follows them */
static int read_fdinfo(int fd, char lines[5][96], char *generic,
		       size_t glen, char *after, size_t alen)
{
	char path[64], line[256];
	int k = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -1;
	*generic = *after = 0;
	while (fgets(line, sizeof(line), f)) {
		if (k < 5 && !strncmp(line, keys[k], strlen(keys[k]))) {
			line[strcspn(line, "\n")] = 0;
			snprintf(lines[k], 96, "%s", line);
			k++;
		} else if (k == 0) {
			if (strlen(generic) + strlen(line) < glen)
				strcat(generic, line);
		} else if (k == 5) {
			if (strlen(after) + strlen(line) < alen)
				strcat(after, line);
		} else {
			fclose(f);
			return -2;	/* something between the five */
		}
	}
	fclose(f);
	return k;
}

static void check_lines(const struct tfd_ops *ops, int fd, const char *what,
			const char *want[5])
{
	char lines[5][96], generic[512], after[512];
	int i, n = read_fdinfo(fd, lines, generic, sizeof(generic), after,
			       sizeof(after));

	EXPECTF(n == 5, "%s: %d timer lines", what, n);
	if (n != 5)
		return;
	for (i = 0; i < 5; i++) {
		/* deferrable may add its own bit to the settime flags */
		if (i == 2) {
			unsigned int fl = strtoul(lines[2] + 14, NULL, 8);

			REC(fl & 3, "%s: settime flags & 3", what);
			if (ops->defers)
				continue;
		} else {
			h_rec_str(lines[i], "%s: line %d", what, i + 1);
		}
		if (want[i])
			EXPECTF(!strcmp(lines[i], want[i]), "%s: '%s', want '%s'",
				what, lines[i], want[i]);
	}
	EXPECTF(strstr(generic, "pos:") && strstr(generic, "flags:"),
		"%s: generic lines '%s'", what, generic);
	if (ops->kind == BK_NATIVE)
		EXPECTF(!*after, "native has extra lines '%s'", after);
	else if (*after)
		h_diag("%s: after the five: %s", what, after);
}

/* a fresh timer on every usable clock: disarmed, no flags */
static void format_fresh(const struct tfd_ops *ops)
{
	char want_c[32];
	const char *want[5];
	size_t i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(h_clocks); i++) {
		clockid_t c = h_clocks[i];

		if (!h_clock_usable(c))
			continue;
		fd = ops->create(c, 0);
		ASSERT_OK(fd);
		snprintf(want_c, sizeof(want_c), "clockid: %d", (int)c);
		want[0] = want_c;
		want[1] = "ticks: 0";
		want[2] = "settime flags: 00";
		want[3] = "it_value: (0, 0)";
		want[4] = "it_interval: (0, 0)";
		check_lines(ops, fd, h_clock_name(c), want);
		close(fd);
	}
}

/* a big SET_TICKS count, shown in decimal */
static void format_big_ticks(const struct tfd_ops *ops, int fd)
{
	char lines[5][96], g[512], a[512];

	EXPECT_OK(ioctl(fd, ops->kind == BK_NATIVE ? TFD_IOC_SET_TICKS :
			DTFD_IOC_SET_TICKS, &(uint64_t){ 1ULL << 40 }));
	ASSERT(read_fdinfo(fd, lines, g, sizeof(g), a, sizeof(a)) == 5);
	EXPECT(REC(!strcmp(lines[1], "ticks: 1099511627776"),
		   "ticks 2^40") == 1);
}

TEST(format, 0, 30)
{
	struct itimerspec its;
	const char *want[5];
	uint64_t ticks;
	int fd;

	format_fresh(ops);

	fd = ops->create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	ASSERT_OK(fd);
	want[0] = "clockid: 1";

	/* disarmed, interval stored */
	its = h_its(0, SEC(1) + 500000000);
	ASSERT_OK(ops->settime(fd, 0, &its, NULL));
	want[1] = "ticks: 0";
	want[2] = "settime flags: 00";
	want[3] = "it_value: (0, 0)";
	want[4] = "it_interval: (1, 500000000)";
	check_lines(ops, fd, "interval only", want);

	/* expired one-shot, ABSTIME: ticks 1, flags 01 */
	its = h_its(1, 0);
	ASSERT_OK(ops->settime(fd, TFD_TIMER_ABSTIME, &its, NULL));
	EXPECT(h_poll(fd, 2000, NULL) == 1);
	want[1] = "ticks: 1";
	want[2] = "settime flags: 01";
	want[3] = "it_value: (0, 0)";
	want[4] = "it_interval: (0, 0)";
	check_lines(ops, fd, "expired", want);
	EXPECT(h_read(fd, &ticks) == 8);

	/* CANCEL_ON_SET alone: 02, even on MONOTONIC */
	its = h_its(SEC(1000), SEC(2));
	ASSERT_OK(ops->settime(fd, TFD_TIMER_CANCEL_ON_SET, &its, NULL));
	want[1] = "ticks: 0";
	want[2] = "settime flags: 02";
	want[3] = NULL;		/* remaining time: compared below */
	want[4] = "it_interval: (2, 0)";
	{
		struct h_fdinfo fi;

		ASSERT_OK(h_fdinfo(fd, &fi));
		EXPECT(fi.value_sec >= 990 && fi.value_sec <= 1000);
		EXPECT(fi.value_nsec >= 0 && fi.value_nsec < NSEC_PER_SEC);
		h_rec_approx(fi.value_sec, 5, "it_value seconds");
		EXPECT(fi.ordered && fi.nlines == 5);
	}
	/*
	 * a big SET_TICKS count in decimal (64-bit processes only: native
	 * timerfd has no compat_ioctl, see ticks.c)
	 */
	if (sizeof(long) == 4) {
		close(fd);
		return;
	}
	format_big_ticks(ops, fd);
	close(fd);
}

/* 48: the generic "flags:" line, all bits (O_LARGEFILE shown apart) */
TEST(generic_flags, T_NO_DEFER, 30)
{
	static const int combos[] = { 0, TFD_CLOEXEC, TFD_NONBLOCK,
				      TFD_CLOEXEC | TFD_NONBLOCK };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(combos); i++) {
		struct h_fdinfo fi;
		int fd = ops->create(CLOCK_MONOTONIC, combos[i]);

		ASSERT_OK(fd);
		ASSERT_OK(h_fdinfo(fd, &fi));
		if (fi.flags & 0100000)
			h_diag("flags %#x: fdinfo flags %#o has O_LARGEFILE",
			       combos[i], fi.flags);
		REC(fi.flags & ~0100000, "flags %#x: fdinfo flags w/o LARGEFILE",
		    combos[i]);
		REC(fi.flags, "flags %#x: fdinfo flags, all bits", combos[i]);
		EXPECT((fi.flags & ~0100000) == (unsigned int)(O_RDWR |
			combos[i]));
		close(fd);
	}
}

TEST_MAIN()
