"""How long an informer's resync stops everything else on the event loop.

An allocator replica (`Allocator`: its GameServer informer and allocation cache, as `agones
extensions` runs them) over the local API server holding `--pool` Ready GameServers; its informer
is resynced as the 30-s resync timer does, with the batch `RealFIFO.resync` uses now and with all
objects in one batch (what it did before), alternately. A task that wakes every millisecond
measures the loop's longest stall in each resync (until every listener has delivered the resync's
notifications), and the resync's CPU.

    .venv/bin/python -m bench.bench_resync --pool 9500 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import time

from agones import aioloop
from agones.informers.shared_informer import SharedIndexInformer
from agones.informers.the_real_fifo import RESYNC_BATCH
from bench.allocation_inprocess import allocator_over_pool


async def _stall(informer: SharedIndexInformer, batch: int) -> tuple[float, float]:
    """The loop's longest stall (ms) and the CPU (ms) of one resync of `informer` by `batch`."""
    longest = 0.0
    done = False

    async def ticker() -> None:
        nonlocal longest
        last = time.perf_counter()
        while not done:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            longest = max(longest, now - last - 0.001)
            last = now

    tick = asyncio.create_task(ticker())
    await asyncio.sleep(0.05)
    cpu = time.process_time()
    await informer.fifo.resync(batch)
    while any(listener.pending() for listener in informer._listeners):
        await asyncio.sleep(0)
    cpu = time.process_time() - cpu
    done = True
    await tick
    return longest * 1000, cpu * 1000


async def main(pool: int, rounds: int) -> None:
    from agones.logging import configure_logging
    from tests.integration.gameserverallocations.harness import harness

    configure_logging("error")
    async with harness() as h:
        allocator = await allocator_over_pool(h, pool)
        informer = allocator.allocation_cache.informer
        for _ in range(rounds):
            for label, batch in (
                ("one batch (before)", 10**9),
                (f"by {RESYNC_BATCH}", RESYNC_BATCH),
            ):
                stall, cpu = await _stall(informer, batch)
                print(
                    f"{pool} GameServers, resync {label:18s}: longest stall {stall:6.1f} ms, "
                    f"CPU {cpu:6.1f} ms",
                    flush=True,
                )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--pool", type=int, default=9500)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    aioloop.run(main(args.pool, args.rounds))
