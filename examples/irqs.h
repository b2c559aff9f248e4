/* SPDX-License-Identifier: MIT */
/*
 * The one reader of /proc/interrupts, for the demo (demo.c), the tests
 * and the benchmark (tests/util.c's h_local_timer_irqs(), h_idle_exits()):
 * one named row, or every row by kind (what a power engineer counts as
 * wake-ups: every exit from idle).
 *
 * DTFD_TIMER_IRQ names the local (per-CPU) timer interrupt's row: the
 * Makefiles pass the architecture's name, from vm/arch.sh (x86's row is
 * labelled "LOC:", arm64's is the one whose name, last on the line, is
 * "arch_timer").
 */
#ifndef DTFD_IRQS_H
#define DTFD_IRQS_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef DTFD_TIMER_IRQ
#error "build with make: DTFD_TIMER_IRQ comes from vm/arch.sh"
#endif

/*
 * The counts of the row @name of /proc/interrupts, one per CPU column,
 * into @counts (at most @max of them).  A row is @name's when its label
 * (before the colon) is @name, or when the last word of the line is.
 * Returns the number of CPU columns read, or -1 when there is no such row
 * (or no /proc).
 */
static inline int irq_row_read(const char *name, unsigned long long *counts,
			       int max)
{
	FILE *f = fopen("/proc/interrupts", "re");
	size_t len = strlen(name);
	char line[4096];
	int n = -1;

	if (!f)
		return -1;
	while (n < 0 && fgets(line, sizeof(line), f)) {
		char *p = line + strspn(line, " "), *colon = strchr(p, ':');
		char *end = line + strlen(line), *last;

		if (!colon)
			continue;
		while (end > line && (end[-1] == '\n' || end[-1] == ' '))
			end--;
		for (last = end; last > line && last[-1] != ' '; last--)
			;
		if (!((size_t)(colon - p) == len && !strncmp(p, name, len)) &&
		    !((size_t)(end - last) == len && !strncmp(last, name, len)))
			continue;
		for (n = 0, p = colon + 1; n < max; n++) {
			unsigned long long v = strtoull(p, &end, 10);

			if (end == p)
				break;
			counts[n] = v;
			p = end;
		}
	}
	fclose(f);
	return n;
}

/*
 * Every exit from idle, by kind: a CPU leaves idle for any interrupt, the
 * local timer's, an IPI (the scheduler's reschedule and function-call
 * IPIs are how one CPU wakes a task on another), a device's.  Counting
 * the local timer alone misses the wake-ups one CPU causes on another.
 * Each row of /proc/interrupts goes to one kind: the local timer's (by
 * DTFD_TIMER_IRQ); reschedule and function-call IPIs (by their
 * description, x86's RES and CAL, arm64's IPI0 and IPI1); the other
 * architecture rows (TLB shootdowns, irq work, NMIs...); numbered rows,
 * the devices'.  Rows with one total and no CPU columns (ERR, MIS) are
 * not wake-ups of a CPU.
 */
enum irq_kind {
	IRQ_TIMER,
	IRQ_RESCHED,
	IRQ_CALL,
	IRQ_OTHER,
	IRQ_DEVICE,
	IRQ_KINDS
};

static const char *const irq_kind_name[IRQ_KINDS] = {
	"timer", "resched", "call", "other", "device",
};

#define IRQ_MAXCPU	64

struct irq_counts {
	int ncpus;
	unsigned long long n[IRQ_KINDS][IRQ_MAXCPU];
	/* exits from idle per CPU, from the power:cpu_idle tracepoint */
	int have_exits;
	unsigned long long exits[IRQ_MAXCPU];
};

/*
 * The exact count of exits from idle: the power:cpu_idle tracepoint's
 * exit events, counted per CPU by a hist trigger (tracefs, root), set up
 * on the first call and left in place; each call reads the totals so far.
 * It sees what no interrupt count can (an idle loop polling a cache line,
 * mwait, is woken without an interrupt), and no interrupt taken while the
 * CPU was busy.  -1 where tracing is missing: then every interrupt
 * counts.
 */
#define IRQ_TRACEFS	"/sys/kernel/tracing"
#define IRQ_IDLE_EVENT	IRQ_TRACEFS "/events/power/cpu_idle/"
#define IRQ_IDLE_HIST	"hist:keys=cpu_id:vals=hitcount if state == 4294967295"

/*
 * Whether the trigger is there already (another reader's, or the test
 * guest's init, which sets it at boot): then nobody writes the trigger
 * file again.  Each write parses a trigger and may enable and disable
 * the event, and enabling an event patches kernel text while the other
 * CPUs run it; a TCG guest was seen to crash there once ("Oops: int3").
 */
static inline int idle_exits_there(void)
{
	char line[512];
	FILE *f = fopen(IRQ_IDLE_EVENT "trigger", "re");
	int there = 0;

	if (!f)
		return 0;
	while (!there && fgets(line, sizeof(line), f))
		there = !strncmp(line, "hist:keys=cpu_id:vals=hitcount", 30) &&
			strstr(line, "4294967295");
	fclose(f);
	return there;
}

static inline int idle_exits_read(unsigned long long *exits, int max)
{
	static int armed;	/* 1: the trigger is there; -1: no tracing */
	char line[256];
	FILE *f;
	int n = -1;

	if (!armed) {
		armed = idle_exits_there() ? 1 : -1;
		f = armed < 0 ? fopen(IRQ_IDLE_EVENT "trigger", "we") : NULL;
		if (f) {
			/* EEXIST: another reader put it there meanwhile */
			if (fputs(IRQ_IDLE_HIST "\n", f) >= 0 &&
			    (!fclose(f) || errno == EEXIST))
				armed = 1;
		}
	}
	if (armed < 0)
		return -1;
	f = fopen(IRQ_IDLE_EVENT "hist", "re");
	if (!f)
		return -1;
	memset(exits, 0, sizeof(*exits) * (size_t)max);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long hits;
		int cpu;

		if (sscanf(line, "{ cpu_id: %d } hitcount: %llu", &cpu,
			   &hits) == 2 && cpu >= 0 && cpu < max) {
			exits[cpu] = hits;
			if (cpu >= n)
				n = cpu + 1;
		}
	}
	fclose(f);
	return n < 0 ? 0 : n;
}

static inline enum irq_kind irq_kind_of(const char *label, size_t len,
					const char *desc)
{
	size_t i, tl = strlen(DTFD_TIMER_IRQ);
	const char *last = desc + strlen(desc);

	while (last > desc && last[-1] != ' ')
		last--;
	if ((len == tl && !strncmp(label, DTFD_TIMER_IRQ, tl)) ||
	    !strcmp(last, DTFD_TIMER_IRQ))
		return IRQ_TIMER;
	if (strstr(desc, "Rescheduling"))
		return IRQ_RESCHED;
	if (strstr(desc, "unction call"))
		return IRQ_CALL;
	for (i = 0; i < len; i++)
		if (label[i] < '0' || label[i] > '9')
			return IRQ_OTHER;
	return IRQ_DEVICE;
}

/* Every row of /proc/interrupts into @c, by kind and CPU; 0, or -1. */
static inline int irq_counts_read(struct irq_counts *c)
{
	FILE *f = fopen("/proc/interrupts", "re");
	char line[4096];
	int cpus = 0, k;

	memset(c, 0, sizeof(*c));
	if (!f)
		return -1;
	if (fgets(line, sizeof(line), f))
		for (char *p = line; (p = strstr(p, "CPU")); p += 3)
			cpus++;
	c->ncpus = cpus < IRQ_MAXCPU ? cpus : IRQ_MAXCPU;
	while (fgets(line, sizeof(line), f)) {
		char *p = line + strspn(line, " "), *colon = strchr(p, ':');
		unsigned long long v[IRQ_MAXCPU];
		char *end;
		int n;

		if (!colon)
			continue;
		for (n = 0, end = colon + 1; n < c->ncpus; n++) {
			char *q = end;

			v[n] = strtoull(q, &end, 10);
			if (end == q)
				break;
		}
		if (n < c->ncpus)
			continue;	/* ERR:, MIS: one total */
		end[strcspn(end, "\n")] = 0;
		while (*end == ' ')
			end++;
		k = irq_kind_of(p, (size_t)(colon - p), end);
		for (n = 0; n < c->ncpus; n++)
			c->n[k][n] += v[n];
	}
	fclose(f);
	c->have_exits = idle_exits_read(c->exits, IRQ_MAXCPU) >= 0;
	return 0;
}

/*
 * @c's exits from idle of CPU @cpu (-1: every CPU): with @k >= 0, the
 * interrupts of that kind (what woke it); with @k < 0, every exit (the
 * tracepoint's count where tracing is, else every interrupt).
 */
static inline unsigned long long irq_counts_sum(const struct irq_counts *c,
						int cpu, int k)
{
	unsigned long long t = 0;
	int i, j;

	if (k < 0 && c->have_exits) {
		for (j = 0; j < c->ncpus; j++)
			if (cpu < 0 || cpu == j)
				t += c->exits[j];
		return t;
	}
	for (i = 0; i < IRQ_KINDS; i++)
		for (j = 0; j < c->ncpus; j++)
			if ((k < 0 || k == i) && (cpu < 0 || cpu == j))
				t += c->n[i][j];
	return t;
}

#endif /* DTFD_IRQS_H */
