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
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

GC_THRESHOLDS = (50_000, 50, 100)
"""Net allocations between collections of generation 0, and collections of each generation
between collections of the next (CPython's: 700, 10, 10)."""


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


def tune_gc() -> None:
    """Freeze what is alive now and collect at `GC_THRESHOLDS`."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


def run(main: Coroutine[Any, Any, T], *, use_uvloop: bool = True) -> T:
    """`asyncio.run(main)` on the loop `loop_factory` picks, with the collector tuned."""
    tune_gc()
    with asyncio.Runner(loop_factory=loop_factory(use_uvloop)) as runner:
        return runner.run(main)
