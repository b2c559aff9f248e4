// SPDX-License-Identifier: GPL-2.0
/*
 * The timer descriptor as the VFS sees it.  A timerfd is a file on the
 * anonymous inode (anon_inode_getfile()), and so is a dtimerfd timer since
 * ABI v2: every case here does the same calls on timers of each backend
 * and the results must be identical, where v1's device-node descriptors
 * differed (issue 14): the /proc/self/fd link, reopening it, fchmod and
 * fchown, FICLONE between two timers, fstat and fstatfs, F_GETFL and
 * F_SETFL, file locks, SCM_RIGHTS.  Item 50 and the generic half of 54.
 *
 * The anonymous inode is one inode shared by every such file of the
 * system: the chmod and chown here set what is already there, so that no
 * other program (on a development host, where the native half runs)
 * sees a change.
 */
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <linux/fs.h>

#include "harness.h"

#ifndef ANON_INODE_FS_MAGIC
#define ANON_INODE_FS_MAGIC	0x09041934
#endif

/* what readlink(/proc/self/fd/N) shows for a timer of this backend */
static const char *own_link(const struct tfd_ops *ops)
{
	return ops->kind == BK_NATIVE ? "anon_inode:[timerfd]" :
					"anon_inode:[dtimerfd]";
}

static int fd_link(int fd, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, buf, len - 1);
	buf[n > 0 ? n : 0] = 0;
	return n > 0 ? 0 : -1;
}

static int new_timer(const struct tfd_ops *ops, int flags)
{
	int fd = ops->create(CLOCK_MONOTONIC, flags);

	ASSERT_OK(fd);
	return fd;
}

/* the "mnt_id:" and "ino:" lines of /proc/self/fdinfo/FD */
static void fdinfo_ids(int fd, long long *mnt_id, long long *ino)
{
	static const char *const keys[] = { "mnt_id", "ino" };
	unsigned long long v[2];

	ASSERT(!h_fdinfo_vals(fd, 0, 2, keys, v, -1ULL));
	*mnt_id = (long long)v[0];
	*ino = (long long)v[1];
}

/* readlink: anon_inode:[timerfd] and anon_inode:[dtimerfd], each its own */
TEST(link_name, T_NO_DEFER, 30)
{
	char link[128], dlink[128];
	int fd = new_timer(ops, TFD_CLOEXEC), fd2;

	ASSERT_OK(fd_link(fd, link, sizeof(link)));
	h_diag("readlink: %s", link);
	EXPECTF(REC(!strcmp(link, own_link(ops)), "link is the timer's class"),
		"link %s, want %s", link, own_link(ops));
	REC(!strncmp(link, "anon_inode:", 11), "link on the anonymous inode");
	/* a dup and a second timer: the same name */
	fd2 = dup(fd);
	ASSERT_OK(fd2);
	ASSERT_OK(fd_link(fd2, dlink, sizeof(dlink)));
	REC(!strcmp(link, dlink), "a dup's link");
	close(fd2);
	fd2 = new_timer(ops, TFD_NONBLOCK);
	ASSERT_OK(fd_link(fd2, dlink, sizeof(dlink)));
	REC(!strcmp(link, dlink), "another timer's link");
	close(fd2);
	/* /proc/self/fdinfo/N is there, /proc/self/fd/N is a link */
	{
		struct stat st;
		char path[64];

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		EXPECT_OK(REC(lstat(path, &st), "lstat of the link"));
		REC(S_ISLNK(st.st_mode), "the fd entry is a symlink");
	}
	close(fd);
}

/*
 * Reopening /proc/self/fd/N: ENXIO for every access mode (the anonymous
 * inode has no open); O_PATH works and is no timer either.
 */
TEST(proc_reopen_modes, T_NO_DEFER, 30)
{
	static const struct { int flags; const char *name; } modes[] = {
		{ O_RDONLY, "O_RDONLY" }, { O_WRONLY, "O_WRONLY" },
		{ O_RDWR, "O_RDWR" }, { O_RDWR | O_NONBLOCK, "O_RDWR|O_NONBLOCK" },
		{ O_RDWR | O_CLOEXEC, "O_RDWR|O_CLOEXEC" },
		{ O_RDONLY | O_NOCTTY, "O_RDONLY|O_NOCTTY" },
	};
	struct itimerspec cur;
	char path[64], p2[64], link[128];
	int fd = new_timer(ops, 0), fd2, pfd;
	struct stat st;
	size_t i;
	uint64_t v;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		fd2 = REC_FD(open(path, modes[i].flags), "open %s", modes[i].name);
		EXPECT_ERR(fd2, ENXIO);
		if (fd2 >= 0)
			close(fd2);
	}
	/* O_PATH: a descriptor of the inode, not a timer */
	pfd = REC_FD(open(path, O_PATH | O_CLOEXEC), "open O_PATH");
	ASSERT_OK(pfd);
	ASSERT_OK(fd_link(pfd, link, sizeof(link)));
	REC(!strcmp(link, own_link(ops)), "O_PATH fd's link");
	EXPECT_OK(REC(fstat(pfd, &st), "fstat O_PATH"));
	REC(st.st_mode & S_IFMT, "O_PATH fd's file type");
	REC(ops->gettime(pfd, &cur), "gettime on the O_PATH fd");
	REC(read(pfd, &v, sizeof(v)), "read on the O_PATH fd");
	snprintf(p2, sizeof(p2), "/proc/self/fd/%d", pfd);
	fd2 = REC_FD(open(p2, O_RDWR), "reopen through the O_PATH fd");
	EXPECT_ERR(fd2, ENXIO);
	if (fd2 >= 0)
		close(fd2);
	close(pfd);
	/* openat with an empty path: O_PATH only */
	fd2 = REC_FD(openat(fd, "", O_RDONLY), "openat(fd, \"\")");
	if (fd2 >= 0)
		close(fd2);
	close(fd);
}

/*
 * fchmod and fchown act on the shared anonymous inode, whatever the file
 * on it: the same answer for both kinds of timer (set to what is there,
 * so nothing changes), and the mode is the same after.
 */
TEST(chmod_chown, T_NO_DEFER, 30)
{
	char path[64];
	struct stat st, st2;
	int fd = new_timer(ops, TFD_CLOEXEC);

	ASSERT_OK(fstat(fd, &st));
	REC(st.st_mode, "st_mode before");
	REC(fchmod(fd, st.st_mode & 07777), "fchmod to its own mode");
	REC(fchown(fd, (uid_t)-1, (gid_t)-1), "fchown -1 -1");
	REC(fchown(fd, st.st_uid, st.st_gid), "fchown to its own owner");
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	REC(chmod(path, st.st_mode & 07777), "chmod through /proc/self/fd");
	REC(fchmodat(AT_FDCWD, path, st.st_mode & 07777, 0),
	    "fchmodat through /proc/self/fd");
	REC(fchownat(fd, "", st.st_uid, st.st_gid, AT_EMPTY_PATH),
	    "fchownat AT_EMPTY_PATH");
	ASSERT_OK(fstat(fd, &st2));
	REC(st2.st_mode, "st_mode after");
	EXPECT(st2.st_mode == st.st_mode);
	EXPECT(st2.st_uid == st.st_uid && st2.st_gid == st.st_gid);
	close(fd);
}

/*
 * FICLONE, FICLONERANGE and FIDEDUPERANGE between two timers, a timer and
 * itself, a timer and a timerfd, a timer and a regular file: the VFS
 * answers, and must answer the same for both kinds of timer.
 */
TEST(ficlone, T_NO_DEFER, 30)
{
	char tmp[] = "/tmp/dtfd-anon-XXXXXX";
	int a = new_timer(ops, 0), b = new_timer(ops, TFD_NONBLOCK);
	int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC), reg;
	struct file_clone_range fcr = { .src_fd = b };
	struct file_dedupe_range *fdr;
	char buf[sizeof(*fdr) + sizeof(struct file_dedupe_range_info)];

	ASSERT_OK(tfd);
	reg = mkstemp(tmp);
	ASSERT_OK(reg);
	unlink(tmp);
	ASSERT(write(reg, "dtimerfd", 8) == 8);
	REC(ioctl(a, FICLONE, b), "FICLONE timer <- timer");
	REC(ioctl(b, FICLONE, a), "FICLONE timer -> timer");
	REC(ioctl(a, FICLONE, a), "FICLONE timer <- itself");
	REC(ioctl(a, FICLONE, tfd), "FICLONE timer <- timerfd");
	REC(ioctl(tfd, FICLONE, a), "FICLONE timerfd <- timer");
	REC(ioctl(a, FICLONE, reg), "FICLONE timer <- file");
	REC(ioctl(reg, FICLONE, a), "FICLONE file <- timer");
	fcr.src_length = 8;
	REC(ioctl(a, FICLONERANGE, &fcr), "FICLONERANGE timer <- timer");
	fcr.src_fd = reg;
	REC(ioctl(a, FICLONERANGE, &fcr), "FICLONERANGE timer <- file");
	memset(buf, 0, sizeof(buf));
	fdr = (struct file_dedupe_range *)buf;
	fdr->src_length = 8;
	fdr->dest_count = 1;
	fdr->info[0].dest_fd = b;
	REC(ioctl(a, FIDEDUPERANGE, fdr), "FIDEDUPERANGE timer -> timer");
	REC(fdr->info[0].status, "FIDEDUPERANGE status");
	REC(copy_file_range(a, NULL, b, NULL, 8, 0), "copy_file_range timers");
	REC(copy_file_range(reg, NULL, a, NULL, 8, 0),
	    "copy_file_range file -> timer");
	close(reg);
	close(tfd);
	close(b);
	close(a);
}

/*
 * fstat: the same inode as a timerfd's (type, mode, owner, links, size,
 * device and inode number), shared by every timer; fstatfs: the
 * anonymous-inode file system; fdinfo's mnt_id and ino: the same.
 */
TEST(fstat_inode, T_NO_DEFER, 30)
{
	struct stat st, st2, ref;
	struct statfs sf;
	long long mnt, ino, rmnt, rino;
	int fd = new_timer(ops, TFD_CLOEXEC), fd2 = new_timer(ops, 0);
	int tfd = timerfd_create(CLOCK_REALTIME, TFD_CLOEXEC);

	ASSERT_OK(tfd);
	ASSERT_OK(fstat(tfd, &ref));
	EXPECT_OK(REC(fstat(fd, &st), "fstat"));
	h_diag("st_mode %#o st_dev %#llx st_ino %llu st_nlink %lu st_uid %u",
	       st.st_mode, (unsigned long long)st.st_dev,
	       (unsigned long long)st.st_ino, (unsigned long)st.st_nlink,
	       st.st_uid);
	REC(st.st_mode & S_IFMT, "file type");
	REC(st.st_mode & 07777, "permissions");
	REC(st.st_nlink, "st_nlink");
	REC(st.st_size, "st_size");
	REC(st.st_blksize, "st_blksize");
	REC(st.st_blocks, "st_blocks");
	REC(st.st_rdev, "st_rdev");
	REC(st.st_uid == ref.st_uid && st.st_gid == ref.st_gid,
	    "owner is the timerfd inode's");
	EXPECT(REC(st.st_dev == ref.st_dev, "st_dev is timerfd's"));
	EXPECT(REC(st.st_ino == ref.st_ino, "st_ino is timerfd's"));
	REC((st.st_mode & S_IFMT) == (ref.st_mode & S_IFMT), "type is timerfd's");
	EXPECT_OK(fstat(fd2, &st2));
	REC(st2.st_ino == st.st_ino && st2.st_dev == st.st_dev,
	    "two timers share the inode");
	EXPECT_OK(REC(fstatfs(fd, &sf), "fstatfs"));
	EXPECT(REC(sf.f_type == ANON_INODE_FS_MAGIC, "anon_inodefs"));
	fdinfo_ids(fd, &mnt, &ino);
	fdinfo_ids(tfd, &rmnt, &rino);
	REC(mnt == rmnt, "fdinfo mnt_id is timerfd's");
	REC(ino == rino, "fdinfo ino is timerfd's");
	REC(ino == (long long)st.st_ino, "fdinfo ino is st_ino");
	close(tfd);
	close(fd2);
	close(fd);
}

/*
 * F_GETFL after each creation flag, and F_SETFL with the flags the VFS
 * decides on (O_APPEND, O_NOATIME, O_DIRECT, O_ASYNC): the same answers
 * and the same flags after.
 */
TEST(getfl_setfl, T_NO_DEFER, 30)
{
	static const int combos[] = { 0, TFD_CLOEXEC, TFD_NONBLOCK,
				      TFD_CLOEXEC | TFD_NONBLOCK };
	static const struct { int fl; const char *name; } sets[] = {
		{ O_NONBLOCK, "O_NONBLOCK" }, { O_APPEND, "O_APPEND" },
		{ O_NOATIME, "O_NOATIME" }, { O_DIRECT, "O_DIRECT" },
		{ O_ASYNC, "O_ASYNC" }, { O_RDONLY, "O_RDONLY" },
		{ 0, "0" },
	};
	size_t i;
	int fd;

	for (i = 0; i < ARRAY_SIZE(combos); i++) {
		fd = new_timer(ops, combos[i]);
		REC(fcntl(fd, F_GETFL), "create flags %#x: F_GETFL", combos[i]);
		REC(fcntl(fd, F_GETFD), "create flags %#x: F_GETFD", combos[i]);
		close(fd);
	}
	fd = new_timer(ops, 0);
	for (i = 0; i < ARRAY_SIZE(sets); i++) {
		REC(fcntl(fd, F_SETFL, sets[i].fl), "F_SETFL %s", sets[i].name);
		REC(fcntl(fd, F_GETFL), "F_GETFL after %s", sets[i].name);
	}
	close(fd);
}

/* file locks, fsync, fallocate, fchdir, xattrs: the VFS's answers */
TEST(other_vfs_calls, T_NO_DEFER, 30)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_len = 1 };
	char list[64];
	int fd = new_timer(ops, TFD_CLOEXEC);

	REC(flock(fd, LOCK_EX | LOCK_NB), "flock LOCK_EX");
	REC(flock(fd, LOCK_UN), "flock LOCK_UN");
	REC(fcntl(fd, F_SETLK, &fl), "F_SETLK write lock");
	fl.l_type = F_UNLCK;
	REC(fcntl(fd, F_SETLK, &fl), "F_SETLK unlock");
	REC(fcntl(fd, F_GETLEASE), "F_GETLEASE");
	REC(fcntl(fd, F_SETLEASE, F_RDLCK), "F_SETLEASE F_RDLCK");
	REC(fcntl(fd, F_SETLEASE, F_UNLCK), "F_SETLEASE F_UNLCK");
	REC(fcntl(fd, F_GETPIPE_SZ), "F_GETPIPE_SZ");
	REC(fcntl(fd, F_GET_SEALS), "F_GET_SEALS");
	REC(fdatasync(fd), "fdatasync");
	REC(syncfs(fd), "syncfs");
	REC(fallocate(fd, 0, 0, 8), "fallocate");
	REC(posix_fadvise(fd, 0, 8, POSIX_FADV_DONTNEED), "posix_fadvise");
	REC(fchdir(fd), "fchdir");
	REC(fgetxattr(fd, "user.dtimerfd", list, sizeof(list)), "fgetxattr");
	REC(flistxattr(fd, list, sizeof(list)), "flistxattr");
	close(fd);
}

/*
 * SCM_RIGHTS carries a timer as any descriptor: the received one is the
 * same open file (its setting, its flags, its link).
 */
TEST(scm_rights, T_NO_DEFER, 30)
{
	struct itimerspec its = h_its(SEC(100), SEC(3)), cur;
	char cbuf[CMSG_SPACE(sizeof(int))], c = 'x', link[128];
	struct iovec iov = { &c, 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
			      .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	int sv[2], fd = new_timer(ops, TFD_NONBLOCK), got = -1;

	ASSERT_OK(ops->settime(fd, 0, &its, NULL));
	ASSERT_OK(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	EXPECT(REC(sendmsg(sv[0], &msg, 0), "sendmsg") == 1);
	close(fd);
	memset(cbuf, 0, sizeof(cbuf));
	msg.msg_controllen = sizeof(cbuf);
	EXPECT(REC(recvmsg(sv[1], &msg, MSG_CMSG_CLOEXEC), "recvmsg") == 1);
	cm = CMSG_FIRSTHDR(&msg);
	ASSERT(cm && cm->cmsg_type == SCM_RIGHTS);
	memcpy(&got, CMSG_DATA(cm), sizeof(int));
	ASSERT(got >= 0);
	EXPECT_OK(REC(ops->gettime(got, &cur), "gettime of the received fd"));
	h_rec_its(&cur, SEC(2), "received timer's setting");
	REC(fcntl(got, F_GETFL), "received F_GETFL");
	ASSERT_OK(fd_link(got, link, sizeof(link)));
	REC(!strcmp(link, own_link(ops)), "received link");
	close(got);
	close(sv[0]);
	close(sv[1]);
}

TEST_MAIN()
