"""Allocations per second and latency through the allocator service (`agones allocator`, gRPC and
REST on one mTLS port), against a pool of 1000 Ready GameServers.

The local API server (`agones localcluster apiserver`) and 1 or 2 allocator replicas each run as
their own process (so the load generator does not share their CPU); the pool is written straight
into Ready (no controller). Clients, each with its own connection (a gRPC channel, or a keep-alive
HTTPS session), allocate back to back at concurrency 1, 10 and 50, spread round-robin over the
replicas; allocated GameServers are put back to Ready between phases. Each new set of allocators
first takes an untimed warm-up phase per protocol at the highest concurrency (`--no-warm-up`
skips it): the first burst after an allocator starts grows its keep-alive pool to the API server
(some 40 connects per replica at C = 50, each a TLS handshake on the API server's loop), a
one-time cost that otherwise fell on whichever protocol's phase ran first. One line per (mode, protocol,
replicas, concurrency): allocations/s, p50/p90/p99 in ms and the outcomes. `--modes agones` runs
the allocators with Agones' fixed `--allocation-batch-wait-time=500ms` (default here: 0, no idle
sleep). `--budget local` (the default) gives each allocator the client budget `agones local up`
gives its own (2000 QPS / 3000 burst per clientset); `--budget agones` keeps the allocator's and
the chart's default, Agones' 400 / 500, under which one replica writes at most 400 GameServers/s
once its burst is spent (so C = 50 waits 50 / 400 s = 125 ms by Little's law). The load
generator runs on `agones.aioloop` (uvloop, the collector tuned and on its clock), as the
processes it measures do.

    .venv/bin/python -m bench.bench_allocator                  # ours, grpc+rest, 1 and 2 replicas
    .venv/bin/python -m bench.bench_allocator --modes ours,agones --requests 200
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import ssl
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp
import grpc
import yaml
from prometheus_client.parser import text_string_to_metric_families

from agones import aioloop
from agones.allocator.certs import write_pair
from agones.allocator.proto import allocation_pb2 as pb
from agones.allocator.settings import AllocatorServiceSettings
from agones.client.config import load_kube_config
from agones.client.errors import ApiError
from agones.client.rest import RESTClient
from agones.client.versioned.resources import CUSTOM_RESOURCE_DEFINITIONS as CRDS
from agones.client.versioned.resources import GAME_SERVERS
from agones.localcluster.stack_options import StackOptions
from agones.pki import CertificateAuthority, Usage
from bench.bench_allocation import (
    after_first_wave,
    cpu_per_allocation,
    process_cpu,
    profiled,
    settle,
)

ROOT = Path(__file__).resolve().parents[1]
NAMESPACE = "default"
METHOD = "/allocation.AllocationService/Allocate"
MODES = {"ours": "0s", "agones": "500ms"}
_LOCAL, _AGONES = StackOptions(), AllocatorServiceSettings()
BUDGETS = {
    "local": [
        f"--api-server-qps={_LOCAL.client_qps}",
        f"--api-server-qps-burst={_LOCAL.client_burst}",
    ],
    "agones": [
        f"--api-server-qps={_AGONES.api_server_qps}",
        f"--api-server-qps-burst={_AGONES.api_server_qps_burst}",
    ],
}
REQUEST = pb.AllocationRequest(
    namespace=NAMESPACE,
    gameServerSelectors=[pb.GameServerSelector(matchLabels={"agones.dev/fleet": "green-fleet"})],
)
REST_BODY = json.dumps(
    {
        "namespace": NAMESPACE,
        "gameServerSelectors": [{"matchLabels": {"agones.dev/fleet": "green-fleet"}}],
    }
).encode()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))] * 1000 if ordered else 0.0


def game_server(name: str, node: str) -> dict[str, Any]:
    return {
        "apiVersion": "agones.dev/v1",
        "kind": "GameServer",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "labels": {"agones.dev/fleet": "green-fleet"},
        },
        "spec": {
            "ports": [{"name": "default", "containerPort": 7654, "portPolicy": "Dynamic"}],
            "template": {"spec": {"containers": [{"name": "game", "image": "game"}]}},
        },
        "status": {
            "state": "Ready",
            "ports": [{"name": "default", "port": 7000}],
            "address": "127.0.0.1",
            "nodeName": node,
        },
    }


class Cluster:
    """The API server and the allocator processes."""

    def __init__(self, tmp: Path, logs: Path) -> None:
        self.tmp = tmp
        self.logs = logs
        self.kubeconfig = str(tmp / "kubeconfig")
        self.procs: list[asyncio.subprocess.Process] = []
        ca = CertificateAuthority.new("bench-ca")
        self.ca = ca
        self.client = ca.issue("bench", [], Usage.CLIENT)
        write_pair(tmp / "tls", ca.issue("allocator", ["localhost", "127.0.0.1"], Usage.SERVER))
        (tmp / "client-ca").mkdir()
        (tmp / "client-ca" / "ca.crt").write_bytes(ca.cert_pem)
        write_pair(tmp / "client", self.client)
        self.ports: list[int] = []  # gRPC (and REST when they share one)
        self.rest_ports: list[int] = []
        self.health_ports: list[int] = []

    async def _spawn(self, *args: str, log: str) -> asyncio.subprocess.Process:
        out = (self.logs / log).open("ab")
        try:
            proc = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                "agones",
                *args,
                stdout=out,
                stderr=asyncio.subprocess.STDOUT,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        finally:
            out.close()
        self.procs.append(proc)
        return proc

    async def start_api(self) -> RESTClient:
        await self._spawn(
            "localcluster", "apiserver", f"--kubeconfig={self.kubeconfig}", log="api.log"
        )
        while not Path(self.kubeconfig).exists():
            await asyncio.sleep(0.05)
        rest = RESTClient(load_kube_config(self.kubeconfig))
        for crd in ("gameserver.yaml", "gameserverallocationpolicy.yaml"):
            await rest.create(CRDS, yaml.safe_load((ROOT / "crds" / crd).read_text()))
        while True:
            try:
                await rest.list(GAME_SERVERS, NAMESPACE)
                return rest
            except ApiError:
                await asyncio.sleep(0.05)

    async def start_allocators(
        self, replicas: int, wait: str, extra: list[str], grpc_own_port: bool = False
    ) -> None:
        """`grpc_own_port`: gRPC on a port of its own (grpc's TLS), else one port for both."""
        for i in range(replicas):
            port, health = free_port(), free_port()
            rest_port = free_port() if grpc_own_port else port
            await self._spawn(
                "allocator",
                f"--kubeconfig={self.kubeconfig}",
                f"--http-port={rest_port}",
                f"--grpc-port={port}",
                f"--health-port={health}",
                "--address=127.0.0.1",
                f"--tls-dir={self.tmp / 'tls'}",
                f"--client-ca-dir={self.tmp / 'client-ca'}",
                f"--allocation-batch-wait-time={wait}",
                f"--allocation-partition={len(self.ports)}/{replicas}",
                "--log-level=warn",
                *extra,
                log=f"allocator-{len(self.ports)}.log",
            )
            await wait_ready(health)
            self.ports.append(port)
            self.rest_ports.append(rest_port)
            self.health_ports.append(health)
            del i

    async def stop_allocators(self) -> None:
        for proc in self.procs[1:]:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
            await proc.wait()
        del self.procs[1:]
        self.ports.clear()
        self.rest_ports.clear()
        self.health_ports.clear()

    async def stop(self) -> None:
        await self.stop_allocators()
        for proc in self.procs:
            with contextlib.suppress(ProcessLookupError):
                proc.terminate()
            await proc.wait()


async def wait_ready(port: int) -> None:
    async with aiohttp.ClientSession() as session:
        while True:
            with contextlib.suppress(aiohttp.ClientError):
                async with session.get(f"http://127.0.0.1:{port}/ready") as response:
                    if response.status == 200:
                        return
            await asyncio.sleep(0.1)


async def allocator_metrics(cluster: Cluster) -> Counter[str]:
    """The allocators' allocation histograms summed over replicas and labels: attempts (`_sum`
    and `_count` of the retry histogram), server-side seconds and the latency buckets."""
    totals: Counter[str] = Counter()
    async with aiohttp.ClientSession() as session:
        for port in cluster.health_ports:
            async with session.get(f"http://127.0.0.1:{port}/metrics") as response:
                text = await response.text()
            for family in text_string_to_metric_families(text):
                if not family.name.startswith("agones_gameserver_allocations"):
                    continue
                for sample in family.samples:
                    le = sample.labels.get("le")
                    key = sample.name + (f"@{le}" if le is not None else "")
                    totals[key] += sample.value
    return totals


def server_side(before: Counter[str], after: Counter[str]) -> str:
    """Retries per allocation, the allocators' own mean latency and the bucket holding their p99."""
    delta = Counter({k: after[k] - before.get(k, 0.0) for k in after})
    count = delta["agones_gameserver_allocations_retry_total_count"] or 1.0
    retries = delta["agones_gameserver_allocations_retry_total_sum"] / count - 1
    mean = delta["agones_gameserver_allocations_duration_seconds_sum"] / count * 1000
    prefix = "agones_gameserver_allocations_duration_seconds_bucket@"
    buckets = sorted((float(k[len(prefix) :]), v) for k, v in delta.items() if k.startswith(prefix))
    p99 = next((le for le, v in buckets if v >= 0.99 * count), float("inf"))
    return f"retries per allocation {retries:.3f}, server-side mean {mean:.1f} ms, p99 <= {p99 * 1000:g} ms"


async def fill_pool(rest: RESTClient, size: int) -> None:
    """Every pool GameServer Ready (created, or put back after an allocation)."""
    existing = {
        gs["metadata"]["name"]: gs for gs in (await rest.list(GAME_SERVERS, NAMESPACE))["items"]
    }
    sem = asyncio.Semaphore(20)

    async def one(i: int) -> None:
        name = f"gs-{i:04d}"
        async with sem:
            gs = existing.get(name)
            if gs is None:
                await rest.create(GAME_SERVERS, game_server(name, f"node-{i % 4}"), NAMESPACE)
            elif gs["status"]["state"] != "Ready":
                gs["status"]["state"] = "Ready"
                await rest.update(GAME_SERVERS, gs, NAMESPACE)

    await asyncio.gather(*(one(i) for i in range(size)))


async def grpc_client(cluster: Cluster, port: int) -> Any:
    credentials = grpc.ssl_channel_credentials(
        cluster.ca.cert_pem, cluster.client.key_pem, cluster.client.cert_pem
    )
    channel = grpc.aio.secure_channel(f"127.0.0.1:{port}", credentials)
    call = channel.unary_unary(
        METHOD,
        request_serializer=pb.AllocationRequest.SerializeToString,
        response_deserializer=pb.AllocationResponse.FromString,
    )

    async def allocate() -> str:
        try:
            await call(REQUEST, timeout=30)
        except grpc.aio.AioRpcError as err:
            return err.code().name
        return "OK"

    return allocate, channel.close


async def rest_client(cluster: Cluster, port: int) -> Any:
    context = ssl.create_default_context(cadata=cluster.ca.cert_pem.decode())
    context.load_cert_chain(cluster.tmp / "client" / "tls.crt", cluster.tmp / "client" / "tls.key")
    session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=context, limit=1))
    url = f"https://127.0.0.1:{port}/gameserverallocation"

    async def allocate() -> str:
        async with session.post(
            url, data=REST_BODY, headers={"Content-Type": "application/json"}
        ) as response:
            await response.read()
            return "OK" if response.status == 200 else str(response.status)

    return allocate, session.close


async def phase(cluster: Cluster, protocol: str, concurrency: int, requests: int) -> dict[str, Any]:
    """`requests` allocations by `concurrency` clients back to back. Each client connects (and
    handshakes) first, one after another; then all send an untimed first allocation at once —
    the burst the pipeline takes before the clients settle into the closed loop that is
    measured — and each goes on to its timed allocations as soon as its first is answered (no
    barrier that would line the clients up into a second burst). The rate counts the timed
    allocations from the first one's start to the last one's answer; `first_wave_max` is the
    slowest untimed first allocation; `after_first_wave` the p50 and p99 of the timed ones that
    started once every first one was answered."""
    make = grpc_client if protocol == "grpc" else rest_client
    ports = cluster.ports if protocol == "grpc" else cluster.rest_ports
    clients = [await make(cluster, ports[i % len(ports)]) for i in range(concurrency)]
    for allocate, _ in clients:  # connect (and handshake) before the clock starts
        await allocate()
    latencies: list[float] = []
    first_wave: list[float] = []
    wave_ends: list[float] = []
    timed: list[tuple[float, float]] = []
    spans: list[float] = []
    outcomes: Counter[str] = Counter()
    remaining = requests

    async def worker(allocate: Any) -> None:
        nonlocal remaining
        start = time.perf_counter()
        await allocate()
        wave_ends.append(time.perf_counter())
        first_wave.append(wave_ends[-1] - start)
        while remaining > 0:
            remaining -= 1
            start = time.perf_counter()
            outcome = await allocate()
            end = time.perf_counter()
            latencies.append(end - start)
            timed.append((start, end - start))
            spans.extend((start, end))
            outcomes[outcome] += 1

    await asyncio.gather(*(worker(allocate) for allocate, _ in clients))
    for _, close in clients:
        await close()
    return {
        "per_s": len(latencies) / (max(spans) - min(spans)),
        "p50": pct(latencies, 0.5),
        "p90": pct(latencies, 0.9),
        "p99": pct(latencies, 0.99),
        "first_wave_max": max(first_wave) * 1000,
        "after_first_wave": after_first_wave(timed, max(wave_ends)),
        "outcomes": dict(outcomes),
    }


async def warm_up(cluster: Cluster, rest: RESTClient, args: argparse.Namespace) -> None:
    """An untimed phase per protocol at the highest concurrency, its figures printed apart."""
    top = max(int(c) for c in args.concurrency.split(","))
    for protocol in args.protocols.split(","):
        await fill_pool(rest, args.pool)
        await settle(os.getpid())
        r = await phase(cluster, protocol, top, min(args.requests, args.pool - 2 * top))
        print(
            f"    warm-up ({protocol}, C={top}, untimed): {r['per_s']:.0f}/s, p99 {r['p99']:.1f} ms",
            flush=True,
        )


async def main(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        logs = Path(args.logs) if args.logs else Path(tmp)
        logs.mkdir(parents=True, exist_ok=True)
        cluster = Cluster(Path(tmp), logs)
        rest = await cluster.start_api()
        try:
            for mode in args.modes.split(","):
                for replicas in [int(r) for r in args.replicas.split(",")]:
                    extra = [*BUDGETS[args.budget], *args.allocator_args.split()]
                    await cluster.start_allocators(replicas, MODES[mode], extra, args.grpc_port)
                    if args.warm_up:
                        await warm_up(cluster, rest, args)
                    for protocol in args.protocols.split(","):
                        for concurrency in [int(c) for c in args.concurrency.split(",")]:
                            await fill_pool(rest, args.pool)
                            await settle(os.getpid())  # the allocators' caches saw the pool
                            count = (
                                min(args.requests, args.pool - 2 * concurrency)
                                if concurrency > 1
                                else min(args.requests, 300)
                            )
                            label = f"{protocol}-r{replicas}-c{concurrency}"
                            metrics = await allocator_metrics(cluster)
                            async with profiled(args.py_spy, label):
                                before = process_cpu(os.getpid())
                                r = await phase(cluster, protocol, concurrency, count)
                                made = count + 2 * concurrency  # each client's connect and first
                                cpu = cpu_per_allocation(before, process_cpu(os.getpid()), made)
                            inside = server_side(metrics, await allocator_metrics(cluster))
                            print(
                                f"mode={mode} budget={args.budget} protocol={protocol} "
                                f"replicas={replicas} C={concurrency}: "
                                f"{r['per_s']:.0f} allocations/s, p50 {r['p50']:.1f} ms, "
                                f"p90 {r['p90']:.1f} ms, p99 {r['p99']:.1f} ms, outcomes {r['outcomes']}"
                                f"\n    first wave (C at once, untimed): slowest "
                                f"{r['first_wave_max']:.1f} ms"
                                f"\n    {r['after_first_wave']}"
                                f"\n    allocators: {inside}"
                                f"\n    CPU ms per allocation: {cpu}",
                                flush=True,
                            )
                    await cluster.stop_allocators()
        finally:
            await rest.close()
            await cluster.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--modes", default="ours")
    parser.add_argument("--protocols", default="grpc,rest")
    parser.add_argument("--replicas", default="1,2")
    parser.add_argument("--concurrency", default="1,10,50")
    parser.add_argument("--requests", type=int, default=800, help="allocations per phase")
    parser.add_argument("--pool", type=int, default=1000)
    parser.add_argument(
        "--no-warm-up",
        dest="warm_up",
        action="store_false",
        help="no untimed warm-up phase per protocol when allocators start",
    )
    parser.add_argument(
        "--allocator-args", default="", help="extra agones allocator flags, space-separated"
    )
    parser.add_argument(
        "--grpc-port", action="store_true", help="gRPC on a port of its own (grpc's own TLS)"
    )
    parser.add_argument(
        "--budget",
        choices=sorted(BUDGETS),
        default="local",
        help="the allocators' client budget: agones local up's (default) or Agones' 400 / 500",
    )
    parser.add_argument("--py-spy", default="", help="profile each phase into this directory")
    parser.add_argument("--logs", default="", help="keep the processes' logs in this directory")
    aioloop.run(main(parser.parse_args()))
