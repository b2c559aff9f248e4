/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The fuzzer's parts (fuzz.c: what it does, how to reproduce a run):
 *
 *   fuzz.c		the loop, the threads, the setup, the case and main()
 *   fuzz/report.c	the kinds of calls, failures, the checks on results,
 *			the slots and the per-thread read guard
 *   fuzz/draw.c	pointers and values, valid or not
 *   fuzz/ioctl.c	the ioctls, from ioctls.h's table
 *   fuzz/files.c	read, poll, epoll, open, close, dup, fcntl, the
 *			other file calls, fdinfo, fork and clock steps
 */
#ifndef DTFD_TESTS_FUZZ_H
#define DTFD_TESTS_FUZZ_H

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

#include "../harness.h"
#include "../ioctls.h"

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

extern const char *const kind_name[K_NKINDS];

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

/* fuzz.c: the run's */
extern struct slot slots[FZ_SLOTS];
extern int epfds[FZ_EPOLLS];
extern int ctl_fd;		/* CREATE's own, never in a slot */
extern int have32;		/* the kernel has SETTIME32/GETTIME32 */
extern mode_t anon_type;	/* fstat's file type of a timerfd */
extern int nthreads;
extern unsigned long long target_calls;
extern unsigned long long seed;
extern int seed_given;
extern int trace;
extern int failures;
extern unsigned long long total_calls;

static inline uint64_t rnd(struct thr *t)
{
	return h_mix(&t->local);
}

static inline uint64_t below(struct thr *t, uint64_t n)
{
	return n ? rnd(t) % n : 0;
}

static inline int chance(struct thr *t, unsigned int per_1000)
{
	return below(t, 1000) < per_1000;
}

/* ---- report.c ---- */

void __attribute__((format(printf, 2, 3)))
fz_fail(struct thr *t, const char *fmt, ...);
void __attribute__((format(printf, 2, 3)))
describe_(struct thr *t, const char *fmt, ...);

/* Only with DTFD_FUZZ_TRACE: formatting every call would halve the rate. */
#define describe(t, ...) do {						\
	if (trace)							\
		describe_(t, __VA_ARGS__);				\
} while (0)

void account(struct thr *t, enum kind k, long long ret, int err);
void check_its(struct thr *t, int l32, const void *p, const char *what);
void check_created(struct thr *t, int fd, const struct dtfd_create *a);
int slot_rdlock(int i);
void slot_unlock(int i);
void on_guard(int sig);
void guard_arm(struct thr *t, long long ns);
void guard_disarm(struct thr *t);

/* ---- draw.c ---- */

enum ptr_kind { P_GOOD, P_MISALIGNED, P_NULL, P_STRADDLE, P_NONE, P_RO,
		P_KERNEL, P_RANDOM };

extern const char *const ptr_name[];

unsigned char *rw_page(struct thr *t, int n);
unsigned char *none_page(struct thr *t);
unsigned char *ro_page(struct thr *t);
enum ptr_kind pick_kind(struct thr *t, unsigned int good_per_1000);
uint64_t make_ptr_w(struct thr *t, enum ptr_kind k, size_t off,
		    size_t size, void **w, int wide);
uint64_t make_ptr(struct thr *t, enum ptr_kind k, size_t off, size_t size,
		  void **w);
void fill_straddle(struct thr *t, uint64_t p, const void *src, size_t size);
unsigned long ioc_arg(uint64_t p);
int64_t rand_sec(struct thr *t);
int64_t rand_nsec(struct thr *t);
uint32_t rand_flags(struct thr *t);
uint32_t rand_pad(struct thr *t);
uint32_t rand_create_flags(struct thr *t);
uint64_t rand_u64(struct thr *t);
int32_t rand_clock(struct thr *t);

/* ---- ioctl.c ---- */

void op_ioctl_real(struct thr *t, int fd, int ctl);
void op_ioctl_variant(struct thr *t, int fd, int ctl);
void op_settime_sane(struct thr *t, int fd, int ctl);

/* ---- files.c ---- */

void op_read(struct thr *t, int fd);
void op_readv(struct thr *t, int fd);
void op_poll(struct thr *t);
void op_epoll_ctl(struct thr *t, int fd);
void op_epoll_wait(struct thr *t);
void op_open(struct thr *t, int i);
void op_close(struct thr *t, int i);
void op_dup(struct thr *t, int from, int to);
void op_fcntl(struct thr *t, int fd);
void op_misc(struct thr *t, int fd, int ctl);
void op_fdinfo(struct thr *t, int fd, int ctl);
void op_fork(struct thr *t);
void op_clock(struct thr *t);

#endif /* DTFD_TESTS_FUZZ_H */
