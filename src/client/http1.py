"""Keep-alive HTTP/1.1 for the REST client's requests (client-go's `http.Transport`, for one host).

`ConnectionPool(host, port, ssl_context).request(method, target, head, body)` sends one request
and returns its `Response` (status, headers, whole body). `head` is the request's header lines
after the request line, built once by the caller; `Host` and `Content-Length` are added here.

* Connections are kept and reused (the most recently used first), any number of them: client-go
  talks HTTP/2 to kube-apiserver, where one connection carries every concurrent request; over
  HTTP/1.1 the same holds when every connection a burst opened is kept for the next burst. One
  idle for longer than `IDLE_TIMEOUT` is closed instead of reused, well before a server's own idle
  timeout (Go's `http.Server` closes at its `IdleTimeout`, aiohttp's at 75 s), so a request is not
  sent on a connection the server is closing.
* Bodies are read by `Content-Length`, `chunked` or, without either, up to the server's close;
  `1xx` interim answers are skipped; `Connection: close` (or HTTP/1.0 without keep-alive) is
  honoured.
* A request whose reused connection was closed before any byte of the answer came is sent again on
  a new connection when it is a GET or HEAD (Go's `Transport` does the same for requests it may
  replay); other methods raise, as Go's do.
* Failures are `HTTPConnectionError` (a `ConnectionError` and an aiohttp `ClientOSError`, so both
  kinds of caller catch it, as they caught aiohttp's): the connect failed, the server closed the
  connection before the whole answer, or answered what is not HTTP/1.x. The caller's timeouts are
  its own. A cancelled or failed request's connection is closed, never reused.

Why not aiohttp's client (which the watch streams still use): through `RESTClient`, a request cost
122 to 142 µs of CPU with it and 60 to 64 µs with this transport (`bench/rest_client_cpu.py`); the
controller and the simulated nodes spent a quarter less CPU per GameServer of a Fleet, the
allocators 5 to 10 % less per allocation.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections import deque
from dataclasses import dataclass
from typing import cast

import aiohttp
from multidict import CIMultiDict, CIMultiDictProxy

IDLE_TIMEOUT = 15.0
"""Seconds a kept connection may sit idle and still be reused (aiohttp's keep-alive timeout)."""

MAX_HEAD = 1 << 20
"""Bytes of status line and headers an answer may take (Go's default `MaxResponseHeaderBytes`)."""

_NO_BODY_METHODS = frozenset({"HEAD"})
_REPLAYABLE = frozenset({"GET", "HEAD"})


@dataclass(frozen=True, slots=True)
class Response:
    status: int
    headers: CIMultiDictProxy[str]
    body: bytes


class HTTPConnectionError(aiohttp.ClientOSError, ConnectionError):
    """The connection failed, or the server answered what is not HTTP/1.x."""


class _Closed(HTTPConnectionError):
    """The server closed the connection before the answer's first byte (safe to replay a GET)."""


class _Connection(asyncio.Protocol):
    """One HTTP/1.1 connection: one request in flight at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.idle_since = 0.0
        self._buffer = bytearray()
        self._waiter: asyncio.Future[Response] | None = None
        self._head_only = False
        self._received = False
        self._status = 0
        self._headers: CIMultiDict[str] | None = None
        self._keep_alive = True
        self._length: int | None = None  # Content-Length; None: chunked or until close
        self._chunked = False
        self._chunks: list[bytes] = []
        self._pos = 0  # where parsing resumes in the buffer

    # -- asyncio.Protocol --------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # uvloop's TLS transport is a Transport in all but its class
        self.transport = cast(asyncio.Transport, transport)

    def data_received(self, data: bytes) -> None:
        if self._waiter is None or self._waiter.done():
            self.close()  # bytes nobody asked for: the connection's state is unknown
            return
        self._received = True
        self._buffer += data
        try:
            self._parse()
        except HTTPConnectionError as err:
            self._fail(err)

    def eof_received(self) -> bool:
        self._finish_at_close()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._finish_at_close(exc)

    # -- use --------------------------------------------------------------------------------

    def send(self, request: bytes, head_only: bool) -> asyncio.Future[Response]:
        assert self.transport is not None
        self._waiter = asyncio.get_running_loop().create_future()
        self._head_only = head_only
        self._received = False
        self.transport.write(request)
        return self._waiter

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    # -- parsing ----------------------------------------------------------------------------

    def _parse(self) -> None:
        while self._headers is None:
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self._buffer) > MAX_HEAD:
                    raise HTTPConnectionError("the server's answer has over 1 MiB of headers")
                return
            self._head(bytes(self._buffer[:end]))
            del self._buffer[: end + 4]
        if self._chunked:
            self._parse_chunks()
        elif self._length is not None and len(self._buffer) >= self._length:
            body = bytes(self._buffer[: self._length])
            del self._buffer[: self._length]
            self._done(body)

    def _head(self, head: bytes) -> None:
        lines = head.split(b"\r\n")
        status_line = lines[0]
        version = status_line[:8]
        if version not in (b"HTTP/1.1", b"HTTP/1.0") or status_line[8:9] != b" ":
            raise HTTPConnectionError(f"not an HTTP/1.x answer: {status_line[:40]!r}")
        try:
            status = int(status_line[9:12])
        except ValueError:
            raise HTTPConnectionError(f"not an HTTP/1.x answer: {status_line[:40]!r}") from None
        if 100 <= status < 200:
            return  # an interim answer (100 Continue, 103 Early Hints): the real one follows
        headers: CIMultiDict[str] = CIMultiDict()
        for line in lines[1:]:
            name, colon, value = line.partition(b":")
            if not colon:
                raise HTTPConnectionError(f"a malformed header line: {line[:40]!r}")
            headers.add(name.strip().decode("latin-1"), value.strip().decode("latin-1"))
        connection = headers.get("Connection", "").lower()
        self._keep_alive = (
            "close" not in connection if version == b"HTTP/1.1" else "keep-alive" in connection
        )
        self._status = status
        self._headers = headers
        self._pos = 0
        if self._head_only or status in (204, 304):
            self._length = 0
        elif "chunked" in headers.get("Transfer-Encoding", "").lower():
            self._chunked = True
        elif "Content-Length" in headers:
            try:
                self._length = int(headers["Content-Length"])
            except ValueError:
                raise HTTPConnectionError("a malformed Content-Length") from None
            if self._length < 0:
                raise HTTPConnectionError("a malformed Content-Length")
        else:
            self._length = None
            self._keep_alive = False  # the body ends where the connection does

    def _parse_chunks(self) -> None:
        buffer = self._buffer
        while True:
            line_end = buffer.find(b"\r\n", self._pos)
            if line_end < 0:
                return
            size_text = bytes(buffer[self._pos : line_end]).split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise HTTPConnectionError(f"a malformed chunk size: {size_text[:20]!r}") from None
            if size == 0:
                # the last chunk: optional trailer lines, then an empty line
                end = buffer.find(b"\r\n\r\n", line_end)
                if end < 0:
                    return
                del buffer[: end + 4]
                self._pos = 0
                self._done(b"".join(self._chunks))
                return
            start = line_end + 2
            if len(buffer) < start + size + 2:
                return
            if buffer[start + size : start + size + 2] != b"\r\n":
                raise HTTPConnectionError("a chunk not ended by CRLF")
            self._chunks.append(bytes(buffer[start : start + size]))
            self._pos = start + size + 2
            if self._pos > 65536:  # drop what is parsed, keep the buffer short
                del buffer[: self._pos]
                self._pos = 0

    def _done(self, body: bytes) -> None:
        waiter, headers = self._waiter, self._headers
        assert waiter is not None and headers is not None
        self._reset()
        if self._buffer:  # more than the answer: not HTTP as we know it
            self._keep_alive = False
        if not waiter.done():
            waiter.set_result(Response(self._status, CIMultiDictProxy(headers), body))

    def _reset(self) -> None:
        self._headers = None
        self._chunked = False
        self._chunks = []
        self._length = None
        self._pos = 0

    def _finish_at_close(self, exc: Exception | None = None) -> None:
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if self._headers is not None and self._length is None and not self._chunked:
            body = bytes(self._buffer)
            self._buffer.clear()
            self._keep_alive = False
            self._done(body)
            return
        if not self._received:
            self._fail(_Closed("the server closed the connection before answering"))
        else:
            self._fail(HTTPConnectionError(f"the server closed the connection mid-answer: {exc}"))

    def _fail(self, err: Exception) -> None:
        waiter = self._waiter
        self._reset()
        self.close()
        if waiter is not None and not waiter.done():
            waiter.set_exception(err)

    @property
    def keep_alive(self) -> bool:
        return self._keep_alive and not self.closed


class ConnectionPool:
    """Kept HTTP/1.1 connections to one server."""

    def __init__(
        self,
        host: str,
        port: int,
        ssl_context: ssl.SSLContext | None,
        *,
        server_hostname: str | None = None,
        idle_timeout: float = IDLE_TIMEOUT,
    ) -> None:
        self.host = host
        self.port = port
        self.ssl_context = ssl_context
        self.server_hostname = server_hostname or host
        """The name the server's certificate is checked against (and sent as SNI)."""
        self.idle_timeout = idle_timeout
        default_port = 443 if ssl_context is not None else 80
        bracketed = f"[{host}]" if ":" in host else host
        self.host_header = bracketed if port == default_port else f"{bracketed}:{port}"
        self._idle: deque[_Connection] = deque()
        self.opened = 0
        """Connections opened so far (for tests and benchmarks)."""

    async def request(
        self, method: str, target: str, head: bytes, body: bytes | None = None
    ) -> Response:
        """Send `method target` with the header lines `head` (each ending in CRLF) and `body`."""
        request = b"%s %s HTTP/1.1\r\nHost: %s\r\n%s" % (
            method.encode("ascii"),
            target.encode("ascii"),
            self.host_header.encode("idna"),
            head,
        )
        if body is not None:
            request += b"Content-Length: %d\r\n\r\n" % len(body) + body
        else:
            request += b"\r\n"
        head_only = method in _NO_BODY_METHODS
        conn, reused = self._take()
        if conn is None:
            conn = await self._open()
        try:
            response = await conn.send(request, head_only)
        except _Closed:
            if not (reused and method in _REPLAYABLE):
                raise
            conn = await self._open()  # the server closed a kept connection: once more, anew
            try:
                response = await conn.send(request, head_only)
            except BaseException:
                conn.close()
                raise
        except BaseException:
            conn.close()
            raise
        if conn.keep_alive:
            conn.idle_since = time.monotonic()
            self._idle.append(conn)
        else:
            conn.close()
        return response

    def _take(self) -> tuple[_Connection | None, bool]:
        now = time.monotonic()
        while self._idle:
            conn = self._idle.pop()
            if conn.closed:
                continue
            if now - conn.idle_since > self.idle_timeout:
                conn.close()
                continue
            return conn, True
        return None, False

    async def _open(self) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            _, conn = await loop.create_connection(
                _Connection,
                self.host,
                self.port,
                ssl=self.ssl_context,
                server_hostname=self.server_hostname if self.ssl_context is not None else None,
            )
        except OSError as err:
            raise HTTPConnectionError(f"cannot connect to {self.host_header}: {err}") from err
        self.opened += 1
        return conn

    def close(self) -> None:
        """Close every kept connection."""
        while self._idle:
            self._idle.pop().close()
