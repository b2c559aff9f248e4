// SPDX-License-Identifier: GPL-2.0
/*
 * dtimerfd-wakeups: what woke this machine over a few seconds, and what
 * dtimerfd timers deferred meanwhile (dtimerfd-wakeups(8)).
 *
 *   dtimerfd-wakeups [-t SECONDS] [-n ROWS]
 *
 * Three views of one window:
 *  - exits from idle, from every row of /proc/interrupts, by kind (local
 *    timer, reschedule and function-call IPIs, other IPIs, devices) and
 *    by CPU: a CPU leaves idle for any interrupt, not only its timer's;
 *  - with tracefs (root), the causes: the timer callbacks that ran
 *    (hrtimer and timer_list, by function: the tick, a task's sleep or
 *    timeout, timerfd, dtimerfd...) and the tasks that were woken, from
 *    hist triggers on the kernel's timer and sched events;
 *  - the dtimerfd timers of every process (their fdinfo): deliveries,
 *    how many came more than a jiffy late (deferred) and how many the
 *    bound forced, over the window.
 * Without tracefs or root, the first view and the processes it may read.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../examples/irqs.h"

#define TRACEFS		"/sys/kernel/tracing"
#define MAXROWS		256

/* A hist trigger: the event, its key, and the file it reads back. */
struct hist {
	const char *event;	/* under events/ */
	const char *trigger;	/* what is written to its trigger file */
	const char *title;
	int armed;
};

static struct hist hists[] = {
	{ "timer/hrtimer_expire_entry", "hist:keys=function.sym:sort=hitcount.descending",
	  "hrtimer callbacks (the tick, sleeps and timeouts, timerfd, dtimerfd)", 0 },
	{ "timer/timer_expire_entry", "hist:keys=function.sym:sort=hitcount.descending",
	  "timer_list callbacks", 0 },
	{ "sched/sched_wakeup", "hist:keys=comm:sort=hitcount.descending",
	  "tasks woken", 0 },
};
#define NHISTS	(sizeof(hists) / sizeof(hists[0]))

static double secs = 5;
static int rows = 12;

static int write_str(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, s, strlen(s)) == (ssize_t)strlen(s);
	close(fd);
	return ok ? 0 : -1;
}

static void hist_arm(struct hist *h, int on)
{
	char path[256], buf[300];

	snprintf(path, sizeof(path), TRACEFS "/events/%s/trigger", h->event);
	snprintf(buf, sizeof(buf), "%s%s", on ? "" : "!", h->trigger);
	h->armed = on ? !write_str(path, buf) : 0;
}

/* "{ function: [ffff...] tick_nohz_handler } hitcount: 123" -> rows */
static void hist_print(const struct hist *h)
{
	char path[256], line[512];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), TRACEFS "/events/%s/hist", h->event);
	f = fopen(path, "re");
	if (!f)
		return;
	printf("\n%s, per second:\n", h->title);
	while (fgets(line, sizeof(line), f) && n < rows) {
		char *key = strchr(line, '{'), *end, *hc = strstr(line, "hitcount:");
		char name[128];
		unsigned long long c;

		if (!key || !hc || !(end = strchr(key, '}')))
			continue;
		*end = 0;
		key = strchr(key, ':');
		if (!key)
			continue;
		key++;
		/* a symbol key reads "[address] name" */
		if (strchr(key, ']'))
			key = strchr(key, ']') + 1;
		if (sscanf(key, " %127[^\n]", name) != 1 ||
		    sscanf(hc, "hitcount: %llu", &c) != 1)
			continue;
		for (end = name + strlen(name); end > name && end[-1] == ' ';)
			*--end = 0;
		printf("  %9.1f  %s\n", c / secs, name);
		n++;
	}
	if (!n)
		printf("  (none)\n");
	fclose(f);
}

/* One process's dtimerfd timers, summed over their fdinfo. */
struct proc {
	int pid;
	char comm[32];
	int timers;
	unsigned long long deliveries, deferred, backstop, late_ns;
};

static int fdinfo_add(int pid, const char *fd, struct proc *p)
{
	char path[300], line[256];
	unsigned long long v;
	int is_dtfd = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/fdinfo/%s", pid, fd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "dtimerfd-mode:", 14))
			is_dtfd = 1;
		else if (sscanf(line, "dtimerfd-deliveries: %llu", &v) == 1)
			p->deliveries += v;
		else if (sscanf(line, "dtimerfd-deferred: %llu", &v) == 1)
			p->deferred += v;
		else if (sscanf(line, "dtimerfd-backstop: %llu", &v) == 1)
			p->backstop += v;
		else if (sscanf(line, "dtimerfd-late-total-ns: %llu", &v) == 1)
			p->late_ns += v;
	}
	fclose(f);
	return is_dtfd;
}

/* Every process's dtimerfd timers into @ps (at most @max); their count. */
static int procs_read(struct proc *ps, int max)
{
	DIR *d = opendir("/proc"), *fds;
	struct dirent *e, *fe;
	char path[64];
	int n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)) && n < max) {
		struct proc *p = &ps[n];
		FILE *f;
		int pid = atoi(e->d_name);

		if (pid <= 0)
			continue;
		memset(p, 0, sizeof(*p));
		p->pid = pid;
		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
		fds = opendir(path);
		if (!fds)
			continue;
		while ((fe = readdir(fds)))
			if (fe->d_name[0] != '.')
				p->timers += fdinfo_add(pid, fe->d_name, p);
		closedir(fds);
		if (!p->timers)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/comm", pid);
		f = fopen(path, "re");
		if (f) {
			if (fgets(p->comm, sizeof(p->comm), f))
				p->comm[strcspn(p->comm, "\n")] = 0;
			fclose(f);
		}
		n++;
	}
	closedir(d);
	return n;
}

static const struct proc *proc_find(const struct proc *ps, int n, int pid)
{
	int i;

	for (i = 0; i < n; i++)
		if (ps[i].pid == pid)
			return &ps[i];
	return NULL;
}

static void procs_print(const struct proc *a, int na, const struct proc *b,
			int nb)
{
	static const struct proc none;
	int i, shown = 0;

	printf("\ndtimerfd timers over the window (per process; deferred: more than a jiffy late):\n");
	printf("  %7s %-16s %6s %10s %9s %9s %12s\n", "pid", "command", "timers",
	       "deliveries", "deferred", "bounded", "mean late");
	for (i = 0; i < nb && shown < rows; i++) {
		const struct proc *o = proc_find(a, na, b[i].pid);
		unsigned long long dl, df, bs, late;

		if (!o)
			o = &none;
		dl = b[i].deliveries - o->deliveries;
		df = b[i].deferred - o->deferred;
		bs = b[i].backstop - o->backstop;
		late = b[i].late_ns - o->late_ns;
		printf("  %7d %-16s %6d %10llu %9llu %9llu %9.3f ms\n", b[i].pid,
		       b[i].comm, b[i].timers, dl, df, bs,
		       dl ? late / 1e6 / dl : 0.0);
		shown++;
	}
	if (!shown)
		printf("  (none: no dtimerfd timer open, or no permission to read other processes)\n");
}

static void irqs_print(const struct irq_counts *a, const struct irq_counts *b)
{
	unsigned long long all = irq_counts_sum(b, -1, -1) -
				 irq_counts_sum(a, -1, -1);
	int k, c;

	printf("exits from idle (%s): %.1f/s; what woke the CPUs, by kind of interrupt:\n",
	       b->have_exits ? "power:cpu_idle" : "every interrupt",
	       all / secs);
	printf("  %-8s %9s", "", "exits");
	for (k = 0; k < IRQ_KINDS; k++)
		printf(" %9s", irq_kind_name[k]);
	printf("\n");
	for (c = -1; c < b->ncpus; c++) {
		char lbl[16];

		snprintf(lbl, sizeof(lbl), c < 0 ? "total" : "CPU%d", c);
		printf("  %-8s %9.1f", lbl,
		       (irq_counts_sum(b, c, -1) - irq_counts_sum(a, c, -1)) / secs);
		for (k = 0; k < IRQ_KINDS; k++)
			printf(" %9.1f", (irq_counts_sum(b, c, k) -
					  irq_counts_sum(a, c, k)) / secs);
		printf("\n");
	}
}

static void usage(FILE *f)
{
	fprintf(f, "usage: dtimerfd-wakeups [-t SECONDS] [-n ROWS]\n");
}

int main(int argc, char **argv)
{
	static struct proc pa[MAXROWS], pb[MAXROWS];
	struct irq_counts a, b;
	struct timespec ts;
	int opt, na, nb, traced = 0;
	size_t i;

	while ((opt = getopt(argc, argv, "t:n:h")) != -1) {
		switch (opt) {
		case 't':
			secs = atof(optarg);
			break;
		case 'n':
			rows = atoi(optarg);
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc || !(secs > 0 && secs <= 86400) || rows <= 0) {
		usage(stderr);
		return 2;
	}
	for (i = 0; i < NHISTS; i++) {
		hist_arm(&hists[i], 1);
		traced += hists[i].armed;
	}
	na = procs_read(pa, MAXROWS);
	if (irq_counts_read(&a)) {
		fprintf(stderr, "dtimerfd-wakeups: cannot read /proc/interrupts: %s\n",
			strerror(errno));
		return 1;
	}
	ts.tv_sec = (time_t)secs;
	ts.tv_nsec = (long)((secs - (double)ts.tv_sec) * 1e9);
	nanosleep(&ts, NULL);
	irq_counts_read(&b);
	nb = procs_read(pb, MAXROWS);

	printf("dtimerfd-wakeups: %.1f s, %d CPUs\n", secs, b.ncpus);
	irqs_print(&a, &b);
	for (i = 0; i < NHISTS; i++) {
		if (!hists[i].armed)
			continue;
		hist_print(&hists[i]);
		hist_arm(&hists[i], 0);
	}
	if (!traced)
		printf("\n(causes: need root and tracefs at " TRACEFS ")\n");
	procs_print(pa, na, pb, nb);
	return 0;
}
