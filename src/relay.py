"""Byte relay between two TCP connections on the event loop's transports, without streams or
tasks per direction: the one relay of the project (the local cluster's service proxy, and its
relays into and out of pod network namespaces).

`await relay(transport, backend, first)` takes over `transport` (a connection already accepted,
plain or TLS-terminated, whose protocol is replaced), connects to `backend` (an address, or a
socket already connected: one opened inside a pod's network namespace) within `timeout`, writes
`first` (bytes already read from the client; `eof`: and the client's EOF after them) to it and
then copies bytes both ways as they arrive: each `data_received` is one `write` to the other side,
in the same callback, so a request costs no task wake-up and no copy into a stream buffer. Flow
control: when one side's write buffer is full (`pause_writing`), the other side stops reading until
it drains (`resume_writing`). An EOF from the client is passed on (`write_eof`) and the relay goes
on, since the client may half-close and still wait for its answer; once the backend's side ends,
both connections are closed. Returns when both are closed; a failed connect raises `OSError` (or
`TimeoutError`) after closing `transport`. `relay_server(connect, ...)` listens and relays every
accepted connection to what `connect()` returns then (a refused or failed connect closes that
connection); it returns the `asyncio.Server`, whose `close()` stops it.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections.abc import Awaitable, Callable
from typing import cast

Backend = tuple[str, int] | socket.socket
"""Where a relay connects: an address, or a socket already connected."""


class _Relay:
    """The two connections of one relay; `done` resolves once both are closed."""

    def __init__(self, done: asyncio.Future[None]) -> None:
        self.done = done
        self.open = 2

    def lost(self) -> None:
        self.open -= 1
        if self.open <= 0 and not self.done.done():
            self.done.set_result(None)


class _Side(asyncio.Protocol):
    """One connection of a relay: what it receives goes to `peer`'s transport."""

    def __init__(self, relay: _Relay, passes_eof: bool) -> None:
        self.relay = relay
        self.passes_eof = passes_eof
        self.transport: asyncio.Transport | None = None
        self.peer: _Side | None = None
        self.unsent: list[bytes] = []
        self.early: list[bytes] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not `asyncio.Transport` subclasses, only alike.
        self.transport = cast(asyncio.Transport, transport)
        unsent, self.unsent = self.unsent, []
        for data in unsent:
            self.send(data)

    def send(self, data: bytes) -> None:
        if self.transport is None:
            self.unsent.append(data)
        elif not self.transport.is_closing():
            self.transport.write(data)

    def data_received(self, data: bytes) -> None:
        if self.peer is None:
            self.early.append(data)
        else:
            self.peer.send(data)

    def eof_received(self) -> bool:
        peer = self.peer.transport if self.peer is not None else None
        if not self.passes_eof or peer is None or not peer.can_write_eof():
            self.close_both()
            return False
        with contextlib.suppress(OSError, RuntimeError):
            peer.write_eof()
        return True

    def pause_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None:
            with contextlib.suppress(RuntimeError):
                self.peer.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None:
            with contextlib.suppress(RuntimeError):
                self.peer.transport.resume_reading()

    def connection_lost(self, exc: Exception | None) -> None:
        del exc
        self.close_both()
        self.transport = None
        self.relay.lost()

    def close_both(self) -> None:
        for side in (self, self.peer):
            if side is not None and side.transport is not None:
                side.transport.close()


def _link(client: _Side, server: _Side) -> None:
    client.peer, server.peer = server, client
    for side in (client, server):
        early, side.early, peer = side.early, [], side.peer
        assert peer is not None
        for data in early:
            peer.send(data)


async def _connect(
    state: _Relay, backend: Backend, timeout: float | None
) -> tuple[asyncio.BaseTransport, _Side]:
    loop = asyncio.get_running_loop()

    def side() -> _Side:
        return _Side(state, passes_eof=False)

    if isinstance(backend, socket.socket):
        connecting = loop.create_connection(side, sock=backend)
    else:
        connecting = loop.create_connection(side, *backend)
    try:
        return await asyncio.wait_for(connecting, timeout)
    except (OSError, TimeoutError):
        if isinstance(backend, socket.socket):
            backend.close()
        raise


async def relay(
    transport: asyncio.Transport,
    backend: Backend,
    first: bytes = b"",
    eof: bool = False,
    timeout: float | None = None,
) -> None:
    """See the module docstring."""
    loop = asyncio.get_running_loop()
    state = _Relay(loop.create_future())
    client = _Side(state, passes_eof=True)
    transport.pause_reading()
    transport.set_protocol(client)
    client.connection_made(transport)
    try:
        _, server = await _connect(state, backend, timeout)
    except (OSError, TimeoutError):
        transport.close()
        raise
    _link(client, server)
    if first:
        server.send(first)
    if eof:
        client.eof_received()
    if transport.is_closing():
        server.close_both()
    else:
        transport.resume_reading()
    await state.done


class _Accepted(asyncio.Protocol):
    """A connection `relay_server` accepted, until its backend is connected: reading paused,
    anything already received kept for the backend."""

    def __init__(self, connect: Callable[[], Awaitable[Backend]], timeout: float | None) -> None:
        self.connect = connect
        self.timeout = timeout
        self.received: list[bytes] = []
        self.eof = False
        self.task: asyncio.Task[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's transports are not `asyncio.Transport` subclasses, only alike.
        accepted = cast(asyncio.Transport, transport)
        accepted.pause_reading()
        self.task = asyncio.get_running_loop().create_task(self._relay(accepted))
        _RUNNING.add(self.task)
        self.task.add_done_callback(_RUNNING.discard)

    def data_received(self, data: bytes) -> None:
        self.received.append(data)

    def eof_received(self) -> bool:
        self.eof = True
        return True

    async def _relay(self, transport: asyncio.Transport) -> None:
        try:
            backend = await self.connect()
        except (OSError, TimeoutError):
            transport.close()
            return
        if transport.is_closing():  # the client left while its backend was found
            if isinstance(backend, socket.socket):
                backend.close()
            return
        with contextlib.suppress(OSError, TimeoutError):
            await relay(transport, backend, b"".join(self.received), self.eof, self.timeout)


_RUNNING: set[asyncio.Task[None]] = set()
"""The relays `relay_server` started, held until they end."""


async def relay_server(
    connect: Callable[[], Awaitable[Backend]],
    host: str | None = None,
    port: int = 0,
    *,
    sock: socket.socket | None = None,
    timeout: float | None = None,
    reuse_address: bool | None = None,
) -> asyncio.Server:
    """A TCP server on `host:port` (or the listening `sock`) relaying each connection it accepts
    to what `connect()` returns for it, connecting within `timeout` (see the module docstring)."""
    loop = asyncio.get_running_loop()

    def accepted() -> _Accepted:
        return _Accepted(connect, timeout)

    if sock is not None:
        return await loop.create_server(accepted, sock=sock)
    return await loop.create_server(accepted, host, port, reuse_address=reuse_address)
