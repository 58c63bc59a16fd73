"""Benchmark the local API server's protobuf path: the codec in process (decode and encode of a
client-go-style Pod, zero values included), and creates per second over HTTP of Pods sent as
protobuf against the same Pods sent as JSON (16 concurrent clients, one local server).

    python bench/bench_protobuf.py
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from typing import Any

import aiohttp

from agones.localcluster import ServerOptions, ThreadedAPIServer
from agones.localcluster.apiserver.protobuf import CONTENT_TYPE, decode_object, encode_object

CLIENTS, PER_CLIENT = 16, 60


def pod(name: str, ns: str) -> dict[str, Any]:
    container = {
        "name": "game",
        "image": "us-docker.pkg.dev/agones-images/examples/simple-game-server:0.41",
        "ports": [{"name": "default", "containerPort": 7654, "protocol": "UDP", "hostPort": 0}],
        "resources": {"limits": {"cpu": "100m", "memory": "64Mi"}},
        "workingDir": "",
        "imagePullPolicy": "",
        "stdin": False,
        "tty": False,
    }
    meta = {"name": name, "namespace": ns, "labels": {"agones.dev/role": "gameserver"}}
    meta |= {"generateName": "", "uid": "", "resourceVersion": "", "generation": 0}
    spec = {"containers": [container], "restartPolicy": "", "dnsPolicy": "", "nodeName": ""}
    spec |= {"hostNetwork": False, "serviceAccountName": "", "schedulerName": ""}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": {}}


def codec_rates(n: int = 5000) -> tuple[float, float]:
    body = encode_object(pod("p", "ns"))
    start = time.perf_counter()
    for _ in range(n):
        decode_object(body)
    decode_rate = n / (time.perf_counter() - start)
    obj = decode_object(body)
    start = time.perf_counter()
    for _ in range(n):
        encode_object(obj)
    return decode_rate, n / (time.perf_counter() - start)


async def _creates(url: str, ns: str, protobuf: bool) -> float:
    ctype = CONTENT_TYPE if protobuf else "application/json"
    path = f"{url}/api/v1/namespaces/{ns}/pods"
    tag = uuid.uuid4().hex[:6]

    def body(i: int, j: int) -> bytes:
        obj = pod(f"{tag}-{i}-{j}", ns)
        return encode_object(obj) if protobuf else json.dumps(obj).encode()

    bodies = [[body(i, j) for j in range(PER_CLIENT)] for i in range(CLIENTS)]
    async with aiohttp.ClientSession(headers={"Content-Type": ctype}) as session:

        async def client(i: int) -> None:
            for data in bodies[i]:
                async with session.post(path, data=data) as resp:
                    assert resp.status == 201, await resp.text()

        start = time.perf_counter()
        await asyncio.gather(*(client(i) for i in range(CLIENTS)))
        return CLIENTS * PER_CLIENT / (time.perf_counter() - start)


def main() -> None:
    decode_rate, encode_rate = codec_rates()
    print(f"{'codec_pod_decodes_per_s':32} {decode_rate:.0f}")
    print(f"{'codec_pod_encodes_per_s':32} {encode_rate:.0f}")
    runner = ThreadedAPIServer(ServerOptions())
    srv = runner.start()
    try:
        ns = f"bench-pb-{uuid.uuid4().hex[:6]}"
        asyncio.run(_namespace(srv.url, ns))
        for protobuf in (False, True, False, True):
            rate = asyncio.run(_creates(srv.url, ns, protobuf))
            label = "pod_creates_per_s_" + ("protobuf" if protobuf else "json")
            print(f"{label:32} {rate:.0f}")
    finally:
        runner.stop()


async def _namespace(url: str, ns: str) -> None:
    async with aiohttp.ClientSession() as session:
        body = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
        async with session.post(f"{url}/api/v1/namespaces", json=body) as resp:
            assert resp.status == 201, await resp.text()


if __name__ == "__main__":
    main()
