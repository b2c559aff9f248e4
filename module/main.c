// SPDX-License-Identifier: GPL-2.0
/* placeholder while the real device lands */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/fs.h>
#include <linux/miscdevice.h>
#include <linux/module.h>

static int dtimerfd_open(struct inode *inode, struct file *file)
{
	return 0;
}

static const struct file_operations dtimerfd_fops = {
	.owner		= THIS_MODULE,
	.open		= dtimerfd_open,
	.llseek		= noop_llseek,
};

static struct miscdevice dtimerfd_misc = {
	.minor		= MISC_DYNAMIC_MINOR,
	.name		= "dtimerfd",
	.fops		= &dtimerfd_fops,
	.mode		= 0666,
};

module_misc_device(dtimerfd_misc);

MODULE_DESCRIPTION("timerfd-compatible timers with a deferrable mode");
MODULE_LICENSE("GPL");
