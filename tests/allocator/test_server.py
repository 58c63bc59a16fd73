"""The allocator service over real (m)TLS: who gets in, what comes back, hot reload, drain."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import grpc
import pytest
from cryptography import x509
from grpc_health.v1 import health_pb2, health_pb2_grpc

from agones.allocator.certs import write_pair
from agones.allocator.proto import allocation_pb2 as pb
from agones.allocator.server import AllocatorServer
from agones.pki import Usage
from tests.allocator.harness import (
    CONFLICT_MESSAGE,
    HOSTS,
    Certs,
    FakeAllocate,
    client_ssl,
    free_port,
    grpc_allocate,
    grpc_channel,
    make_certs,
    rest_post,
    settings_for,
    start_server,
)
from tests.waiting import wait_for_async


@pytest.fixture
def certs(tmp_path: Path) -> Certs:
    return make_certs(tmp_path)


@pytest.fixture
async def mux(certs: Certs) -> AsyncIterator[tuple[AllocatorServer, FakeAllocate]]:
    fake = FakeAllocate()
    server = await start_server(settings_for(certs), fake)
    try:
        yield server, fake
    finally:
        await server.shutdown()


def request(namespace: str = "default") -> pb.AllocationRequest:
    return pb.AllocationRequest(
        namespace=namespace,
        gameServerSelectors=[pb.GameServerSelector(matchLabels={"agones.dev/fleet": "simple"})],
    )


async def test_grpc_with_valid_client_certificate_allocates(mux, certs: Certs) -> None:
    server, fake = mux
    response = await grpc_allocate(server.ports["mux"], certs, certs.client, request())
    assert response.gameServerName == "gs-1"
    assert [(p.name, p.port) for p in response.ports] == [("default", 7001)]
    gsa = fake.calls[0]
    assert gsa.metadata.namespace == "default"
    assert gsa.spec.selectors[0].match_labels == {"agones.dev/fleet": "simple"}


@pytest.mark.parametrize("who", ["none", "stranger"], ids=["no-client-cert", "other-ca"])
async def test_grpc_refuses_clients_without_a_trusted_certificate(
    mux, certs: Certs, who: str
) -> None:
    server, fake = mux
    client = None if who == "none" else certs.stranger
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await grpc_allocate(server.ports["mux"], certs, client, request())
    assert err.value.code() == grpc.StatusCode.UNAVAILABLE
    assert fake.calls == []


async def test_rest_with_valid_client_certificate_allocates(mux, certs: Certs, tmp_path) -> None:
    server, _ = mux
    context = client_ssl(certs, certs.client, tmp_path / "client")
    body = {"namespace": "default", "gameServerSelectors": [{"matchLabels": {"a": "b"}}]}
    status, answer = await rest_post(server.ports["mux"], body, context)
    assert status == 200
    assert answer["gameServerName"] == "gs-1"
    assert answer["ports"] == [{"name": "default", "port": 7001}]
    assert answer["address"] == "127.0.0.1"
    assert answer["source"] == "local"


@pytest.mark.parametrize("who", ["none", "stranger"], ids=["no-client-cert", "other-ca"])
async def test_rest_refuses_clients_without_a_trusted_certificate(
    mux, certs: Certs, tmp_path, who: str
) -> None:
    server, fake = mux
    client = None if who == "none" else certs.stranger
    context = client_ssl(certs, client, tmp_path / "client")
    with pytest.raises((aiohttp.ClientError, ssl.SSLError, ConnectionError)):
        await rest_post(server.ports["mux"], {"namespace": "default"}, context)
    assert fake.calls == []


@pytest.mark.parametrize(
    ("namespace", "code", "http", "message"),
    [
        ("empty", grpc.StatusCode.RESOURCE_EXHAUSTED, 429, "there is no available GameServer"),
        ("busy", grpc.StatusCode.ABORTED, 409, "too many concurrent requests"),
        ("invalid", grpc.StatusCode.INVALID_ARGUMENT, 400, "Unsupported value"),
        ("apierror", grpc.StatusCode.UNKNOWN, 500, CONFLICT_MESSAGE),
    ],
    ids=["unallocated", "contention", "invalid", "api-server-error"],
)
async def test_errors_are_mapped_as_agones_maps_them(
    mux, certs: Certs, tmp_path, namespace: str, code, http: int, message: str
) -> None:
    server, _ = mux
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await grpc_allocate(server.ports["mux"], certs, certs.client, request(namespace))
    assert err.value.code() == code
    assert message in (err.value.details() or "")
    context = client_ssl(certs, certs.client, tmp_path / "client")
    status, answer = await rest_post(server.ports["mux"], {"namespace": namespace}, context)
    assert status == http
    assert answer["code"] == code.value[0]
    assert message in answer["message"]


async def test_unallocated_status_code_is_configurable(certs: Certs) -> None:
    server = await start_server(
        settings_for(certs, http_unallocated_status_code=503), FakeAllocate()
    )
    try:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await grpc_allocate(server.ports["mux"], certs, certs.client, request("empty"))
        assert err.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        await server.shutdown()


async def _served_certificate(port: int, certs: Certs, alpn: list[str] | None = None) -> bytes:
    context = client_ssl(certs, certs.client, certs.tls_dir.parent / "client")
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    if alpn:  # only h2: the listener passes the connection to grpc's own TLS
        context.set_alpn_protocols(alpn)
    _reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=context)
    der: bytes = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
    # Dropped at once: grpc's TLS never answers the close_notify of a client that spoke no
    # HTTP/2, so a graceful close would keep the connection (and the server's stop) waiting.
    writer.transport.abort()
    return der


@pytest.mark.parametrize("alpn", [None, ["h2"]], ids=["terminated-here", "grpc-tls"])
async def test_rotated_server_certificate_is_served_without_restart(
    mux, certs: Certs, alpn: list[str] | None
) -> None:
    server, _ = mux
    port = server.ports["mux"]
    old = x509.load_pem_x509_certificate(certs.server.cert_pem)
    assert x509.load_der_x509_certificate(await _served_certificate(port, certs, alpn)) == old
    rotated = certs.ca.issue("allocator-rotated", HOSTS, Usage.SERVER)
    write_pair(certs.tls_dir, rotated)
    new = x509.load_pem_x509_certificate(rotated.cert_pem)

    async def serving_new() -> bool:
        served = await _served_certificate(port, certs, alpn)
        return x509.load_der_x509_certificate(served) == new

    await wait_for_async(serving_new, timeout=10, what="the rotated certificate")
    response = await grpc_allocate(port, certs, certs.client, request())
    assert response.gameServerName


async def test_added_client_ca_is_trusted_without_restart(mux, certs: Certs) -> None:
    server, fake = mux
    port = server.ports["mux"]
    with pytest.raises(grpc.aio.AioRpcError):
        await grpc_allocate(port, certs, certs.stranger, request())
    (certs.ca_dir / "other.pem").write_bytes(certs.other_ca.cert_pem)

    async def stranger_allowed() -> bool:
        try:
            await grpc_allocate(port, certs, certs.stranger, request())
        except grpc.aio.AioRpcError:
            return False
        return True

    await wait_for_async(stranger_allowed, timeout=10, what="the added client CA")
    assert fake.calls


async def test_disable_mtls_accepts_clients_without_a_certificate(certs: Certs, tmp_path) -> None:
    server = await start_server(settings_for(certs, disable_mtls=True), FakeAllocate())
    try:
        response = await grpc_allocate(server.ports["mux"], certs, None, request())
        assert response.gameServerName == "gs-1"
        context = client_ssl(certs, None, tmp_path / "client")
        status, _ = await rest_post(server.ports["mux"], {"namespace": "default"}, context)
        assert status == 200
    finally:
        await server.shutdown()


async def test_disable_tls_serves_plaintext_on_one_port() -> None:
    server = await start_server(settings_for(None), FakeAllocate())
    try:
        port = server.ports["mux"]
        response = await grpc_allocate(port, None, None, request())
        assert response.gameServerName == "gs-1"
        status, answer = await rest_post(port, {"namespace": "default"}, None)
        assert (status, answer["gameServerName"]) == (200, "gs-2")
    finally:
        await server.shutdown()


async def test_separate_ports_serve_one_api_each(certs: Certs, tmp_path) -> None:
    settings = settings_for(certs, http_port=free_port(), grpc_port=free_port())
    server = await start_server(settings, FakeAllocate())
    try:
        assert set(server.ports) == {"http", "grpc"}
        assert set(server.listeners) == {"http", "grpc"}
        response = await grpc_allocate(server.ports["grpc"], certs, certs.client, request())
        assert response.gameServerName
        for stranger in (None, certs.stranger):
            with pytest.raises(grpc.aio.AioRpcError) as err:
                await grpc_allocate(server.ports["grpc"], certs, stranger, request())
            assert err.value.code() == grpc.StatusCode.UNAVAILABLE
        context = client_ssl(certs, certs.client, tmp_path / "client")
        status, _ = await rest_post(server.ports["http"], {"namespace": "default"}, context)
        assert status == 200
    finally:
        await server.shutdown()


async def test_rest_answers_protojson_with_every_field(mux, certs: Certs, tmp_path) -> None:
    server, _ = mux
    context = client_ssl(certs, certs.client, tmp_path / "client")
    status, answer = await rest_post(server.ports["mux"], {}, context)
    assert status == 200
    assert set(answer) >= {"gameServerName", "ports", "address", "nodeName", "source", "addresses"}
    assert answer["counters"] == {} and answer["lists"] == {}


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [("GET", "/gameserverallocation", 405), ("POST", "/nothing", 404)],
    ids=["wrong-verb", "unknown-path"],
)
async def test_rest_other_routes(mux, certs: Certs, tmp_path, method, path, status) -> None:
    server, _ = mux
    context = client_ssl(certs, certs.client, tmp_path / "client")
    async with (
        aiohttp.ClientSession() as session,
        session.request(
            method, f"https://127.0.0.1:{server.ports['mux']}{path}", ssl=context
        ) as response,
    ):
        assert response.status == status


async def _health(port: int, certs: Certs) -> int:
    async with grpc_channel(port, certs, certs.client) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        answer = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
        return int(answer.status)


async def _ready(server: AllocatorServer) -> int:
    async with (
        aiohttp.ClientSession() as session,
        session.get(f"http://127.0.0.1:{server.health_port}/ready") as response,
    ):
        return response.status


async def test_health_and_readiness(certs: Certs) -> None:
    reachable = {"ok": False}

    async def api_check() -> None:
        if not reachable["ok"]:
            raise ConnectionError("connection refused")

    server = await start_server(settings_for(certs), FakeAllocate(), api_check=api_check)
    try:
        assert await _health(server.ports["mux"], certs) == health_pb2.HealthCheckResponse.SERVING
        assert await _ready(server) == 503
        reachable["ok"] = True

        async def ready() -> bool:
            return await _ready(server) == 200

        await wait_for_async(ready, what="/ready after the API server answers")
    finally:
        await server.shutdown()


async def test_shutdown_fails_readiness_and_drains_in_flight_requests(certs: Certs) -> None:
    fake = FakeAllocate(gate=asyncio.Event())
    server = await start_server(settings_for(certs, readiness_shutdown_duration=0.2), fake)
    port = server.ports["mux"]
    calls = [
        asyncio.create_task(grpc_allocate(port, certs, certs.client, request())) for _ in range(5)
    ]
    await wait_for_async(lambda: len(fake.calls) == 5, what="five requests in flight")
    shutdown = asyncio.create_task(server.shutdown())
    await wait_for_async(lambda: server.shutting_down, what="shutdown to begin")
    assert await _ready(server) == 503
    fake.gate.set()
    answers = await asyncio.gather(*calls)
    await shutdown
    assert sorted(a.gameServerName for a in answers) == [f"gs-{i}" for i in range(1, 6)]
    with pytest.raises(grpc.aio.AioRpcError):
        await grpc_allocate(port, certs, certs.client, request())


async def test_rest_client_offering_h2_and_http11_reaches_rest(mux, certs: Certs, tmp_path) -> None:
    """curl offers ALPN h2 and http/1.1 on the shared port; it must get the REST handler."""
    server, _ = mux
    context = client_ssl(certs, certs.client, tmp_path / "client")
    context.set_alpn_protocols(["h2", "http/1.1"])
    status, answer = await rest_post(server.ports["mux"], {"namespace": "default"}, context)
    assert (status, answer["gameServerName"]) == (200, "gs-1")


async def test_mtls_without_a_client_ca_yet_starts_and_refuses(certs: Certs) -> None:
    """mTLS without a client CA refuses every client until one is added."""
    (certs.ca_dir / "client-ca.crt").unlink()
    server = await start_server(settings_for(certs), FakeAllocate())
    try:
        with pytest.raises(grpc.aio.AioRpcError):
            await grpc_allocate(server.ports["mux"], certs, certs.client, request())
        (certs.ca_dir / "client-ca.crt").write_bytes(certs.ca.cert_pem)

        async def allowed() -> bool:
            try:
                await grpc_allocate(server.ports["mux"], certs, certs.client, request())
            except grpc.aio.AioRpcError:
                return False
            return True

        await wait_for_async(allowed, timeout=10, what="the added client CA")
    finally:
        await server.shutdown()
