// SPDX-License-Identifier: GPL-2.0
/*
 * The fuzzer's file calls: read, readv, poll, select, epoll, open and
 * CREATE, close, dup, fcntl, the calls a timer refuses, fdinfo, fork and
 * steps of CLOCK_REALTIME.
 */
#include "fuzz.h"

/*
 * 8 bytes, or fewer only where the buffer runs into an unmapped page:
 * copy_to_iter() stops there, as in timerfd's read.
 */
static void check_read(struct thr *t, long r, const void *buf, size_t n,
		       int good, int straddle)
{
	uint64_t v;

	if (r < 0)
		return;
	/*
	 * 0: the count came to 0, as timerfd's does: SET_TICKS near 2^64
	 * plus the periods missed, or 1 - 1 when CLOCK_REALTIME was stepped
	 * back below a periodic deadline that had fired.
	 */
	if (r == 0 && n >= 8)
		return;
	if (n < 8 || r > 8 || (r < 8 && !straddle)) {
		fz_fail(t, "read returned %ld for %zu bytes", r, n);
		return;
	}
	if (good) {
		memcpy(&v, buf, sizeof(v));
		if (!v)
			fz_fail(t, "read returned a zero count");
	}
}

static size_t rand_len(struct thr *t)
{
	static const size_t lens[] = { 0, 1, 4, 7, 8, 8, 8, 9, 12, 16, 4096,
				       65536 };

	return chance(t, 800) ? lens[below(t, ARRAY_SIZE(lens))] :
				(size_t)below(t, 70000);
}

void op_read(struct thr *t, int fd)
{
	size_t n = rand_len(t);
	enum ptr_kind pk = pick_kind(t, 750);
	int block = chance(t, 100);
	uint64_t p;
	void *w;
	long r;
	int err;

	if (pk == P_GOOD || pk == P_MISALIGNED) {
		/* the good area is 16 pages: keep the buffer inside it */
		if (n > 15 * FZ_PAGE)
			n = 15 * FZ_PAGE;
	}
	p = make_ptr(t, pk, 0x800, n, &w);
	describe(t, "read(%d, %s, %zu)%s", fd, ptr_name[pk], n,
		 block ? " guarded" : "");
	guard_arm(t, block ? MS(2) + (long long)below(t, MS(10)) : MS(5));
	r = read(fd, (void *)(uintptr_t)p, n);
	err = errno;
	guard_disarm(t);
	account(t, K_READ, r, r < 0 ? err : 0);
	check_read(t, r, w, n, w != NULL, pk == P_STRADDLE);
}

void op_readv(struct thr *t, int fd)
{
	struct iovec iov[8];
	unsigned char *base = rw_page(t, 0) + 0x800;
	int cnt = (int)below(t, 9), i, kind = (int)below(t, 4);
	int flags = 0;
	size_t total = 0;
	long r;
	int err, allgood = 1;

	for (i = 0; i < cnt; i++) {
		void *w;
		enum ptr_kind pk = pick_kind(t, 850);

		allgood &= pk == P_GOOD || pk == P_MISALIGNED;
		iov[i].iov_len = chance(t, 700) ? (size_t)below(t, 9) :
						  (size_t)below(t, 64);
		iov[i].iov_base = (void *)(uintptr_t)make_ptr(t, pk, 0x800 +
			(size_t)i * 128, iov[i].iov_len, &w);
		total += iov[i].iov_len;
	}
	if (kind >= 2)
		flags = chance(t, 800) ? RWF_NOWAIT :
			(int)(chance(t, 500) ? RWF_HIPRI : rand_flags(t));
	describe(t, "%s(%d, %d segments, %zu bytes, flags %#x)",
		 kind < 2 ? "readv" : "preadv2", fd, cnt, total, flags);
	guard_arm(t, MS(5));
	if (kind < 2)
		r = readv(fd, cnt ? iov : (struct iovec *)base, cnt);
	else
		r = syscall(SYS_preadv2, fd, cnt ? iov : (struct iovec *)base,
			    cnt, -1L, -1L, flags);
	err = errno;
	guard_disarm(t);
	account(t, K_READV, r, r < 0 ? err : 0);
	/* nothing to read is 0 before the driver sees it (vfs_readv) */
	if (r >= 0 && r != 8 && r != 0 &&
	    !(r > 0 && r < 8 && !allgood))
		fz_fail(t, "readv returned %ld of %zu", r, total);
}

/* select() over the descriptors of @pfd: no exceptional condition */
static int poll_by_select(struct thr *t, const struct pollfd *pfd, int n,
			  const short *events, int tmo)
{
	fd_set rd, ex;
	struct timeval tv = { 0, tmo * 1000 };
	int maxfd = -1, i, r;

	FD_ZERO(&rd);
	FD_ZERO(&ex);
	for (i = 0; i < n; i++) {
		if (pfd[i].fd < 0 || pfd[i].fd >= FD_SETSIZE)
			continue;
		FD_SET(pfd[i].fd, &rd);
		if (events[i] & 1)
			FD_SET(pfd[i].fd, &ex);
		if (pfd[i].fd > maxfd)
			maxfd = pfd[i].fd;
	}
	describe(t, "select(%d)", maxfd + 1);
	r = select(maxfd + 1, &rd, NULL, &ex, &tv);
	for (i = 0; r > 0 && i < n; i++)
		if (pfd[i].fd >= 0 && pfd[i].fd < FD_SETSIZE &&
		    FD_ISSET(pfd[i].fd, &ex))
			fz_fail(t, "select: exceptional condition on fd %d",
				pfd[i].fd);
	return r;
}

/* poll() on a bad array or with a silly count */
static int poll_bad_array(struct thr *t)
{
	void *w;
	uint64_t p = make_ptr(t, pick_kind(t, 0), 0, 64, &w);
	nfds_t cnt = chance(t, 500) ? (nfds_t)below(t, 8) + 1 :
				      (nfds_t)rnd(t);

	describe(t, "poll(bad %#llx, %lu)", (unsigned long long)p,
		 (unsigned long)cnt);
	return poll((struct pollfd *)(uintptr_t)p, cnt, 0);
}

/*
 * revents: a timer's POLLIN only; a control descriptor has no poll, the
 * VFS's default mask.
 */
static void check_revents(struct thr *t, const struct pollfd *pfd, int n,
			  const int *ctl)
{
	int i;

	for (i = 0; i < n; i++) {
		short ok = ctl[i] ? POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM :
				    POLLIN;
		short bad = pfd[i].fd >= 0 ? (short)~ok : 0;

		if (pfd[i].revents & bad)
			fz_fail(t, "poll: revents %#x for events %#x on fd %d",
				pfd[i].revents, pfd[i].events, pfd[i].fd);
	}
}

void op_poll(struct thr *t)
{
	struct pollfd *pfd = (struct pollfd *)(rw_page(t, 0) + 0x1000);
	int n = 1 + (int)below(t, 8), i, r, err, tmo, nlocked;
	int locked[8], ctl[8];
	int how = (int)below(t, 10);
	short events[8];

	for (i = 0; i < n; i++) {
		locked[i] = (int)below(t, FZ_SLOTS);
		events[i] = (short)(chance(t, 700) ? POLLIN :
				    (short)below(t, 0x10000));
	}
	tmo = chance(t, 900) ? 0 : 1;
	nlocked = n;
	/*
	 * Read locks only: writers take one lock at a time, so holding
	 * several read locks cannot deadlock.
	 */
	for (i = 0; i < n; i++) {
		int j, dup = 0;

		for (j = 0; j < i; j++)
			dup |= locked[j] == locked[i];
		pfd[i].fd = dup ? -1 : slot_rdlock(locked[i]);
		ctl[i] = dup ? 0 : slots[locked[i]].ctl;
		if (dup)
			locked[i] = -1;
		pfd[i].events = events[i];
		pfd[i].revents = 0;
	}
	if (how < 6) {
		describe(t, "poll(%d fds, %d ms)", n, tmo);
		r = poll(pfd, (nfds_t)n, tmo);
	} else if (how < 8) {
		struct timespec ts = { 0, tmo * 1000000L };

		describe(t, "ppoll(%d fds)", n);
		r = ppoll(pfd, (nfds_t)n, &ts, NULL);
	} else if (how < 9) {
		r = poll_by_select(t, pfd, n, events, tmo);
		n = 0;	/* nothing to check below */
	} else {
		r = poll_bad_array(t);
		n = 0;
	}
	err = errno;
	check_revents(t, pfd, n, ctl);
	for (i = 0; i < nlocked; i++)
		if (locked[i] >= 0)
			slot_unlock(locked[i]);
	account(t, K_POLL, r, r < 0 ? err : 0);
}

void op_epoll_ctl(struct thr *t, int fd)
{
	static const uint32_t evbits[] = {
		EPOLLIN, EPOLLOUT, EPOLLET, EPOLLONESHOT, EPOLLEXCLUSIVE,
		EPOLLWAKEUP, EPOLLRDHUP, EPOLLPRI, EPOLLERR, EPOLLHUP,
	};
	int ep = epfds[below(t, FZ_EPOLLS)];
	int op = (int)(chance(t, 950) ? 1 + below(t, 3) : rnd(t));
	int target = fd;
	struct epoll_event ev;
	void *w;
	uint64_t p;
	unsigned int i;
	long r;

	ev.events = EPOLLIN;
	for (i = 0; i < ARRAY_SIZE(evbits); i++)
		if (chance(t, 150))
			ev.events |= evbits[i];
	if (chance(t, 50))
		ev.events = (uint32_t)rnd(t);
	ev.data.u64 = rnd(t);
	if (chance(t, 50))
		target = epfds[below(t, FZ_EPOLLS)];	/* nesting, loops */
	p = make_ptr(t, pick_kind(t, 900), 0x1800, sizeof(ev), &w);
	if (w)
		memcpy(w, &ev, sizeof(ev));
	describe(t, "epoll_ctl(%d, %d, %d, events %#x)", ep, op, target,
		 ev.events);
	r = epoll_ctl(ep, op, target, (struct epoll_event *)(uintptr_t)p);
	account(t, K_EPOLL_CTL, r, r < 0 ? errno : 0);
}

void op_epoll_wait(struct thr *t)
{
	int ep = epfds[below(t, FZ_EPOLLS)];
	int maxev = chance(t, 950) ? 1 + (int)below(t, 32) :
				     (int)(int32_t)rnd(t);
	enum ptr_kind pk = pick_kind(t, 900);
	struct epoll_event *evs;
	void *w;
	uint64_t p;
	int r, i, err, tmo = chance(t, 900) ? 0 : 1;

	p = make_ptr(t, pk, 0x2000, sizeof(*evs) * 32, &w);
	evs = w;
	describe(t, "epoll_wait(%d, %s, %d, %d)", ep, ptr_name[pk], maxev, tmo);
	r = epoll_wait(ep, (struct epoll_event *)(uintptr_t)p, maxev, tmo);
	err = errno;
	account(t, K_EPOLL_WAIT, r, r < 0 ? err : 0);
	if (r > 0 && maxev > 0 && r > maxev)
		fz_fail(t, "epoll_wait: %d events for %d", r, maxev);
	for (i = 0; evs && i < r; i++) {
		struct epoll_event e;

		memcpy(&e, (unsigned char *)evs + i * sizeof(e), sizeof(e));
		if (e.events & ~(uint32_t)(EPOLLIN | EPOLLRDNORM))
			fz_fail(t, "epoll_wait: events %#x", e.events);
	}
}

/*
 * A new descriptor in slot @i: mostly a timer, from CREATE on the
 * fuzzer's own control descriptor (a random clock in 60%, flags mostly
 * valid), else a control descriptor opened with any access mode.
 */
void op_open(struct thr *t, int i)
{
	static const int acc[] = { O_RDWR, O_RDWR, O_RDWR, O_RDONLY, O_WRONLY };
	int flags = acc[below(t, ARRAY_SIZE(acc))] |
		    (chance(t, 950) ? O_NONBLOCK : 0) |
		    (chance(t, 500) ? O_CLOEXEC : 0);
	int ctl = chance(t, 150);
	struct dtfd_create c = {
		.clockid = chance(t, 600) ? rand_clock(t) : CLOCK_MONOTONIC,
		.flags = chance(t, 900) ? (uint32_t)flags &
			 (O_NONBLOCK | O_CLOEXEC) : rand_create_flags(t),
	};
	int fd, old;

	if (ctl)
		describe(t, "open(slot %d, %#x)", i, flags);
	else
		describe(t, "CREATE(slot %d, clock %d, flags %#x)", i,
			 c.clockid, c.flags);
	pthread_rwlock_wrlock(&slots[i].lock);
	old = slots[i].fd;
	if (old >= 0)
		close(old);
	if (ctl) {
		fd = open(DTIMERFD_DEVICE, flags);
		account(t, K_OPEN, fd, fd < 0 ? errno : 0);
	} else {
		fd = ioctl(ctl_fd, DTFD_IOC_CREATE, &c);
		account(t, K_CREATE, fd, fd < 0 ? errno : 0);
		if (fd >= 0)
			check_created(t, fd, &c);
	}
	slots[i].fd = fd;
	slots[i].ctl = ctl;
	slot_unlock(i);
}

void op_close(struct thr *t, int i)
{
	long r;

	describe(t, "close(slot %d)", i);
	pthread_rwlock_wrlock(&slots[i].lock);
	if (slots[i].fd >= 0) {
		r = close(slots[i].fd);
		account(t, K_CLOSE, r, r < 0 ? errno : 0);
		slots[i].fd = -1;
	}
	slot_unlock(i);
}

/* dup (or dup3 onto another slot's number): two fds, one timer */
void op_dup(struct thr *t, int from, int to)
{
	int src, nfd, cloexec = chance(t, 500) ? O_CLOEXEC : 0;
	int use_dup3 = chance(t, 500), ctl;

	describe(t, "dup(slot %d -> slot %d)%s", from, to,
		 use_dup3 ? " dup3" : "");
	if (from == to)
		return;
	src = slot_rdlock(from);
	ctl = slots[from].ctl;
	nfd = fcntl(src, cloexec ? F_DUPFD_CLOEXEC : F_DUPFD, 3);
	account(t, K_DUP, nfd, nfd < 0 ? errno : 0);
	slot_unlock(from);
	if (nfd < 0)
		return;
	pthread_rwlock_wrlock(&slots[to].lock);
	if (use_dup3 && slots[to].fd >= 0) {
		long r = dup3(nfd, slots[to].fd, cloexec);

		account(t, K_DUP, r, r < 0 ? errno : 0);
		close(nfd);
	} else {
		if (slots[to].fd >= 0)
			close(slots[to].fd);
		slots[to].fd = nfd;
	}
	slots[to].ctl = ctl;
	slot_unlock(to);
}

void op_fcntl(struct thr *t, int fd)
{
	long fl = fcntl(fd, F_GETFL);

	describe(t, "fcntl(%d, F_SETFL)", fd);
	account(t, K_FCNTL, fl, fl < 0 ? errno : 0);
	if (fl < 0)
		return;
	fl = chance(t, 850) ? fl | O_NONBLOCK : fl & ~O_NONBLOCK;
	fl = fcntl(fd, F_SETFL, fl);
	account(t, K_FCNTL, fl, fl < 0 ? errno : 0);
}

void op_misc(struct thr *t, int fd, int ctl)
{
	unsigned char *buf = rw_page(t, 0) + 0x3000;
	long long r;
	int err;
	void *m;

	switch (below(t, 7)) {
	case 0:
		describe(t, "write(%d)", fd);
		r = write(fd, buf, (size_t)below(t, 16));
		break;
	case 1:
		describe(t, "lseek(%d)", fd);
		r = lseek(fd, (off_t)rnd(t), (int)below(t, 6));
		if (r > 0) {
			account(t, K_MISC, r, 0);
			fz_fail(t, "lseek moved to %lld", r);
			return;
		}
		break;
	case 2:
		describe(t, "pread(%d)", fd);
		r = pread(fd, buf, 8, (off_t)below(t, 100));
		if (r >= 0) {
			account(t, K_MISC, r, 0);
			fz_fail(t, "pread succeeded: %lld", r);
			return;
		}
		break;
	case 3:
		describe(t, "mmap(%d)", fd);
		m = mmap(NULL, FZ_PAGE, PROT_READ, MAP_SHARED, fd, 0);
		if (m != MAP_FAILED) {
			munmap(m, FZ_PAGE);
			account(t, K_MISC, 0, 0);
			fz_fail(t, "mmap succeeded");
			return;
		}
		r = -1;
		break;
	case 4:
		describe(t, "sendfile(from %d)", fd);
		r = sendfile(fd, fd, NULL, 8);
		break;
	case 5:
		describe(t, "fstat(%d)", fd);
		{
			struct stat st;

			r = fstat(fd, &st);
			/* the device node, or timerfd's anonymous inode */
			if (!r && (ctl ? !S_ISCHR(st.st_mode) :
				   (st.st_mode & S_IFMT) != anon_type))
				fz_fail(t, "fstat of a %s: mode %o",
					ctl ? "control descriptor" : "timer",
					st.st_mode);
		}
		break;
	default:
		describe(t, "fsync(%d)", fd);
		r = fsync(fd);
		break;
	}
	err = errno;
	account(t, K_MISC, r, r < 0 ? err : 0);
}

void op_fdinfo(struct thr *t, int fd, int ctl)
{
	struct h_fdinfo fi;
	int r;

	describe(t, "fdinfo(%d)", fd);
	r = h_fdinfo(fd, &fi);
	account(t, K_FDINFO, r, r < 0 ? (fd < 0 ? EBADF : errno) : 0);
	if (r)
		return;
	if (ctl) {
		/* no timer: the generic lines only */
		if (fi.nlines || fi.extra[0])
			fz_fail(t, "fdinfo of a control descriptor: %d timer lines",
				fi.nlines);
		return;
	}
	if (fi.nlines != 5 || !fi.ordered || fi.value_sec < 0 ||
	    fi.value_nsec < 0 || fi.value_nsec >= NSEC_PER_SEC ||
	    fi.interval_sec < 0 || fi.interval_nsec < 0 ||
	    fi.interval_nsec >= NSEC_PER_SEC ||
	    fi.value_sec > INT64_MAX / NSEC_PER_SEC ||
	    fi.interval_sec > INT64_MAX / NSEC_PER_SEC ||
	    (fi.settime_flags & ~3u) || !strstr(fi.extra, "dtimerfd-mode:"))
		fz_fail(t, "fdinfo: %d lines, value (%lld, %lld), interval (%lld, %lld), flags %#x",
			fi.nlines, fi.value_sec, fi.value_nsec,
			fi.interval_sec, fi.interval_nsec, fi.settime_flags);
}

/*
 * A child with a copy of the fd table: a few calls on the shared timers
 * (raw system calls only: other threads may hold libc locks), then exit,
 * which may be the last close of some of them.
 */
void op_fork(struct thr *t)
{
	int snap[FZ_SLOTS], i, status;
	pid_t pid;

	for (i = 0; i < FZ_SLOTS; i++)
		snap[i] = slots[i].fd;
	describe(t, "fork");
	pid = fork();
	if (pid == 0) {
		struct its64 v = { 0, 1000, 0, 500000 };
		struct dtfd_settime a = { DTFD_TIMER_DEFERRABLE, 0,
					  (uintptr_t)&v, 0 };
		uint64_t ticks;
		struct iovec iov = { &ticks, sizeof(ticks) };
		struct dtfd_stats st;

		for (i = 0; i < 64; i++) {
			int fd = snap[(i * 7) % FZ_SLOTS];

			if (fd < 0)
				continue;
			switch (i % 4) {
			case 0:
				a.flags = i & 4 ? DTFD_TIMER_DEFERRABLE : 0;
				ioctl(fd, DTFD_IOC_SETTIME64, &a);
				break;
			case 1:
				syscall(SYS_preadv2, fd, &iov, 1, -1L, -1L,
					RWF_NOWAIT);
				break;
			case 2:
				if (i & 8)
					close(fd);
				break;
			default:
				ioctl(fd, DTFD_IOC_GET_STATS, &st);
			}
		}
		_exit(0);
	}
	account(t, K_FORK, pid, pid < 0 ? errno : 0);
	if (pid <= 0)
		return;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			fz_fail(t, "waitpid: %s", strerror(errno));
			return;
		}
	if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		fz_fail(t, "forked child: status %#x", status);
}

void op_clock(struct thr *t)
{
	long long d = (long long)below(t, 2 * MS(2)) - MS(2);
	int r;

	describe(t, "clock step %lld ns", d);
	r = h_clock_step(d);
	account(t, K_CLOCK, r, r < 0 ? errno : 0);
}
