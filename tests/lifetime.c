// SPDX-License-Identifier: GPL-2.0
/*
 * Lifetime: one timer per open file description, shared by dup() and
 * fork(), inherited across execve() unless close-on-exec, and closed
 * safely while other threads block on it or while it fires.  Item 49.
 *
 * The exec'd helper is this program itself: lifetime.t --exec-helper FD
 * MODE (so the guest needs no extra file).
 */
#include <poll.h>
#include <pthread.h>
#include <sys/epoll.h>
#include <sys/wait.h>

#include "harness.h"

static int exec_helper(char **argv)
{
	int fd = atoi(argv[2]);
	uint64_t ticks = 0;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	if (!strcmp(argv[3], "closed")) {
		if (fcntl(fd, F_GETFD) == -1 && errno == EBADF)
			return 0;
		printf("# exec-helper: fd %d is still open\n", fd);
		return 1;
	}
	if (poll(&p, 1, 10000) != 1) {
		printf("# exec-helper: fd %d not readable\n", fd);
		return 1;
	}
	if (read(fd, &ticks, sizeof(ticks)) != sizeof(ticks)) {
		printf("# exec-helper: read: %s\n", strerror(errno));
		return 1;
	}
	return ticks == 1 ? 0 : 10 + (int)(ticks & 0x3f);
}

static int run_helper(int fd, const char *mode)
{
	char fds[16];
	int status;
	pid_t pid;

	snprintf(fds, sizeof(fds), "%d", fd);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		execl("/proc/self/exe", "lifetime.t", "--exec-helper", fds, mode,
		      (char *)NULL);
		printf("# exec: %s\n", strerror(errno));
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* fork: the child's fd is the same timer; its read consumes the count */
TEST(fork_shares, 0, 30)
{
	struct itimerspec its = h_its(MS(100), 0), cur;
	uint64_t ticks;
	int status;
	pid_t pid;
	int fd = ops->create(CLOCK_MONOTONIC, 0);

	ASSERT_OK(fd);
	ASSERT_OK(ops->settime(fd, 0, &its, NULL));
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct itimerspec later = h_its(SEC(3600), SEC(5));

		EXPECT(h_read(fd, &ticks) == 8 && ticks == 1);
		/* re-arm in the child: the parent sees it */
		EXPECT(ops->settime(fd, 0, &later, NULL) == 0);
		_exit(0);
	}
	ASSERT(pid > 0);
	ASSERT(waitpid(pid, &status, 0) == pid);
	EXPECT(REC(WIFEXITED(status) ? WEXITSTATUS(status) : -1,
		   "child status") == 0);
	h_set_nonblock(fd, 1);
	EXPECT_ERR(REC(h_read(fd, &ticks), "parent read"), EAGAIN);
	EXPECT_OK(ops->gettime(fd, &cur));
	h_rec_its(&cur, SEC(5), "parent gettime");
	EXPECT(h_its_value(&cur) > SEC(3500) && h_its_interval(&cur) == SEC(5));
	close(fd);
}

/* dup: same timer, same file flags; survives closing the original */
TEST(dup_shares, 0, 30)
{
	struct itimerspec its = h_its(SEC(3600), 0), cur;
	uint64_t ticks;
	int fd = ops->create(CLOCK_MONOTONIC, 0);
	int fd2;

	ASSERT_OK(fd);
	fd2 = dup(fd);
	ASSERT_OK(fd2);
	ASSERT_OK(ops->settime(fd2, 0, &its, NULL));
	EXPECT_OK(ops->gettime(fd, &cur));
	h_rec_its(&cur, SEC(5), "gettime through the original");
	EXPECT(h_its_value(&cur) > SEC(3500));
	h_set_nonblock(fd, 1);
	EXPECT(REC(!!(fcntl(fd2, F_GETFL) & O_NONBLOCK), "dup O_NONBLOCK") ==
	       1);
	/* FD_CLOEXEC is per descriptor */
	EXPECT(REC(fcntl(fd2, F_GETFD), "dup FD_CLOEXEC") == 0);
	close(fd);
	its = h_its(MS(50), 0);
	ASSERT_OK(REC(ops->settime(fd2, 0, &its, NULL), "settime on dup"));
	EXPECT(h_poll(fd2, 5000, NULL) == 1);
	EXPECT(REC(h_read(fd2, &ticks), "read on dup") == 8);
	EXPECT(ticks == 1);
	EXPECT_ERR(REC(ops->gettime(fd, &cur), "gettime on closed"), EBADF);
	close(fd2);
}

/* execve: the timer keeps counting in the new program; CLOEXEC closes */
TEST(exec_inherits, 0, 30)
{
	struct itimerspec its = h_its(MS(200), 0);
	uint64_t ticks;
	int fd = ops->create(CLOCK_MONOTONIC, 0);
	int cfd = ops->create(CLOCK_MONOTONIC, TFD_CLOEXEC);

	ASSERT_OK(fd);
	ASSERT_OK(cfd);
	ASSERT_OK(ops->settime(fd, 0, &its, NULL));
	EXPECT(REC(run_helper(fd, "read"), "helper read") == 0);
	h_set_nonblock(fd, 1);
	EXPECT_ERR(REC(h_read(fd, &ticks), "parent read after helper"),
		   EAGAIN);
	EXPECT(REC(run_helper(cfd, "closed"), "helper with CLOEXEC fd") == 0);
	close(cfd);
	close(fd);
}

struct blocker {
	int fd;
	long ret;
	int err;
};

static void *epoll_blocker(void *arg)
{
	struct blocker *b = arg;
	struct epoll_event ev = { .events = EPOLLIN }, out;
	int ep = epoll_create1(EPOLL_CLOEXEC);

	epoll_ctl(ep, EPOLL_CTL_ADD, b->fd, &ev);
	b->ret = epoll_wait(ep, &out, 1, 1500);
	b->err = errno;
	close(ep);
	return NULL;
}

static void *read_blocker(void *arg)
{
	struct blocker *b = arg;
	uint64_t ticks;

	b->ret = h_read(b->fd, &ticks);
	b->err = errno;
	return NULL;
}

/*
 * close() while another thread blocks: a blocked read keeps the file and
 * returns the expiry; an epoll_wait loses the (now released) file and
 * times out.
 */
TEST(close_while_blocked, 0, 30)
{
	struct itimerspec its = h_its(MS(500), 0);
	struct blocker b = { -1, 0, 0 };
	pthread_t th;

	b.fd = ops->create(CLOCK_MONOTONIC, 0);
	ASSERT_OK(b.fd);
	ASSERT_OK(ops->settime(b.fd, 0, &its, NULL));
	pthread_create(&th, NULL, read_blocker, &b);
	h_sleep_ns(MS(100));
	close(b.fd);
	pthread_join(th, NULL);
	EXPECT(REC(b.ret, "blocked read") == 8);

	b.fd = ops->create(CLOCK_MONOTONIC, 0);
	ASSERT_OK(b.fd);
	ASSERT_OK(ops->settime(b.fd, 0, &its, NULL));
	pthread_create(&th, NULL, epoll_blocker, &b);
	h_sleep_ns(MS(100));
	close(b.fd);
	pthread_join(th, NULL);
	EXPECT(REC(b.ret, "blocked epoll_wait") == 0);
}

/* closing timers that are firing, about to fire, or firing every ns */
TEST(close_while_firing, 0, 60)
{
	long long end = h_now(CLOCK_MONOTONIC) + SEC(2);
	long n = 0;

	while (h_now(CLOCK_MONOTONIC) < end) {
		int fd = ops->create(n % 3 == 0 ? CLOCK_REALTIME :
				     CLOCK_MONOTONIC, TFD_NONBLOCK);
		struct itimerspec its = h_its(1 + (n % 50) * 1000,
					      n % 2 ? 1 : 0);

		ASSERT_OK(fd);
		ASSERT_OK(ops->settime(fd, 0, &its, NULL));
		if (n % 4 == 0)
			h_sleep_ns((n % 7) * 1000);
		close(fd);
		n++;
	}
	h_diag("%ld timers closed while armed", n);
	EXPECT(n > 100);
}

struct hammer {
	const struct tfd_ops *ops;
	int fd;
	int id;
	volatile int *stop;
	long calls;
};

static void *hammer_thread(void *arg)
{
	struct hammer *h = arg;
	struct itimerspec its, cur;
	uint64_t ticks;

	while (!*h->stop) {
		switch ((h->calls + h->id) % 4) {
		case 0:
			its = h_its(1 + (h->calls % 1000) * 1000, 1000);
			h->ops->settime(h->fd, 0, &its, &cur);
			break;
		case 1:
			h->ops->gettime(h->fd, &cur);
			break;
		case 2:
			h_read(h->fd, &ticks);
			break;
		case 3:
			h_poll(h->fd, 0, NULL);
			break;
		}
		h->calls++;
	}
	return NULL;
}

/* four threads hammering one timer with every call */
TEST(threads_hammer, 0, 60)
{
	struct hammer h[4];
	volatile int stop = 0;
	pthread_t th[4];
	struct itimerspec cur;
	long total = 0;
	int i, fd = ops->create(CLOCK_MONOTONIC, TFD_NONBLOCK);

	ASSERT_OK(fd);
	for (i = 0; i < 4; i++) {
		h[i] = (struct hammer){ ops, fd, i, &stop, 0 };
		pthread_create(&th[i], NULL, hammer_thread, &h[i]);
	}
	h_sleep_ns(SEC(2));
	stop = 1;
	for (i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		total += h[i].calls;
	}
	h_diag("%ld calls", total);
	EXPECT_OK(REC(ops->gettime(fd, &cur), "gettime after"));
	close(fd);
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--exec-helper"))
		return exec_helper(argv);
	return h_main(argc, argv);
}
