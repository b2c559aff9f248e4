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
#include "fuzz/fuzz.h"

struct slot slots[FZ_SLOTS];
int epfds[FZ_EPOLLS];
int ctl_fd;		/* CREATE's own, never in a slot */
int have32;		/* the kernel has SETTIME32/GETTIME32 */
mode_t anon_type;	/* fstat's file type of a timerfd */
int nthreads = 4;
unsigned long long target_calls = 200000;
unsigned long long seed;
int seed_given;
int trace;
int failures;
unsigned long long total_calls;
static long long hr_res = 1;

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

/* how this kernel's descriptors look: a timerfd's file type, 32-bit time */
static void probe_kernel(void)
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

/* every 8th slot empty, every 8th a control descriptor; the epoll sets */
static void fill_slots(void)
{
	int i;

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
}

/* thread @i's generator, share of the calls and arena */
static void thread_init(struct thr *t, int i)
{
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

static void close_slots(void)
{
	int i;

	for (i = 0; i < FZ_SLOTS; i++)
		if (slots[i].fd >= 0)
			close(slots[i].fd);
	for (i = 0; i < FZ_EPOLLS; i++)
		close(epfds[i]);
	close(ctl_fd);
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
	probe_kernel();
	fill_slots();
	for (i = 0; i < nthreads; i++)
		thread_init(&thrs[i], i);

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

	close_slots();
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
