// SPDX-License-Identifier: GPL-2.0
/*
 * dtimerfd: timerfd-compatible timers with a deferrable mode that never
 * wakes an idle CPU.
 *
 * /dev/dtimerfd is a factory, as /dev/userfaultfd is: each open gives a
 * control descriptor without state, and DTFD_IOC_CREATE on it returns a
 * timer descriptor on the anonymous inode, made exactly as
 * timerfd_create(2) makes its own, so that it looks like one to the VFS
 * (/proc/PID/fd, reopening, chmod, F_GETFL, pread).  This file is the
 * device: file operations and ioctl decoding, and every copy to and from
 * user space, with the timerfd system calls' checks in their order; the
 * timer itself is timer.c's.
 */

#include <linux/anon_inodes.h>
#include <linux/capability.h>
#include <linux/compat.h>
#include <linux/fcntl.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/seq_file.h>
#include <linux/time32.h>
#include <linux/uaccess.h>
#include <linux/uio.h>

#include "dtfd.h"

/* timerfd_create(2)'s flags: TFD_CLOEXEC and TFD_NONBLOCK */
#define DTFD_CREATE_FLAGS	(O_CLOEXEC | O_NONBLOCK)

static const struct file_operations dtfd_timer_fops;

static int dtfd_get_its(struct itimerspec64 *its, u64 uptr, bool its32)
{
#ifdef CONFIG_COMPAT_32BIT_TIME
	if (its32)
		return get_old_itimerspec32(its, u64_to_user_ptr(uptr));
#endif
	return get_itimerspec64(its, u64_to_user_ptr(uptr));
}

static int dtfd_put_its(const struct itimerspec64 *its, void __user *p,
			bool its32)
{
#ifdef CONFIG_COMPAT_32BIT_TIME
	if (its32)
		return put_old_itimerspec32(its, p);
#endif
	return put_itimerspec64(its, p);
}

/* timerfd_settime(2): same checks in the same order, same results. */
static long dtfd_ioctl_settime(struct dtfd_ctx *ctx, void __user *argp,
			       bool its32)
{
	struct itimerspec64 new, old;
	struct dtfd_settime arg;
	int ret;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	if (arg.pad)
		return -EINVAL;
	if (dtfd_get_its(&new, arg.new_value, its32))
		return -EFAULT;
	if ((arg.flags & ~DTFD_SETTIME_FLAGS) || !itimerspec64_valid(&new))
		return -EINVAL;

	ret = dtfd_timer_settime(ctx, arg.flags, &new, &old);
	if (ret)
		return ret;
	if (arg.old_value &&
	    dtfd_put_its(&old, u64_to_user_ptr(arg.old_value), its32))
		return -EFAULT;
	return 0;
}

/* timerfd_gettime(2): the argument is the caller's itimerspec itself */
static long dtfd_ioctl_gettime(struct dtfd_ctx *ctx, void __user *argp,
			       bool its32)
{
	struct itimerspec64 cur;

	dtfd_timer_gettime(ctx, &cur);
	return dtfd_put_its(&cur, argp, its32) ? -EFAULT : 0;
}

/* TFD_IOC_SET_TICKS */
static long dtfd_ioctl_set_ticks(struct dtfd_ctx *ctx, void __user *argp)
{
	u64 ticks;

	if (copy_from_user(&ticks, argp, sizeof(ticks)))
		return -EFAULT;
	if (!ticks)
		return -EINVAL;
	return dtfd_set_ticks(ctx, ticks);
}

static long dtfd_ioctl_set_tolerance(struct dtfd_ctx *ctx, void __user *argp)
{
	struct dtfd_tolerance tol;

	if (copy_from_user(&tol, argp, sizeof(tol)))
		return -EFAULT;
	if (tol.flags || tol.pad)
		return -EINVAL;
	dtfd_set_tolerance(ctx, tol.slack_ns, tol.max_defer_ns);
	return 0;
}

static long dtfd_ioctl_get_tolerance(struct dtfd_ctx *ctx, void __user *argp)
{
	struct dtfd_tolerance tol = { 0 };

	dtfd_get_tolerance(ctx, &tol.slack_ns, &tol.max_defer_ns);
	return copy_to_user(argp, &tol, sizeof(tol)) ? -EFAULT : 0;
}

static long dtfd_ioctl_get_stats(struct dtfd_ctx *ctx, void __user *argp)
{
	struct dtfd_stats st;

	dtfd_get_stats(ctx, &st);
	return copy_to_user(argp, &st, sizeof(st)) ? -EFAULT : 0;
}

static long dtfd_timer_ioctl(struct file *file, unsigned int cmd,
			     unsigned long arg)
{
	struct dtfd_ctx *ctx = file->private_data;
	void __user *argp = (void __user *)arg;

	switch (cmd) {
	case DTFD_IOC_SETTIME64:
		return dtfd_ioctl_settime(ctx, argp, false);
	case DTFD_IOC_GETTIME64:
		return dtfd_ioctl_gettime(ctx, argp, false);
#ifdef CONFIG_COMPAT_32BIT_TIME
	case DTFD_IOC_SETTIME32:
		return dtfd_ioctl_settime(ctx, argp, true);
	case DTFD_IOC_GETTIME32:
		return dtfd_ioctl_gettime(ctx, argp, true);
#endif
	case DTFD_IOC_SET_TICKS:
		return dtfd_ioctl_set_ticks(ctx, argp);
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
static ssize_t dtfd_timer_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct file *file = iocb->ki_filp;
	bool nonblock = file->f_flags & O_NONBLOCK ||
			iocb->ki_flags & IOCB_NOWAIT;
	ssize_t res;
	u64 ticks;

	if (iov_iter_count(to) < sizeof(ticks))
		return -EINVAL;

	res = dtfd_read_ticks(file->private_data, nonblock, &ticks);
	if (ticks) {
		res = copy_to_iter(&ticks, sizeof(ticks), to);
		if (!res)
			res = -EFAULT;
	}
	return res;
}

static __poll_t dtfd_timer_poll(struct file *file, poll_table *wait)
{
	struct dtfd_ctx *ctx = file->private_data;

	poll_wait(file, &ctx->wqh, wait);
	return dtfd_readable(ctx) ? EPOLLIN : 0;
}

#ifdef CONFIG_PROC_FS
/* timerfd's five lines, same names and format, then ours. */
static void dtfd_timer_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct dtfd_snapshot s;

	dtfd_snapshot(file->private_data, &s);
	seq_printf(m,
		   "clockid: %d\n"
		   "ticks: %llu\n"
		   "settime flags: 0%o\n"
		   "it_value: (%llu, %llu)\n"
		   "it_interval: (%llu, %llu)\n",
		   s.clockid, (unsigned long long)s.ticks, s.settime_flags,
		   (unsigned long long)s.value.tv_sec,
		   (unsigned long long)s.value.tv_nsec,
		   (unsigned long long)s.interval.tv_sec,
		   (unsigned long long)s.interval.tv_nsec);
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
		   s.mode, s.slack, s.max_defer,
		   s.stats.expirations, s.stats.deliveries,
		   s.stats.late_total_ns, s.stats.late_max_ns,
		   s.stats.deferred, s.stats.backstop);
}
#else
#define dtfd_timer_show_fdinfo NULL
#endif

static int dtfd_timer_release(struct inode *inode, struct file *file)
{
	dtfd_timer_free(file->private_data);
	return 0;
}

static const struct file_operations dtfd_timer_fops = {
	.owner		= THIS_MODULE,
	.release	= dtfd_timer_release,
	.read_iter	= dtfd_timer_read_iter,
	.poll		= dtfd_timer_poll,
	.unlocked_ioctl	= dtfd_timer_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
	.show_fdinfo	= dtfd_timer_show_fdinfo,
};

/*
 * timerfd_create(2): the same checks in the same order, and the
 * descriptor made the same way, FMODE_NOWAIT included (io_uring).
 */
static long dtfd_ioctl_create(void __user *argp)
{
	struct dtfd_create arg;
	struct dtfd_ctx *ctx;
	struct file *file;
	int fd;

	if (copy_from_user(&arg, argp, sizeof(arg)))
		return -EFAULT;
	if ((arg.flags & ~DTFD_CREATE_FLAGS) || !dtfd_valid_clock(arg.clockid))
		return -EINVAL;
	if (dtfd_alarm_clock(arg.clockid) && !capable(CAP_WAKE_ALARM))
		return -EPERM;

	ctx = dtfd_timer_new(arg.clockid);
	if (!ctx)
		return -ENOMEM;

	fd = get_unused_fd_flags(arg.flags & O_CLOEXEC);
	if (fd < 0)
		goto err_ctx;
	file = anon_inode_getfile("[dtimerfd]", &dtfd_timer_fops, ctx,
				  O_RDWR | (arg.flags & DTFD_CREATE_FLAGS));
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		fd = PTR_ERR(file);
		goto err_ctx;
	}
	file->f_mode |= FMODE_NOWAIT;
	fd_install(fd, file);
	return fd;

err_ctx:
	dtfd_timer_free(ctx);
	return fd;
}

static long dtfd_ioctl_features(void __user *argp)
{
	struct dtfd_features f = {
		.version = DTFD_ABI_VERSION,
		.features = DTFD_FEATURE_DEFERRABLE | DTFD_FEATURE_CANCEL_ON_SET |
			    DTFD_FEATURE_ALARM | DTFD_FEATURE_SLACK |
			    DTFD_FEATURE_BOUNDED | DTFD_FEATURE_STATS |
			    DTFD_FEATURE_ANY_CPU,
		.settime_flags = DTFD_SETTIME_FLAGS,
		.clocks = DTFD_CLOCKS,
	};

	if (IS_ENABLED(CONFIG_TIME_NS))
		f.features |= DTFD_FEATURE_TIMENS;
	return copy_to_user(argp, &f, sizeof(f)) ? -EFAULT : 0;
}

static long dtfd_ctl_ioctl(struct file *file, unsigned int cmd,
			   unsigned long arg)
{
	void __user *argp = (void __user *)arg;

	switch (cmd) {
	case DTFD_IOC_CREATE:
		return dtfd_ioctl_create(argp);
	case DTFD_IOC_FEATURES:
		return dtfd_ioctl_features(argp);
	default:
		return -ENOTTY;
	}
}

/* The control descriptor: misc_open() leaves nothing to free. */
static const struct file_operations dtfd_ctl_fops = {
	.owner		= THIS_MODULE,
	.unlocked_ioctl	= dtfd_ctl_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.llseek		= noop_llseek,
};

static struct miscdevice dtfd_misc = {
	.minor		= MISC_DYNAMIC_MINOR,
	.name		= "dtimerfd",
	.fops		= &dtfd_ctl_fops,
	/* timers are unprivileged, as timerfd_create(2) is */
	.mode		= 0666,
};

static int __init dtfd_init(void)
{
	int ret;

	ret = dtfd_timer_init();
	if (ret)
		return ret;

	/* last: nothing can open the device before everything is ready */
	ret = misc_register(&dtfd_misc);
	if (ret)
		dtfd_timer_exit();
	return ret;
}

static void __exit dtfd_exit(void)
{
	misc_deregister(&dtfd_misc);
	dtfd_timer_exit();
}

module_init(dtfd_init);
module_exit(dtfd_exit);

MODULE_AUTHOR("dtimerfd developers");
MODULE_DESCRIPTION("timerfd-compatible timers with a deferrable mode");
MODULE_LICENSE("GPL");
MODULE_VERSION(KBUILD_DTIMERFD_VERSION);
