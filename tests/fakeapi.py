"""The tests' one fake Kubernetes-style API server: in memory, on aiohttp (real HTTP).

Any `/api/v1/...` or `/apis/<group>/<version>/...` path, namespaced or not: list (label selector
`k=v[,k=v]`, field selector `metadata.name=<name>`), watch (replays events after
`resourceVersion`, then streams live ones), get, create (409 AlreadyExists), update with optimistic
concurrency (409 Conflict on a stale resourceVersion), `/status` updates (only `status` changes),
merge patches (the local API server's) and JSON patches (`agones.jsonpatch`: a failed `test`
or a bad patch is 422), delete
and delete-collection. Every request is recorded with its content type and body.

For the components that must survive an unreliable server: `inject_watch_error` answers watches
with an ERROR event, `gone_next_watch` answers the next one 410 Gone, `drop_watches()` ends the
open streams; `watch_requests` counts watches. `update(prefix, namespace, name, change)` is another
writer. `serving(token)` runs it on a real port (for processes), `kubeconfig(dir)` points at it;
with a token, every request must carry it. For one-object fakes with richer state (counted writes,
injected faults) see `tests/unit/controllers/gameservers/fakeapi.py`, which is RESTClient-shaped.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from agones.jsonpatch import PatchError, apply_patch
from agones.localcluster.apiserver.patch import apply_merge_patch
from tests.status import failure_status


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    content_type: str
    body: Any
    status: int = 0
    """The status the fake answered with."""


def _status(code: int, reason: str, message: str) -> web.Response:
    return web.json_response(failure_status(code, reason, message), status=code)


def _selected(obj: dict[str, Any], selector: str) -> bool:
    labels = obj.get("metadata", {}).get("labels") or {}
    for term in filter(None, selector.split(",")):
        key, _, value = term.partition("=")
        if labels.get(key) != value:
            return False
    return True


def _field_selected(obj: dict[str, Any], selector: str) -> bool:
    """`metadata.name=<name>` (all the fakes' clients use); other fields are not indexed."""
    for term in filter(None, selector.split(",")):
        key, _, value = term.partition("=")
        if key == "metadata.name" and obj.get("metadata", {}).get("name") != value:
            return False
    return True


@dataclass
class FakeServer:
    objects: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    events: list[tuple[int, str, str, dict[str, Any]]] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)
    rv: int = 100
    inject_watch_error: dict[str, Any] | None = None
    gone_next_watch: bool = False
    watch_requests: int = 0
    token: str | None = None
    port: int = 0
    _changed: asyncio.Event = field(default_factory=asyncio.Event)
    _streams: set[asyncio.Task[Any]] = field(default_factory=set)

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.handle)
        return app

    @staticmethod
    def _parse(path: str) -> tuple[str, str | None, str | None, str | None]:
        """(resource prefix, namespace, name, subresource) of an API path."""
        parts = path.strip("/").split("/")
        head = parts[:2] if parts[0] == "api" else parts[:3]
        rest = parts[len(head) :]
        namespace = None
        if rest and rest[0] == "namespaces" and len(rest) >= 3:
            namespace, rest = rest[1], rest[2:]
        plural = rest[0]
        name = rest[1] if len(rest) > 1 else None
        sub = rest[2] if len(rest) > 2 else None
        return "/".join([*head, plural]), namespace, name, sub

    async def _bump(self, kind: str, prefix: str, obj: dict[str, Any]) -> None:
        self._record(kind, prefix, obj)

    def _record(self, kind: str, prefix: str, obj: dict[str, Any]) -> None:
        self.events.append((self.rv, kind, prefix, copy.deepcopy(obj)))
        changed, self._changed = self._changed, asyncio.Event()
        changed.set()

    def update(
        self, prefix: str, namespace: str, name: str, change: Callable[[dict[str, Any]], None]
    ) -> dict[str, Any]:
        """Another writer (a controller, the allocator) changes a stored object."""
        obj = copy.deepcopy(self.objects[(prefix, namespace, name)])
        change(obj)
        self.objects[(prefix, namespace, name)] = self._store(obj)
        self._record("MODIFIED", prefix, obj)
        return obj

    def drop_watches(self) -> None:
        """End every open watch stream (as an apiserver restart or timeout does)."""
        for task in list(self._streams):
            task.cancel()

    def kubeconfig(self, directory: Path) -> Path:
        path = directory / "kubeconfig"
        user = f"{{token: {self.token}}}" if self.token else "{}"
        path.write_text(
            "apiVersion: v1\nkind: Config\ncurrent-context: fake\n"
            f"clusters: [{{name: fake, cluster: {{server: 'http://127.0.0.1:{self.port}'}}}}]\n"
            f"users: [{{name: me, user: {user}}}]\n"
            "contexts: [{name: fake, context: {cluster: fake, user: me}}]\n"
        )
        return path

    @contextlib.asynccontextmanager
    async def serving(self) -> AsyncIterator[FakeServer]:
        """Serve on 127.0.0.1 on a free port (`port`) until the block ends."""
        runner = web.AppRunner(self.app(), handler_cancellation=True)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        self.port = runner.addresses[0][1]
        try:
            yield self
        finally:
            await runner.cleanup()

    def _store(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        return obj

    async def handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        body = json.loads(raw) if raw else None
        record = Recorded(
            request.method, request.path, dict(request.query), request.content_type, body
        )
        self.requests.append(record)
        if (
            self.token is not None
            and request.headers.get("Authorization") != f"Bearer {self.token}"
        ):
            response: web.StreamResponse = _status(401, "Unauthorized", "Unauthorized")
        else:
            response = await self._handle(request, body)
        record.status = response.status
        return response

    async def _handle(self, request: web.Request, body: Any) -> web.StreamResponse:
        prefix, ns, name, sub = self._parse(request.path)
        ns_key = ns or ""
        key = (prefix, ns_key, name or "")
        q = request.query
        if request.method == "GET" and name is None and q.get("watch") == "true":
            return await self._watch(request, prefix, ns, int(q.get("resourceVersion") or 0))
        if request.method == "GET" and name is None:
            items = [
                o
                for (p, n, _), o in sorted(self.objects.items())
                if p == prefix
                and (ns is None or n == ns)
                and _selected(o, q.get("labelSelector", ""))
                and _field_selected(o, q.get("fieldSelector", ""))
            ]
            return web.json_response(
                {"kind": "List", "metadata": {"resourceVersion": str(self.rv)}, "items": items}
            )
        if request.method == "GET":
            if key not in self.objects:
                return _status(404, "NotFound", f'{prefix} "{name}" not found')
            return web.json_response(self.objects[key])
        if request.method == "POST":
            meta = body.setdefault("metadata", {})
            meta.setdefault("namespace", ns) if ns else None
            key = (prefix, ns_key, meta["name"])
            if key in self.objects:
                return _status(409, "AlreadyExists", f'{prefix} "{meta["name"]}" already exists')
            meta["uid"] = f"uid-{meta['name']}"
            body.pop("status", None) if q.get("dryRun") else None
            if q.get("dryRun"):
                return web.json_response(body, status=201)
            self.objects[key] = self._store(body)
            await self._bump("ADDED", prefix, body)
            return web.json_response(body, status=201)
        if request.method == "DELETE" and name is None:
            for k in [k for k, o in self.objects.items() if k[0] == prefix and k[1] == ns_key]:
                if _selected(self.objects[k], q.get("labelSelector", "")):
                    gone = self.objects.pop(k)
                    self.rv += 1
                    await self._bump("DELETED", prefix, gone)
            return web.json_response({"kind": "Status", "status": "Success"})
        if key not in self.objects:
            return _status(404, "NotFound", f'{prefix} "{name}" not found')
        current = self.objects[key]
        if request.method == "DELETE":
            del self.objects[key]
            self.rv += 1
            await self._bump("DELETED", prefix, current)
            return web.json_response({"kind": "Status", "status": "Success"})
        if request.method == "PUT":
            sent_rv = body.get("metadata", {}).get("resourceVersion")
            if sent_rv and sent_rv != current["metadata"]["resourceVersion"]:
                return _status(409, "Conflict", "the object has been modified")
            if sub == "status":
                new = copy.deepcopy(current)
                new["status"] = body.get("status")
            else:
                new = body
            self.objects[key] = self._store(new)
            await self._bump("MODIFIED", prefix, new)
            return web.json_response(new)
        if request.method == "PATCH":
            if request.content_type == "application/json-patch+json":
                try:
                    patched = apply_patch(current, body)
                except PatchError as err:
                    return _status(422, "Invalid", str(err))
            else:
                patched = apply_merge_patch(current, body)
            self.objects[key] = self._store(patched)
            await self._bump("MODIFIED", prefix, patched)
            return web.json_response(patched)
        return _status(405, "MethodNotAllowed", request.method)

    async def _watch(
        self, request: web.Request, prefix: str, ns: str | None, since: int
    ) -> web.StreamResponse:
        self.watch_requests += 1
        if self.gone_next_watch:
            self.gone_next_watch = False
            return _status(410, "Expired", "too old resource version")
        resp = web.StreamResponse()
        resp.content_type = "application/json"
        await resp.prepare(request)
        if self.inject_watch_error is not None:
            event = {"type": "ERROR", "object": self.inject_watch_error}
            await resp.write(json.dumps(event).encode() + b"\n")
            return resp
        task = asyncio.current_task()
        assert task is not None
        self._streams.add(task)
        selector = request.query.get("fieldSelector", "")
        try:
            with contextlib.suppress(ConnectionError, asyncio.CancelledError):
                await self._stream(resp, prefix, ns, since, selector)
        finally:
            self._streams.discard(task)
        return resp

    async def _stream(
        self, resp: web.StreamResponse, prefix: str, ns: str | None, sent: int, selector: str
    ) -> None:
        while True:
            changed = self._changed
            for rv, kind, p, obj in self.events:
                if (
                    rv > sent
                    and p == prefix
                    and (ns is None or obj["metadata"].get("namespace") == ns)
                    and _field_selected(obj, selector)
                ):
                    await resp.write(json.dumps({"type": kind, "object": obj}).encode() + b"\n")
                    sent = rv
            await changed.wait()
