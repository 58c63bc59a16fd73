"""`agones.relay`: a relaying server passes any bytes both ways in order, passes the client's
half-close on and still brings the answer back, closes a connection whose backend cannot be
had, and relays to a socket already connected as to an address."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator

import pytest
import uvloop
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agones import aioloop
from agones.relay import Backend, relay_server


async def _echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Echo until EOF, then answer `bye` and close."""
    while data := await reader.read(65536):
        writer.write(data)
        await writer.drain()
    writer.write(b"bye")
    await writer.drain()
    writer.close()


@pytest.fixture
async def backend() -> AsyncIterator[tuple[str, int]]:
    server = await asyncio.start_server(_echo, "127.0.0.1", 0)
    address = server.sockets[0].getsockname()[:2]
    try:
        yield address
    finally:
        server.close()


async def _through(server: asyncio.Server, chunks: list[bytes]) -> bytes:
    """Send `chunks`, half-close, and read everything that comes back."""
    host, port = server.sockets[0].getsockname()[:2]
    reader, writer = await asyncio.open_connection(host, port)
    for chunk in chunks:
        writer.write(chunk)
    await writer.drain()
    writer.write_eof()
    received = await asyncio.wait_for(reader.read(), 10)
    writer.close()
    return received


async def _closed(server: asyncio.Server) -> bool:
    """Whether a connection that sends a little is closed without an answer (an EOF, or a reset:
    closing with its bytes unread, the relay's side resets it)."""
    try:
        return await _through(server, [b"anyone there?"]) == b""
    except ConnectionError:
        return True


async def test_bytes_go_both_ways_and_the_answer_after_a_half_close_comes_back(
    backend: tuple[str, int],
) -> None:
    async def to_backend() -> Backend:
        return backend

    server = await relay_server(to_backend, "127.0.0.1", 0)
    try:
        assert await _through(server, [b"hello ", b"world"]) == b"hello worldbye"
    finally:
        server.close()


async def test_a_connected_socket_is_a_backend(backend: tuple[str, int]) -> None:
    async def connected() -> Backend:
        sock = socket.socket()
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, backend)
        return sock

    server = await relay_server(connected, "127.0.0.1", 0)
    try:
        assert await _through(server, [b"x" * 200_000]) == b"x" * 200_000 + b"bye"
    finally:
        server.close()


@pytest.mark.parametrize("error", [ConnectionRefusedError("no endpoint"), TimeoutError()])
async def test_a_connection_without_a_backend_is_closed(error: Exception) -> None:
    async def refused() -> Backend:
        raise error

    server = await relay_server(refused, "127.0.0.1", 0)
    try:
        assert await _closed(server)
    finally:
        server.close()


async def test_a_backend_that_refuses_the_connect_closes_the_client() -> None:
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        closed_port = unused.getsockname()[1]

    async def nobody() -> Backend:
        return ("127.0.0.1", closed_port)

    server = await relay_server(nobody, "127.0.0.1", 0, timeout=5)
    try:
        assert await _closed(server)
    finally:
        server.close()


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.binary(min_size=1, max_size=70_000), max_size=8))
async def test_any_bytes_arrive_intact_and_in_order(
    backend: tuple[str, int], chunks: list[bytes]
) -> None:
    async def to_backend() -> Backend:
        return backend

    server = await relay_server(to_backend, "127.0.0.1", 0)
    try:
        assert await _through(server, chunks) == b"".join(chunks) + b"bye"
    finally:
        server.close()


def test_on_uvloop() -> None:
    """The same on uvloop, whose transports the nodes process and the allocator run on."""

    async def scenario() -> tuple[bytes, bool]:
        assert isinstance(asyncio.get_running_loop(), uvloop.Loop)
        echo = await asyncio.start_server(_echo, "127.0.0.1", 0)
        address = echo.sockets[0].getsockname()[:2]

        async def to_backend() -> Backend:
            return address

        async def refused() -> Backend:
            raise ConnectionRefusedError("no endpoint")

        relaying = await relay_server(to_backend, "127.0.0.1", 0)
        refusing = await relay_server(refused, "127.0.0.1", 0)
        try:
            return await _through(relaying, [b"a" * 100_000, b"b"]), await _closed(refusing)
        finally:
            for server in (echo, relaying, refusing):
                server.close()

    echoed, closed = aioloop.run(scenario())
    assert echoed == b"a" * 100_000 + b"bbye"
    assert closed
