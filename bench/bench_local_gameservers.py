"""GameServer lifecycle on the local cluster: N simulated GameServers created at once → all Ready.

The whole stack runs as `agones local up` runs it (`agones.localcluster.stack.LocalStack`): the
local API server, webhooks, scheduler, kubelets and simulated game servers (each with the real
`SDKServer` in-process) in this process, the controller as its own process (`agones controller`).
Every simulated game server calls Ready at once and pings health every 2 s. The script reports
GameServers per second from the first create to the last Ready, the state-changing API requests
per GameServer counted at the API server by client (everything but get/list/watch: creates,
updates, patches, deletes, bindings, events), the controller process's RSS (current and peak)
and the peak RSS of this process (API server, webhooks, scheduler, kubelets, the N sidecars).

    .venv/bin/python -m bench.bench_local_gameservers --game-servers 500
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import time
from pathlib import Path
from typing import Any

import structlog

from agones.client.config import load_config
from agones.client.rest import RESTClient
from agones.client.versioned.resources import GAME_SERVERS
from agones.informers import ResourceEventHandlerFuncs, SharedInformerFactory
from agones.localcluster.stack import LocalStack, StackOptions


def game_server(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "agones.dev/v1",
        "kind": "GameServer",
        "metadata": {"name": name},
        "spec": {
            "ports": [{"name": "default", "portPolicy": "Dynamic", "containerPort": 7654}],
            "template": {"spec": {"containers": [{"name": "game", "image": "example.com/game:1"}]}},
        },
    }


def rss_kib(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process in KiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0])
    return fields.get("VmRSS", 0), fields.get("VmHWM", 0)


async def run(count: int, nodes: int, timeout: float) -> dict[str, Any]:
    stack = LocalStack(StackOptions(nodes=nodes, simulate_all=True, min_port=7000, max_port=8000))
    await stack.start()
    try:
        config = load_config(stack.kubeconfig)
        config.user_agent = "bench"
        config.qps = 0
        async with RESTClient(config) as client:
            factory = SharedInformerFactory(client)
            ready: dict[str, float] = {}
            all_ready = asyncio.Event()

            def seen(gs: Any) -> None:
                if (gs.get("status") or {}).get("state") == "Ready":
                    ready.setdefault(gs["metadata"]["name"], time.perf_counter())
                    if len(ready) >= count:
                        all_ready.set()

            factory.for_resource(GAME_SERVERS).informer().add_event_handler(
                ResourceEventHandlerFuncs(add_func=seen, update_func=lambda _o, n: seen(n))
            )
            factory.start()
            await factory.wait_for_cache_sync(30)
            assert stack.controller_proc is not None
            await asyncio.sleep(2.0)  # let the controller start and sync its caches
            before = collections.Counter(stack.writes.counts)
            start = time.perf_counter()
            await asyncio.gather(
                *(
                    client.create(GAME_SERVERS, game_server(f"gs-{i}"), namespace="default")
                    for i in range(count)
                )
            )
            created = time.perf_counter()
            await asyncio.wait_for(all_ready.wait(), timeout)
            done = time.perf_counter()
            writes = collections.Counter(stack.writes.counts)
            writes.subtract(before)
            rss, hwm = rss_kib(stack.controller_proc.pid)
            await factory.shutdown()
    finally:
        await stack.stop()
    by_client: collections.Counter[str] = collections.Counter()
    by_request: collections.Counter[str] = collections.Counter()
    for (who, verb, resource), n in writes.items():
        if n > 0:
            by_client[who] += n
            by_request[f"{who} {verb} {resource}"] += n
    total = sum(by_client.values())
    return {
        "game_servers": count,
        "nodes": nodes,
        "create_seconds": round(created - start, 2),
        "to_all_ready_seconds": round(done - start, 2),
        "game_servers_per_second": round(count / (done - start), 1),
        "api_writes_per_game_server": round(total / count, 2),
        "api_writes_per_game_server_without_the_create": round((total - count) / count, 2),
        "writes_per_game_server_by_client": {k: round(v / count, 2) for k, v in by_client.items()},
        "writes_by_request": dict(by_request.most_common()),
        "controller_rss_mib": round(rss / 1024, 1),
        "controller_peak_rss_mib": round(hwm / 1024, 1),
        "stack_process_peak_rss_mib": round(rss_kib(os.getpid())[1] / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game-servers", type=int, default=500)
    parser.add_argument("--nodes", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))
    result = asyncio.run(run(args.game_servers, args.nodes, args.timeout))
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
