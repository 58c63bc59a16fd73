"""The event loop and garbage-collector settings every `agones` process runs under.

`run(main)` runs the coroutine `main` to completion and returns its result, as `asyncio.run` does
(the same `asyncio.Runner`: pending tasks cancelled, async generators and the default executor shut
down at the end), on uvloop's loop when uvloop is importable and on asyncio's own loop otherwise
(`use_uvloop=False` forces asyncio's). aiohttp, grpc.aio, subprocesses and signal handlers work
on both, and uvloop spends less CPU per socket read and write.

Before the loop starts, `tune_gc()` sets the cyclic collector up for servers whose heaps hold
thousands of long-lived, acyclic JSON objects (stored objects, informer caches, managedFields'
many small maps): what is alive after start-up (modules, schemas, tables) is collected once and
moved to the permanent generation (`gc.freeze`), and the generations are collected at
`GC_THRESHOLDS` instead of CPython's (700, 10, 10), under which a full collection walked every
cached object every few hundred thousand allocations — a third of the local cluster's CPU at
1000 GameServers. Reference counting still frees all acyclic garbage at once; only garbage in
reference cycles waits longer.

While `main` runs, a `Collector` takes over the young generation on a clock. CPython starts a
young collection when tracked objects allocated minus those freed pass a threshold, but the young
list it then walks holds every object created since the last one that is still alive. A server
that replaces stored objects (each update decodes a new tree and frees the old one) adds to that
list without moving the count, so its young collections came seldom and long: 40 to 110 ms in the
local API server and the allocators at 800 allocations/s, each the stall behind the slowest 1 %
of requests. Every `YOUNG_COLLECTION_INTERVAL` the collector freezes the young generation, so no
object is walked twice, and a pause walks at most one interval's survivors (a few ms). It
collects the young generation before freezing it while collections find garbage: one that finds
none doubles the intervals until the next, up to `YOUNG_COLLECTION_BACKOFF`, and one that finds
any brings them back to every interval. These servers' heaps are acyclic: in a minute of
allocations at 700/s, 28 of the local API server's 726 young collections found anything (2,521
objects in all), while the walks took 5 to 6 % of its CPU. Garbage in cycles among frozen
objects, the young garbage frozen unwalked included, waits for the full collection, which runs
when the heap has grown by `FULL_COLLECTION_GROWTH` since the last one (CPython's own rule for
its oldest generation), at a quiet moment.

A full collection walks the whole heap and stops the loop for all of it: about 1.2 µs per tracked
object on this project's 2-core machine, so 1.0 to 1.5 s in a local API server holding 9,500
GameServers (886,000 objects) and 0.3 to 0.8 s in an allocator's informers, measured under load,
where the first one after the caches filled used to land in the middle of the traffic (and in
every process at about the same moment, as they had all started together). These collections
freed almost nothing (2,300 objects of 886,000; 20 of 380,000): the heaps are acyclic. So every
`QUIET_WINDOW` the collector tells quiet from busy (under `QUIET_CPU` of a CPU or not) and
collects when the heap has grown by `FULL_COLLECTION_GROWTH` in a quiet window, by
`FORCED_FULL_COLLECTION_GROWTH` in a busy one: the cyclic garbage a loaded process keeps is
bounded at twice its heap instead of a quarter more, and a pause under load is the exception.
The heap's size is pymalloc's count of allocated blocks (`sys.getallocatedblocks`, 80 µs at four
million blocks): counting the frozen objects (`gc.get_freeze_count`) walks them all, up to
100 ms in a local API server's scattered heap, a pause of its own.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import time
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

GC_THRESHOLDS = (50_000, 50, 100)
"""Net allocations between collections of generation 0, and collections of each generation
between collections of the next (CPython's: 700, 10, 10)."""

YOUNG_COLLECTION_INTERVAL = 0.1
"""Seconds between the `Collector`'s freezes of the young generation."""

YOUNG_COLLECTION_BACKOFF = 16
"""Most intervals from one young collection to the next while they find no garbage."""

FULL_COLLECTION_GROWTH = 0.25
"""Growth of the heap, as a fraction of its size after the last full collection, that starts
the next full collection in a quiet window (CPython's rule for its oldest generation)."""

FORCED_FULL_COLLECTION_GROWTH = 1.0
"""Growth of the heap that starts a full collection in a busy window."""

FULL_COLLECTION_FLOOR = 100_000
"""The heap size, in allocated blocks, the growth is reckoned from at least, so that a small
heap is not collected whole every few seconds."""

QUIET_WINDOW = 1.0
"""Seconds over which the process's CPU time is measured to tell quiet from busy."""

QUIET_CPU = 0.1
"""Share of one CPU under which a `QUIET_WINDOW` counts as quiet."""


def loop_factory(use_uvloop: bool = True) -> Callable[[], asyncio.AbstractEventLoop]:
    """uvloop's `new_event_loop` when asked for and installed, else asyncio's."""
    if use_uvloop:
        try:
            import uvloop
        except ImportError:
            pass
        else:
            factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
            return factory
    return asyncio.new_event_loop


_running: Collector | None = None
"""The `Collector` of the `run` in progress, if any."""


def freeze_long_lived() -> None:
    """Collect everything and freeze what is left, for a process whose caches have just synced:
    what lives then (modules, schemas, the caches) lives long, and no collection walks it again.
    The running `Collector` reckons the frozen heap's growth from here."""
    gc.collect()
    gc.freeze()
    if _running is not None:
        _running.base = sys.getallocatedblocks()


def tune_gc() -> None:
    """Freeze what is alive now and collect at `GC_THRESHOLDS`."""
    freeze_long_lived()
    gc.set_threshold(*GC_THRESHOLDS)


class Collector:
    """The young generation frozen on a clock (collected first while collections find
    garbage), a full collection on growth."""

    def __init__(
        self,
        interval: float = YOUNG_COLLECTION_INTERVAL,
        growth: float = FULL_COLLECTION_GROWTH,
        floor: int = FULL_COLLECTION_FLOOR,
        clock: Callable[[], float] = time.monotonic,
        *,
        forced_growth: float = FORCED_FULL_COLLECTION_GROWTH,
        quiet_window: float = QUIET_WINDOW,
        quiet_cpu: float = QUIET_CPU,
        cpu_clock: Callable[[], float] = time.process_time,
        backoff: int = YOUNG_COLLECTION_BACKOFF,
        collect_generation_0: Callable[[], int] = lambda: gc.collect(0),
    ) -> None:
        self.interval = interval
        self.backoff = backoff
        self.collect_generation_0 = collect_generation_0
        """Collects the young generation, returns how many unreachable objects it found."""
        self.every = 1
        """Intervals from the last young collection to the next."""
        self.since = 0
        """Intervals since the last young collection."""
        self.young_collections = 0
        self.growth = growth
        self.floor = floor
        self.clock = clock
        self.forced_growth = forced_growth
        self.quiet_window = quiet_window
        self.quiet_cpu = quiet_cpu
        self.cpu_clock = cpu_clock
        self.base = sys.getallocatedblocks()
        self.window_start = clock()
        self.window_cpu = cpu_clock()
        self.full_collections = 0

    def collect_young(self) -> None:
        """Freeze the young generation, collecting it first when due (every interval while
        collections find garbage, up to every `backoff` intervals while they find none); at the
        end of each quiet window collect everything if the heap has grown by `growth` since the
        last full collection, at the end of each busy window if it has grown by `forced_growth`."""
        self.since += 1
        if self.since >= self.every:
            self.since = 0
            self.young_collections += 1
            found = self.collect_generation_0()
            self.every = 1 if found else min(self.every * 2, self.backoff)
        gc.freeze()
        now = self.clock()
        if now - self.window_start < self.quiet_window:
            return
        cpu = self.cpu_clock()
        quiet = cpu - self.window_cpu < self.quiet_cpu * (now - self.window_start)
        self.window_start, self.window_cpu = now, cpu
        growth = self.growth if quiet else self.forced_growth
        if sys.getallocatedblocks() > max(self.base, self.floor) * (1 + growth):
            self.collect_full()
            # the next window starts after the collection: its CPU (up to seconds) must not
            # make a quiet process look busy
            self.window_start, self.window_cpu = self.clock(), self.cpu_clock()

    def collect_full(self) -> None:
        """Collect every generation, the frozen one included, and freeze what is left."""
        gc.unfreeze()
        gc.collect()
        gc.freeze()
        self.base = sys.getallocatedblocks()
        self.full_collections += 1

    async def run(self) -> None:
        """`collect_young` every `interval` seconds until cancelled."""
        while True:
            await asyncio.sleep(self.interval)
            self.collect_young()


async def _with_collector(main: Coroutine[Any, Any, T]) -> T:
    global _running
    _running = Collector()
    collector = asyncio.create_task(_running.run())
    try:
        return await main
    finally:
        collector.cancel()
        _running = None


def run(main: Coroutine[Any, Any, T], *, use_uvloop: bool = True) -> T:
    """`asyncio.run(main)` on the loop `loop_factory` picks, with the collector tuned and a
    `Collector` running beside `main`."""
    tune_gc()
    with asyncio.Runner(loop_factory=loop_factory(use_uvloop)) as runner:
        return runner.run(_with_collector(main))
