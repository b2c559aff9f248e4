// SPDX-License-Identifier: GPL-2.0
/*
 * The fuzzer's kinds of calls and their errnos, its failures, the checks
 * on results, the slots and the per-thread read guard.
 */
#include "fuzz.h"

#define K_NAME(name, nr, arg, fd, errs)	#name,
const char *const kind_name[K_NKINDS] = {
	DTFD_IOCTLS(K_NAME)
	"ioctl-other", "wrong-kind", "read", "readv", "poll",
	"epoll_ctl", "epoll_wait", "open", "close", "dup", "fcntl", "misc",
	"fdinfo", "fork", "clock-step",
};

/*
 * errno values each kind may give (EBADF: the empty slot's fd -1); an
 * ioctl of ours on the other kind of descriptor counts as K_ENOTTY.
 */
#define MAX_ERRS	8
#define K_ERRS(name, nr, arg, fd, errs)	[K_##name] = { IOC_ERRS(errs) },
static const short kind_errs[K_NKINDS][MAX_ERRS] = {
	DTFD_IOCTLS(K_ERRS)
	[K_IOC_OTHER]	= { ENOTTY, EBADF },
	[K_ENOTTY]	= { ENOTTY },
	[K_READ]	= { EAGAIN, EINVAL, EFAULT, ECANCELED, EINTR, EBADF },
	[K_READV]	= { EAGAIN, EINVAL, EFAULT, ECANCELED, EINTR, EBADF,
			    EOPNOTSUPP, ESPIPE },
	[K_POLL]	= { EFAULT, EINVAL, EINTR, EBADF },
	[K_EPOLL_CTL]	= { EFAULT, EINVAL, EBADF, EEXIST, ENOENT, ELOOP,
			    EPERM },
	[K_EPOLL_WAIT]	= { EFAULT, EINVAL, EINTR },
	[K_OPEN]	= { 0 },	/* the device: never fails */
	[K_CLOSE]	= { EBADF },
	[K_DUP]		= { EBADF },
	[K_FCNTL]	= { EBADF },
	[K_MISC]	= { EINVAL, EBADF, ESPIPE, ENODEV, EACCES },
	[K_FDINFO]	= { ENOENT, EBADF },
	[K_FORK]	= { EAGAIN, ENOMEM },
	[K_CLOCK]	= { EINVAL, EPERM },
};

static int errno_allowed(enum kind k, int err)
{
	int i;

	for (i = 0; i < MAX_ERRS && kind_errs[k][i]; i++)
		if (kind_errs[k][i] == err)
			return 1;
	return 0;
}

/* ---- reporting ---- */

#define MAX_FAIL_MSGS	30

void __attribute__((format(printf, 2, 3)))
fz_fail(struct thr *t, const char *fmt, ...)
{
	char msg[300];
	va_list ap;
	int n = __atomic_add_fetch(&failures, 1, __ATOMIC_RELAXED);

	if (n > MAX_FAIL_MSGS)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (t) {
		char h[100];
		int i, m = 0;

		for (i = 7; i >= 0; i--) {
			unsigned int j = (t->hist_n - 1 - (unsigned int)i) % 8;

			if (t->hist_n > (unsigned int)i)
				m += snprintf(h + m, sizeof(h) - (size_t)m, " %u/%u",
					      t->hist_op[j], t->hist_slot[j]);
		}
		h_diag("thread %d last ops (op/slot):%s", t->id, m ? h : " none");
	}
	h_fail(__FILE__, __LINE__, "invariant",
	       "thread %d call %llu (%s): %s", t ? t->id : -1,
	       t ? t->calls : 0,
	       t && trace ? t->desc : "DTFD_FUZZ_TRACE=1 shows the call", msg);
}

/* describe(): only with DTFD_FUZZ_TRACE */
void __attribute__((format(printf, 2, 3)))
describe_(struct thr *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->desc, sizeof(t->desc), fmt, ap);
	va_end(ap);
	fprintf(stderr, "fuzz: t%d #%llu %s\n", t->id, t->calls, t->desc);
}

/* Count one call of @k that returned @ret with errno @err. */
void account(struct thr *t, enum kind k, long long ret, int err)
{
	t->calls++;
	if (ret >= 0) {
		t->st.ok[k]++;
		return;
	}
	t->st.err[k][err >= 0 && err < NERR ? err : 0]++;
	if (!errno_allowed(k, err))
		fz_fail(t, "%s: unexpected errno %d (%s)", kind_name[k], err,
			strerrorname_np(err) ?: "?");
}

/* ---- checks on results ---- */

static void check_its64(struct thr *t, const struct its64 *v, const char *what)
{
	if (v->vsec < 0 || v->vnsec < 0 || v->vnsec >= NSEC_PER_SEC ||
	    v->isec < 0 || v->insec < 0 || v->insec >= NSEC_PER_SEC ||
	    v->vsec > INT64_MAX / NSEC_PER_SEC ||
	    v->isec > INT64_MAX / NSEC_PER_SEC)
		fz_fail(t, "%s: bad itimerspec value (%lld, %lld) interval (%lld, %lld)",
			what, (long long)v->vsec, (long long)v->vnsec,
			(long long)v->isec, (long long)v->insec);
}

/* 32-bit seconds may wrap (put_old_itimerspec32 truncates): nsec only */
static void check_its32(struct thr *t, const struct its32 *v, const char *what)
{
	if (v->vnsec < 0 || v->vnsec >= NSEC_PER_SEC || v->insec < 0 ||
	    v->insec >= NSEC_PER_SEC)
		fz_fail(t, "%s: bad 32-bit itimerspec value (%d, %d) interval (%d, %d)",
			what, v->vsec, v->vnsec, v->isec, v->insec);
}

void check_its(struct thr *t, int l32, const void *p, const char *what)
{
	if (!l32) {
		struct its64 v;

		memcpy(&v, p, sizeof(v));
		check_its64(t, &v, what);
	} else {
		struct its32 v;

		memcpy(&v, p, sizeof(v));
		check_its32(t, &v, what);
	}
}

/*
 * A timer CREATE returned, for @a: the flags asked for, nothing more,
 * on the anonymous inode.  Closed here.
 */
void check_created(struct thr *t, int fd, const struct dtfd_create *a)
{
	char path[64], link[64];
	int fl = fcntl(fd, F_GETFL), fdfl = fcntl(fd, F_GETFD);
	ssize_t n;

	if (fl != (O_RDWR | (int)(a->flags & O_NONBLOCK)) ||
	    fdfl != (a->flags & O_CLOEXEC ? FD_CLOEXEC : 0))
		fz_fail(t, "CREATE(clock %d, flags %#x): F_GETFL %#o, F_GETFD %d",
			a->clockid, a->flags, fl, fdfl);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = '\0';
	if (strcmp(link, "anon_inode:[dtimerfd]"))
		fz_fail(t, "CREATE: fd -> %s", link);
}

/* ---- slots ---- */

int slot_rdlock(int i)
{
	pthread_rwlock_rdlock(&slots[i].lock);
	return slots[i].fd;
}

void slot_unlock(int i)
{
	pthread_rwlock_unlock(&slots[i].lock);
}

/* ---- the per-thread read guard: a signal ends any blocking call ---- */

void on_guard(int sig)
{
	(void)sig;
}

/*
 * Periodic: a signal that arrives before the call blocks (the thread was
 * preempted in between) must not leave it blocked for good.
 */
void guard_arm(struct thr *t, long long ns)
{
	struct itimerspec its = h_its(ns, ns);

	if (t->have_guard)
		timer_settime(t->guard, 0, &its, NULL);
}

void guard_disarm(struct thr *t)
{
	struct itimerspec its = h_its(0, 0);

	if (t->have_guard)
		timer_settime(t->guard, 0, &its, NULL);
}
