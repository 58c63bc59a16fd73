"""Allocations per second and latency through the Kubernetes API path (`kubectl create` of a
GameServerAllocation: API server → aggregator → extensions → allocator → GameServer write).

For each batching mode (ours: no idle sleep; Agones': `--allocation-batch-wait-time` 0.5 s) and 1
or 2 extensions replicas, a local cluster runs in a child process (`serve`, so the load generator
does not share its CPU), with a pool of 1000 Ready GameServers written directly (no controller).
Clients POST the simple-game-server example allocation back to back at concurrency 1, 10 and 50,
timed once each has allocated once (connections open, as `bench_allocator` times the allocator
service); allocated GameServers are put back to Ready between phases. Before each timed phase an
untimed warm-up at the same concurrency (`WARM_UP_ROUNDS` allocations per client; `--no-warm-up`
skips it) opens the connections every hop keeps (load generator to API server, aggregator to
extensions, extensions to API server): the timed phase then measures clients that stay connected,
as a matchmaker's workers do, and the warm-up's own figures (each hop's TLS handshakes in one
burst) are printed beside it. The cluster's process and
the load generator run on `agones.aioloop` (uvloop, the collector tuned), as `agones local up`
and every agones process do. Prints allocations/s, p50/p90/p99 and
the outcomes, one line per (mode, replicas, concurrency).

    .venv/bin/python -m bench.bench_allocation                  # the whole table
    .venv/bin/python -m bench.bench_allocation --modes ours --replicas 1 --requests 300

`--stress N --pool P` instead runs the replica test's stress (2 partitioned replicas, 50 clients,
write faults, P GameServers re-readied) for N allocations in-process and prints the outcome counts;
`--shared` makes the two replicas share every candidate, as Agones' do. `--in-process` measures
the allocator alone (`Allocator.allocate` beside the local API server, no aggregator or client TLS).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from agones import aioloop
from agones.client.config import load_kube_config
from agones.client.errors import ApiError
from agones.client.rest import RESTClient
from agones.client.versioned.resources import GAME_SERVERS

ROOT = Path(__file__).resolve().parents[1]
PYTHONPATH = os.environ.get("PYTHONPATH", "")
NAMESPACE = "default"
ALLOCATIONS = f"/apis/allocation.agones.dev/v1/namespaces/{NAMESPACE}/gameserverallocations"
REQUEST = {
    "apiVersion": "allocation.agones.dev/v1",
    "kind": "GameServerAllocation",
    "spec": {"selectors": [{"matchLabels": {"agones.dev/fleet": "green-fleet"}}]},
}
MODES = {"ours": 0.0, "agones": 0.5}
WARM_UP_ROUNDS = 4
"""Allocations per client in the untimed warm-up before each timed phase."""


async def serve(kubeconfig: str, wait: float, replicas: int, process: bool) -> None:
    from agones.localcluster.stack import LocalStack, StackOptions
    from agones.logging import configure_logging

    configure_logging("error")

    options = StackOptions(
        nodes=2,
        kubeconfig=kubeconfig,
        controller=False,
        simulate_all=True,
        allocation_batch_wait_time=wait,
        extensions_replicas=replicas,
        extensions_process=process,
        allocator_service=False,  # not on the API path; its informers would only take CPU
    )
    async with LocalStack(options):
        print("ready", flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)


def process_cpu(root: int) -> dict[str, tuple[float, float]]:
    """CPU seconds (user + system) of `root` and each of its descendants, by `pid:command`, with
    the seconds their threads waited for a CPU."""
    tick = os.sysconf("SC_CLK_TCK")
    stats: dict[int, tuple[int, str, float]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            raw = (entry / "stat").read_text()
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        fields = raw[raw.rindex(")") + 2 :].split()
        what = " ".join(a.decode() for a in argv[2:4]) or raw[raw.index("(") + 1 : raw.rindex(")")]
        stats[int(entry.name)] = (int(fields[1]), what, (int(fields[11]) + int(fields[12])) / tick)
    tree, frontier = {root}, [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, (ppid, _, _) in stats.items() if ppid == parent]
        tree.update(children)
        frontier.extend(children)
    return {
        f"{pid}:{stats[pid][1]}": (stats[pid][2], _run_queue_wait(pid))
        for pid in sorted(tree)
        if pid in stats
    }


def _run_queue_wait(pid: int) -> float:
    """Seconds the threads of `pid` spent runnable but waiting for a CPU (`schedstat`)."""
    total = 0
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError, IndexError, ValueError):
                total += int((task / "schedstat").read_text().split()[1])
    return total / 1e9


@contextlib.asynccontextmanager
async def profiled(directory: str, label: str, root: int = 0) -> Any:
    """`py-spy record -r 100 -f raw` of `root` (default: this process) and of each of its
    descendants for the block's length, one file per process in `directory` (nothing when
    `directory` is empty). Not `--subprocesses`: each process has its own recorder already, and
    a second one sampling the children doubled their overhead."""
    if not directory:
        yield
        return
    spy = Path(sys.executable).with_name("py-spy")
    Path(directory).mkdir(parents=True, exist_ok=True)
    pids = [int(key.split(":", 1)[0]) for key in process_cpu(root or os.getpid())]
    records = [
        await asyncio.create_subprocess_exec(
            str(spy),
            "record",
            "-r",
            "100",
            "-f",
            "raw",
            "-p",
            str(pid),
            "-o",
            str(Path(directory) / f"{label}-{pid}.txt"),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        for pid in pids
    ]
    await asyncio.sleep(1.0)  # py-spy attaches
    try:
        yield
    finally:
        for record in records:
            with contextlib.suppress(ProcessLookupError):
                record.send_signal(signal.SIGINT)
        for record in records:
            await record.wait()


async def settle(
    root: int,
    *,
    idle: float = 0.1,
    window: float = 0.5,
    quiet_for: float = 2.5,
    limit: float = 60.0,
) -> float:
    """Wait until `root` and its descendants together have used less than `idle` of one CPU in
    every `window` for `quiet_for` seconds on end, at most `limit` seconds; the seconds waited.

    After a refill of thousands of GameServers every informer has that many watch events to
    digest: a phase started during it measured the refill's aftermath (its first second or two
    ran at half the rate). And each process's collector (`agones.aioloop`) runs its full
    collection, if its heap has grown by a quarter, at the end of its first quiet second:
    `quiet_for` outlasts that, so the collection (up to 1.5 s at 9,500 GameServers) happens here,
    not in a phase."""
    start = time.monotonic()
    quiet_since = start
    before = process_cpu(root)
    while time.monotonic() - start < limit:
        await asyncio.sleep(window)
        after = process_cpu(root)
        used = sum(cpu - before.get(key, (0.0, 0.0))[0] for key, (cpu, _) in after.items())
        before = after
        now = time.monotonic()
        if used >= idle * window:
            quiet_since = now
        elif now - quiet_since >= quiet_for:
            break
    return time.monotonic() - start


def cpu_per_allocation(
    before: dict[str, tuple[float, float]], after: dict[str, tuple[float, float]], count: int
) -> str:
    """`what ms, ...`: CPU milliseconds per allocation spent by each process of the cluster, then
    the milliseconds per allocation its threads waited for a CPU (the machine's load)."""
    cpu, wait = [], []
    for key, (cpu_after, wait_after) in after.items():
        cpu_before, wait_before = before.get(key, (0.0, 0.0))
        used, waited = cpu_after - cpu_before, wait_after - wait_before
        what = key.split(":", 1)[1]
        if used > 0.01:
            cpu.append(f"{what} {used * 1000 / max(count, 1):.2f}")
            wait.append(f"{what} {waited * 1000 / max(count, 1):.2f}")
    return ", ".join(cpu) + "\n    waiting for a CPU, ms per allocation: " + ", ".join(wait)


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000 if ordered else 0.0


def after_first_wave(timed: list[tuple[float, float]], wave_end: float) -> str:
    """p50 / p99 of the timed allocations that started once every client's untimed first one
    was answered (`timed`: start, seconds taken): the closed loop without the first wave's
    burst, whose new connections and TLS handshakes the earliest timed requests wait behind."""
    after = [took for start, took in timed if start >= wave_end]
    return (
        f"after the first wave ({len(after)} of {len(timed)}): "
        f"p50 {pct(after, 0.5):.1f} ms, p99 {pct(after, 0.99):.1f} ms"
    )


async def put_ready(rest: RESTClient, name: str, node: str) -> None:
    from tests.integration.gameserverallocations.harness import ready_game_server

    wanted = ready_game_server(
        name, NAMESPACE, labels={"agones.dev/fleet": "green-fleet"}, node=node
    )
    while True:
        try:
            try:
                current = await rest.get(GAME_SERVERS, name, NAMESPACE)
            except ApiError as err:
                if err.status_code != 404:
                    raise
                current = await rest.create(GAME_SERVERS, wanted, NAMESPACE)
            current["status"] = wanted["status"]
            await rest.update(GAME_SERVERS, current, NAMESPACE)
            return
        except ApiError as err:
            if err.status_code != 409:
                raise


async def fill(rest: RESTClient, names: list[str]) -> None:
    sem = asyncio.Semaphore(20)

    async def one(i: int, name: str) -> None:
        async with sem:
            await put_ready(rest, name, f"agones-local-node-{1 + i % 2}")

    await asyncio.gather(*(one(i, n) for i, n in enumerate(names)))


async def phase(
    rest: RESTClient, concurrency: int, requests: int, trace: str = ""
) -> dict[str, Any]:
    """`requests` allocations by `concurrency` clients back to back. Each client's first
    allocation is untimed: it opens the client's connection (and the aggregator's to the
    extensions, through their TLS handshakes) and, as all clients send it at once, it is the
    burst the pipeline takes before the clients settle into the closed loop that is measured.
    A client goes on to its timed allocations as soon as its first is answered (no barrier
    that would line the clients up into a second burst). The rate counts the timed
    allocations from the first one's start to the last one's answer; `first_wave_max` is the
    slowest untimed first allocation, the burst's own latency; `after_first_wave` the p50 and
    p99 of the timed ones that started once every first one was answered."""
    latencies: list[float] = []
    first_wave: list[float] = []
    wave_ends: list[float] = []
    timed: list[tuple[float, float]] = []
    outcomes: dict[str, int] = {}
    allocated: list[str] = []
    spans: list[float] = []
    left = requests

    def record(raw: bytes) -> str:
        """The answer's state; an allocated GameServer's name is kept (doubles, the refill)."""
        status = json.loads(raw)["status"]
        if status["state"] == "Allocated":
            allocated.append(status["gameServerName"])
        return str(status["state"])

    async def client() -> None:
        nonlocal left
        start = time.perf_counter()
        record(await rest.request("POST", ALLOCATIONS, body=REQUEST))
        wave_ends.append(time.perf_counter())
        first_wave.append(wave_ends[-1] - start)
        while left > 0:
            left -= 1
            start = time.perf_counter()
            spans.append(start)
            try:
                raw = await rest.request("POST", ALLOCATIONS, body=REQUEST)
            except ApiError as err:
                outcomes[f"error {err.status_code}"] = (
                    outcomes.get(f"error {err.status_code}", 0) + 1
                )
                continue
            end = time.perf_counter()
            spans.append(end)
            latencies.append(end - start)
            timed.append((start, end - start))
            state = record(raw)
            outcomes[state] = outcomes.get(state, 0) + 1

    await asyncio.gather(*(client() for _ in range(concurrency)))
    if trace:
        Path(trace).mkdir(parents=True, exist_ok=True)
        Path(trace, f"c{concurrency}.json").write_text(
            json.dumps({"timed": timed, "wave_end": max(wave_ends)})
        )
    names = set(allocated)
    return {
        "rate": len(latencies) / (max(spans) - min(spans)),
        "p50": pct(latencies, 0.50),
        "p90": pct(latencies, 0.90),
        "p99": pct(latencies, 0.99),
        "first_wave_max": max(first_wave) * 1000,
        "after_first_wave": after_first_wave(timed, max(wave_ends)),
        "outcomes": outcomes,
        "doubles": len(allocated) - len(names),
        "allocated": sorted(names),
    }


async def drive(
    kubeconfig: str,
    pool: int,
    counts: dict[int, int],
    server_pid: int,
    py_spy: str = "",
    trace: str = "",
    warm_up: bool = True,
) -> list[tuple[int, dict[str, Any]]]:
    config = load_kube_config(kubeconfig)
    config.qps = 0
    rest = RESTClient(config)
    try:
        names = [f"green-fleet-bench-{i:04d}" for i in range(pool)]
        await fill(rest, names)
        await settle(os.getpid())  # the allocators' informers have seen the pool
        out = []
        for concurrency, requests in counts.items():
            warm = None
            if warm_up:
                warm = await phase(rest, concurrency, min(requests, WARM_UP_ROUNDS * concurrency))
                await fill(rest, warm["allocated"])
                await settle(os.getpid())
            async with profiled(py_spy, f"api-c{concurrency}", server_pid):
                before, driver = process_cpu(server_pid), time.process_time()
                result = await phase(rest, concurrency, requests, trace)
                driver = time.process_time() - driver
                made = requests + concurrency  # the timed ones and each client's first
                result["cpu"] = cpu_per_allocation(before, process_cpu(server_pid), made)
                result["cpu"] += (
                    f"\n    load generator (this process): {driver * 1000 / made:.2f} ms"
                )
            result["warm_up"] = "warm-up (untimed, its connections kept for the phase): " + (
                "none"
                if warm is None
                else f"first wave's slowest {warm['first_wave_max']:.1f} ms, "
                f"p99 {warm['p99']:.1f} ms"
            )
            out.append((concurrency, result))
            await fill(rest, result["allocated"])
            await settle(os.getpid())
        return out
    finally:
        await rest.close()


def run_config(
    mode: str,
    replicas: int,
    pool: int,
    requests: int,
    extensions: str,
    py_spy: str = "",
    trace: str = "",
    warm_up: bool = True,
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = str(Path(tmp) / "kubeconfig")
        child = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bench.bench_allocation",
                "serve",
                "--kubeconfig",
                kubeconfig,
                "--wait",
                str(MODES[mode]),
                "--replicas",
                str(replicas),
                *(["--process"] if extensions == "process" else []),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=ROOT,
            # the repository for `bench` and `tests`, after any PYTHONPATH given (an A/B run
            # against another tree's `agones` sets one)
            env={
                **os.environ,
                "PYTHONPATH": os.pathsep.join(filter(None, [PYTHONPATH, str(ROOT)])),
            },
        )
        try:
            assert child.stdout is not None
            for line in child.stdout:
                if line.strip() == "ready":
                    break
            else:
                raise SystemExit("the cluster did not start")
            threading.Thread(target=child.stdout.read, daemon=True).start()
            slow = MODES[mode] > 0
            counts = {
                1: 40 if slow else requests,
                10: 200 if slow else requests,
                50: 500 if slow else requests,
            }
            results = aioloop.run(
                drive(kubeconfig, pool, counts, child.pid, py_spy, trace, warm_up)
            )
            for concurrency, r in results:
                print(
                    f"{mode:7s} extensions={extensions} replicas={replicas} C={concurrency:<3d} "
                    f"{r['rate']:7.1f} alloc/s  "
                    f"p50 {r['p50']:6.1f} ms  p90 {r['p90']:6.1f} ms  p99 {r['p99']:6.1f} ms  "
                    f"{r['outcomes']} doubles={r['doubles']}\n"
                    f"    {r['warm_up']}\n"
                    f"    first wave (C at once, untimed): slowest {r['first_wave_max']:.1f} ms\n"
                    f"    {r['after_first_wave']}\n"
                    f"    CPU ms per allocation: {r['cpu']}",
                    flush=True,
                )
        finally:
            with contextlib.suppress(Exception):
                assert child.stdin is not None
                child.stdin.close()
            try:
                child.wait(60)
            except subprocess.TimeoutExpired:
                child.kill()


def main() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    srv = sub.add_parser("serve")
    srv.add_argument("--kubeconfig", required=True)
    srv.add_argument("--wait", type=float, default=0.0)
    srv.add_argument("--replicas", type=int, default=1)
    srv.add_argument("--process", action="store_true", help="extensions as child processes")
    parser.add_argument("--modes", default="ours,agones")
    parser.add_argument("--replicas", default="1,2")
    parser.add_argument(
        "--extensions",
        default="process",
        help="process (agones extensions children) and/or in-process (in the stack's process)",
    )
    parser.add_argument("--pool", type=int, default=1000)
    parser.add_argument("--requests", type=int, default=600, help="per phase, our mode")
    parser.add_argument("--stress", type=int, default=0)
    parser.add_argument("--shared", action="store_true", help="stress: replicas share candidates")
    parser.add_argument("--in-process", action="store_true", help="the allocator alone")
    parser.add_argument("--py-spy", default="", help="profile each phase into this directory")
    parser.add_argument(
        "--trace",
        default="",
        help="write each phase's timed allocations (start, seconds) as cC.json into this directory",
    )
    parser.add_argument(
        "--no-warm-up",
        dest="warm_up",
        action="store_false",
        help="no untimed warm-up phase before each timed one",
    )
    args = parser.parse_args()
    if args.command == "serve":
        # The loop and collector settings of every agones process (`agones local up` included)
        aioloop.run(serve(args.kubeconfig, args.wait, args.replicas, args.process))
        return
    if args.in_process:
        from bench.allocation_inprocess import in_process

        asyncio.run(in_process(args.pool, args.requests))
        return
    if args.stress:
        from bench.allocation_inprocess import stress

        asyncio.run(stress(args.stress, args.pool, not args.shared))
        return
    for extensions in args.extensions.split(","):
        for mode in args.modes.split(","):
            for replicas in (int(r) for r in args.replicas.split(",")):
                run_config(
                    mode,
                    replicas,
                    args.pool,
                    args.requests,
                    extensions,
                    args.py_spy,
                    args.trace,
                    args.warm_up,
                )


if __name__ == "__main__":
    main()
