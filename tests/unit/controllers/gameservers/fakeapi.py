"""An in-memory API server for many resources, shaped like `RESTClient` (what the controllers use).

Objects are JSON dicts keyed by (plural, namespace, name) with one resourceVersion sequence. It
does what the controllers rely on: list/watch from a resourceVersion with label selectors, create
(generateName, AlreadyExists), update with optimistic concurrency (409 Conflict), finalizers
(delete sets deletionTimestamp; the last finalizer removed deletes), patch (merge), and counts every
write by (verb, plural). `faults[(verb, plural)]` raises queued errors for the next such writes.
"""

from __future__ import annotations

import asyncio
import bisect
import copy
import itertools
import json
from collections import Counter, defaultdict, deque
from collections.abc import AsyncIterator, Callable
from typing import Any

import msgspec

from agones.client.errors import ApiError, error_from_status
from agones.client.rest import Resource
from agones.informers.labels import parse
from agones.localcluster.apiserver.patch import apply_merge_patch
from tests.status import failure_status as status


def api_error(code: int, reason: str, message: str = "") -> ApiError:
    return error_from_status(code, status(code, reason, message))


class FakeAPI:
    def __init__(self) -> None:
        self.objects: dict[tuple[str, str, str], dict[str, Any]] = {}
        self.rv = 1000
        self.log: dict[str, list[tuple[int, str, dict[str, Any]]]] = defaultdict(list)
        self.writes: Counter[tuple[str, str]] = Counter()
        self.conflicts = 0
        self.faults: dict[tuple[str, str], deque[ApiError]] = defaultdict(deque)
        self.changed = asyncio.Condition()
        self._uids = itertools.count(1)
        self._names = itertools.count(1)
        self.now = "2026-01-01T00:00:00Z"

    # -- helpers for tests --------------------------------------------------------------------

    def objects_of(self, plural: str) -> list[dict[str, Any]]:
        return [copy.deepcopy(o) for (p, _, _), o in self.objects.items() if p == plural]

    def find(self, plural: str, name: str, namespace: str = "default") -> dict[str, Any] | None:
        obj = self.objects.get((plural, namespace, name))
        return copy.deepcopy(obj) if obj is not None else None

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 5.0) -> Any:
        """Wait until `predicate()` is truthy (re-checked on every change); return its value."""

        async def poll() -> Any:
            async with self.changed:
                while True:
                    value = predicate()
                    if value:
                        return value
                    await self.changed.wait()

        return await asyncio.wait_for(poll(), timeout)

    def writes_for(self, plural: str) -> int:
        return sum(n for (verb, p), n in self.writes.items() if p == plural)

    async def mutate(
        self,
        plural: str,
        name: str,
        fn: Callable[[dict[str, Any]], None],
        namespace: str = "default",
    ) -> None:
        """Change a stored object as another actor would (kubelet, scheduler, sdk-server)."""
        obj = copy.deepcopy(self.objects[(plural, namespace, name)])
        fn(obj)
        self._store(plural, obj, "MODIFIED")
        await self._notify()

    async def put(self, plural: str, obj: dict[str, Any]) -> dict[str, Any]:
        """Create or replace without admission (test setup)."""
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        meta.setdefault("uid", f"uid-{next(self._uids)}")
        key = (plural, meta.get("namespace", ""), meta["name"])
        stored = self._store(plural, obj, "MODIFIED" if key in self.objects else "ADDED")
        await self._notify()
        return stored

    # -- internals ------------------------------------------------------------------------------

    def _store(self, plural: str, obj: dict[str, Any], event: str) -> dict[str, Any]:
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        meta = obj["metadata"]
        key = (plural, meta.get("namespace", ""), meta["name"])
        if event == "DELETED":
            self.objects.pop(key, None)
        else:
            self.objects[key] = obj
        self.log[plural].append((self.rv, event, copy.deepcopy(obj)))
        return copy.deepcopy(obj)

    def poke(self, *_: Any) -> None:
        """Wake `wait_for` callers (e.g. from an informer handler, after the cache moved)."""
        asyncio.get_running_loop().create_task(self._notify())

    async def _notify(self) -> None:
        async with self.changed:
            self.changed.notify_all()

    def _fault(self, verb: str, res: Resource) -> None:
        self.writes[(verb, res.plural)] += 1
        queue = self.faults.get((verb, res.plural))
        if queue:
            raise queue.popleft()

    @staticmethod
    def _body(body: Any) -> dict[str, Any]:
        if isinstance(body, msgspec.Struct):
            return json.loads(msgspec.json.encode(body))
        return copy.deepcopy(body)

    # -- RESTClient surface --------------------------------------------------------------------

    async def list_raw(self, res: Resource, namespace: str | None = None, **kw: Any) -> bytes:
        selector = parse(kw.get("label_selector") or "")
        items = [
            o
            for (p, ns, _), o in sorted(self.objects.items())
            if p == res.plural
            and (not namespace or ns == namespace)
            and selector.matches(o["metadata"].get("labels") or {})
        ]
        return json.dumps(
            {"kind": "List", "metadata": {"resourceVersion": str(self.rv)}, "items": items}
        ).encode()

    async def watch(
        self, res: Resource, namespace: str | None = None, **kw: Any
    ) -> AsyncIterator[bytes]:
        selector = parse(kw.get("label_selector") or "")
        sent = int(kw.get("resource_version") or 0)
        log = self.log[res.plural]
        pos = bisect.bisect_right([rv for rv, _, _ in log], sent)
        while True:
            while pos < len(log):
                _, event, obj = log[pos]
                pos += 1
                if namespace and obj["metadata"].get("namespace") != namespace:
                    continue
                if not selector.matches(obj["metadata"].get("labels") or {}):
                    continue
                yield json.dumps({"type": event, "object": obj}).encode()
            async with self.changed:
                if pos < len(log):
                    continue
                await self.changed.wait()

    async def get(
        self, res: Resource, name: str, namespace: str | None = None, subresource: str | None = None
    ) -> dict[str, Any]:
        obj = self.objects.get((res.plural, namespace or "", name))
        if obj is None:
            raise api_error(404, "NotFound", f'{res.plural} "{name}" not found')
        return copy.deepcopy(obj)

    async def create(
        self, res: Resource, body: Any, namespace: str | None = None
    ) -> dict[str, Any]:
        self._fault("create", res)
        obj = self._body(body)
        meta = obj.setdefault("metadata", {})
        if not meta.get("name"):
            meta["name"] = f"{meta.get('generateName', 'obj-')}{next(self._names):05d}"
        meta["namespace"] = namespace or meta.get("namespace", "")
        if (res.plural, meta["namespace"], meta["name"]) in self.objects:
            raise api_error(409, "AlreadyExists", f'{res.plural} "{meta["name"]}" already exists')
        meta["uid"] = f"uid-{next(self._uids)}"
        meta["creationTimestamp"] = self.now
        stored = self._store(res.plural, obj, "ADDED")
        await self._notify()
        return stored

    async def create_raw(self, res: Resource, body: Any, namespace: str | None = None) -> bytes:
        return json.dumps(await self.create(res, body, namespace)).encode()

    async def update(
        self, res: Resource, body: Any, namespace: str | None = None, subresource: str | None = None
    ) -> dict[str, Any]:
        self._fault("update", res)
        obj = self._body(body)
        meta = obj["metadata"]
        ns = namespace or meta.get("namespace", "")
        current = self.objects.get((res.plural, ns, meta["name"]))
        if current is None:
            raise api_error(404, "NotFound", f'{res.plural} "{meta["name"]}" not found')
        rv = meta.get("resourceVersion")
        if rv and rv != current["metadata"]["resourceVersion"]:
            self.conflicts += 1
            raise api_error(409, "Conflict", "the object has been modified")
        for key in ("uid", "creationTimestamp", "deletionTimestamp"):
            if key in current["metadata"]:
                meta[key] = current["metadata"][key]
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            stored = self._store(res.plural, obj, "DELETED")
        else:
            stored = self._store(res.plural, obj, "MODIFIED")
        await self._notify()
        return stored

    async def update_raw(
        self, res: Resource, body: Any, namespace: str | None = None, subresource: str | None = None
    ) -> bytes:
        return json.dumps(await self.update(res, body, namespace, subresource)).encode()

    async def patch(
        self, res: Resource, name: str, patch: Any, *, namespace: str | None = None, **kw: Any
    ) -> dict[str, Any]:
        self._fault("patch", res)
        current = self.objects.get((res.plural, namespace or "", name))
        if current is None:
            raise api_error(404, "NotFound", f'{res.plural} "{name}" not found')
        obj = copy.deepcopy(current)
        if kw.get("patch_type", "merge") == "merge":
            obj = apply_merge_patch(obj, self._body(patch))
        else:
            obj.update({k: v for k, v in self._body(patch).items() if k != "metadata"})
        stored = self._store(res.plural, obj, "MODIFIED")
        await self._notify()
        return stored

    async def delete(
        self, res: Resource, name: str, namespace: str | None = None, **kw: Any
    ) -> dict[str, Any]:
        self._fault("delete", res)
        current = self.objects.get((res.plural, namespace or "", name))
        if current is None:
            raise api_error(404, "NotFound", f'{res.plural} "{name}" not found')
        obj = copy.deepcopy(current)
        if obj["metadata"].get("finalizers"):
            if not obj["metadata"].get("deletionTimestamp"):
                obj["metadata"]["deletionTimestamp"] = self.now
                self._store(res.plural, obj, "MODIFIED")
        else:
            self._store(res.plural, obj, "DELETED")
        await self._notify()
        return status(200, "Success")

    async def delete_raw(
        self, res: Resource, name: str, namespace: str | None = None, **kw: Any
    ) -> bytes:
        return json.dumps(await self.delete(res, name, namespace, **kw)).encode()
