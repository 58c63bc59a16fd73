"""Wasm policy with a plugin the test assembles: served over HTTP, hash-checked, called by Extism."""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import AsyncIterator

import msgspec
import pytest
from aiohttp import web

from agones.apis.autoscaling.v1 import FleetAutoscalerPolicy
from agones.controllers.fleetautoscalers import (
    PolicyError,
    PolicyInputs,
    Scale,
    compute_desired_fleet_size,
)
from agones.controllers.fleetautoscalers.wasm import WasmPolicyRunner
from agones.controllers.fleetautoscalers.webhook import WebhookClient
from agones.featuregates import FeatureGates

from .fixtures import fleet
from .wasmplugin import build_plugin

pytest.importorskip("extism")
pytest.importorskip("wasmtime")

P = pytest.param


@pytest.fixture
async def served() -> AsyncIterator[tuple[str, bytes, list[str]]]:
    plugin = build_plugin(buffer=5)
    fetched: list[str] = []

    async def handle(request: web.Request) -> web.StreamResponse:
        fetched.append(request.path)
        if request.path == "/plugin.wasm":
            return web.Response(body=plugin)
        return web.Response(status=404)

    app = web.Application()
    app.router.add_get("/{name}", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield f"http://127.0.0.1:{port}", plugin, fetched
    await runner.cleanup()


def policy(base: str, **wasm: object) -> FleetAutoscalerPolicy:
    spec = {"from": {"url": {"url": f"{base}/plugin.wasm"}}, **wasm}
    return msgspec.convert({"type": "Wasm", "wasm": spec}, FleetAutoscalerPolicy)


async def test_wasm_policy(served: tuple[str, bytes, list[str]]) -> None:
    base, plugin, fetched = served
    client = WebhookClient()
    runner = WasmPolicyRunner(client)
    gates = FeatureGates.parse("WasmAutoscaler=true")

    async def size(p: FleetAutoscalerPolicy, replicas: int, allocated: int) -> Scale:
        inputs = PolicyInputs(
            fleet=fleet(replicas, allocated), gates=gates, now=dt.datetime.now(dt.UTC), wasm=runner
        )
        return (await compute_desired_fleet_size(p, inputs)).scale

    try:
        sha = hashlib.sha256(plugin).hexdigest()
        assert await size(policy(base, hash=sha, config={"buffer_size": "5"}), 10, 8) == Scale(13)
        assert await size(policy(base, hash=sha, config={"buffer_size": "5"}), 15, 10) == Scale(15)
        assert fetched == ["/plugin.wasm"]  # downloaded once, then cached
        assert await size(policy(base, function="scaleNone"), 10, 8) == Scale(10)
        bad = "0" * 64
        for p, message in [
            (policy(base, hash=bad), "hash mismatch for module"),
            (policy(base, function="nope"), "wasm function nope failed: Function not found: nope"),
            (
                msgspec.convert(
                    {"type": "Wasm", "wasm": {"from": {"url": {"url": f"{base}/missing.wasm"}}}},
                    FleetAutoscalerPolicy,
                ),
                "bad status code 404",
            ),
        ]:
            with pytest.raises(PolicyError, match=message):
                await size(p, 10, 8)
        with pytest.raises(PolicyError, match="cannot apply WasmPolicy unless"):
            await compute_desired_fleet_size(
                policy(base),
                PolicyInputs(
                    fleet=fleet(1), gates=FeatureGates(), now=dt.datetime.now(dt.UTC), wasm=runner
                ),
            )
    finally:
        runner.close()
        await client.close()


async def test_wasm_plugin_failure_is_a_policy_error(served: tuple[str, bytes, list[str]]) -> None:
    """A plugin whose function fails (here: no allocatedReplicas in its input) is a clear error."""
    base, _, _ = served
    client = WebhookClient()
    runner = WasmPolicyRunner(client)
    module = await runner._module(policy(base).wasm)  # type: ignore[arg-type]
    try:
        from agones.controllers.fleetautoscalers import wasm

        with pytest.raises(PolicyError, match="wasm function scale failed"):
            wasm._call(module.plugin, "scale", b'{"request": {}}')
    finally:
        runner.close()
        await client.close()
