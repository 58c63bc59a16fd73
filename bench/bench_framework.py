"""Controller-framework benchmarks: work queue, informer absorption, cache memory, idle RSS.

    .venv/bin/python -m bench.bench_framework [--quick] [--kubeconfig PATH]

Prints one line per figure. Wall-clock figures vary with the machine's load; record them in
BENCHMARKS.md ("Controller framework") with the command above. `--kubeconfig` additionally measures
the example controller running idle against that cluster.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import subprocess
import sys
import time
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import msgspec

from agones.client.rest import Resource
from agones.client.versioned.resources import GAME_SERVERS as GAMESERVERS
from agones.informers import (
    ListWatch,
    ResourceEventHandlerFuncs,
    SharedIndexInformer,
    StructDecoder,
)
from agones.logging import configure_logging
from agones.workqueue import Queue, WorkerQueue
from agones.workqueue.default_rate_limiters import ItemFastSlowRateLimiter

ROOT = Path(__file__).resolve().parents[1]


def game_server(i: int, rv: int, state: str = "Ready") -> dict[str, Any]:
    """A GameServer as a Fleet-owned, allocated-ready server looks on the wire (~1.8 KB)."""
    name = f"simple-game-server-x7k2p-{i:06d}"
    return {
        "apiVersion": "agones.dev/v1",
        "kind": "GameServer",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": f"4c1f7a8e-0000-4000-8000-{i:012d}",
            "resourceVersion": str(rv),
            "generation": 3,
            "creationTimestamp": "2026-11-29T10:00:00Z",
            "generateName": "simple-game-server-x7k2p-",
            "labels": {
                "agones.dev/fleet": "simple-game-server",
                "agones.dev/gameserverset": "simple-game-server-x7k2p",
            },
            "annotations": {
                "agones.dev/sdk-version": "1.57.0",
                "agones.dev/ready-container-id": f"containerd://{i:064x}",
            },
            "finalizers": ["agones.dev"],
            "ownerReferences": [
                {
                    "apiVersion": "agones.dev/v1",
                    "kind": "GameServerSet",
                    "name": "simple-game-server-x7k2p",
                    "uid": "9d0e1f2a-0000-4000-8000-000000000001",
                    "controller": True,
                    "blockOwnerDeletion": True,
                }
            ],
        },
        "spec": {
            "container": "simple-game-server",
            "ports": [
                {
                    "name": "default",
                    "portPolicy": "Dynamic",
                    "containerPort": 7654,
                    "hostPort": 7000 + i % 1000,
                    "protocol": "UDP",
                }
            ],
            "health": {
                "disabled": False,
                "periodSeconds": 5,
                "failureThreshold": 3,
                "initialDelaySeconds": 5,
            },
            "scheduling": "Packed",
            "sdkServer": {"logLevel": "Info", "grpcPort": 9357, "httpPort": 9358},
            "template": {
                "metadata": {"creationTimestamp": None},
                "spec": {
                    "containers": [
                        {
                            "name": "simple-game-server",
                            "image": "us-docker.pkg.dev/agones-images/examples/simple-game-server:0.35",
                            "resources": {
                                "limits": {"cpu": "20m", "memory": "64Mi"},
                                "requests": {"cpu": "20m", "memory": "64Mi"},
                            },
                        }
                    ]
                },
            },
        },
        "status": {
            "state": state,
            "ports": [{"name": "default", "port": 7000 + i % 1000}],
            "address": f"10.0.{i // 250 % 256}.{i % 250}",
            "addresses": [
                {"type": "InternalIP", "address": f"10.0.{i // 250 % 256}.{i % 250}"},
                {"type": "Hostname", "address": f"node-{i % 50}"},
            ],
            "nodeName": f"node-{i % 50}",
            "reservedUntil": None,
            "players": None,
            "counters": {"rooms": {"count": i % 5, "capacity": 10}},
            "lists": {},
            "eviction": {"safe": "Never"},
        },
    }


# -- work queue ----------------------------------------------------------------------------------


async def bench_queue(items: int, workers: int) -> float:
    queue: Queue[str] = Queue()
    keys = [f"default/gs-{i}" for i in range(items)]
    done = 0
    finished = asyncio.Event()

    async def worker() -> None:
        nonlocal done
        while True:
            item, shutdown = await queue.get()
            if shutdown or item is None:
                return
            queue.done(item)
            done += 1
            if done == items:
                finished.set()

    tasks = [asyncio.create_task(worker()) for _ in range(workers)]
    start = time.perf_counter()
    for i, key in enumerate(keys):
        queue.add(key)
        if i % 64 == 63:
            await asyncio.sleep(0)  # interleave producer and consumers, as informer events do
    await finished.wait()
    elapsed = time.perf_counter() - start
    queue.shut_down()
    await asyncio.gather(*tasks)
    return items / elapsed


async def bench_workerqueue(items: int, workers: int) -> float:
    done = 0
    finished = asyncio.Event()

    async def sync(key: str) -> None:
        nonlocal done
        done += 1
        if done == items:
            finished.set()

    wq = WorkerQueue(sync, None, "gameserver", "", ItemFastSlowRateLimiter(0.0, 0.0, 5))
    runner = asyncio.create_task(wq.run(workers))
    start = time.perf_counter()
    for i in range(items):
        wq.enqueue_immediately(f"default/gs-{i}")
        if i % 64 == 63:
            await asyncio.sleep(0)
    await finished.wait()
    elapsed = time.perf_counter() - start
    wq.shut_down()
    await runner
    return items / elapsed


# -- informer ------------------------------------------------------------------------------------


class StreamClient:
    """Serves a list and then a precomputed stream of watch lines, from memory."""

    def __init__(self, listing: bytes, lines: list[bytes]) -> None:
        self.listing = listing
        self.lines = lines
        self.served = asyncio.Event()

    async def list_raw(self, res: Resource, namespace: str | None = None, **kw: Any) -> bytes:
        return self.listing

    async def watch(
        self, res: Resource, namespace: str | None = None, **kw: Any
    ) -> AsyncIterator[bytes]:
        for i, line in enumerate(self.lines):
            yield line
            if i % 256 == 255:
                await asyncio.sleep(0)
        self.served.set()
        await asyncio.Event().wait()


class Meta(msgspec.Struct, omit_defaults=True):
    name: str = ""
    namespace: str = ""
    uid: str = ""
    resource_version: str = msgspec.field(name="resourceVersion", default="")
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}


class GameServerStruct(msgspec.Struct, omit_defaults=True):
    """A stand-in for the typed GameServer (src/apis): metadata typed, spec/status kept raw-ish."""

    metadata: Meta = msgspec.field(default_factory=Meta)
    spec: dict[str, Any] = {}
    status: dict[str, Any] = {}
    api_version: str = msgspec.field(name="apiVersion", default="")
    kind: str = ""


def agones_game_server_type() -> Any:
    """The project's typed GameServer (src/apis), when present on this branch."""
    try:
        from agones.apis.agones.v1 import GameServer  # type: ignore[import-not-found,unused-ignore]
    except ImportError:
        return None
    return GameServer


def make_stream(objects: int, updates: int) -> tuple[bytes, list[bytes]]:
    listing = json.dumps(
        {
            "kind": "GameServerList",
            "metadata": {"resourceVersion": "1000"},
            "items": [game_server(i, 1000) for i in range(objects)],
        }
    ).encode()
    lines = []
    states = ["Allocated", "Ready", "Shutdown"]
    for n in range(updates):
        i = n % objects
        lines.append(
            json.dumps(
                {"type": "MODIFIED", "object": game_server(i, 1001 + n, states[n % 3])}
            ).encode()
        )
    return listing, lines


async def bench_informer(objects: int, updates: int, decoder: Any) -> float:
    listing, lines = make_stream(objects, updates)
    # Keep the harness's own garbage out of the measurement: the cyclic GC would otherwise rescan
    # it on every full collection (the runner freezes the synced caches the same way).
    gc.collect()
    gc.freeze()
    client = StreamClient(listing, lines)
    informer = SharedIndexInformer(ListWatch(client, GAMESERVERS, decoder=decoder), name="bench")
    received = 0
    finished = asyncio.Event()
    wq = WorkerQueue(lambda key: asyncio.sleep(0), None, "gameserver", "")

    def on_update(old: Any, new: Any) -> None:
        nonlocal received
        wq.enqueue_immediately(new)  # what a controller's handler does
        received += 1
        if received == updates:
            finished.set()

    informer.add_event_handler(ResourceEventHandlerFuncs(update_func=on_update))
    task = asyncio.create_task(informer.run())
    await informer.wait_for_sync()
    start = time.perf_counter()
    await finished.wait()
    elapsed = time.perf_counter() - start
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    gc.unfreeze()
    return updates / elapsed


# -- memory --------------------------------------------------------------------------------------


def rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def cache_memory(count: int, decoder: Any) -> tuple[float, float]:
    """(tracemalloc bytes per object, RSS growth in MB) for `count` decoded objects in an Indexer."""
    from agones.informers import Indexer

    listing = json.dumps(
        {"metadata": {"resourceVersion": "1"}, "items": [game_server(i, 1) for i in range(count)]}
    ).encode()
    gc.collect()
    before_rss = rss_kb()
    tracemalloc.start()
    indexer = Indexer()
    items = decoder.decode_list(listing).items
    indexer.replace(items, "1")
    del items
    gc.collect()
    current, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    after_rss = rss_kb()
    assert len(indexer) == count
    return current / count, (after_rss - before_rss) / 1024


def idle_rss_subprocess(code: str) -> float:
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    return float(out.stdout.strip().splitlines()[-1])


RSS_SNIPPET = """
import sys
{imports}
for line in open('/proc/self/status'):
    if line.startswith('VmRSS:'):
        print(int(line.split()[1]) / 1024)
"""

FRAMEWORK_IMPORTS = (
    "import agones.controller, agones.informers, agones.workqueue, agones.leaderelection, "
    "agones.record, agones.client.rest, agones.logging"
)


def example_idle_rss(kubeconfig: str, seconds: float = 5.0) -> float:
    """RSS of the example controller running idle against a cluster (after its caches synced)."""
    proc = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "examples" / "configmap_counter.py"),
            "--kubeconfig",
            kubeconfig,
            "--http-port",
            "0",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )
    try:
        time.sleep(seconds)
        for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
        return 0.0
    finally:
        proc.terminate()
        proc.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="smaller sizes (smoke run)")
    parser.add_argument("--kubeconfig", default=None)
    args = parser.parse_args()
    configure_logging("warning", json=False)
    scale = 10 if args.quick else 1

    for workers in (1, 64):
        rate = asyncio.run(bench_queue(200_000 // scale, workers))
        print(f"queue add/get/done, {workers:>2} workers: {rate:,.0f} items/s")
    for workers in (1, 64):
        rate = asyncio.run(bench_workerqueue(100_000 // scale, workers))
        print(f"WorkerQueue enqueue+sync (no-op handler), {workers:>2} workers: {rate:,.0f} keys/s")
    decoders: list[tuple[str, Any]] = [
        ("dict (RawDecoder)", None),
        ("msgspec Struct", StructDecoder(GameServerStruct)),
    ]
    typed = agones_game_server_type()
    if typed is not None:
        decoders.append(("typed agones GameServer", StructDecoder(typed)))
    for label, decoder in decoders:
        rate = asyncio.run(bench_informer(1_000, 50_000 // scale, decoder))
        print(
            f"informer absorbs GameServer updates, {label}: {rate:,.0f} events/s (decode + store + handler + enqueue)"
        )
    from agones.informers import RawDecoder

    decoders[0] = ("dict (RawDecoder)", RawDecoder())
    for label, decoder in decoders:
        per_obj, rss_mb = cache_memory(10_000 // scale, decoder)
        print(
            f"cache of {10_000 // scale:,} GameServers, {label}: {per_obj / 1024:.1f} KiB/object traced, RSS +{rss_mb:.1f} MB"
        )
    base = idle_rss_subprocess(RSS_SNIPPET.format(imports="pass"))
    framework = idle_rss_subprocess(RSS_SNIPPET.format(imports=FRAMEWORK_IMPORTS))
    kubernetes_asyncio = idle_rss_subprocess(
        RSS_SNIPPET.format(imports="import kubernetes_asyncio.client")
    )
    print(
        f"RSS: bare python {base:.1f} MB; framework imported {framework:.1f} MB; "
        f"+ kubernetes_asyncio.client would be {kubernetes_asyncio:.1f} MB on its own"
    )
    if args.kubeconfig:
        print(
            f"RSS of the idle example controller against the cluster: {example_idle_rss(args.kubeconfig):.1f} MB"
        )
    print(f"(python {sys.version.split()[0]}, {os.cpu_count()} CPUs)")


if __name__ == "__main__":
    main()
