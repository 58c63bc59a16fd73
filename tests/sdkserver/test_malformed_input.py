"""Malformed input thrown at the sidecar's gRPC and REST surfaces (property-based, hypothesis).

Against the cluster-mode SDKServer (the sidecar of a pod) over real sockets, every request:
* gets an answer: no 5xx over REST but a gRPC UNKNOWN (500, `{"code": 2, ...}`), which is how
  grpc-gateway carries Agones' plain SDK errors (`counter not found: x`, ...); a body that does
  not decode into the request is a 400 with `{"code": 3, "message", "details": []}`;
* over gRPC, bytes that are no request message are answered INTERNAL "grpc: error unmarshalling
  request", as grpc-go answers them;
* logs no traceback and crashes nothing (the server still answers a valid call afterwards);
* changes nothing (no queued write, no pending change) unless the request was valid.
The sizes come from the hypothesis profile (`tests/conftest.py`): with `ci`, over 10,000 inputs.
"""

from __future__ import annotations

import asyncio
import copy
import http.client
import json
import logging
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agones.featuregates import FeatureGates
from agones.sdkserver.backend import SERVICES
from agones.sdkserver.clock import FakeClock
from agones.sdkserver.gateway import build_routes
from agones.sdkserver.sdkserver import SDKServer
from agones.sdkserver.serve import serve_sdk
from agones.sdkserver.store import InMemoryGameServerStore
from tests.fuzzing import REQUIRED_PER_SURFACE, count
from tests.sdkserver.test_cluster_sdkserver import GS, START

BATCH = 16
"""Inputs per hypothesis example."""
EXAMPLES = settings.default.max_examples * 7
"""Examples per surface (ci: 700 x 16 = 11,200 inputs over REST and as many over gRPC)."""


class _Tracebacks(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if _stale_grpc_loop(record):
            return
        if record.exc_info or "Traceback" in record.getMessage():
            self.records.append(f"{record.name}: {record.getMessage()}")


def _stale_grpc_loop(record: logging.LogRecord) -> bool:
    """grpc.aio's poller delivering a completion to the (closed) loop of an earlier test in this
    process: that loop is gone and the sidecar's own loop is running, so it is not the sidecar's."""
    exc = record.exc_info[1] if record.exc_info else None
    return (
        isinstance(exc, RuntimeError)
        and str(exc) == "Event loop is closed"
        and "PollerCompletionQueue" in record.getMessage()
    )


@dataclass
class Sidecar:
    loop: asyncio.AbstractEventLoop
    server: SDKServer
    grpc_port: int
    http_port: int
    tracebacks: _Tracebacks

    def call(self, fn: Any) -> Any:
        async def run() -> Any:
            return fn()

        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(30)

    def state(self) -> Any:
        """Everything a request could change before a write: a deep copy, read on the loop."""
        s = self.server
        return self.call(
            lambda: copy.deepcopy(
                (
                    s.store.current,  # type: ignore[attr-defined]
                    s.gs_state,
                    s.gs_labels,
                    s.gs_annotations,
                    s.player_capacity,
                    s.connected_players,
                    s.counter_updates,
                    s.list_updates,
                    s.reserve_duration,
                    s.queue.pending(),
                )
            )
        )


@pytest.fixture(scope="module")
def sidecar() -> Iterator[Sidecar]:
    tracebacks = _Tracebacks()
    logging.getLogger().addHandler(tracebacks)
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    async def start() -> tuple[SDKServer, Any]:
        gates = FeatureGates().with_values(PlayerTracking=True, CountsAndLists=True)
        store = InMemoryGameServerStore(copy.deepcopy(GS))
        server = SDKServer(store, gates, clock=FakeClock(START), recorder=store)
        await server.run()
        serving = await serve_sdk(server, address="127.0.0.1", grpc_port=0, http_port=0)
        return server, serving

    server, serving = asyncio.run_coroutine_threadsafe(start(), loop).result(30)
    try:
        yield Sidecar(loop, server, serving.grpc_port, serving.http_port, tracebacks)
    finally:

        async def stop() -> None:
            await serving.stop(0)
            await server.stop()

        asyncio.run_coroutine_threadsafe(stop(), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()
        logging.getLogger().removeHandler(tracebacks)


# -- REST -----------------------------------------------------------------------------------------

ROUTES = [r for r in build_routes() if not r.method.server_streaming]
BODY_ROUTES = [r for r in ROUTES if r.body]
PATH_VALUES = {
    "name": "rooms",
    "counterUpdateRequest.name": "rooms",
    "list.name": "players",
    "playerID": "p1",
}


def _path(template: str, name: str | None = None) -> str:
    path = template
    for var, value in PATH_VALUES.items():
        path = path.replace("{" + var + "}", name or value)
    return path


def _is_object(raw: bytes) -> bool:
    """Whether `raw` starts with a JSON object (as a decoder reading one value sees it)."""
    try:
        value, _ = json.JSONDecoder().raw_decode(raw.decode("utf-8").lstrip(" \t\r\n"))
    except (ValueError, RecursionError):
        return False
    return isinstance(value, dict)


json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False),
    st.text(max_size=8),
)
json_values = st.recursive(
    json_scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
not_objects = st.one_of(json_scalars, st.lists(json_values, max_size=3)).map(
    lambda v: json.dumps(v).encode()
)
"""Valid JSON that is no object: `123`, `"x"`, `[]`, `null`."""
undecodable = st.one_of(
    st.binary(min_size=1, max_size=16).filter(lambda b: b.strip() != b"" and not _is_object(b)),
    st.integers(min_value=1, max_value=3000).map(lambda n: b"[" * n),
    st.sampled_from([b"{", b'{"name"', b'{"name":', b"{'a': 1}", b"{,}", b"nul", b"\xff\xfe"]),
)
"""Not JSON at all, or cut short."""
deep_objects = st.integers(min_value=1, max_value=3000).map(
    lambda n: b'{"unknownField":' + b'{"a":' * n + b"1" + b"}" * (n + 1)
)
"""An unknown field nested deep: discarded when it decodes, a 400 when it is too deep to."""


def _fields(route: Any) -> list[str]:
    descriptor = route.method.input_type
    if route.body not in ("", "*"):
        descriptor = descriptor.fields_by_name[route.body].message_type
    names = [f.name for f in descriptor.fields] + [f.json_name for f in descriptor.fields]
    return sorted(set(names))


def wrong_types(route: Any) -> st.SearchStrategy[bytes]:
    """Objects whose known fields carry values of any type (often the wrong one)."""
    fields = st.sampled_from([*_fields(route), "unknownField"])
    bodies = st.dictionaries(fields, json_values, min_size=1, max_size=3)
    return bodies.map(lambda body: json.dumps(body).encode())


# Strategies built once (one built inside each draw is validated again every time).
ROUTE = st.integers(0, len(BODY_ROUTES) - 1)
WRONG_TYPES = [wrong_types(route) for route in BODY_ROUTES]
KIND = st.sampled_from(["not-object", "undecodable", "wrong-types", "deep"])
BODIES = {"not-object": not_objects, "undecodable": undecodable, "deep": deep_objects}
QUERY = st.sampled_from(["", "update_mask=capacity", "x=1", "countDiff=abc"])


@st.composite
def rest_inputs(draw: st.DrawFn) -> tuple[Any, bytes, str, bool]:
    """(route, body, query, whether the body must be refused as undecodable)."""
    index = draw(ROUTE)
    route = BODY_ROUTES[index]
    kind = draw(KIND)
    body = draw(WRONG_TYPES[index]) if kind == "wrong-types" else draw(BODIES[kind])
    query = draw(QUERY)
    if route.template == "/health" and kind == "not-object" and body.startswith(b"{"):
        kind = "wrong-types"
    return route, body, query, kind in ("not-object", "undecodable")


def _request(conn: http.client.HTTPConnection, verb: str, path: str, body: bytes) -> Any:
    conn.request(verb, path, body=body, headers={"Content-Type": "application/json"})
    resp = conn.getresponse()
    return resp.status, resp.read()


def _check_rest_answer(status: int, raw: bytes, refused: bool, what: str) -> None:
    if status == 200:
        assert not refused, f"{what}: accepted a body that does not decode"
        return
    assert raw, f"{what}: {status} without a body"
    error = json.loads(raw)
    assert set(error) == {"code", "message", "details"}, what
    assert error["details"] == [], what
    if refused:
        assert (status, error["code"]) == (400, 3), f"{what}: {status} {error}"
    elif status >= 500:
        assert (status, error["code"]) == (500, 2), f"{what}: {status} {error}"


def test_rest_malformed_bodies(sidecar: Sidecar) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", sidecar.http_port, timeout=30)
    sent: list[int] = []

    @settings(max_examples=EXAMPLES)
    @given(st.lists(rest_inputs(), min_size=BATCH, max_size=BATCH))
    def run(batch: list[tuple[Any, bytes, str, bool]]) -> None:
        for route, body, query, refused in batch:
            before = sidecar.state()
            path = _path(route.template) + (f"?{query}" if query else "")
            status, raw = _request(conn, route.http_method, path, body)
            sent.append(1)
            count("SDK REST")
            what = f"{route.http_method} {path} {body[:60]!r}"
            _check_rest_answer(status, raw, refused, what)
            if status == 400:
                assert sidecar.state() == before, f"{what}: refused, yet something changed"

    try:
        run()
    finally:
        conn.close()
    assert len(sent) >= EXAMPLES * BATCH
    assert len(sent) >= REQUIRED_PER_SURFACE
    assert sidecar.tracebacks.records == []
    status, raw = _request(
        http.client.HTTPConnection("127.0.0.1", sidecar.http_port, timeout=30),
        "GET",
        "/gameserver",
        b"",
    )
    assert (status, json.loads(raw)["object_meta"]["name"]) == (200, "gs1")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        pytest.param(b"123", "proto: syntax error (line 1:1): unexpected token 123", id="number"),
        pytest.param(b'"x"', 'proto: syntax error (line 1:1): unexpected token "x"', id="string"),
        pytest.param(b"[]", "proto: syntax error (line 1:1): unexpected token [", id="array"),
        pytest.param(b"null", "proto: syntax error (line 1:1): unexpected token null", id="null"),
        pytest.param(b"{", "unexpected EOF", id="cut-short"),
    ],
)
@pytest.mark.parametrize("route", BODY_ROUTES, ids=lambda r: f"{r.http_method}{r.template}")
def test_a_body_that_is_no_object_is_a_400_on_every_body_route(
    sidecar: Sidecar, route: Any, body: bytes, message: str
) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", sidecar.http_port, timeout=30)
    try:
        status, raw = _request(conn, route.http_method, _path(route.template), body)
    finally:
        conn.close()
    assert (status, json.loads(raw)) == (400, {"code": 3, "message": message, "details": []})


@pytest.mark.parametrize(
    ("verb", "path", "body", "code", "message"),
    [
        pytest.param(
            "GET", "/v1beta1/counters/nope", b"", 2, "counter not found: nope", id="counter"
        ),
        pytest.param(
            "PATCH",
            "/v1beta1/counters/rooms",
            b'{"count": "-1"}',
            2,
            "out of range. Count must be within range [0,Capacity]. Found Count: -1, Capacity: ",
            id="count",
        ),
        pytest.param(
            "POST",
            "/v1beta1/lists/players:removeValue",
            b'{"value": "zz"}',
            2,
            "not found. Value: zz not found in List: players",
            id="list-value",
        ),
    ],
)
def test_sdk_logic_errors_over_rest_are_what_grpc_gateway_makes_of_agones_errors(
    sidecar: Sidecar, verb: str, path: str, body: bytes, code: int, message: str
) -> None:
    """Agones' sidecar returns plain errors (UNKNOWN); grpc-gateway answers UNKNOWN with 500."""
    conn = http.client.HTTPConnection("127.0.0.1", sidecar.http_port, timeout=30)
    try:
        status, raw = _request(conn, verb, path, body)
    finally:
        conn.close()
    error = json.loads(raw)
    assert (status, error["code"], error["details"]) == (500, code, [])
    assert error["message"].startswith(message)  # the capacity is what earlier tests left


# -- gRPC -----------------------------------------------------------------------------------------

UNARY = [
    f"/{service.full_name}/{m.name}"
    for service in SERVICES
    for m in service.methods
    if not m.server_streaming and not m.client_streaming
]


GRPC_METHOD = st.sampled_from(UNARY)
GRPC_BYTES = st.one_of(
    st.binary(max_size=24),
    st.sampled_from([b"\x0a\xff", b"\x08\x80\x80\x80\x80\x80\x80\x80\x80\x80\x80", b"\xff"]),
    st.binary(max_size=8).map(lambda b: b"\x0a\x05" + b),
)


@st.composite
def grpc_inputs(draw: st.DrawFn) -> tuple[str, bytes]:
    return draw(GRPC_METHOD), draw(GRPC_BYTES)


def test_grpc_malformed_messages(sidecar: Sidecar) -> None:
    sent: list[int] = []
    codes: set[grpc.StatusCode] = set()
    with grpc.insecure_channel(f"127.0.0.1:{sidecar.grpc_port}") as channel:
        calls = {
            m: channel.unary_unary(m, request_serializer=None, response_deserializer=None)
            for m in UNARY
        }

        @settings(max_examples=EXAMPLES)
        @given(st.lists(grpc_inputs(), min_size=BATCH, max_size=BATCH))
        def run(batch: list[tuple[str, bytes]]) -> None:
            for method, raw in batch:
                before = sidecar.state()
                try:
                    calls[method](raw, timeout=30)
                except grpc.RpcError as err:
                    code = err.code()
                    codes.add(code)
                    assert code in (
                        grpc.StatusCode.UNKNOWN,
                        grpc.StatusCode.INVALID_ARGUMENT,
                        grpc.StatusCode.INTERNAL,
                    ), f"{method} {raw!r}: {code} {err.details()}"
                    if code == grpc.StatusCode.INTERNAL:
                        assert (err.details() or "").startswith(
                            "grpc: error unmarshalling request"
                        ), err.details()
                        assert sidecar.state() == before, f"{method} {raw!r}: changed"
                sent.append(1)
                count("SDK gRPC")

        run()
        assert len(sent) >= EXAMPLES * BATCH
        assert len(sent) >= REQUIRED_PER_SURFACE
        assert grpc.StatusCode.INTERNAL in codes
        reply = calls["/agones.dev.sdk.SDK/GetGameServer"](b"", timeout=30)
        assert reply
    assert sidecar.tracebacks.records == []
