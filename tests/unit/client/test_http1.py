"""`agones.client.http1`: the REST client's keep-alive HTTP/1.1 transport, against scripted servers
(real sockets on loopback) that answer exactly the bytes a test gives them."""

from __future__ import annotations

import asyncio
import gc
import ssl
import tempfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agones import aioloop
from agones.client.http1 import ConnectionPool, Response
from agones.pki import self_signed

Answer = Callable[[bytes], bytes | None]
"""Given one whole request (head and body), the bytes to send back; None closes the connection."""


class ScriptedServer:
    """Reads one request at a time (by Content-Length) and writes what `answer` gives, in `cuts`
    pieces; counts connections and requests."""

    def __init__(self, answer: Answer, cuts: list[int] | None = None) -> None:
        self.answer = answer
        self.cuts = cuts or []
        self.close_after = False
        """Close the connection after each answer (an answer whose body ends at the close)."""
        self.connections = 0
        self.requests: list[bytes] = []
        self.server: asyncio.Server | None = None

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                request = head + await reader.readexactly(length)
                self.requests.append(request)
                out = self.answer(request)
                if out is None:
                    break
                start = 0
                for cut in sorted(c for c in self.cuts if 0 < c < len(out)):
                    writer.write(out[start:cut])
                    await writer.drain()
                    await asyncio.sleep(0)
                    start = cut
                writer.write(out[start:])
                await writer.drain()
                if self.close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    async def stop(self) -> None:
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()


@pytest.fixture
async def serve() -> AsyncIterator[
    Callable[..., asyncio.Future[tuple[ScriptedServer, ConnectionPool]]]
]:
    servers: list[ScriptedServer] = []
    pools: list[ConnectionPool] = []

    async def start(
        answer: Answer, cuts: list[int] | None = None
    ) -> tuple[ScriptedServer, ConnectionPool]:
        server = ScriptedServer(answer, cuts)
        port = await server.start()
        pool = ConnectionPool("127.0.0.1", port, None)
        servers.append(server)
        pools.append(pool)
        return server, pool

    yield start  # type: ignore[misc]
    for pool in pools:
        pool.close()
    for server in servers:
        await server.stop()


def fixed(raw: bytes) -> Answer:
    return lambda request: raw


HEAD = b"Accept: application/json\r\n"


async def test_content_length_answers_reuse_one_connection(serve) -> None:
    server, pool = await serve(fixed(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"))
    for _ in range(3):
        response = await pool.request("PUT", "/apis/x", HEAD, b'{"a":1}')
        assert (response.status, response.body) == (200, b"{}")
    assert server.connections == 1 and pool.opened == 1
    first = server.requests[0]
    assert first.startswith(b"PUT /apis/x HTTP/1.1\r\nHost: 127.0.0.1:")
    assert b'\r\nAccept: application/json\r\nContent-Length: 7\r\n\r\n{"a":1}' in first


async def test_chunked_answer_with_extensions_and_trailers(serve) -> None:
    raw = (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Y: z\r\n\r\n"
        b"3;ext=1\r\nabc\r\n0A\r\n0123456789\r\n0\r\nTrailer: t\r\n\r\n"
    )
    server, pool = await serve(fixed(raw), cuts=list(range(1, len(raw), 7)))
    for _ in range(2):
        response = await pool.request("GET", "/x", HEAD)
        assert response.body == b"abc0123456789"
        assert response.headers["x-y"] == "z"
    assert server.connections == 1


async def test_a_body_without_length_ends_at_the_close(serve) -> None:
    server, pool = await serve(fixed(b"HTTP/1.1 200 OK\r\n\r\nall of it"))
    server.close_after = True
    for _ in range(2):
        response = await pool.request("GET", "/x", HEAD)
        assert (response.status, response.body) == (200, b"all of it")
    assert pool.opened == 2


async def test_connection_close_is_honoured(serve) -> None:
    closing = b"HTTP/1.1 201 Created\r\nConnection: close\r\nContent-Length: 1\r\n\r\nx"
    _server, pool = await serve(fixed(closing))
    for _ in range(2):
        response = await pool.request("POST", "/x", HEAD, b"{}")
        assert (response.status, response.body) == (201, b"x")
    assert pool.opened == 2


async def test_interim_answers_are_skipped_and_empty_bodies(serve) -> None:
    raw = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"
    server, pool = await serve(fixed(raw))
    response = await pool.request("DELETE", "/x", HEAD, b"{}")
    assert (response.status, response.body) == (204, b"")
    response = await pool.request("DELETE", "/x", HEAD, b"{}")
    assert response.status == 204 and server.connections == 1


async def test_a_get_on_a_connection_the_server_closed_is_sent_again(serve) -> None:
    ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    server, pool = await serve(lambda request: ok if len(server.requests) != 2 else None)
    assert (await pool.request("GET", "/x", HEAD)).body == b"ok"
    assert (await pool.request("GET", "/x", HEAD)).body == b"ok"  # 2nd closed, 3rd answers
    assert pool.opened == 2 and len(server.requests) == 3


async def test_a_write_on_a_connection_the_server_closed_is_not_sent_again(serve) -> None:
    ok = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"
    server, pool = await serve(lambda request: ok if len(server.requests) != 2 else None)
    await pool.request("POST", "/x", HEAD, b"{}")
    with pytest.raises(ConnectionError):
        await pool.request("POST", "/x", HEAD, b"{}")
    assert len(server.requests) == 2
    assert (await pool.request("POST", "/x", HEAD, b"{}")).body == b"ok"  # a new connection


async def test_a_cancelled_request_does_not_leave_its_connection_for_the_next(serve) -> None:
    answered = asyncio.Event()

    def slow(request: bytes) -> bytes:
        return b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nlate" if answered.is_set() else b""

    _server, pool = await serve(slow)
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.05):
            await pool.request("GET", "/x", HEAD)
    answered.set()
    assert (await pool.request("GET", "/x", HEAD)).body == b"late"
    assert pool.opened == 2


async def test_many_concurrent_requests_keep_their_connections(serve) -> None:
    _server, pool = await serve(fixed(b"HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n1"))
    for _ in range(2):
        answers = await asyncio.gather(*(pool.request("GET", "/x", HEAD) for _ in range(30)))
        assert {a.body for a in answers} == {b"1"}
    assert pool.opened == 30


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(b"SSH-2.0-OpenSSH\r\n\r\n", id="not-http"),
        pytest.param(b"HTTP/1.1 2x0 OK\r\n\r\n", id="bad-status"),
        pytest.param(b"HTTP/1.1 200 OK\r\nno colon\r\n\r\n", id="bad-header"),
        pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", id="negative-length"),
        pytest.param(b"HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n", id="bad-length"),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", id="bad-chunk"
        ),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n", id="chunk-no-crlf"
        ),
    ],
)
async def test_what_is_not_http_is_a_connection_error(serve, raw: bytes) -> None:
    _server, pool = await serve(fixed(raw))
    with pytest.raises(ConnectionError):
        await pool.request("GET", "/x", HEAD)


async def test_an_answer_cut_short_is_a_connection_error(serve) -> None:
    server, pool = await serve(fixed(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort"))
    server.close_after = True
    with pytest.raises(ConnectionError, match="mid-answer"):
        await pool.request("POST", "/x", HEAD, b"{}")


async def test_no_answer_at_all_is_a_connection_error(serve) -> None:
    _server, pool = await serve(lambda request: None)
    with pytest.raises(ConnectionError, match="before answering"):
        await pool.request("POST", "/x", HEAD, b"{}")


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.binary(max_size=300), st.lists(st.integers(1, 300), max_size=5))
async def test_any_bytes_give_an_answer_or_an_error_never_a_hang(
    serve, raw: bytes, cuts: list[int]
) -> None:
    _server, pool = await serve(lambda request: raw + b"\r\n\r\n" if raw else None, cuts)
    try:
        async with asyncio.timeout(1):
            try:
                response = await pool.request("GET", "/x", HEAD)
            except (ConnectionError, TimeoutError):
                return
    except TimeoutError:
        return  # a head that never ends and a server that never closes: the caller's timeout
    assert isinstance(response, Response)


def tls_contexts(names: list[str]) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """A server context with a self-signed certificate for `names`, and a client trusting it."""
    pair = self_signed(names)
    server_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    with tempfile.TemporaryDirectory() as tmp:
        cert, key = Path(tmp, "tls.crt"), Path(tmp, "tls.key")
        cert.write_bytes(pair.cert_pem)
        key.write_bytes(pair.key_pem)
        server_tls.load_cert_chain(cert, key)
    client_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    client_tls.load_verify_locations(cadata=pair.cert_pem.decode())
    return server_tls, client_tls


async def tls_bodies(
    server_tls: ssl.SSLContext, client_tls: ssl.SSLContext, server_hostname: str | None = None
) -> list[bytes]:
    script = ScriptedServer(fixed(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
    server = await asyncio.start_server(script._serve, "127.0.0.1", 0, ssl=server_tls)
    port = server.sockets[0].getsockname()[1]
    pool = ConnectionPool("127.0.0.1", port, client_tls, server_hostname=server_hostname)
    try:
        bodies = [(await pool.request("GET", "/x", HEAD)).body for _ in range(3)]
        assert pool.opened == 1
        return bodies
    finally:
        pool.close()
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize("use_uvloop", [True, False], ids=["uvloop", "asyncio"])
def test_tls_connections_are_kept_on_either_loop(use_uvloop: bool) -> None:
    """uvloop's TLS transport is not an `asyncio.Transport` subclass: the pool must not care."""
    server_tls, client_tls = tls_contexts(["127.0.0.1"])
    try:
        bodies = aioloop.run(tls_bodies(server_tls, client_tls), use_uvloop=use_uvloop)
    finally:
        gc.unfreeze()  # `aioloop.run` froze this process's heap
    assert bodies == [b"ok"] * 3


async def test_the_certificate_is_checked_against_the_name_given() -> None:
    """The aggregator dials an address and checks the Service's DNS name, as kube-aggregator."""
    server_tls, client_tls = tls_contexts(["agones-allocator.agones-system.svc"])
    bodies = await tls_bodies(server_tls, client_tls, "agones-allocator.agones-system.svc")
    assert bodies == [b"ok"] * 3
    with pytest.raises(ConnectionError, match="cannot connect"):
        await tls_bodies(server_tls, client_tls)  # 127.0.0.1 is not in the certificate
