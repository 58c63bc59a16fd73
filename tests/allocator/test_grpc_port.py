"""gRPC on a port of its own (`--grpc-port` != `--http-port`, Agones' `runGRPC`): a listener of its
own, with the same (m)TLS as the REST port, hot-reloaded; health and drain."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
import pytest
from cryptography import x509
from grpc_health.v1 import health_pb2

from agones.allocator.certs import write_pair
from agones.allocator.server import AllocatorServer
from agones.pki import Usage
from tests.allocator.harness import (
    HOSTS,
    Certs,
    FakeAllocate,
    free_port,
    grpc_allocate,
    make_certs,
    settings_for,
    start_server,
)
from tests.allocator.test_server import _health, _served_certificate, request
from tests.waiting import wait_for_async


@pytest.fixture
def certs(tmp_path) -> Certs:
    return make_certs(tmp_path)


@pytest.fixture
async def own_port(certs: Certs) -> AsyncIterator[AllocatorServer]:
    settings = settings_for(certs, http_port=free_port(), grpc_port=free_port())
    server = await start_server(settings, FakeAllocate())
    try:
        assert set(server.listeners) == {"http", "grpc"}
        yield server
    finally:
        await server.shutdown()


async def test_rotated_certificate_is_served_without_restart(
    own_port: AllocatorServer, certs: Certs
) -> None:
    port = own_port.ports["grpc"]
    old = x509.load_pem_x509_certificate(certs.server.cert_pem)
    assert x509.load_der_x509_certificate(await _served_certificate(port, certs, ["h2"])) == old
    rotated = certs.ca.issue("allocator-rotated", HOSTS, Usage.SERVER)
    write_pair(certs.tls_dir, rotated)
    new = x509.load_pem_x509_certificate(rotated.cert_pem)

    async def serving_new() -> bool:
        served = await _served_certificate(port, certs, ["h2"])
        return x509.load_der_x509_certificate(served) == new

    await wait_for_async(serving_new, timeout=10, what="the rotated certificate on the gRPC port")
    assert (await grpc_allocate(port, certs, certs.client, request())).gameServerName


async def test_added_client_ca_is_trusted_without_restart(
    own_port: AllocatorServer, certs: Certs
) -> None:
    port = own_port.ports["grpc"]
    with pytest.raises(grpc.aio.AioRpcError):
        await grpc_allocate(port, certs, certs.stranger, request())
    (certs.ca_dir / "other.pem").write_bytes(certs.other_ca.cert_pem)

    async def stranger_allowed() -> bool:
        try:
            await grpc_allocate(port, certs, certs.stranger, request())
        except grpc.aio.AioRpcError:
            return False
        return True

    await wait_for_async(stranger_allowed, timeout=10, what="the added client CA on the gRPC port")


async def test_health_serves_then_fails_on_shutdown(
    own_port: AllocatorServer, certs: Certs
) -> None:
    port = own_port.ports["grpc"]
    assert await _health(port, certs) == health_pb2.HealthCheckResponse.SERVING
    await own_port.grpc_health.enter_graceful_shutdown()
    assert await _health(port, certs) == health_pb2.HealthCheckResponse.NOT_SERVING


async def test_plaintext_when_tls_is_disabled() -> None:
    settings = settings_for(None, http_port=free_port(), grpc_port=free_port())
    server = await start_server(settings, FakeAllocate())
    try:
        assert set(server.listeners) == {"http", "grpc"}
        response = await grpc_allocate(server.ports["grpc"], None, None, request())
        assert response.gameServerName == "gs-1"
    finally:
        await server.shutdown()
