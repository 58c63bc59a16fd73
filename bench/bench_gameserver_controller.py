"""GameServer controller throughput and API writes on an in-memory API (no HTTP, no local cluster).

N GameServers (already defaulted, as the mutating webhook leaves them) are created at once. Two
simulated actors play the rest of the cluster: a scheduler/kubelet binds every new pod to one of
the nodes with an IP and a running game container, and an "SDK" moves every Scheduled GameServer to
RequestReady. The script reports GameServers per second to Ready and from Shutdown to deleted, the
controller's API writes per GameServer (by verb and resource; events included), 409 conflicts, and
the process's peak RSS (which includes the in-memory API and its history). The actors write
directly into the store, so only the controller's writes are counted.

    .venv/bin/python -m bench.bench_gameserver_controller --game-servers 500
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import random
import resource
import time
from typing import Any

import structlog

from agones.client.versioned.resources import GAME_SERVERS, PODS
from agones.controllers.gameservers import Controller, SidecarConfig
from agones.featuregates import FeatureGates
from agones.informers import SharedInformerFactory
from agones.portallocator import PortAllocator, PortRange
from agones.record import EventBroadcaster
from tests.unit.controllers.gameservers.fakeapi import FakeAPI
from tests.unit.controllers.gameservers.harness import game_server, node


async def scheduler(api: FakeAPI, nodes: list[str]) -> None:
    """Bind each new pod round-robin, give it an IP and a running game container."""
    rr = itertools.cycle(nodes)
    ips = itertools.count(1)
    async for raw in api.watch(PODS, resource_version=str(api.rv)):
        event = json.loads(raw)
        pod = event["object"]
        if event["type"] != "ADDED":
            continue
        ip = next(ips)

        def bind(p: dict[str, Any], node_name: str = next(rr), n: int = ip) -> None:
            p["spec"]["nodeName"] = node_name
            p["status"] = {
                "phase": "Running",
                "podIPs": [{"ip": f"10.0.{n // 250}.{n % 250 + 1}"}],
                "containerStatuses": [
                    {"name": "game", "containerID": f"c-{n}", "state": {"running": {}}}
                ],
            }

        await api.mutate("pods", pod["metadata"]["name"], bind)


async def sdk(api: FakeAPI) -> None:
    """Every Scheduled GameServer calls Ready()."""
    async for raw in api.watch(GAME_SERVERS, resource_version=str(api.rv)):
        obj = json.loads(raw)["object"]
        if obj.get("status", {}).get("state") != "Scheduled":
            continue
        name = obj["metadata"]["name"]

        def ready(gs: dict[str, Any]) -> None:
            if gs["status"]["state"] == "Scheduled":
                gs["status"]["state"] = "RequestReady"

        if api.find("gameservers", name) is not None:
            await api.mutate("gameservers", name, ready)


def count_state(api: FakeAPI, state: str) -> int:
    return sum(1 for gs in api.objects.values() if gs.get("status", {}).get("state") == state)


async def run(n: int, nodes: int, workers: int) -> dict[str, Any]:
    api = FakeAPI()
    names = [f"node-{i}" for i in range(nodes)]
    for i, name in enumerate(names):
        await api.put("nodes", node(name, f"127.0.0.{i + 2}"))
    gates = FeatureGates()
    factory = SharedInformerFactory(api, 0)
    events = EventBroadcaster(api)
    allocator = PortAllocator({"default": PortRange(7000, 8000)}, gates, random.Random(1))
    controller = Controller(api, factory, events, allocator, SidecarConfig(), gates)
    factory.start()
    await factory.wait_for_cache_sync(10)
    tasks = [
        asyncio.create_task(controller.run(workers)),
        asyncio.create_task(events.run()),
        asyncio.create_task(scheduler(api, names)),
        asyncio.create_task(sdk(api)),
    ]
    objs = [game_server(f"gs-{i:05d}") for i in range(n)]
    start = time.perf_counter()
    await asyncio.gather(*(api.create(GAME_SERVERS, o, "default") for o in objs))
    await api.wait_for(lambda: count_state(api, "Ready") == n, timeout=600)
    ready_s = time.perf_counter() - start
    await events.flush()
    writes = dict(api.writes)
    writes.pop(("create", "gameservers"), None)  # the benchmark's own creates

    start = time.perf_counter()
    for o in objs:
        await api.mutate(
            "gameservers", o["metadata"]["name"], lambda gs: gs["status"].update(state="Shutdown")
        )
    await api.wait_for(lambda: not api.objects_of("gameservers"), timeout=600)
    shutdown_s = time.perf_counter() - start
    await events.flush()
    shutdown_writes = {
        f"{verb} {plural}": round((c - writes.get((verb, plural), 0)) / n, 2)
        for (verb, plural), c in sorted(api.writes.items())
        if (verb, plural) != ("create", "gameservers") and c != writes.get((verb, plural), 0)
    }
    await controller.shut_down_with_drain()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await factory.shutdown()
    per_gs = {f"{verb} {plural}": round(c / n, 2) for (verb, plural), c in sorted(writes.items())}
    return {
        "game_servers": n,
        "nodes": nodes,
        "workers": workers,
        "ready_seconds": round(ready_s, 2),
        "ready_per_second": round(n / ready_s, 1),
        "writes_per_game_server_to_ready": per_gs,
        "writes_per_game_server_excl_events": round(
            sum(c for (v, p), c in writes.items() if p != "events") / n, 2
        ),
        "conflicts_to_ready": api.conflicts,
        "shutdown_to_deleted_per_second": round(n / shutdown_s, 1),
        "writes_per_game_server_shutdown_to_gone": shutdown_writes,
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "ports_taken_after": allocator.allocators[0].taken_count(),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game-servers", type=int, default=500)
    parser.add_argument("--nodes", type=int, default=4)
    parser.add_argument("--workers", type=int, default=64)
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(30))
    result = asyncio.run(run(args.game_servers, args.nodes, args.workers))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
