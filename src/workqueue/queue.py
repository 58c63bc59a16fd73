"""The work queue (client-go `util/workqueue/queue.go`).

Guarantees:
* Fair: items are handed out in the order they were added.
* Stingy: an item added several times before it is processed is processed once (`dirty` set).
* No concurrent processing of one item: an item added while a worker holds it (`processing` set) is
  only marked dirty; `done()` puts it back so it is processed once more, afterwards.
* `shut_down()` stops accepting new items and wakes all getters; items already queued are still
  handed out, then `get()` reports shutdown. `shut_down_with_drain()` additionally waits until no
  item is held by a worker (any number of callers may wait); a later `shut_down()` ends that wait.

Callers must call `done(item)` exactly once for every item `get()` returned. asyncio-only: all
methods must be called from the loop's thread.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Hashable
from typing import Generic, TypeVar

from ..clock import Clock, RealClock
from .metrics import MetricsProvider, QueueMetrics

T = TypeVar("T", bound=Hashable)


class Queue(Generic[T]):
    def __init__(
        self,
        name: str = "",
        *,
        clock: Clock | None = None,
        metrics_provider: MetricsProvider | None = None,
    ) -> None:
        self.name = name
        self.clock: Clock = clock or RealClock()
        # Items ready to hand out, in order; each is also in `_dirty`.
        self._queue: deque[T] = deque()
        # Items that need processing: queued ones, plus held ones re-added while processing.
        self._dirty: set[T] = set()
        # Items a worker holds; an item in here is never in `_queue`.
        self._processing: set[T] = set()
        self._getters: deque[asyncio.Future[None]] = deque()
        # Set whenever `_processing` empties or a plain shut_down() cancels a drain; drainers
        # re-check their condition after each wake-up (client-go's cond.Wait loop).
        self._drain_wakeup = asyncio.Event()
        self._shutting_down = False
        self._drain = False
        self.metrics = QueueMetrics(name, self.clock, metrics_provider)

    def __len__(self) -> int:
        return len(self._queue)

    def add(self, item: T) -> None:
        """Mark `item` as needing processing (a no-op if it already is, or after shutdown)."""
        if self._shutting_down or item in self._dirty:
            return
        self.metrics.add(item)
        self._dirty.add(item)
        if item in self._processing:
            return
        self._queue.append(item)
        self._wake_one()

    def _wake_one(self) -> None:
        while self._getters:
            getter = self._getters.popleft()
            if not getter.done():
                getter.set_result(None)
                return

    async def get(self) -> tuple[T | None, bool]:
        """Wait for an item; returns `(item, False)`, or `(None, True)` once shut down and empty."""
        while not self._queue and not self._shutting_down:
            getter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._getters.append(getter)
            try:
                await getter
            except asyncio.CancelledError:
                # Pass a wake-up we may have consumed on to another getter.
                if getter.done() and not getter.cancelled() and self._queue:
                    self._wake_one()
                raise
        if not self._queue:
            return None, True
        item = self._queue.popleft()
        self.metrics.get(item)
        self._processing.add(item)
        self._dirty.discard(item)
        return item, False

    def done(self, item: T) -> None:
        """Mark `item` as processed; re-queue it if it was added again meanwhile."""
        self.metrics.done(item)
        self._processing.discard(item)
        if item in self._dirty:
            self._queue.append(item)
            self._wake_one()
        if not self._processing:
            self._drain_wakeup.set()

    def shut_down(self) -> None:
        """Stop accepting items and wake every getter; do not wait for in-flight work."""
        self._shutting_down = True
        self._drain = False
        self._drain_wakeup.set()
        while self._getters:
            getter = self._getters.popleft()
            if not getter.done():
                getter.set_result(None)

    async def shut_down_with_drain(self) -> None:
        """Shut down, then wait until no item is held by a worker (or a `shut_down()` call)."""
        self.shut_down()
        self._drain = True
        while self._processing and self._drain:
            self._drain_wakeup.clear()
            await self._drain_wakeup.wait()

    async def wait_for_processing(self) -> None:
        """Wait until no item is held by a worker; the queue keeps running (unlike a drain)."""
        while self._processing:
            self._drain_wakeup.clear()
            await self._drain_wakeup.wait()

    def shutting_down(self) -> bool:
        return self._shutting_down

    def processing(self) -> frozenset[T]:
        return frozenset(self._processing)
