// SPDX-License-Identifier: GPL-2.0
/*
 * Creation: which clocks and flags are accepted, what the new fd looks
 * like, resource errors, and what generic fd operations do to it.
 * Behaviour items 1-4, 6-8, 48, 50, 54 (item 5 is in alarm.c).
 */
#include <limits.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/capability.h>
#include <linux/fs.h>

#include "harness.h"

static int nonblock_bit(int fd)
{
	return !!(fcntl(fd, F_GETFL) & O_NONBLOCK);
}

static int cloexec_bit(int fd)
{
	return !!(fcntl(fd, F_GETFD) & FD_CLOEXEC);
}

/* 1: exactly REALTIME, MONOTONIC, BOOTTIME and the two alarm clocks */
TEST(clocks, T_NO_DEFER, 60)
{
	static const int extra[] = { INT_MIN, INT_MIN + 1, -100, 100, 1000,
				     INT_MAX };
	size_t i;
	int c, fd;

	for (c = -3; c <= 16; c++) {
		int alarm = c == CLOCK_REALTIME_ALARM ||
			    c == CLOCK_BOOTTIME_ALARM;
		int valid = c == CLOCK_REALTIME || c == CLOCK_MONOTONIC ||
			    c == CLOCK_BOOTTIME || alarm;

		fd = REC_FD(ops->create(c, TFD_CLOEXEC), "create clock %d", c);
		if (fd >= 0) {
			EXPECTF(valid, "clock %d accepted", c);
			close(fd);
		} else if (alarm) {
			EXPECTF(errno == EPERM && !h_can_wake_alarm(),
				"clock %d: %s", c, strerror(errno));
		} else {
			EXPECTF(errno == EINVAL && !valid,
				"clock %d: %s", c, strerror(errno));
		}
	}
	for (i = 0; i < ARRAY_SIZE(extra); i++) {
		fd = REC_FD(ops->create(extra[i], 0), "create clock %d",
			    extra[i]);
		EXPECT_ERR(fd, EINVAL);
		if (fd >= 0)
			close(fd);
	}
	/* a bad clock and bad flags together: still EINVAL */
	fd = REC_FD(ops->create(-1, -1), "create clock -1 flags -1");
	EXPECT_ERR(fd, EINVAL);
}

/* 2: only TFD_CLOEXEC and TFD_NONBLOCK; every other bit alone is EINVAL */
TEST(flag_bits, T_NO_DEFER, 60)
{
	int bit, fd;

	EXPECT(TFD_CLOEXEC == O_CLOEXEC && TFD_NONBLOCK == O_NONBLOCK);
	EXPECT(DTFD_CLOEXEC == TFD_CLOEXEC && DTFD_NONBLOCK == TFD_NONBLOCK);
	for (bit = 0; bit < 32; bit++) {
		int flags = (int)(1u << bit);
		int valid = flags == TFD_CLOEXEC || flags == TFD_NONBLOCK;

		fd = REC_FD(ops->create(CLOCK_MONOTONIC, flags),
			    "create flags 1<<%d", bit);
		if (valid)
			EXPECTF(fd >= 0, "bit %d", bit);
		else
			EXPECT_ERR(fd, EINVAL);
		if (fd >= 0)
			close(fd);
	}
	fd = REC_FD(ops->create(CLOCK_MONOTONIC, -1), "create flags -1");
	EXPECT_ERR(fd, EINVAL);
	fd = REC_FD(ops->create(CLOCK_REALTIME,
				TFD_CLOEXEC | TFD_NONBLOCK | O_RDWR),
		    "create flags O_RDWR");
	EXPECT_ERR(fd, EINVAL);
	fd = REC_FD(ops->create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK),
		    "create both flags");
	EXPECT(fd >= 0);
}

/* 3: the flags show in F_GETFD/F_GETFL and can be flipped with fcntl */
TEST(fd_flags, T_NO_DEFER, 30)
{
	static const int combos[] = { 0, TFD_CLOEXEC, TFD_NONBLOCK,
				      TFD_CLOEXEC | TFD_NONBLOCK };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(combos); i++) {
		int fl = combos[i];
		int fd = ops->create(CLOCK_MONOTONIC, fl);

		ASSERT_OK(fd);
		REC(cloexec_bit(fd), "flags %#x: FD_CLOEXEC", fl);
		REC(nonblock_bit(fd), "flags %#x: O_NONBLOCK", fl);
		REC(fcntl(fd, F_GETFL) & O_ACCMODE, "flags %#x: access mode",
		    fl);
		EXPECT(cloexec_bit(fd) == !!(fl & TFD_CLOEXEC));
		EXPECT(nonblock_bit(fd) == !!(fl & TFD_NONBLOCK));

		EXPECT_OK(fcntl(fd, F_SETFD, cloexec_bit(fd) ? 0 :
				FD_CLOEXEC));
		h_set_nonblock(fd, !nonblock_bit(fd));
		REC(cloexec_bit(fd), "flags %#x flipped: FD_CLOEXEC", fl);
		REC(nonblock_bit(fd), "flags %#x flipped: O_NONBLOCK", fl);
		EXPECT(cloexec_bit(fd) == !(fl & TFD_CLOEXEC));
		EXPECT(nonblock_bit(fd) == !(fl & TFD_NONBLOCK));
		close(fd);
	}
}

/*
 * 48: F_GETFL of a new timer, all bits.  Native shows O_RDWR plus what was
 * asked; a file opened with open(2) would also carry O_LARGEFILE, which
 * breaks "F_GETFL minus access mode == O_NONBLOCK" (dtimerfd's timers,
 * like timerfd's, are made by anon_inode_getfile(), not opened).
 */
TEST(getfl_exact, T_NO_DEFER, 30)
{
	static const int combos[] = { 0, TFD_NONBLOCK };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(combos); i++) {
		int fd = ops->create(CLOCK_MONOTONIC, combos[i]);
		int fl;

		ASSERT_OK(fd);
		fl = fcntl(fd, F_GETFL);
		REC(fl, "flags %#x: F_GETFL", combos[i]);
		if (fl & 0100000)
			h_diag("F_GETFL has O_LARGEFILE (%#o)", fl);
		EXPECTF((fl & ~O_ACCMODE) == (combos[i] & O_NONBLOCK),
			"F_GETFL %#o", fl);
		close(fd);
	}
}

/* 4: O_NONBLOCK is looked at on every read */
TEST(nonblock_per_read, 0, 30)
{
	struct itimerspec its = h_its(MS(100), 0);
	long long t0, dt;
	uint64_t ticks;
	int fd = ops->create(CLOCK_MONOTONIC, 0);

	ASSERT_OK(fd);
	h_set_nonblock(fd, 1);
	EXPECT_ERR(REC(h_read(fd, &ticks), "nonblocking read, disarmed"),
		   EAGAIN);
	ASSERT_OK(REC(ops->settime(fd, 0, &its, NULL), "arm 100 ms"));
	EXPECT_ERR(REC(h_read(fd, &ticks), "nonblocking read, armed"),
		   EAGAIN);
	h_set_nonblock(fd, 0);
	t0 = h_now(CLOCK_MONOTONIC);
	EXPECT(REC(h_read(fd, &ticks), "blocking read") == 8);
	dt = h_now(CLOCK_MONOTONIC) - t0;
	REC(ticks, "ticks");
	EXPECTF(dt >= MS(60), "blocking read returned after %lld ns", dt);
	h_set_nonblock(fd, 1);
	EXPECT_ERR(REC(h_read(fd, &ticks), "nonblocking read, drained"),
		   EAGAIN);
	close(fd);
}

/* descriptors open among 0..@max-1 */
static int open_fds(int max)
{
	int fd, n = 0;

	for (fd = 0; fd < max; fd++)
		n += fcntl(fd, F_GETFD) >= 0;
	return n;
}

/*
 * 6: EMFILE at the per-process descriptor limit.  The library holds one
 * descriptor more than timerfd, its control descriptor (documented in
 * dtimerfd(7)): closed here with everything else, the first create
 * opens it again, so dtimerfd makes one timer less before EMFILE; what
 * is compared is the table, full in both.
 */
TEST(emfile, T_NO_DEFER, 30)
{
	struct rlimit rl;
	int i, fd, made = 0, first = -1;
	int ctl = ops->kind != BK_NATIVE;	/* the control descriptor */

	for (fd = 3; fd < 1024; fd++)
		close(fd);
	getrlimit(RLIMIT_NOFILE, &rl);
	rl.rlim_cur = 16;
	ASSERT_OK(setrlimit(RLIMIT_NOFILE, &rl));
	for (i = 0; i < 20; i++) {
		fd = ops->create(CLOCK_MONOTONIC, 0);
		if (fd < 0) {
			REC(fd, "create #%d", i + ctl);
			EXPECT_ERR(fd, EMFILE);
			first = i;
			break;
		}
		made++;
	}
	REC(made + ctl, "timers (and the control descriptor) made under RLIMIT_NOFILE 16");
	REC(open_fds(16), "descriptors open at EMFILE");
	EXPECT(first == 13 - ctl);
	EXPECT(open_fds(16) == 16);
	/* after freeing one, creation works again */
	close(5);
	fd = REC(ops->create(CLOCK_MONOTONIC, 0), "create after close");
	EXPECT(fd == 5);
}

static void drop_cap(int cap)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	ASSERT_OK(syscall(SYS_capget, &hdr, data));
	data[cap / 32].effective &= ~(1U << (cap % 32));
	ASSERT_OK(syscall(SYS_capset, &hdr, data));
}

/*
 * 6: ENFILE at the system-wide file limit.  fs.file-max is lowered for a
 * moment, so this only runs where /dev/dtimerfd exists (the guest: the
 * module is never loaded on a development host) and only as root; a
 * child without CAP_SYS_ADMIN (which is exempt from the limit) creates
 * timers until the limit bites.
 */
TEST(enfile, T_NO_DEFER, 60)
{
	char buf[64];
	long long nr, max;
	int status, fd, n;
	pid_t pid;
	FILE *f;

	h_require_root();
	if (access(DTIMERFD_DEVICE, F_OK))
		h_skip("changes fs.file-max: only where %s exists (the guest)",
		       DTIMERFD_DEVICE);
	f = fopen("/proc/sys/fs/file-nr", "re");
	ASSERT(f && fscanf(f, "%lld %*d %lld", &nr, &max) == 2);
	fclose(f);
	fd = open("/proc/sys/fs/file-max", O_WRONLY | O_CLOEXEC);
	ASSERT_OK(fd);
	n = snprintf(buf, sizeof(buf), "%lld\n", nr + 40);
	ASSERT(write(fd, buf, n) == n);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int i, last = 0;

		drop_cap(CAP_SYS_ADMIN);
		for (i = 0; i < 1000; i++) {
			int t = ops->create(CLOCK_MONOTONIC, 0);

			if (t < 0) {
				last = errno;
				break;
			}
		}
		_exit(last == ENFILE ? 0 : last ? last : 255);
	}
	waitpid(pid, &status, 0);
	n = snprintf(buf, sizeof(buf), "%lld\n", max);
	EXPECT(write(fd, buf, n) == n);
	close(fd);
	EXPECTF(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		"child ended with %#x (errno %d)", status,
		WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	REC(status, "child status");
}

/*
 * 6: the library's answer when the driver is absent is ENODEV (documented
 * in dtimerfd_create(3)); the device path is overridden to a missing node.
 * The library reads it when it opens its control descriptor, which this
 * process inherited already open (the harness's probe): every descriptor
 * is closed first, as a daemon does, so that the next create opens again.
 */
TEST(no_device, T_DTFD_ONLY | T_NO_DEFER, 30)
{
	int fd;

	for (fd = 3; fd < 1024; fd++)
		close(fd);
	setenv("DTIMERFD_DEVICE", "/nonexistent/dtimerfd", 1);
	fd = ops->create(CLOCK_MONOTONIC, 0);
	EXPECT_ERR(fd, ENODEV);
	/* bad arguments still win over the missing driver */
	fd = ops->create(-1, 0);
	EXPECT_ERR(fd, EINVAL);
	fd = ops->create(CLOCK_MONOTONIC, 0x40);
	EXPECT_ERR(fd, EINVAL);
	unsetenv("DTIMERFD_DEVICE");
}

/* 7: a new timer is disarmed */
TEST(new_is_disarmed, 0, 30)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(h_clocks); i++) {
		clockid_t c = h_clocks[i];
		struct itimerspec cur;
		struct h_fdinfo fi;
		uint64_t ticks;
		short rev = 0;
		int fd;

		if (!h_clock_usable(c))
			continue;
		fd = ops->create(c, TFD_NONBLOCK);
		ASSERT_OK(fd);
		memset(&cur, 0x55, sizeof(cur));
		EXPECT_OK(REC(ops->gettime(fd, &cur), "%s gettime",
			      h_clock_name(c)));
		h_rec_its(&cur, 0, "%s", h_clock_name(c));
		EXPECT(h_its_value(&cur) == 0 && h_its_interval(&cur) == 0);
		ASSERT_OK(h_fdinfo(fd, &fi));
		EXPECT(fi.nlines == 5);
		EXPECT(fi.clockid == (int)c);
		EXPECT(fi.ticks == 0);
		EXPECT(fi.settime_flags == 0);
		EXPECT(!fi.value_sec && !fi.value_nsec && !fi.interval_sec &&
		       !fi.interval_nsec);
		EXPECT(REC(h_poll(fd, 0, &rev), "%s poll(0)",
			   h_clock_name(c)) == 0);
		EXPECT_ERR(REC(h_read(fd, &ticks), "%s read",
			       h_clock_name(c)), EAGAIN);
		close(fd);
	}
}

/* 8: opened read-write; write() is EINVAL whatever the state */
TEST(write_einval, 0, 30)
{
	struct itimerspec its = h_its(1, 0);
	uint64_t v = 1;
	int fd = ops->create(CLOCK_MONOTONIC, TFD_NONBLOCK);

	ASSERT_OK(fd);
	EXPECT(REC(fcntl(fd, F_GETFL) & O_ACCMODE, "access mode") == O_RDWR);
	EXPECT_ERR(REC(write(fd, &v, 1), "write 1 disarmed"), EINVAL);
	EXPECT_ERR(REC(write(fd, &v, 8), "write 8 disarmed"), EINVAL);
	EXPECT_ERR(REC(write(fd, &v, 0), "write 0 disarmed"), EINVAL);
	ASSERT_OK(ops->settime(fd, 0, &its, NULL));
	h_poll(fd, 1000, NULL);
	EXPECT_ERR(REC(write(fd, &v, 8), "write 8 expired"), EINVAL);
	EXPECT(REC(h_read(fd, &v), "read after writes") == 8);
	REC(v, "ticks");
	close(fd);
}

/*
 * 50: reopening through /proc/self/fd.  A timerfd is an anonymous inode
 * and the open fails with ENXIO; so is a dtimerfd timer (the device's
 * control descriptor is not the timer).  readlink names the inode's
 * class, [timerfd] or [dtimerfd]: what is compared is that each names its
 * own.  The original is unaffected.  (anon.c has the other open modes.)
 */
TEST(proc_reopen, T_NO_DEFER, 30)
{
	const char *want = ops->kind == BK_NATIVE ? "anon_inode:[timerfd]" :
						    "anon_inode:[dtimerfd]";
	struct itimerspec its = h_its(SEC(100), 0), cur;
	char path[64], link[128];
	int fd, fd2;
	ssize_t n;

	fd = ops->create(CLOCK_MONOTONIC, 0);
	ASSERT_OK(fd);
	ASSERT_OK(ops->settime(fd, 0, &its, NULL));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	ASSERT(n > 0);
	link[n] = 0;
	h_diag("readlink: %s", link);
	EXPECTF(REC(!strcmp(link, want), "readlink names the timer's class"),
		"readlink %s, want %s", link, want);
	fd2 = REC_FD(open(path, O_RDWR), "reopen O_RDWR");
	EXPECTF(fd2 < 0, "reopened a timer");
	EXPECT_ERR(fd2, ENXIO);
	if (fd2 >= 0)
		close(fd2);
	/* the original: still armed */
	EXPECT_OK(REC(ops->gettime(fd, &cur), "gettime of the original"));
	EXPECT(REC(h_its_value(&cur) > SEC(90), "original still armed"));
	close(fd);
}

/* 54: what generic fd operations do with a timer fd */
TEST(generic_ops, T_NO_DEFER, 30)
{
	uint64_t v;
	int p[2];
	int fd = ops->create(CLOCK_MONOTONIC, TFD_NONBLOCK);
	void *m;

	ASSERT_OK(fd);
	EXPECT_ERR(REC(accept(fd, NULL, NULL), "accept"), ENOTSOCK);
	EXPECT(REC(lseek(fd, 0, SEEK_SET), "lseek SEEK_SET 0") == 0);
	REC(lseek(fd, 100, SEEK_CUR), "lseek SEEK_CUR 100");
	m = mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0);
	REC(m == MAP_FAILED ? -1 : 0, "mmap");
	EXPECT_ERR(m == MAP_FAILED ? -1 : 0, ENODEV);
	REC(ftruncate(fd, 0), "ftruncate");
	REC(fsync(fd), "fsync");
	/* anon-inode files have no FMODE_PREAD/PWRITE: ESPIPE */
	REC(pread(fd, &v, 8, 0), "pread");
	REC(pwrite(fd, &v, 8, 0), "pwrite");
	REC(readahead(fd, 0, 4096), "readahead");
	ASSERT_OK(pipe(p));
	REC(splice(fd, NULL, p[1], NULL, 8, SPLICE_F_NONBLOCK), "splice from");
	REC(splice(p[0], NULL, fd, NULL, 8, SPLICE_F_NONBLOCK), "splice to");
	close(p[0]);
	close(p[1]);
	EXPECT_ERR(REC(ioctl(fd, FIONREAD, &p[0]), "ioctl FIONREAD"), ENOTTY);
	p[0] = 1;
	REC(ioctl(fd, FIOASYNC, &p[0]), "ioctl FIOASYNC on");
	p[0] = 0;
	REC(ioctl(fd, FIOASYNC, &p[0]), "ioctl FIOASYNC off");
	/* a pipe as the clone source: another filesystem for both */
	ASSERT_OK(pipe(p));
	REC(ioctl(fd, FICLONE, p[0]), "ioctl FICLONE");
	close(p[0]);
	close(p[1]);
	EXPECT_ERR(REC(ioctl(fd, _IO('T', 0x7f), 0), "ioctl unknown"),
		   ENOTTY);
	p[0] = 0;
	EXPECT_OK(REC(ioctl(fd, FIONBIO, &p[0]), "ioctl FIONBIO 0"));
	REC(!!(fcntl(fd, F_GETFL) & O_NONBLOCK), "O_NONBLOCK after FIONBIO");
	EXPECT_OK(REC(ioctl(fd, FIOCLEX), "ioctl FIOCLEX"));
	REC(fcntl(fd, F_GETFD), "F_GETFD after FIOCLEX");
	close(fd);
}

TEST_MAIN()
