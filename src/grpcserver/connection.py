"""One HTTP/2 connection of `server.Server` (an asyncio protocol): the frames in, the calls their
streams carry (`calls.Stream`), and the answers out, each waiting for window as flow control says
(see the `server` module docstring)."""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import struct
import time
from typing import Any, Protocol, cast

import grpc

from .calls import (
    MESSAGE_HEAD,
    OK_TRAILERS,
    RESPONSE_HEADERS,
    AbortError,
    ServicerContext,
    Stream,
    request_message,
    status_block,
    unknown_method,
)
from .frames import (
    ACK,
    CANCEL,
    COMPRESSION_ERROR,
    CONTINUATION,
    DATA,
    DEFAULT_WINDOW,
    END_HEADERS,
    END_STREAM,
    ENHANCE_YOUR_CALM,
    FLOW_CONTROL_ERROR,
    FRAME_HEAD,
    FRAME_SIZE_ERROR,
    GOAWAY,
    HEADERS,
    MAX_CONCURRENT_STREAMS,
    MAX_FRAME_SIZE,
    MAX_HEADER_BLOCK,
    MAX_HEADER_LIST,
    MAX_PING_STRIKES,
    MAX_WINDOW,
    MIN_FRAME_SIZE,
    NO_ERROR,
    OUR_SETTINGS,
    PING,
    PREFACE,
    PRIORITY,
    PRIORITY_FLAG,
    PROTOCOL_ERROR,
    PUSH_PROMISE,
    REFUSED_STREAM,
    RST_STREAM,
    SETTINGS,
    SETTINGS_ENABLE_PUSH,
    SETTINGS_INITIAL_WINDOW_SIZE,
    SETTINGS_MAX_FRAME_SIZE,
    STREAM_CLOSED,
    WINDOW_REFILL,
    WINDOW_UPDATE,
    ProtocolError,
    frame,
    header_frames,
    unpad,
)
from .hpack import Decoder, HPACKError, encode


class Host(Protocol):
    """What a connection needs of its server (`server.Server`)."""

    max_receive: int
    max_connection_idle: float | None
    min_ping_interval: float
    connections: set[Connection]
    stopping: bool

    def lookup(self, path: str) -> grpc.RpcMethodHandler | None: ...


class Connection(asyncio.Protocol):
    def __init__(self, server: Host) -> None:
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.peer = ""
        self.buffer = bytearray()
        self.preface = False
        self.decoder = Decoder(max_header_list=MAX_HEADER_LIST)
        self.streams: dict[int, Stream] = {}
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
        self._write(frame(SETTINGS, 0, 0, OUR_SETTINGS))
        self._arm_idle()

    def data_received(self, data: bytes) -> None:
        if self.closed:
            return
        self.buffer += data
        self.out = []
        try:
            self._parse()
        except ProtocolError as err:
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
                    raise ProtocolError(PROTOCOL_ERROR, "invalid connection preface")
                return
            if buffer[: len(PREFACE)] != PREFACE:
                raise ProtocolError(PROTOCOL_ERROR, "invalid connection preface")
            self.preface = True
            pos = len(PREFACE)
        try:
            while len(buffer) - pos >= 9 and not self.closed:
                head, flags, stream_id = FRAME_HEAD.unpack_from(buffer, pos)
                length, kind = head >> 8, head & 0xFF
                if length > MIN_FRAME_SIZE:
                    raise ProtocolError(FRAME_SIZE_ERROR, f"frame of {length} bytes")
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
            raise ProtocolError(PROTOCOL_ERROR, "expected CONTINUATION")
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
                raise ProtocolError(PROTOCOL_ERROR, "malformed RST_STREAM")
            if stream_id > self.last_stream_id:
                raise ProtocolError(PROTOCOL_ERROR, "RST_STREAM on an idle stream")
            stream = self.streams.get(stream_id)
            if stream is not None:
                self._end_stream(stream, cancel=True)
        elif kind == GOAWAY:
            if stream_id != 0 or len(payload) < 8:
                raise ProtocolError(PROTOCOL_ERROR, "malformed GOAWAY")
            self.going_away = True
            if not self.streams:
                self.close()
        elif kind == PRIORITY:
            if stream_id == 0 or len(payload) != 5:
                raise ProtocolError(PROTOCOL_ERROR, "malformed PRIORITY")
        elif kind == PUSH_PROMISE:
            raise ProtocolError(PROTOCOL_ERROR, "PUSH_PROMISE from a client")
        # other frame types are ignored, as RFC 9113 says

    def _settings(self, flags: int, stream_id: int, payload: bytes) -> None:
        if stream_id != 0:
            raise ProtocolError(PROTOCOL_ERROR, "SETTINGS on a stream")
        if flags & ACK:
            if payload:
                raise ProtocolError(FRAME_SIZE_ERROR, "SETTINGS ack with a payload")
            return
        if len(payload) % 6:
            raise ProtocolError(FRAME_SIZE_ERROR, "SETTINGS of a partial entry")
        for offset in range(0, len(payload), 6):
            key, value = struct.unpack_from(">HI", payload, offset)
            if key == SETTINGS_INITIAL_WINDOW_SIZE:
                if value > MAX_WINDOW:
                    raise ProtocolError(FLOW_CONTROL_ERROR, "initial window too large")
                delta, self.peer_window = value - self.peer_window, value
                for stream in self.streams.values():
                    stream.send_window += delta
            elif key == SETTINGS_MAX_FRAME_SIZE:
                if not MIN_FRAME_SIZE <= value <= MAX_FRAME_SIZE:
                    raise ProtocolError(PROTOCOL_ERROR, "invalid max frame size")
                self.peer_max_frame = value
            elif key == SETTINGS_ENABLE_PUSH and value > 1:
                raise ProtocolError(PROTOCOL_ERROR, "invalid enable push")
        self._write(frame(SETTINGS, ACK, 0))
        self._flush_all()

    def _ping(self, flags: int, stream_id: int, payload: bytes) -> None:
        if stream_id != 0 or len(payload) != 8:
            raise ProtocolError(PROTOCOL_ERROR if stream_id else FRAME_SIZE_ERROR, "bad PING")
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
            raise ProtocolError(FRAME_SIZE_ERROR, "malformed WINDOW_UPDATE")
        increment = struct.unpack(">I", payload)[0] & MAX_WINDOW
        if stream_id == 0:
            if increment == 0:
                raise ProtocolError(PROTOCOL_ERROR, "window increment 0")
            self.send_window += increment
            if self.send_window > MAX_WINDOW:
                raise ProtocolError(FLOW_CONTROL_ERROR, "window above 2^31-1")
            self._flush_all()
            return
        stream = self.streams.get(stream_id)
        if stream is None:
            if stream_id > self.last_stream_id:
                raise ProtocolError(PROTOCOL_ERROR, "WINDOW_UPDATE on an idle stream")
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
            raise ProtocolError(PROTOCOL_ERROR, "DATA on stream 0")
        self.unacked += len(payload)
        if self.unacked >= WINDOW_REFILL:
            self._write(frame(WINDOW_UPDATE, 0, 0, struct.pack(">I", self.unacked)))
            self.unacked = 0
        data = unpad(flags, payload)
        stream = self.streams.get(stream_id)
        if stream is None or stream.remote_closed:
            if stream_id > self.last_stream_id:
                raise ProtocolError(PROTOCOL_ERROR, "DATA on an idle stream")
            self._write(frame(RST_STREAM, 0, stream_id, struct.pack(">I", STREAM_CLOSED)))
            return
        stream.unacked += len(payload)
        if stream.method is not None:
            stream.body += data
            if len(stream.body) > self.server.max_receive + MESSAGE_HEAD.size:
                self._answer_error(
                    stream,
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"grpc: received message larger than max ({len(stream.body) - MESSAGE_HEAD.size}"
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

    def _headers(self, flags: int, stream_id: int, payload: bytes) -> None:
        if stream_id == 0:
            raise ProtocolError(PROTOCOL_ERROR, "HEADERS on stream 0")
        block = unpad(flags, payload)
        if flags & PRIORITY_FLAG:
            if len(block) < 5:
                raise ProtocolError(PROTOCOL_ERROR, "HEADERS too short for its priority")
            block = block[5:]
        if flags & END_HEADERS:
            self._header_block(stream_id, flags, block)
        else:
            self.continuing = (stream_id, flags, bytearray(block))

    def _continuation(self, flags: int, stream_id: int, payload: bytes) -> None:
        if self.continuing is None or self.continuing[0] != stream_id:
            raise ProtocolError(PROTOCOL_ERROR, "unexpected CONTINUATION")
        block = self.continuing[2]
        block += payload
        if len(block) > MAX_HEADER_BLOCK:
            raise ProtocolError(ENHANCE_YOUR_CALM, "header block too large")
        if flags & END_HEADERS:
            opened_with = self.continuing[1]
            self.continuing = None
            self._header_block(stream_id, opened_with, bytes(block))

    def _header_block(self, stream_id: int, flags: int, block: bytes) -> None:
        try:
            headers = self.decoder.decode(block)
        except HPACKError as err:
            raise ProtocolError(COMPRESSION_ERROR, str(err)) from err
        stream = self.streams.get(stream_id)
        if stream is not None:  # trailers from the client
            if stream.remote_closed or not flags & END_STREAM:
                self._reset(stream, PROTOCOL_ERROR)
                return
            stream.remote_closed = True
            self._start(stream)
            return
        if stream_id % 2 == 0 or stream_id <= self.last_stream_id:
            raise ProtocolError(PROTOCOL_ERROR, f"HEADERS opening stream {stream_id}")
        self.last_stream_id = stream_id
        if self.going_away or len(self.streams) >= MAX_CONCURRENT_STREAMS:
            self._write(frame(RST_STREAM, 0, stream_id, struct.pack(">I", REFUSED_STREAM)))
            return
        stream = Stream(self, stream_id, self.peer_window)
        self.streams[stream_id] = stream
        if self.idle_timer is not None:
            self.idle_timer.cancel()
            self.idle_timer = None
        self._open(stream, headers)
        if flags & END_STREAM and not stream.finished:
            stream.remote_closed = True
            self._start(stream)

    def _open(self, stream: Stream, headers: list[tuple[bytes, bytes]]) -> None:
        """Check a call's headers and find its method (or answer at once)."""
        method, content_type, path = stream.read_headers(headers)
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
            self._answer_error(stream, grpc.StatusCode.UNIMPLEMENTED, unknown_method(stream.path))
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

    def _start(self, stream: Stream) -> None:
        if stream.method is None or stream.task is not None or stream.finished:
            return
        try:
            request = request_message(stream.body, stream.encoding, self.server.max_receive)
        except AbortError as err:
            self._answer_error(stream, err.code, err.details)
            return
        loop = asyncio.get_running_loop()
        stream.task = loop.create_task(self._call(stream, stream.method, request))

    async def _call(self, stream: Stream, method: grpc.RpcMethodHandler, raw: bytes) -> None:
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
                    self.send_message(stream, stream.serialize(response), last=True)
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

    def _expire(self, stream: Stream) -> None:
        stream.timer = None
        if stream.finished:
            return
        task = stream.task
        self._answer_error(stream, grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded")
        if task is not None:
            task.cancel()

    # -- frames out ---------------------------------------------------------------------------

    def send_message(self, stream: Stream, data: bytes, last: bool = False) -> None:
        """One response message (`last`: then the OK trailers), its headers first if due."""
        if stream.finished:
            return
        if not stream.headers_sent:
            stream.headers_sent = True
            stream.outbox.append((HEADERS, RESPONSE_HEADERS, END_HEADERS))
        stream.outbox.append((DATA, MESSAGE_HEAD.pack(0, len(data)) + data, 0))
        if last:
            stream.outbox.append((HEADERS, OK_TRAILERS, END_HEADERS | END_STREAM))
        self._flush(stream)

    def _answer_error(self, stream: Stream, code: grpc.StatusCode, message: str) -> None:
        """End the call with a status (trailers-only when nothing was sent yet)."""
        if stream.finished:
            return
        block = status_block(code, message, headers=not stream.headers_sent)
        stream.headers_sent = True
        stream.outbox.append((HEADERS, block, END_HEADERS | END_STREAM))
        self._flush(stream)

    def _answer_http(self, stream: Stream, status: bytes) -> None:
        block = encode([(b":status", status), (b"content-type", b"text/plain")])
        stream.outbox.append((HEADERS, block, END_HEADERS | END_STREAM))
        self._flush(stream)

    def _flush(self, stream: Stream) -> None:
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
                parts += header_frames(stream.id, payload, flags, self.peer_max_frame)
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

    def _flush_all(self) -> None:
        for stream in list(self.streams.values()):
            if stream.outbox:
                self._flush(stream)

    def _reset(self, stream: Stream, code: int) -> None:
        self._write(frame(RST_STREAM, 0, stream.id, struct.pack(">I", code)))
        self._end_stream(stream, cancel=True)

    def _end_stream(self, stream: Stream, cancel: bool) -> None:
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
