"""Agones' conformance sequences against our test-mode server: Python SDK (gRPC) and plain REST.

The server records request names; `close()` compares them with the expected set as Agones' test
mode does. Each sequence must pass, and leaving out one call must make the comparison fail.
"""

from __future__ import annotations

import pytest

from agones.featuregates import FeatureGates
from agones.sdk import AsyncSDK
from tests.sdk.sequences import alpha_sequence, default_sequence, rest_players, rest_sequence
from tests.sdkserver.harness import (
    ALPHA_CONFORMANCE,
    COUNTS_AND_LISTS,
    DEFAULT_CONFORMANCE,
    running_local,
)

DEFAULT_AND_CL = f"{DEFAULT_CONFORMANCE},{COUNTS_AND_LISTS}"


async def test_python_sdk_passes_default_and_counts_and_lists() -> None:
    async with running_local(expected=DEFAULT_AND_CL) as srv:
        sdk = AsyncSDK("127.0.0.1", srv.grpc_port)
        await sdk.connect(5)
        await default_sequence(sdk)
        assert srv.backend.compare(), srv.backend.requests


@pytest.mark.parametrize("skip", ["reserve", "health", "setannotation", "watch"])
async def test_skipping_one_call_fails_the_run(skip: str) -> None:
    async with running_local(expected=DEFAULT_AND_CL) as srv:
        sdk = AsyncSDK("127.0.0.1", srv.grpc_port)
        await sdk.connect(5)
        await default_sequence(sdk, skip=skip)
        assert skip not in srv.backend.requests
        assert not srv.backend.compare()


async def test_python_sdk_passes_alpha_player_tracking_with_the_gate() -> None:
    gates = FeatureGates().with_values(PlayerTracking=True)
    async with running_local(gates, expected=f"{DEFAULT_CONFORMANCE},{ALPHA_CONFORMANCE}") as srv:
        sdk = AsyncSDK("127.0.0.1", srv.grpc_port)
        await sdk.connect(5)
        await alpha_sequence(sdk)
        await default_sequence(sdk, counts_and_lists=False)
        assert srv.backend.compare(), srv.backend.requests


async def test_rest_gateway_passes_default_and_counts_and_lists() -> None:
    async with running_local(expected=DEFAULT_AND_CL) as srv:
        await rest_sequence(srv.base_url)
        assert srv.backend.compare(), srv.backend.requests


async def test_rest_sequence_without_ready_fails() -> None:
    async with running_local(expected=DEFAULT_AND_CL) as srv:
        await rest_sequence(srv.base_url, skip="ready")
        assert not srv.backend.compare()


async def test_rest_gateway_passes_alpha_player_tracking_with_the_gate() -> None:
    gates = FeatureGates().with_values(PlayerTracking=True)
    expected = f"{DEFAULT_CONFORMANCE},{ALPHA_CONFORMANCE},{COUNTS_AND_LISTS}"
    async with running_local(gates, expected=expected) as srv:
        await rest_players(srv.base_url)
        await rest_sequence(srv.base_url)
        assert srv.backend.compare(), srv.backend.requests
