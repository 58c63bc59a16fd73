"""Webhook policy: URL building, answers, malformed answers (hypothesis), in-process policies."""

from __future__ import annotations

import asyncio
import base64
import datetime as dt
import json
import re
from collections.abc import AsyncIterator
from typing import Any

import msgspec
import pytest
from aiohttp import web
from hypothesis import given, settings
from hypothesis import strategies as st

from agones.apis.autoscaling.v1 import (
    FleetAutoscaleResponse,
    FleetAutoscaleReview,
    ServiceReference,
    URLConfiguration,
)
from agones.controllers.fleetautoscalers import (
    PolicyError,
    PolicyInputs,
    PolicyRegistry,
    Scale,
    inprocess,
    webhook,
)
from agones.controllers.fleetautoscalers.fleetautoscalers import apply_webhook_policy
from agones.featuregates import FeatureGates

from .fixtures import fleet

P = pytest.param


@pytest.mark.parametrize(
    ("config", "want"),
    [
        P(URLConfiguration(url="http://127.0.0.1:9/scale"), "http://127.0.0.1:9/scale", id="url"),
        P(
            URLConfiguration(
                service=ServiceReference(name="s1", namespace="default", path="scale")
            ),
            "http://s1.default.svc:8000/scale",
            id="service-path",
        ),
        P(
            URLConfiguration(
                service=ServiceReference(name="s1", namespace="default", path="/scale")
            ),
            "http://s1.default.svc:8000/scale",
            id="service-slash-path",
        ),
        P(
            URLConfiguration(service=ServiceReference(name="s1", namespace="", port=8888)),
            "http://s1.default.svc:8888",
            id="service-default-namespace-port",
        ),
    ],
)
def test_build_url(config: URLConfiguration, want: str) -> None:
    assert webhook.build_url_from_webhook_policy(config).url == want


@pytest.mark.parametrize(
    ("config", "message"),
    [
        P(None, "webhookPolicy parameter must not be nil", id="nil"),
        P(
            URLConfiguration(url="http://x", service=ServiceReference(name="s")),
            "service and URL cannot be used simultaneously",
            id="both",
        ),
        P(URLConfiguration(url=""), "URL was not provided", id="empty-url"),
        P(
            URLConfiguration(url=")1golang.org/"),
            'parse ")1golang.org/": invalid URI for request',
            id="bad-url",
        ),
        P(
            URLConfiguration(service=ServiceReference(name="", namespace="default")),
            "service name was not provided",
            id="no-service-name",
        ),
        P(
            URLConfiguration(),
            "service was not provided, either URL or Service must be provided",
            id="neither",
        ),
        P(
            URLConfiguration(
                service=ServiceReference(name="s"),
                ca_bundle=base64.b64encode(b"invalid-value").decode(),
            ),
            "no certs were appended from caBundle",
            id="bad-ca",
        ),
    ],
)
def test_build_url_errors(config: URLConfiguration | None, message: str) -> None:
    with pytest.raises(PolicyError) as err:
        webhook.build_url_from_webhook_policy(config)
    assert str(err.value) == message


F = fleet(50, 40)


@pytest.mark.parametrize(
    ("body", "want"),
    [
        P({"response": {"scale": True, "replicas": 100}}, Scale(100), id="scale"),
        P({"response": {"scale": False, "replicas": 100}}, Scale(50), id="no-scale-keeps-status"),
        P({"response": {"scale": True, "replicas": 0}}, Scale(0), id="to-zero"),
        P(
            {"request": None, "response": {"uid": "u", "scale": True, "replicas": 7}},
            Scale(7),
            id="full-review",
        ),
    ],
)
def test_scale_from_response(body: dict[str, Any], want: Scale) -> None:
    assert webhook.scale_from_response(json.dumps(body).encode(), F) == want


@pytest.mark.parametrize(
    ("body", "message"),
    [
        P(b"invalid data", "invalid FleetAutoscaleReview from the webhook", id="not-json"),
        P(b"{}", "has no response", id="no-response"),
        P(b'{"response": null}', "has no response", id="null-response"),
        P(b'{"response": {"scale": "yes"}}', "Expected `bool`", id="wrong-type"),
        P(
            b'{"response": {"scale": true, "replicas": 2147483648}}',
            "outside [0, 2147483647]",
            id="int32-overflow",
        ),
        P(b'{"response": {"scale": true, "replicas": -1}}', "outside", id="negative"),
        P(b'{"response": {"scale": true, "replicas": 1.5}}', "Expected `int`", id="float"),
        P(b"[]", "Expected `object`", id="array"),
    ],
)
def test_malformed_responses(body: bytes, message: str) -> None:
    with pytest.raises(PolicyError) as err:
        webhook.scale_from_response(body, F)
    assert message in str(err.value)
    assert "\n" not in str(err.value)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
responses = st.fixed_dictionaries(
    {},
    optional={
        "scale": json_values | st.booleans(),
        "replicas": json_values | st.integers(min_value=-(2**70), max_value=2**70),
        "uid": json_values,
    },
)
bodies = st.one_of(
    st.binary(max_size=64),
    json_values.map(lambda v: json.dumps(v).encode()),
    responses.map(lambda r: json.dumps({"response": r}).encode()),
    st.dictionaries(st.sampled_from(["request", "response"]), json_values).map(
        lambda d: json.dumps(d).encode()
    ),
)


@settings(max_examples=400, deadline=None)
@given(bodies)
def test_any_answer_is_a_size_or_a_clear_error(body: bytes) -> None:
    try:
        scale = webhook.scale_from_response(body, F)
    except PolicyError as err:
        assert str(err) and "\n" not in str(err)
    else:
        assert 0 <= scale.replicas <= 2**31 - 1


# -- over HTTP ---------------------------------------------------------------------------------


@pytest.fixture
async def server() -> AsyncIterator[tuple[str, list[Any]]]:
    answers: list[Any] = []
    seen: list[Any] = []

    async def handle(request: web.Request) -> web.StreamResponse:
        seen.append(await request.json())
        answer = answers.pop(0)
        if isinstance(answer, int):
            return web.Response(status=answer, text="nope")
        return web.Response(body=answer, content_type="application/json")

    app = web.Application()
    app.router.add_post("/scale", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield f"http://127.0.0.1:{port}/scale", [answers, seen]
    await runner.cleanup()


def _inputs(
    client: webhook.WebhookClient | None = None, registry: PolicyRegistry | None = None
) -> PolicyInputs:
    return PolicyInputs(
        fleet=F,
        gates=FeatureGates(),
        now=dt.datetime.now(dt.UTC),
        webhook_client=client,
        registry=registry or PolicyRegistry(group="agones-tests.none"),
        new_uid=lambda: "uid-1",
    )


async def test_webhook_over_http(server: tuple[str, list[Any]]) -> None:
    url, (answers, seen) = server
    client = webhook.WebhookClient()
    try:
        answers.append(
            json.dumps({"response": {"uid": "uid-1", "scale": True, "replicas": 80}}).encode()
        )
        assert await apply_webhook_policy(URLConfiguration(url=url), _inputs(client)) == Scale(80)
        assert seen[0]["request"]["uid"] == "uid-1"
        assert seen[0]["request"]["status"]["allocatedReplicas"] == 40
        assert seen[0]["response"] is None
        answers.append(500)
        with pytest.raises(
            PolicyError, match=re.escape(f"bad status code 500 from the server: {url}")
        ):
            await apply_webhook_policy(URLConfiguration(url=url), _inputs(client))
        answers.append(b"invalid data")
        with pytest.raises(PolicyError, match="invalid FleetAutoscaleReview"):
            await apply_webhook_policy(URLConfiguration(url=url), _inputs(client))
        with pytest.raises(PolicyError, match=re.escape('Post "http://127.0.0.1:1/"')):
            await apply_webhook_policy(URLConfiguration(url="http://127.0.0.1:1/"), _inputs(client))
    finally:
        await client.close()


async def test_webhook_timeout() -> None:
    release = asyncio.Event()

    async def slow(request: web.Request) -> web.StreamResponse:
        await release.wait()
        return web.Response(text="{}")

    app = web.Application()
    app.router.add_post("/", slow)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    client = webhook.WebhookClient(timeout=0.2)
    try:
        with pytest.raises(PolicyError, match=r"no answer within 0\.2s"):
            await apply_webhook_policy(
                URLConfiguration(url=f"http://127.0.0.1:{port}/"), _inputs(client)
            )
    finally:
        release.set()
        await client.close()
        await runner.cleanup()


# -- in-process ----------------------------------------------------------------------------------


async def test_in_process_policies() -> None:
    registry = PolicyRegistry(group="agones-tests.none")
    calls: list[FleetAutoscaleReview] = []

    def double(review: FleetAutoscaleReview) -> FleetAutoscaleReview:
        calls.append(review)
        assert review.request and review.request.status
        status = review.request.status
        return FleetAutoscaleReview(
            response=FleetAutoscaleResponse(
                uid=review.request.uid, scale=True, replicas=status.replicas * 2
            )  # type: ignore[operator]
        )

    async def as_dict(review: FleetAutoscaleReview) -> dict[str, Any]:
        return {"response": {"scale": True, "replicas": 3}}

    registry.register("double", double)
    registry.register("dict", as_dict)
    registry.register("response-only", lambda r: FleetAutoscaleResponse(scale=False))
    registry.register("wrong", lambda r: 42)
    registry.register("raises", lambda r: 1 / 0)
    registry.register("bad-dict", lambda r: {"response": {"replicas": "x"}})

    def run(name: str) -> Any:
        return apply_webhook_policy(
            URLConfiguration(url=f"python:{name}"), _inputs(registry=registry)
        )

    assert await run("double") == Scale(100)
    assert calls[0].request.name == "f"  # type: ignore[union-attr]
    assert await run("dict") == Scale(3)
    assert await run("response-only") == Scale(50)
    for name, message in [
        ("wrong", "returned int"),
        ("raises", "failed: ZeroDivisionError"),
        ("bad-dict", "returned an invalid review"),
        ("unknown", "python policy 'unknown' is not registered"),
    ]:
        with pytest.raises(PolicyError, match=message):
            await run(name)
    with pytest.raises(ValueError, match="invalid policy name"):
        registry.register("bad name", double)


async def test_in_process_policy_timeout() -> None:
    registry = PolicyRegistry(group="agones-tests.none")

    async def never(review: FleetAutoscaleReview) -> FleetAutoscaleReview:
        await asyncio.Event().wait()
        raise AssertionError

    registry.register("never", never)
    with pytest.raises(PolicyError, match=r"gave no answer within 0\.1s"):
        await inprocess.call_policy(registry, "never", FleetAutoscaleReview(), 0.1)


def test_policy_name() -> None:
    assert inprocess.policy_name("python:my-policy") == "my-policy"
    assert inprocess.policy_name("http://x/") is None
    assert inprocess.policy_name(None) is None
    assert msgspec.json.decode(
        webhook.encode_review(FleetAutoscaleReview(request=None, response=None))
    ) == {"request": None, "response": None}


class _ThreadedWebhook:
    """A webhook server on its own thread and loop that answers with whatever `body` holds."""

    def __init__(self) -> None:
        import threading

        self.body = b"{}"
        self.status = 200
        self._ready = threading.Event()
        self._loop = asyncio.new_event_loop()
        self.url = ""
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        self._ready.wait(10)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)

        async def handle(request: web.Request) -> web.Response:
            await request.read()
            return web.Response(status=self.status, body=self.body)

        async def start() -> None:
            app = web.Application()
            app.router.add_post("/", handle)
            self._runner = web.AppRunner(app)
            await self._runner.setup()
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            await site.start()
            port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
            self.url = f"http://127.0.0.1:{port}/"
            self._ready.set()

        self._loop.run_until_complete(start())
        self._loop.run_forever()

    def stop(self) -> None:
        async def cleanup() -> None:
            await self._runner.cleanup()

        asyncio.run_coroutine_threadsafe(cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


@pytest.fixture(scope="module")
def threaded_webhook() -> Any:
    server = _ThreadedWebhook()
    yield server
    server.stop()


@settings(max_examples=150, deadline=None)
@given(bodies, st.sampled_from([200, 200, 200, 201, 404, 500]))
def test_webhook_policy_over_http_never_crashes(
    threaded_webhook: _ThreadedWebhook, body: bytes, status: int
) -> None:
    threaded_webhook.body, threaded_webhook.status = body, status

    async def ask() -> Scale:
        client = webhook.WebhookClient(timeout=5)
        try:
            return await apply_webhook_policy(
                URLConfiguration(url=threaded_webhook.url), _inputs(client)
            )
        finally:
            await client.close()

    try:
        scale = asyncio.run(ask())
    except PolicyError as err:
        assert str(err) and "\n" not in str(err)
        if status != 200:
            assert f"bad status code {status}" in str(err)
    else:
        assert status == 200
        assert 0 <= scale.replicas <= 2**31 - 1
