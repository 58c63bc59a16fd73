"""The GameServer the sidecar serves, as a small store interface, and an in-memory fake.

Cluster mode needs three things of the API server for one GameServer, all as Kubernetes JSON
dicts: `get()` it, `patch(json_patch)` it (raising `ConflictError` when a `test` op fails, i.e. the
object changed since it was read, Kubernetes' 409/422), and `watch()` it (the object after every
change, in order). `InMemoryGameServerStore` implements it for unit tests and benchmarks; it counts
writes and can delay each one to model API latency. `kubestore.KubeGameServerStore` implements it
over HTTP against a kube-apiserver. A store may also offer `subscribe(callback)`
(`SubscribableStore`: the simulated nodes' shared store, where a watch per sidecar would cost a
task and a queue hop per event).
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol, runtime_checkable

from ..jsonpatch import Patch, PatchTestFailed, apply_patch


class ConflictError(Exception):
    """The write lost a race with another writer; read again and retry."""


class Broadcast:
    """Fan-out of GameServer versions to every open `watch()`: each gets all, in order."""

    def __init__(self) -> None:
        self._queues: set[asyncio.Queue[dict[str, Any]]] = set()

    def publish(self, gs: dict[str, Any]) -> None:
        for queue in self._queues:
            queue.put_nowait(gs)

    async def watch(self) -> AsyncIterator[dict[str, Any]]:
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._queues.add(queue)
        try:
            while True:
                yield await queue.get()
        finally:
            self._queues.discard(queue)


class GameServerStore(Protocol):
    async def get(self) -> dict[str, Any]: ...
    async def patch(self, patch: Patch) -> dict[str, Any]: ...
    def watch(self) -> AsyncIterator[dict[str, Any]]: ...


@runtime_checkable
class SubscribableStore(Protocol):
    """A store that can also call back with each version `watch()` would yield, in order, in
    the loop's thread (no task per sidecar); returns the call that ends the subscription.
    `SDKServer` subscribes when its store offers it, and watches otherwise."""

    def subscribe(self, callback: Callable[[dict[str, Any]], None]) -> Callable[[], None]: ...


class InMemoryGameServerStore:
    """One GameServer in memory with integer resourceVersions."""

    def __init__(self, gs: dict[str, Any], *, write_latency: float = 0.0) -> None:
        self._gs = copy.deepcopy(gs)
        self._gs.setdefault("metadata", {}).setdefault("resourceVersion", "1")
        self.write_latency = write_latency
        self.writes = 0
        self.patches: list[Patch] = []
        self.events: list[tuple[str, str, str]] = []
        self._broadcast = Broadcast()

    @property
    def current(self) -> dict[str, Any]:
        return copy.deepcopy(self._gs)

    async def get(self) -> dict[str, Any]:
        return self.current

    def _commit(self, gs: dict[str, Any]) -> dict[str, Any]:
        version = int(self._gs["metadata"].get("resourceVersion") or 0) + 1
        gs["metadata"]["resourceVersion"] = str(version)
        self._gs = gs
        self._broadcast.publish(copy.deepcopy(gs))
        return copy.deepcopy(gs)

    async def patch(self, patch: Patch) -> dict[str, Any]:
        if self.write_latency:
            await asyncio.sleep(self.write_latency)
        try:
            patched = apply_patch(self._gs, patch)
        except PatchTestFailed as err:
            raise ConflictError(str(err)) from err
        self.writes += 1
        self.patches.append(patch)
        return self._commit(patched)

    def record_event(self, gs: dict[str, Any], type_: str, reason: str, message: str) -> None:
        """`events.EventRecorder`: keep (type, reason, message)."""
        self.events.append((type_, reason, message))

    def update(self, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
        """Another writer (controller, allocator) changes the object."""
        gs = copy.deepcopy(self._gs)
        change(gs)
        return self._commit(gs)

    def watch(self) -> AsyncIterator[dict[str, Any]]:
        return self._broadcast.watch()
