"""The REST gateway on the HTTP port: grpc-gateway's behaviour for the SDK services, in aiohttp.

Routes come from the `google.api.http` options of the SDK protos, so paths and verbs are exactly the
proto's. Like grpc-gateway (as configured by Agones' `cmd/sdk-server`):

* `body: "*"` reads the body's (first) JSON value into the request, `body: "<field>"` into that
  field, path variables (`{counterUpdateRequest.name}`) override body values, GET requests read
  query params and no body; an empty body is an empty request, except `POST /health`, which
  answers 400 (Agones' wrapper);
* a body that does not decode into the request (not JSON, not an object, a field of the wrong
  type, a number out of range; see `protojson`) answers 400 with status INVALID_ARGUMENT, as the
  gateway's generated handlers answer a decoder error; unknown fields are discarded (Agones
  configures `DiscardUnknown`);
* PATCH with a body field and no `update_mask` query parameter gets the mask from the body's keys;
* a client stream (`/health`) takes a sequence of JSON objects, one message each;
* answers are protojson with proto names and every field (see `protojson`); errors are
  `{"code", "message", "details"}` with grpc-gateway's HTTP status for the gRPC code;
* a server stream (`/watch/gameserver`) is newline-delimited `{"result": ...}` objects, or, on a
  WebSocket upgrade (as tmc/grpc-websocket-proxy serves it, `?method=` overriding the verb), one
  text message per object; a client stream over a WebSocket takes one message per JSON value.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, unquote

import grpc
from aiohttp import WSMsgType, web
from google.api import annotations_pb2
from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor, MethodDescriptor
from google.protobuf.message import Message

from .backend import SERVICES, SDKBackend, backend_method, message_class
from .errors import SDKError
from .protojson import decode_values, marshal, unmarshal

# grpc-gateway's runtime.HTTPStatusFromCode.
HTTP_STATUS: dict[grpc.StatusCode, int] = {
    grpc.StatusCode.OK: 200,
    grpc.StatusCode.CANCELLED: 499,
    grpc.StatusCode.UNKNOWN: 500,
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.DEADLINE_EXCEEDED: 504,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.FAILED_PRECONDITION: 400,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.OUT_OF_RANGE: 400,
    grpc.StatusCode.UNIMPLEMENTED: 501,
    grpc.StatusCode.INTERNAL: 500,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DATA_LOSS: 500,
}

_VERBS = ("get", "put", "post", "delete", "patch")
_NO_BODY = object()
"""An empty request body (an empty request), unlike a JSON `null` (a decoding error)."""


@dataclass(frozen=True)
class Route:
    http_method: str
    template: str
    regex: re.Pattern[str]
    variables: tuple[str, ...]
    body: str
    method: MethodDescriptor


def compile_template(template: str) -> tuple[re.Pattern[str], tuple[str, ...]]:
    """`/v1beta1/lists/{name}:addValue` → a regex with one group per variable, and the variables."""
    variables: list[str] = []
    pattern = ""
    pos = 0
    for match in re.finditer(r"\{([^}=]+)\}", template):
        pattern += re.escape(template[pos : match.start()])
        pattern += f"(?P<v{len(variables)}>[^/]+?)"
        variables.append(match.group(1))
        pos = match.end()
    pattern += re.escape(template[pos:])
    return re.compile(pattern), tuple(variables)


def build_routes() -> list[Route]:
    """One route per RPC of the three SDK services, from their `google.api.http` options."""
    routes: list[Route] = []
    for service in SERVICES:
        for method in service.methods:
            rule = method.GetOptions().Extensions[annotations_pb2.http]
            for verb in _VERBS:
                template = getattr(rule, verb)
                if template:
                    regex, variables = compile_template(template)
                    routes.append(
                        Route(verb.upper(), template, regex, variables, rule.body, method)
                    )
    return routes


def error_body(code: grpc.StatusCode, message: str) -> dict[str, Any]:
    return {"code": code.value[0], "message": message, "details": []}


def _json_response(status: int, data: Any) -> web.Response:
    return web.Response(
        status=status,
        text=json.dumps(data, separators=(",", ":")),
        content_type="application/json",
        headers={"Grpc-Metadata-Content-Type": "application/grpc"},
    )


def _error_response(code: grpc.StatusCode, message: str) -> web.Response:
    return _json_response(HTTP_STATUS.get(code, 500), error_body(code, message))


def _field_path(message: Message, path: str) -> tuple[Message, FieldDescriptor]:
    """The message holding the last element of a dotted path, and that field."""
    parts = path.split(".")
    for part in parts[:-1]:
        field = _find_field(message, part)
        message = getattr(message, field.name)
    return message, _find_field(message, parts[-1])


def _find_field(message: Message, name: str) -> FieldDescriptor:
    descriptor = message.DESCRIPTOR
    field = descriptor.fields_by_name.get(name)
    if field is None:
        field = next((f for f in descriptor.fields if f.json_name == name), None)
    if field is None:
        raise SDKError(grpc.StatusCode.INVALID_ARGUMENT, f'no field "{name}" in {descriptor.name}')
    return field


def _scalar(field: FieldDescriptor, text: str) -> Any:
    if field.cpp_type in (
        FieldDescriptor.CPPTYPE_INT32,
        FieldDescriptor.CPPTYPE_INT64,
        FieldDescriptor.CPPTYPE_UINT32,
        FieldDescriptor.CPPTYPE_UINT64,
    ):
        return int(text)
    if field.cpp_type == FieldDescriptor.CPPTYPE_BOOL:
        if text not in ("true", "false", "1", "0", "True", "False", "t", "f", "T", "F"):
            raise ValueError(f"invalid boolean {text!r}")
        return text in ("true", "1", "True", "t", "T")
    if field.cpp_type in (FieldDescriptor.CPPTYPE_FLOAT, FieldDescriptor.CPPTYPE_DOUBLE):
        return float(text)
    return text


def _set_path(message: Message, path: str, text: str) -> None:
    holder, field = _field_path(message, path)
    if field.message_type is not None and field.message_type.full_name == (
        "google.protobuf.FieldMask"
    ):
        getattr(holder, field.name).paths.extend(p for p in text.split(",") if p)
    elif field.message_type is not None:
        json_format.Parse(json.dumps(text), getattr(holder, field.name))
    elif field.is_repeated:
        getattr(holder, field.name).append(_scalar(field, text))
    else:
        setattr(holder, field.name, _scalar(field, text))


def _mask_from_body(target: Message, body: Any, prefix: str = "") -> list[str]:
    """grpc-gateway's FieldMaskFromRequestBody: the proto paths of the keys present."""
    paths: list[str] = []
    if not isinstance(body, dict):
        return paths
    for key, value in body.items():
        try:
            field = _find_field(target, key)
        except SDKError:
            continue
        name = prefix + field.name
        is_plain_message = (
            field.message_type is not None
            and not field.is_repeated
            and not field.message_type.GetOptions().map_entry
            and not field.message_type.full_name.startswith("google.protobuf.")
        )
        if is_plain_message and isinstance(value, dict) and value:
            paths.extend(_mask_from_body(getattr(target, field.name), value, name + "."))
        else:
            paths.append(name)
    return paths


class Gateway:
    """Serves the SDK RPCs of `backend` over HTTP/JSON (and WebSocket for streams)."""

    def __init__(self, backend: SDKBackend) -> None:
        self.backend = backend
        self.routes = build_routes()

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.handle)
        return app

    def match(self, http_method: str, raw_path: str) -> tuple[Route, dict[str, str]] | int:
        """The route and its path variables, or 404/405."""
        found = False
        for route in self.routes:
            m = route.regex.fullmatch(raw_path)
            if m is None:
                continue
            found = True
            if route.http_method == http_method:
                values = {var: unquote(m.group(f"v{i}")) for i, var in enumerate(route.variables)}
                return route, values
        return 405 if found else 404

    async def handle(self, request: web.Request) -> web.StreamResponse:
        websocket = request.headers.get("Upgrade", "").lower() == "websocket"
        http_method = request.method
        if websocket:
            http_method = request.query.get("method", "GET").upper()
        matched = self.match(http_method, request.rel_url.raw_path)
        if matched == 404:
            return _error_response(grpc.StatusCode.NOT_FOUND, "Not Found")
        if matched == 405:
            return _json_response(
                405, error_body(grpc.StatusCode.UNIMPLEMENTED, "Method Not Allowed")
            )
        assert not isinstance(matched, int)
        route, variables = matched
        raw = b"" if websocket else await request.read()
        if (
            not websocket
            and route.method.client_streaming
            and route.template == "/health"
            and not raw
        ):
            return web.Response(status=400)
        try:
            messages = self._requests(route, variables, raw, request.rel_url.raw_query_string)
        except (json_format.ParseError, ValueError) as err:
            return _error_response(grpc.StatusCode.INVALID_ARGUMENT, str(err))
        except SDKError as err:
            return _error_response(err.code, err.message)
        fn = backend_method(self.backend, route.method)
        if websocket and route.method.client_streaming:
            return await self._websocket_client_stream(request, route, fn)
        if route.method.server_streaming:
            if websocket:
                return await self._websocket_stream(request, fn(messages[0]))
            return await self._stream(request, fn(messages[0]))
        try:
            if route.method.client_streaming:
                response = await fn(_aiter(messages))
            else:
                response = await fn(messages[0])
        except SDKError as err:
            if websocket:
                return await self._websocket_single(
                    request, {"error": error_body(err.code, err.message)}
                )
            return _error_response(err.code, err.message)
        if websocket:
            return await self._websocket_single(request, marshal(response))
        return _json_response(200, marshal(response))

    def _requests(
        self, route: Route, variables: dict[str, str], raw: bytes, query: str
    ) -> list[Message]:
        cls = message_class(route.method)
        if route.method.client_streaming:
            bodies: list[Any] = decode_values(raw)
        elif route.body:
            bodies = decode_values(raw, limit=1) or [_NO_BODY]
        else:
            bodies = [_NO_BODY]  # a route without a body binding does not read it
        query_params = parse_qsl(query, keep_blank_values=True)
        result: list[Message] = []
        for body in bodies:
            message = cls()
            if route.body == "*":
                if body is not _NO_BODY:
                    unmarshal(body, message)
            elif route.body:
                holder, field = _field_path(message, route.body)
                target = getattr(holder, field.name)
                target.SetInParent()
                if body is not _NO_BODY:
                    unmarshal(body, target)
                mask_field = message.DESCRIPTOR.fields_by_name.get("update_mask")
                given = {k for k, _ in query_params}
                if (
                    mask_field is not None
                    and route.http_method == "PATCH"
                    and not ({"update_mask", "updateMask"} & given)
                ):
                    message.update_mask.paths.extend(_mask_from_body(target, body))
            for key, value in query_params:
                if key in variables or route.body == "*":
                    continue
                try:
                    _field_path(message, key)
                except SDKError:
                    continue  # grpc-gateway ignores query parameters that name no field
                _set_path(message, key, value)
            for path, value in variables.items():
                _set_path(message, path, value)
            result.append(message)
        return result

    async def _stream(
        self, request: web.Request, items: AsyncIterator[Message]
    ) -> web.StreamResponse:
        response = web.StreamResponse(
            status=200,
            headers={
                "Content-Type": "application/json",
                "Grpc-Metadata-Content-Type": "application/grpc",
            },
        )
        response.enable_chunked_encoding()
        await response.prepare(request)
        try:
            async for item in items:
                line = json.dumps({"result": marshal(item)}, separators=(",", ":")) + "\n"
                await response.write(line.encode())
        except SDKError as err:
            line = json.dumps({"error": error_body(err.code, err.message)}) + "\n"
            with contextlib.suppress(ConnectionError):
                await response.write(line.encode())
        except ConnectionError:
            pass
        finally:
            await _aclose(items)
        return response

    async def _websocket_stream(
        self, request: web.Request, items: AsyncIterator[Message]
    ) -> web.StreamResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)

        async def pump() -> None:
            try:
                async for item in items:
                    await ws.send_str(json.dumps({"result": marshal(item)}, separators=(",", ":")))
            except SDKError as err:
                await ws.send_str(json.dumps({"error": error_body(err.code, err.message)}))
            finally:
                await _aclose(items)

        sender = asyncio.create_task(pump())
        try:
            async for msg in ws:
                if msg.type in (WSMsgType.CLOSE, WSMsgType.ERROR):
                    break
        finally:
            sender.cancel()
            with contextlib.suppress(asyncio.CancelledError, ConnectionError):
                await sender
            await ws.close()
        return ws

    async def _websocket_client_stream(
        self, request: web.Request, route: Route, fn: Any
    ) -> web.StreamResponse:
        """A client stream over a WebSocket: each text message carries request JSON (as the
        websocket proxy writes it into the request body); closing the socket ends the stream."""
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        cls = message_class(route.method)

        async def requests() -> AsyncIterator[Message]:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    break
                for body in decode_values(msg.data.encode()):
                    message = cls()
                    unmarshal(body, message)
                    yield message

        try:
            response = await fn(requests())
            data: Any = marshal(response)
        except SDKError as err:
            data = {"error": error_body(err.code, err.message)}
        except (json_format.ParseError, ValueError) as err:
            data = {"error": error_body(grpc.StatusCode.INVALID_ARGUMENT, str(err))}
        if not ws.closed:
            await ws.send_str(json.dumps(data, separators=(",", ":")))
            await ws.close()
        return ws

    async def _websocket_single(self, request: web.Request, data: Any) -> web.StreamResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        await ws.send_str(json.dumps(data, separators=(",", ":")))
        await ws.close()
        return ws


async def _aiter(messages: list[Message]) -> AsyncIterator[Message]:
    for message in messages:
        yield message


async def _aclose(items: AsyncIterator[Message]) -> None:
    aclose = getattr(items, "aclose", None)
    if aclose is not None:
        with contextlib.suppress(Exception):
            await aclose()
