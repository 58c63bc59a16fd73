"""The main job of `agones local up --allocate`: wait for what was applied to be Ready, then
allocate one GameServer through the local allocator service, as a matchmaker would.

`wait_ready(client, docs, timeout)` waits until every applied Fleet has `readyReplicas` ≥
`replicas` and every applied GameServer is Ready; `selector_for(docs)` is what to allocate from
(the first Fleet's `agones.dev/fleet` label, else the first GameServer's labels, in its namespace).
`allocate(port, certs, namespace, labels)` calls `allocation.AllocationService/Allocate` over gRPC
with the generated client certificate; `report(response, port, certs, request)` is what to print:
the address and port, the command that talks to the game server, and the REST call that allocates
another.
"""

from __future__ import annotations

import asyncio
import json
import shlex
from typing import Any

import grpc
from google.protobuf import json_format

from ..allocator.certs import AllocatorCertDirs
from ..allocator.proto import allocation_pb2 as pb
from ..client.errors import ApiError
from ..client.rest import Resource, RESTClient
from ..client.versioned.resources import FLEETS, GAME_SERVERS

FLEET_LABEL = "agones.dev/fleet"
POLL_INTERVAL = 0.2
ALLOCATE_TIMEOUT = 30.0


def _targets(docs: list[dict[str, Any]]) -> list[tuple[Resource, str, str]]:
    out = []
    for doc in docs:
        md = doc.get("metadata") or {}
        if doc.get("apiVersion") != "agones.dev/v1" or not md.get("name"):
            continue
        namespace = md.get("namespace", "default")
        if doc.get("kind") == "Fleet":
            out.append((FLEETS, namespace, md["name"]))
        elif doc.get("kind") == "GameServer":
            out.append((GAME_SERVERS, namespace, md["name"]))
    return out


def selector_for(docs: list[dict[str, Any]]) -> tuple[str, dict[str, str]] | None:
    """(namespace, matchLabels) to allocate from; None when nothing allocatable was applied."""
    targets = _targets(docs)
    for res, namespace, name in targets:
        if res is FLEETS:
            return namespace, {FLEET_LABEL: name}
    for doc in docs:
        if doc.get("kind") == "GameServer" and doc.get("apiVersion") == "agones.dev/v1":
            md = doc.get("metadata") or {}
            return md.get("namespace", "default"), dict(md.get("labels") or {})
    return None


def _is_ready(res: Resource, obj: dict[str, Any]) -> bool:
    status = obj.get("status") or {}
    if res is FLEETS:
        wanted = (obj.get("spec") or {}).get("replicas", 0)
        return bool(status.get("readyReplicas", 0) >= wanted)
    return bool(status.get("state") == "Ready")


async def wait_ready(client: RESTClient, docs: list[dict[str, Any]], timeout: float) -> None:
    """Until every applied Fleet and GameServer is Ready; `TimeoutError` naming what is not."""
    pending = _targets(docs)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while pending:
        still = []
        for res, namespace, name in pending:
            try:
                obj = await client.get(res, name, namespace)
            except ApiError:
                still.append((res, namespace, name))
                continue
            if not _is_ready(res, obj):
                still.append((res, namespace, name))
        pending = still
        if pending and loop.time() > deadline:
            names = ", ".join(f"{res.plural}/{ns}/{name}" for res, ns, name in pending)
            raise TimeoutError(f"not Ready after {timeout:.0f}s: {names}")
        if pending:
            await asyncio.sleep(POLL_INTERVAL)


def allocation_request(namespace: str, labels: dict[str, str]) -> pb.AllocationRequest:
    return pb.AllocationRequest(
        namespace=namespace, gameServerSelectors=[pb.GameServerSelector(matchLabels=labels)]
    )


async def allocate(
    port: int, certs: AllocatorCertDirs, request: pb.AllocationRequest
) -> pb.AllocationResponse:
    """One allocation through the allocator with the generated client certificate."""
    credentials = grpc.ssl_channel_credentials(
        root_certificates=(certs.client / "ca.crt").read_bytes(),
        private_key=(certs.client / "tls.key").read_bytes(),
        certificate_chain=(certs.client / "tls.crt").read_bytes(),
    )
    async with grpc.aio.secure_channel(f"127.0.0.1:{port}", credentials) as channel:
        call = channel.unary_unary(
            "/allocation.AllocationService/Allocate",
            request_serializer=pb.AllocationRequest.SerializeToString,
            response_deserializer=pb.AllocationResponse.FromString,
        )
        response: pb.AllocationResponse = await call(request, timeout=ALLOCATE_TIMEOUT)
        return response


def report(
    response: pb.AllocationResponse,
    port: int,
    certs: AllocatorCertDirs,
    request: pb.AllocationRequest,
) -> list[str]:
    """The lines `agones local up` prints for an allocation."""
    game_port = response.ports[0].port if response.ports else 0
    body = json.dumps(json_format.MessageToDict(request), separators=(",", ":"))
    curl = " ".join(
        [
            "curl",
            f"--cacert {shlex.quote(str(certs.client / 'ca.crt'))}",
            f"--cert {shlex.quote(str(certs.client / 'tls.crt'))}",
            f"--key {shlex.quote(str(certs.client / 'tls.key'))}",
            f"-d {shlex.quote(body)}",
            f"https://127.0.0.1:{port}/gameserverallocation",
        ]
    )
    return [
        f"allocated gameserver {request.namespace}/{response.gameServerName} "
        f"at {response.address}:{game_port} (node {response.nodeName})",
        f"  talk to it: echo hello | nc -u {response.address} {game_port}",
        f"  allocate another: {curl}",
    ]
