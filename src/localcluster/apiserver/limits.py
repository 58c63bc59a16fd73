"""The request limits kube-apiserver enforces before any registry logic, and how it words them.

- A request body is read up to `MAX_REQUEST_BODY_BYTES` (genericapiserver's MaxRequestBodyBytes,
  3 MiB); a longer one is a 413 `RequestEntityTooLarge` (`limitedReadBody`).
- The request line and headers together may take up to `HEADER_READ_LIMIT` (the 1 MiB
  `MaxHeaderBytes` of the apiserver's `http.Server` plus the 4096 bytes of bufio slack Go's
  `initialReadLimitSize` adds), so a long label selector reaches the selector parser; more is
  Go's bare `431 Request Header Fields Too Large` (text/plain, connection closed), whether one
  line is too long (`HeaderLimitsServer`'s connections map aiohttp's parser error) or all of them
  together (`header_bytes`, checked first by the server's handler).
- A create or update body must be one of the media types the resource's serializers accept
  (`negotiation.NewUnsupportedMediaTypeError`, 415).
- A decoded body nested deeper than `MAX_DEPTH` is a 400, so recursive code further on (defaulting,
  pruning, validation, deep copies) always has room on the Python stack. Go's decoders stop at
  10,000 levels; Python's stack does not reach that, and no Kubernetes object comes close to the
  limit here.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from itertools import chain
from typing import Any

from aiohttp import http_exceptions, web
from aiohttp.abc import AbstractStreamWriter
from aiohttp.http_parser import RawRequestMessage
from aiohttp.streams import StreamReader
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest
from aiohttp.web_server import Server

from . import errors

MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024
MAX_HEADER_BYTES = 1 << 20
HEADER_READ_LIMIT = MAX_HEADER_BYTES + 4096
HEADERS_TOO_LARGE = "431 Request Header Fields Too Large"
MAX_DEPTH = 256

JSON = "application/json"
YAML = "application/yaml"
PROTOBUF = "application/vnd.kubernetes.protobuf"
BUILTIN_MEDIA_TYPES = (JSON, YAML, PROTOBUF)
CUSTOM_MEDIA_TYPES = (JSON, YAML)


def request_entity_too_large(limit: int = MAX_REQUEST_BODY_BYTES) -> errors.StatusError:
    """apimachinery's NewRequestEntityTooLargeError as `limitedReadBody` raises it."""
    return errors.StatusError(
        413, "RequestEntityTooLarge", f"Request entity too large: limit is {limit}"
    )


def unsupported_media_type(accepted: tuple[str, ...]) -> errors.StatusError:
    """negotiation.NewUnsupportedMediaTypeError: the 415 listing what the endpoint decodes."""
    return errors.StatusError(
        415,
        "UnsupportedMediaType",
        "the body of the request was in an unknown format - accepted media types include: "
        + ", ".join(accepted),
    )


async def read_limited(request: web.Request) -> bytes:
    """The request body, or the 413 for one over the limit (the aiohttp application is built with
    `client_max_size=MAX_REQUEST_BODY_BYTES`, so the body is never buffered past it)."""
    length = request.content_length
    if length is not None and length > MAX_REQUEST_BODY_BYTES:
        raise request_entity_too_large()
    try:
        return await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise request_entity_too_large() from None


def too_deep(obj: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether `obj` nests maps and lists more than `limit` levels deep (iteratively: the check must
    not itself overflow the stack it protects)."""
    if not isinstance(obj, (dict, list)):
        return False
    stack: list[tuple[Any, int]] = [(obj, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


def too_many_nodes(obj: Any, limit: int = MAX_REQUEST_BODY_BYTES // 2) -> bool:
    """Whether `obj`, its YAML aliases expanded, holds more values than a body of the size limit
    could spell out (go-yaml refuses such documents for "excessive aliasing")."""
    stack: list[Any] = [obj]
    seen = 0
    while stack:
        node = stack.pop()
        children = list(node.values()) if isinstance(node, dict) else node
        seen += len(children)
        if seen > limit:
            return True
        stack.extend(c for c in children if isinstance(c, (dict, list)))
    return False


def may_be_too_deep(raw: bytes, is_json: bool) -> bool:
    """A cheap pre-check: JSON with fewer brackets than the limit cannot nest past it, so the walk of
    `too_deep` is only paid for bodies that might."""
    if not is_json:
        return True
    return raw.count(b"{") + raw.count(b"[") > MAX_DEPTH


def nesting_error() -> errors.StatusError:
    return errors.bad_request(
        f"the body of the request could not be decoded: exceeded max depth of {MAX_DEPTH}"
    )


def check_depth(raw: bytes, body: Any, is_json: bool) -> None:
    """Refuse a decoded body nested too deep or, from YAML, aliased too often."""
    if not isinstance(body, (dict, list)):
        return
    if not is_json and too_many_nodes(body):
        raise errors.bad_request(
            "the body of the request could not be decoded: yaml: document contains excessive aliasing"
        )
    if may_be_too_deep(raw, is_json) and too_deep(body):
        raise nesting_error()


class HTTPProtocolLogger(logging.LoggerAdapter):  # type: ignore[type-arg]
    """The logger of aiohttp's connection handler: a request aiohttp cannot parse (a malformed or
    over-long request line or header) is the client's fault, answered 400 by aiohttp; it is logged
    in one line, without the parser's traceback. Anything else keeps its traceback."""

    def exception(self, msg: object, *args: object, **kwargs: Any) -> None:
        exc = kwargs.get("exc_info")
        if isinstance(exc, http_exceptions.HttpProcessingError):
            kwargs.pop("exc_info")
            self.info("%s: %s", str(msg) % args, exc.message, **kwargs)
            return
        kwargs.setdefault("exc_info", True)
        self.error(msg, *args, **kwargs)


def header_bytes(request: BaseRequest) -> int:
    """The size of the request line and headers as they came on the wire (CRLFs included)."""
    raw = request.raw_headers
    line = len(request.method) + len(request.raw_path) + len(" HTTP/1.1\r\n")
    return line + sum(map(len, chain.from_iterable(raw))) + 4 * len(raw) + 2


def headers_too_large_response() -> web.Response:
    """What Go's net/http writes when the request line and headers pass the read limit."""
    resp = web.Response(status=431, text=HEADERS_TOO_LARGE, content_type="text/plain")
    resp.force_close()
    return resp


class _HeaderLimitsHandler(RequestHandler):
    """aiohttp's connection handler, answering a line longer than the parser takes as Go does."""

    __slots__ = ()

    def handle_error(
        self,
        request: BaseRequest,
        status: int = 500,
        exc: BaseException | None = None,
        message: str | None = None,
    ) -> web.StreamResponse:
        if isinstance(exc, http_exceptions.LineTooLong):
            self.logger.info("request header fields too large from %s", request.remote)
            return headers_too_large_response()
        return super().handle_error(request, status, exc, message)


class HeaderLimitsServer(Server):
    """aiohttp's low-level server with the apiserver's limits: request lines and headers up to
    `HEADER_READ_LIMIT` (one longer line answered with Go's 431), bodies buffered up to
    `MAX_REQUEST_BODY_BYTES`, parser errors logged in one line, no access log. Requests are
    `web.Request`s without a route (`match_info` unset): one handler serves them all."""

    def __init__(self, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> None:
        super().__init__(
            handler,  # type: ignore[arg-type]  # our factory makes every request a web.Request
            request_factory=self._make_limited_request,
            max_line_size=HEADER_READ_LIMIT,
            max_field_size=HEADER_READ_LIMIT,
            max_headers=32768,
            access_log=None,
            logger=HTTPProtocolLogger(logging.getLogger("agones.localcluster.http"), {}),
        )

    def _make_limited_request(
        self,
        message: RawRequestMessage,
        payload: StreamReader,
        protocol: RequestHandler,
        writer: AbstractStreamWriter,
        task: asyncio.Task[None],
    ) -> web.Request:
        return web.Request(
            message,
            payload,
            protocol,
            writer,
            task,
            self._loop,
            client_max_size=MAX_REQUEST_BODY_BYTES,
        )

    def __call__(self) -> RequestHandler:
        return _HeaderLimitsHandler(self, loop=self._loop, **self._kwargs)
