// SPDX-License-Identifier: GPL-2.0
/*
 * dtbench helpers: the three timer flavours behind one interface, the TSC
 * clock, CPU placement, spinning load, statistics and the output format.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/ioctl.h>
#include <sys/timerfd.h>
#include <termios.h>
#include <unistd.h>

#include <dtimerfd.h>

#include "bench.h"

const char *mode_name[NALLMODES] = { "native", "strict", "deferrable" };
int have_intree;

int probe_intree(void)
{
	have_intree = h_timerfd_deferrable();
	return have_intree;
}

/* "1ms", "2.5ms", "500us": a tolerance as a mode name's suffix */
static void dur_name(char *buf, size_t len, int64_t ns)
{
	if (ns % 1000000 == 0)
		snprintf(buf, len, "%lldms", (long long)(ns / 1000000));
	else if (ns % 1000 == 0)
		snprintf(buf, len, "%lldus", (long long)(ns / 1000));
	else
		snprintf(buf, len, "%lldns", (long long)ns);
}

void mode_names_init(void)
{
	static char names[4][32];
	char d[24];
	int i;

	for (i = 0; i < 2; i++) {
		dur_name(d, sizeof(d), cfg.slack_ns[i]);
		snprintf(names[i], sizeof(names[i]), "slack%s", d);
		mode_name[M_SLACK_A + i] = names[i];
		dur_name(d, sizeof(d), cfg.bound_ns[i]);
		snprintf(names[2 + i], sizeof(names[2 + i]), "bound%s", d);
		mode_name[M_BOUND_A + i] = names[2 + i];
	}
	mode_name[M_INTREE] = "intree";
}

/* The tolerance variants take theirs at creation: it applies to every arming. */
int t_create(int mode, int flags)
{
	int64_t slack = 0, bound = 0;
	int fd;

	if (mode_is_timerfd(mode))
		return timerfd_create(CLOCK_MONOTONIC, flags);
	fd = dtimerfd_create(CLOCK_MONOTONIC, flags);
	if (fd < 0 || mode < NMODES)
		return fd;
	if (mode == M_SLACK_A || mode == M_SLACK_B)
		slack = cfg.slack_ns[mode - M_SLACK_A];
	else
		bound = cfg.bound_ns[mode - M_BOUND_A];
	if (dtimerfd_set_tolerance(fd, (uint64_t)slack, (uint64_t)bound))
		die("dtimerfd_set_tolerance(%lld, %lld): %s", (long long)slack,
		    (long long)bound, strerror(errno));
	return fd;
}

int t_settime(int mode, int fd, int flags, const struct itimerspec *nv,
	      struct itimerspec *ov)
{
	if (mode == M_NATIVE)
		return timerfd_settime(fd, flags, nv, ov);
	if (mode == M_INTREE)
		return timerfd_settime(fd, flags | TFD_TIMER_DEFERRABLE, nv, ov);
	if (mode_is_deferrable(mode))
		flags |= DTFD_TIMER_DEFERRABLE;
	return dtimerfd_settime(fd, flags, nv, ov);
}

int t_gettime(int mode, int fd, struct itimerspec *cur)
{
	if (mode_is_timerfd(mode))
		return timerfd_gettime(fd, cur);
	return dtimerfd_gettime(fd, cur);
}

int t_set_ticks(int mode, int fd, uint64_t ticks)
{
	return ioctl(fd, mode_is_timerfd(mode) ? TFD_IOC_SET_TICKS :
		     DTFD_IOC_SET_TICKS, &ticks);
}

/* ---- time ---- */

static double tsc_per_ns;

/*
 * The guest's clocksource under TCG is the HPET, so clock_gettime() is a
 * system call with an emulated MMIO read in it.  The TSC is cheap and
 * follows host time; it is not synchronised across vCPUs, so only threads
 * pinned to one CPU use it, and always relative to a fresh anchor.
 */
void tsc_anchor(uint64_t *tsc, int64_t *mono)
{
	uint64_t a, b;

	a = rdtsc();
	*mono = now_ns();
	b = rdtsc();
	*tsc = a + (b - a) / 2;
}

void tsc_calibrate(void)
{
	uint64_t c0, c1;
	int64_t t0, t1;

	tsc_anchor(&c0, &t0);
	h_sleep_ns(300000000);
	tsc_anchor(&c1, &t1);
	tsc_per_ns = (double)(c1 - c0) / (double)(t1 - t0);
	out_i("tsc_mhz", "%.3f", tsc_per_ns * 1000.0);
}

double tsc_to_ns(int64_t cycles)
{
	return (double)cycles / tsc_per_ns;
}

double frand(void)
{
	return (double)random() / ((double)RAND_MAX + 1.0);
}

/* ---- CPUs and load ---- */

void pin_self(int cpu)
{
	if (h_pin_cpu(cpu))
		die("sched_setaffinity(%d): %s", cpu, strerror(errno));
}

static struct h_spinner spinners[64];
static int spin_n;

/*
 * The thread that measures a wake-up runs SCHED_FIFO while it does, so a
 * busy CPU's spinner never delays it (@on = 0: back to SCHED_OTHER).
 */
void measuring_prio(int on)
{
	struct sched_param sp = { .sched_priority = on ? 1 : 0 };

	if (cfg.no_fifo)
		return;
	if (sched_setscheduler(0, on ? SCHED_FIFO : SCHED_OTHER, &sp))
		die("sched_setscheduler: %s", strerror(errno));
}

/* One spinning SCHED_OTHER thread pinned to each CPU (@only >= 0: to that one). */
void spinners_start_on(int only)
{
	int i;

	spin_n = 0;
	for (i = 0; i < cfg.ncpus && i < 64; i++) {
		if (only >= 0 && i != only)
			continue;
		if (h_spinner_start(&spinners[spin_n++], i, SCHED_OTHER,
				    cfg.spin_nice))
			die("pthread_create");
	}
	h_sleep_ns(50000000);
}

void spinners_start(void)
{
	spinners_start_on(-1);
}

void spinners_stop(void)
{
	while (spin_n > 0)
		h_spinner_stop(&spinners[--spin_n]);
}

/* ---- statistics ---- */

void samples_add(struct samples *s, double x)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 1024;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
		if (!s->v)
			die("out of memory");
	}
	s->v[s->n++] = x;
}

void samples_reset(struct samples *s)
{
	s->n = 0;
}

void samples_free(struct samples *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest-rank percentile (the value of a real sample, never interpolated). */
double samples_pct(struct samples *s, double p)
{
	size_t k;

	if (!s->n)
		return -1;
	qsort(s->v, s->n, sizeof(*s->v), cmp_double);
	k = (size_t)(p / 100.0 * (double)s->n + 0.999999);
	if (k < 1)
		k = 1;
	if (k > s->n)
		k = s->n;
	return s->v[k - 1];
}

double samples_max(struct samples *s)
{
	double m = -1;
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->v[i] > m)
			m = s->v[i];
	return m;
}

/* ---- output ---- */

void out_r(const char *test, int mode, const char *metric, int rep, double v)
{
	printf("@@ R %s %s %s %d %.6g\n", test,
	       mode < 0 ? "-" : mode_name[mode], metric, rep, v);
}

void out_q(const char *test, int mode, struct samples *s)
{
	static const double pcts[] = { 0, 1, 2, 5, 10, 20, 30, 40, 50, 60, 70,
				       75, 80, 85, 90, 95, 97, 98, 99, 99.5,
				       99.9, 100 };
	size_t i;

	if (!s->n)
		return;
	for (i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++)
		printf("@@ Q %s %s %g %.6g\n", test, mode_name[mode], pcts[i],
		       samples_pct(s, pcts[i]));
}

void out_i(const char *key, const char *fmt, ...)
{
	va_list ap;

	printf("@@ I %s ", key);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

/*
 * The console is an emulated UART whose interrupt drains the tty buffer
 * behind our back: wait until it is empty so printing never overlaps the
 * next measurement.
 */
void out_flush(void)
{
	fflush(stdout);
	fflush(stderr);
	tcdrain(STDOUT_FILENO);
	tcdrain(STDERR_FILENO);
}

void progress(const char *fmt, ...)
{
	va_list ap;

	printf("## ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	out_flush();
}

/* ---- /proc ---- */

/* Every interrupt so far, by kind and CPU (../examples/irqs.h). */
void idle_exits(struct irq_counts *c)
{
	if (irq_counts_read(c))
		die("no /proc/interrupts");
}

long meminfo_kb(const char *field)
{
	char line[256];
	size_t len = strlen(field);
	long v = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, field, len) && line[len] == ':') {
			v = strtol(line + len + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* Give every slab cache's empty slabs back, so Slab: is a fair baseline. */
void slab_shrink(void)
{
	char path[512];
	struct dirent *de;
	DIR *d = opendir("/sys/kernel/slab");

	h_write_file("/proc/sys/vm/drop_caches", "2");
	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink",
			 de->d_name);
		h_write_file(path, "1");
	}
	closedir(d);
}
