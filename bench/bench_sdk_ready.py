"""SDK Ready() → RequestReady persisted: latency p50/p99 for both write-coalescing strategies.

The cluster-mode SDKServer runs in-process over gRPC against the in-memory GameServer store (not
a kube-apiserver: the local API server lands on another branch), with WRITE_LATENCY seconds per
write to model the API round trip. The client calls `ready()` and the clock stops when the store
commits state RequestReady; then a "controller" moves the GameServer to Ready and, after
a pause longer than the rate limit, the next round starts. Also counts the writes of a burst
session (Ready, 10 SetLabel, Allocate, Shutdown within ~50 ms) per strategy.

    .venv/bin/python bench/bench_sdk_ready.py [rounds] [write_latency_seconds]
"""

from __future__ import annotations

import asyncio
import copy
import statistics
import sys
import time
from typing import Any

from agones.featuregates import FeatureGates
from agones.sdk import AsyncSDK
from agones.sdkserver.sdkserver import SDKServer, SDKServerOptions
from agones.sdkserver.serve import serve_sdk
from agones.sdkserver.store import InMemoryGameServerStore

GS: dict[str, Any] = {
    "apiVersion": "agones.dev/v1",
    "kind": "GameServer",
    "metadata": {"name": "bench", "namespace": "default", "resourceVersion": "1"},
    "spec": {"health": {"disabled": True}},
    "status": {"state": "Scheduled", "reservedUntil": None},
}


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def run(first_immediately: bool, rounds: int, latency: float) -> tuple[list[float], int]:
    store = InMemoryGameServerStore(copy.deepcopy(GS), write_latency=latency)
    options = SDKServerOptions(first_write_immediately=first_immediately)
    server = SDKServer(store, FeatureGates(), options=options)
    await server.run()
    serving = await serve_sdk(server, address="127.0.0.1", grpc_port=0, http_port=0)
    sdk = AsyncSDK("127.0.0.1", serving.grpc_port)
    await sdk.connect(5)
    persisted = asyncio.Event()

    async def watch() -> None:
        async for gs in store.watch():
            if gs["status"]["state"] == "RequestReady":
                persisted.set()

    watcher = asyncio.create_task(watch())
    samples = []
    try:
        for _ in range(rounds):
            persisted.clear()
            start = time.perf_counter()
            await sdk.ready()
            await persisted.wait()
            samples.append(time.perf_counter() - start)
            store.update(lambda gs: gs["status"].update(state="Ready"))
            await asyncio.sleep(options.request_rate_limit + 0.05)
        before = store.writes
        await sdk.ready()
        for i in range(10):
            await sdk.set_label("round", str(i))
        await sdk.allocate()
        await sdk.shutdown()
        await asyncio.sleep(2 * options.request_rate_limit + 0.2)
        burst_writes = store.writes - before
    finally:
        watcher.cancel()
        await sdk.close()
        await serving.stop(0)
        await server.stop()
    return samples, burst_writes


async def main(rounds: int, latency: float) -> None:
    print(
        f"Ready() -> RequestReady persisted, {rounds} rounds, write latency {latency * 1000:.0f} ms"
    )
    for name, first in (
        ("agones (delay every write 500 ms)", False),
        ("first write at once", True),
    ):
        samples, writes = await run(first, rounds, latency)
        ms = [s * 1000 for s in samples]
        print(
            f"  {name:36s} p50 {statistics.median(ms):7.1f} ms   p99 {pct(ms, 0.99):7.1f} ms"
            f"   burst session writes: {writes}"
        )


if __name__ == "__main__":
    asyncio.run(
        main(
            int(sys.argv[1]) if len(sys.argv) > 1 else 20,
            float(sys.argv[2]) if len(sys.argv) > 2 else 0.005,
        )
    )
