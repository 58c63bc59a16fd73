"""The allocator's gRPC against @grpc/grpc-js, a client that shares nothing with grpc's C core
(Node's HTTP/2 and HPACK): allocation over mTLS, the status codes, health, a stranger refused."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2

from agones.allocator.certs import write_pair
from agones.allocator.proto import allocation_pb2 as pb
from agones.allocator.server import AllocatorServer
from tests.allocator.harness import Certs, FakeAllocate, make_certs, settings_for, start_server

NODE = shutil.which("node")
NODE_MODULES = Path(__file__).resolve().parents[1] / "sdk" / "node" / "node_modules"
CLIENT = Path(__file__).parent / "node" / "grpcjsClient.js"
ALLOCATE = "/allocation.AllocationService/Allocate"

pytestmark = pytest.mark.skipif(NODE is None, reason="node is not installed")


@pytest.fixture
def certs(tmp_path: Path) -> Certs:
    return make_certs(tmp_path)


@pytest.fixture
async def allocator(certs: Certs) -> AsyncIterator[AllocatorServer]:
    server = await start_server(settings_for(certs), FakeAllocate())
    try:
        yield server
    finally:
        await server.shutdown()


async def grpc_js(port: int, calls: list[str], certs: Certs, who: Any, tmp: Path) -> list[Any]:
    """Each call's result as the Node client printed it."""
    assert (NODE_MODULES / "@grpc" / "grpc-js").is_dir(), (
        "@grpc/grpc-js is missing: run .ci/install-system-deps"
    )
    (tmp / "ca.crt").write_bytes(certs.ca.cert_pem)
    env = dict(os.environ, PORT=str(port), CA=str(tmp / "ca.crt"), CALLS=",".join(calls))
    env["NODE_PATH"] = str(NODE_MODULES)
    if who is not None:
        write_pair(tmp / "client", who)
        env.update(CERT=str(tmp / "client" / "tls.crt"), KEY=str(tmp / "client" / "tls.key"))
    assert NODE is not None
    process = await asyncio.create_subprocess_exec(
        NODE, str(CLIENT), env=env, stdout=asyncio.subprocess.PIPE
    )
    out, _ = await asyncio.wait_for(process.communicate(), 60)
    assert process.returncode == 0
    return [json.loads(line) for line in out.decode().splitlines()]


def request(namespace: str) -> str:
    selector = pb.GameServerSelector(matchLabels={"agones.dev/fleet": "simple"})
    return (
        pb.AllocationRequest(namespace=namespace, gameServerSelectors=[selector])
        .SerializeToString()
        .hex()
    )


async def test_grpc_js_allocates_over_mtls_and_reads_every_status(
    allocator: AllocatorServer, certs: Certs, tmp_path: Path
) -> None:
    port = allocator.ports["mux"]
    health = health_pb2.HealthCheckRequest(service="").SerializeToString().hex()
    results = await grpc_js(
        port,
        [
            f"{ALLOCATE}:{request('default')}",
            f"{ALLOCATE}:{request('empty')}",
            f"{ALLOCATE}:{request('busy')}",
            f"{ALLOCATE}:ff",
            "/allocation.AllocationService/Nope:",
            f"/grpc.health.v1.Health/Check:{health}",
            f"/grpc.health.v1.Health/Watch:{health}",
        ],
        certs,
        certs.client,
        tmp_path,
    )
    allocated = pb.AllocationResponse.FromString(bytes.fromhex(results[0]["response"]))
    assert results[0]["code"] == 0 and allocated.gameServerName == "gs-1"
    assert [r["code"] for r in results[1:5]] == [
        grpc.StatusCode.RESOURCE_EXHAUSTED.value[0],
        grpc.StatusCode.ABORTED.value[0],
        grpc.StatusCode.INVALID_ARGUMENT.value[0],
        grpc.StatusCode.UNIMPLEMENTED.value[0],
    ]
    for checked in results[5:]:
        assert checked["code"] == 0
        status = health_pb2.HealthCheckResponse.FromString(bytes.fromhex(checked["response"]))
        assert status.status == health_pb2.HealthCheckResponse.SERVING


async def test_grpc_js_without_a_trusted_certificate_is_refused(
    allocator: AllocatorServer, certs: Certs, tmp_path: Path
) -> None:
    results = await grpc_js(
        allocator.ports["mux"],
        [f"{ALLOCATE}:{request('default')}"],
        certs,
        certs.stranger,
        tmp_path,
    )
    assert results[0]["code"] == grpc.StatusCode.UNAVAILABLE.value[0]
