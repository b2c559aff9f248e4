// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the tests and the benchmark: see util.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	/* CPU_SET, sched_setaffinity */
#endif
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "util.h"
#include "../examples/irqs.h"	/* the reader of /proc/interrupts */

/* ---- time and descriptors ---- */

long long h_ts_ns(const struct timespec *ts)
{
	return (long long)ts->tv_sec * NSEC_PER_SEC + ts->tv_nsec;
}

struct timespec h_ns_ts(long long ns)
{
	struct timespec ts;

	ts.tv_sec = ns / NSEC_PER_SEC;
	ts.tv_nsec = ns % NSEC_PER_SEC;
	if (ts.tv_nsec < 0) {
		ts.tv_sec--;
		ts.tv_nsec += NSEC_PER_SEC;
	}
	return ts;
}

long long h_now(clockid_t clockid)
{
	struct timespec ts;

	if (clock_gettime(clockid, &ts))
		return -1;
	return h_ts_ns(&ts);
}

void h_sleep_ns(long long ns)
{
	struct timespec ts = h_ns_ts(h_now(CLOCK_MONOTONIC) + ns);

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	       EINTR)
		;
}

struct itimerspec h_its(long long value_ns, long long interval_ns)
{
	struct itimerspec its;

	its.it_value = h_ns_ts(value_ns);
	its.it_interval = h_ns_ts(interval_ns);
	return its;
}

long long h_its_value(const struct itimerspec *its)
{
	return h_ts_ns(&its->it_value);
}

long long h_its_interval(const struct itimerspec *its)
{
	return h_ts_ns(&its->it_interval);
}

long h_read(int fd, uint64_t *ticks)
{
	uint64_t v = 0;
	long r = read(fd, &v, sizeof(v));

	if (ticks)
		*ticks = v;
	return r;
}

int h_poll(int fd, int timeout_ms, short *revents)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int r;

	do {
		r = poll(&p, 1, timeout_ms);
	} while (r < 0 && errno == EINTR);
	if (revents)
		*revents = p.revents;
	return r;
}

long h_wait_read(int fd, int timeout_ms, uint64_t *ticks)
{
	int fl = fcntl(fd, F_GETFL);
	long r;

	h_poll(fd, timeout_ms, NULL);
	fcntl(fd, F_SETFL, fl | O_NONBLOCK);
	r = h_read(fd, ticks);
	fcntl(fd, F_SETFL, fl);
	return r;
}

void h_set_nonblock(int fd, int on)
{
	int fl = fcntl(fd, F_GETFL);

	fcntl(fd, F_SETFL, on ? fl | O_NONBLOCK : fl & ~O_NONBLOCK);
}

/* Write @s to the file @path (sysfs, debugfs): 0, or -1 with errno. */
int h_write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, s, strlen(s));
	close(fd);
	return n == (ssize_t)strlen(s) ? 0 : -1;
}

#define PARAM_DIR	"/sys/module/dtimerfd/parameters/"

long h_param_get(const char *name)
{
	char path[128], buf[32];
	FILE *f;
	long v = -1;

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fgets(buf, sizeof(buf), f))
		v = buf[0] == 'Y' ? 1 : buf[0] == 'N' ? 0 : strtol(buf, NULL, 0);
	fclose(f);
	return v;
}

int h_param_set(const char *name, long v)
{
	char path[128], val[32];

	snprintf(path, sizeof(path), PARAM_DIR "%s", name);
	snprintf(val, sizeof(val), "%ld\n", v);
	return h_write_file(path, val);
}

/* ---- CPUs ---- */

int h_ncpus(void)
{
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

int h_pin_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	if (cpu >= 0) {
		CPU_SET(cpu, &set);
	} else {
		long n = sysconf(_SC_NPROCESSORS_CONF);

		for (cpu = 0; cpu < n && cpu < CPU_SETSIZE; cpu++)
			CPU_SET(cpu, &set);
	}
	return sched_setaffinity(0, sizeof(set), &set);
}

#define CPU_ONLINE	"/sys/devices/system/cpu/cpu%d/online"

/* CPU @cpu's online file: 1 online, 0 offline, -1 none (CPU 0 on x86) */
static int cpu_online(int cpu)
{
	char path[64], c = 0;
	int fd;

	snprintf(path, sizeof(path), CPU_ONLINE, cpu);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (read(fd, &c, 1) != 1)
		c = 0;
	close(fd);
	return c == '1';
}

int h_cpu_set_online(int cpu, int on)
{
	char path[64];

	snprintf(path, sizeof(path), CPU_ONLINE, cpu);
	return h_write_file(path, on ? "1" : "0");
}

int h_alone(int (*fn)(void *arg), void *arg)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	cpu_set_t was, off;
	int cpu, ret, err, tries;

	if (sched_getaffinity(0, sizeof(was), &was))
		return -1;
	h_pin_cpu(0);
	CPU_ZERO(&off);
	for (cpu = 1; cpu < n && cpu < CPU_SETSIZE; cpu++) {
		int on = cpu_online(cpu);

		if (!on)
			continue;
		if (on < 0)
			printf("# CPU %d has no online switch: it stays online\n",
			       cpu);
		else if (h_cpu_set_online(cpu, 0))
			printf("# CPU %d stays online: %s\n", cpu, strerror(errno));
		else
			CPU_SET(cpu, &off);
	}
	ret = fn(arg);
	err = errno;
	for (cpu = 1; cpu < n && cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &off))
			continue;
		/* EBUSY while the kernel is busy: try again, for 10 s */
		for (tries = 0; h_cpu_set_online(cpu, 1) && tries < 1000; tries++)
			h_sleep_ns(10 * 1000 * 1000);
	}
	sched_setaffinity(0, sizeof(was), &was);
	errno = err;
	return ret;
}

static void *spin(void *arg)
{
	struct h_spinner *s = arg;
	struct sched_param sp = { 0 };

	if (s->cpu >= 0)
		h_pin_cpu(s->cpu);
	if (s->policy != SCHED_OTHER)
		pthread_setschedparam(pthread_self(), s->policy, &sp);
	if (s->nice)
		setpriority(PRIO_PROCESS, 0, s->nice);
	while (!atomic_load_explicit(&s->stop, memory_order_relaxed))
#if defined(__i386__) || defined(__x86_64__)
		__builtin_ia32_pause();
#else
		;
#endif
	return NULL;
}

int h_spinner_start(struct h_spinner *s, int cpu, int policy, int nice)
{
	struct sched_param sp = { 0 };
	pthread_attr_t attr;
	int err;

	s->cpu = cpu;
	s->policy = policy;
	s->nice = nice;
	atomic_store(&s->stop, 0);
	/* never inherit the SCHED_FIFO of a measuring thread */
	pthread_attr_init(&attr);
	pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	pthread_attr_setschedpolicy(&attr, SCHED_OTHER);
	pthread_attr_setschedparam(&attr, &sp);
	err = pthread_create(&s->thread, &attr, spin, s);
	pthread_attr_destroy(&attr);
	return err;
}

void h_spinner_stop(struct h_spinner *s)
{
	atomic_store(&s->stop, 1);
	pthread_join(s->thread, NULL);
}

/* ---- /proc ---- */

int h_local_timer_irqs(unsigned long long *all, int cpu,
		       unsigned long long *one)
{
	unsigned long long counts[256];
	int i, n = irq_row_read(DTFD_TIMER_IRQ, counts, 256);

	if (n < 0)
		return -1;
	*all = 0;
	for (i = 0; i < n; i++) {
		*all += counts[i];
		if (i == cpu && one)
			*one = counts[i];
	}
	return 0;
}

int h_timerfd_deferrable(void)
{
	struct itimerspec its = { .it_value = { 3600, 0 } };
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC), ret, err;

	if (fd < 0)
		return 0;
	ret = timerfd_settime(fd, TFD_TIMER_DEFERRABLE, &its, NULL);
	err = errno;
	close(fd);
	errno = err;
	return ret == 0;
}

int h_idle_exits(unsigned long long *all, int cpu, unsigned long long *one)
{
	struct irq_counts c;

	if (irq_counts_read(&c))
		return -1;
	*all = irq_counts_sum(&c, -1, IRQ_TIMER);
	if (one)
		*one = irq_counts_sum(&c, cpu, IRQ_TIMER);
	return 0;
}

int h_fdinfo(int fd, struct h_fdinfo *fi)
{
	static const char *keys[5] = {
		"clockid:", "ticks:", "settime flags:", "it_value:",
		"it_interval:",
	};
	char path[64], line[256];
	int pos[5] = { -1, -1, -1, -1, -1 };
	int i, n = 0, last = -1;
	FILE *f;

	memset(fi, 0, sizeof(*fi));
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		int k = -1;

		for (i = 0; i < 5; i++)
			if (!strncmp(line, keys[i], strlen(keys[i])))
				k = i;
		if (!strncmp(line, "flags:", 6))
			fi->flags = strtoul(line + 6, NULL, 8);
		if (k < 0) {
			if (last == 4 && strlen(fi->extra) + strlen(line) <
			    sizeof(fi->extra))
				strcat(fi->extra, line);
			n++;
			continue;
		}
		pos[k] = n++;
		last = k;
		fi->nlines++;
		switch (k) {
		case 0:
			fi->clockid = atoi(line + 8);
			break;
		case 1:
			fi->ticks = strtoull(line + 6, NULL, 10);
			break;
		case 2:
			sscanf(line + 14, " %15s", fi->settime_flags_str);
			fi->settime_flags = strtoul(fi->settime_flags_str,
						    NULL, 8);
			break;
		case 3:
			sscanf(line + 9, " (%lld, %lld)", &fi->value_sec,
			       &fi->value_nsec);
			break;
		case 4:
			sscanf(line + 12, " (%lld, %lld)", &fi->interval_sec,
			       &fi->interval_nsec);
			break;
		}
	}
	fclose(f);
	fi->ordered = 1;
	for (i = 0; i < 5; i++)
		if (pos[i] < 0 || (i && pos[i] != pos[i - 1] + 1))
			fi->ordered = 0;
	return 0;
}

int h_fdinfo_vals(int fd, int thread, int n, const char *const *keys,
		  unsigned long long *vals, unsigned long long missing)
{
	char path[64], line[256];
	FILE *f;
	int i;

	for (i = 0; i < n; i++)
		vals[i] = missing;
	snprintf(path, sizeof(path), "/proc/%s/fdinfo/%d",
		 thread ? "thread-self" : "self", fd);
	f = fopen(path, "re");
	if (!f)
		return -1;
	/* the whole of it in the first read(2): one call of the driver's show */
	setvbuf(f, NULL, _IOFBF, 8192);
	while (fgets(line, sizeof(line), f))
		for (i = 0; i < n; i++) {
			size_t kl = strlen(keys[i]);

			if (!strncmp(line, keys[i], kl) && line[kl] == ':')
				vals[i] = strtoull(line + kl + 1, NULL, 10);
		}
	fclose(f);
	return 0;
}
