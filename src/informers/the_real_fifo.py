"""In-order delta delivery (client-go `the_real_fifo.go`, the `InOrderInformers` semantics).

The reflector writes here as if to a store; each write becomes one `Delta`, handed to `process`
immediately and in arrival order (the reflector and the informer share the event loop, so the
queue between them is elided: order is the same, and back-pressure is the reflector waiting).
`replace(items, rv)` first emits `Deleted` with a `DeletedFinalStateUnknown` tombstone for every key
the cache knows that the new list lacks (the delete was missed while not watching), then `Replaced`
for every listed item. `resync()` emits `Sync` for every cached object, a batch at a time. Deltas
emitted before the first `replace` has been fully processed carry `is_in_initial_list=True`. With
a `transform`, every added, updated, deleted (tombstones excepted) and listed object is
transformed before its delta.
"""

from __future__ import annotations

import asyncio
import enum
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .store import DeletedFinalStateUnknown, meta_namespace_key
from .thread_safe_store import Indexer
from .transform import TransformFunc


class DeltaType(enum.Enum):
    ADDED = "Added"
    UPDATED = "Updated"
    DELETED = "Deleted"
    REPLACED = "Replaced"
    SYNC = "Sync"


@dataclass(frozen=True, slots=True)
class Delta:
    type: DeltaType
    object: Any


ProcessFunc = Callable[[Delta, bool], None]

RESYNC_BATCH = 256
"""Objects a resync emits before it lets other tasks run."""


class RealFIFO:
    def __init__(
        self,
        process: ProcessFunc,
        known_objects: Indexer,
        key_func: Callable[[Any], str] = meta_namespace_key,
        on_populated: Callable[[], None] | None = None,
        transform: TransformFunc | None = None,
    ) -> None:
        self._process = process
        self.transform = transform
        self._on_populated = on_populated
        self.known_objects = known_objects
        self.key_func = key_func
        self.populated = False
        self._initial = True

    def has_synced(self) -> bool:
        return self.populated

    def _emit(self, type_: DeltaType, obj: Any) -> None:
        self._process(Delta(type_, obj), self._initial)

    def _transformed(self, obj: Any) -> Any:
        if self.transform is None or isinstance(obj, DeletedFinalStateUnknown):
            return obj
        return self.transform(obj)

    def add(self, obj: Any) -> None:
        self._emit(DeltaType.ADDED, self._transformed(obj))

    def update(self, obj: Any) -> None:
        self._emit(DeltaType.UPDATED, self._transformed(obj))

    def delete(self, obj: Any) -> None:
        self._emit(DeltaType.DELETED, self._transformed(obj))

    def replace(self, items: list[Any], resource_version: str) -> None:
        new_keys = {self.key_func(item) for item in items}
        for key in self.known_objects.list_keys():
            if key not in new_keys:
                last_known = self.known_objects.get_by_key(key)
                self._emit(DeltaType.DELETED, DeletedFinalStateUnknown(key, last_known))
        for item in items:
            self._emit(DeltaType.REPLACED, self._transformed(item))
        self.populated = True
        self._initial = False
        if self._on_populated is not None:
            self._on_populated()

    async def resync(self, batch: int = RESYNC_BATCH) -> None:
        """Emit `Sync` for every cached object, letting other tasks run after each `batch` of
        them. client-go resyncs on the informer's own goroutine, beside everything else; on one
        event loop a resync in one go stalled every request of the process: 57 to 94 ms every
        30 s for an allocator's 9,500 GameServers. Each key's object is read at its turn, so a
        watch event handled in between is never undone by the copy it replaced."""
        for i, key in enumerate(self.known_objects.list_keys()):
            if i and i % batch == 0:
                await asyncio.sleep(0)
            obj = self.known_objects.get_by_key(key)
            if obj is not None:  # deleted in between: nothing to resync
                self._emit(DeltaType.SYNC, obj)
