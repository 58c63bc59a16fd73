"""The Kubernetes API path of allocation (Agones `pkg/gameserverallocations/controller.go`,
`Extensions`): `POST /apis/allocation.agones.dev/v1/namespaces/<ns>/gameserverallocations`.

`Extensions(allocator).register_api_resource(api)` publishes `gameserverallocations` (verb
`create`, short name `gsa`) on an `extensions.apiserver.APIServer`. A request body in JSON or YAML
(by Content-Type; none means JSON) is decoded into a GameServerAllocation of the path's namespace
and allocated; the answer, in the Accept'ed encoding, is:

* 201 with the GameServerAllocation and its status, whatever the outcome (Allocated, UnAllocated,
  Contention), as Agones answers;
* 422 `Status` `GameServerAllocation.allocation.agones.dev "<name>" is invalid: ...` with the causes;
* 400 `Status` for a body that is not a GameServerAllocation (Agones answers 500 here), 415 for an
  encoding other than JSON or YAML, 405 for any verb but POST;
* 500 `Status` when the allocation itself failed (the API server refused the write every time).
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import structlog
import yaml
from aiohttp import web

from ...apis.allocation.v1.gameserverallocation import (
    API_VERSION,
    GROUP,
    KIND,
    GameServerAllocation,
)
from ...apis.meta.objectmeta import ObjectMeta
from ...apis.scheme import SCHEME, DecodeError
from ...extensions.apiserver import (
    CONTENT_TYPE_JSON,
    CONTENT_TYPE_YAML,
    APIServer,
    encode,
    media_type,
    status_object,
)
from ...extensions.webhooks import invalid_status
from .allocator import Allocator, GameServerAllocationInvalid

RESOURCE = {
    "name": "gameserverallocations",
    "singularName": "gameserverallocation",
    "namespaced": True,
    "kind": KIND,
    "verbs": ["create"],
    "shortNames": ["gsa"],
}
MAX_BODY = 3 * 1024 * 1024


class BadRequest(Exception):
    def __init__(self, code: int, reason: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason


def _parse_body(content_type: str, body: bytes) -> Any:
    kind = media_type(content_type) if content_type else CONTENT_TYPE_JSON
    try:
        if kind == CONTENT_TYPE_JSON:
            return json.loads(body)
        if kind in (CONTENT_TYPE_YAML, "application/x-yaml", "text/yaml"):
            return yaml.safe_load(body)
    except (ValueError, yaml.YAMLError) as err:
        raise BadRequest(
            400, "BadRequest", f"could not decode GameServerAllocation: {err}"
        ) from None
    raise BadRequest(
        415, "UnsupportedMediaType", f'the body of the request was in an unknown format "{kind}"'
    )


def decode_game_server_allocation(
    content_type: str, body: bytes, namespace: str
) -> GameServerAllocation:
    """The request body as a GameServerAllocation of `namespace` (Go `allocationDeserialization`)."""
    raw = _parse_body(content_type, body)
    if not isinstance(raw, dict):
        raise BadRequest(400, "BadRequest", "could not decode GameServerAllocation: not an object")
    try:
        gsa = SCHEME.decode_as(GameServerAllocation, raw)
    except DecodeError as err:
        causes = "; ".join(str(e) for e in err.errors) or str(err)
        raise BadRequest(
            400, "BadRequest", f"could not decode GameServerAllocation json: {causes}"
        ) from None
    if not isinstance(gsa.metadata, ObjectMeta):
        gsa.metadata = ObjectMeta()
    gsa.metadata.namespace = namespace
    gsa.api_version = API_VERSION
    gsa.kind = KIND
    return gsa


class Extensions:
    def __init__(self, allocator: Allocator, logger: Any = None) -> None:
        self.allocator = allocator
        self.log = (logger or structlog.get_logger()).bind(component="allocation-api")

    def register_api_resource(self, api: APIServer) -> None:
        api.add_api_resource(API_VERSION, dict(RESOURCE), self.process_allocation_request)

    async def process_allocation_request(
        self, request: web.Request, namespace: str
    ) -> web.StreamResponse:
        if request.method != "POST":
            return encode(
                request, status_object(405, "MethodNotAllowed", "Method not supported"), 405
            )
        try:
            body = await request.content.read(MAX_BODY + 1)
            if len(body) > MAX_BODY:
                raise BadRequest(413, "RequestEntityTooLarge", "the request is too large")
            gsa = decode_game_server_allocation(
                request.headers.get("Content-Type", ""), body, namespace
            )
            out = await self.allocator.allocate(gsa)
        except BadRequest as err:
            return encode(request, status_object(err.code, err.reason, str(err)), err.code)
        except GameServerAllocationInvalid as err:
            status = {"kind": "Status", "apiVersion": "v1"}
            status.update(invalid_status(GROUP, KIND, err.name, err.errors))
            return encode(request, status, 422)
        except Exception as err:
            self.log.error("allocation failed", error=str(err))
            return encode(
                request, status_object(500, "InternalError", f"allocation failed: {err}"), 500
            )
        return encode(request, msgspec.to_builtins(out), 201)
