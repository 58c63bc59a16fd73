"""`WriteCounter` counts the requests that change state at the API server (every verb except
get/list/watch), by client, the User-Agent's product: `agones-py` is the controller, `Python`
(aiohttp's default) sidecar processes, `agones-local-kubelet`, `-scheduler` and `-sdkserver` the
in-process kubelets, scheduler and simulated sidecars, `agones-extensions` the allocation API,
`kubectl` kubectl; those answered 409 are counted again in `conflicts`. The resource is the
path's, with its subresource (`gameservers/status`). `install(server)` wraps
the server's request handler; the local stack installs one (`LocalStack.writes`).

With `sequences` set to a dict, every update and patch of a GameServer is also recorded in it,
by GameServer name, as `client:state:code` (the state the write asked for, `-` if none), in the
order the server answered them: what a benchmark shows of which transitions were written and
which writes lost a race.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import msgspec
from aiohttp import web

from .apiserver.errors import StatusError
from .apiserver.handlers import Target
from .apiserver.server import LocalAPIServer


def _client_of(user_agent: str) -> str:
    return user_agent.split(" ")[0].split("/")[0] or "unknown"


def _state_asked(method: str, body: bytes) -> str:
    """The `status.state` a GameServer update or patch body asks for (`-`: none)."""
    try:
        doc: Any = msgspec.json.decode(body)
    except msgspec.DecodeError:
        return "-"
    if method == "PATCH" and isinstance(doc, list):  # a JSON patch
        for op in doc:
            if isinstance(op, dict) and op.get("path") == "/status/state":
                return str(op.get("value"))
        return "-"
    status = doc.get("status") if isinstance(doc, dict) else None
    return str(status.get("state") or "-") if isinstance(status, dict) else "-"


async def _asked(request: web.Request) -> str:
    try:
        body = await request.read()  # kept by aiohttp for the handler's own read
    except web.HTTPException:
        return "-"
    return _state_asked(request.method, body)


class WriteCounter:
    """Counts state-changing API requests by (client, verb, resource)."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, str, str]] = Counter()
        self.conflicts: Counter[tuple[str, str, str]] = Counter()
        """The counted requests answered 409 Conflict (stale resourceVersion or AlreadyExists)."""
        self.sequences: dict[str, list[str]] | None = None
        """None, or GameServer name → its updates and patches (see the module docstring)."""

    def install(self, server: LocalAPIServer) -> None:
        inner = server.handler.handle

        async def counting(request: web.Request, target: Target) -> web.StreamResponse:
            method = request.method
            if method == "GET" or method == "HEAD" or method == "OPTIONS":
                return await inner(request, target)
            resource = target.resource
            if target.subresource:
                resource += "/" + target.subresource
            key = (_client_of(request.headers.get("User-Agent", "")), method, resource)
            self.counts[key] += 1
            traced = self.sequences is not None and resource == "gameservers" and target.name
            asked = await _asked(request) if traced else ""
            try:
                response = await inner(request, target)
            except StatusError as err:
                if err.code == 409:
                    self.conflicts[key] += 1
                if traced:
                    self._trace(target.name, f"{key[0]}:{asked}:{err.code}")
                raise
            if response.status == 409:
                self.conflicts[key] += 1
            if traced:
                self._trace(target.name, f"{key[0]}:{asked}:{response.status}")
            return response

        server.handler.handle = counting  # type: ignore[method-assign]

    def _trace(self, name: str, what: str) -> None:
        if self.sequences is not None:
            self.sequences.setdefault(name, []).append(what)

    def total(self, client: str | None = None, resource: str | None = None) -> int:
        return sum(
            n
            for (c, _, r), n in self.counts.items()
            if (client is None or c == client) and (resource is None or r.startswith(resource))
        )
