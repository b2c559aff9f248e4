// SPDX-License-Identifier: GPL-2.0
/*
 * dtimerfd: timerfd-compatible timers behind /dev/dtimerfd, with a
 * deferrable mode that never wakes an idle CPU.
 *
 * Each open file description is one timer (struct dtimerfd_ctx), freed
 * when the last reference to the file goes away.  The ioctls mirror the
 * timerfd system calls and check their arguments in the same order, so
 * libdtimerfd can hand out the kernel's errno unchanged; read, poll and
 * fdinfo follow fs/timerfd.c line for line.
 */

#include <linux/capability.h>
#include <linux/compat.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/poll.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/time32.h>
#include <linux/uaccess.h>
#include <linux/uio.h>

#include "dtimerfd.h"

#define DTFD_CLOCKS	(BIT(CLOCK_REALTIME) | BIT(CLOCK_MONOTONIC) | \
			 BIT(CLOCK_BOOTTIME) | BIT(CLOCK_REALTIME_ALARM) | \
			 BIT(CLOCK_BOOTTIME_ALARM))

static struct kmem_cache *dtfd_cachep;

static bool dtfd_valid_clock(s32 clockid)
{
	return clockid >= 0 && clockid < BITS_PER_LONG &&
	       (DTFD_CLOCKS & BIT(clockid));
}

/* The clock the deadline is measured on, as the hrtimer core chooses it. */
static int dtfd_eclock(int clockid, unsigned int flags)
{
	switch (clockid) {
	case CLOCK_REALTIME_ALARM:
		return CLOCK_REALTIME;
	case CLOCK_BOOTTIME_ALARM:
		return CLOCK_BOOTTIME;
	case CLOCK_REALTIME:
		/* relative realtime timers ignore clock steps */
		return flags & DTFD_TIMER_ABSTIME ? CLOCK_REALTIME :
						    CLOCK_MONOTONIC;
	default:
		return clockid;
	}
}

static unsigned int dtfd_watch_for(const struct dtimerfd_ctx *ctx,
				   unsigned int flags)
{
	unsigned int watch = 0;
	bool abs = flags & DTFD_TIMER_ABSTIME;

	if ((ctx->clockid == CLOCK_REALTIME ||
	     ctx->clockid == CLOCK_REALTIME_ALARM) &&
	    abs && (flags & DTFD_TIMER_CANCEL_ON_SET))
		watch |= DTFD_WATCH_CANCEL;
	if ((flags & DTFD_TIMER_DEFERRABLE) &&
	    (ctx->clockid == CLOCK_BOOTTIME ||
	     (ctx->clockid == CLOCK_REALTIME && abs)))
		watch |= DTFD_WATCH_REARM;
	return watch;
}

static int dtfd_get_its(struct itimerspec64 *its, u32 layout, u64 uptr)
{
	void __user *p = u64_to_user_ptr(uptr);

	if (layout == DTFD_ITS_64)
		return get_itimerspec64(its, p);
#ifdef CONFIG_COMPAT_32BIT_TIME
	return get_old_itimerspec32(its, p);
#else
	return -EINVAL;
#endif
}

static int dtfd_put_its(const struct itimerspec64 *its, u32 layout, u64 uptr)
{
	void __user *p = u64_to_user_ptr(uptr);

	if (layout == DTFD_ITS_64)
		return put_itimerspec64(its, p);
#ifdef CONFIG_COMPAT_32BIT_TIME
	return put_old_itimerspec32(its, p);
#else
	return -EINVAL;
#endif
}

static bool dtfd_valid_layout(u32 layout)
{
	if (layout == DTFD_ITS_64)
		return true;
	return IS_ENABLED(CONFIG_COMPAT_32BIT_TIME) && layout == DTFD_ITS_32;
}

/*
 * A periodic timer that fired: advance the deadline past now, arm the next
 * period and return the expirations that passed since the one delivered
 * (timerfd's "overruns - 1").  When CLOCK_REALTIME stepped back behind the
 * deadline nothing is forwarded and this is -1 in u64, as in timerfd: the
 * delivered tick is taken back and read(2) may return 0.  The statistics
 * only ever count up, so they take no part in that.
 */
static u64 dtfd_rearm(struct dtimerfd_ctx *ctx, ktime_t now)
{
	u64 orun = dtfd_forward(ctx, now);

	if (orun)
		ctx->stats.expirations += orun - 1;
	dtfd_arm(ctx, now);
	return orun - 1;
}

/*
 * Program @ctx for @new; the wake-up sources are cancelled.  @now is the
 * time on the clock the old setting was measured on.
 */
static int dtfd_setup(struct dtimerfd_ctx *ctx, unsigned int flags,
		      const struct itimerspec64 *new, ktime_t now)
{
	ktime_t texp = timespec64_to_ktime(new->it_value);
	int old_eclock = ctx->eclock;

	ctx->expired = false;
	ctx->queued = false;
	ctx->backstop = false;
	ctx->ticks = 0;
	ctx->tintv = timespec64_to_ktime(new->it_interval);
	ctx->mode = flags & DTFD_TIMER_DEFERRABLE ? DTFD_MODE_DEFERRABLE :
						    DTFD_MODE_STRICT;
	ctx->eclock = dtfd_eclock(ctx->clockid, flags);
	if (!dtfd_isalarm(ctx))
		dtfd_timer_bind(ctx);

	if (texp) {
		if (ctx->eclock != old_eclock)
			now = dtfd_now(ctx);
		if (flags & DTFD_TIMER_ABSTIME)
			texp = dtfd_timens_to_host(ctx->clockid, texp);
		else
			texp = ktime_add_safe(texp, now);
		ctx->expires = texp;
		ctx->armed_at = now;
		dtfd_arm(ctx, now);
		if (dtfd_canceled(ctx))
			return -ECANCELED;
	} else if (!dtfd_isalarm(ctx)) {
		/*
		 * timerfd re-initialises the hrtimer with a zero expiry; an
		 * alarm keeps its old one, which gettime keeps reporting.
		 */
		ctx->expires = 0;
	}

	ctx->settime_flags = flags & DTFD_TFD_FLAGS;
	return 0;
}

static int dtfd_settime(struct dtimerfd_ctx *ctx, unsigned int flags,
			const struct itimerspec64 *new, struct itimerspec64 *old)
{
	ktime_t now;
	int ret;

	dtfd_clock_watch(ctx, dtfd_watch_for(ctx, flags));

	/* Stop the wake-up sources before reprogramming, as timerfd does. */
	for (;;) {
		spin_lock_irq(&ctx->wqh.lock);
		dtfd_cancel_check(ctx);
		dtfd_check_due(ctx);
		if (dtfd_timer_try_cancel(ctx) >= 0)
			break;
		spin_unlock_irq(&ctx->wqh.lock);
		dtfd_timer_cancel_wait(ctx);
	}

	/*
	 * An expired periodic timer is advanced so the old value tells when
	 * it would have fired next; ticks do not matter, they are reset.
	 */
	now = dtfd_now(ctx);
	if (ctx->expired && ctx->tintv)
		dtfd_forward(ctx, now);

	old->it_value = ktime_to_timespec64(dtfd_remaining(ctx, now));
	old->it_interval = ktime_to_timespec64(ctx->tintv);

	ret = dtfd_setup(ctx, flags, new, now);
	spin_unlock_irq(&ctx->wqh.lock);
	return ret;
}

/* Fix the clock: the first settime binds the default one. */
static void dtfd_bind_default(struct dtimerfd_ctx *ctx)
{
	if (READ_ONCE(ctx->bound))
		return;
	spin_lock_irq(&ctx->wqh.lock);
	WRITE_ONCE(ctx->bound, true);
	spin_unlock_irq(&ctx->wqh.lock);
}

/* timerfd_settime(2): same checks in the same order, same results. */
static long dtfd_ioctl_settime(struct dtimerfd_ctx *ctx, void __user *argp)
{
	struct itimerspec64 new, old;
	struct dtfd_settime arg;
	int ret;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	if (!dtfd_valid_layout(arg.layout))
		return -EINVAL;
	if (dtfd_get_its(&new, arg.layout, arg.new_value))
		return -EFAULT;
	if ((arg.flags & ~DTFD_SETTIME_FLAGS) || !itimerspec64_valid(&new))
		return -EINVAL;

	/* the clock as INIT left it: INIT binds under setup_lock too */
	mutex_lock(&ctx->setup_lock);
	dtfd_bind_default(ctx);
	/* an alarm must wake the machine: it cannot be deferrable */
	if ((arg.flags & DTFD_TIMER_DEFERRABLE) && dtfd_isalarm(ctx))
		ret = -EINVAL;
	else if (dtfd_isalarm(ctx) && !capable(CAP_WAKE_ALARM))
		ret = -EPERM;
	else
		ret = dtfd_settime(ctx, arg.flags, &new, &old);
	mutex_unlock(&ctx->setup_lock);
	if (ret)
		return ret;
	if (arg.old_value && dtfd_put_its(&old, arg.layout, arg.old_value))
		return -EFAULT;
	return 0;
}

/*
 * timerfd_gettime(2), into @cur: one clock read, for the deferrable check,
 * the periodic re-arm and the remaining time alike.
 */
static void dtfd_gettime(struct dtimerfd_ctx *ctx, struct itimerspec64 *cur)
{
	ktime_t now;

	spin_lock_irq(&ctx->wqh.lock);
	dtfd_cancel_check(ctx);
	now = dtfd_now(ctx);
	if (dtfd_deferred(ctx))
		dtfd_deliver_due(ctx, now);
	if (ctx->expired && ctx->tintv) {
		ctx->expired = false;
		ctx->ticks += dtfd_rearm(ctx, now);
	}
	cur->it_value = ktime_to_timespec64(dtfd_remaining(ctx, now));
	cur->it_interval = ktime_to_timespec64(ctx->tintv);
	spin_unlock_irq(&ctx->wqh.lock);
}

static long dtfd_ioctl_gettime(struct dtimerfd_ctx *ctx, void __user *argp)
{
	struct dtfd_gettime arg;
	struct itimerspec64 cur;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	if (!dtfd_valid_layout(arg.layout) || arg.pad)
		return -EINVAL;
	dtfd_gettime(ctx, &cur);
	return dtfd_put_its(&cur, arg.layout, arg.curr_value) ? -EFAULT : 0;
}

/* DTFD_IOC_GETTIME64: the argument is the caller's itimerspec itself */
static long dtfd_ioctl_gettime64(struct dtimerfd_ctx *ctx, void __user *argp)
{
	struct itimerspec64 cur;

	dtfd_gettime(ctx, &cur);
	return put_itimerspec64(&cur, argp) ? -EFAULT : 0;
}

/* Bind the clock, as timerfd_create(2) does; once, before any settime. */
static long dtfd_ioctl_init(struct dtimerfd_ctx *ctx, void __user *argp)
{
	struct dtfd_init arg;
	long ret = 0;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	if (arg.flags || !dtfd_valid_clock(arg.clockid))
		return -EINVAL;
	if ((arg.clockid == CLOCK_REALTIME_ALARM ||
	     arg.clockid == CLOCK_BOOTTIME_ALARM) && !capable(CAP_WAKE_ALARM))
		return -EPERM;

	mutex_lock(&ctx->setup_lock);
	spin_lock_irq(&ctx->wqh.lock);
	if (ctx->bound) {
		ret = -EBUSY;
	} else {
		ctx->clockid = arg.clockid;
		ctx->eclock = dtfd_eclock(arg.clockid, 0);
		dtfd_timer_bind(ctx);
		WRITE_ONCE(ctx->bound, true);
	}
	spin_unlock_irq(&ctx->wqh.lock);
	mutex_unlock(&ctx->setup_lock);
	return ret;
}

/* TFD_IOC_SET_TICKS: for checkpoint/restore */
static long dtfd_ioctl_set_ticks(struct dtimerfd_ctx *ctx, void __user *argp)
{
	long ret = 0;
	u64 ticks;

	if (copy_from_user(&ticks, argp, sizeof(ticks)))
		return -EFAULT;
	if (!ticks)
		return -EINVAL;

	spin_lock_irq(&ctx->wqh.lock);
	dtfd_cancel_check(ctx);
	if (!dtfd_canceled(ctx)) {
		ctx->ticks = ticks;
		wake_up_locked_poll(&ctx->wqh, EPOLLIN);
	} else {
		ret = -ECANCELED;
	}
	spin_unlock_irq(&ctx->wqh.lock);
	return ret;
}

/* dtfd_tolerance: slack for strict timers, a bound for deferrable ones */
static long dtfd_ioctl_set_tolerance(struct dtimerfd_ctx *ctx,
				     void __user *argp)
{
	struct dtfd_tolerance tol;

	if (copy_from_user(&tol, argp, sizeof(tol)))
		return -EFAULT;
	if (tol.flags || tol.pad)
		return -EINVAL;

	spin_lock_irq(&ctx->wqh.lock);
	ctx->slack = min_t(u64, tol.slack_ns, KTIME_MAX);
	ctx->max_defer = min_t(u64, tol.max_defer_ns, KTIME_MAX);
	spin_unlock_irq(&ctx->wqh.lock);
	return 0;
}

static long dtfd_ioctl_get_tolerance(struct dtimerfd_ctx *ctx,
				     void __user *argp)
{
	struct dtfd_tolerance tol = { 0 };

	spin_lock_irq(&ctx->wqh.lock);
	tol.slack_ns = ctx->slack;
	tol.max_defer_ns = ctx->max_defer;
	spin_unlock_irq(&ctx->wqh.lock);
	return copy_to_user(argp, &tol, sizeof(tol)) ? -EFAULT : 0;
}

static long dtfd_ioctl_get_stats(struct dtimerfd_ctx *ctx, void __user *argp)
{
	struct dtfd_stats st;

	spin_lock_irq(&ctx->wqh.lock);
	st = ctx->stats;
	spin_unlock_irq(&ctx->wqh.lock);
	return copy_to_user(argp, &st, sizeof(st)) ? -EFAULT : 0;
}

static long dtfd_ioctl_features(void __user *argp)
{
	struct dtfd_features f = {
		.version = DTFD_ABI_VERSION,
		.features = DTFD_FEATURE_DEFERRABLE | DTFD_FEATURE_CANCEL_ON_SET |
			    DTFD_FEATURE_ALARM | DTFD_FEATURE_SLACK |
			    DTFD_FEATURE_BOUNDED | DTFD_FEATURE_STATS,
		.settime_flags = DTFD_SETTIME_FLAGS,
		.clocks = DTFD_CLOCKS,
	};

	if (IS_ENABLED(CONFIG_TIME_NS))
		f.features |= DTFD_FEATURE_TIMENS;
	return copy_to_user(argp, &f, sizeof(f)) ? -EFAULT : 0;
}

static long dtimerfd_ioctl(struct file *file, unsigned int cmd,
			   unsigned long arg)
{
	struct dtimerfd_ctx *ctx = file->private_data;
	void __user *argp = (void __user *)arg;

	switch (cmd) {
	case DTFD_IOC_SETTIME:
		return dtfd_ioctl_settime(ctx, argp);
	case DTFD_IOC_GETTIME64:
		return dtfd_ioctl_gettime64(ctx, argp);
	case DTFD_IOC_GETTIME:
		return dtfd_ioctl_gettime(ctx, argp);
	case DTFD_IOC_SET_TICKS:
		return dtfd_ioctl_set_ticks(ctx, argp);
	case DTFD_IOC_INIT:
		return dtfd_ioctl_init(ctx, argp);
	case DTFD_IOC_FEATURES:
		return dtfd_ioctl_features(argp);
	case DTFD_IOC_SET_TOLERANCE:
		return dtfd_ioctl_set_tolerance(ctx, argp);
	case DTFD_IOC_GET_TOLERANCE:
		return dtfd_ioctl_get_tolerance(ctx, argp);
	case DTFD_IOC_GET_STATS:
		return dtfd_ioctl_get_stats(ctx, argp);
	default:
		return -ENOTTY;
	}
}

/*
 * read_iter, as timerfd has it since it learnt io_uring: IOCB_NOWAIT counts
 * as O_NONBLOCK, and a readv() gathers the 8 bytes across segments.
 */
static ssize_t dtimerfd_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct file *file = iocb->ki_filp;
	struct dtimerfd_ctx *ctx = file->private_data;
	ssize_t res;
	u64 ticks = 0;

	if (iov_iter_count(to) < sizeof(ticks))
		return -EINVAL;

	spin_lock_irq(&ctx->wqh.lock);
	dtfd_cancel_check(ctx);
	dtfd_check_due(ctx);
	if (file->f_flags & O_NONBLOCK || iocb->ki_flags & IOCB_NOWAIT)
		res = -EAGAIN;
	else
		res = wait_event_interruptible_locked_irq(ctx->wqh, ctx->ticks);
	/* a step while it slept counts before the expiry that woke it */
	dtfd_cancel_check(ctx);

	/* After a clock change userspace must re-evaluate: drop the ticks. */
	if (dtfd_canceled(ctx)) {
		ctx->ticks = 0;
		ctx->expired = false;
		res = -ECANCELED;
	}

	if (ctx->ticks) {
		ticks = ctx->ticks;
		if (ctx->expired && ctx->tintv)
			ticks += dtfd_rearm(ctx, dtfd_now(ctx));
		ctx->expired = false;
		ctx->ticks = 0;
	}
	spin_unlock_irq(&ctx->wqh.lock);

	if (ticks) {
		res = copy_to_iter(&ticks, sizeof(ticks), to);
		if (!res)
			res = -EFAULT;
	}
	return res;
}

static __poll_t dtimerfd_poll(struct file *file, poll_table *wait)
{
	struct dtimerfd_ctx *ctx = file->private_data;
	__poll_t events = 0;
	unsigned long flags;

	poll_wait(file, &ctx->wqh, wait);

	spin_lock_irqsave(&ctx->wqh.lock, flags);
	dtfd_cancel_check(ctx);
	dtfd_check_due(ctx);
	if (ctx->ticks)
		events |= EPOLLIN;
	spin_unlock_irqrestore(&ctx->wqh.lock, flags);

	return events;
}

#ifdef CONFIG_PROC_FS
/* timerfd's five lines, same names and format, then ours. */
static void dtimerfd_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct dtimerfd_ctx *ctx = file->private_data;
	struct timespec64 value, interval;
	unsigned int flags, mode;
	ktime_t slack, max_defer;
	struct dtfd_stats st;
	int clockid;
	u64 ticks;

	spin_lock_irq(&ctx->wqh.lock);
	dtfd_cancel_check(ctx);
	clockid = ctx->clockid;
	ticks = ctx->ticks;
	flags = ctx->settime_flags;
	mode = ctx->mode;
	value = ktime_to_timespec64(dtfd_remaining(ctx, dtfd_now(ctx)));
	interval = ktime_to_timespec64(ctx->tintv);
	slack = ctx->slack;
	max_defer = ctx->max_defer;
	st = ctx->stats;
	spin_unlock_irq(&ctx->wqh.lock);

	seq_printf(m,
		   "clockid: %d\n"
		   "ticks: %llu\n"
		   "settime flags: 0%o\n"
		   "it_value: (%llu, %llu)\n"
		   "it_interval: (%llu, %llu)\n",
		   clockid, (unsigned long long)ticks, flags,
		   (unsigned long long)value.tv_sec,
		   (unsigned long long)value.tv_nsec,
		   (unsigned long long)interval.tv_sec,
		   (unsigned long long)interval.tv_nsec);
	seq_printf(m,
		   "dtimerfd-mode: %s\n"
		   "dtimerfd-slack-ns: %lld\n"
		   "dtimerfd-max-defer-ns: %lld\n"
		   "dtimerfd-expirations: %llu\n"
		   "dtimerfd-deliveries: %llu\n"
		   "dtimerfd-late-total-ns: %llu\n"
		   "dtimerfd-late-max-ns: %llu\n"
		   "dtimerfd-deferred: %llu\n"
		   "dtimerfd-backstop: %llu\n",
		   mode == DTFD_MODE_DEFERRABLE ? "deferrable" : "strict",
		   slack, max_defer,
		   st.expirations, st.deliveries, st.late_total_ns,
		   st.late_max_ns, st.deferred, st.backstop);
}
#else
#define dtimerfd_show_fdinfo NULL
#endif

static int dtimerfd_open(struct inode *inode, struct file *file)
{
	struct dtimerfd_ctx *ctx;

	ctx = kmem_cache_zalloc(dtfd_cachep, GFP_KERNEL);
	if (!ctx)
		return -ENOMEM;

	init_waitqueue_head(&ctx->wqh);
	mutex_init(&ctx->setup_lock);
	INIT_LIST_HEAD(&ctx->clist);
	ctx->clockid = CLOCK_MONOTONIC;
	ctx->eclock = CLOCK_MONOTONIC;
	dtfd_timer_init(ctx);

	/*
	 * Look like a timerfd's anonymous file: no O_LARGEFILE in its flags
	 * (F_GETFL, fdinfo), no positional I/O (pread/pwrite are ESPIPE),
	 * lseek succeeds and does nothing.
	 */
	file->f_flags &= ~O_LARGEFILE;
	file->f_mode &= ~(FMODE_PREAD | FMODE_PWRITE);
	file->f_mode |= FMODE_NOWAIT;
	file->private_data = ctx;
	return 0;
}

static int dtimerfd_release(struct inode *inode, struct file *file)
{
	struct dtimerfd_ctx *ctx = file->private_data;

	dtfd_clock_watch(ctx, 0);
	dtfd_timer_shutdown(ctx);
	mutex_destroy(&ctx->setup_lock);
	kmem_cache_free(dtfd_cachep, ctx);
	return 0;
}

static const struct file_operations dtimerfd_fops = {
	.owner		= THIS_MODULE,
	.open		= dtimerfd_open,
	.release	= dtimerfd_release,
	.read_iter	= dtimerfd_read_iter,
	.poll		= dtimerfd_poll,
	.unlocked_ioctl	= dtimerfd_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
	.show_fdinfo	= dtimerfd_show_fdinfo,
};

static struct miscdevice dtimerfd_misc = {
	.minor		= MISC_DYNAMIC_MINOR,
	.name		= "dtimerfd",
	.fops		= &dtimerfd_fops,
	/* timers are unprivileged, as timerfd_create(2) is */
	.mode		= 0666,
};

static int __init dtimerfd_init(void)
{
	int ret;

	dtfd_cachep = KMEM_CACHE(dtimerfd_ctx, SLAB_ACCOUNT);
	if (!dtfd_cachep)
		return -ENOMEM;

	ret = dtfd_clock_init();
	if (ret)
		goto err_cache;

	/* last: nothing can open the device before everything is ready */
	ret = misc_register(&dtimerfd_misc);
	if (ret)
		goto err_clock;
	return 0;

err_clock:
	dtfd_clock_exit();
err_cache:
	kmem_cache_destroy(dtfd_cachep);
	return ret;
}

static void __exit dtimerfd_exit(void)
{
	misc_deregister(&dtimerfd_misc);
	dtfd_clock_exit();
	kmem_cache_destroy(dtfd_cachep);
}

module_init(dtimerfd_init);
module_exit(dtimerfd_exit);

MODULE_AUTHOR("dtimerfd developers");
MODULE_DESCRIPTION("timerfd-compatible timers with a deferrable mode");
MODULE_LICENSE("GPL");
MODULE_VERSION(KBUILD_DTIMERFD_VERSION);
