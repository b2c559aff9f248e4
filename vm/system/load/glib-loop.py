# SPDX-License-Identifier: GPL-2.0
"""A GLib main loop with g_timeout_add (250 ms) and
g_timeout_add_seconds (1 s): poll()'s timeout.  On SIGTERM prints
"glib timeouts N early E max-late-ms L p99-late-ms P" (P: the 250 ms
timeout's, the one with an exact deadline)."""
import signal
import time

from gi.repository import GLib

stats = {"n": 0, "early": 0, "late": 0.0}
exact_late = []


def timer(period, exact):
    due = [time.monotonic() + period]

    def fire():
        now = time.monotonic()
        late = now - due[0]
        stats["n"] += 1
        # g_timeout_add_seconds() fires anywhere in its second
        if exact and late < 0:
            stats["early"] += 1
        stats["late"] = max(stats["late"], late)
        if exact:
            exact_late.append(late)
        # GLib's next deadline: this iteration's time (taken before any
        # callback ran, the clock of time.monotonic()) plus the period,
        # not now plus the period: a callback dispatched late in its
        # iteration (after the other timer's, both due together) would
        # otherwise make the next one look early by as much
        due[0] = GLib.main_current_source().get_time() / 1e6 + period
        return True
    return fire


loop = GLib.MainLoop()
GLib.timeout_add(250, timer(0.25, True))
GLib.timeout_add_seconds(1, timer(1.0, False))
GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, loop.quit)
loop.run()
exact_late.sort()
p99 = exact_late[int(len(exact_late) * 0.99)] if exact_late else 0.0
print("glib timeouts %d early %d max-late-ms %.1f p99-late-ms %.1f"
      % (stats["n"], stats["early"], stats["late"] * 1e3, p99 * 1e3),
      flush=True)
