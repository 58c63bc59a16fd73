"""A Fleet scaled 0 → N Ready → 0 with simulated game servers, round after round.

Local (default): the whole stack as `agones local up` runs it (`LocalStack`, simulated game
servers: the real `SDKServer` in-process per pod, Ready at once), the controller as its own process
(`agones controller`: GameServer, GameServerSet and Fleet controllers), the scheduler, kubelets
and simulated sidecars as another (`--no-nodes-process`: in the bench's process beside the API
server, as before). Per round the bench scales
the Fleet through its scale subresource (as `kubectl scale` does) and reports:

* GameServers per second from the scale to the last Ready, overall and per decile (the rate at
  which each tenth of the N became Ready), and when the Fleet's status showed N Ready;
* API writes per GameServer by component — every request but get/list/watch, counted at the API
  server by User-Agent: `agones-py` the controller, `agones-local-sdkserver` the simulated
  sidecars, `agones-local-scheduler` / `-kubelet` the scheduler and kubelets, `bench` this script
  (the scale) — and the 409 Conflicts among them;
* the controller process's RSS at N and after the scale-down, so rounds show any growth, and its
  CPU-seconds per GameServer (user + system from /proc/PID/stat: steadier than rates on a shared
  machine);
* the same for N → 0 (until every GameServer is gone).

With `--kubeconfig` the bench runs against that cluster instead: it needs Agones' CRDs, webhooks
and a controller (ours or Agones') running there, and game servers that call Ready (a fake kubelet,
a real image with `--image`, or `--simulate` on an agones-py local cluster started apart, e.g.
`agones local up --simulate-all`). Writes cannot be counted at a remote API server; pass the
controller's `/metrics` URL (`--controller-metrics`) to count its writes and 409s from
`agones_k8s_client_http_request_total`, and `--controller-pid` for its RSS when it runs here.

    .venv/bin/python -m bench.bench_fleet --replicas 1000 --rounds 2

`--write-sequences` adds, per scale-up, the commonest sequences of GameServer updates and patches
as the local API server answered them (`client:state:code`): which transitions were written, and
which writes lost a race (409, or a JSON patch's failed test: 422).

`--controller-arg=--api-server-qps=1000` (repeatable) passes a flag to the local controller. The
local controller gets the stack's client budget (`StackOptions.client_qps` / `client_burst`, as
`agones local up` gives it); Agones' own budget is
`--controller-arg=--api-server-qps=400 --controller-arg=--api-server-qps-burst=500`.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import json
import os
import re
import signal
import time
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

from agones import aioloop
from agones.client.config import load_config
from agones.client.rest import RESTClient
from agones.client.versioned.resources import FLEETS, GAME_SERVERS
from agones.cmd import memtrace
from agones.informers import ListWatchSource, ResourceEventHandlerFuncs, SharedInformerFactory
from agones.localcluster.nodes.podrunner import SIMULATE_ANNOTATION
from agones.localcluster.stack import LocalStack, StackOptions
from bench.bench_local_gameservers import rss_kib

NAMESPACE = "default"
FLEET = "bench-fleet"
CONTROLLER_SDK = ("agones-py", "agones-local-sdkserver", "Python")
SCHEDULER_KUBELET = ("agones-local-scheduler", "agones-local-kubelet")


def cpu_seconds(pid: int | None) -> float:
    """User + system CPU-seconds a process has used (0 without a pid)."""
    if not pid:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def fleet(image: str, simulate: bool) -> dict[str, Any]:
    pod: dict[str, Any] = {"spec": {"containers": [{"name": "simple-game-server", "image": image}]}}
    if simulate:
        pod["metadata"] = {"annotations": {SIMULATE_ANNOTATION: "true"}}
    return {
        "apiVersion": "agones.dev/v1",
        "kind": "Fleet",
        "metadata": {"name": FLEET},
        "spec": {
            "replicas": 0,
            "template": {
                "spec": {"ports": [{"name": "default", "containerPort": 7654}], "template": pod}
            },
        },
    }


@dataclass
class Observed:
    """What the informers have seen: when each GameServer was first Ready, what exists."""

    ready_at: dict[str, float] = field(default_factory=dict)
    existing: set[str] = field(default_factory=set)
    fleet_ready: int = 0
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def game_server(self, gs: Any) -> None:
        name = gs["metadata"]["name"]
        self.existing.add(name)
        if (gs.get("status") or {}).get("state") == "Ready":
            self.ready_at.setdefault(name, time.perf_counter())
        self.changed.set()

    def gone(self, gs: Any) -> None:
        obj = getattr(gs, "obj", gs)
        self.existing.discard(obj["metadata"]["name"])
        self.changed.set()

    def fleet(self, f: Any) -> None:
        self.fleet_ready = (f.get("status") or {}).get("readyReplicas") or 0
        self.changed.set()

    async def until(self, condition: Any, timeout: float) -> float:
        deadline = time.perf_counter() + timeout
        while not condition():
            self.changed.clear()
            left = deadline - time.perf_counter()
            if left <= 0:
                raise TimeoutError("the fleet did not get there in time")
            try:
                await asyncio.wait_for(self.changed.wait(), left)
            except TimeoutError:
                continue
        return time.perf_counter()


class Writes:
    """Write and 409 counts, from the local API server or the controller's /metrics."""

    def __init__(self, stack: LocalStack | None, metrics_url: str) -> None:
        self.stack = stack
        self.metrics_url = metrics_url

    def trace(self, on: bool) -> dict[str, list[str]] | None:
        """Start (`on`) or stop recording each GameServer's updates and patches at the local
        API server (`WriteCounter.sequences`); stopping returns what was recorded."""
        if self.stack is None:
            return None
        recorded = self.stack.writes.sequences
        self.stack.writes.sequences = {} if on else None
        return recorded

    def snapshot(self) -> tuple[collections.Counter[str], collections.Counter[str]]:
        if self.stack is not None:
            writes: collections.Counter[str] = collections.Counter()
            conflicts: collections.Counter[str] = collections.Counter()
            for (who, verb, res), n in self.stack.writes.counts.items():
                writes[who] += n
                writes[f"{who} {verb} {res}"] += n
            for (who, verb, res), n in self.stack.writes.conflicts.items():
                conflicts[who] += n
                conflicts[f"{who} {verb} {res}"] += n
            return writes, conflicts
        return self._from_metrics()

    def _from_metrics(self) -> tuple[collections.Counter[str], collections.Counter[str]]:
        writes: collections.Counter[str] = collections.Counter()
        conflicts: collections.Counter[str] = collections.Counter()
        if not self.metrics_url:
            return writes, conflicts
        with urllib.request.urlopen(self.metrics_url, timeout=10) as resp:
            text = resp.read().decode()
        pattern = re.compile(r"^agones_k8s_client_http_request_total\{([^}]*)\} ([0-9.e+]+)$")
        for line in text.splitlines():
            m = pattern.match(line)
            if not m:
                continue
            labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
            if labels.get("verb", "").upper() in ("GET", "LIST", "WATCH"):
                continue
            writes["controller"] += int(float(m.group(2)))
            if labels.get("status_code") == "409":
                conflicts["controller"] += int(float(m.group(2)))
        return writes, conflicts


class Snapshots:
    """`--controller-memtrace FILE`: SIGUSR2 to the controller, wait for its report in FILE."""

    def __init__(self, path: str, pid: int | None) -> None:
        self.path = path
        self.pid = pid
        self.taken = 0

    async def take(self, timeout: float = 300.0) -> None:
        if not self.path or not self.pid:
            return
        self.taken += 1
        os.kill(self.pid, signal.SIGUSR2)
        mark = f"-- end of snapshot {self.taken}"
        deadline = time.perf_counter() + timeout
        while time.perf_counter() < deadline:
            with contextlib.suppress(OSError), open(self.path) as report:
                if mark in report.read():
                    return
            await asyncio.sleep(0.5)
        raise TimeoutError(f"the controller wrote no {mark!r} to {self.path}")


def per_game_server(
    before: tuple[collections.Counter[str], collections.Counter[str]],
    after: tuple[collections.Counter[str], collections.Counter[str]],
    count: int,
) -> dict[str, Any]:
    writes, conflicts = after[0] - before[0], after[1] - before[1]
    by_request = {k: v for k, v in writes.items() if " " in k}
    conflicts_by_request = {k: v for k, v in conflicts.items() if " " in k}
    writes = collections.Counter({k: v for k, v in writes.items() if " " not in k})
    conflicts = collections.Counter({k: v for k, v in conflicts.items() if " " not in k})
    total = sum(writes.values())
    controller_sdk = sum(writes[c] for c in CONTROLLER_SDK) + writes["controller"]
    return {
        "writes_per_game_server": round(total / count, 2),
        "controller_plus_sdk_writes_per_game_server": round(controller_sdk / count, 2),
        "scheduler_kubelet_writes_per_game_server": round(
            sum(writes[c] for c in SCHEDULER_KUBELET) / count, 2
        ),
        "writes_per_game_server_by_client": {k: round(v / count, 2) for k, v in writes.items()},
        "conflicts_409": dict(conflicts),
        "conflicts_409_per_game_server": round(sum(conflicts.values()) / count, 3),
        "writes_by_request": dict(collections.Counter(by_request).most_common()),
        "conflicts_by_request": conflicts_by_request,
    }


def write_sequences(recorded: dict[str, list[str]] | None, top: int = 8) -> dict[str, int]:
    """The commonest sequences of GameServer updates and patches (`client:state:code`, joined
    by `, `) and how many GameServers took each."""
    if not recorded:
        return {}
    counts = collections.Counter(", ".join(steps) for steps in recorded.values())
    return dict(counts.most_common(top))


def deciles(ready_at: list[float], start: float) -> list[float]:
    """GameServers/s within each tenth of the Ready times (sorted), from `start`."""
    n = len(ready_at)
    marks = [start] + [ready_at[max(0, (n * k) // 10 - 1)] for k in range(1, 11)]
    rates = []
    for k in range(1, 11):
        got = (n * k) // 10 - (n * (k - 1)) // 10
        span = marks[k] - marks[k - 1]
        rates.append(round(got / span, 1) if span > 0 else float("inf"))
    return rates


async def scale(client: RESTClient, replicas: int) -> None:
    body = {"spec": {"replicas": replicas}}
    await client.patch(FLEETS, FLEET, body, namespace=NAMESPACE, subresource="scale")


def stack_pids(stack: LocalStack | None) -> dict[str, int]:
    """The local stack's processes by role: this one (API server, bench) and its children."""
    if stack is None:
        return {}
    pids = {"cluster+bench": os.getpid()}
    for role, proc in (
        ("nodes", stack.nodes_proc),
        ("controller", stack.controller_proc),
        ("allocator", stack.allocator_proc),
    ):
        if proc is not None:
            pids[role] = proc.pid
    return pids


def cpu_by_process(pids: dict[str, int]) -> dict[str, float]:
    return {role: cpu_seconds(pid) for role, pid in pids.items()}


def cpu_ms_per_game_server(
    before: dict[str, float], after: dict[str, float], replicas: int
) -> dict[str, float]:
    return {role: round(1000 * (after[role] - before[role]) / replicas, 2) for role in before}


async def one_round(
    client: RESTClient,
    seen: Observed,
    writes: Writes,
    replicas: int,
    timeout: float,
    pid: int | None,
    snapshots: Snapshots,
    trace: bool = False,
    pids: dict[str, int] | None = None,
) -> dict[str, Any]:
    pids = pids or {}
    seen.ready_at.clear()
    before = writes.snapshot()
    cpu_before = cpu_seconds(pid)
    processes_before = cpu_by_process(pids)
    writes.trace(trace)
    start = time.perf_counter()
    await scale(client, replicas)
    done = await seen.until(lambda: len(seen.ready_at) >= replicas, timeout)
    cpu_up = cpu_seconds(pid) - cpu_before
    processes_up = cpu_ms_per_game_server(processes_before, cpu_by_process(pids), replicas)
    up = per_game_server(before, writes.snapshot(), replicas)
    if trace:
        up["game_server_write_sequences"] = write_sequences(writes.trace(False))
    fleet_done = await seen.until(lambda: seen.fleet_ready >= replicas, timeout)
    rss_up = rss_kib(pid)[0] if pid else 0
    await snapshots.take()
    times = sorted(seen.ready_at.values())
    before = writes.snapshot()
    cpu_before = cpu_seconds(pid)
    processes_before = cpu_by_process(pids)
    down_start = time.perf_counter()
    await scale(client, 0)
    gone = await seen.until(lambda: not seen.existing, timeout)
    cpu_down = cpu_seconds(pid) - cpu_before
    processes_down = cpu_ms_per_game_server(processes_before, cpu_by_process(pids), replicas)
    down = per_game_server(before, writes.snapshot(), replicas)
    rss_down = rss_kib(pid)[0] if pid else 0
    await snapshots.take()
    return {
        "scale_up": {
            "seconds_to_all_ready": round(done - start, 2),
            "game_servers_per_second": round(replicas / (done - start), 1),
            "game_servers_per_second_by_decile": deciles(times, start),
            "seconds_to_fleet_status_ready": round(fleet_done - start, 2),
            **up,
            "controller_cpu_seconds_per_game_server": round(cpu_up / replicas, 5),
            "cpu_ms_per_game_server_by_process": processes_up,
            "controller_rss_mib_at_n": round(rss_up / 1024, 1),
        },
        "scale_down": {
            "seconds_to_all_gone": round(gone - down_start, 2),
            "game_servers_per_second": round(replicas / (gone - down_start), 1),
            **down,
            "controller_cpu_seconds_per_game_server": round(cpu_down / replicas, 5),
            "cpu_ms_per_game_server_by_process": processes_down,
            "controller_rss_mib_after": round(rss_down / 1024, 1),
        },
    }


@contextlib.asynccontextmanager
async def observed_fleet(
    kubeconfig: str, image: str, simulate: bool, list_watches: ListWatchSource | None = None
) -> AsyncIterator[tuple[RESTClient, Observed]]:
    """The bench's client and GameServer/Fleet observer, with the Fleet (0 replicas) created and
    its empty GameServerSet given time to appear; the Fleet is deleted when the block ends. The
    observer's informers list and watch through `list_watches` (the local stack's in-process
    source, as the stack's own controllers do) or, by default, over the client; writes always
    go over the client."""
    config = load_config(kubeconfig)
    config.user_agent = "bench"
    config.qps = 0
    async with RESTClient(config) as client:
        seen = Observed()
        factory = SharedInformerFactory(client, namespace=NAMESPACE, list_watches=list_watches)
        factory.for_resource(GAME_SERVERS).informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=seen.game_server,
                update_func=lambda _o, n: seen.game_server(n),
                delete_func=seen.gone,
            )
        )
        factory.for_resource(FLEETS).informer().add_event_handler(
            ResourceEventHandlerFuncs(add_func=seen.fleet, update_func=lambda _o, n: seen.fleet(n))
        )
        factory.start()
        await factory.wait_for_cache_sync(30)
        await client.create(FLEETS, fleet(image, simulate), namespace=NAMESPACE)
        await asyncio.sleep(2.0)  # the controller starts and creates the empty set
        yield client, seen
        await client.delete(FLEETS, FLEET, NAMESPACE)
        await factory.shutdown()


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    stack: LocalStack | None = None
    kubeconfig = args.kubeconfig
    pid = args.controller_pid or None
    if args.controller_memtrace:
        os.environ[memtrace.ENV_FILE] = args.controller_memtrace
    if not kubeconfig:
        stack = LocalStack(
            StackOptions(
                nodes=args.nodes,
                simulate_all=True,
                min_port=7000,
                max_port=8999,
                nodes_process=args.nodes_process,
                controller_args=list(args.controller_arg),
            )
        )
        await stack.start()
        kubeconfig = stack.kubeconfig
        assert stack.controller_proc is not None
        pid = stack.controller_proc.pid
    try:
        simulate = stack is not None or args.simulate
        local = stack.list_watches if stack is not None else None
        async with observed_fleet(kubeconfig, args.image, simulate, local) as (client, seen):
            rounds = []
            writes = Writes(stack, args.controller_metrics)
            snapshots = Snapshots(args.controller_memtrace, pid)
            await snapshots.take()
            for _ in range(args.rounds):
                rounds.append(
                    await one_round(
                        client,
                        seen,
                        writes,
                        args.replicas,
                        args.timeout,
                        pid,
                        snapshots,
                        args.write_sequences,
                        stack_pids(stack),
                    )
                )
    finally:
        if stack is not None:
            await stack.stop()
    counted = (
        "every client, at the API server"
        if stack is not None
        else ("the controller only, from its /metrics" if args.controller_metrics else "nothing")
    )
    return {
        "cluster": "local" if stack is not None else kubeconfig,
        "writes_counted": counted,
        "replicas": args.replicas,
        "nodes": args.nodes if stack is not None else None,
        "rounds": rounds,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--nodes", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--kubeconfig", default="", help="any cluster (default: the local stack)")
    parser.add_argument(
        "--image", default="us-docker.pkg.dev/agones-images/examples/simple-game-server:0.41"
    )
    parser.add_argument(
        "--simulate",
        action="store_true",
        help="with --kubeconfig: mark pods simulated (agones-py's local cluster; others ignore it)",
    )
    parser.add_argument(
        "--nodes-process",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="local: scheduler, kubelets and simulated sidecars in a child process (default)",
    )
    parser.add_argument(
        "--controller-arg",
        action="append",
        default=[],
        help="local: a flag for the controller process, e.g. --controller-arg=--api-server-qps=1000",
    )
    parser.add_argument(
        "--write-sequences",
        action="store_true",
        help="local: each GameServer's updates and patches in the scale-up (client:state:code), "
        "the commonest sequences with their counts",
    )
    parser.add_argument("--controller-metrics", default="", help="the controller's /metrics URL")
    parser.add_argument("--controller-pid", type=int, default=0, help="its pid, for RSS")
    parser.add_argument(
        "--controller-memtrace",
        default="",
        help="file for the controller's tracemalloc reports, one after start and at N and 0 of "
        "each round (sets AGONES_MEMTRACE; RSS is read before each report, but runs slower)",
    )
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))
    print(json.dumps(aioloop.run(bench(args)), indent=2))


if __name__ == "__main__":
    main()
