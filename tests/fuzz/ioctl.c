// SPDX-License-Identifier: GPL-2.0
/*
 * The fuzzer's ioctls: every one of ioctls.h's table with random
 * arguments, their variants and neighbours, and settimes that make sense.
 */
#include "fuzz.h"

/* ---- the calls ---- */

/* the ioctls' kinds are their indexes in ioctls.h */
_Static_assert((int)K_IOC_OTHER == (int)IOC_N, "one kind per ioctl");

/* one of our ioctls, at random: its index in ioctls.h's table */
static enum dtfd_ioctl rand_ioctl(struct thr *t)
{
	return (enum dtfd_ioctl)below(t, IOC_N);
}

/* one of our ioctl numbers, at random */
static unsigned long rand_cmd(struct thr *t)
{
	return dtfd_ioctls[rand_ioctl(t)].cmd;
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

/*
 * The bytes an output argument is given, garbage checked on the way out:
 * every argument of the table fits.
 */
#define FZ_IOC_ARG	48
#define IOC_FITS(name, nr, arg, fd, errs)				\
	_Static_assert(sizeof(arg) <= FZ_IOC_ARG,			\
		       "DTFD_IOC_" #name "'s argument exceeds FZ_IOC_ARG");
DTFD_IOCTLS(IOC_FITS)
#undef IOC_FITS

/*
 * An argument struct for ioctl @i of the table, valid or not, built in
 * @buf; its size.  *@outp: where SETTIME's old value lands, or 0.
 */
static size_t build_arg(struct thr *t, enum dtfd_ioctl i, unsigned char *buf,
			uint64_t *outp)
{
	void *w;

	*outp = 0;
	switch (i) {
	case IOC_CREATE: {
		struct dtfd_create a = {
			.clockid = rand_clock(t),
			.flags = rand_create_flags(t),
		};

		memcpy(buf, &a, sizeof(a));
		return sizeof(a);
	}
	case IOC_SETTIME64:
	case IOC_SETTIME32: {
		int l32 = i == IOC_SETTIME32;
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
	case IOC_SET_TICKS: {
		uint64_t v = rand_u64(t);

		memcpy(buf, &v, sizeof(v));
		return sizeof(v);
	}
	case IOC_SET_TOLERANCE: {
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
		memset(buf, 0xa5, FZ_IOC_ARG);
		return FZ_IOC_ARG;
	}
}

/*
 * What a successful ioctl @i of the table wrote to @w (SETTIME: to
 * @outp, its old value): features as the ABI promises, times never
 * negative or with tv_nsec >= 1e9, a tolerance within range, statistics
 * consistent.
 */
static void check_ioctl_out(struct thr *t, enum dtfd_ioctl i, const void *w,
			    uint64_t outp)
{
	switch (i) {
	case IOC_FEATURES: {
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
	case IOC_SETTIME64:
	case IOC_SETTIME32:
		if (outp)
			check_its(t, i == IOC_SETTIME32,
				  (void *)(uintptr_t)outp, "SETTIME old");
		break;
	case IOC_GETTIME64:
		check_its(t, 0, w, "GETTIME64");
		break;
	case IOC_GETTIME32:
		check_its(t, 1, w, "GETTIME32");
		break;
	case IOC_GET_TOLERANCE: {
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
	case IOC_GET_STATS: {
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
	default:
		break;
	}
}

/*
 * A real command with a random argument behind a pointer of any kind, on
 * a descriptor of either kind (@ctl: a control descriptor).
 */
void op_ioctl_real(struct thr *t, int fd, int ctl)
{
	enum dtfd_ioctl i = rand_ioctl(t);
	unsigned long cmd = dtfd_ioctls[i].cmd;
	unsigned char buf[64];
	enum ptr_kind pk = pick_kind(t, 850);
	uint64_t outp, p;
	size_t size;
	void *w;
	long r;
	int err;

	size = build_arg(t, i, buf, &outp);
	p = make_ptr(t, pk, 0, size, &w);
	if (w)
		memcpy(w, buf, size);
	else if (pk == P_STRADDLE)
		fill_straddle(t, p, buf, size);
	if (sizeof(void *) == 4 && p > UINT32_MAX)
		p = (uint32_t)p;

	describe(t, "ioctl(%d, %s, %s arg)", fd, kind_name[i], ptr_name[pk]);
	r = ioctl(fd, cmd, ioc_arg(p));
	err = errno;
	account_ioctl(t, (enum kind)i, fd, ctl, r, r < 0 ? err : 0);
	if (i == IOC_CREATE && r >= 0) {
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
	check_ioctl_out(t, i, w, outp);
}

/* Our numbers with another size or direction, neighbours, random ones. */
void op_ioctl_variant(struct thr *t, int fd, int ctl)
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
void op_settime_sane(struct thr *t, int fd, int ctl)
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
