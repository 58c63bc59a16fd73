"""`grpcserver.Server`: grpc's own client (C core) against it over loopback for every kind of
answer, and raw HTTP/2 frames for the protocol's edges, malformed ones included."""

from __future__ import annotations

import asyncio
import struct
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from hypothesis import given, settings
from hypothesis import strategies as st

from agones.grpcserver import Server
from agones.grpcserver.calls import parse_timeout, percent_encode
from agones.grpcserver.frames import (
    ACK,
    CONTINUATION,
    DATA,
    END_HEADERS,
    END_STREAM,
    GOAWAY,
    HEADERS,
    PING,
    PREFACE,
    RST_STREAM,
    SETTINGS,
    WINDOW_UPDATE,
    frame,
)
from agones.grpcserver.hpack import Decoder, encode
from tests.fuzzing import count, examples

SURFACE = "gRPC server (HTTP/2 and HPACK)"


class Service:
    """Handlers for every kind of answer; `seen` records what they were given."""

    def __init__(self) -> None:
        self.seen: list[Any] = []
        self.cancelled = asyncio.Event()
        self.entered = asyncio.Event()
        self.gate = asyncio.Event()

    async def echo(self, request: bytes, context: Any) -> bytes:
        self.seen.append((request, dict(context.invocation_metadata())))
        return request

    async def abort(self, request: bytes, context: Any) -> bytes:
        await context.abort(grpc.StatusCode.FAILED_PRECONDITION, request.decode())

    async def fail(self, request: bytes, context: Any) -> bytes:
        raise ValueError("boom")

    async def set_code(self, request: bytes, context: Any) -> bytes:
        context.set_code(grpc.StatusCode.NOT_FOUND)
        context.set_details("gone")
        return b""

    async def slow(self, request: bytes, context: Any) -> bytes:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        return b""

    async def gated(self, request: bytes, context: Any) -> bytes:
        self.entered.set()
        await self.gate.wait()
        return request

    async def big(self, request: bytes, context: Any) -> bytes:
        return b"z" * int(request)

    async def count(self, request: bytes, context: Any) -> AsyncIterator[bytes]:
        for i in range(int(request)):
            yield str(i).encode()

    def handler(self) -> grpc.GenericRpcHandler:
        unary = grpc.unary_unary_rpc_method_handler
        return grpc.method_handlers_generic_handler(
            "test.S",
            {
                "Echo": unary(self.echo),
                "Abort": unary(self.abort),
                "Fail": unary(self.fail),
                "SetCode": unary(self.set_code),
                "Slow": unary(self.slow),
                "Big": unary(self.big),
                "Gated": unary(self.gated),
                "Count": grpc.unary_stream_rpc_method_handler(self.count),
                "Up": grpc.stream_unary_rpc_method_handler(self.echo),
            },
        )


@pytest.fixture
async def served() -> AsyncIterator[tuple[Server, Service, health.aio.HealthServicer, int]]:
    server = Server(max_receive_message_length=1024 * 1024)
    service = Service()
    checks = health.aio.HealthServicer()
    server.add_generic_rpc_handlers((service.handler(),))
    health_pb2_grpc.add_HealthServicer_to_server(checks, server)
    listening = await asyncio.get_running_loop().create_server(server.protocol, "127.0.0.1", 0)
    port = listening.sockets[0].getsockname()[1]
    try:
        yield server, service, checks, port
    finally:
        listening.close()
        await server.stop(0)


def channel(port: int, **options: Any) -> grpc.aio.Channel:
    return grpc.aio.insecure_channel(f"127.0.0.1:{port}", **options)


async def call(port: int, method: str, request: bytes, **kwargs: Any) -> bytes:
    async with channel(port) as ch:
        answer: bytes = await ch.unary_unary(f"/test.S/{method}")(request, **kwargs)
        return answer


async def status_of(port: int, method: str, request: bytes = b"") -> tuple[Any, str]:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call(port, method, request)
    return err.value.code(), err.value.details()


async def test_unary_call_with_metadata(served) -> None:
    _, service, _, port = served
    assert await call(port, "Echo", b"hello", metadata=(("x-team", "blue"),)) == b"hello"
    request, metadata = service.seen[0]
    assert request == b"hello" and metadata["x-team"] == "blue"


async def test_many_calls_at_once_on_one_connection(served) -> None:
    _, _, _, port = served
    async with channel(port) as ch:
        echo = ch.unary_unary("/test.S/Echo")
        answers = await asyncio.gather(*(echo(str(i).encode()) for i in range(300)))
    assert answers == [str(i).encode() for i in range(300)]


@pytest.mark.parametrize(
    ("method", "request_", "code", "details"),
    [
        (
            "Abort",
            "no ready server ✓ 100%",
            grpc.StatusCode.FAILED_PRECONDITION,
            "no ready server ✓ 100%",
        ),
        ("Fail", "", grpc.StatusCode.UNKNOWN, "Unexpected <class 'ValueError'>: boom"),
        ("SetCode", "", grpc.StatusCode.NOT_FOUND, "gone"),
        ("Nope", "", grpc.StatusCode.UNIMPLEMENTED, "unknown method Nope for service test.S"),
        ("Up", "", grpc.StatusCode.UNIMPLEMENTED, "client streaming is not served here"),
    ],
)
async def test_error_statuses(served, method, request_, code, details) -> None:
    _, _, _, port = served
    assert await status_of(port, method, request_.encode()) == (code, details)


async def test_metadata_over_the_header_list_limit_fails_and_the_channel_goes_on(served) -> None:
    """grpc's C core does not hold to the advertised limit: the block reaches the server, which
    ends that connection (GOAWAY ENHANCE_YOUR_CALM); the call fails and the next one is served."""
    _, _, _, port = served
    async with channel(port) as ch:
        echo = ch.unary_unary("/test.S/Echo")
        assert await echo(b"before") == b"before"
        with pytest.raises(grpc.aio.AioRpcError):
            await echo(b"big", metadata=(("x-big", "v" * 70_000),), timeout=5)
        assert await echo(b"after") == b"after"


async def test_answers_larger_than_the_window_flow(served) -> None:
    _, _, _, port = served
    assert await call(port, "Big", b"900000") == b"z" * 900_000


async def test_request_over_the_limit_is_resource_exhausted(served) -> None:
    _, _, _, port = served
    code, details = await status_of(port, "Echo", b"x" * (1024 * 1024 + 1))
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "larger than max" in details


async def test_gzip_request(served) -> None:
    _, _, _, port = served
    answer = await call(port, "Echo", b"a" * 5000, compression=grpc.Compression.Gzip)
    assert answer == b"a" * 5000


async def test_deadline_cancels_the_handler(served) -> None:
    _, service, _, port = served
    code, _ = await status_of_with_timeout(port)
    assert code == grpc.StatusCode.DEADLINE_EXCEEDED
    await asyncio.wait_for(service.cancelled.wait(), 5)


async def status_of_with_timeout(port: int) -> tuple[Any, str]:
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await call(port, "Slow", b"", timeout=0.2)
    return err.value.code(), err.value.details()


async def test_client_cancel_cancels_the_handler(served) -> None:
    _, service, _, port = served
    async with channel(port) as ch:
        pending = ch.unary_unary("/test.S/Slow")(b"")
        await asyncio.sleep(0.2)
        pending.cancel()
        await asyncio.wait_for(service.cancelled.wait(), 5)


async def test_server_streaming_and_health_watch(served) -> None:
    _, _, checks, port = served
    async with channel(port) as ch:
        numbers = [m async for m in ch.unary_stream("/test.S/Count")(b"500")]
        assert numbers == [str(i).encode() for i in range(500)]
        stub = health_pb2_grpc.HealthStub(ch)
        check = await stub.Check(health_pb2.HealthCheckRequest(service=""))
        assert check.status == health_pb2.HealthCheckResponse.SERVING
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stub.Check(health_pb2.HealthCheckRequest(service="unknown"))
        assert err.value.code() == grpc.StatusCode.NOT_FOUND
        watch = stub.Watch(health_pb2.HealthCheckRequest(service=""))
        first = await watch.read()
        assert first.status == health_pb2.HealthCheckResponse.SERVING
        await checks.set("", health_pb2.HealthCheckResponse.NOT_SERVING)
        second = await asyncio.wait_for(watch.read(), 5)
        assert second.status == health_pb2.HealthCheckResponse.NOT_SERVING
        watch.cancel()


async def test_stop_finishes_running_calls_and_refuses_new_ones(served) -> None:
    server, service, _, port = served
    async with channel(port) as ch:
        running = asyncio.ensure_future(ch.unary_unary("/test.S/Gated")(b"finished"))
        await asyncio.wait_for(service.entered.wait(), 5)
        stopping = asyncio.ensure_future(server.stop(5))
        await asyncio.sleep(0.1)
        service.gate.set()
        assert await running == b"finished"
        await stopping
        with pytest.raises(grpc.aio.AioRpcError):
            await ch.unary_unary("/test.S/Echo")(b"late", timeout=2)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [(b"1S", 1.0), (b"250m", 0.25), (b"3M", 180.0), (b"7u", 7e-6), (b"12345678n", 0.012345678)],
)
def test_parse_timeout(value: bytes, seconds: float) -> None:
    assert parse_timeout(value) == pytest.approx(seconds)


@pytest.mark.parametrize("value", [b"", b"S", b"1", b"1x", b"-1S", b"1234567890S", b"1.5S"])
def test_parse_timeout_rejects(value: bytes) -> None:
    assert parse_timeout(value) is None


def test_percent_encode() -> None:
    assert percent_encode("a b%c\né") == b"a b%25c%0A%C3%A9"


# -- raw frames -----------------------------------------------------------------------------


class Wire:
    """An in-memory transport: what the server wrote, and whether it closed."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.closed = False

    def write(self, data: bytes) -> None:
        assert not self.closed
        self.data += data

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return ("127.0.0.1", 5555) if name == "peername" else default

    def frames(self) -> list[tuple[int, int, int, bytes]]:
        """The frames written, checked to be whole and well formed."""
        out, pos = [], 0
        while pos < len(self.data):
            assert len(self.data) - pos >= 9
            length = int.from_bytes(self.data[pos : pos + 3], "big")
            kind, flags = self.data[pos + 3], self.data[pos + 4]
            stream = int.from_bytes(self.data[pos + 5 : pos + 9], "big")
            payload = bytes(self.data[pos + 9 : pos + 9 + length])
            assert len(payload) == length
            out.append((kind, flags, stream, payload))
            pos += 9 + length
        return out


def connect(server: Server) -> tuple[Any, Wire]:
    protocol = server.protocol()
    wire = Wire()
    protocol.connection_made(wire)
    return protocol, wire


def request_headers(path: str = "/test.S/Echo", **extra: str) -> bytes:
    fields = [(b":method", b"POST"), (b":scheme", b"http"), (b":path", path.encode())]
    fields += [(b"content-type", b"application/grpc"), (b"te", b"trailers")]
    fields += [(k.encode(), v.encode()) for k, v in extra.items()]
    return encode(fields)


def message(data: bytes) -> bytes:
    return struct.pack(">BI", 0, len(data)) + data


def trailers(wire: Wire, stream: int) -> dict[bytes, bytes]:
    decoder = Decoder()
    found: dict[bytes, bytes] = {}
    for kind, flags, sid, payload in wire.frames():
        if kind == HEADERS and sid == stream:
            block = decoder.decode(payload)
            if flags & END_STREAM:
                found = dict(block)
    return found


def kinds(wire: Wire) -> list[int]:
    return [kind for kind, *_ in wire.frames()]


@pytest.fixture
def raw_server() -> Server:
    server = Server()
    server.add_generic_rpc_handlers((Service().handler(),))
    return server


async def test_raw_unary_call(raw_server: Server) -> None:
    protocol, wire = connect(raw_server)
    protocol.data_received(PREFACE + frame(SETTINGS, 0, 0))
    protocol.data_received(frame(HEADERS, END_HEADERS, 1, request_headers()))
    protocol.data_received(frame(DATA, END_STREAM, 1, message(b"hi")))
    await asyncio.sleep(0.01)
    data = [p for k, _, s, p in wire.frames() if k == DATA and s == 1]
    assert data == [message(b"hi")]
    assert trailers(wire, 1)[b"grpc-status"] == b"0"
    assert kinds(wire)[:2] == [SETTINGS, SETTINGS]  # ours, then the ack of the client's
    ours = wire.frames()[0][3]
    advertised = dict(struct.unpack_from(">HI", ours, i) for i in range(0, len(ours), 6))
    assert advertised == {0x3: 1000, 0x6: 65536}  # max concurrent streams, max header list


async def test_raw_headers_in_continuations_and_ping(raw_server: Server) -> None:
    protocol, wire = connect(raw_server)
    block = request_headers()
    protocol.data_received(PREFACE + frame(PING, 0, 0, b"12345678"))
    protocol.data_received(frame(HEADERS, 0, 1, block[:3]))
    protocol.data_received(frame(CONTINUATION, 0, 1, block[3:7]))
    protocol.data_received(frame(CONTINUATION, END_HEADERS, 1, block[7:]))
    protocol.data_received(frame(DATA, END_STREAM, 1, message(b"x")))
    await asyncio.sleep(0.01)
    assert (PING, ACK, 0, b"12345678") in wire.frames()
    assert trailers(wire, 1)[b"grpc-status"] == b"0"


async def test_raw_data_waits_for_window(raw_server: Server) -> None:
    protocol, wire = connect(raw_server)
    settings_ = struct.pack(">HI", 0x4, 10)  # initial window 10 bytes
    protocol.data_received(PREFACE + frame(SETTINGS, 0, 0, settings_))
    protocol.data_received(frame(HEADERS, END_HEADERS, 1, request_headers("/test.S/Big")))
    protocol.data_received(frame(DATA, END_STREAM, 1, message(b"25")))
    await asyncio.sleep(0.01)
    sent = b"".join(p for k, _, s, p in wire.frames() if k == DATA)
    assert len(sent) == 10 and not trailers(wire, 1)
    protocol.data_received(frame(WINDOW_UPDATE, 0, 1, struct.pack(">I", 100)))
    sent = b"".join(p for k, _, s, p in wire.frames() if k == DATA)
    assert sent == message(b"z" * 25)
    assert trailers(wire, 1)[b"grpc-status"] == b"0"


@pytest.mark.parametrize(
    ("frames", "code"),
    [
        (b"GET / HTTP/1.1\r\n\r\n", 0x1),  # not HTTP/2
        (PREFACE + frame(HEADERS, END_HEADERS, 2, b""), 0x1),  # even stream id
        (PREFACE + frame(DATA, 0, 0, b""), 0x1),  # DATA on stream 0
        (PREFACE + frame(SETTINGS, 0, 0, b"12345"), 0x6),  # partial setting
        (PREFACE + frame(SETTINGS, 0, 0, struct.pack(">HI", 0x5, 100)), 0x1),  # max frame 100
        (PREFACE + frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", 0)), 0x1),  # increment 0
        (PREFACE + frame(HEADERS, END_HEADERS, 1, b"\x80"), 0x9),  # HPACK index 0
        (PREFACE + frame(HEADERS, 0, 1, b"") + frame(PING, 0, 0, b"x" * 8), 0x1),
        (PREFACE + b"\x00\x40\x01" + b"\x00" * 6 + b"x" * 16385, 0x6),  # oversized frame
    ],
)
async def test_raw_protocol_errors_end_the_connection(raw_server: Server, frames, code) -> None:
    protocol, wire = connect(raw_server)
    protocol.data_received(frames)
    goaways = [p for k, _, _, p in wire.frames() if k == GOAWAY]
    assert goaways and struct.unpack(">I", goaways[0][4:8])[0] == code
    assert wire.closed


async def test_raw_rst_stream_cancels(raw_server: Server) -> None:
    protocol, _ = connect(raw_server)
    protocol.data_received(
        PREFACE + frame(HEADERS, END_HEADERS, 1, request_headers("/test.S/Slow"))
    )
    protocol.data_received(frame(DATA, END_STREAM, 1, message(b"")))
    await asyncio.sleep(0.01)
    assert protocol.tasks()
    protocol.data_received(frame(RST_STREAM, 0, 1, struct.pack(">I", 0x8)))
    await asyncio.sleep(0.01)
    assert not protocol.tasks() and not protocol.streams


@st.composite
def frames(draw: st.DrawFn) -> bytes:
    """A frame of any known (or unknown) type, flags and stream; payloads valid-ish or not."""
    kind = draw(st.integers(0, 11))
    flags = draw(
        st.sampled_from([0, END_STREAM, END_HEADERS, END_STREAM | END_HEADERS, 0x8, 0x20, 0xFF])
    )
    stream = draw(st.sampled_from([0, 1, 2, 3, 5, 2**31 - 1]))
    payload = draw(
        st.one_of(
            st.binary(max_size=40),
            st.just(request_headers()),
            st.just(message(b"ok")),
            st.just(struct.pack(">I", 1000)),
            st.just(struct.pack(">HI", 4, 2**31)),
        )
    )
    return frame(kind, flags, stream, payload)


@settings(max_examples=examples(1000))
@given(st.lists(frames(), max_size=8), st.integers(1, 64))
async def test_any_frames_never_escape_the_protocol(raw_server, sequence, cut) -> None:
    count(SURFACE)
    protocol, wire = connect(raw_server)
    data = PREFACE + b"".join(sequence)
    for start in range(0, len(data), cut):  # arriving in pieces of any size
        protocol.data_received(data[start : start + cut])
    await asyncio.sleep(0)
    wire.frames()  # everything written is whole frames
    protocol.connection_lost(None)
    await asyncio.sleep(0)
    assert not protocol.tasks()


@settings(max_examples=examples(1000))
@given(st.binary(max_size=200))
async def test_any_bytes_never_escape_the_protocol(raw_server, data) -> None:
    count(SURFACE)
    protocol, wire = connect(raw_server)
    protocol.data_received(PREFACE + data)
    wire.frames()
    protocol.connection_lost(None)
