"""The Python SDK: address from the environment, error wrapping, the blocking wrapper."""

from __future__ import annotations

import asyncio
import threading

import grpc
import pytest

from agones.sdk import SDK, AsyncSDK, SDKError, sidecar_address
from tests.sdkserver.harness import free_port, running_local


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        pytest.param({}, "localhost:9357", id="defaults"),
        pytest.param({"AGONES_SDK_GRPC_PORT": "9001"}, "localhost:9001", id="port"),
        pytest.param(
            {"AGONES_SDK_GRPC_HOST": "10.0.0.1", "AGONES_SDK_GRPC_PORT": "9"},
            "10.0.0.1:9",
            id="host-and-port",
        ),
    ],
)
def test_sidecar_address_from_env(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], expected: str
) -> None:
    monkeypatch.delenv("AGONES_SDK_GRPC_HOST", raising=False)
    monkeypatch.delenv("AGONES_SDK_GRPC_PORT", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert sidecar_address() == expected


async def test_errors_carry_code_and_read_like_go() -> None:
    async with running_local() as srv:
        sdk = AsyncSDK("127.0.0.1", srv.grpc_port)
        await sdk.connect(5)
        with pytest.raises(SDKError) as err:
            await sdk.beta.get_counter_count("nope")
        assert err.value.code == grpc.StatusCode.UNKNOWN
        assert str(err.value) == (
            "could not get Counter nope count: rpc error: code = Unknown "
            "desc = not found. nope Counter not found"
        )
        with pytest.raises(SDKError, match="amount must be a positive int64, found -1"):
            await sdk.beta.increment_counter("rooms", -1)
        await sdk.close()


async def test_connect_times_out_without_a_sidecar() -> None:
    sdk = AsyncSDK("127.0.0.1", free_port())
    with pytest.raises(SDKError, match="could not connect"):
        await sdk.connect(0.3)
    await sdk.close()


async def test_watch_and_health_over_grpc() -> None:
    async with running_local(expected="") as srv:
        sdk = AsyncSDK("127.0.0.1", srv.grpc_port)
        await sdk.connect(5)
        stream = sdk.watch()
        assert (await anext(stream)).status.state == "Ready"
        await sdk.reserve(0)
        assert (await asyncio.wait_for(anext(stream), 5)).status.state == "Reserved"
        await stream.aclose()
        for _ in range(3):
            await sdk.health()
        await sdk.close()
        for _ in range(100):
            if srv.backend.requests.count("health") == 3:
                break
            await asyncio.sleep(0.02)
        assert srv.backend.requests.count("health") == 3


async def test_close_ends_background_watches() -> None:
    async with running_local(expected="") as srv:
        sdk = AsyncSDK("127.0.0.1", srv.grpc_port)
        await sdk.connect(5)
        seen = asyncio.Event()
        task = await sdk.watch_game_server(lambda gs: seen.set())
        await asyncio.wait_for(seen.wait(), 5)
        await sdk.close()
        assert task.cancelled()


async def test_blocking_wrapper_covers_core_alpha_and_beta() -> None:
    async with running_local() as srv:

        def use() -> tuple[str, int, list[str]]:
            updates: list[str] = []
            seen = threading.Event()

            def on_update(gs: object) -> None:
                updates.append(gs.status.state)  # type: ignore[attr-defined]
                if len(updates) >= 2:
                    seen.set()

            with SDK("127.0.0.1", srv.grpc_port, connect_timeout=5) as sdk:
                sdk.watch_game_server(on_update)
                sdk.allocate()
                sdk.health()
                sdk.set_label("k", "v")
                sdk.beta.increment_counter("rooms", 2)
                count = sdk.beta.get_counter_count("rooms")
                name = sdk.game_server().object_meta.name
                assert seen.wait(5)
            return name, count, updates

        name, count, updates = await asyncio.to_thread(use)
        assert (name, count) == ("local", 3)
        assert updates[:2] == ["Ready", "Allocated"]
        assert srv.backend.gs.object_meta.labels["agones.dev/sdk-k"] == "v"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("soon", 'time: invalid duration "soon"', id="no-number"),
        pytest.param("5", 'time: missing unit in duration "5"', id="no-unit"),
        pytest.param("1x", 'time: unknown unit "x" in duration "1x"', id="unknown-unit"),
    ],
)
def test_go_durations_are_refused_with_go_messages(text: str, message: str) -> None:
    from agones.sdk.duration import parse_go_duration

    assert parse_go_duration("1m30s") == 90.0
    with pytest.raises(ValueError) as err:
        parse_go_duration(text)
    assert str(err.value) == message
