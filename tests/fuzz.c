// SPDX-License-Identifier: GPL-2.0
/*
 * A seeded, reproducible fuzzer of /dev/dtimerfd.
 *
 * Several threads share a table of descriptors of both kinds, timers
 * (DTFD_IOC_CREATE's anonymous-inode files) and control descriptors
 * (opens of /dev/dtimerfd), and throw calls at them: every ioctl of
 * ioctls.h with valid, invalid and random arguments on either kind, our
 * ioctl numbers with the wrong size or direction, their neighbours, v1's
 * numbers and random numbers; pointers that are NULL, unmapped, read-only,
 * misaligned, straddling into an unmapped page or kernel addresses; reads
 * of random sizes into such buffers, readv, preadv2(RWF_NOWAIT); poll,
 * select and epoll; open, CREATE, close, dup, fcntl, fork; settime in
 * both layouts with random values, flags and padding, CREATE with random
 * clocks and flags, tolerances and SET_TICKS; small steps of
 * CLOCK_REALTIME for the CANCEL_ON_SET path.
 *
 * The kernel must survive and log nothing (vm/check and vm/run fail the
 * run on any report).  Cheap invariants are checked on every call: the
 * errno of each call is in a small set for its kind, an ioctl number that
 * is not exactly one of ours is ENOTTY, and so is one of ours on the
 * other kind of descriptor (and the 32-bit time ioctls where the kernel
 * has no 32-bit time); a timer CREATE made carries the flags asked for;
 * gettime and fdinfo never show a negative time or tv_nsec >= 1e9,
 * statistics are consistent, poll and epoll report nothing but EPOLLIN on
 * a timer (the default mask on a control descriptor), read returns 8 and
 * a non-zero count, fstat and fdinfo tell the two kinds apart.
 *
 * Reproducing: the seed is printed.  Each thread draws its calls from its
 * own generator seeded from (seed, thread), and how many draws a call takes
 * never depends on the results of earlier calls, so a thread's sequence of
 * calls is fixed by the seed.  With one thread the whole run is:
 *
 *   fuzz.t -s SEED                   (or DTFD_FUZZ_SEED=SEED)
 *   DTFD_FUZZ_THREADS=1 DTFD_FUZZ_TRACE=1 fuzz.t -s SEED   prints every
 *                                    call on stderr before making it
 *
 * Environment (each also read with a DTFD_TEST_ prefix, which vm/check
 * passes into the guest):
 *   DTFD_FUZZ_SEED     seed (decimal or 0x hex); default: from the clock
 *   DTFD_FUZZ_CALLS    system calls to make in all (default 200000)
 *   DTFD_FUZZ_THREADS  threads (default 4)
 *   DTFD_FUZZ_TRACE    1: log each call to stderr
 */
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/select.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "harness.h"
#include "ioctls.h"

#define FZ_SLOTS	96
#define FZ_EPOLLS	3
#define FZ_MAX_THREADS	16
#define FZ_PAGE		4096
/* per-thread arena: 16 RW pages, a RW tail page, PROT_NONE, PROT_READ */
#define FZ_RW_PAGES	17
#define FZ_ARENA_PAGES	19

#ifndef RWF_NOWAIT
#define RWF_NOWAIT	0x00000008
#endif
#ifndef RWF_HIPRI
#define RWF_HIPRI	0x00000001
#endif
#ifndef EPOLLEXCLUSIVE
#define EPOLLEXCLUSIVE	(1u << 28)
#endif
#ifndef EPOLLWAKEUP
#define EPOLLWAKEUP	(1u << 29)
#endif

/* 64-bit and 32-bit struct itimerspec as the module reads them */
struct its64 {
	int64_t isec, insec, vsec, vnsec;
};

struct its32 {
	int32_t isec, insec, vsec, vnsec;
};

/* the calls, by kind: counted, and their errno checked against a set */
#define K_IOCTL(name, nr, arg, fd, errs)	K_##name,
enum kind {
	DTFD_IOCTLS(K_IOCTL)	/* first, in ioctls.h's order */
	K_IOC_OTHER, K_ENOTTY, K_READ, K_READV, K_POLL,
	K_EPOLL_CTL, K_EPOLL_WAIT, K_OPEN, K_CLOSE, K_DUP, K_FCNTL, K_MISC,
	K_FDINFO, K_FORK, K_CLOCK, K_NKINDS
};

#define K_NAME(name, nr, arg, fd, errs)	#name,
static const char *const kind_name[K_NKINDS] = {
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

#define NERR	160

struct tstat {
	unsigned long long ok[K_NKINDS];
	unsigned long long err[K_NKINDS][NERR];
};

struct slot {
	pthread_rwlock_t lock;
	int fd;			/* -1: empty */
	int ctl;		/* 1: a control descriptor, 0: a timer */
};

static struct slot slots[FZ_SLOTS];
static int epfds[FZ_EPOLLS];
static int ctl_fd;		/* CREATE's own, never in a slot */
static int have32;		/* the kernel has SETTIME32/GETTIME32 */
static mode_t anon_type;	/* fstat's file type of a timerfd */
static int nthreads = 4;
static unsigned long long target_calls = 200000;
static unsigned long long seed;
static int seed_given;
static int trace;
static int failures;
static unsigned long long total_calls;
static long long hr_res = 1;

struct thr {
	int id;
	uint64_t rng;		/* the thread's stream: 8 draws per call */
	uint64_t local;		/* this call's own generator, from a draw */
	unsigned long long quota, calls, ops;
	unsigned char *arena;	/* FZ_ARENA_PAGES pages */
	timer_t guard;
	int have_guard;
	struct tstat st;
	char desc[200];
	/* the last calls' op and slot, shown with a failure */
	unsigned char hist_op[8], hist_slot[8];
	unsigned int hist_n;
};

static uint64_t rnd(struct thr *t)
{
	return h_mix(&t->local);
}

static uint64_t below(struct thr *t, uint64_t n)
{
	return n ? rnd(t) % n : 0;
}

static int chance(struct thr *t, unsigned int per_1000)
{
	return below(t, 1000) < per_1000;
}

/* ---- reporting ---- */

#define MAX_FAIL_MSGS	30

static void __attribute__((format(printf, 2, 3)))
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

/* Only with DTFD_FUZZ_TRACE: formatting every call would halve the rate. */
static void __attribute__((format(printf, 2, 3)))
describe_(struct thr *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->desc, sizeof(t->desc), fmt, ap);
	va_end(ap);
	fprintf(stderr, "fuzz: t%d #%llu %s\n", t->id, t->calls, t->desc);
}

#define describe(t, ...) do {						\
	if (trace)							\
		describe_(t, __VA_ARGS__);				\
} while (0)

/* Count one call of @k that returned @ret with errno @err. */
static void account(struct thr *t, enum kind k, long long ret, int err)
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

/* ---- pointers ---- */

static unsigned char *rw_page(struct thr *t, int n)
{
	return t->arena + (size_t)n * FZ_PAGE;
}

static unsigned char *none_page(struct thr *t)
{
	return rw_page(t, FZ_RW_PAGES);
}

static unsigned char *ro_page(struct thr *t)
{
	return rw_page(t, FZ_RW_PAGES + 1);
}

/* kernel and otherwise unusable addresses, for the u64 fields */
static const uint64_t kaddrs[] = {
	0xffff888000000000ULL, 0xffffffff81000000ULL, 0xffffffffff600000ULL,
	0xffffffffffffffffULL, 0xfffffffffffff000ULL, 0x8000000000000000ULL,
	0x0000800000000000ULL, 0x00007ffffffff000ULL, 0xdead000000000000ULL,
	0xffffc90000000000ULL, 0xffffea0000000000ULL, 0x0000000100000000ULL,
	0xc0000000ULL, 0xffffe000ULL, 0xfffff000ULL, 1, 8, 4095,
};

enum ptr_kind { P_GOOD, P_MISALIGNED, P_NULL, P_STRADDLE, P_NONE, P_RO,
		P_KERNEL, P_RANDOM };

static const char *const ptr_name[] = {
	"good", "misaligned", "NULL", "straddle", "unmapped", "read-only",
	"kernel", "random",
};

static enum ptr_kind pick_kind(struct thr *t, unsigned int good_per_1000)
{
	if (chance(t, good_per_1000))
		return chance(t, 850) ? P_GOOD : P_MISALIGNED;
	return (enum ptr_kind)(2 + below(t, 6));
}

/*
 * A user address of kind @k for an object of @size bytes at @off in the
 * good area; *@w is where to write its contents (NULL: not writable).
 * @wide: for the __u64 address fields, which hold 64 bits even in 32-bit
 * processes.  Random addresses are never ones this process may have
 * mapped (a write there would corrupt the fuzzer, not the kernel): below
 * mmap_min_addr, the top page of a 32-bit space, or (64-bit) anything
 * non-canonical.
 */
static uint64_t make_ptr_w(struct thr *t, enum ptr_kind k, size_t off,
			   size_t size, void **w, int wide)
{
	unsigned char *p;
	size_t cut;

	*w = NULL;
	switch (k) {
	case P_GOOD:
		p = rw_page(t, 0) + off;
		*w = p;
		return (uintptr_t)p;
	case P_MISALIGNED:
		p = rw_page(t, 0) + off + 1 + below(t, 7);
		*w = p;
		return (uintptr_t)p;
	case P_NULL:
		return 0;
	case P_STRADDLE:
		/* the first 1..size-1 bytes mapped, the rest not */
		cut = size > 1 ? 1 + below(t, size - 1) : 1;
		return (uintptr_t)(none_page(t) - cut);
	case P_NONE:
		return (uintptr_t)(none_page(t) + below(t, 64) * 8);
	case P_RO:
		return (uintptr_t)(ro_page(t) + below(t, 16) * 8);
	case P_KERNEL:
		if (sizeof(void *) == 4 && !wide)
			return 0xffffe000u + below(t, 0x2000);
		return kaddrs[below(t, ARRAY_SIZE(kaddrs))];
	case P_RANDOM:
	default:
		if (chance(t, 500))
			return 0x1000 + below(t, 0xf000);
		if (sizeof(void *) == 4 && !wide)
			return 0xffffe000u + below(t, 0x2000);
		/* bits 47..62 not all equal: non-canonical */
		return (rnd(t) & ~(0xffffULL << 47)) | (1ULL << 50) |
		       (rnd(t) & (1ULL << 63));
	}
}

static uint64_t make_ptr(struct thr *t, enum ptr_kind k, size_t off,
			 size_t size, void **w)
{
	return make_ptr_w(t, k, off, size, w, 0);
}

/* what the straddle pointer's mapped bytes hold: the start of @src */
static void fill_straddle(struct thr *t, uint64_t p, const void *src,
			  size_t size)
{
	unsigned char *q = (unsigned char *)(uintptr_t)p;
	size_t n = (size_t)(none_page(t) - q);

	if (q < none_page(t) && n < size)
		memcpy(q, src, n);
}

/* An address for an ioctl argument: in 32-bit processes only 32 bits. */
static unsigned long ioc_arg(uint64_t p)
{
	return (unsigned long)p;
}

/* ---- values ---- */

static int64_t rand_sec(struct thr *t)
{
	static const int64_t special[] = {
		0, 1, 2, -1, INT32_MAX, (int64_t)INT32_MAX + 1, INT32_MIN,
		INT64_MAX, INT64_MIN, 9223372036LL, 9223372037LL,
		4294967295LL, 0x7fffffffffffLL, 86400LL * 365 * 300,
	};

	switch (below(t, 4)) {
	case 0:
		return 0;
	case 1:
		return (int64_t)below(t, 4);
	case 2:
		return special[below(t, ARRAY_SIZE(special))];
	default:
		return (int64_t)rnd(t);
	}
}

static int64_t rand_nsec(struct thr *t)
{
	static const int64_t special[] = {
		0, 1, 999999999, 1000000000, -1, INT64_MIN, INT64_MAX,
		(int64_t)1 << 32, ((int64_t)1 << 32) + 5, 0xffffffffLL,
	};

	switch (below(t, 4)) {
	case 0:
		return (int64_t)below(t, 3000000);
	case 1:
		return (int64_t)below(t, NSEC_PER_SEC);
	case 2:
		return special[below(t, ARRAY_SIZE(special))];
	default:
		return (int64_t)rnd(t);
	}
}

static uint32_t rand_flags(struct thr *t)
{
	switch (below(t, 5)) {
	case 0:
	case 1:
		return (uint32_t)below(t, 8);
	case 2:
		return 1u << below(t, 32);
	case 3:
		return (uint32_t)below(t, 8) | (1u << below(t, 32));
	default:
		return (uint32_t)rnd(t);
	}
}

/* settime's pad: zero, mostly */
static uint32_t rand_pad(struct thr *t)
{
	static const uint32_t odd[] = { 1, 2, 64, 0x80000000u, 0xffffffffu };

	if (chance(t, 900))
		return 0;
	return chance(t, 500) ? odd[below(t, ARRAY_SIZE(odd))] :
				(uint32_t)rnd(t);
}

/* CREATE's flags: O_CLOEXEC and O_NONBLOCK, mostly */
static uint32_t rand_create_flags(struct thr *t)
{
	if (chance(t, 850))
		return (chance(t, 500) ? O_CLOEXEC : 0) |
		       (chance(t, 900) ? O_NONBLOCK : 0);
	return rand_flags(t);
}

static uint64_t rand_u64(struct thr *t)
{
	static const uint64_t special[] = {
		0, 1, 2, 1000, 1000000, 999999999, 1000000000,
		INT64_MAX, (uint64_t)INT64_MAX + 1, UINT64_MAX,
		UINT64_MAX - 1, 1ULL << 32, 10000000,
	};

	switch (below(t, 3)) {
	case 0:
		return special[below(t, ARRAY_SIZE(special))];
	case 1:
		return below(t, 20000000);
	default:
		return rnd(t);
	}
}

static int32_t rand_clock(struct thr *t)
{
	static const int32_t clocks[] = {
		CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME,
		CLOCK_REALTIME_ALARM, CLOCK_BOOTTIME_ALARM,
	};
	static const int32_t odd[] = {
		-1, INT32_MIN, INT32_MAX, 2, 3, 4, 5, 6, 10, 11, 12, 16, 31,
		32, 63, 64, 65, -2, -6, ~(3 << 3) | 3, (int32_t)0xfffffffe,
	};

	if (chance(t, 600))
		return clocks[below(t, ARRAY_SIZE(clocks))];
	if (chance(t, 700))
		return odd[below(t, ARRAY_SIZE(odd))];
	return (int32_t)rnd(t);
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

static void check_its(struct thr *t, int l32, const void *p, const char *what)
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
static void check_created(struct thr *t, int fd, const struct dtfd_create *a)
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

static int slot_rdlock(int i)
{
	pthread_rwlock_rdlock(&slots[i].lock);
	return slots[i].fd;
}

static void slot_unlock(int i)
{
	pthread_rwlock_unlock(&slots[i].lock);
}

/* ---- the per-thread read guard: a signal ends any blocking call ---- */

static void on_guard(int sig)
{
	(void)sig;
}

/*
 * Periodic: a signal that arrives before the call blocks (the thread was
 * preempted in between) must not leave it blocked for good.
 */
static void guard_arm(struct thr *t, long long ns)
{
	struct itimerspec its = h_its(ns, ns);

	if (t->have_guard)
		timer_settime(t->guard, 0, &its, NULL);
}

static void guard_disarm(struct thr *t)
{
	struct itimerspec its = h_its(0, 0);

	if (t->have_guard)
		timer_settime(t->guard, 0, &its, NULL);
}

/* ---- the calls ---- */

/* the ioctls' kinds are their indexes in ioctls.h */
_Static_assert((int)K_IOC_OTHER == (int)IOC_N, "one kind per ioctl");

/* one of our ioctl numbers, at random */
static unsigned long rand_cmd(struct thr *t)
{
	return dtfd_ioctls[below(t, IOC_N)].cmd;
}

/* the kind of an ioctl number; K_IOC_OTHER when it is none of ours */
static enum kind cmd_kind(unsigned long cmd)
{
	return (enum kind)dtfd_ioctl_index(cmd);
}

/*
 * Types whose numbers the VFS answers itself before the driver (FIOCLEX,
 * FIONBIO, FIFREEZE, FICLONE, FS_IOC_*, FIGETBSZ...): not thrown at
 * random, so that every other number must reach dtimerfd_ioctl().
 */
static int vfs_type(unsigned int type)
{
	return type == 0x00 || type == 0x15 || type == 'T' || type == 'X' ||
	       type == 'f' || type == 0x94;
}

/* the control descriptor's ioctls; the rest are the timer's */
static int ctl_cmd(enum kind k)
{
	return dtfd_ioctls[k].fd == IOC_CTL;
}

/*
 * Count an ioctl of kind @k on @fd, a control descriptor when @ctl:
 * one of ours on the other kind of descriptor, or a 32-bit time one
 * where the kernel has none, must be ENOTTY.
 */
static void account_ioctl(struct thr *t, enum kind k, int fd, int ctl,
			  long r, int err)
{
	if (fd >= 0 && k != K_IOC_OTHER &&
	    (ctl != ctl_cmd(k) ||
	     (!have32 && (k == K_SETTIME32 || k == K_GETTIME32)))) {
		account(t, K_ENOTTY, r, err);
		if (r >= 0)
			fz_fail(t, "%s on a %s descriptor returned %ld",
				kind_name[k], ctl ? "control" : "timer", r);
		return;
	}
	account(t, k, r, err);
}

static void do_ioctl(struct thr *t, int fd, int ctl, unsigned long cmd,
		     unsigned long arg)
{
	enum kind k = cmd_kind(cmd);
	long r;

	describe(t, "ioctl(%d, %#lx, %#lx) [%s]", fd, cmd, arg, kind_name[k]);
	r = ioctl(fd, cmd, arg);
	account_ioctl(t, k, fd, ctl, r, r < 0 ? errno : 0);
	if (k == K_CREATE && r >= 0)
		close((int)r);	/* a real CREATE, with whatever lay there */
	if (k == K_IOC_OTHER && r >= 0) {
		char path[64], link[128] = "?";
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, link, sizeof(link) - 1);
		link[n > 0 ? n : 0] = '\0';
		fz_fail(t, "ioctl(%d -> %s, %#lx, %#lx) is not ours but returned %ld",
			fd, link, cmd, arg, r);
	}
}

/* An argument struct for a real command, valid or not, written to @w. */
static size_t build_arg(struct thr *t, unsigned long cmd, unsigned char *buf,
			uint64_t *outp)
{
	void *w;

	*outp = 0;
	switch (cmd) {
	case DTFD_IOC_CREATE: {
		struct dtfd_create a = {
			.clockid = rand_clock(t),
			.flags = rand_create_flags(t),
		};

		memcpy(buf, &a, sizeof(a));
		return sizeof(a);
	}
	case DTFD_IOC_SETTIME64:
	case DTFD_IOC_SETTIME32: {
		int l32 = cmd == DTFD_IOC_SETTIME32;
		struct dtfd_settime a;
		struct its64 v64 = {
			rand_sec(t), rand_nsec(t), rand_sec(t), rand_nsec(t),
		};
		struct its32 v32 = {
			(int32_t)v64.isec, (int32_t)v64.insec,
			(int32_t)v64.vsec, (int32_t)v64.vnsec,
		};
		void *v = l32 ? (void *)&v32 : (void *)&v64;
		size_t sz = l32 ? sizeof(v32) : sizeof(v64);

		a.flags = rand_flags(t);
		a.pad = rand_pad(t);
		a.new_value = make_ptr_w(t, pick_kind(t, 800), 0x200, sz, &w, 1);
		if (w)
			memcpy(w, v, sz);
		else
			fill_straddle(t, a.new_value, v, sz);
		a.old_value = chance(t, 400) ? 0 :
			make_ptr_w(t, pick_kind(t, 800), 0x400, sz, &w, 1);
		if (w)
			*outp = a.old_value;
		memcpy(buf, &a, sizeof(a));
		return sizeof(a);
	}
	case DTFD_IOC_SET_TICKS: {
		uint64_t v = rand_u64(t);

		memcpy(buf, &v, sizeof(v));
		return sizeof(v);
	}
	case DTFD_IOC_SET_TOLERANCE: {
		struct dtfd_tolerance a = {
			.slack_ns = rand_u64(t),
			.max_defer_ns = rand_u64(t),
			.flags = chance(t, 900) ? 0 : rand_flags(t),
			.pad = chance(t, 900) ? 0 : (uint32_t)rnd(t),
		};

		memcpy(buf, &a, sizeof(a));
		return sizeof(a);
	}
	default:
		/* output structs (the itimerspecs of GETTIME64 and
		 * GETTIME32 too): garbage in, checked on the way out */
		memset(buf, 0xa5, 48);
		return 48;
	}
}

/*
 * A real command with a random argument behind a pointer of any kind, on
 * a descriptor of either kind (@ctl: a control descriptor).
 */
static void op_ioctl_real(struct thr *t, int fd, int ctl)
{
	unsigned long cmd = rand_cmd(t);
	unsigned char buf[64];
	enum ptr_kind pk = pick_kind(t, 850);
	uint64_t outp, p;
	size_t size;
	void *w;
	long r;
	int err;

	size = build_arg(t, cmd, buf, &outp);
	p = make_ptr(t, pk, 0, size, &w);
	if (w)
		memcpy(w, buf, size);
	else if (pk == P_STRADDLE)
		fill_straddle(t, p, buf, size);
	if (sizeof(void *) == 4 && p > UINT32_MAX)
		p = (uint32_t)p;

	describe(t, "ioctl(%d, %s, %s arg)", fd, kind_name[cmd_kind(cmd)],
		 ptr_name[pk]);
	r = ioctl(fd, cmd, ioc_arg(p));
	err = errno;
	account_ioctl(t, cmd_kind(cmd), fd, ctl, r, r < 0 ? err : 0);
	if (cmd == DTFD_IOC_CREATE && r >= 0) {
		struct dtfd_create a;

		/* it was read: readable */
		memcpy(&a, (void *)(uintptr_t)p, sizeof(a));
		check_created(t, (int)r, &a);
		close((int)r);
		return;
	}
	if (r > 0)
		fz_fail(t, "ioctl returned %ld", r);
	if (r || !w)
		return;

	switch (cmd) {
	case DTFD_IOC_FEATURES: {
		struct dtfd_features f;

		memcpy(&f, w, sizeof(f));
		if (f.version != DTFD_ABI_VERSION || f.pad ||
		    (f.settime_flags & 7) != 7 || (f.clocks & 0x383) != 0x383 ||
		    (f.features & 0x77) != 0x77)
			fz_fail(t, "features: version %u pad %u features %#llx flags %#llx clocks %#llx",
				f.version, f.pad,
				(unsigned long long)f.features,
				(unsigned long long)f.settime_flags,
				(unsigned long long)f.clocks);
		break;
	}
	case DTFD_IOC_SETTIME64:
	case DTFD_IOC_SETTIME32:
		if (outp)
			check_its(t, cmd == DTFD_IOC_SETTIME32,
				  (void *)(uintptr_t)outp, "SETTIME old");
		break;
	case DTFD_IOC_GETTIME64:
		check_its(t, 0, w, "GETTIME64");
		break;
	case DTFD_IOC_GETTIME32:
		check_its(t, 1, w, "GETTIME32");
		break;
	case DTFD_IOC_GET_TOLERANCE: {
		struct dtfd_tolerance tol;

		memcpy(&tol, w, sizeof(tol));
		if (tol.slack_ns > INT64_MAX || tol.max_defer_ns > INT64_MAX ||
		    tol.flags || tol.pad)
			fz_fail(t, "tolerance: slack %llu max_defer %llu flags %u pad %u",
				(unsigned long long)tol.slack_ns,
				(unsigned long long)tol.max_defer_ns,
				tol.flags, tol.pad);
		break;
	}
	case DTFD_IOC_GET_STATS: {
		struct dtfd_stats s;

		memcpy(&s, w, sizeof(s));
		if (s.deliveries > s.expirations ||
		    s.deferred > s.deliveries || s.backstop > s.deliveries ||
		    s.late_max_ns > s.late_total_ns)
			fz_fail(t, "stats: exp %llu del %llu late %llu/%llu deferred %llu backstop %llu",
				(unsigned long long)s.expirations,
				(unsigned long long)s.deliveries,
				(unsigned long long)s.late_total_ns,
				(unsigned long long)s.late_max_ns,
				(unsigned long long)s.deferred,
				(unsigned long long)s.backstop);
		break;
	}
	}
}

/* Our numbers with another size or direction, neighbours, random ones. */
static void op_ioctl_variant(struct thr *t, int fd, int ctl)
{
	unsigned long cmd;
	unsigned int dir, type, nr, size;
	void *w;
	uint64_t p;

	switch (below(t, 4)) {
	case 0:		/* one of ours, another size and/or direction */
		cmd = rand_cmd(t);
		dir = _IOC_DIR(cmd);
		size = _IOC_SIZE(cmd);
		if (chance(t, 500))
			dir = (unsigned int)below(t, 4);
		if (chance(t, 600))
			size = chance(t, 500) ? size + (unsigned int)below(t, 17) - 8 :
						(unsigned int)below(t, 1u << 14);
		cmd = _IOC(dir, DTFD_IOC_MAGIC, _IOC_NR(cmd), size & 0x3fff);
		break;
	case 1:		/* the neighbours of our magic and numbers */
		type = DTFD_IOC_MAGIC + (unsigned int)below(t, 5) - 2;
		nr = chance(t, 500) ? (unsigned int)below(t, 32) :
				      (unsigned int)below(t, 256);
		cmd = _IOC((unsigned int)below(t, 4), type, nr,
			   (unsigned int)below(t, 80));
		break;
	case 2:		/* timerfd's own, v1's and a few famous ones */
		{
			static const unsigned long famous[] = {
				DTFD_IOC_NOT_OURS
			};

			cmd = famous[below(t, ARRAY_SIZE(famous))];
		}
		break;
	default:	/* random, but not the numbers the VFS takes */
		do {
			cmd = (uint32_t)rnd(t);
		} while (vfs_type(_IOC_TYPE(cmd)));
		break;
	}
	if (cmd == TFD_IOC_SET_TICKS && vfs_type(_IOC_TYPE(cmd)))
		;	/* 'T' 0: timerfd's, not the VFS's: ENOTTY here */
	else if (vfs_type(_IOC_TYPE(cmd)) && cmd_kind(cmd) == K_IOC_OTHER)
		cmd = _IOC(_IOC_DIR(cmd), DTFD_IOC_MAGIC + 1, _IOC_NR(cmd),
			   _IOC_SIZE(cmd));
	p = make_ptr(t, pick_kind(t, 600), 0, 64, &w);
	if (w)
		memset(w, (int)below(t, 256), 64);
	/* an exact hit is a real call with whatever lies there */
	do_ioctl(t, fd, ctl, cmd, ioc_arg(p));
}

/* A settime that makes sense: short expiries and periods, all modes. */
static void op_settime_sane(struct thr *t, int fd, int ctl)
{
	static const uint32_t flagset[] = {
		0, DTFD_TIMER_DEFERRABLE, DTFD_TIMER_ABSTIME,
		DTFD_TIMER_ABSTIME | DTFD_TIMER_DEFERRABLE,
		DTFD_TIMER_ABSTIME | DTFD_TIMER_CANCEL_ON_SET,
		DTFD_TIMER_ABSTIME | DTFD_TIMER_CANCEL_ON_SET |
			DTFD_TIMER_DEFERRABLE,
		DTFD_TIMER_DEFERRABLE | DTFD_TIMER_PERCPU,
		DTFD_TIMER_ABSTIME | DTFD_TIMER_DEFERRABLE | DTFD_TIMER_PERCPU,
	};
	static const clockid_t absclk[] = {
		CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME,
	};
	uint32_t flags = flagset[below(t, ARRAY_SIZE(flagset))];
	long long v = chance(t, 100) ? 0 : (long long)below(t, 3000000) + 1;
	long long iv = 0;
	unsigned char *base = rw_page(t, 0);
	struct dtfd_settime a;
	struct its64 n64, o64;
	struct its32 n32;
	int l32 = !chance(t, 800);
	long r;

	switch (below(t, 4)) {
	case 0:
		iv = 1;
		break;
	case 1:
		iv = 1000 + (long long)below(t, 10000000);
		break;
	case 2:
		iv = (long long)below(t, 1000);
		break;
	default:
		iv = 0;
	}
	if (chance(t, 200)) {
		struct dtfd_tolerance tol = {
			.slack_ns = chance(t, 500) ? 0 : below(t, 2000000),
			.max_defer_ns = chance(t, 500) ? 0 : below(t, 2000000),
		};

		describe(t, "SET_TOLERANCE(%d, %llu, %llu)", fd,
			 (unsigned long long)tol.slack_ns,
			 (unsigned long long)tol.max_defer_ns);
		r = ioctl(fd, DTFD_IOC_SET_TOLERANCE, &tol);
		account_ioctl(t, K_SET_TOLERANCE, fd, ctl, r,
			      r < 0 ? errno : 0);
	}
	if (flags & DTFD_TIMER_ABSTIME && v)
		v += h_now(absclk[below(t, ARRAY_SIZE(absclk))]) -
		     (long long)below(t, 2000000);
	n64.vsec = v / NSEC_PER_SEC;
	n64.vnsec = v % NSEC_PER_SEC;
	n64.isec = iv / NSEC_PER_SEC;
	n64.insec = iv % NSEC_PER_SEC;
	n32.vsec = (int32_t)n64.vsec;
	n32.vnsec = (int32_t)n64.vnsec;
	n32.isec = (int32_t)n64.isec;
	n32.insec = (int32_t)n64.insec;
	if (!l32)
		memcpy(base + 0x200, &n64, sizeof(n64));
	else
		memcpy(base + 0x200, &n32, sizeof(n32));
	a.flags = flags;
	a.pad = 0;
	a.new_value = (uintptr_t)(base + 0x200);
	a.old_value = chance(t, 500) ? (uintptr_t)(base + 0x400) : 0;
	describe(t, "SETTIME%s(%d, flags %#x, value %lld, interval %lld)",
		 l32 ? "32" : "64", fd, flags, v, iv);
	r = ioctl(fd, l32 ? DTFD_IOC_SETTIME32 : DTFD_IOC_SETTIME64, &a);
	account_ioctl(t, l32 ? K_SETTIME32 : K_SETTIME64, fd, ctl, r,
		      r < 0 ? errno : 0);
	if (!r && a.old_value) {
		memcpy(&o64, base + 0x400, sizeof(o64));
		check_its(t, l32, &o64, "SETTIME old");
	}
}

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

static void op_read(struct thr *t, int fd)
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

static void op_readv(struct thr *t, int fd)
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

static void op_poll(struct thr *t)
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
		fd_set rd, ex;
		struct timeval tv = { 0, tmo * 1000 };
		int maxfd = -1;

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
		n = 0;	/* nothing to check below */
	} else {
		/* a bad array or a silly count */
		void *w;
		uint64_t p = make_ptr(t, pick_kind(t, 0), 0, 64, &w);
		nfds_t cnt = chance(t, 500) ? (nfds_t)below(t, 8) + 1 :
					      (nfds_t)rnd(t);

		describe(t, "poll(bad %#llx, %lu)", (unsigned long long)p,
			 (unsigned long)cnt);
		r = poll((struct pollfd *)(uintptr_t)p, cnt, 0);
		n = 0;
	}
	err = errno;
	for (i = 0; i < n; i++) {
		/* a control descriptor has no poll: the VFS's default mask */
		short ok = ctl[i] ? POLLIN | POLLOUT | POLLRDNORM | POLLWRNORM :
				    POLLIN;
		short bad = pfd[i].fd >= 0 ? (short)~ok : 0;

		if (pfd[i].revents & bad)
			fz_fail(t, "poll: revents %#x for events %#x on fd %d",
				pfd[i].revents, pfd[i].events, pfd[i].fd);
	}
	for (i = 0; i < nlocked; i++)
		if (locked[i] >= 0)
			slot_unlock(locked[i]);
	account(t, K_POLL, r, r < 0 ? err : 0);
}

static void op_epoll_ctl(struct thr *t, int fd)
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

static void op_epoll_wait(struct thr *t)
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
static void op_open(struct thr *t, int i)
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

static void op_close(struct thr *t, int i)
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
static void op_dup(struct thr *t, int from, int to)
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

static void op_fcntl(struct thr *t, int fd)
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

static void op_misc(struct thr *t, int fd, int ctl)
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

static void op_fdinfo(struct thr *t, int fd, int ctl)
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
static void op_fork(struct thr *t)
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

static void op_clock(struct thr *t)
{
	long long d = (long long)below(t, 2 * MS(2)) - MS(2);
	int r;

	describe(t, "clock step %lld ns", d);
	r = h_clock_step(d);
	account(t, K_CLOCK, r, r < 0 ? errno : 0);
}

/* ---- the loop ---- */

enum op {
	OP_IOCTL, OP_SETTIME, OP_VARIANT, OP_READ, OP_READV, OP_POLL,
	OP_EPOLL_CTL, OP_EPOLL_WAIT, OP_OPEN, OP_CLOSE, OP_DUP, OP_FCNTL,
	OP_MISC, OP_FDINFO, OP_FORK, OP_CLOCK, OP_N
};

/* relative weights */
static const unsigned int op_weight[OP_N] = {
	[OP_IOCTL] = 30000, [OP_SETTIME] = 15000, [OP_VARIANT] = 12000,
	[OP_READ] = 11000, [OP_READV] = 3000, [OP_POLL] = 7900,
	[OP_EPOLL_CTL] = 4000, [OP_EPOLL_WAIT] = 5000, [OP_OPEN] = 3000,
	[OP_CLOSE] = 600, [OP_DUP] = 1500, [OP_FCNTL] = 1500,
	[OP_MISC] = 2000, [OP_FDINFO] = 200, [OP_FORK] = 6, [OP_CLOCK] = 10,
};

static enum op pick_op(uint64_t r)
{
	static unsigned int total;
	unsigned int x, i, acc = 0;

	if (!total)
		for (i = 0; i < OP_N; i++)
			total += op_weight[i];
	x = (unsigned int)(r % total);

	for (i = 0; i < OP_N; i++) {
		acc += op_weight[i];
		if (x < acc)
			return (enum op)i;
	}
	return OP_IOCTL;
}

static void one_op(struct thr *t)
{
	uint64_t d[4];
	int i, s, fd, ctl;
	enum op op;

	/* always four draws from the thread's stream, whatever happens */
	for (i = 0; i < 4; i++)
		d[i] = h_mix(&t->rng);
	t->local = d[3];
	op = pick_op(d[0]);
	s = (int)(d[1] % FZ_SLOTS);
	t->ops++;
	t->hist_op[t->hist_n % 8] = (unsigned char)op;
	t->hist_slot[t->hist_n % 8] = (unsigned char)s;
	t->hist_n++;

	switch (op) {
	case OP_OPEN:
		op_open(t, s);
		return;
	case OP_CLOSE:
		op_close(t, s);
		return;
	case OP_DUP:
		op_dup(t, s, (int)(d[2] % FZ_SLOTS));
		return;
	case OP_POLL:
		op_poll(t);
		return;
	case OP_EPOLL_WAIT:
		op_epoll_wait(t);
		return;
	case OP_FORK:
		op_fork(t);
		return;
	case OP_CLOCK:
		op_clock(t);
		return;
	default:
		break;
	}

	fd = slot_rdlock(s);
	ctl = slots[s].ctl;
	switch (op) {
	case OP_IOCTL:
		op_ioctl_real(t, fd, ctl);
		break;
	case OP_SETTIME:
		op_settime_sane(t, fd, ctl);
		break;
	case OP_VARIANT:
		op_ioctl_variant(t, fd, ctl);
		break;
	case OP_READ:
		op_read(t, fd);
		break;
	case OP_READV:
		op_readv(t, fd);
		break;
	case OP_EPOLL_CTL:
		op_epoll_ctl(t, fd);
		break;
	case OP_FCNTL:
		op_fcntl(t, fd);
		break;
	case OP_MISC:
		op_misc(t, fd, ctl);
		break;
	case OP_FDINFO:
		op_fdinfo(t, fd, ctl);
		break;
	default:
		break;
	}
	slot_unlock(s);
}

static struct thr thrs[FZ_MAX_THREADS];
static long long start_ns;

static void *thread_main(void *arg)
{
	struct thr *t = arg;
	struct sigevent sev;
	unsigned long long next_report = 0;

	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGUSR1;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	t->have_guard = !timer_create(CLOCK_MONOTONIC, &sev, &t->guard);
	if (!t->have_guard)
		fz_fail(t, "timer_create: %s", strerror(errno));

	while (t->calls < t->quota) {
		one_op(t);
		if (t->id == 0 && t->calls >= next_report) {
			unsigned long long all = 0;
			int i;

			for (i = 0; i < nthreads; i++)
				all += __atomic_load_n(&thrs[i].calls,
						       __ATOMIC_RELAXED);
			if (next_report)
				h_diag("%llu calls, %.0f s", all,
				       (h_now(CLOCK_MONOTONIC) - start_ns) / 1e9);
			next_report += t->quota / 10 + 1;
		}
	}
	if (t->have_guard)
		timer_delete(t->guard);
	return NULL;
}

static void print_stats(void)
{
	static struct tstat sum;
	char line[600];
	int k, e, n;

	memset(&sum, 0, sizeof(sum));
	for (int i = 0; i < nthreads; i++)
		for (k = 0; k < K_NKINDS; k++) {
			sum.ok[k] += thrs[i].st.ok[k];
			for (e = 0; e < NERR; e++)
				sum.err[k][e] += thrs[i].st.err[k][e];
		}
	for (k = 0; k < K_NKINDS; k++) {
		unsigned long long all = sum.ok[k];

		for (e = 0; e < NERR; e++)
			all += sum.err[k][e];
		if (!all)
			continue;
		n = snprintf(line, sizeof(line), "%-12s %9llu calls: ok %llu",
			     kind_name[k], all, sum.ok[k]);
		for (e = 0; e < NERR && n < (int)sizeof(line) - 40; e++)
			if (sum.err[k][e])
				n += snprintf(line + n, sizeof(line) - (size_t)n,
					      ", %s %llu",
					      strerrorname_np(e) ?: "?",
					      sum.err[k][e]);
		h_diag("%s", line);
	}
}

/* after the storm: fresh timers still work, strict and deferrable */
static void sanity(void)
{
	struct itimerspec its = h_its(MS(1), 0);
	uint64_t ticks = 0;
	int fd, mode;

	for (mode = 0; mode < 2; mode++) {
		fd = dtimerfd_create(CLOCK_MONOTONIC, DTFD_CLOEXEC);
		ASSERT_OK(fd);
		if (mode)
			EXPECT_OK(dtimerfd_set_tolerance(fd, 0, MS(1)));
		EXPECT_OK(dtimerfd_settime(fd, mode ? DTFD_TIMER_DEFERRABLE : 0,
					   &its, NULL));
		EXPECTF(h_poll(fd, 5000, NULL) == 1, "%s timer did not fire",
			mode ? "deferrable" : "strict");
		EXPECTF(h_read(fd, &ticks) == 8 && ticks == 1,
			"%s: ticks %llu", mode ? "deferrable" : "strict",
			(unsigned long long)ticks);
		close(fd);
	}
}

static unsigned long long env_ull(const char *name, unsigned long long def)
{
	char prefixed[64];
	const char *s = getenv(name);

	if (!s) {
		snprintf(prefixed, sizeof(prefixed), "DTFD_TEST_%s", name + 5);
		s = getenv(prefixed);
	}
	return s && *s ? strtoull(s, NULL, 0) : def;
}

TEST(fuzz, T_DTFD_ONLY | T_NO_DEFER | T_CLOCK, 300)
{
	struct sigaction sa;
	pthread_t tids[FZ_MAX_THREADS];
	struct timespec res;
	long long t1;
	int i;

	h_require_clock_set();
	if (!clock_getres(CLOCK_MONOTONIC, &res))
		hr_res = h_ts_ns(&res);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_guard;	/* no SA_RESTART: blocking calls end */
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	h_diag("seed %#llx (replay: DTFD_FUZZ_SEED=%#llx or -s %#llx), %llu calls, %d threads%s",
	       seed, seed, seed, target_calls, nthreads,
	       seed_given ? "" : ", seed from the clock");

	ctl_fd = open(DTIMERFD_DEVICE, O_RDWR | O_CLOEXEC);
	if (ctl_fd < 0)
		h_skip("%s: %s", DTIMERFD_DEVICE, strerror(errno));
	{
		int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC), d;
		struct stat st;

		ASSERT_OK(tfd);
		ASSERT_OK(fstat(tfd, &st));
		anon_type = st.st_mode & S_IFMT;
		close(tfd);
		d = dtimerfd_create(CLOCK_MONOTONIC, DTFD_CLOEXEC);
		ASSERT_OK(d);
		have32 = ioctl(d, DTFD_IOC_GETTIME32, NULL) && errno == EFAULT;
		close(d);
	}
	/* every 8th slot empty, every 8th a control descriptor */
	for (i = 0; i < FZ_SLOTS; i++) {
		static const clockid_t clk[] = {
			CLOCK_MONOTONIC, CLOCK_REALTIME, CLOCK_BOOTTIME,
		};
		struct dtfd_create c = { clk[i % 3], O_NONBLOCK | O_CLOEXEC };

		pthread_rwlock_init(&slots[i].lock, NULL);
		slots[i].ctl = i % 8 == 6;
		if (i % 8 == 7)
			slots[i].fd = -1;
		else if (slots[i].ctl)
			slots[i].fd = open(DTIMERFD_DEVICE,
					   O_RDWR | O_NONBLOCK | O_CLOEXEC);
		else
			slots[i].fd = ioctl(ctl_fd, DTFD_IOC_CREATE, &c);
		ASSERT(i % 8 == 7 || slots[i].fd >= 0);
	}
	for (i = 0; i < FZ_EPOLLS; i++) {
		epfds[i] = epoll_create1(EPOLL_CLOEXEC);
		ASSERT_OK(epfds[i]);
	}

	for (i = 0; i < nthreads; i++) {
		struct thr *t = &thrs[i];
		uint64_t s = seed ^ (0x5851f42d4c957f2dULL * (uint64_t)(i + 1));
		unsigned char *ro;
		int k;

		t->id = i;
		t->rng = h_mix(&s);
		t->quota = target_calls / (unsigned long long)nthreads +
			   (i == 0 ? target_calls % (unsigned long long)nthreads : 0);
		t->arena = mmap(NULL, FZ_ARENA_PAGES * FZ_PAGE,
				PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ASSERT(t->arena != MAP_FAILED);
		/* the read-only page holds plausible arguments */
		ro = ro_page(t);
		for (k = 0; k < FZ_PAGE / 8; k++) {
			uint64_t v = k % 3 ? (uint64_t)(k * 1000) : 0;

			memcpy(ro + k * 8, &v, 8);
		}
		ASSERT_OK(mprotect(none_page(t), FZ_PAGE, PROT_NONE));
		ASSERT_OK(mprotect(ro, FZ_PAGE, PROT_READ));
	}

	start_ns = h_now(CLOCK_MONOTONIC);
	for (i = 0; i < nthreads; i++)
		ASSERT(!pthread_create(&tids[i], NULL, thread_main, &thrs[i]));
	for (i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);
	t1 = h_now(CLOCK_MONOTONIC);

	for (i = 0; i < nthreads; i++)
		total_calls += thrs[i].calls;
	print_stats();
	h_diag("fuzzed %llu calls in %.1f s (%.0f calls/s), seed %#llx, %d invariant failures",
	       total_calls, (t1 - start_ns) / 1e9,
	       total_calls / ((t1 - start_ns) / 1e9), seed, failures);
	EXPECT(total_calls >= target_calls);
	EXPECTF(failures == 0, "%d invariant failures (seed %#llx)", failures,
		seed);

	for (i = 0; i < FZ_SLOTS; i++)
		if (slots[i].fd >= 0)
			close(slots[i].fd);
	for (i = 0; i < FZ_EPOLLS; i++)
		close(epfds[i]);
	close(ctl_fd);
	h_clock_restore();
	sanity();
}

/* -s SEED is ours; the rest goes to the harness. */
int main(int argc, char **argv)
{
	char **args = calloc((size_t)argc + 1, sizeof(*args));
	unsigned long long rate;
	int i, n = 0;

	if (!args)
		return 1;
	args[n++] = argv[0];
	seed = env_ull("DTFD_FUZZ_SEED", 0);
	seed_given = getenv("DTFD_FUZZ_SEED") || getenv("DTFD_TEST_FUZZ_SEED");
	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-s") && i + 1 < argc) {
			seed = strtoull(argv[++i], NULL, 0);
			seed_given = 1;
		} else if (!strncmp(argv[i], "-s", 2) && argv[i][2]) {
			seed = strtoull(argv[i] + 2, NULL, 0);
			seed_given = 1;
		} else {
			args[n++] = argv[i];
		}
	}
	if (!seed_given) {
		uint64_t s = (uint64_t)h_now(CLOCK_REALTIME) ^
			     ((uint64_t)getpid() << 32);

		seed = h_mix(&s);
	}
	target_calls = env_ull("DTFD_FUZZ_CALLS", target_calls);
	nthreads = (int)env_ull("DTFD_FUZZ_THREADS", (unsigned long long)nthreads);
	if (nthreads < 1)
		nthreads = 1;
	if (nthreads > FZ_MAX_THREADS)
		nthreads = FZ_MAX_THREADS;
	trace = (int)env_ull("DTFD_FUZZ_TRACE", 0);
	/*
	 * The case's timeout follows the call count: 300 s, plus 1 s per
	 * 1,000 calls beyond 100,000 (a KASAN kernel under TCG makes about
	 * ... calls per second); DTFD_TEST_SLOW multiplies it as usual.
	 */
	rate = 1000;
	if (target_calls > 100000)
		fuzz_case.timeout = (int)(300 + (target_calls - 100000) / rate);
	return h_main(n, args);
}
