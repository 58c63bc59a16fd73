"""A small in-memory Kubernetes-style API server on aiohttp, for the typed client tests.

Any `/api/v1/...` or `/apis/<group>/<version>/...` path, namespaced or not: list (label selector
`k=v[,k=v]`), watch (replays events after `resourceVersion`, then streams live ones), get, create
(409 AlreadyExists), update with optimistic concurrency (409 Conflict on a stale resourceVersion),
`/status` updates (only `status` changes), merge and JSON patches (add/replace/remove/test), delete
and delete-collection. Every request is recorded with its content type and body.
"""

from __future__ import annotations

import asyncio
import copy
import json
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.status import failure_status


@dataclass
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    content_type: str
    body: Any


def _status(code: int, reason: str, message: str) -> web.Response:
    return web.json_response(failure_status(code, reason, message), status=code)


def _selected(obj: dict[str, Any], selector: str) -> bool:
    labels = obj.get("metadata", {}).get("labels") or {}
    for term in filter(None, selector.split(",")):
        key, _, value = term.partition("=")
        if labels.get(key) != value:
            return False
    return True


def _merge(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = _merge(out.get(k), v)
    return out


def _json_patch(obj: dict[str, Any], ops: list[dict[str, Any]]) -> dict[str, Any] | None:
    """Apply add/replace/remove/test; None when a `test` fails."""
    obj = copy.deepcopy(obj)
    for op in ops:
        *parents, last = [
            p.replace("~1", "/").replace("~0", "~") for p in op["path"][1:].split("/")
        ]
        node: Any = obj
        for p in parents:
            node = node[int(p)] if isinstance(node, list) else node.setdefault(p, {})
        if op["op"] == "test":
            if node.get(last) != op["value"]:
                return None
        elif op["op"] in ("add", "replace"):
            node[last] = op["value"]
        elif op["op"] == "remove":
            node.pop(last, None)
    return obj


@dataclass
class FakeServer:
    objects: dict[tuple[str, str, str], dict[str, Any]] = field(default_factory=dict)
    events: list[tuple[int, str, str, dict[str, Any]]] = field(default_factory=list)
    requests: list[Recorded] = field(default_factory=list)
    rv: int = 100
    inject_watch_error: dict[str, Any] | None = None
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)

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
        self.events.append((self.rv, kind, prefix, copy.deepcopy(obj)))
        async with self._changed:
            self._changed.notify_all()

    def _store(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        return obj

    async def handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        body = json.loads(raw) if raw else None
        self.requests.append(
            Recorded(request.method, request.path, dict(request.query), request.content_type, body)
        )
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
                patched = _json_patch(current, body)
                if patched is None:
                    return _status(422, "Invalid", "the test operation failed")
            else:
                patched = _merge(current, body)
            self.objects[key] = self._store(patched)
            await self._bump("MODIFIED", prefix, patched)
            return web.json_response(patched)
        return _status(405, "MethodNotAllowed", request.method)

    async def _watch(
        self, request: web.Request, prefix: str, ns: str | None, since: int
    ) -> web.StreamResponse:
        resp = web.StreamResponse()
        resp.content_type = "application/json"
        await resp.prepare(request)
        if self.inject_watch_error is not None:
            event = {"type": "ERROR", "object": self.inject_watch_error}
            await resp.write(json.dumps(event).encode() + b"\n")
            return resp
        sent = since
        while True:
            for rv, kind, p, obj in self.events:
                if (
                    rv > sent
                    and p == prefix
                    and (ns is None or obj["metadata"].get("namespace") == ns)
                ):
                    await resp.write(json.dumps({"type": kind, "object": obj}).encode() + b"\n")
                    sent = rv
            async with self._changed:
                await self._changed.wait()
