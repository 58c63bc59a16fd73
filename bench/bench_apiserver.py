"""Benchmark an API server: creates and updates per second of a 2 KB custom object with 16 concurrent
clients, watch events per second delivered to 10 watchers, and the time to list 10,000 objects.

    python bench/bench_apiserver.py                      # starts a local server (subprocess)
    python bench/bench_apiserver.py --kubeconfig PATH    # any cluster (kind, a real one)
    python bench/bench_apiserver.py --kubeconfig PATH --server-pid PID   # + the server's CPU

With the server's process id (a local server on this machine), the server's CPU time per create,
per update and per watch write is printed too (`*_server_cpu_us`): unlike the rates, it hardly
moves when other processes share the cores.

The workload runs in its own namespace with a uniquely named CRD, removed afterwards. The client is
aiohttp speaking plain JSON, encoded and decoded with msgspec so that client-side cost stays small
next to the server's (objects carry managedFields, as on a real server: many small maps that
`json.loads` is slow to build).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import ssl
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import msgspec

from agones.client.config import load_kube_config

_encode = msgspec.json.Encoder().encode
_decode = msgspec.json.decode
PAYLOAD = "x" * 1800  # plus metadata and the rest of the spec: ~2 KB per object


def load_kubeconfig(path: str) -> tuple[str, dict[str, str], ssl.SSLContext | bool]:
    """Server URL, headers and TLS context from a kubeconfig, via the project's client config."""
    config = load_kube_config(path)
    headers = {"Accept": "application/json", "Content-Type": "application/json"}
    token = config.bearer_token()
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return config.host, headers, config.ssl_context() or False


class Client:
    def __init__(self, server: str, headers: dict[str, str], sslctx: ssl.SSLContext | bool) -> None:
        self.server = server
        self.session = aiohttp.ClientSession(
            headers=headers,
            connector=aiohttp.TCPConnector(ssl=sslctx, limit=64),
            timeout=aiohttp.ClientTimeout(total=600),
        )

    async def fetch(self, path: str) -> bytes:
        """GET `path` and return the body undecoded."""
        async with self.session.get(self.server + path) as resp:
            raw = await resp.read()
            if resp.status != 200:
                raise RuntimeError(f"GET {path}: {resp.status} {raw[:300]!r}")
            return raw

    async def call(
        self, method: str, path: str, body: Any = None, ok: tuple[int, ...] = (200, 201)
    ) -> Any:
        data = None if body is None else _encode(body)
        async with self.session.request(method, self.server + path, data=data) as resp:
            raw = await resp.read()
            if resp.status not in ok:
                raise RuntimeError(f"{method} {path}: {resp.status} {raw[:300]!r}")
            return _decode(raw) if raw else None

    async def close(self) -> None:
        await self.session.close()


def crd_manifest(group: str) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"benchobjects.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "benchobjects", "kind": "BenchObject"},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "properties": {
                                "spec": {
                                    "type": "object",
                                    "properties": {
                                        "replicas": {"type": "integer", "minimum": 0},
                                        "payload": {"type": "string"},
                                        "ports": {
                                            "type": "array",
                                            "items": {
                                                "type": "object",
                                                "properties": {
                                                    "name": {"type": "string"},
                                                    "port": {"type": "integer"},
                                                },
                                            },
                                        },
                                    },
                                },
                                "status": {
                                    "type": "object",
                                    "x-kubernetes-preserve-unknown-fields": True,
                                },
                            },
                        }
                    },
                    "subresources": {"status": {}},
                }
            ],
        },
    }


def obj(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "",
        "kind": "BenchObject",
        "metadata": {"name": name, "labels": {"bench": "yes", "app": "agones-py"}},
        "spec": {"replicas": 1, "payload": PAYLOAD, "ports": [{"name": "default", "port": 7654}]},
    }


async def run_workers(n: int, workers: int, fn: Any) -> float:
    counter = iter(range(n))
    start = time.perf_counter()

    async def worker() -> None:
        for i in counter:
            await fn(i)

    await asyncio.gather(*(worker() for _ in range(workers)))
    return time.perf_counter() - start


def process_cpu_s(pid: int | None) -> float:
    """User plus system CPU seconds of process `pid` so far (0.0 without a pid)."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@dataclass
class Workload:
    """The benchmark's namespace and CRD on one server, and the object every write sends."""

    client: Client
    server: str
    group: str
    ns: str
    base: str
    template: dict[str, Any]
    server_pid: int | None = None

    def cpu_us_per(self, since: float, ops: int) -> int:
        """The server's CPU µs per operation since `since` (from `process_cpu_s`)."""
        return round((process_cpu_s(self.server_pid) - since) * 1e6 / ops)


async def bench(args: argparse.Namespace, kubeconfig: str) -> dict[str, Any]:
    server, headers, sslctx = load_kubeconfig(kubeconfig)
    client = Client(server, headers, sslctx)
    suffix = uuid.uuid4().hex[:6]
    results: dict[str, Any] = {
        "server": server,
        "version": (await client.call("GET", "/version")).get("gitVersion"),
    }
    work = await set_up(client, server, f"b{suffix}.bench.agones-py.test", f"bench-{suffix}")
    work.server_pid = args.server_pid
    results["object_bytes"] = len(json.dumps(work.template))
    try:
        created = await creates_and_updates(args, work, results)
        await watch_fan_out(args, work, created, results)
        await lists(args, work, len(created), results)
    finally:
        await tear_down(work)
    return results


async def set_up(client: Client, server: str, group: str, ns: str) -> Workload:
    """Create the namespace and the CRD, and wait until its resource is served."""
    await client.call(
        "POST",
        "/api/v1/namespaces",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
    )
    await client.call(
        "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd_manifest(group)
    )
    base = f"/apis/{group}/v1/namespaces/{ns}/benchobjects"
    for _ in range(200):
        try:
            await client.call("GET", base)
            break
        except RuntimeError:
            await asyncio.sleep(0.1)
    template = obj("x")
    template["apiVersion"] = f"{group}/v1"
    return Workload(client, server, group, ns, base, template)


async def tear_down(work: Workload) -> None:
    await work.client.call(
        "DELETE",
        f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/benchobjects.{work.group}",
        ok=(200, 202, 404),
    )
    await work.client.call("DELETE", f"/api/v1/namespaces/{work.ns}", ok=(200, 202, 404))
    await work.client.close()


async def creates_and_updates(
    args: argparse.Namespace, work: Workload, results: dict[str, Any]
) -> dict[int, Any]:
    """Create `args.creates` objects, then update each once; returns them as last written."""
    client, base, template = work.client, work.base, work.template
    created: dict[int, Any] = {}

    async def create(i: int) -> None:
        body = dict(template, metadata={**template["metadata"], "name": f"o-{i:06d}"})
        created[i] = await client.call("POST", base, body)

    cpu = process_cpu_s(work.server_pid)
    elapsed = await run_workers(args.creates, args.clients, create)
    results["creates_per_s"] = round(args.creates / elapsed)
    if work.server_pid is not None:
        results["create_server_cpu_us"] = work.cpu_us_per(cpu, args.creates)

    async def update(i: int) -> None:
        current = created[i]
        current["spec"]["replicas"] += 1
        created[i] = await client.call("PUT", f"{base}/{current['metadata']['name']}", current)

    cpu = process_cpu_s(work.server_pid)
    elapsed = await run_workers(args.creates, args.clients, update)
    results["updates_per_s"] = round(args.creates / elapsed)
    if work.server_pid is not None:
        results["update_server_cpu_us"] = work.cpu_us_per(cpu, args.creates)
    return created


async def watch_fan_out(
    args: argparse.Namespace, work: Workload, created: dict[int, Any], results: dict[str, Any]
) -> None:
    """Watch fan-out: watchers from the current resourceVersion, then a burst of updates."""
    client, server, base = work.client, work.server, work.base
    rv = (await client.call("GET", f"{base}?limit=1"))["metadata"]["resourceVersion"]
    n_events = args.watch_events
    got = [0] * args.watchers
    chunks = [0] * args.watchers
    done = [asyncio.Event() for _ in range(args.watchers)]
    ready = [asyncio.Event() for _ in range(args.watchers)]

    async def watcher(k: int) -> None:
        url = f"{server}{base}?watch=true&resourceVersion={rv}&timeoutSeconds=600"
        async with client.session.get(url) as resp:
            ready[k].set()
            buf = b""
            async for chunk in resp.content.iter_any():
                chunks[k] += 1
                buf += chunk
                lines = buf.split(b"\n")
                buf = lines.pop()
                # Both kube-apiserver and the local server write the type first: count
                # without decoding, so the client's CPU stays with the server's.
                got[k] += sum(1 for line in lines if line.startswith(b'{"type":"MODIFIED"'))
                if got[k] >= n_events:
                    done[k].set()
                    return

    tasks = [asyncio.create_task(watcher(k)) for k in range(args.watchers)]
    await asyncio.gather(*(r.wait() for r in ready))
    names = list(created.values())
    cpu = process_cpu_s(work.server_pid)
    start = time.perf_counter()

    async def touch(i: int) -> None:
        current = names[i % len(names)]
        body = {"spec": {"replicas": current["spec"]["replicas"] + 1 + i}}
        async with client.session.patch(
            f"{server}{base}/{current['metadata']['name']}",
            data=_encode(body),
            headers={"Content-Type": "application/merge-patch+json"},
        ) as resp:
            await resp.read()

    write_time = await run_workers(n_events, args.clients, touch)
    await asyncio.wait_for(asyncio.gather(*(d.wait() for d in done)), 300)
    elapsed = time.perf_counter() - start
    for t in tasks:
        t.cancel()
    results["watch_writes_per_s"] = round(n_events / write_time)
    results["watch_events_per_s_per_watcher"] = round(n_events / elapsed)
    results["watch_events_per_s_total"] = round(n_events * args.watchers / elapsed)
    # reads per event at the watchers: how many events the server's writes carry together
    results["watch_reads_per_event"] = round(sum(chunks) / (n_events * args.watchers), 3)
    if work.server_pid is not None:
        # a patch and its event sent to every watcher
        results["watch_write_server_cpu_us"] = work.cpu_us_per(cpu, n_events)


async def lists(
    args: argparse.Namespace, work: Workload, have: int, results: dict[str, Any]
) -> None:
    """Fill up to `args.list_objects` objects, then time the best of three lists of them."""
    client, base, template = work.client, work.base, work.template

    async def fill(i: int) -> None:
        body = dict(template, metadata={**template["metadata"], "name": f"o-{have + i:06d}"})
        await client.call("POST", base, body)

    if args.list_objects > have:
        await run_workers(args.list_objects - have, args.clients, fill)
    timings = {}
    for label, query in (("list_s_rv0", "?resourceVersion=0"), ("list_s_consistent", "")):
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            raw = await client.fetch(base + query)
            best = min(best, time.perf_counter() - start)
        # Decoded after the clock stops: the figure is the server's list, not the client's
        # JSON decoding of 10,000 objects (which depends on the client's heap and GC).
        assert len(_decode(raw)["items"]) >= args.list_objects
        timings[label] = round(best, 3)
    results.update(timings)


def start_local_server(tmp: Path) -> subprocess.Popen[bytes]:
    kubeconfig = tmp / "kubeconfig"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agones",
            "localcluster",
            "apiserver",
            "--kubeconfig",
            str(kubeconfig),
        ],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 30
    while not kubeconfig.exists():
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            raise RuntimeError("local API server did not start")
        time.sleep(0.05)
    return proc


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--kubeconfig", default="", help="cluster to measure (default: start a local server)"
    )
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--creates", type=int, default=3000)
    parser.add_argument("--watchers", type=int, default=10)
    parser.add_argument("--watch-events", type=int, default=3000)
    parser.add_argument("--list-objects", type=int, default=10000)
    parser.add_argument(
        "--server-pid", type=int, default=None, help="the server's process: report its CPU too"
    )
    args = parser.parse_args()
    proc = None
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = args.kubeconfig
        if not kubeconfig:
            proc = start_local_server(Path(tmp))
            args.server_pid = args.server_pid or proc.pid
            kubeconfig = str(Path(tmp) / "kubeconfig")
        try:
            results = asyncio.run(bench(args, kubeconfig))
        finally:
            if proc is not None:
                proc.terminate()
                proc.wait(10)
    for k, v in results.items():
        print(f"{k:32s} {v}")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
