"""The allocator's server on uvloop, the loop `agones allocator` runs on: the listener's accept,
peek, TLS and relay paths of `test_server`, on uvloop's transports."""

from __future__ import annotations

import asyncio

import uvloop

from tests.allocator.test_server import (  # noqa: F401 (collected again, on uvloop)
    certs,
    mux,
    test_added_client_ca_is_trusted_without_restart,
    test_disable_tls_serves_plaintext_on_one_port,
    test_grpc_refuses_clients_without_a_trusted_certificate,
    test_rest_client_offering_h2_and_http11_reaches_rest,
    test_rest_refuses_clients_without_a_trusted_certificate,
    test_rest_with_valid_client_certificate_allocates,
    test_rotated_server_certificate_is_served_without_restart,
    test_separate_ports_serve_one_api_each,
    test_shutdown_fails_readiness_and_drains_in_flight_requests,
)


async def test_runs_on_uvloop() -> None:
    assert isinstance(asyncio.get_running_loop(), uvloop.Loop)
