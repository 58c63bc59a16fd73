"""A small Kubernetes API extension server (Agones `pkg/util/apiserver`), served behind an
APIService by kube-aggregator (or the local cluster's aggregator).

`APIServer.add_api_resource(group_version, resource, handler)` publishes `resource` (an
`APIResource` dict) in the discovery document `GET /apis/<group_version>` and routes every request
under `/apis/<group_version>/namespaces/<ns>/<resource name>` to `handler(request, namespace)`.
Resources may be added after the routes are installed (`install(app)`); a path naming no resource
gets a 404 `Status`. `/openapi/v2` answers an empty document titled with the group, so an
aggregator probing for schemas finds one. Encoding: `accepted_media_type(request)` negotiates JSON
(the default) or YAML; `encode(request, obj, status)` writes the answer in it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
import yaml
from aiohttp import web

Handler = Callable[[web.Request, str], Awaitable[web.StreamResponse]]

CONTENT_TYPE_JSON = "application/json"
CONTENT_TYPE_YAML = "application/yaml"
SUPPORTED_MEDIA_TYPES = (CONTENT_TYPE_JSON, CONTENT_TYPE_YAML)
_ENCODER = msgspec.json.Encoder()


def media_type(header: str) -> str:
    """The bare media type of a Content-Type / Accept element (`application/json`)."""
    return header.split(";", 1)[0].strip().lower()


def accepted_media_type(request: web.Request) -> str | None:
    """The first supported type the Accept header allows (JSON when it allows anything)."""
    header = request.headers.get("Accept", "")
    if not header.strip():
        return CONTENT_TYPE_JSON
    for part in header.split(","):
        wanted = media_type(part)
        if wanted in ("*/*", "application/*", "application/json"):
            return CONTENT_TYPE_JSON
        if wanted in (CONTENT_TYPE_YAML, "application/x-yaml", "text/yaml"):
            return CONTENT_TYPE_YAML
    return None


def encode(request: web.Request, obj: Any, status: int = 200) -> web.Response:
    """`obj` (plain JSON data) in the negotiated encoding; JSON if none was acceptable."""
    if accepted_media_type(request) == CONTENT_TYPE_YAML:
        text = yaml.safe_dump(obj, sort_keys=False, default_flow_style=False)
        return web.Response(status=status, text=text, content_type=CONTENT_TYPE_YAML)
    return web.Response(status=status, body=_ENCODER.encode(obj), content_type=CONTENT_TYPE_JSON)


def status_object(code: int, reason: str, message: str, details: Any = None) -> dict[str, Any]:
    """A `metav1.Status` failure."""
    out: dict[str, Any] = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details is not None:
        out["details"] = details
    return out


def not_found(request: web.Request) -> web.Response:
    return encode(
        request,
        status_object(404, "NotFound", "the server could not find the requested resource"),
        404,
    )


class APIServer:
    def __init__(self, title: str = "allocation.agones.dev") -> None:
        self.title = title
        self.resource_lists: dict[str, dict[str, Any]] = {}
        self.delegates: dict[str, Handler] = {}

    def add_api_resource(
        self, group_version: str, resource: dict[str, Any], handler: Handler
    ) -> None:
        listing = self.resource_lists.setdefault(
            group_version,
            {
                "kind": "APIResourceList",
                "apiVersion": "v1",
                "groupVersion": group_version,
                "resources": [],
            },
        )
        listing["resources"].append(resource)
        self.delegates[f"{group_version}/{resource['name']}"] = handler

    def install(self, app: web.Application) -> None:
        app.router.add_get("/openapi/v2", self._openapi)
        app.router.add_route("*", "/apis/{group}/{version}", self._discovery)
        app.router.add_route(
            "*", "/apis/{group}/{version}/namespaces/{namespace}/{resource}", self._resource
        )

    async def _openapi(self, _: web.Request) -> web.Response:
        doc = {"swagger": "2.0", "info": {"title": self.title}, "paths": {}}
        return web.Response(body=_ENCODER.encode(doc), content_type=CONTENT_TYPE_JSON)

    async def _discovery(self, request: web.Request) -> web.Response:
        gv = f"{request.match_info['group']}/{request.match_info['version']}"
        listing = self.resource_lists.get(gv)
        if listing is None or request.method != "GET":
            return not_found(request)
        return encode(request, listing)

    async def _resource(self, request: web.Request) -> web.StreamResponse:
        m = request.match_info
        handler = self.delegates.get(f"{m['group']}/{m['version']}/{m['resource']}")
        if handler is None:
            return not_found(request)
        return await handler(request, m["namespace"])
