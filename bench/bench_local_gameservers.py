"""GameServer lifecycle on the local cluster: N simulated GameServers created at once → all Ready.

The whole stack runs as `agones local up` runs it (`agones.localcluster.stack.LocalStack`): the
local API server, webhooks, scheduler, kubelets and simulated game servers (each with the real
`SDKServer` in-process) in this process, the controller as its own process (`agones controller`).
Every simulated game server calls Ready at once and pings health every 2 s. The script reports
GameServers per second from the first create to the last Ready, the state-changing API requests
per GameServer counted at the API server by client (everything but get/list/watch: creates,
updates, patches, deletes, bindings, events), the controller process's RSS (current and peak)
and the peak RSS of this process (API server, webhooks, scheduler, kubelets, the N sidecars).

With `--rounds R` the N GameServers are deleted after each round (waiting until they are gone) and
created again, and each round reports the controller's RSS when all are Ready and after they are
gone, how long after the last Ready the controller's Event writes went on, and how many events the
controller dropped (its "event buffer full" log lines) up to then and while the GameServers were
deleted. With `--game-server-set` one GameServerSet of N replicas is created (and deleted) instead,
so the GameServerSet controller creates the GameServers.

    .venv/bin/python -m bench.bench_local_gameservers --game-servers 500
    .venv/bin/python -m bench.bench_local_gameservers --game-servers 1000 --rounds 3 --concurrency 200
    .venv/bin/python -m bench.bench_local_gameservers --game-servers 1000 --game-server-set
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import structlog

from agones.client.config import load_config
from agones.client.rest import RESTClient
from agones.client.versioned.resources import GAME_SERVER_SETS, GAME_SERVERS
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


def game_server_set(name: str, replicas: int) -> dict[str, Any]:
    template = game_server("unused")
    return {
        "apiVersion": "agones.dev/v1",
        "kind": "GameServerSet",
        "metadata": {"name": name},
        "spec": {"replicas": replicas, "template": {"spec": template["spec"]}},
    }


def rss_kib(pid: int) -> tuple[int, int]:
    """(VmRSS, VmHWM) of a process in KiB."""
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            fields[key] = int(value.split()[0])
    return fields.get("VmRSS", 0), fields.get("VmHWM", 0)


EVENT_SETTLE = 5.0
"""Seconds without a new controller Event write after which the event path counts as caught up."""


def event_writes(stack: LocalStack) -> int:
    return sum(
        n
        for (who, _verb, resource), n in stack.writes.counts.items()
        if who == "agones-py" and resource == "events"
    )


async def events_settled(stack: LocalStack, since: float) -> float:
    """Seconds from `since` to the controller's last Event write, once none came for a while."""
    last_count, last_change = event_writes(stack), time.perf_counter()
    while time.perf_counter() - last_change < EVENT_SETTLE:
        await asyncio.sleep(0.1)
        count = event_writes(stack)
        if count != last_count:
            last_count, last_change = count, time.perf_counter()
    return max(0.0, last_change - since)


def dropped_events(log: Path) -> int:
    if not log.exists():
        return 0
    return sum(1 for line in log.read_text().splitlines() if "event buffer full" in line)


async def one_round(
    stack: LocalStack,
    client: RESTClient,
    count: int,
    timeout: float,
    round_: int,
    concurrency: int,
    log: Path,
    via_set: bool = False,
) -> dict[str, Any]:
    ready: dict[str, float] = {}
    all_ready = asyncio.Event()

    def seen(gs: Any) -> None:
        if (gs.get("status") or {}).get("state") == "Ready":
            ready.setdefault(gs["metadata"]["name"], time.perf_counter())
            if len(ready) >= count:
                all_ready.set()

    factory = SharedInformerFactory(client)
    informer = factory.for_resource(GAME_SERVERS).informer()
    informer.add_event_handler(
        ResourceEventHandlerFuncs(add_func=seen, update_func=lambda _o, n: seen(n))
    )
    factory.start()
    await factory.wait_for_cache_sync(30)
    before = collections.Counter(stack.writes.counts)
    start = time.perf_counter()
    limit = asyncio.Semaphore(concurrency or count)

    async def create(i: int) -> None:
        async with limit:
            await client.create(GAME_SERVERS, game_server(f"gs-{round_}-{i}"), namespace="default")

    set_name = f"set-{round_}"
    if via_set:
        await client.create(GAME_SERVER_SETS, game_server_set(set_name, count), namespace="default")
    else:
        await asyncio.gather(*(create(i) for i in range(count)))
    created = time.perf_counter()
    await asyncio.wait_for(all_ready.wait(), timeout)
    done = time.perf_counter()
    writes = collections.Counter(stack.writes.counts)
    writes.subtract(before)
    assert stack.controller_proc is not None
    rss, hwm = rss_kib(stack.controller_proc.pid)
    events_lag = await events_settled(stack, done)
    dropped_ready = dropped_events(log)
    if via_set:
        await client.delete(GAME_SERVER_SETS, set_name, namespace="default")
    else:
        await asyncio.gather(
            *(
                client.delete(GAME_SERVERS, f"gs-{round_}-{i}", namespace="default")
                for i in range(count)
            )
        )
    while informer.indexer.list():
        await asyncio.sleep(0.1)
    gone_rss, gone_hwm = rss_kib(stack.controller_proc.pid)
    await factory.shutdown()
    return {
        "start": start,
        "created": created,
        "done": done,
        "writes": writes,
        "rss": rss,
        "hwm": max(hwm, gone_hwm),
        "gone_rss": gone_rss,
        "events_lag": events_lag,
        "dropped_ready": dropped_ready,
        "dropped_gone": dropped_events(log),
    }


def summary(count: int, nodes: int, r: dict[str, Any]) -> dict[str, Any]:
    by_client: collections.Counter[str] = collections.Counter()
    by_request: collections.Counter[str] = collections.Counter()
    for (who, verb, resource), n in r["writes"].items():
        if n > 0:
            by_client[who] += n
            by_request[f"{who} {verb} {resource}"] += n
    total = sum(by_client.values())
    start, done = r["start"], r["done"]
    return {
        "game_servers": count,
        "nodes": nodes,
        "create_seconds": round(r["created"] - start, 2),
        "to_all_ready_seconds": round(done - start, 2),
        "game_servers_per_second": round(count / (done - start), 1),
        "api_writes_per_game_server": round(total / count, 2),
        "api_writes_per_game_server_without_the_create": round((total - count) / count, 2),
        "writes_per_game_server_by_client": {k: round(v / count, 2) for k, v in by_client.items()},
        "writes_by_request": dict(by_request.most_common()),
        "controller_rss_mib": round(r["rss"] / 1024, 1),
        "controller_peak_rss_mib": round(r["hwm"] / 1024, 1),
        "controller_rss_after_deletion_mib": round(r["gone_rss"] / 1024, 1),
        "controller_events_after_last_ready_seconds": round(r["events_lag"], 1),
    }


async def run(
    count: int,
    nodes: int,
    timeout: float,
    rounds: int = 1,
    concurrency: int = 0,
    via_set: bool = False,
) -> dict[str, Any]:
    logs = Path(tempfile.mkdtemp(prefix="bench-gs-logs-"))
    options = StackOptions(
        nodes=nodes, simulate_all=True, min_port=7000, max_port=8000, log_dir=str(logs)
    )
    stack = LocalStack(options)
    await stack.start()
    results = []
    try:
        config = load_config(stack.kubeconfig)
        config.user_agent = "bench"
        config.qps = 0
        async with RESTClient(config) as client:
            await asyncio.sleep(2.0)  # let the controller start and sync its caches
            for round_ in range(rounds):
                log = logs / "controller.log"
                dropped = dropped_events(log)
                result = await one_round(
                    stack, client, count, timeout, round_, concurrency, log, via_set
                )
                results.append(summary(count, nodes, result))
                results[-1]["controller_events_dropped_to_ready"] = (
                    result["dropped_ready"] - dropped
                )
                results[-1]["controller_events_dropped_in_deletion"] = (
                    result["dropped_gone"] - result["dropped_ready"]
                )
                print(f"round {round_ + 1}: {results[-1]}", file=sys.stderr)
    finally:
        await stack.stop()
    final = dict(results[-1]) if rounds == 1 else {"rounds": results}
    final["stack_process_peak_rss_mib"] = round(rss_kib(os.getpid())[1] / 1024, 1)
    return final


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game-servers", type=int, default=500)
    parser.add_argument("--nodes", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument(
        "--concurrency", type=int, default=0, help="creates in flight at once (0: all of them)"
    )
    parser.add_argument(
        "--game-server-set",
        action="store_true",
        help="create one GameServerSet of N replicas (and delete it) instead of N GameServers",
    )
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))
    result = asyncio.run(
        run(
            args.game_servers,
            args.nodes,
            args.timeout,
            args.rounds,
            args.concurrency,
            args.game_server_set,
        )
    )
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
