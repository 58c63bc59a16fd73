"""A minimal kube-apiserver for one GameServer, enough for the sidecar's list/watch/patch.

Backed by `InMemoryGameServerStore` (so tests can count writes and change the object as another
writer would). Real kube-apiserver behaviour it reproduces: list with a `metadata.name` field
selector, watch events as JSON lines from a resourceVersion, JSON patch with a failing `test`
answered 422. The project's local API server replaces it in integration tests after merge.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from aiohttp import web

from agones.jsonpatch import PatchError
from agones.sdkserver.store import ConflictError, InMemoryGameServerStore

BASE = "/apis/agones.dev/v1/namespaces/{namespace}/gameservers"


class FakeAPI:
    def __init__(self, gs: dict[str, Any]) -> None:
        self.store = InMemoryGameServerStore(gs)
        self.name = gs["metadata"]["name"]
        self.namespace = gs["metadata"]["namespace"]
        self.port = 0
        self.runner: web.AppRunner | None = None
        self.events: list[dict[str, Any]] = []
        self.gone_next_watch = False
        self.watch_requests = 0
        self._streams: set[asyncio.Task[Any]] = set()

    async def start(self) -> None:
        app = web.Application()
        app.router.add_get(BASE, self.collection)
        app.router.add_patch(BASE + "/{name}", self.patch)
        app.router.add_post("/api/v1/namespaces/{namespace}/events", self.post_event)
        self.runner = web.AppRunner(app, handler_cancellation=True)
        await self.runner.setup()
        site = web.TCPSite(self.runner, "127.0.0.1", 0)
        await site.start()
        self.port = self.runner.addresses[0][1]

    async def stop(self) -> None:
        if self.runner is not None:
            await self.runner.cleanup()

    def kubeconfig(self, directory: Path) -> Path:
        path = directory / "kubeconfig"
        path.write_text(
            "apiVersion: v1\nkind: Config\ncurrent-context: fake\n"
            f"clusters: [{{name: fake, cluster: {{server: 'http://127.0.0.1:{self.port}'}}}}]\n"
            "users: [{name: me, user: {token: secret}}]\n"
            "contexts: [{name: fake, context: {cluster: fake, user: me}}]\n"
        )
        return path

    async def collection(self, request: web.Request) -> web.StreamResponse:
        assert request.headers.get("Authorization") == "Bearer secret"
        assert request.match_info["namespace"] == self.namespace
        selector = request.query.get("fieldSelector", "")
        matches = selector == f"metadata.name={self.name}"
        if request.query.get("watch") != "true":
            current = self.store.current
            return web.json_response(
                {
                    "kind": "GameServerList",
                    "metadata": {"resourceVersion": current["metadata"]["resourceVersion"]},
                    "items": [current] if matches else [],
                }
            )
        self.watch_requests += 1
        if self.gone_next_watch:
            self.gone_next_watch = False
            return web.json_response(
                {"kind": "Status", "code": 410, "reason": "Expired"}, status=410
            )
        response = web.StreamResponse()
        await response.prepare(request)
        task = asyncio.current_task()
        assert task is not None
        self._streams.add(task)
        since = int(request.query.get("resourceVersion") or 0)
        current = self.store.current
        if int(current["metadata"]["resourceVersion"]) > since:
            await response.write(
                json.dumps({"type": "MODIFIED", "object": current}).encode() + b"\n"
            )
        try:
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                async for gs in self.store.watch():
                    event = {"type": "MODIFIED", "object": gs}
                    await response.write(json.dumps(event).encode() + b"\n")
        finally:
            self._streams.discard(task)
        return response

    def drop_watches(self) -> None:
        """End every open watch stream (as an apiserver restart or timeout does)."""
        for task in list(self._streams):
            task.cancel()

    async def post_event(self, request: web.Request) -> web.Response:
        event = await request.json()
        self.events.append(event)
        return web.json_response(event, status=201)

    async def patch(self, request: web.Request) -> web.Response:
        assert request.content_type == "application/json-patch+json"
        try:
            gs = await self.store.patch(await request.json())
        except ConflictError as err:
            return web.json_response(
                {"kind": "Status", "code": 422, "message": str(err)}, status=422
            )
        except PatchError as err:
            return web.json_response(
                {"kind": "Status", "code": 422, "message": str(err)}, status=422
            )
        return web.json_response(gs)


@contextlib.asynccontextmanager
async def fake_api(gs: dict[str, Any]) -> AsyncIterator[FakeAPI]:
    api = FakeAPI(gs)
    await api.start()
    try:
        yield api
    finally:
        await api.stop()
