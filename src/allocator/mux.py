"""The allocator's public listener: TLS (or plaintext) termination and routing to the gRPC server
or the REST handler (Agones' `grpcHandlerFunc` mux on one port, or one port per API).

The listener binds its socket itself and accepts connections one by one (`loop.sock_accept`), so
it sees each connection before any transport reads from it: no `start_tls` on a paused transport,
and it runs on asyncio's loop and on uvloop alike. An accepted connection is then routed by
protocol: HTTP/2 (ALPN `h2`, or the HTTP/2 connection preface in plaintext or without ALPN) goes
to the gRPC server, anything else (HTTP/1.x) to the REST handler; a listener for one API only
routes everything to it. A backend is a protocol factory (`grpcserver.Server.protocol`, the REST
app's `web.Server`), which takes the connection over in this process: its protocol gets the
(decrypted) transport and the bytes already read, so a call crosses no second socket.

TLS is done here with the `TLSFiles` context current at the accept (so a rotated certificate or
CA applies to new connections at once), by `loop.connect_accepted_socket(ssl=...)`.

gRPC clients offer only `h2` in ALPN, while REST clients (curl, browsers, HTTP libraries) also
offer `http/1.1`, which the server prefers; so the decision is taken once per connection, and a
REST client that insists on HTTP/2 alone would reach the gRPC server (Agones routes each HTTP/2
request by its `content-type` instead).

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
from typing import Any, cast

import structlog

from ..grpcserver.frames import PREFACE as H2_PREFACE
from .tlsfiles import TLSFiles

HANDSHAKE_TIMEOUT = 10.0
BACKLOG = 1024
ACCEPT_ERROR_PAUSE = 0.1


class Route(enum.Enum):
    GRPC = "grpc"
    REST = "rest"


ProtocolFactory = Callable[[], asyncio.Protocol]
Backends = dict[Route, ProtocolFactory]


def route_of(routes: frozenset[Route], alpn: str | None, first: bytes, ended: bool) -> Route | None:
    """The route of a connection (pure): None while undecided (more bytes may tell)."""
    if len(routes) == 1:
        return next(iter(routes))
    if alpn == "h2":
        return Route.GRPC
    if alpn is not None:
        return Route.REST
    if first[: len(H2_PREFACE)] == H2_PREFACE:
        return Route.GRPC
    if H2_PREFACE.startswith(first) and not ended:
        return None
    return Route.REST


class _Sniff(asyncio.Protocol):
    """A connection's first protocol: holds what arrives until its route is known."""

    def __init__(self, routes: frozenset[Route], decided: asyncio.Future[Route | None]) -> None:
        self.routes = routes
        self.decided = decided
        self.transport: asyncio.Transport | None = None
        self.alpn: str | None = None
        self.buffer = b""
        self.eof = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not `asyncio.Transport` subclasses, only alike.
        self.transport = cast(asyncio.Transport, transport)
        ssl_object = transport.get_extra_info("ssl_object")
        self.alpn = ssl_object.selected_alpn_protocol() if ssl_object is not None else None
        self._decide()

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        self._decide()

    def eof_received(self) -> bool:
        self.eof = True
        self._decide()
        return True

    def connection_lost(self, exc: Exception | None) -> None:
        del exc
        self.transport = None
        if not self.decided.done():
            self.decided.set_result(None)

    def _decide(self) -> None:
        if self.decided.done():
            return
        if self.eof and not self.buffer and len(self.routes) > 1:
            self.decided.set_result(None)
            return
        route = route_of(self.routes, self.alpn, self.buffer, self.eof)
        if route is not None:
            assert self.transport is not None
            self.transport.pause_reading()
            self.decided.set_result(route)


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


async def _hand_over(transport: asyncio.Transport, factory: ProtocolFactory, sniff: _Sniff) -> None:
    """Give the connection to `factory()`'s protocol, with what was read of it so far; return when
    the connection is closed."""
    adopted = _Adopted(factory(), asyncio.get_running_loop().create_future())
    transport.set_protocol(adopted)
    adopted.connection_made(transport)
    if sniff.buffer:
        adopted.data_received(sniff.buffer)
    if sniff.eof:
        adopted.eof_received()
    if not transport.is_closing():
        transport.resume_reading()
    await adopted.done


def _bind(address: str, port: int) -> socket.socket:
    """A listening socket: every interface (IPv6 and IPv4 on one port where the host can) for
    "", else `address`."""
    if not address and socket.has_dualstack_ipv6():
        sock = socket.create_server(
            ("", port), family=socket.AF_INET6, dualstack_ipv6=True, backlog=BACKLOG
        )
    else:
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        sock = socket.create_server((address, port), family=family, backlog=BACKLOG)
    sock.setblocking(False)
    return sock


class Listener:
    """One public port; `backends` says where each route goes, `tls` None means plaintext."""

    def __init__(
        self,
        backends: Backends,
        tls: TLSFiles | None,
        logger: Any = None,
    ) -> None:
        self.backends = backends
        self.routes = frozenset(backends)
        self.tls = tls
        self.log = (logger or structlog.get_logger()).bind(component="allocator-listener")
        self.port = 0
        self.refused = 0
        self._socket: socket.socket | None = None
        self._accepting: asyncio.Task[None] | None = None
        self._connections: set[asyncio.Task[Any]] = set()

    async def start(self, address: str, port: int) -> int:
        """Listen; the bound port (pass 0 for an ephemeral one)."""
        self._socket = _bind(address, port)
        self.port = int(self._socket.getsockname()[1])
        self._accepting = asyncio.create_task(self._accept(self._socket))
        return self.port

    def close(self) -> None:
        """Stop accepting connections (the accept loop closes the socket as it ends, so no
        closed descriptor stays registered with the loop)."""
        if self._accepting is not None:
            self._accepting.cancel()
        elif self._socket is not None:
            self._socket.close()

    async def wait_closed(self, timeout: float) -> None:
        """Wait up to `timeout` for open connections to end, then cut the rest."""
        pending = set(self._connections)
        if pending:
            _, pending = await asyncio.wait(pending, timeout=timeout)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        if self._accepting is not None:
            await asyncio.gather(self._accepting, return_exceptions=True)

    async def _accept(self, listening: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        try:
            while True:
                try:
                    sock, _ = await loop.sock_accept(listening)
                except OSError as err:
                    self.log.warning("accept failed", error=str(err))
                    await asyncio.sleep(ACCEPT_ERROR_PAUSE)
                    continue
                sock.setblocking(False)
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                task = asyncio.create_task(self._serve(sock))
                self._connections.add(task)
                task.add_done_callback(self._connections.discard)
        finally:
            listening.close()

    async def _serve(self, sock: socket.socket) -> None:
        # The socket is the transport's from here on: it closes it, even on a failed handshake.
        try:
            await self._route(sock)
        except (ConnectionError, OSError, ssl.SSLError, TimeoutError) as err:
            self.refused += 1
            self.log.debug("connection refused", error=str(err))
        except asyncio.CancelledError:
            # Only `wait_closed` cancels a connection: it ends here, closed, as a normal end.
            pass

    async def _route(self, sock: socket.socket) -> None:
        """Terminate TLS (if any), route the connection and serve it until it ends."""
        loop = asyncio.get_running_loop()
        decided: asyncio.Future[Route | None] = loop.create_future()

        # With TLS, uvloop answers its TLS protocol, not this one: keep it from the factory.
        sniff = _Sniff(self.routes, decided)

        def sniffer() -> _Sniff:
            return sniff

        if self.tls is None:
            transport, _ = await loop.connect_accepted_socket(sniffer, sock)
        else:
            transport, _ = await asyncio.wait_for(
                loop.connect_accepted_socket(
                    sniffer,
                    sock,
                    ssl=self.tls.context(),
                    ssl_handshake_timeout=HANDSHAKE_TIMEOUT,
                ),
                timeout=HANDSHAKE_TIMEOUT,
            )
        try:
            route = await decided
            if route is None:
                return
            await _hand_over(transport, self.backends[route], sniff)
        finally:
            transport.close()
