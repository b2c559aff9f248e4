// SPDX-License-Identifier: GPL-2.0
/*
 * The tree of earliest keys of the per-CPU queues of deferrable timers
 * (ride.c): how a CPU that ticks finds, in one load when nothing is due
 * and a few when something is, whether any CPU's queue holds a due timer,
 * and which.  It knows keys and CPU numbers only; what a queue is and how
 * it is served is ride.c's.
 */

#include <linux/atomic.h>
#include <linux/cache.h>
#include <linux/cpumask.h>
#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/percpu.h>
#include <linux/slab.h>

#include "dtfd.h"

/*
 * Level 0 has one node per CPU (its queue's
 * first key, exact), each level above one per eight of the level below,
 * the last one node, the root: the system's earliest key.  Lock-free: a
 * writer stores its node and carries the change up (dtfd_tree_moved()).
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

/*
 * Each node on a cache line of its own: a CPU's leaf is written whenever
 * its queue's first key changes (half the arms, in the scale test's
 * "earliest" pattern), and eight leaves side by side would make every
 * such arm move a line that seven other CPUs write too.  The leaves are
 * per-CPU variables; the nodes above, written rarely, are padded.
 */
struct dtfd_node {
	atomic64_t key;
} ____cacheline_aligned_in_smp;

static DEFINE_PER_CPU_ALIGNED(struct dtfd_node, dtfd_leaf);
static unsigned int dtfd_levels;
static unsigned int dtfd_width[DTFD_TREE_MAX];
static struct dtfd_node *dtfd_tree[DTFD_TREE_MAX];	/* [0] unused */
static s64 dtfd_tree_lag;

static atomic64_t *dtfd_node(unsigned int l, unsigned int i)
{
	return l ? &dtfd_tree[l][i].key : &per_cpu_ptr(&dtfd_leaf, i)->key;
}

/* Node @i of level @l's key; a CPU number no CPU can have: none. */
static s64 dtfd_key(unsigned int l, unsigned int i)
{
	if (!l && !cpu_possible(i))
		return KTIME_MAX;
	return atomic64_read(dtfd_node(l, i));
}

s64 dtfd_tree_root(void)
{
	return dtfd_key(dtfd_levels - 1, 0);
}

/* Whether a node at @old may stay for children whose earliest is @min. */
static bool dtfd_tree_close(s64 old, s64 min)
{
	if (old == KTIME_MAX || min == KTIME_MAX)
		return old == min;
	return abs(old - min) < DTFD_TREE_LAG;
}

/* The earliest of node @i of level @l's children, exactly. */
static s64 dtfd_tree_min(unsigned int l, unsigned int i)
{
	unsigned int c, end = min(i * DTFD_FANOUT + DTFD_FANOUT,
				  dtfd_width[l - 1]);
	s64 min = KTIME_MAX;

	for (c = i * DTFD_FANOUT; c < end; c++)
		min = min(min, dtfd_key(l - 1, c));
	return min;
}

/*
 * A child of node @i of level @l moved from @was to @to (KTIME_MAX:
 * empty): carry that up as far as it matters.  An earlier child can only
 * lower its parent's earliest, to @to itself, and only by more than the
 * lag does it count: no child is read.  A later one matters only if it
 * may have been the earliest: then the children are read.
 *
 * Lock-free, as a pair with every other writer: each stores its node,
 * then (a full barrier: the store, or the swap one level down) reads the
 * parent; each swap of a parent is followed by a second look at the
 * children.  So of two writers, either the second look sees the other's
 * node, or the other's read of the parent sees the swap, and one of them
 * repairs what the other decided on an old view.
 */
static void dtfd_tree_moved(unsigned int l, unsigned int i, s64 was, s64 to)
{
	s64 p, want, before;
	bool swapped;

	for (; l < dtfd_levels && was != to; l++, i /= DTFD_FANOUT) {
		swapped = false;
		before = KTIME_MAX;
		for (;;) {
			p = atomic64_read_acquire(dtfd_node(l, i));
			if (!swapped && to < was) {
				/* earlier: the earliest can only fall, to @to */
				if (p != KTIME_MAX && to >= p - DTFD_TREE_LAG)
					return;
				want = to;
			} else {
				/* later: it matters if it may have been the earliest */
				if (!swapped && p != KTIME_MAX && was > p &&
				    was - p >= DTFD_TREE_LAG)
					return;
				want = dtfd_tree_min(l, i);
				if (dtfd_tree_close(p, want))
					break;
			}
			if (atomic64_cmpxchg(dtfd_node(l, i), p, want) != p)
				continue;
			/* swapped: look again (see above) */
			if (!swapped)
				before = p;
			swapped = true;
		}
		if (!swapped)
			return;
		/* this level moved from @before to @p: its parent's turn */
		was = before;
		to = p;
	}
}

/* Node @i of level @l was found due with nothing due below: exact again. */
static void dtfd_tree_fix(unsigned int l, unsigned int i)
{
	s64 p, min, before = KTIME_MAX;
	bool swapped = false;

	for (;;) {
		p = atomic64_read_acquire(dtfd_node(l, i));
		min = dtfd_tree_min(l, i);
		if (min == p)
			break;
		/* swapped: look again, as dtfd_tree_moved() does */
		if (atomic64_cmpxchg(dtfd_node(l, i), p, min) == p) {
			if (!swapped)
				before = p;
			swapped = true;
		}
	}
	if (swapped)
		dtfd_tree_moved(l + 1, i / DTFD_FANOUT, before, p);
}

/* CPU @cpu's queue starts at @key now (KTIME_MAX: empty). */
void dtfd_tree_set(unsigned int cpu, s64 key)
{
	atomic64_t *leaf = dtfd_node(0, cpu);
	s64 was = atomic64_read(leaf);

	atomic64_set(leaf, key);
	/* the store before the parent's read: see dtfd_tree_moved() */
	smp_mb();
	dtfd_tree_moved(1, cpu / DTFD_FANOUT, was, key);
}

int dtfd_tree_init(void)
{
	unsigned int l, i, w = nr_cpu_ids;

	for_each_possible_cpu(i)
		atomic64_set(dtfd_node(0, i), KTIME_MAX);
	dtfd_width[0] = w;
	dtfd_levels = 1;
	dtfd_tree_lag = 0;
	for (l = 1; w > 1; l++) {
		if (l == DTFD_TREE_MAX)
			return -E2BIG;
		w = DIV_ROUND_UP(w, DTFD_FANOUT);
		dtfd_width[l] = w;
		dtfd_tree[l] = kcalloc(w, sizeof(struct dtfd_node), GFP_KERNEL);
		if (!dtfd_tree[l])
			return -ENOMEM;
		for (i = 0; i < w; i++)
			atomic64_set(dtfd_node(l, i), KTIME_MAX);
		dtfd_levels = l + 1;
		dtfd_tree_lag = (s64)l * DTFD_TREE_LAG;
	}
	return 0;
}

void dtfd_tree_exit(void)
{
	unsigned int l;

	for (l = 1; l < DTFD_TREE_MAX; l++) {
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

	if (dtfd_key(l, i) > now + dtfd_tree_lag)
		return false;
	if (!l)
		return dtfd_key(0, i) <= now && serve(i, now);
	end = min(i * DTFD_FANOUT + DTFD_FANOUT, dtfd_width[l - 1]);
	for (c = i * DTFD_FANOUT; c < end; c++) {
		if (dtfd_key(l - 1, c) > now + dtfd_tree_lag)
			continue;
		any = true;
		more |= dtfd_tree_serve_below(l - 1, c, now, serve);
	}
	if (!any)
		dtfd_tree_fix(l, i);
	return more;
}

/*
 * The earliest key of the CPUs below node @i of level @l that is not
 * after @limit (the leaves are exact); KTIME_MAX: none.
 */
static s64 dtfd_tree_soonest_below(unsigned int l, unsigned int i, s64 limit)
{
	s64 v = dtfd_key(l, i), best = KTIME_MAX;
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
