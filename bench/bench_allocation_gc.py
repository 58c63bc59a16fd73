"""Garbage-collector pauses of the process that holds the local API server's store, during the API
path's allocations: the cause of the p99 tails of `bench_allocation` (see BENCHMARKS.md,
"Allocation speed (this session)").

Starts a `LocalStack` (extensions as child processes unless `--in-process`; CPython's GC thresholds,
or with `--thresholds apiserver` those `agones localcluster apiserver` sets), writes a pool of 1000
Ready GameServers, times one full collection of each generation, then allocates 600 times at
C = 10 through the API path while a `gc.callbacks` hook records every collection's pause. Prints
the tracked objects, the forced collections' times, the phase's rate and p99, and per generation
the number of collections, the longest and the total pause.

    PYTHONPATH=. .venv/bin/python -m bench.bench_allocation_gc
    PYTHONPATH=. .venv/bin/python -m bench.bench_allocation_gc --thresholds apiserver
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import time
from typing import Any

from agones.aioloop import GC_THRESHOLDS
from agones.client.config import load_kube_config
from agones.client.rest import RESTClient
from agones.localcluster.stack import LocalStack, StackOptions
from agones.logging import configure_logging
from bench.bench_allocation import fill, phase


async def main(in_process: bool, pool: int, requests: int, thresholds: str) -> None:
    configure_logging("error")
    if thresholds == "apiserver":
        gc.set_threshold(*GC_THRESHOLDS)
    print(f"GC thresholds {gc.get_threshold()}")
    options = StackOptions(
        nodes=2,
        controller=False,
        simulate_all=True,
        allocator_service=False,
        extensions_process=not in_process,
    )
    async with LocalStack(options) as stack:
        config = load_kube_config(stack.kubeconfig)
        config.qps = 0
        rest = RESTClient(config)
        try:
            await fill(rest, [f"gs-{i:04d}" for i in range(pool)])
            await asyncio.sleep(1.0)
            print(f"tracked objects with {pool} GameServers: {len(gc.get_objects())}")
            for generation in (0, 1, 2):
                start = time.perf_counter()
                gc.collect(generation)
                print(f"  forced gen {generation}: {(time.perf_counter() - start) * 1000:.1f} ms")
            pauses: list[tuple[int, float]] = []
            started = [0.0]

            def hook(phase_name: str, info: dict[str, Any]) -> None:
                if phase_name == "start":
                    started[0] = time.perf_counter()
                else:
                    pauses.append((info["generation"], time.perf_counter() - started[0]))

            gc.callbacks.append(hook)
            try:
                result = await phase(rest, 10, requests)
            finally:
                gc.callbacks.remove(hook)
            print(f"C=10: {result['rate']:.0f} allocations/s, p99 {result['p99']:.1f} ms")
            for generation in (0, 1, 2):
                times = [p for g, p in pauses if g == generation]
                if times:
                    print(
                        f"  gen {generation}: {len(times)} collections, longest "
                        f"{max(times) * 1000:.1f} ms, total {sum(times) * 1000:.1f} ms"
                    )
        finally:
            await rest.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--in-process", action="store_true", help="extensions in the stack")
    parser.add_argument("--pool", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument(
        "--thresholds",
        default="default",
        help="default (CPython's) or apiserver (those of agones localcluster apiserver)",
    )
    args = parser.parse_args()
    asyncio.run(main(args.in_process, args.pool, args.requests, args.thresholds))
