// SPDX-License-Identifier: GPL-2.0
/*
 * tests/abi, unit 2: commands that are not ours, deferrable alarm timers,
 * and the descriptors the library holds.
 */
#define TEST_UNIT	2

#include <dirent.h>
#include <sys/ioctl.h>

#include "../harness.h"
#include "../ioctls.h"
#include "abi.h"

/* ioctl @cmd of ours with another direction (@k 0-2) or size (3, 4) */
static unsigned long ioc_variant(unsigned long cmd, int k)
{
	unsigned int dir = _IOC_DIR(cmd), size = _IOC_SIZE(cmd);

	if (k < 3)
		dir = (dir + (unsigned int)k + 1) & 3;
	else
		size = k == 3 ? size + 8 : 0;
	return _IOC(dir, DTFD_IOC_MAGIC, _IOC_NR(cmd), size);
}

/* not ours: ENOTTY on both kinds of descriptor, and no new descriptor */
static void expect_enotty(int ctl, int t, unsigned long cmd, uint64_t *buf)
{
	int n = next_fd();

	EXPECTF(ioctl(ctl, cmd, buf) == -1 && errno == ENOTTY,
		"control fd, cmd %#lx: %s", cmd, strerror(errno));
	EXPECTF(ioctl(t, cmd, buf) == -1 && errno == ENOTTY,
		"timer fd, cmd %#lx: %s", cmd, strerror(errno));
	EXPECT(next_fd() == n);
}

TEST(unknown_ioctls, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	static const unsigned long cmds[] = { DTFD_IOC_NOT_OURS };
	uint64_t buf[8] = { 1 };
	size_t i;
	int ctl = ctl_open(), t = timer_open(ctl), k;
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	struct dtfd_features f;

	for (i = 0; i < ARRAY_SIZE(cmds); i++)
		expect_enotty(ctl, t, cmds[i], buf);
	for (i = 0; i < IOC_N; i++)
		for (k = 0; k < 5; k++)
			expect_enotty(ctl, t,
				      ioc_variant(dtfd_ioctls[i].cmd, k), buf);
	/* our numbers on a timerfd and on another device: ENOTTY */
	ASSERT_OK(tfd);
	EXPECT_ERR(ioctl(tfd, DTFD_IOC_FEATURES, &f), ENOTTY);
	EXPECT_ERR(ioctl(tfd, DTFD_IOC_SET_TICKS, buf), ENOTTY);
	EXPECT_ERR(ioctl(tfd, DTFD_IOC_GETTIME64, buf), ENOTTY);
	EXPECT_ERR(ioctl(null, DTFD_IOC_FEATURES, &f), ENOTTY);
	EXPECT_ERR(ioctl(null, DTFD_IOC_CREATE, buf), ENOTTY);
	close(null);
	close(tfd);
	close(t);
	close(ctl);
}

/* documented: an alarm timer cannot be deferrable (EINVAL, no change) */
TEST(deferrable_alarm_einval, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	struct itimerspec its = h_its(SEC(100), 0), cur;
	struct dtfd_features f;
	int fd = ctl_open();
	size_t i;

	f = get_features(fd);
	close(fd);
	if (!(f.features & DTFD_FEATURE_DEFERRABLE))
		h_skip("deferrable backend not available");
	h_require_alarm();
	for (i = 3; i < 5; i++) {
		fd = dtimerfd_create(h_clocks[i], 0);
		ASSERT_OK(fd);
		EXPECT_ERR(dtimerfd_settime(fd, DTFD_TIMER_DEFERRABLE, &its,
					    NULL), EINVAL);
		EXPECT_OK(dtimerfd_gettime(fd, &cur));
		EXPECT(h_its_value(&cur) == 0);
		close(fd);
	}
}

/* descriptors of this process whose /proc/self/fd link is @target */
static int count_links(const char *target, int *last)
{
	char path[64], link[128];
	struct dirent *e;
	int n = 0;
	DIR *d = opendir("/proc/self/fd");

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);
		ssize_t len;

		if (e->d_name[0] == '.' || fd == dirfd(d))
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = 0;
		if (!strcmp(link, target)) {
			n++;
			*last = fd;
		}
	}
	closedir(d);
	return n;
}

/*
 * The library's timers: an anonymous-inode descriptor, read-write, bound
 * to its clock; the library holds one control descriptor, close-on-exec,
 * and when the program closes it, opens another without ever closing the
 * number it no longer owns (dtimerfd_create(3), NOTES).
 */
TEST(library_open, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	struct h_fdinfo fi;
	char path[64], link[128];
	int fd = dtimerfd_create(CLOCK_REALTIME, 0), fds[8], i, ctl = -1;
	int null;
	ssize_t n;

	ASSERT_OK(fd);
	EXPECT((fcntl(fd, F_GETFL) & O_ACCMODE) == O_RDWR);
	ASSERT_OK(h_fdinfo(fd, &fi));
	EXPECT(fi.clockid == CLOCK_REALTIME);
	EXPECT(fi.ordered);
	if (fi.extra[0])
		h_diag("dtimerfd lines: %s", fi.extra);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	ASSERT(n > 0);
	link[n] = 0;
	EXPECTF(!strcmp(link, "anon_inode:[dtimerfd]"), "fd -> %s", link);
	close(fd);

	/* one control descriptor, however many timers */
	for (i = 0; i < 8; i++) {
		fds[i] = dtimerfd_create(CLOCK_MONOTONIC, 0);
		ASSERT_OK(fds[i]);
	}
	EXPECT(count_links(DTIMERFD_DEVICE, &ctl) == 1);
	ASSERT(ctl >= 0);
	EXPECT(fd_cloexec(ctl));
	for (i = 0; i < 8; i++)
		close(fds[i]);

	/* closed under the library and the number reused: left alone */
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	ASSERT_OK(null);
	ASSERT(dup2(null, ctl) == ctl);
	close(null);
	null = ctl;
	fd = dtimerfd_create(CLOCK_MONOTONIC, DTFD_NONBLOCK);
	ASSERT_OK(fd);
	EXPECT(!!(fcntl(fd, F_GETFL) & O_NONBLOCK));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", null);
	n = readlink(path, link, sizeof(link) - 1);
	ASSERT(n > 0);
	link[n] = 0;
	EXPECTF(!strcmp(link, "/dev/null"), "fd %d -> %s", null, link);
	EXPECT(count_links(DTIMERFD_DEVICE, &ctl) == 1);
	close(fd);
	close(null);
}
