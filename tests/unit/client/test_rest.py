"""RESTClient against a tiny in-test aiohttp server: verbs, params, watch lines, typed errors."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from hypothesis import given, settings
from hypothesis import strategies as st
from yarl import URL

from agones.client import errors
from agones.client.config import Config
from agones.client.rest import RESTClient
from agones.client.versioned.resources import GAME_SERVERS as GS
from agones.client.versioned.resources import NODES
from agones.clock import FakeClock
from tests.status import failure_status
from tests.waiting import wait_for_async


class Recorder:
    def __init__(self) -> None:
        self.requests: list[tuple[str, str, dict[str, str], dict[str, str], Any]] = []
        self.fail_429 = 0


def status(code: int, reason: str, message: str) -> web.Response:
    return web.json_response(failure_status(code, reason, message), status=code)


def make_app(rec: Recorder) -> web.Application:
    async def handle(request: web.Request) -> web.StreamResponse:
        body = None
        if request.can_read_body:
            body = json.loads(await request.read())
        rec.requests.append(
            (request.method, request.path, dict(request.query), dict(request.headers), body)
        )
        name = request.match_info.get("name", "")
        if request.query.get("watch") == "true":
            resp = web.StreamResponse()
            resp.content_type = "application/json"
            await resp.prepare(request)
            big = {"type": "ADDED", "object": {"metadata": {"name": "big"}, "data": "x" * 200_000}}
            for event in (
                big,
                {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "9"}}},
            ):
                line = json.dumps(event).encode() + b"\n"
                await resp.write(line[:10])  # split across chunks
                await resp.write(line[10:])
            return resp
        if name == "missing":
            return status(404, "NotFound", 'gameservers "missing" not found')
        if name == "conflict":
            return status(409, "Conflict", "the object has been modified")
        if name == "exists":
            return status(409, "AlreadyExists", "already exists")
        if name == "expired":
            return status(410, "Expired", "too old resource version")
        if name == "busy":
            if rec.fail_429 > 0:
                rec.fail_429 -= 1
                resp = status(429, "TooManyRequests", "slow down")
                resp.headers["Retry-After"] = "2"
                return resp
            return web.json_response({"metadata": {"name": "busy"}})
        if name == "plain500":
            return web.Response(status=500, text="oops")
        if request.method == "GET" and not name:
            return web.json_response(
                {
                    "kind": "GameServerList",
                    "metadata": {"resourceVersion": "5"},
                    "items": [{"metadata": {"name": "a"}}],
                }
            )
        return web.json_response({"metadata": {"name": name or "created"}, "echo": body})

    app = web.Application()
    app.router.add_route("*", "/apis/agones.dev/v1/namespaces/{ns}/gameservers", handle)
    app.router.add_route("*", "/apis/agones.dev/v1/namespaces/{ns}/gameservers/{name}", handle)
    app.router.add_route(
        "*", "/apis/agones.dev/v1/namespaces/{ns}/gameservers/{name}/{sub}", handle
    )
    app.router.add_route("*", "/api/v1/nodes", handle)
    return app


@pytest.fixture
async def server() -> AsyncIterator[tuple[RESTClient, Recorder, FakeClock]]:
    rec = Recorder()
    srv = TestServer(make_app(rec), host="127.0.0.1")
    await srv.start_server()
    clock = FakeClock()
    client = RESTClient(
        Config(host=str(srv.make_url("")).rstrip("/"), token="secret", qps=0), clock=clock
    )
    yield client, rec, clock
    await client.close()
    await srv.close()


def test_resource_paths() -> None:
    assert (
        GS.path("ns", "gs", "status") == "/apis/agones.dev/v1/namespaces/ns/gameservers/gs/status"
    )
    assert GS.path() == "/apis/agones.dev/v1/gameservers"
    assert NODES.path("ignored", "n1") == "/api/v1/nodes/n1"
    assert (
        GS.template("ns", "gs", None)
        == "/apis/agones.dev/v1/namespaces/{namespace}/gameservers/{name}"
    )


@pytest.mark.parametrize(
    ("host", "path"),
    [
        pytest.param("http://127.0.0.1:8080", GS.path("default", "fleet-x-1a2b3"), id="name"),
        pytest.param("https://h:6443", "/api/v1/namespaces/default/events/gs.17a9f", id="event"),
        pytest.param("https://h", "/apis/rbac/v1/clusterroles/system:agones:sdk", id="colon"),
        pytest.param("https://h/k8s/clusters/c-1/", "/api/v1/nodes", id="host-with-prefix"),
        pytest.param("http://h:1", "/api/v1/namespaces/a b/pods/%zz", id="needs-encoding"),
        pytest.param("http://h:1", "/api/v1/./nodes/../pods", id="dot-segments"),
        pytest.param("http://h:1", "/version", id="short"),
    ],
)
def test_urls_are_the_ones_yarl_parses_from_the_joined_string(host: str, path: str) -> None:
    client = RESTClient(Config(host=host, qps=0))
    assert str(URL(client.url(path))) == str(URL(host.rstrip("/") + path))


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("az09-._~/:@%? #+&=ü"), max_size=40))
def test_any_path_gives_the_url_of_the_joined_string(path: str) -> None:
    client = RESTClient(Config(host="https://example.com:6443", qps=0))
    try:
        expected = str(URL("https://example.com:6443/" + path))
    except ValueError:
        return
    assert str(URL(client.url("/" + path))) == expected


async def test_list_get_and_headers(server: tuple[RESTClient, Recorder, FakeClock]) -> None:
    client, rec, _ = server
    result = await client.list(
        GS, "default", label_selector="a=b", limit=500, continue_="tok", resource_version="0"
    )
    assert result["items"] == [{"metadata": {"name": "a"}}]
    method, path, query, headers, _ = rec.requests[-1]
    assert (method, path) == ("GET", "/apis/agones.dev/v1/namespaces/default/gameservers")
    assert query == {
        "labelSelector": "a=b",
        "limit": "500",
        "continue": "tok",
        "resourceVersion": "0",
    }
    assert headers["Authorization"] == "Bearer secret"
    assert headers["User-Agent"].startswith("agones-py/")
    assert (await client.get(GS, "gs1", "default"))["metadata"]["name"] == "gs1"
    await client.list(NODES)
    assert rec.requests[-1][1] == "/api/v1/nodes"


async def test_basic_auth_without_a_token_on_requests_and_watches() -> None:
    rec = Recorder()
    srv = TestServer(make_app(rec), host="127.0.0.1")
    await srv.start_server()
    config = Config(host=str(srv.make_url("")).rstrip("/"), username="ann", password="pw", qps=0)
    client = RESTClient(config)
    try:
        await client.list(GS, "default")
        lines = [line async for line in client.watch(GS, "default")]
        assert lines  # the recorder answers the watch with its list, as one line
        for _, _, _, headers, _ in rec.requests[-2:]:
            assert headers["Authorization"] == "Basic YW5uOnB3"  # base64 of ann:pw
            assert headers["Accept"] == "application/json"
    finally:
        await client.close()
        await srv.close()


async def test_writes(server: tuple[RESTClient, Recorder, FakeClock]) -> None:
    client, rec, _ = server
    obj = {"metadata": {"name": "gs1", "namespace": "default"}, "spec": {}}
    assert (await client.create(GS, obj, "default"))["echo"] == obj
    assert rec.requests[-1][0] == "POST"
    await client.update(GS, obj)
    assert rec.requests[-1][:2] == ("PUT", "/apis/agones.dev/v1/namespaces/default/gameservers/gs1")
    await client.update_status(GS, obj)
    assert rec.requests[-1][1].endswith("/gs1/status")
    for patch_type, ctype in [
        ("merge", "application/merge-patch+json"),
        ("json", "application/json-patch+json"),
        ("strategic", "application/strategic-merge-patch+json"),
    ]:
        await client.patch(GS, "gs1", {"spec": {}}, namespace="default", patch_type=patch_type)  # type: ignore[arg-type]
        assert rec.requests[-1][0] == "PATCH"
        assert rec.requests[-1][3]["Content-Type"] == ctype
    await client.delete(
        GS, "gs1", "default", propagation_policy="Foreground", preconditions={"uid": "u1"}
    )
    assert rec.requests[-1][4] == {
        "kind": "DeleteOptions",
        "apiVersion": "v1",
        "propagationPolicy": "Foreground",
        "preconditions": {"uid": "u1"},
    }
    with pytest.raises(ValueError, match=r"metadata\.name"):
        await client.update(GS, {"metadata": {}})


async def test_raw_writes_answer_undecoded_json(
    server: tuple[RESTClient, Recorder, FakeClock],
) -> None:
    client, rec, _ = server
    obj = {"metadata": {"name": "gs1", "namespace": "default"}}
    raw = await client.create_raw(GS, obj, "default")
    assert json.loads(raw)["echo"] == obj
    assert rec.requests[-1][:2] == ("POST", "/apis/agones.dev/v1/namespaces/default/gameservers")
    raw = await client.delete_raw(GS, "gs1", "default", propagation_policy="Background")
    assert json.loads(raw)["metadata"]["name"] == "gs1"
    assert rec.requests[-1][0] == "DELETE"
    assert rec.requests[-1][4]["propagationPolicy"] == "Background"
    with pytest.raises(errors.NotFoundError):
        await client.delete_raw(GS, "missing", "default")
    raw = await client.update_raw(GS, obj)
    assert json.loads(raw)["echo"] == obj
    assert rec.requests[-1][:2] == (
        "PUT",
        "/apis/agones.dev/v1/namespaces/default/gameservers/gs1",
    )
    with pytest.raises(errors.ConflictError):
        await client.update_raw(GS, {"metadata": {"name": "conflict", "namespace": "default"}})


@pytest.mark.parametrize(
    ("name", "cls", "code"),
    [
        pytest.param("missing", errors.NotFoundError, 404, id="404"),
        pytest.param("conflict", errors.ConflictError, 409, id="409"),
        pytest.param("exists", errors.AlreadyExistsError, 409, id="409-exists"),
        pytest.param("expired", errors.ExpiredError, 410, id="410"),
        pytest.param("plain500", errors.InternalError, 500, id="500-not-status"),
    ],
)
async def test_errors_are_typed(
    server: tuple[RESTClient, Recorder, FakeClock], name: str, cls: type[errors.ApiError], code: int
) -> None:
    client, _, _ = server
    with pytest.raises(cls) as info:
        await client.get(GS, name, "default")
    assert info.value.status_code == code
    assert info.value.status["kind"] == "Status"


async def test_429_with_retry_after_is_retried_then_surfaces(
    server: tuple[RESTClient, Recorder, FakeClock],
) -> None:
    client, rec, clock = server
    rec.fail_429 = 2
    start = clock.now()
    # The fake clock fires sleeps as soon as they are registered.
    import asyncio

    task = asyncio.create_task(client.get(GS, "busy", "default"))
    for _ in range(2):
        await clock.wait_for_timers(1)
        clock.step(2)
    assert (await asyncio.wait_for(task, 5))["metadata"]["name"] == "busy"
    assert clock.now() - start == 4

    client.max_retries = 0
    rec.fail_429 = 1
    with pytest.raises(errors.TooManyRequestsError) as info:
        await client.get(GS, "busy", "default")
    assert info.value.retry_after == 2


async def test_watch_yields_lines_of_any_size(
    server: tuple[RESTClient, Recorder, FakeClock],
) -> None:
    client, rec, _ = server
    lines = [
        json.loads(line)
        async for line in client.watch(GS, "default", resource_version="5", timeout_seconds=300)
    ]
    assert [e["type"] for e in lines] == ["ADDED", "BOOKMARK"]
    assert len(lines[0]["object"]["data"]) == 200_000
    assert rec.requests[-1][2] == {
        "watch": "true",
        "resourceVersion": "5",
        "timeoutSeconds": "300",
        "allowWatchBookmarks": "true",
    }


async def test_a_burst_of_parallel_requests_keeps_its_connections_for_the_next_one() -> None:
    """40 requests in flight at once open 40 connections; once they are answered the client keeps
    them all, and the next burst of 40 goes over the same 40 without a new connection (and its
    TLS handshake), as client-go's HTTP/2 connection carries any number of requests."""
    in_flight: list[web.Request] = []
    release = asyncio.Event()

    async def handle(request: web.Request) -> web.Response:
        in_flight.append(request)
        await release.wait()
        return web.json_response({"kind": "NodeList", "metadata": {}, "items": []})

    def client_ports() -> set[int]:
        return {r.transport.get_extra_info("peername")[1] for r in in_flight if r.transport}

    app = web.Application()
    app.router.add_get("/api/v1/nodes", handle)
    srv = TestServer(app, host="127.0.0.1")
    await srv.start_server()
    client = RESTClient(Config(host=str(srv.make_url("")).rstrip("/"), qps=0))
    try:
        calls = [asyncio.create_task(client.list(NODES)) for _ in range(40)]
        await wait_for_async(lambda: len(in_flight) == 40, what="40 requests in flight")
        first = client_ports()
        assert len(first) == 40
        release.set()
        await asyncio.gather(*calls)
        await asyncio.sleep(0.1)  # a connection the client closed would be gone by now
        assert len(srv.runner.server.connections) == 40  # type: ignore[union-attr]
        in_flight.clear()
        release.clear()
        again = [asyncio.create_task(client.list(NODES)) for _ in range(40)]
        await wait_for_async(lambda: len(in_flight) == 40, what="the second burst in flight")
        assert client_ports() == first
        assert len(srv.runner.server.connections) == 40  # type: ignore[union-attr]
        release.set()
        await asyncio.gather(*again)
    finally:
        await client.close()
        await srv.close()
