"""Byte relay between two connections on the event loop's transports, without streams or tasks
(the allocator listener's splice of a gRPC connection to grpc's port).

`await relay(transport, backend, first)` takes over `transport` (a connection already accepted,
plain or TLS-terminated, whose protocol is replaced), opens a connection to `backend`, writes
`first` (bytes already read from the client; `eof`: and the client's EOF after them) to it and then copies bytes both ways as they arrive:
each `data_received` is one `write` to the other side, in the same callback, so a request costs no
task wake-up and no copy into a stream buffer. Flow control: when one side's write buffer is full
(`pause_writing`), the other side stops reading until it drains (`resume_writing`). An EOF from the
client is passed on (`write_eof`) and the relay goes on, since the client may half-close and still
wait for its answer; once the backend's side ends, both connections are closed. Returns when both
are closed; a failed connect to the backend raises `OSError`. `relay_socket(sock, backend)` does
the same for an accepted socket that has no transport yet (bytes either side sends before both
connections are up wait in the relay).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from typing import cast


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


async def relay(
    transport: asyncio.Transport, backend: tuple[str, int], first: bytes, eof: bool = False
) -> None:
    """See the module docstring."""
    loop = asyncio.get_running_loop()
    state = _Relay(loop.create_future())
    client = _Side(state, passes_eof=True)
    transport.pause_reading()
    transport.set_protocol(client)
    client.connection_made(transport)
    host, port = backend
    try:
        _, server = await loop.create_connection(lambda: _Side(state, passes_eof=False), host, port)
    except OSError:
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


async def relay_socket(sock: socket.socket, backend: tuple[str, int]) -> None:
    """Relay an accepted socket nothing was read from (as `relay`, without a transport yet)."""
    loop = asyncio.get_running_loop()
    state = _Relay(loop.create_future())
    host, port = backend
    try:
        _, server = await loop.create_connection(lambda: _Side(state, passes_eof=False), host, port)
    except OSError:
        sock.close()
        raise
    try:
        _, client = await loop.connect_accepted_socket(lambda: _Side(state, passes_eof=True), sock)
    except OSError:
        server.close_both()
        raise
    _link(client, server)
    await state.done
