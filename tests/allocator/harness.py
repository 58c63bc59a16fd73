"""Real certificates, a fake allocate callable and clients for the allocator service's tests."""

from __future__ import annotations

import json
import socket
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import grpc
import yaml

from agones.allocator.certs import write_pair
from agones.allocator.proto import allocation_pb2 as pb
from agones.allocator.proto import allocation_pb2_grpc
from agones.allocator.server import AllocatorServer
from agones.allocator.service import AllocationService
from agones.allocator.settings import AllocatorServiceSettings
from agones.apis.agones.v1.gameserver import GameServerStatusPort
from agones.apis.allocation.v1 import (
    GameServerAllocation,
    GameServerAllocationState,
    GameServerAllocationStatus,
)
from agones.client.errors import ApiError, ConflictError
from agones.client.rest import RESTClient
from agones.client.versioned.resources import CUSTOM_RESOURCE_DEFINITIONS as CRDS
from agones.client.versioned.resources import GAME_SERVER_ALLOCATION_POLICIES as POLICIES
from agones.featuregates import FeatureGates
from agones.pki import CertificateAuthority, KeyPair, Usage
from tests.waiting import wait_for_async

HOSTS = ["localhost", "127.0.0.1"]
ROOT = Path(__file__).resolve().parents[2]


async def apply_policy_crd(rest: RESTClient) -> None:
    """Create the GameServerAllocationPolicy CRD and wait until it is served."""
    doc = yaml.safe_load((ROOT / "crds" / "gameserverallocationpolicy.yaml").read_text())
    await rest.create(CRDS, doc)

    async def served() -> bool:
        try:
            await rest.list(POLICIES, "default")
        except ApiError:
            return False
        return True

    await wait_for_async(served, what="the policy CRD to be served")


@dataclass
class Certs:
    ca: CertificateAuthority
    other_ca: CertificateAuthority
    server: KeyPair
    client: KeyPair
    stranger: KeyPair
    tls_dir: Path
    ca_dir: Path


def make_certs(root: Path) -> Certs:
    ca = CertificateAuthority.new("allocator-ca")
    other = CertificateAuthority.new("someone-else")
    certs = Certs(
        ca=ca,
        other_ca=other,
        server=ca.issue("allocator", HOSTS, Usage.SERVER),
        client=ca.issue("matchmaker", [], Usage.CLIENT),
        stranger=other.issue("matchmaker", [], Usage.CLIENT),
        tls_dir=root / "tls",
        ca_dir=root / "client-ca",
    )
    write_pair(certs.tls_dir, certs.server)
    certs.ca_dir.mkdir(parents=True)
    (certs.ca_dir / "client-ca.crt").write_bytes(ca.cert_pem)
    return certs


CONFLICT_MESSAGE = (
    'Operation cannot be fulfilled on gameservers.agones.dev "gs-1": the object has been '
    "modified; please apply your changes to the latest version and try again"
)


@dataclass
class FakeAllocate:
    """Allocates `gs-N` unless the namespace says otherwise: `empty` → UnAllocated, `busy` →
    Contention, `invalid` → ValueError, `apierror` → the API server's 409 (as after the
    allocator's last retry); `gate` (an Event) holds every call until set."""

    calls: list[GameServerAllocation] = field(default_factory=list)
    gate: Any = None

    async def __call__(self, gsa: GameServerAllocation) -> GameServerAllocation:
        self.calls.append(gsa)
        number = len(self.calls)
        if self.gate is not None:
            await self.gate.wait()
        namespace = gsa.metadata.get_namespace() if gsa.metadata else ""
        if namespace == "invalid":
            raise ValueError("spec.scheduling: Unsupported value")
        if namespace == "apierror":
            raise ConflictError(409, {"reason": "Conflict", "message": CONFLICT_MESSAGE})
        state = {
            "empty": GameServerAllocationState.UN_ALLOCATED,
            "busy": GameServerAllocationState.CONTENTION,
        }.get(namespace, GameServerAllocationState.ALLOCATED)
        if state != GameServerAllocationState.ALLOCATED:
            gsa.status = GameServerAllocationStatus(state=state, game_server_name="", source="")
            return gsa
        gsa.status = GameServerAllocationStatus(
            state=state,
            game_server_name=f"gs-{number}",
            address="127.0.0.1",
            node_name="node-a",
            source="local",
            ports=[GameServerStatusPort(name="default", port=7000 + number)],
        )
        return gsa


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def settings_for(certs: Certs | None, **changes: Any) -> AllocatorServiceSettings:
    settings = AllocatorServiceSettings(
        http_port=0,
        grpc_port=0,
        address="127.0.0.1",
        health_port=0,
        cert_watch_interval=0.05,
        prometheus_exporter=False,
    )
    if certs is not None:
        settings.tls_dir = str(certs.tls_dir)
        settings.client_ca_dir = str(certs.ca_dir)
    else:
        settings.disable_tls = True
    for key, value in changes.items():
        setattr(settings, key, value)
    return settings


async def start_server(
    settings: AllocatorServiceSettings, allocate: Any, **kwargs: Any
) -> AllocatorServer:
    service = AllocationService(allocate, FeatureGates(), settings.http_unallocated_status_code)
    server = AllocatorServer(settings, service, **kwargs)
    await server.start()
    return server


def grpc_channel(port: int, certs: Certs | None, client: KeyPair | None) -> grpc.aio.Channel:
    target = f"127.0.0.1:{port}"
    if certs is None:
        return grpc.aio.insecure_channel(target)
    credentials = grpc.ssl_channel_credentials(
        root_certificates=certs.ca.cert_pem,
        private_key=client.key_pem if client else None,
        certificate_chain=client.cert_pem if client else None,
    )
    return grpc.aio.secure_channel(target, credentials)


async def grpc_allocate(
    port: int, certs: Certs | None, client: KeyPair | None, request: pb.AllocationRequest
) -> pb.AllocationResponse:
    async with grpc_channel(port, certs, client) as channel:
        stub = allocation_pb2_grpc.AllocationServiceStub(channel)
        response: pb.AllocationResponse = await stub.Allocate(request, timeout=10)
        return response


def client_ssl(certs: Certs, client: KeyPair | None, tmp: Path) -> ssl.SSLContext:
    context = ssl.create_default_context(cadata=certs.ca.cert_pem.decode())
    if client is not None:
        write_pair(tmp, client)
        context.load_cert_chain(tmp / "tls.crt", tmp / "tls.key")
    return context


async def rest_post(
    port: int, body: Any, context: ssl.SSLContext | None, path: str = "/gameserverallocation"
) -> tuple[int, Any]:
    scheme = "https" if context is not None else "http"
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    async with (
        aiohttp.ClientSession() as session,
        session.post(
            f"{scheme}://127.0.0.1:{port}{path}",
            data=data,
            ssl=context if context is not None else False,
            headers={"Content-Type": "application/json"},
            timeout=aiohttp.ClientTimeout(total=10),
        ) as response,
    ):
        text = await response.text()
        try:
            return response.status, json.loads(text)
        except ValueError:
            return response.status, text
