"""The FleetAutoscaler controller against the cluster, over real HTTP: every policy scales a Fleet.

See conftest.py: the test writes Fleet status as the Fleet controller would; the fake clock drives
sync ticks and Schedule windows.
"""

from __future__ import annotations

import base64
import datetime as dt
import hashlib
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from agones.apis.autoscaling.v1 import FleetAutoscaleResponse, FleetAutoscaleReview
from agones.client.versioned.resources import FLEET_AUTOSCALERS, FLEETS
from agones.extensions.certs import self_signed, server_ssl_context

from .conftest import START, Env

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(120)]

BUFFER_9 = {"type": "Buffer", "buffer": {"bufferSize": 9, "minReplicas": 9, "maxReplicas": 30}}


def iso(seconds: float) -> str:
    return dt.datetime.fromtimestamp(seconds, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


async def test_buffer_policy_scales_the_fleet_and_reports_status(env: Env) -> None:
    await env.create_fleet("f", 2, {"replicas": 2, "readyReplicas": 2, "allocatedReplicas": 0})
    await env.create_fas("fas", "f", BUFFER_9, seconds=30)
    await env.eventually(lambda: _equals(env.replicas("f"), 9), "fleet scaled to 9")
    status = await env.eventually(lambda: env.fas_status("fas"), "status written")
    assert status["ableToScale"] is True
    assert status["scalingLimited"] is False
    assert status["currentReplicas"] == 2
    assert status["desiredReplicas"] == 9
    assert status["lastAppliedPolicy"] == "Buffer"
    assert status["lastScaleTime"] == iso(env.clock.now())[:14] + status["lastScaleTime"][14:]
    await env.eventually(
        lambda: _contains(
            env.event_messages("fas", "AutoScalingFleet"), "Scaling fleet f from 2 to 9"
        ),
        "AutoScalingFleet event",
    )
    assert (
        env.gauge("agones_fleet_autoscalers_desired_replicas_count", name="fas", fleet_name="f")
        == 9
    )
    assert (
        env.gauge("agones_fleet_autoscalers_buffer_limits", name="fas", fleet_name="f", type="max")
        == 30
    )
    assert (
        env.gauge("agones_fleet_autoscalers_buffer_size", name="fas", fleet_name="f", type="count")
        == 9
    )

    # 27 allocated: the buffer wants 36, the policy caps at 30 (next tick, 30 s later). Agones says
    # "maximum" only when the Fleet is above the cap, so the Fleet here has 35.
    await env.set_fleet_status("f", {"replicas": 35, "readyReplicas": 8, "allocatedReplicas": 27})
    await env.eventually(lambda: _equals(env.replicas("f"), 30), "capped at 30", step=5)
    status = await env.eventually(
        lambda: _where(env.fas_status("fas"), "scalingLimited", True), "scalingLimited", step=5
    )
    assert status["desiredReplicas"] == 30
    await env.eventually(
        lambda: _contains(
            env.event_messages("fas", "ScalingLimited"),
            "Scaling fleet f was limited to maximum size of 30",
        ),
        "ScalingLimited event",
    )
    assert env.gauge("agones_fleet_autoscalers_limited", name="fas", fleet_name="f") == 1


async def test_missing_fleet_cannot_scale(env: Env) -> None:
    await env.create_fleet("m", 1, {"replicas": 1, "readyReplicas": 1})
    await env.create_fas("lonely", "m", BUFFER_9, seconds=30)
    status = await env.eventually(
        lambda: _where(env.fas_status("lonely"), "ableToScale", True), "able"
    )
    await env.rest.delete(FLEETS, "m", env.namespace)
    # The next tick (30 s of fake time later) finds no Fleet.
    status = await env.eventually(
        lambda: _where(env.fas_status("lonely"), "ableToScale", False), "unable", step=5
    )
    assert status["desiredReplicas"] == 0
    assert status["lastAppliedPolicy"] == ""
    await env.eventually(
        lambda: _contains(
            env.event_messages("lonely", "FailedGetFleet"), "could not fetch fleet: m"
        ),
        "FailedGetFleet event",
    )
    assert env.gauge("agones_fleet_autoscalers_able_to_scale", name="lonely", fleet_name="m") == 0


async def test_generation_change_replaces_the_sync_thread(env: Env) -> None:
    await env.create_fleet("g", 1, {"replicas": 1, "readyReplicas": 1})
    fas = await env.create_fas("gen", "g", BUFFER_9, seconds=3600)
    await env.eventually(lambda: _equals(env.replicas("g"), 9), "first sync")
    fas = await env.rest.get(FLEET_AUTOSCALERS, "gen", env.namespace)
    fas["spec"]["policy"]["buffer"]["minReplicas"] = 12
    fas["spec"]["policy"]["buffer"]["bufferSize"] = 12
    await env.rest.update(FLEET_AUTOSCALERS, fas, env.namespace)
    # A sync interval of an hour: only the replaced thread's immediate enqueue can do this.
    await env.eventually(
        lambda: _equals(env.replicas("g"), 12), "new generation applied", step=0.05
    )
    assert env.controller.thread_count() == 1
    await env.rest.delete(FLEET_AUTOSCALERS, "gen", env.namespace)
    await env.eventually(lambda: _true(env.controller.thread_count() == 0), "thread stopped")


@pytest.fixture
async def webhooks() -> AsyncIterator[dict[str, Any]]:
    """An HTTP and an HTTPS autoscaler webhook: replicas = twice the allocated (scale if any)."""
    seen: list[dict[str, Any]] = []

    async def handle(request: web.Request) -> web.Response:
        review = await request.json()
        seen.append(review)
        status = review["request"]["status"]
        allocated = status["allocatedReplicas"]
        response = {
            "uid": review["request"]["uid"],
            "scale": allocated > 0,
            "replicas": allocated * 2,
        }
        return web.json_response({"request": review["request"], "response": response})

    app = web.Application()
    app.router.add_post("/scale", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    cert, key = self_signed(["127.0.0.1"])
    plain = web.TCPSite(runner, "127.0.0.1", 0)
    secure = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=server_ssl_context(cert, key))
    await plain.start()
    await secure.start()

    def port(site: web.TCPSite) -> int:
        return int(site._server.sockets[0].getsockname()[1])  # type: ignore[union-attr]

    yield {
        "http": f"http://127.0.0.1:{port(plain)}/scale",
        "https": f"https://127.0.0.1:{port(secure)}/scale",
        "ca": base64.b64encode(cert).decode(),
        "seen": seen,
    }
    await runner.cleanup()


async def test_webhook_policy_over_http_and_https(env: Env, webhooks: dict[str, Any]) -> None:
    await env.create_fleet("w", 4, {"replicas": 4, "readyReplicas": 1, "allocatedReplicas": 3})
    await env.create_fas("http", "w", {"type": "Webhook", "webhook": {"url": webhooks["http"]}})
    await env.eventually(lambda: _equals(env.replicas("w"), 6), "scaled by the HTTP webhook")
    assert webhooks["seen"][0]["request"]["name"] == "w"
    assert webhooks["seen"][0]["request"]["namespace"] == env.namespace
    await env.eventually(
        lambda: _where(env.fas_status("http"), "lastAppliedPolicy", "Webhook"),
        "status written",
    )

    await env.create_fleet("s", 4, {"replicas": 4, "readyReplicas": 0, "allocatedReplicas": 4})
    policy = {"type": "Webhook", "webhook": {"url": webhooks["https"], "caBundle": webhooks["ca"]}}
    await env.create_fas("https", "s", policy)
    await env.eventually(lambda: _equals(env.replicas("s"), 8), "scaled by the HTTPS webhook")

    # A CA bundle that does not sign the server's certificate: a clear error, no scaling.
    other_ca = base64.b64encode(self_signed(["example.invalid"])[0]).decode()
    await env.create_fleet("t", 4, {"replicas": 4, "allocatedReplicas": 4})
    await env.create_fas(
        "untrusted",
        "t",
        {"type": "Webhook", "webhook": {"url": webhooks["https"], "caBundle": other_ca}},
    )
    messages = await env.eventually(
        lambda: env.event_messages("untrusted", "FleetAutoscaler"), "error event"
    )
    assert "CERTIFICATE_VERIFY_FAILED" in messages[0] or "certificate" in messages[0].lower()
    assert (await env.fas_status("untrusted")).get("ableToScale", False) is False
    assert await env.replicas("t") == 4


COUNTER_TEMPLATE = {"counters": {"rooms": {"count": 0, "capacity": 10}}}
LIST_TEMPLATE = {"lists": {"players": {"capacity": 5, "values": []}}}


async def test_counter_and_list_policies(env: Env) -> None:
    await env.create_fleet(
        "rooms",
        3,
        {"replicas": 3, "readyReplicas": 3, "counters": {"rooms": {"count": 25, "capacity": 30}}},
        COUNTER_TEMPLATE,
    )
    await env.create_fas(
        "rooms",
        "rooms",
        {"type": "Counter", "counter": {"key": "rooms", "bufferSize": 10, "maxCapacity": 100}},
    )
    await env.eventually(lambda: _equals(env.replicas("rooms"), 4), "Counter scale-up")

    await env.create_fleet(
        "players",
        2,
        {"replicas": 2, "readyReplicas": 2, "lists": {"players": {"count": 3, "capacity": 10}}},
        LIST_TEMPLATE,
    )
    await env.create_fas(
        "players",
        "players",
        {
            "type": "List",
            "list": {"key": "players", "bufferSize": 1, "minCapacity": 22, "maxCapacity": 100},
        },
    )
    await env.eventually(lambda: _equals(env.replicas("players"), 5), "List below min")
    status = await env.eventually(lambda: env.fas_status("players"), "status")
    assert status["scalingLimited"] is True
    assert status["lastAppliedPolicy"] == "List"


async def test_schedule_becomes_active(env: Env) -> None:
    await env.create_fleet("sched", 2, {"replicas": 2, "readyReplicas": 2})
    start = START + 120
    policy = {
        "type": "Schedule",
        "schedule": {"between": {"start": iso(start)}, "policy": BUFFER_9},
    }
    await env.create_fas("sched", "sched", policy, seconds=60)
    await env.eventually(lambda: _true(len(env.syncs) > 0), "first sync", step=0.05)
    assert await env.replicas("sched") == 2
    assert await env.fas_status("sched") == {}
    assert env.clock.now() < start
    await env.eventually(lambda: _equals(env.replicas("sched"), 9), "active after start", step=5)
    assert env.clock.now() >= start
    await env.eventually(
        lambda: _where(env.fas_status("sched"), "lastAppliedPolicy", "Schedule"),
        "status written",
    )


async def test_chain_falls_through_to_buffer(env: Env) -> None:
    await env.create_fleet("chain", 2, {"replicas": 2, "readyReplicas": 2})
    chain = [
        {
            "id": "later",
            "type": "Schedule",
            "schedule": {"between": {"start": "2099-01-01T00:00:00Z"}, "policy": BUFFER_9},
        },
        {"id": "hook", "type": "Webhook", "webhook": {"url": "python:not-registered"}},
        {"id": "default", **BUFFER_9},
    ]
    await env.create_fas("chain", "chain", {"type": "Chain", "chain": chain})
    await env.eventually(lambda: _equals(env.replicas("chain"), 9), "chain fell through")
    status = await env.eventually(lambda: env.fas_status("chain"), "status")
    assert status["lastAppliedPolicy"] == "Chain:default:Buffer"
    await env.eventually(
        lambda: _contains(
            env.event_messages("chain", "ChainPolicy"),
            "FleetAutoscaler 'chain' successfully applied ChainPolicy | ID: default | Type: Buffer",
        ),
        "ChainPolicy event",
    )


async def test_in_process_python_policy(env: Env) -> None:
    def half_again(review: FleetAutoscaleReview) -> FleetAutoscaleResponse:
        status = review.request.status  # type: ignore[union-attr]
        allocated = status.allocated_replicas or 0  # type: ignore[union-attr]
        return FleetAutoscaleResponse(scale=True, replicas=allocated + allocated // 2 + 1)

    env.policies.register("half-again", half_again)
    await env.create_fleet("py", 10, {"replicas": 10, "readyReplicas": 0, "allocatedReplicas": 10})
    await env.create_fas("py", "py", {"type": "Webhook", "webhook": {"url": "python:half-again"}})
    await env.eventually(lambda: _equals(env.replicas("py"), 16), "scaled by the Python policy")
    await env.eventually(
        lambda: _where(env.fas_status("py"), "lastAppliedPolicy", "Webhook"),
        "status written",
    )


async def _equals(value: Any, want: Any) -> bool:
    return bool(await value == want)


async def _contains(messages: Any, want: str) -> bool:
    return want in await messages


async def _where(status: Any, key: str, want: Any) -> Any:
    got = await status
    return got if got.get(key) == want else None


async def _true(value: bool) -> bool:
    return value


@pytest.mark.gates("WasmAutoscaler=true")
async def test_wasm_policy(env: Env) -> None:
    pytest.importorskip("extism")
    pytest.importorskip("wasmtime")
    from tests.unit.controllers.fleetautoscalers.wasmplugin import build_plugin

    plugin = build_plugin(buffer=5)

    async def serve(request: web.Request) -> web.Response:
        return web.Response(body=plugin)

    app = web.Application()
    app.router.add_get("/plugin.wasm", serve)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        await env.create_fleet(
            "wasm", 10, {"replicas": 10, "readyReplicas": 2, "allocatedReplicas": 8}
        )
        policy = {
            "type": "Wasm",
            "wasm": {
                "from": {"url": {"url": f"http://127.0.0.1:{port}/plugin.wasm"}},
                "hash": hashlib.sha256(plugin).hexdigest(),
                "config": {"buffer_size": "5"},
            },
        }
        await env.create_fas("wasm", "wasm", policy)
        await env.eventually(lambda: _equals(env.replicas("wasm"), 13), "scaled by the Wasm module")
        await env.eventually(
            lambda: _where(env.fas_status("wasm"), "lastAppliedPolicy", "Wasm"),
            "status written",
        )
    finally:
        await runner.cleanup()
