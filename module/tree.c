// SPDX-License-Identifier: GPL-2.0
/*
 * The tree of earliest keys of the per-CPU queues of deferrable timers
 * (ride.c): how a CPU that ticks finds, in one load when nothing is due
 * and a few when something is, whether any CPU's queue holds a due timer,
 * and which.  It knows keys and CPU numbers only; what a queue is and how
 * it is served is ride.c's.
 */

#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/slab.h>

#include "dtfd.h"

/*
 * Level 0 has one node per CPU (its queue's
 * first key, exact), each level above one per eight of the level below,
 * the last one node, the root: the system's earliest key.  Lock-free: a
 * writer stores its node, then recomputes each parent from its children
 * and swaps it in, having read the parent first (acquire), so that a
 * concurrent writer's change either is seen or makes the swap fail.
 *
 * Lazily: a parent is left alone when its children's earliest moved by
 * less than DTFD_TREE_LAG either way (but always when a subtree empties
 * or fills), so that timers re-armed a little earlier or later, the common
 * case, write their CPU's node and nothing shared.  So a node lies within
 * dtfd_tree_lag (DTFD_TREE_LAG per level above the CPUs) of its subtree's
 * earliest: readers look that much ahead (a due timer is never missed),
 * and the leaves, exact, decide.  A node found due with nothing due below
 * is recomputed exactly.
 */
#define DTFD_TREE_MAX		6	/* 8^5 = 32768 CPUs */
#define DTFD_TREE_LAG		(TICK_NSEC / 4)
static unsigned int dtfd_levels;
static unsigned int dtfd_width[DTFD_TREE_MAX];
static atomic64_t *dtfd_tree[DTFD_TREE_MAX];
static s64 dtfd_tree_lag;

s64 dtfd_tree_root(void)
{
	return atomic64_read(&dtfd_tree[dtfd_levels - 1][0]);
}

/* Whether a node at @old may stay for children whose earliest is @min. */
static bool dtfd_tree_close(s64 old, s64 min)
{
	if (old == KTIME_MAX || min == KTIME_MAX)
		return old == min;
	return abs(old - min) < DTFD_TREE_LAG;
}

/*
 * Recompute node @i of level @l from its children, and carry it up;
 * @exact: even when it moved less than DTFD_TREE_LAG.
 */
static void dtfd_tree_carry(unsigned int l, unsigned int i, bool exact)
{
	unsigned int c, end;
	s64 old, min;

	for (; l < dtfd_levels; l++, i /= DTFD_FANOUT) {
		end = min(i * DTFD_FANOUT + DTFD_FANOUT, dtfd_width[l - 1]);
		do {
			old = atomic64_read_acquire(&dtfd_tree[l][i]);
			min = KTIME_MAX;
			for (c = i * DTFD_FANOUT; c < end; c++)
				min = min(min, atomic64_read(&dtfd_tree[l - 1][c]));
			if (min == old || (!exact && dtfd_tree_close(old, min)))
				return;
		} while (atomic64_cmpxchg(&dtfd_tree[l][i], old, min) != old);
		exact = false;
	}
}

/* CPU @cpu's queue starts at @key now (KTIME_MAX: empty). */
void dtfd_tree_set(unsigned int cpu, s64 key)
{
	atomic64_set(&dtfd_tree[0][cpu], key);
	if (dtfd_levels > 1)
		dtfd_tree_carry(1, cpu / DTFD_FANOUT, false);
}

int dtfd_tree_init(void)
{
	unsigned int l, i, w = nr_cpu_ids;

	for (l = 0; l < DTFD_TREE_MAX; l++) {
		dtfd_width[l] = w;
		dtfd_tree[l] = kcalloc(w, sizeof(atomic64_t), GFP_KERNEL);
		if (!dtfd_tree[l])
			return -ENOMEM;
		for (i = 0; i < w; i++)
			atomic64_set(&dtfd_tree[l][i], KTIME_MAX);
		dtfd_levels = l + 1;
		dtfd_tree_lag = (s64)l * DTFD_TREE_LAG;
		if (w == 1)
			return 0;
		w = DIV_ROUND_UP(w, DTFD_FANOUT);
	}
	return -E2BIG;
}

void dtfd_tree_exit(void)
{
	unsigned int l;

	for (l = 0; l < DTFD_TREE_MAX; l++) {
		kfree(dtfd_tree[l]);
		dtfd_tree[l] = NULL;
	}
	dtfd_levels = 0;
}

/*
 * Deliver every queue's due timers below node @i of level @l: only the
 * subtrees whose earliest key is due.  A node found due with no due child
 * was a writer's passing early value: recompute it.
 */
static bool dtfd_tree_serve_below(unsigned int l, unsigned int i, s64 now,
				  dtfd_serve_fn serve)
{
	unsigned int c, end;
	bool more = false, any = false;

	if (atomic64_read(&dtfd_tree[l][i]) > now + dtfd_tree_lag)
		return false;
	if (!l)
		return atomic64_read(&dtfd_tree[0][i]) <= now && serve(i, now);
	end = min(i * DTFD_FANOUT + DTFD_FANOUT, dtfd_width[l - 1]);
	for (c = i * DTFD_FANOUT; c < end; c++) {
		if (atomic64_read(&dtfd_tree[l - 1][c]) > now + dtfd_tree_lag)
			continue;
		any = true;
		more |= dtfd_tree_serve_below(l - 1, c, now, serve);
	}
	if (!any)
		dtfd_tree_carry(l, i, true);
	return more;
}

/*
 * The earliest key of the CPUs below node @i of level @l that is not
 * after @limit (the leaves are exact); KTIME_MAX: none.
 */
static s64 dtfd_tree_soonest_below(unsigned int l, unsigned int i, s64 limit)
{
	s64 v = atomic64_read(&dtfd_tree[l][i]), best = KTIME_MAX;
	unsigned int c, end;

	if (!l)
		return v <= limit ? v : KTIME_MAX;
	if (v > limit + dtfd_tree_lag)
		return KTIME_MAX;
	end = min(i * DTFD_FANOUT + DTFD_FANOUT, dtfd_width[l - 1]);
	for (c = i * DTFD_FANOUT; c < end; c++)
		best = min(best, dtfd_tree_soonest_below(l - 1, c, limit));
	return best;
}

/*
 * Serve, by @serve, every CPU whose queue starts at or before @now: true
 * when one of them has more due than one call delivers.
 */
bool dtfd_tree_serve(s64 now, dtfd_serve_fn serve)
{
	return dtfd_tree_serve_below(dtfd_levels - 1, 0, now, serve);
}

/* The earliest key of all CPUs if it is not after @limit; else KTIME_MAX. */
s64 dtfd_tree_soonest(s64 limit)
{
	return dtfd_tree_soonest_below(dtfd_levels - 1, 0, limit);
}
