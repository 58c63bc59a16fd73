"""`WriteCounter` counts the requests that change state at the API server (every verb except
get/list/watch), by client, the User-Agent's product: `agones-py` is the controller, `Python`
(aiohttp's default) sidecar processes, `agones-local-kubelet`, `-scheduler` and `-sdkserver` the
in-process kubelets, scheduler and simulated sidecars, `agones-extensions` the allocation API,
`kubectl` kubectl; those answered 409 are counted again in `conflicts`. The resource is the
path's, with its subresource (`gameservers/status`). `install(server)` wraps
the server's request handler; the local stack installs one (`LocalStack.writes`).
"""

from __future__ import annotations

from collections import Counter

from aiohttp import web

from .apiserver.errors import StatusError
from .apiserver.handlers import Target
from .apiserver.server import LocalAPIServer


def _client_of(user_agent: str) -> str:
    return user_agent.split(" ")[0].split("/")[0] or "unknown"


class WriteCounter:
    """Counts state-changing API requests by (client, verb, resource)."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, str, str]] = Counter()
        self.conflicts: Counter[tuple[str, str, str]] = Counter()
        """The counted requests answered 409 Conflict (stale resourceVersion or AlreadyExists)."""

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
            try:
                response = await inner(request, target)
            except StatusError as err:
                if err.code == 409:
                    self.conflicts[key] += 1
                raise
            if response.status == 409:
                self.conflicts[key] += 1
            return response

        server.handler.handle = counting  # type: ignore[method-assign]

    def total(self, client: str | None = None, resource: str | None = None) -> int:
        return sum(
            n
            for (c, _, r), n in self.counts.items()
            if (client is None or c == client) and (resource is None or r.startswith(resource))
        )
