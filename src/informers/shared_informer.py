"""The shared index informer (client-go `tools/cache/shared_informer.go`).

Contract (what handlers may rely on):
* The cache (an `Indexer`, with the namespace index and any indexers added before start) converges
  to the server's state; `has_synced()` turns true once the first full list is in the cache.
* Each handler is notified after the cache and its indices reflect the change, sequentially, in the
  order of the changes, through its own unbounded buffer (a slow handler delays only itself).
* `Added`/`Updated`/`Replaced`/`Sync` deltas become `on_update(old, new)` when the key was cached,
  else `on_add(obj, is_in_initial_list)`; `Deleted` becomes `on_delete(obj)`, where `obj` may be a
  `DeletedFinalStateUnknown` tombstone. A UID change (delete + re-create missed) is an update.
* An update whose resourceVersion did not change (a `Sync`, a relisted object that did not change, or
  a watched update that kept its RV) is a resync and goes only to handlers whose resync period is due.
* A handler added after start first receives a synthetic `on_add(obj, True)` for every cached
  object; its registration's `has_synced()` is true once those have been delivered.
* Resync periods: 0 disables; below 1 s is raised to 1 s; a handler's period below the informer's
  check period is raised to it once the informer has started.
Handlers are plain (synchronous) callables and must be fast: hand work to a work queue. Cached
objects are shared and must never be mutated.
"""

from __future__ import annotations

import asyncio
import random
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import structlog

from ..clock import Clock, RealClock
from .index import NAMESPACE_INDEX, IndexError_, Indexers, meta_namespace_index_func
from .listwatch import ListerWatcher
from .meta import get_resource_version
from .mutation_cache import MutationCache
from .mutation_detector import MutationDetector
from .reflector import Reflector
from .store import meta_namespace_key
from .the_real_fifo import Delta, DeltaType, RealFIFO
from .thread_safe_store import Indexer
from .transform import TransformFunc

MINIMUM_RESYNC_PERIOD = 1.0

SHARED_MUTATION_CACHE_ENTRIES = 10_000
"""Writes an informer's shared MutationCache remembers: a fleet's burst of writes fits in it."""


class ResourceEventHandler(Protocol):
    def on_add(self, obj: Any, is_in_initial_list: bool) -> None: ...

    def on_update(self, old: Any, new: Any) -> None: ...

    def on_delete(self, obj: Any) -> None: ...


@dataclass
class ResourceEventHandlerFuncs:
    """Adapter: any of the three may be omitted; `add_func` takes just the object."""

    add_func: Callable[[Any], None] | None = None
    update_func: Callable[[Any, Any], None] | None = None
    delete_func: Callable[[Any], None] | None = None

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        if self.add_func is not None:
            self.add_func(obj)

    def on_update(self, old: Any, new: Any) -> None:
        if self.update_func is not None:
            self.update_func(old, new)

    def on_delete(self, obj: Any) -> None:
        if self.delete_func is not None:
            self.delete_func(obj)


@dataclass(slots=True)
class _Notification:
    kind: str  # "add", "update", "delete"
    obj: Any
    old: Any = None
    initial: bool = False


class ProcessorListener:
    """One handler's buffer and delivery task; also its registration handle."""

    def __init__(
        self, handler: ResourceEventHandler, resync_period: float, informer: SharedIndexInformer
    ) -> None:
        self.handler = handler
        self.resync_period = resync_period
        self.next_resync = 0.0
        self._informer = informer
        self._buffer: deque[_Notification] = deque()
        self._wakeup = asyncio.Event()
        self._pending_initial = 0
        self._task: asyncio.Task[None] | None = None
        self.log = informer.log

    def add(self, notification: _Notification) -> None:
        if notification.initial:
            self._pending_initial += 1
        self._buffer.append(notification)
        self._wakeup.set()

    def has_synced(self) -> bool:
        return self._informer.has_synced() and self._pending_initial == 0

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _run(self) -> None:
        while True:
            while not self._buffer:
                self._wakeup.clear()
                await self._wakeup.wait()
            # Deliver a batch, then let the reflector and other tasks run.
            for _ in range(min(len(self._buffer), 1024)):
                self._deliver(self._buffer.popleft())
            await asyncio.sleep(0)

    def _deliver(self, n: _Notification) -> None:
        try:
            if n.kind == "add":
                self.handler.on_add(n.obj, n.initial)
            elif n.kind == "update":
                self.handler.on_update(n.old, n.obj)
            else:
                self.handler.on_delete(n.obj)
        except Exception as err:
            self.log.error("event handler failed", error=str(err), exc_info=err)
        finally:
            if n.initial:
                self._pending_initial -= 1

    def pending(self) -> int:
        return len(self._buffer)


class SharedIndexInformer:
    def __init__(
        self,
        lister_watcher: ListerWatcher,
        *,
        resync_period: float = 0.0,
        indexers: Indexers | None = None,
        name: str = "informer",
        clock: Clock | None = None,
        rand: random.Random | None = None,
        page_size: int = 500,
        detect_mutations: bool | None = None,
    ) -> None:
        self.lister_watcher = lister_watcher
        self.name = name
        self.clock = clock or RealClock()
        self.log = structlog.get_logger().bind(informer=name)
        all_indexers: Indexers = {NAMESPACE_INDEX: meta_namespace_index_func}
        all_indexers.update(indexers or {})
        self.indexer = Indexer(meta_namespace_key, all_indexers)
        self.default_resync_period = _clamp_resync(resync_period)
        self.resync_check_period = self.default_resync_period
        self._listeners: list[ProcessorListener] = []
        self._syncing: list[ProcessorListener] = []
        self._synced = asyncio.Event()
        self.fifo = RealFIFO(self._handle_delta, self.indexer, on_populated=self._synced.set)
        self.reflector = Reflector(
            lister_watcher, self.fifo, name=name, clock=self.clock, rand=rand, page_size=page_size
        )
        self._started = False
        self._stopped = False
        self.mutation_detector = MutationDetector(name, detect_mutations)
        self._mutation_cache: MutationCache | None = None

    # -- registration --------------------------------------------------------------------------

    def add_event_handler(
        self, handler: ResourceEventHandler, resync_period: float | None = None
    ) -> ProcessorListener:
        """Register `handler`; returns its registration (with `has_synced()`)."""
        if self._stopped:
            raise RuntimeError(f"informer {self.name} has stopped; handler not added")
        period = self.default_resync_period if resync_period is None else resync_period
        period = _clamp_resync(period)
        if period > 0 and period < self.resync_check_period:
            if self._started:
                self.log.warning("resync period raised to the informer's", requested=period)
                period = self.resync_check_period
            else:
                self.resync_check_period = period
        listener = ProcessorListener(handler, period, self)
        listener.next_resync = self.clock.monotonic() + period
        self._listeners.append(listener)
        if self._started:
            for obj in self.indexer.list():
                listener.add(_Notification("add", obj, initial=True))
            listener.start()
        return listener

    async def remove_event_handler(self, registration: ProcessorListener) -> None:
        if registration in self._listeners:
            self._listeners.remove(registration)
            if registration in self._syncing:
                self._syncing.remove(registration)
            await registration.stop()

    def set_transform(self, transform: TransformFunc) -> None:
        """Transform every object before it is cached (client-go `SetTransform`); before start
        only. Setting the same function again is a no-op; a different one replaces it."""
        if self._started:
            raise RuntimeError(f"informer {self.name} has already started")
        self.fifo.transform = transform
        if self._mutation_cache is not None:
            self._mutation_cache.transform = transform

    def add_indexers(self, indexers: Indexers) -> None:
        if self._started:
            raise IndexError_("informer has already started")
        self.indexer.add_indexers(indexers)

    def get_store(self) -> Indexer:
        return self.indexer

    get_indexer = get_store

    def mutation_cache(self) -> MutationCache:
        """The one MutationCache over this informer's cache, shared by every writer that reads it
        (so a sub-controller sees the write of its parent controller, and the other way round)."""
        if self._mutation_cache is None:
            self._mutation_cache = MutationCache(
                self.indexer,
                max_entries=SHARED_MUTATION_CACHE_ENTRIES,
                clock=self.clock,
                transform=self.fifo.transform,
            )
        return self._mutation_cache

    def has_synced(self) -> bool:
        return self.fifo.has_synced()

    async def wait_for_sync(self) -> None:
        await self._synced.wait()

    def last_sync_resource_version(self) -> str:
        return self.reflector.last_sync_resource_version

    def is_stopped(self) -> bool:
        return self._stopped

    # -- running -------------------------------------------------------------------------------

    async def run(self) -> None:
        """Run until cancelled: listeners, the reflector and the resync timer."""
        if self._started:
            raise RuntimeError(f"informer {self.name} already started")
        self._started = True
        for listener in self._listeners:
            listener.start()
        tasks = [asyncio.create_task(self.reflector.run())]
        if self.resync_check_period > 0:
            tasks.append(asyncio.create_task(self._resync_loop()))
        try:
            await asyncio.gather(*tasks)
        finally:
            self._stopped = True
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            for listener in self._listeners:
                await listener.stop()

    async def _resync_loop(self) -> None:
        while True:
            await self.clock.sleep(self.resync_check_period)
            self.mutation_detector.check()
            if self._should_resync():
                await self.fifo.resync()

    def _should_resync(self) -> bool:
        now = self.clock.monotonic()
        self._syncing = []
        for listener in self._listeners:
            if listener.resync_period > 0 and now >= listener.next_resync:
                self._syncing.append(listener)
                listener.next_resync = now + listener.resync_period
        return bool(self._syncing)

    # -- delta processing (controller.go processDeltas) ----------------------------------------

    def _handle_delta(self, delta: Delta, is_in_initial_list: bool) -> None:
        obj = delta.object
        detector = self.mutation_detector
        if delta.type is DeltaType.DELETED:
            self.indexer.delete(obj)
            if detector.enabled:
                detector.forget(meta_namespace_key(obj))
            self._distribute(_Notification("delete", obj), False)
        else:
            old = self.indexer.get(obj)
            if detector.enabled:
                detector.add(meta_namespace_key(obj), obj)
            if old is not None:
                self.indexer.update(obj)
                # client-go's OnUpdate: whatever the delta type, an unchanged RV is a resync.
                is_sync = get_resource_version(old) == get_resource_version(obj)
                self._distribute(_Notification("update", obj, old), is_sync)
            else:
                self.indexer.add(obj)
                self._distribute(_Notification("add", obj, initial=is_in_initial_list), False)

    def _distribute(self, notification: _Notification, sync: bool) -> None:
        for listener in self._syncing if sync else self._listeners:
            listener.add(notification)


def ensure_transform(informer: SharedIndexInformer, transform: TransformFunc) -> None:
    """Give a shared informer `transform` unless it has it already (every registrant of a shared
    informer asks for the same one); a different transform already set is a coder error."""
    current = informer.fifo.transform
    if current is transform:
        return
    if current is not None:
        raise RuntimeError(f"informer {informer.name} already has another transform")
    informer.set_transform(transform)


def _clamp_resync(period: float) -> float:
    if period <= 0:
        return 0.0
    return max(period, MINIMUM_RESYNC_PERIOD)
