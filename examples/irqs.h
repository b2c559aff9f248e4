/* SPDX-License-Identifier: MIT */
/*
 * The one reader of /proc/interrupts, for the demo (demo.c), the tests
 * and the benchmark (tests/util.c's h_local_timer_irqs()).
 *
 * DTFD_TIMER_IRQ names the local (per-CPU) timer interrupt's row: the
 * Makefiles pass the architecture's name, from vm/arch.sh (x86's row is
 * labelled "LOC:", arm64's is the one whose name, last on the line, is
 * "arch_timer").
 */
#ifndef DTFD_IRQS_H
#define DTFD_IRQS_H

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

#endif /* DTFD_IRQS_H */
