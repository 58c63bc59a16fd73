"""A gRPC server as an asyncio protocol: HTTP/2 framing, flow control and HPACK (`hpack`) done here,
on the loop that runs the handlers, so a call costs no thread hand-off and no second socket.

Why: grpc's own asyncio server spends some 250 µs of CPU on a unary call (its C core polls on a
thread of its own and hands every event to the loop), five times what an aiohttp request costs;
and the allocator could only reach it through a loopback relay. `Server` serves the same handlers
(`add_generic_rpc_handlers`, `add_registered_method_handlers`: what the generated
`add_*Servicer_to_server` functions and `grpc.method_handlers_generic_handler` call) on whatever
transport it is given: `Server.protocol` is a protocol factory, for a listener that has already
accepted (and maybe TLS-terminated) the connection.

Calls: unary-unary and unary-stream (a handler that returns, yields or `context.write`s); a
client-streaming or bidirectional method answers UNIMPLEMENTED. Requests may be gzip or deflate
compressed (`grpc-encoding`); answers are not. `grpc-timeout` is a deadline: the handler is
cancelled and the call ends DEADLINE_EXCEEDED. A message over `max_receive_message_length` ends the
call RESOURCE_EXHAUSTED, as grpc does. Status and message come from `context.abort`, `set_code` /
`set_details`, or an exception (UNKNOWN, `Unexpected <class>: text`, as grpc's Python server
says). Unknown services and methods answer UNIMPLEMENTED with grpc-go's wording.

HTTP/2: the connection preface, SETTINGS (the client's max frame size, initial window and table
size honoured; ours: `MAX_CONCURRENT_STREAMS`), PING answered, WINDOW_UPDATE (data waits for
window on both the stream and the connection), RST_STREAM (cancels the handler), CONTINUATION,
padding, PRIORITY ignored, GOAWAY. A protocol violation ends the connection with GOAWAY and its
error code; a stream-level one resets just that stream. Keepalive as the allocator's grpc options
were: a connection without calls for `max_connection_idle` is sent GOAWAY and closed; a client
that pings more than once per `min_ping_interval` with nothing sent in between gets, at the third
such ping, GOAWAY ENHANCE_YOUR_CALM "too_many_pings" (grpc-go's enforcement policy).

`stop(grace)` sends every connection GOAWAY (calls already started run on; new ones are refused),
waits up to `grace` for running calls, cancels the rest and closes the connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import struct
import time
import zlib
from collections import deque
from collections.abc import Iterable, Mapping
from typing import Any, NoReturn, cast

import grpc

from .hpack import Decoder, HPACKError, encode

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

# frame types
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY = range(8)
WINDOW_UPDATE, CONTINUATION = 8, 9
# flags
END_STREAM = ACK = 0x1
END_HEADERS, PADDED, PRIORITY_FLAG = 0x4, 0x8, 0x20
# error codes
NO_ERROR, PROTOCOL_ERROR, INTERNAL_ERROR, FLOW_CONTROL_ERROR = 0x0, 0x1, 0x2, 0x3
STREAM_CLOSED, FRAME_SIZE_ERROR, REFUSED_STREAM, CANCEL = 0x5, 0x6, 0x7, 0x8
COMPRESSION_ERROR, ENHANCE_YOUR_CALM = 0x9, 0xB
# settings
SETTINGS_HEADER_TABLE_SIZE, SETTINGS_ENABLE_PUSH, SETTINGS_MAX_CONCURRENT_STREAMS = 0x1, 0x2, 0x3
SETTINGS_INITIAL_WINDOW_SIZE, SETTINGS_MAX_FRAME_SIZE = 0x4, 0x5

DEFAULT_WINDOW = 65_535
MAX_WINDOW = 2**31 - 1
MIN_FRAME_SIZE, MAX_FRAME_SIZE = 16_384, 2**24 - 1
MAX_CONCURRENT_STREAMS = 1000
MAX_HEADER_BLOCK = 64 * 1024
# Window given back once this much of it was used (the connection's and each stream's).
WINDOW_REFILL = DEFAULT_WINDOW // 4
DEFAULT_MAX_RECEIVE = 4 * 1024 * 1024
MAX_PING_STRIKES = 2

_FRAME = struct.Struct(">IBI")  # length << 8 | type, flags, stream id
_HEAD = struct.Struct(">BI")  # compressed flag, message length

_TIMEOUT_UNITS = {b"H": 3600.0, b"M": 60.0, b"S": 1.0, b"m": 1e-3, b"u": 1e-6, b"n": 1e-9}
_ACCEPT_ENCODING = b"identity,deflate,gzip"
_RESPONSE_HEADERS = encode(
    [
        (b":status", b"200"),
        (b"content-type", b"application/grpc"),
        (b"grpc-accept-encoding", _ACCEPT_ENCODING),
    ]
)
_OK_TRAILERS = encode([(b"grpc-status", b"0")])


def frame(kind: int, flags: int, stream_id: int, payload: bytes = b"") -> bytes:
    return _FRAME.pack(len(payload) << 8 | kind, flags, stream_id) + payload


def percent_encode(message: str) -> bytes:
    """`grpc-message`'s encoding: UTF-8, with '%' and bytes outside printable ASCII as %XX."""
    out = bytearray()
    for byte in message.encode():
        if 0x20 <= byte <= 0x7E and byte != 0x25:
            out.append(byte)
        else:
            out += b"%%%02X" % byte
    return bytes(out)


def status_block(code: grpc.StatusCode, message: str, headers: bool) -> bytes:
    """Trailers (`headers`: a trailers-only answer, with the response headers too)."""
    fields = [(b"grpc-status", str(code.value[0]).encode())]
    if message:
        fields.append((b"grpc-message", percent_encode(message)))
    block = encode(fields)
    return _RESPONSE_HEADERS + block if headers else block


def parse_timeout(value: bytes) -> float | None:
    """`grpc-timeout` in seconds (None: malformed)."""
    if not 2 <= len(value) <= 9 or not value[:-1].isdigit():
        return None
    unit = _TIMEOUT_UNITS.get(value[-1:])
    return None if unit is None else int(value[:-1]) * unit


class AbortError(Exception):
    """Raised by `ServicerContext.abort`: ends the call with its status."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code = code
        self.details = details


class _ConnectionError(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


class _StreamError(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


class _CallDetails(grpc.HandlerCallDetails):  # type: ignore[misc]  # grpc is untyped
    def __init__(self, method: str, metadata: tuple[tuple[str, str], ...]) -> None:
        self.method = method
        self.invocation_metadata = metadata


class ServicerContext:
    """What a handler gets as `context` (the part of `grpc.aio.ServicerContext` handlers use)."""

    def __init__(self, stream: _Stream) -> None:
        self._stream = stream
        self._code: grpc.StatusCode | None = None
        self._details = ""

    async def abort(
        self, code: grpc.StatusCode, details: str = "", trailing_metadata: Any = ()
    ) -> NoReturn:
        del trailing_metadata
        raise AbortError(code, details)

    async def write(self, message: Any) -> None:
        await self._stream.write_message(message)

    def set_code(self, code: grpc.StatusCode) -> None:
        self._code = code

    def set_details(self, details: str) -> None:
        self._details = details

    def code(self) -> grpc.StatusCode | None:
        return self._code

    def details(self) -> str:
        return self._details

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self._stream.metadata

    def peer(self) -> str:
        return self._stream.connection.peer

    def time_remaining(self) -> float | None:
        deadline = self._stream.deadline
        return None if deadline is None else max(0.0, deadline - time.monotonic())

    def cancelled(self) -> bool:
        return self._stream.cancelled

    def done(self) -> bool:
        return self._stream.finished


class _Stream:
    """One call: its request as it arrives, its handler task, its answer waiting for window."""

    def __init__(self, connection: _Connection, stream_id: int, window: int) -> None:
        self.connection = connection
        self.id = stream_id
        self.send_window = window
        self.unacked = 0
        self.body = bytearray()
        self.path = ""
        self.metadata: tuple[tuple[str, str], ...] = ()
        self.encoding = b"identity"
        self.deadline: float | None = None
        self.method: grpc.RpcMethodHandler | None = None
        self.task: asyncio.Task[None] | None = None
        self.timer: asyncio.TimerHandle | None = None
        self.outbox: deque[tuple[int, bytes, int]] = deque()  # (kind, payload, flags)
        self.drained: asyncio.Future[None] | None = None
        self.headers_sent = False
        self.remote_closed = False
        self.finished = False
        self.cancelled = False

    async def write_message(self, message: Any) -> None:
        if self.finished:
            raise asyncio.CancelledError
        assert self.method is not None
        serialize = self.method.response_serializer
        data = serialize(message) if serialize is not None else message
        self.connection.send_message(self, bytes(data))
        if self.outbox:  # wait for window: backpressure on a streaming handler
            self.drained = asyncio.get_running_loop().create_future()
            await self.drained


class Server:
    """Handlers and the connections serving them (see the module docstring)."""

    def __init__(
        self,
        *,
        max_receive_message_length: int = DEFAULT_MAX_RECEIVE,
        max_connection_idle: float | None = 300.0,
        min_ping_interval: float = 60.0,
    ) -> None:
        self.max_receive = max_receive_message_length
        self.max_connection_idle = max_connection_idle
        self.min_ping_interval = min_ping_interval
        self._methods: dict[str, grpc.RpcMethodHandler] = {}  # registered, and found before
        self._generic: list[grpc.GenericRpcHandler] = []
        self.connections: set[_Connection] = set()
        self.stopping = False

    # -- grpc's registration API --------------------------------------------------------------

    def add_generic_rpc_handlers(self, handlers: Iterable[grpc.GenericRpcHandler]) -> None:
        self._generic.extend(handlers)

    def add_registered_method_handlers(
        self, service: str, method_handlers: Mapping[str, grpc.RpcMethodHandler]
    ) -> None:
        for name, handler in method_handlers.items():
            self._methods[f"/{service}/{name}"] = handler

    def lookup(self, path: str) -> grpc.RpcMethodHandler | None:
        found = self._methods.get(path)
        if found is not None:
            return found
        for generic in self._generic:
            found = generic.service(_CallDetails(path, ()))
            if found is not None:
                self._methods[path] = found  # only paths served: a client picks the others
                return found
        return None

    # -- connections --------------------------------------------------------------------------

    def protocol(self) -> asyncio.Protocol:
        return _Connection(self)

    async def stop(self, grace: float | None) -> None:
        self.stopping = True
        for connection in list(self.connections):
            connection.go_away(NO_ERROR)
        tasks = [t for c in self.connections for t in c.tasks()]
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=grace)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        for connection in list(self.connections):
            connection.close()


class _Connection(asyncio.Protocol):
    def __init__(self, server: Server) -> None:
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.peer = ""
        self.buffer = bytearray()
        self.preface = False
        self.decoder = Decoder()
        self.streams: dict[int, _Stream] = {}
        self.last_stream_id = 0
        self.peer_window = DEFAULT_WINDOW
        self.peer_max_frame = MIN_FRAME_SIZE
        self.send_window = DEFAULT_WINDOW
        self.unacked = 0
        self.continuing: tuple[int, int, bytearray] | None = None  # stream, flags, block
        self.going_away = False
        self.closed = False
        self.out: list[bytes] | None = None  # frames batched during one data_received
        self.idle_timer: asyncio.TimerHandle | None = None
        self.ping_strikes = 0
        self.last_ping = 0.0
        self.sent_since_ping = True

    # -- transport events ---------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)
        peer = transport.get_extra_info("peername")
        if isinstance(peer, tuple) and len(peer) >= 2:
            host = str(peer[0])
            self.peer = f"ipv6:[{host}]:{peer[1]}" if ":" in host else f"ipv4:{host}:{peer[1]}"
        self.server.connections.add(self)
        if self.server.stopping:
            self.go_away(NO_ERROR)
            return
        self._write(
            frame(
                SETTINGS,
                0,
                0,
                struct.pack(">HI", SETTINGS_MAX_CONCURRENT_STREAMS, MAX_CONCURRENT_STREAMS),
            )
        )
        self._arm_idle()

    def data_received(self, data: bytes) -> None:
        if self.closed:
            return
        self.buffer += data
        self.out = []
        try:
            self._parse()
        except _ConnectionError as err:
            self._fail(err.code, str(err))
        finally:
            out, self.out = self.out, None
            if out and self.transport is not None and not self.transport.is_closing():
                self.transport.write(b"".join(out))

    def eof_received(self) -> bool:
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        del exc
        self.closed = True
        self.server.connections.discard(self)
        if self.idle_timer is not None:
            self.idle_timer.cancel()
        for stream in list(self.streams.values()):
            self._end_stream(stream, cancel=True)
        self.transport = None

    # -- writing ------------------------------------------------------------------------------

    def _write(self, data: bytes) -> None:
        if self.out is not None:
            self.out.append(data)
        elif self.transport is not None and not self.transport.is_closing():
            self.transport.write(data)

    def tasks(self) -> list[asyncio.Task[None]]:
        return [s.task for s in self.streams.values() if s.task is not None and not s.task.done()]

    def go_away(self, code: int, debug: bytes = b"") -> None:
        if self.going_away or self.closed:
            return
        self.going_away = True
        self._write(frame(GOAWAY, 0, 0, struct.pack(">II", self.last_stream_id, code) + debug))
        if not self.streams:
            self.close()

    def close(self) -> None:
        """Close after whatever this callback has still to write."""
        if self.transport is None:
            return
        if self.out:
            out, self.out = self.out, []
            if not self.transport.is_closing():
                self.transport.write(b"".join(out))
        self.transport.close()

    def _fail(self, code: int, message: str) -> None:
        self.going_away = False
        self.go_away(code, message.encode()[:256])
        self.close()

    def _arm_idle(self) -> None:
        idle = self.server.max_connection_idle
        if idle is None or self.closed:
            return
        loop = asyncio.get_running_loop()
        self.idle_timer = loop.call_later(idle, self.go_away, NO_ERROR, b"max_idle")

    def _sent(self) -> None:
        self.sent_since_ping = True

    # -- frames in ----------------------------------------------------------------------------

    def _parse(self) -> None:
        buffer = self.buffer
        pos = 0
        if not self.preface:
            if len(buffer) < len(PREFACE):
                if not PREFACE.startswith(bytes(buffer)):
                    raise _ConnectionError(PROTOCOL_ERROR, "invalid connection preface")
                return
            if buffer[: len(PREFACE)] != PREFACE:
                raise _ConnectionError(PROTOCOL_ERROR, "invalid connection preface")
            self.preface = True
            pos = len(PREFACE)
        try:
            while len(buffer) - pos >= 9 and not self.closed:
                head, flags, stream_id = _FRAME.unpack_from(buffer, pos)
                length, kind = head >> 8, head & 0xFF
                if length > MIN_FRAME_SIZE:
                    raise _ConnectionError(FRAME_SIZE_ERROR, f"frame of {length} bytes")
                end = pos + 9 + length
                if end > len(buffer):
                    break
                payload = bytes(buffer[pos + 9 : end])
                pos = end
                self._frame(kind, flags, stream_id & MAX_WINDOW, payload)
        finally:
            del buffer[:pos]

    def _frame(self, kind: int, flags: int, stream_id: int, payload: bytes) -> None:
        if self.continuing is not None and kind != CONTINUATION:
            raise _ConnectionError(PROTOCOL_ERROR, "expected CONTINUATION")
        if kind == DATA:
            self._data(flags, stream_id, payload)
        elif kind == HEADERS:
            self._headers(flags, stream_id, payload)
        elif kind == CONTINUATION:
            self._continuation(flags, stream_id, payload)
        elif kind == SETTINGS:
            self._settings(flags, stream_id, payload)
        elif kind == PING:
            self._ping(flags, stream_id, payload)
        elif kind == WINDOW_UPDATE:
            self._window_update(stream_id, payload)
        elif kind == RST_STREAM:
            if stream_id == 0 or len(payload) != 4:
                raise _ConnectionError(PROTOCOL_ERROR, "malformed RST_STREAM")
            if stream_id > self.last_stream_id:
                raise _ConnectionError(PROTOCOL_ERROR, "RST_STREAM on an idle stream")
            stream = self.streams.get(stream_id)
            if stream is not None:
                self._end_stream(stream, cancel=True)
        elif kind == GOAWAY:
            if stream_id != 0 or len(payload) < 8:
                raise _ConnectionError(PROTOCOL_ERROR, "malformed GOAWAY")
            self.going_away = True
            if not self.streams:
                self.close()
        elif kind == PRIORITY:
            if stream_id == 0 or len(payload) != 5:
                raise _ConnectionError(PROTOCOL_ERROR, "malformed PRIORITY")
        elif kind == PUSH_PROMISE:
            raise _ConnectionError(PROTOCOL_ERROR, "PUSH_PROMISE from a client")
        # other frame types are ignored, as RFC 9113 says

    def _settings(self, flags: int, stream_id: int, payload: bytes) -> None:
        if stream_id != 0:
            raise _ConnectionError(PROTOCOL_ERROR, "SETTINGS on a stream")
        if flags & ACK:
            if payload:
                raise _ConnectionError(FRAME_SIZE_ERROR, "SETTINGS ack with a payload")
            return
        if len(payload) % 6:
            raise _ConnectionError(FRAME_SIZE_ERROR, "SETTINGS of a partial entry")
        for offset in range(0, len(payload), 6):
            key, value = struct.unpack_from(">HI", payload, offset)
            if key == SETTINGS_INITIAL_WINDOW_SIZE:
                if value > MAX_WINDOW:
                    raise _ConnectionError(FLOW_CONTROL_ERROR, "initial window too large")
                delta, self.peer_window = value - self.peer_window, value
                for stream in self.streams.values():
                    stream.send_window += delta
            elif key == SETTINGS_MAX_FRAME_SIZE:
                if not MIN_FRAME_SIZE <= value <= MAX_FRAME_SIZE:
                    raise _ConnectionError(PROTOCOL_ERROR, "invalid max frame size")
                self.peer_max_frame = value
            elif key == SETTINGS_ENABLE_PUSH and value > 1:
                raise _ConnectionError(PROTOCOL_ERROR, "invalid enable push")
        self._write(frame(SETTINGS, ACK, 0))
        self._flush_all()

    def _ping(self, flags: int, stream_id: int, payload: bytes) -> None:
        if stream_id != 0 or len(payload) != 8:
            raise _ConnectionError(PROTOCOL_ERROR if stream_id else FRAME_SIZE_ERROR, "bad PING")
        if flags & ACK:
            return
        now = time.monotonic()
        if self.sent_since_ping:
            self.sent_since_ping, self.ping_strikes = False, 0
        elif now - self.last_ping < self.server.min_ping_interval:
            self.ping_strikes += 1
            if self.ping_strikes > MAX_PING_STRIKES:
                self._fail(ENHANCE_YOUR_CALM, "too_many_pings")
                return
        self.last_ping = now
        self._write(frame(PING, ACK, 0, payload))

    def _window_update(self, stream_id: int, payload: bytes) -> None:
        if len(payload) != 4:
            raise _ConnectionError(FRAME_SIZE_ERROR, "malformed WINDOW_UPDATE")
        increment = struct.unpack(">I", payload)[0] & MAX_WINDOW
        if stream_id == 0:
            if increment == 0:
                raise _ConnectionError(PROTOCOL_ERROR, "window increment 0")
            self.send_window += increment
            if self.send_window > MAX_WINDOW:
                raise _ConnectionError(FLOW_CONTROL_ERROR, "window above 2^31-1")
            self._flush_all()
            return
        stream = self.streams.get(stream_id)
        if stream is None:
            if stream_id > self.last_stream_id:
                raise _ConnectionError(PROTOCOL_ERROR, "WINDOW_UPDATE on an idle stream")
            return
        if increment == 0:
            self._reset(stream, PROTOCOL_ERROR)
            return
        stream.send_window += increment
        if stream.send_window > MAX_WINDOW:
            self._reset(stream, FLOW_CONTROL_ERROR)
            return
        self._flush(stream)

    def _data(self, flags: int, stream_id: int, payload: bytes) -> None:
        if stream_id == 0:
            raise _ConnectionError(PROTOCOL_ERROR, "DATA on stream 0")
        self.unacked += len(payload)
        if self.unacked >= WINDOW_REFILL:
            self._write(frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", self.unacked)))
            self.unacked = 0
        data = self._unpad(flags, payload)
        stream = self.streams.get(stream_id)
        if stream is None or stream.remote_closed:
            if stream_id > self.last_stream_id:
                raise _ConnectionError(PROTOCOL_ERROR, "DATA on an idle stream")
            self._write(frame(RST_STREAM, 0, stream_id, struct.pack(">I", STREAM_CLOSED)))
            return
        stream.unacked += len(payload)
        if stream.method is not None:
            stream.body += data
            if len(stream.body) > self.server.max_receive + _HEAD.size:
                self._answer_error(
                    stream,
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"grpc: received message larger than max ({len(stream.body) - _HEAD.size}"
                    f" vs. {self.server.max_receive})",
                )
                self._reset(stream, CANCEL)
                return
        if flags & END_STREAM:
            stream.remote_closed = True
            self._start(stream)
        elif stream.unacked >= WINDOW_REFILL:
            self._write(frame(WINDOW_UPDATE, 0, stream_id, struct.pack(">I", stream.unacked)))
            stream.unacked = 0

    @staticmethod
    def _unpad(flags: int, payload: bytes) -> bytes:
        if not flags & PADDED:
            return payload
        if not payload or payload[0] >= len(payload):
            raise _ConnectionError(PROTOCOL_ERROR, "padding longer than the frame")
        return payload[1 : len(payload) - payload[0]]

    def _headers(self, flags: int, stream_id: int, payload: bytes) -> None:
        if stream_id == 0:
            raise _ConnectionError(PROTOCOL_ERROR, "HEADERS on stream 0")
        block = self._unpad(flags, payload)
        if flags & PRIORITY_FLAG:
            if len(block) < 5:
                raise _ConnectionError(PROTOCOL_ERROR, "HEADERS too short for its priority")
            block = block[5:]
        if flags & END_HEADERS:
            self._header_block(stream_id, flags, block)
        else:
            self.continuing = (stream_id, flags, bytearray(block))

    def _continuation(self, flags: int, stream_id: int, payload: bytes) -> None:
        if self.continuing is None or self.continuing[0] != stream_id:
            raise _ConnectionError(PROTOCOL_ERROR, "unexpected CONTINUATION")
        block = self.continuing[2]
        block += payload
        if len(block) > MAX_HEADER_BLOCK:
            raise _ConnectionError(ENHANCE_YOUR_CALM, "header block too large")
        if flags & END_HEADERS:
            opened_with = self.continuing[1]
            self.continuing = None
            self._header_block(stream_id, opened_with, bytes(block))

    def _header_block(self, stream_id: int, flags: int, block: bytes) -> None:
        try:
            headers = self.decoder.decode(block)
        except HPACKError as err:
            raise _ConnectionError(COMPRESSION_ERROR, str(err)) from err
        stream = self.streams.get(stream_id)
        if stream is not None:  # trailers from the client
            if stream.remote_closed or not flags & END_STREAM:
                self._reset(stream, PROTOCOL_ERROR)
                return
            stream.remote_closed = True
            self._start(stream)
            return
        if stream_id % 2 == 0 or stream_id <= self.last_stream_id:
            raise _ConnectionError(PROTOCOL_ERROR, f"HEADERS opening stream {stream_id}")
        self.last_stream_id = stream_id
        if self.going_away or len(self.streams) >= MAX_CONCURRENT_STREAMS:
            self._write(frame(RST_STREAM, 0, stream_id, struct.pack(">I", REFUSED_STREAM)))
            return
        stream = _Stream(self, stream_id, self.peer_window)
        self.streams[stream_id] = stream
        if self.idle_timer is not None:
            self.idle_timer.cancel()
            self.idle_timer = None
        self._open(stream, headers)
        if flags & END_STREAM and not stream.finished:
            stream.remote_closed = True
            self._start(stream)

    def _open(self, stream: _Stream, headers: list[tuple[bytes, bytes]]) -> None:
        """Check a call's headers and find its method (or answer at once)."""
        method = path = content_type = None
        metadata: list[tuple[str, str]] = []
        for name, value in headers:
            if name == b":path":
                path = value
            elif name == b":method":
                method = value
            elif name == b"content-type":
                content_type = value
            elif name == b"grpc-timeout":
                timeout = parse_timeout(value)
                if timeout is not None:
                    stream.deadline = time.monotonic() + timeout
            elif name == b"grpc-encoding":
                stream.encoding = value
            elif not name.startswith(b":"):
                metadata.append((name.decode("latin-1"), value.decode("latin-1")))
        stream.metadata = tuple(metadata)
        if method != b"POST":
            self._answer_http(stream, b"405")
            return
        if content_type is None or not content_type.startswith(b"application/grpc"):
            self._answer_http(stream, b"415")
            return
        if path is None:
            self._reset(stream, PROTOCOL_ERROR)
            return
        stream.path = path.decode("latin-1")
        handler = self.server.lookup(stream.path)
        if handler is None:
            self._answer_error(stream, grpc.StatusCode.UNIMPLEMENTED, _unknown(stream.path))
            return
        if handler.request_streaming:
            self._answer_error(
                stream, grpc.StatusCode.UNIMPLEMENTED, "client streaming is not served here"
            )
            return
        stream.method = handler
        if stream.deadline is not None:
            delay = max(0.0, stream.deadline - time.monotonic())
            stream.timer = asyncio.get_running_loop().call_later(delay, self._expire, stream)

    # -- calls --------------------------------------------------------------------------------

    def _start(self, stream: _Stream) -> None:
        if stream.method is None or stream.task is not None or stream.finished:
            return
        try:
            request = self._message(stream)
        except AbortError as err:
            self._answer_error(stream, err.code, err.details)
            return
        loop = asyncio.get_running_loop()
        stream.task = loop.create_task(self._call(stream, stream.method, request))

    def _message(self, stream: _Stream) -> bytes:
        body = stream.body
        if len(body) < _HEAD.size:
            raise AbortError(grpc.StatusCode.INTERNAL, "grpc: no request message")
        compressed, length = _HEAD.unpack_from(body)
        if len(body) != _HEAD.size + length:
            raise AbortError(grpc.StatusCode.INTERNAL, "grpc: request is not one whole message")
        if length > self.server.max_receive:
            raise AbortError(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"grpc: received message larger than max ({length} vs. {self.server.max_receive})",
            )
        data = bytes(body[_HEAD.size :])
        if not compressed:
            return data
        if stream.encoding not in (b"gzip", b"deflate"):
            if stream.encoding == b"identity":
                raise AbortError(
                    grpc.StatusCode.INTERNAL, "grpc: compressed flag set with identity encoding"
                )
            raise AbortError(
                grpc.StatusCode.UNIMPLEMENTED,
                f'grpc: Decompressor is not installed for grpc-encoding "{stream.encoding.decode("latin-1")}"',
            )
        inflater = zlib.decompressobj(31 if stream.encoding == b"gzip" else 15)
        try:
            data = inflater.decompress(data, self.server.max_receive + 1)
        except zlib.error as err:
            raise AbortError(
                grpc.StatusCode.INTERNAL, f"grpc: failed to decompress: {err}"
            ) from err
        if len(data) > self.server.max_receive or inflater.unconsumed_tail:
            raise AbortError(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"grpc: received message after decompression larger than max ({self.server.max_receive})",
            )
        return data

    async def _call(self, stream: _Stream, method: grpc.RpcMethodHandler, raw: bytes) -> None:
        context = ServicerContext(stream)
        try:
            try:
                request = (
                    raw if method.request_deserializer is None else method.request_deserializer(raw)
                )
            except Exception as err:
                raise AbortError(
                    grpc.StatusCode.INTERNAL, "Exception deserializing request!"
                ) from err
            if method.response_streaming:
                result = method.unary_stream(request, context)
                if inspect.isasyncgen(result):
                    async for message in result:
                        await stream.write_message(message)
                elif inspect.isawaitable(result):
                    await result
            else:
                response = await method.unary_unary(request, context)
                if context.code() in (None, grpc.StatusCode.OK):
                    serialize = method.response_serializer
                    data = serialize(response) if serialize is not None else response
                    self.send_message(stream, bytes(data), last=True)
                    return
            code = context.code() or grpc.StatusCode.OK
            self._answer_error(stream, code, context.details())
        except AbortError as err:
            self._answer_error(stream, err.code, err.details)
        except asyncio.CancelledError:
            if not stream.finished:
                self._reset(stream, CANCEL)
            raise
        except Exception as err:
            self._answer_error(stream, grpc.StatusCode.UNKNOWN, f"Unexpected {type(err)}: {err}")

    def _expire(self, stream: _Stream) -> None:
        stream.timer = None
        if stream.finished:
            return
        task = stream.task
        self._answer_error(stream, grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded")
        if task is not None:
            task.cancel()

    # -- frames out ---------------------------------------------------------------------------

    def send_message(self, stream: _Stream, data: bytes, last: bool = False) -> None:
        """One response message (`last`: then the OK trailers), its headers first if due."""
        if stream.finished:
            return
        if not stream.headers_sent:
            stream.headers_sent = True
            stream.outbox.append((HEADERS, _RESPONSE_HEADERS, END_HEADERS))
        stream.outbox.append((DATA, _HEAD.pack(0, len(data)) + data, 0))
        if last:
            stream.outbox.append((HEADERS, _OK_TRAILERS, END_HEADERS | END_STREAM))
        self._flush(stream)

    def _answer_error(self, stream: _Stream, code: grpc.StatusCode, message: str) -> None:
        """End the call with a status (trailers-only when nothing was sent yet)."""
        if stream.finished:
            return
        block = status_block(code, message, headers=not stream.headers_sent)
        stream.headers_sent = True
        stream.outbox.append((HEADERS, block, END_HEADERS | END_STREAM))
        self._flush(stream)

    def _answer_http(self, stream: _Stream, status: bytes) -> None:
        block = encode([(b":status", status), (b"content-type", b"text/plain")])
        stream.outbox.append((HEADERS, block, END_HEADERS | END_STREAM))
        self._flush(stream)

    def _flush(self, stream: _Stream) -> None:
        """Send what the windows allow of `stream`'s answer, in order."""
        parts = []
        outbox = stream.outbox
        while outbox:
            kind, payload, flags = outbox[0]
            if kind == DATA:
                size = min(len(payload), self.peer_max_frame)
                window = min(self.send_window, stream.send_window)
                if size > window:
                    if window <= 0:
                        break
                    size = window
                self.send_window -= size
                stream.send_window -= size
                parts.append(frame(DATA, 0, stream.id, payload[:size]))
                if size < len(payload):
                    outbox[0] = (kind, payload[size:], flags)
                    continue
            else:
                parts += self._header_frames(stream.id, payload, flags)
            outbox.popleft()
            if flags & END_STREAM:
                stream.finished = True
        if parts:
            self._sent()
            self._write(b"".join(parts))
        if not outbox and stream.drained is not None and not stream.drained.done():
            stream.drained.set_result(None)
        if stream.finished and not outbox:
            self._end_stream(stream, cancel=False)

    def _header_frames(self, stream_id: int, block: bytes, flags: int) -> list[bytes]:
        size = self.peer_max_frame
        if len(block) <= size:
            return [frame(HEADERS, flags, stream_id, block)]
        end_stream = flags & END_STREAM
        frames = [frame(HEADERS, end_stream, stream_id, block[:size])]
        for start in range(size, len(block), size):
            last = start + size >= len(block)
            chunk = block[start : start + size]
            frames.append(frame(CONTINUATION, END_HEADERS if last else 0, stream_id, chunk))
        return frames

    def _flush_all(self) -> None:
        for stream in list(self.streams.values()):
            if stream.outbox:
                self._flush(stream)

    def _reset(self, stream: _Stream, code: int) -> None:
        self._write(frame(RST_STREAM, 0, stream.id, struct.pack(">I", code)))
        self._end_stream(stream, cancel=True)

    def _end_stream(self, stream: _Stream, cancel: bool) -> None:
        """Forget a finished (or cancelled) stream."""
        if self.streams.pop(stream.id, None) is None:
            return
        stream.finished = True
        stream.outbox.clear()
        if stream.timer is not None:
            stream.timer.cancel()
        if stream.drained is not None and not stream.drained.done():
            stream.drained.set_result(None)
        task = stream.task
        if cancel and task is not None and not task.done() and task is not _current_task():
            stream.cancelled = True
            task.cancel()
        if not self.streams:
            if self.going_away:
                self.close()
            elif self.idle_timer is None:
                self._arm_idle()


def _current_task() -> asyncio.Task[Any] | None:
    with contextlib.suppress(RuntimeError):
        return asyncio.current_task()
    return None


def _unknown(path: str) -> str:
    """grpc-go's text for a method it does not serve."""
    service, sep, method = path[1:].rpartition("/")
    if not path.startswith("/") or not sep:
        return f'malformed method name: "{path}"'
    return f"unknown method {method} for service {service}"
