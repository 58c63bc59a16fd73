"""An in-memory API for one resource: list with pagination, watch from an RV, injected faults."""

from __future__ import annotations

import asyncio
import json
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

from agones.client.errors import error_from_status
from agones.client.rest import Resource
from tests.status import failure_status as status


def gs(name: str, ns: str = "default", **labels: str) -> dict[str, Any]:
    return {
        "apiVersion": "agones.dev/v1",
        "kind": "GameServer",
        "metadata": {"name": name, "namespace": ns, "labels": labels},
        "spec": {"ports": [{"name": "default", "containerPort": 7654}]},
        "status": {},
    }


class FakeAPI:
    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Any]] = {}
        self.rv = 100
        self.log: list[tuple[int, str, dict[str, Any]]] = []
        self.compacted = 0  # watches from an RV below this get 410
        self.list_calls: list[dict[str, Any]] = []
        self.watch_calls: list[dict[str, Any]] = []
        self.list_faults: deque[Exception] = deque()
        self.watch_faults: deque[Exception] = deque()
        self.gone_as_event = True
        self._changed = asyncio.Condition()
        self._generation = 0  # bumping it ends open watches

    # -- mutations ------------------------------------------------------------------------------

    def _record(self, type_: str, obj: dict[str, Any]) -> dict[str, Any]:
        self.rv += 1
        obj = json.loads(json.dumps(obj))
        obj["metadata"]["resourceVersion"] = str(self.rv)
        self.log.append((self.rv, type_, obj))
        self._notify()
        return obj

    def _notify(self) -> None:
        async def notify() -> None:
            async with self._changed:
                self._changed.notify_all()

        asyncio.get_running_loop().create_task(notify())

    @staticmethod
    def key(obj: dict[str, Any]) -> str:
        return f"{obj['metadata']['namespace']}/{obj['metadata']['name']}"

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        stored = self._record("ADDED", obj)
        self.objects[self.key(obj)] = stored
        return stored

    def update(self, obj: dict[str, Any]) -> dict[str, Any]:
        stored = self._record("MODIFIED", obj)
        self.objects[self.key(obj)] = stored
        return stored

    def delete(self, key: str) -> None:
        obj = self.objects.pop(key)
        self._record("DELETED", obj)

    def bookmark(self) -> None:
        self.rv += 1
        self.log.append((self.rv, "BOOKMARK", {"metadata": {"resourceVersion": str(self.rv)}}))
        self._notify()

    def compact(self) -> None:
        """Forget history: lists and watches from any RV before the current one get 410."""
        self.compacted = self.rv

    def drop_watches(self) -> None:
        self._generation += 1
        self._notify()

    # -- RawClient ------------------------------------------------------------------------------

    async def list_raw(self, res: Resource, namespace: str | None = None, **kw: Any) -> bytes:
        self.list_calls.append(kw)
        if self.list_faults:
            raise self.list_faults.popleft()
        rv = kw.get("resource_version")
        if rv not in (None, "", "0") and int(rv) < self.compacted:
            raise error_from_status(410, status(410, "Expired"))
        items = sorted(self.objects.values(), key=self.key)
        offset = int(kw.get("continue_") or 0)
        limit = kw.get("limit") or len(items) or 1
        page = items[offset : offset + limit]
        more = offset + limit < len(items)
        meta = {"resourceVersion": str(self.rv)}
        if more:
            meta["continue"] = str(offset + limit)
        return json.dumps({"kind": "GameServerList", "metadata": meta, "items": page}).encode()

    async def watch(
        self, res: Resource, namespace: str | None = None, **kw: Any
    ) -> AsyncIterator[bytes]:
        self.watch_calls.append(kw)
        if self.watch_faults:
            raise self.watch_faults.popleft()
        rv = int(kw["resource_version"] or 0)
        if rv < self.compacted:
            if not self.gone_as_event:
                raise error_from_status(410, status(410, "Expired"))
            yield json.dumps({"type": "ERROR", "object": status(410, "Expired")}).encode()
            return
        generation = self._generation
        sent = rv
        while True:
            for event_rv, type_, obj in self.log:
                if event_rv > sent:
                    sent = event_rv
                    yield json.dumps({"type": type_, "object": obj}).encode()
            async with self._changed:
                if self._generation != generation:
                    return
                if self.log and self.log[-1][0] > sent:
                    continue
                await self._changed.wait()
            if self._generation != generation:
                return
