"""CPU per GameServer of the local cluster's processes, for a Fleet scaled 0 → N Ready → 0.

The stack as `bench_fleet` runs it (API server, local controllers and webhooks in this process,
its informers and the bench's own listing and watching in-process;
the nodes — scheduler, kubelets, simulated sidecars — and the controller each a child process).
Per round and direction it reports GameServers/s and the CPU time (utime + stime from
`/proc/PID/stat`) each process spent from the scale until the last GameServer was Ready (or
gone), divided by N, in milliseconds: the cost that stays meaningful when other work shares the
machine and rates do not. The load average at the start and end says how shared it was. This
process runs on `agones.aioloop.run`, as `agones local up` does.

    .venv/bin/python -m bench.bench_fleet_cpu --replicas 1000 --rounds 2
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import structlog

from agones.client.rest import RESTClient
from agones.localcluster.stack import LocalStack, StackOptions
from bench.bench_fleet import Observed, observed_fleet, scale

TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def load() -> float:
    return float(Path("/proc/loadavg").read_text().split()[0])


class Processes:
    """The pids measured: this process (the stack), the nodes process, the controller."""

    def __init__(self, stack: LocalStack) -> None:
        assert stack.nodes_proc is not None and stack.controller_proc is not None
        self.pids = {
            "stack": os.getpid(),
            "nodes": stack.nodes_proc.pid,
            "controller": stack.controller_proc.pid,
        }

    def snapshot(self) -> dict[str, float]:
        return {name: cpu_seconds(pid) for name, pid in self.pids.items()}


def per_game_server(before: dict[str, float], after: dict[str, float], n: int) -> dict[str, float]:
    out = {name: round(1000 * (after[name] - before[name]) / n, 2) for name in before}
    out["total"] = round(sum(out.values()), 2)
    return out


async def one_round(
    client: RESTClient, seen: Observed, procs: Processes, replicas: int, timeout: float
) -> dict[str, Any]:
    seen.ready_at.clear()
    result: dict[str, Any] = {"load_start": load()}
    cpu, start = procs.snapshot(), time.perf_counter()
    await scale(client, replicas)
    done = await seen.until(lambda: len(seen.ready_at) >= replicas, timeout)
    after = procs.snapshot()
    result["up_game_servers_per_second"] = round(replicas / (done - start), 1)
    result["up_cpu_ms_per_game_server"] = per_game_server(cpu, after, replicas)
    await seen.until(lambda: seen.fleet_ready >= replicas, timeout)
    cpu, start = procs.snapshot(), time.perf_counter()
    await scale(client, 0)
    gone = await seen.until(lambda: not seen.existing, timeout)
    result["down_game_servers_per_second"] = round(replicas / (gone - start), 1)
    result["down_cpu_ms_per_game_server"] = per_game_server(cpu, procs.snapshot(), replicas)
    result["load_end"] = load()
    return result


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    options = StackOptions(
        nodes=args.nodes,
        simulate_all=True,
        min_port=7000,
        max_port=8999,
        nodes_process=True,
        log_dir=args.log_dir,
    )
    stack = LocalStack(options)
    await stack.start()
    rounds = []
    try:
        observer = observed_fleet(stack.kubeconfig, "simple-game-server", True, stack.list_watches)
        async with observer as (client, seen):
            procs = Processes(stack)
            for _ in range(args.rounds):
                rounds.append(await one_round(client, seen, procs, args.replicas, args.timeout))
    finally:
        await stack.stop()
    return {"replicas": args.replicas, "nodes": args.nodes, "rounds": rounds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--replicas", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--nodes", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=600)
    parser.add_argument("--log-dir", default=None, help="the processes' logs (default: none)")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(40))
    try:
        from agones.aioloop import run
    except ImportError:  # a tree from before the helper (A/B against an older main)
        run = asyncio.run
    print(json.dumps(run(bench(args)), indent=2))


if __name__ == "__main__":
    main()
