#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""
bench/tree-model.py [--cpus N] [--arms-per-cpu N] [--rate ARMS/S]

The scale model's one unmeasured input (docs/design.md, "A 128-CPU
server"): how often an arm writes a shared word of module/tree.c's tree
of earliest keys, for the scale benchmark's two patterns (bench/scale.c)
on N CPUs.  It replays them against the tree's own rules: a leaf per CPU
(its queue's earliest key; the CPU's own cache line), a parent per eight
children, recomputed when a child changes and written only when its
children's earliest moved by DTFD_TREE_LAG (TICK_NSEC / 4) or more, or a
subtree emptied or filled.  Each CPU owns 64 timers and re-arms them in
turn, all CPUs at RATE arms/s each, interleaved.  Prints, per pattern,
the shared writes per arm at each level above the leaves, and the root's;
and for a third pattern, "worst", in which every other arm is the
system's earliest by more than the lag, the bound: every such arm
carries to the root.
"""
import argparse
import heapq
import random

TICK_NSEC = 4_000_000          # HZ=250, Debian's
LAG = TICK_NSEC // 4
FANOUT = 8
OWN = 64
SEC = 1_000_000_000


def levels_for(cpus):
    widths = [cpus]
    while widths[-1] > 1:
        widths.append((widths[-1] + FANOUT - 1) // FANOUT)
    return widths


def run(cpus, arms_per_cpu, rate, pattern, seed=1):
    rng = random.Random(seed)
    widths = levels_for(cpus)
    tree = [[None] * w for w in widths]
    writes = [0] * len(widths)
    keys = [[None] * OWN for _ in range(cpus)]
    heaps = [[] for _ in range(cpus)]       # (key, slot), lazily pruned
    n = [0] * cpus
    base = SEC
    step = SEC / (rate * cpus)              # ns between two arms anywhere
    now = 0.0

    def earliest(c):
        h = heaps[c]
        while h and keys[c][h[0][1]] != h[0][0]:
            heapq.heappop(h)
        return h[0][0] if h else None

    def carry(cpu):
        i = cpu
        for lv in range(1, len(widths)):
            i //= FANOUT
            kids = tree[lv - 1][i * FANOUT:(i + 1) * FANOUT]
            vals = [k for k in kids if k is not None]
            m = min(vals) if vals else None
            old = tree[lv][i]
            if m == old:
                return
            if old is not None and m is not None and abs(old - m) < LAG:
                return
            tree[lv][i] = m
            writes[lv] += 1

    total = 0
    for _ in range(arms_per_cpu):
        for c in range(cpus):
            now += step
            k = n[c]
            if pattern == "random":
                v = int(now) + SEC + rng.randrange(2 * SEC)
            elif pattern == "worst" and not k & 1:
                # every other arm the system's earliest by more than
                # the lag: each one carries to the root
                v = base - (k * cpus + c) * 2 * LAG
            elif k & 1:
                v = int(now) + 3 * SEC
            else:
                v = base - (k * cpus + c)
            slot = k % OWN
            keys[c][slot] = v
            heapq.heappush(heaps[c], (v, slot))
            n[c] += 1
            total += 1
            e = earliest(c)
            if e != tree[0][c]:
                tree[0][c] = e
                carry(c)
    return total, writes, widths


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("--cpus", type=int, default=128)
    ap.add_argument("--arms-per-cpu", type=int, default=2000)
    ap.add_argument("--rate", type=float, default=250_000.0,
                    help="arms per second per CPU (time between arms)")
    a = ap.parse_args()
    print(f"{a.cpus} CPUs, levels {levels_for(a.cpus)}, {a.arms_per_cpu} "
          f"arms per CPU at {a.rate:.0f}/s each, {OWN} timers per CPU")
    for pattern in ("earliest", "random", "worst"):
        total, writes, widths = run(a.cpus, a.arms_per_cpu, a.rate, pattern)
        per = ", ".join(f"level {lv} ({widths[lv]} nodes) {writes[lv] / total:.5f}"
                        for lv in range(1, len(widths)))
        print(f"  {pattern:8s} shared writes per arm: {per}; "
              f"all levels {sum(writes) / total:.5f}")


if __name__ == "__main__":
    main()
