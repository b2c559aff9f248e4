// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers of the test bodies that need the harness, to skip or fail the
 * case: clocks and capabilities, EFAULT bait, every kind of descriptor
 * that is not a timer.  Those without a verdict are in util.c.
 */
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#include "harness.h"

const clockid_t h_clocks[5] = {
	CLOCK_REALTIME, CLOCK_MONOTONIC, CLOCK_BOOTTIME,
	CLOCK_REALTIME_ALARM, CLOCK_BOOTTIME_ALARM,
};

const char *h_clock_name(clockid_t c)
{
	switch (c) {
	case CLOCK_REALTIME: return "REALTIME";
	case CLOCK_MONOTONIC: return "MONOTONIC";
	case CLOCK_BOOTTIME: return "BOOTTIME";
	case CLOCK_REALTIME_ALARM: return "REALTIME_ALARM";
	case CLOCK_BOOTTIME_ALARM: return "BOOTTIME_ALARM";
	default: return "clock?";
	}
}

/*
 * Alarm timers work without an RTC (it only matters for suspend), even
 * where clock_gettime() on the alarm clocks fails; ask timerfd itself.
 */
int h_have_alarm(void)
{
	int fd = timerfd_create(CLOCK_BOOTTIME_ALARM, TFD_CLOEXEC);

	if (fd >= 0)
		close(fd);
	return fd >= 0 || errno != EINVAL;
}

int h_can_wake_alarm(void)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2];

	memset(data, 0, sizeof(data));
	if (syscall(SYS_capget, &hdr, data))
		return 0;
	return !!(data[CAP_WAKE_ALARM / 32].effective &
		  (1U << (CAP_WAKE_ALARM % 32)));
}

/* Alarm clocks need the kernel's support and CAP_WAKE_ALARM; others work. */
int h_clock_usable(clockid_t c)
{
	if (c != CLOCK_REALTIME_ALARM && c != CLOCK_BOOTTIME_ALARM)
		return 1;
	return h_have_alarm() && h_can_wake_alarm();
}

/* An alarm clock's time is its base clock's; the others are their own. */
clockid_t h_clock_base(clockid_t c)
{
	return c == CLOCK_REALTIME_ALARM ? CLOCK_REALTIME :
	       c == CLOCK_BOOTTIME_ALARM ? CLOCK_BOOTTIME : c;
}

void h_require_root(void)
{
	if (geteuid() != 0)
		h_skip("needs root");
}

void h_require_alarm(void)
{
	if (!h_have_alarm())
		h_skip("kernel has no alarm timers");
	if (!h_can_wake_alarm())
		h_skip("needs CAP_WAKE_ALARM");
}

void *h_bad_ptr(void)
{
	static void *p;

	if (!p) {
		p = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
		if (p == MAP_FAILED) {
			p = NULL;
			h_fail(__FILE__, __LINE__, "mmap", "%s",
			       strerror(errno));
			h_abort();
		}
	}
	return p;
}

static int h_tmpfile(int flags)
{
	char path[] = "/tmp/dtfd-notimer-XXXXXX";
	int fd = mkstemp(path);

	if (fd >= 0 && flags != O_RDWR) {
		int fd2 = open(path, flags);

		close(fd);
		fd = fd2;
	}
	unlink(path);
	return fd;
}

/* One entry of h_not_timers(); a descriptor that could not be made aborts. */
static void not_timer_add(struct h_not_timer *out, int *n, int max,
			  const char *name, int fd, int isbad, int line)
{
	if (fd == -1 && isbad != 2) {
		h_fail(__FILE__, line, name, "%s", strerror(errno));
		h_abort();
	}
	if (*n < max)
		out[(*n)++] = (struct h_not_timer){ name, fd, !!isbad };
}

int h_not_timers(int timer, struct h_not_timer *out, int max)
{
	char self[64];
	sigset_t none;
	int n = 0, closed, sv[2], udp, ctl;

#define NT(nm, expr, isbad) \
	not_timer_add(out, &n, max, nm, (expr), (isbad), __LINE__)

	sigemptyset(&none);
	/* a number high enough not to be handed out again below */
	closed = fcntl(0, F_DUPFD, 900);
	close(closed);
	snprintf(self, sizeof(self), "/proc/self/fd/%d", timer);
	NT("-1", -1, 2);
	NT("closed fd", closed, 1);
	NT("O_PATH file", h_tmpfile(O_PATH), 1);
	NT("O_PATH directory", open("/", O_PATH | O_DIRECTORY), 1);
	NT("O_PATH /dev/null", open("/dev/null", O_PATH), 1);
	NT("O_PATH of the timer", open(self, O_PATH), 1);
	NT("directory", open("/", O_RDONLY | O_DIRECTORY), 0);
	NT("regular file", h_tmpfile(O_RDWR), 0);
	NT("write-only file", h_tmpfile(O_WRONLY), 0);
	NT("/dev/null", open("/dev/null", O_RDWR), 0);
	NT("unix socket", socket(AF_UNIX, SOCK_STREAM, 0), 0);
	/* the debug kernel (allnoconfig and debugging) has no IPv4 */
	udp = socket(AF_INET, SOCK_DGRAM, 0);
	if (udp >= 0 || errno != EAFNOSUPPORT)
		NT("udp socket", udp, 0);
	else
		h_diag("udp socket left out: this kernel has no IPv4");
	if (!socketpair(AF_UNIX, SOCK_DGRAM, 0, sv)) {
		close(sv[1]);
		NT("socketpair end", sv[0], 0);
	}
	NT("eventfd", eventfd(0, 0), 0);
	NT("epoll", epoll_create1(0), 0);
	NT("signalfd", signalfd(-1, &none, 0), 0);
	NT("memfd", memfd_create("dtfd-notimer", 0), 0);
	/*
	 * Where the device exists: its control descriptor, and a timer of the
	 * other implementation (a dtimerfd for timerfd, a timerfd for
	 * dtimerfd), neither of which the backend under test can program.
	 */
	ctl = open(DTIMERFD_DEVICE, O_RDWR | O_CLOEXEC);
	if (ctl >= 0) {
		struct dtfd_create c = { CLOCK_MONOTONIC, O_CLOEXEC };

		NT("dtimerfd control fd", ctl, 0);
		NT("the other implementation's timer",
		   h_ops && h_ops->kind != BK_NATIVE ?
		   timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC) :
		   ioctl(ctl, DTFD_IOC_CREATE, &c), 0);
	}
#undef NT
	return n;
}

void h_not_timers_close(struct h_not_timer *nt, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (nt[i].fd >= 0 && strcmp(nt[i].name, "closed fd"))
			close(nt[i].fd);
}

void h_pin(int cpu)
{
	ASSERTF(!h_pin_cpu(cpu), "pin to CPU %d: %s", cpu, strerror(errno));
}

void h_idle_spinner(struct h_spinner *s, int cpu)
{
	ASSERT(h_spinner_start(s, cpu, SCHED_IDLE, 0) == 0);
}
