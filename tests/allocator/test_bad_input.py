"""Malformed requests thrown at the allocator service (the real Allocator on a local API server):
gRPC answers INVALID_ARGUMENT or an allocation outcome, never UNKNOWN/INTERNAL/UNAVAILABLE from a
crash; REST answers 4xx or 200, never 5xx."""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import http.client
import json
import socket
import ssl
import threading
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import json_format, wrappers_pb2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agones.allocator.app import AllocatorApp
from agones.allocator.proto import allocation_pb2 as pb
from agones.featuregates import FeatureGates
from tests.allocator.harness import Certs, apply_policy_crd, make_certs, settings_for, write_pair
from tests.fuzzing import count, examples
from tests.integration.gameserverallocations.harness import AllocationHarness

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

METHOD = "/allocation.AllocationService/Allocate"
OUTCOMES = {
    grpc.StatusCode.OK,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.RESOURCE_EXHAUSTED,  # UnAllocated
    grpc.StatusCode.ABORTED,  # Contention
    grpc.StatusCode.FAILED_PRECONDITION,  # multi-cluster without a policy
}


class Background:
    """An event loop in a thread, for servers that sync hypothesis tests talk to."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, Any], timeout: float = 60) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@dataclass
class Served:
    port: int
    certs: Certs
    channel: grpc.Channel
    context: ssl.SSLContext
    conn: http.client.HTTPSConnection | None = None

    def rest(self) -> http.client.HTTPSConnection:
        if self.conn is None:
            self.conn = http.client.HTTPSConnection(
                "127.0.0.1", self.port, context=self.context, timeout=20
            )
        return self.conn

    def reconnect(self) -> None:
        if self.conn is not None:
            self.conn.close()
        self.conn = None


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    root: Path = tmp_path_factory.mktemp("allocator")
    certs = make_certs(root)
    background = Background()
    h = AllocationHarness()
    background.run(h.start())
    background.run(apply_policy_crd(h.rest))

    async def start() -> AllocatorApp:
        for i in range(20):
            await h.create_ready(f"gs-{i}")
        app = AllocatorApp(
            settings_for(certs, allocation_batch_wait_time=0.0), FeatureGates(), h.rest
        )
        await app.start()
        return app

    app = background.run(start())
    port = app.server.ports["mux"]
    credentials = grpc.ssl_channel_credentials(
        certs.ca.cert_pem, certs.client.key_pem, certs.client.cert_pem
    )
    channel = grpc.secure_channel(f"127.0.0.1:{port}", credentials)
    context = ssl.create_default_context(cadata=certs.ca.cert_pem.decode())
    write_pair(root / "client", certs.client)
    context.load_cert_chain(root / "client" / "tls.crt", root / "client" / "tls.key")
    served = Served(port, certs, channel, context)
    try:
        yield served
    finally:
        served.reconnect()  # closes the REST connection
        channel.close()

        async def stop() -> None:
            await app.server.shutdown()
            await app.stop()
            await h.stop()

        background.run(stop())
        background.close()


def _grpc_code(served: Served, raw: bytes) -> grpc.StatusCode:
    call = served.channel.unary_unary(METHOD)
    try:
        call(raw, timeout=20)
    except grpc.RpcError as err:
        return err.code()  # type: ignore[no-any-return]
    return grpc.StatusCode.OK


def _rest_status(served: Served, body: bytes, content_type: str = "application/json") -> int:
    """POST over the fixture's keep-alive mTLS connection (reconnecting when the server closed it)."""
    for attempt in range(2):
        conn = served.rest()
        try:
            conn.request("POST", "/gameserverallocation", body, {"Content-Type": content_type})
            response = conn.getresponse()
            response.read()
        except (http.client.HTTPException, ConnectionError):
            served.reconnect()
            if attempt:
                raise
            continue
        if response.will_close:
            served.reconnect()
        return int(response.status)
    raise AssertionError("unreachable: the second attempt returns or raises")


label_text = st.text(st.characters(codec="utf-8"), max_size=70)
label_maps = st.dictionaries(label_text, label_text, max_size=3)
int64 = st.integers(-(2**63), 2**63 - 1)

selectors = st.builds(
    pb.GameServerSelector,
    matchLabels=label_maps,
    gameServerState=st.integers(-5, 5),
    players=st.builds(
        pb.PlayerSelector,
        minAvailable=st.integers(0, 2**64 - 1),
        maxAvailable=st.integers(0, 2**64 - 1),
    ),
    counters=st.dictionaries(
        label_text,
        st.builds(
            pb.CounterSelector,
            minCount=int64,
            maxCount=int64,
            minAvailable=int64,
            maxAvailable=int64,
        ),
        max_size=2,
    ),
    lists=st.dictionaries(
        label_text,
        st.builds(
            pb.ListSelector, containsValue=label_text, minAvailable=int64, maxAvailable=int64
        ),
        max_size=2,
    ),
)


@st.composite
def requests(draw: st.DrawFn) -> pb.AllocationRequest:
    request = pb.AllocationRequest(
        namespace=draw(st.sampled_from(["default", "", "Not_A-Namespace", "x" * 300])),
        scheduling=draw(st.integers(-3, 3)),
        gameServerSelectors=draw(st.lists(selectors, max_size=3)),
        preferredGameServerSelectors=draw(st.lists(selectors, max_size=2)),
        metadata=pb.MetaPatch(labels=draw(label_maps), annotations=draw(label_maps)),
        multiClusterSetting=pb.MultiClusterSetting(enabled=draw(st.booleans())),
    )
    if draw(st.booleans()):
        request.requiredGameServerSelector.CopyFrom(draw(selectors))
    for _ in range(draw(st.integers(0, 2))):
        request.priorities.append(
            pb.Priority(
                type=draw(st.integers(-2, 3)), key=draw(label_text), order=draw(st.integers(-2, 3))
            )
        )
    for name in draw(st.lists(label_text, max_size=2)):
        action = request.counters[name]
        if draw(st.booleans()):
            action.action.value = draw(st.sampled_from(["Increment", "Decrement", "", "Multiply"]))
        if draw(st.booleans()):
            action.amount.value = draw(int64)
        if draw(st.booleans()):
            action.capacity.value = draw(int64)
    for name in draw(st.lists(label_text, max_size=2)):
        item = request.lists[name]
        item.addValues.extend(draw(st.lists(label_text, max_size=3)))
        item.deleteValues.extend(draw(st.lists(label_text, max_size=2)))
        if draw(st.booleans()):
            item.capacity.value = draw(int64)
    return request


SETTINGS = settings(
    max_examples=examples(100),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
# Inputs per example. Bytes are mostly refused before any allocation (REST: not JSON); requests
# that decode reach the allocator and cost an allocation attempt each, so they come fewer:
# ci sends 100 x 30 + 100 x 70 gRPC and REST byte strings and 3 x 100 x 1 requests, 10,300.
GRPC_BYTES, REST_BYTES, DECODABLE = 30, 70, 1
SURFACE = "allocator (gRPC and REST)"


def batches(inputs: st.SearchStrategy[Any], size: int) -> st.SearchStrategy[list[Any]]:
    return st.lists(inputs, min_size=size, max_size=size)


@SETTINGS
@given(raws=batches(st.binary(max_size=200), GRPC_BYTES))
def test_grpc_arbitrary_bytes(served: Served, raws: list[bytes]) -> None:
    for raw in raws:
        count(SURFACE)
        assert _grpc_code(served, raw) in OUTCOMES, raw


@SETTINGS
@given(requests=batches(requests(), DECODABLE))
def test_grpc_malformed_requests(served: Served, requests: list[pb.AllocationRequest]) -> None:
    for request in requests:
        count(SURFACE)
        assert _grpc_code(served, request.SerializeToString()) in OUTCOMES, request


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=25), children, max_size=4)
    ),
    max_leaves=12,
)
json_keys = st.sampled_from(
    [
        "namespace",
        "scheduling",
        "gameServerSelectors",
        "requiredGameServerSelector",
        "preferredGameServerSelectors",
        "metadata",
        "metaPatch",
        "multiClusterSetting",
        "priorities",
        "counters",
        "lists",
        "game_server_selectors",
    ]
)


@SETTINGS
@given(bodies=batches(st.dictionaries(json_keys, json_values, max_size=5), DECODABLE))
def test_rest_malformed_json(served: Served, bodies: list[dict[str, Any]]) -> None:
    for body in bodies:
        count(SURFACE)
        assert _rest_status(served, json.dumps(body).encode()) < 500, body


@SETTINGS
@given(bodies=batches(st.binary(max_size=200), REST_BYTES))
def test_rest_arbitrary_bytes(served: Served, bodies: list[bytes]) -> None:
    for body in bodies:
        count(SURFACE)
        assert _rest_status(served, body) < 500, body


@SETTINGS
@given(requests=batches(requests(), DECODABLE))
def test_rest_malformed_requests(served: Served, requests: list[pb.AllocationRequest]) -> None:
    for request in requests:
        count(SURFACE)
        body = json.dumps(json_format.MessageToDict(request)).encode()
        assert _rest_status(served, body) < 500, body


INVALID = [
    pytest.param(
        pb.AllocationRequest(
            namespace="default",
            gameServerSelectors=[pb.GameServerSelector(matchLabels={"bad key!": "x"})],
        ),
        "spec.selectors[0].labelSelector",
        id="label-key",
    ),
    pytest.param(
        pb.AllocationRequest(
            namespace="default", metadata=pb.MetaPatch(labels={"ok": "not a valid value!"})
        ),
        "spec.metadata",
        id="metadata-label-value",
    ),
    pytest.param(
        pb.AllocationRequest(
            namespace="default",
            counters={
                "rooms": pb.CounterAction(action=wrappers_pb2.StringValue(value="Increment"))
            },
        ),
        "spec.counters[rooms]",
        id="counter-action-without-amount",
    ),
]


@pytest.mark.parametrize(("request_pb", "field"), INVALID)
def test_invalid_requests_name_the_field(served: Served, request_pb, field: str) -> None:
    call = served.channel.unary_unary(METHOD)
    with pytest.raises(grpc.RpcError) as err:
        call(request_pb.SerializeToString(), timeout=20)
    assert err.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert field in err.value.details()
    body = json.dumps(json_format.MessageToDict(request_pb)).encode()
    assert _rest_status(served, body) == 400


@functools.cache
def _client_hello() -> bytes:
    """A TLS ClientHello offering h2, made once (a context loads the system's CAs: ~30 ms)."""
    context = ssl.create_default_context()
    context.set_alpn_protocols(["h2"])
    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
    tls = context.wrap_bio(incoming, outgoing, server_hostname="localhost")
    with pytest.raises(ssl.SSLWantReadError):
        tls.do_handshake()
    return outgoing.read()


def _send_raw(served: Served, first: bytes) -> None:
    """Connect, send `first` (no TLS of ours), half-close; the listener must end the connection."""
    with socket.create_connection(("127.0.0.1", served.port), timeout=20) as sock:
        sock.sendall(first)
        sock.shutdown(socket.SHUT_WR)
        while sock.recv(65536):
            pass


hello_prefix = st.integers(0, 600).map(lambda n: _client_hello()[:n])


@SETTINGS
@given(firsts=batches(st.one_of(st.binary(max_size=300), hello_prefix), 5))
def test_listener_arbitrary_first_bytes(served: Served, firsts: list[bytes]) -> None:
    """Whatever a client sends before (or instead of) a TLS handshake, the listener (which reads
    the ClientHello to route gRPC to grpc's TLS) closes it, and valid clients are still served."""
    # At once: the listener may wait up to its PEEK_WAIT on a cut-short ClientHello before it
    # gives up on each, and the connections are independent.
    with concurrent.futures.ThreadPoolExecutor(len(firsts) or 1) as pool:
        for _ in pool.map(functools.partial(_send_raw, served), firsts):
            count(SURFACE)
    assert _grpc_code(served, pb.AllocationRequest().SerializeToString()) in OUTCOMES
