"""The in-process modes of `bench_allocation` (`--stress`, `--in-process`) and the allocator over a
pool that `bench_resync` shares: an `AllocationHarness` (the local API server in this process)
instead of the cluster in a child process.

    .venv/bin/python -m bench.bench_allocation --stress 20000 --pool 2000
    .venv/bin/python -m bench.bench_allocation --in-process --pool 1000 --requests 300
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from bench.bench_allocation import NAMESPACE, REQUEST, pct


async def stress(total: int, pool: int, partitioned: bool) -> None:
    from agones.logging import configure_logging
    from tests.integration.gameserverallocations.harness import harness
    from tests.integration.gameserverallocations.test_replicas import fill as fill_pool
    from tests.integration.gameserverallocations.test_replicas import (
        retries,
        two_replicas,
    )
    from tests.integration.gameserverallocations.test_replicas import (
        stress as run,
    )

    configure_logging("error")
    async with harness() as h:
        replicas = await two_replicas(h, partitioned)
        await fill_pool(h, replicas, pool)
        start = time.perf_counter()
        tally = await run(h, replicas, total)
        elapsed = time.perf_counter() - start
        print(
            f"{total} allocations, {pool} GameServers, 2 {'partitioned' if partitioned else 'shared'} "
            "replicas, 50 clients, write faults "
            f"({h.server.faults.injected} injected): {dict(tally.outcomes)}, "
            f"double allocations {len(tally.doubles)}, retries {sum(retries(r) for r in replicas)}, "
            f"{total / elapsed:.0f}/s"
        )


async def _allocate_in_process(
    allocator: Any, body: dict[str, Any], concurrency: int, count: int, latencies: list[float]
) -> None:
    import msgspec

    from agones.apis.allocation.v1 import GameServerAllocation

    left = count

    async def client() -> None:
        nonlocal left
        while left > 0:
            left -= 1
            start = time.perf_counter()
            await allocator.allocate(msgspec.convert(body, GameServerAllocation))
            latencies.append(time.perf_counter() - start)

    await asyncio.gather(*(client() for _ in range(concurrency)))


async def allocator_over_pool(h: Any, pool: int) -> Any:
    """A started allocator replica (`AllocationHarness.allocator`) whose cache holds `pool`
    Ready GameServers, made in the harness `h` on two nodes."""
    sem = asyncio.Semaphore(20)

    async def make(i: int) -> None:
        async with sem:
            await h.create_ready(f"gs-{i:05d}", node=f"node-{'ab'[i % 2]}")

    await asyncio.gather(*(make(i) for i in range(pool)))
    allocator = await h.allocator()
    while len(allocator.allocation_cache) < pool:
        await asyncio.sleep(0.05)
    return allocator


async def in_process(pool: int, requests: int) -> None:
    """The allocator alone: `Allocator.allocate` against the local API server in one process (no
    aggregator, no client TLS), same pool, request and concurrencies."""
    from agones.logging import configure_logging
    from tests.integration.gameserverallocations.harness import harness

    configure_logging("error")
    body = {"metadata": {"namespace": NAMESPACE}, "spec": REQUEST["spec"]}
    async with harness() as h:
        allocator = await allocator_over_pool(h, pool)
        for concurrency in (1, 10, 50):
            latencies: list[float] = []
            start, cpu = time.perf_counter(), time.process_time()
            await _allocate_in_process(
                allocator, body, concurrency, min(requests, pool // 3), latencies
            )
            rate = len(latencies) / (time.perf_counter() - start)
            cpu_ms = (time.process_time() - cpu) * 1000 / max(len(latencies), 1)
            print(
                f"in-process C={concurrency:<3d} {rate:7.1f} alloc/s  p50 {pct(latencies, 0.5):6.1f} ms"
                f"  p90 {pct(latencies, 0.9):6.1f} ms  p99 {pct(latencies, 0.99):6.1f} ms"
                f"  CPU {cpu_ms:.2f} ms per allocation",
                flush=True,
            )
