"""The allocator's public listener: TLS (or plaintext) termination and routing to the gRPC server
or the REST handler (Agones' `grpcHandlerFunc` mux on one port, or one port per API).

Each accepted connection is handshaken with the `TLSFiles` context current at that moment (so a
rotated certificate or CA applies to new connections at once), then routed by protocol: HTTP/2
(ALPN `h2`, or the HTTP/2 connection preface in plaintext) goes to the gRPC server, anything else
(HTTP/1.x) to the REST handler; a listener for one API only routes everything to it. A backend is
either an address, to which the routed connection is spliced byte for byte on loopback until
either side closes (the gRPC server), or a protocol factory (the REST app's `web.Server`), which
takes the connection over in this process: its protocol gets the (decrypted) transport and the
bytes already read, so a REST request crosses no second socket and no splice.

gRPC clients offer only `h2` in ALPN, while REST clients (curl, browsers, HTTP libraries) also
offer `http/1.1`, which the server prefers; so the decision is taken once per connection, and a
REST client that insists on HTTP/2 alone would reach the gRPC server (Agones routes each HTTP/2
request by its `content-type` instead).

With TLS and a `grpc_tls` backend (a gRPC port that terminates TLS itself, with the same
certificates), a connection whose ClientHello (read with MSG_PEEK, before any TLS) offers only
`h2` — a gRPC client — is spliced still encrypted to that port: grpc's C core does its TLS and
HTTP/2, and this process only copies bytes. Any other ClientHello is handshaken here as above.

`close()` stops accepting; `wait_closed(timeout)` waits for open connections to end, then closes
whatever is left.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import socket
import ssl
from collections.abc import Callable
from typing import Any

import structlog

from .clienthello import offered_alpn
from .tlsfiles import TLSFiles

H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
HANDSHAKE_TIMEOUT = 10.0
CHUNK = 256 * 1024
MAX_PEEK = 16 * 1024 + 5
PEEK_WAIT = 0.1
PEEK_POLL = 0.005


class Route(enum.Enum):
    GRPC = "grpc"
    REST = "rest"


ProtocolFactory = Callable[[], asyncio.Protocol]
Backends = dict[Route, "tuple[str, int] | ProtocolFactory"]


async def _read_preface(reader: asyncio.StreamReader) -> bytes:
    """Up to the preface's length of the first bytes (fewer if the peer stops sending)."""
    data = b""
    while len(data) < len(H2_PREFACE):
        chunk = await reader.read(len(H2_PREFACE) - len(data))
        if not chunk:
            break
        data += chunk
        if not H2_PREFACE.startswith(data):
            break
    return data


async def _pump(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            data = await reader.read(CHUNK)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError, asyncio.IncompleteReadError):
        pass
    finally:
        with contextlib.suppress(Exception):
            if writer.can_write_eof():
                writer.write_eof()


def _close(writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(Exception):
        writer.close()


class _PausedStreamProtocol(asyncio.StreamReaderProtocol):
    """A stream protocol that reads nothing until told to: bytes read before `start_tls` would
    stay in the stream's buffer, out of the TLS handshake's reach."""

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.ReadTransport)
        transport.pause_reading()
        super().connection_made(transport)


class _Adopted(asyncio.Protocol):
    """Forwards a taken-over connection's events to its protocol; `done` resolves when it ends."""

    def __init__(self, inner: asyncio.Protocol, done: asyncio.Future[None]) -> None:
        self.inner = inner
        self.done = done

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.inner.connection_made(transport)

    def data_received(self, data: bytes) -> None:
        self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received()

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()

    def connection_lost(self, exc: Exception | None) -> None:
        try:
            self.inner.connection_lost(exc)
        finally:
            if not self.done.done():
                self.done.set_result(None)


async def _hand_over(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    factory: ProtocolFactory,
    first: bytes,
) -> None:
    """Give the connection to `factory()`'s protocol, with what was read of it so far; return when
    the connection is closed."""
    transport = writer.transport
    # What the stream received after the handshake and before this switch (a client may send its
    # request with its last handshake message): asyncio keeps no public way to take it back.
    pending: bytearray = getattr(reader, "_buffer", bytearray())
    buffered, eof = first + bytes(pending), reader.at_eof() or bool(getattr(reader, "_eof", False))
    pending.clear()
    adopted = _Adopted(factory(), asyncio.get_running_loop().create_future())
    transport.set_protocol(adopted)
    adopted.connection_made(transport)
    if buffered:
        adopted.data_received(buffered)
    if eof:
        adopted.eof_received()
    await adopted.done


async def _peek_first_record(writer: asyncio.StreamWriter) -> bytes:
    """The client's first TLS record (or what came of it), left unread in the socket.

    The socket stays readable while the peeked bytes sit in it, so once some came, waiting for
    the rest is polling: a record still incomplete after `PEEK_WAIT` is returned as it is (the
    caller then does the TLS itself, which reads whatever comes)."""
    loop = asyncio.get_running_loop()
    sock = writer.get_extra_info("socket").dup()
    try:
        async with asyncio.timeout(HANDSHAKE_TIMEOUT):
            readable = loop.create_future()
            loop.add_reader(sock.fileno(), readable.set_result, None)
            try:
                await readable
            finally:
                loop.remove_reader(sock.fileno())
        deadline = loop.time() + PEEK_WAIT
        while True:
            data = sock.recv(MAX_PEEK, socket.MSG_PEEK)
            if not data or offered_alpn(data) is not None or loop.time() >= deadline:
                return bytes(data)
            await asyncio.sleep(PEEK_POLL)
    finally:
        sock.close()


class Listener:
    """One public port; `backends` says where each route goes, `tls` None means plaintext."""

    def __init__(
        self,
        backends: Backends,
        tls: TLSFiles | None,
        logger: Any = None,
        grpc_tls: tuple[str, int] | None = None,
    ) -> None:
        self.backends = backends
        self.tls = tls
        self.grpc_tls = grpc_tls if Route.GRPC in backends else None
        self.log = (logger or structlog.get_logger()).bind(component="allocator-listener")
        self.server: asyncio.Server | None = None
        self.port = 0
        self.refused = 0
        self.passed_encrypted = 0
        self._connections: set[asyncio.Task[Any]] = set()

    async def start(self, address: str, port: int) -> int:
        """Listen; the bound port (pass 0 for an ephemeral one)."""
        loop = asyncio.get_running_loop()

        def protocol() -> asyncio.Protocol:
            return _PausedStreamProtocol(asyncio.StreamReader(), self._serve)

        self.server = await loop.create_server(
            protocol, host=address or None, port=port, reuse_address=True
        )
        # IPv4 first: port 0 on every interface binds IPv4 and IPv6 to different ports.
        sockets = sorted(self.server.sockets, key=lambda sock: sock.family != socket.AF_INET)
        self.port = int(sockets[0].getsockname()[1])
        return self.port

    def close(self) -> None:
        """Stop accepting connections."""
        if self.server is not None:
            self.server.close()

    async def wait_closed(self, timeout: float) -> None:
        """Wait up to `timeout` for open connections to end, then cut the rest."""
        pending = set(self._connections)
        if pending:
            _, pending = await asyncio.wait(pending, timeout=timeout)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        if self.server is not None:
            await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
            task.add_done_callback(self._connections.discard)
        try:
            await self._route(reader, writer)
        except (ConnectionError, OSError, ssl.SSLError, TimeoutError) as err:
            self.refused += 1
            self.log.debug("connection refused", error=str(err))
        except asyncio.CancelledError:
            # Only `wait_closed` cancels a connection: it ends here, closed, as a normal end
            # (asyncio's stream callback would log a cancelled connection task as an error).
            pass
        finally:
            _close(writer)

    async def _wants_grpc_tls(self, writer: asyncio.StreamWriter) -> bool:
        if self.grpc_tls is None or self.tls is None or not self.tls.grpc_ready():
            return False
        hello = await _peek_first_record(writer)
        return offered_alpn(hello) == ("h2",)

    async def _route(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        alpn = None
        if await self._wants_grpc_tls(writer):
            assert self.grpc_tls is not None
            transport = writer.transport
            assert isinstance(transport, asyncio.ReadTransport)
            transport.resume_reading()
            self.passed_encrypted += 1
            await _splice(reader, writer, self.grpc_tls, b"")
            return
        if self.tls is not None:
            await asyncio.wait_for(writer.start_tls(self.tls.context()), timeout=HANDSHAKE_TIMEOUT)
            ssl_object = writer.get_extra_info("ssl_object")
            alpn = ssl_object.selected_alpn_protocol() if ssl_object is not None else None
        else:
            transport = writer.transport
            assert isinstance(transport, asyncio.ReadTransport)
            transport.resume_reading()
        first = b"" if alpn is not None else await _read_preface(reader)
        if not first and alpn is None:
            return
        if len(self.backends) == 1:
            route = next(iter(self.backends))
        elif alpn == "h2" or first == H2_PREFACE:
            route = Route.GRPC
        else:
            route = Route.REST
        backend = self.backends[route]
        if callable(backend):
            await _hand_over(reader, writer, backend, first)
            return
        await _splice(reader, writer, backend, first)


async def _splice(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    backend: tuple[str, int],
    first: bytes,
) -> None:
    """Copy bytes both ways between the connection and a new one to `backend` until it ends."""
    host, port = backend
    backend_reader, backend_writer = await asyncio.open_connection(host, port)
    try:
        if first:
            backend_writer.write(first)
        # The client may half-close and still wait for its answer; once the backend is done,
        # so is the connection.
        upstream = asyncio.create_task(_pump(reader, backend_writer))
        try:
            await _pump(backend_reader, writer)
        finally:
            upstream.cancel()
            await asyncio.gather(upstream, return_exceptions=True)
    finally:
        _close(backend_writer)
