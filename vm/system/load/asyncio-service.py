# SPDX-License-Identifier: GPL-2.0
"""An idle asyncio service: periodic tasks every 100 ms and every 1 s
(asyncio.sleep: epoll_wait's timeout).  On SIGTERM prints one line:
"asyncio sleeps N early E max-late-ms L p99-late-ms P" (early: woken
before the time asked for, which must never happen; P over every sleep)."""
import asyncio
import signal
import time

stats = {"n": 0, "early": 0, "late": 0.0}
lates = []


async def every(period):
    while True:
        t0 = time.monotonic()
        await asyncio.sleep(period)
        late = time.monotonic() - t0 - period
        stats["n"] += 1
        # asyncio runs a callback up to its clock resolution ahead
        if late < -1e-6:
            stats["early"] += 1
        stats["late"] = max(stats["late"], late)
        lates.append(late)


async def main():
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    tasks = [asyncio.create_task(every(p)) for p in (0.1, 1.0)]
    await stop.wait()
    for t in tasks:
        t.cancel()
    lates.sort()
    p99 = lates[int(len(lates) * 0.99)] if lates else 0.0
    print("asyncio sleeps %d early %d max-late-ms %.1f p99-late-ms %.1f"
          % (stats["n"], stats["early"], stats["late"] * 1e3, p99 * 1e3),
          flush=True)


asyncio.run(main())
