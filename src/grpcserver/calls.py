"""gRPC over HTTP/2, the call level: a call's state (`Stream`: its headers, request, deadline,
answer waiting for window), the request message, statuses as trailers, `grpc-timeout`, and what
a handler is given (`ServicerContext`, `AbortError`)."""

from __future__ import annotations

import asyncio
import struct
import time
import zlib
from collections import deque
from typing import Any, NoReturn, Protocol

import grpc

from .hpack import encode


class Sender(Protocol):
    """What a call needs of its connection (`connection.Connection`)."""

    peer: str

    def send_message(self, stream: Stream, data: bytes, last: bool = False) -> None: ...


DEFAULT_MAX_RECEIVE = 4 * 1024 * 1024
MESSAGE_HEAD = struct.Struct(">BI")  # compressed flag, message length
_TIMEOUT_UNITS = {b"H": 3600.0, b"M": 60.0, b"S": 1.0, b"m": 1e-3, b"u": 1e-6, b"n": 1e-9}
_ACCEPT_ENCODING = b"identity,deflate,gzip"
RESPONSE_HEADERS = encode(
    [
        (b":status", b"200"),
        (b"content-type", b"application/grpc"),
        (b"grpc-accept-encoding", _ACCEPT_ENCODING),
    ]
)
OK_TRAILERS = encode([(b"grpc-status", b"0")])


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
    return RESPONSE_HEADERS + block if headers else block


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


class CallDetails(grpc.HandlerCallDetails):  # type: ignore[misc]  # grpc is untyped
    def __init__(self, method: str, metadata: tuple[tuple[str, str], ...]) -> None:
        self.method = method
        self.invocation_metadata = metadata


class ServicerContext:
    """What a handler gets as `context` (the part of `grpc.aio.ServicerContext` handlers use)."""

    def __init__(self, stream: Stream) -> None:
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


def unknown_method(path: str) -> str:
    """grpc-go's text for a method it does not serve."""
    service, sep, method = path[1:].rpartition("/")
    if not path.startswith("/") or not sep:
        return f'malformed method name: "{path}"'
    return f"unknown method {method} for service {service}"


def request_message(body: bytes | bytearray, encoding: bytes, max_receive: int) -> bytes:
    """The one message of a unary request body, inflated if compressed; `AbortError` for anything
    else (grpc's codes and texts)."""
    if len(body) < MESSAGE_HEAD.size:
        raise AbortError(grpc.StatusCode.INTERNAL, "grpc: no request message")
    compressed, length = MESSAGE_HEAD.unpack_from(body)
    if len(body) != MESSAGE_HEAD.size + length:
        raise AbortError(grpc.StatusCode.INTERNAL, "grpc: request is not one whole message")
    if length > max_receive:
        raise AbortError(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            f"grpc: received message larger than max ({length} vs. {max_receive})",
        )
    data = bytes(body[MESSAGE_HEAD.size :])
    if not compressed:
        return data
    if encoding not in (b"gzip", b"deflate"):
        if encoding == b"identity":
            raise AbortError(
                grpc.StatusCode.INTERNAL, "grpc: compressed flag set with identity encoding"
            )
        raise AbortError(
            grpc.StatusCode.UNIMPLEMENTED,
            f'grpc: Decompressor is not installed for grpc-encoding "{encoding.decode("latin-1")}"',
        )
    inflater = zlib.decompressobj(31 if encoding == b"gzip" else 15)
    try:
        data = inflater.decompress(data, max_receive + 1)
    except zlib.error as err:
        raise AbortError(grpc.StatusCode.INTERNAL, f"grpc: failed to decompress: {err}") from err
    if len(data) > max_receive or inflater.unconsumed_tail:
        raise AbortError(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            f"grpc: received message after decompression larger than max ({max_receive})",
        )
    return data


class Stream:
    """One call: its request as it arrives, its handler task, its answer waiting for window."""

    def __init__(self, connection: Sender, stream_id: int, window: int) -> None:
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

    def read_headers(
        self, headers: list[tuple[bytes, bytes]]
    ) -> tuple[bytes | None, bytes | None, bytes | None]:
        """Take the call's deadline, encoding and metadata; (`:method`, content-type, `:path`)."""
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
                    self.deadline = time.monotonic() + timeout
            elif name == b"grpc-encoding":
                self.encoding = value
            elif not name.startswith(b":"):
                metadata.append((name.decode("latin-1"), value.decode("latin-1")))
        self.metadata = tuple(metadata)
        return method, content_type, path

    def serialize(self, message: Any) -> bytes:
        """A response message as bytes, by the method's serializer (none: already bytes)."""
        assert self.method is not None
        serialize = self.method.response_serializer
        return bytes(serialize(message) if serialize is not None else message)

    async def write_message(self, message: Any) -> None:
        if self.finished:
            raise asyncio.CancelledError
        self.connection.send_message(self, self.serialize(message))
        if self.outbox:  # wait for window: backpressure on a streaming handler
            self.drained = asyncio.get_running_loop().create_future()
            await self.drained
