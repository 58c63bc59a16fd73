"""The work queue of the controllers embedded in the API server (garbage collector, namespaces,
CRDs, APIServices): the framework's `WorkerQueue` with one worker, started and stopped with the
server, so these controllers retry through the same rate limiter, logging and metrics as every
other controller, on an injectable clock.

An item is a tuple of strings, joined into one queue key (the framework's keys are strings); as
client-go's queue does, an item added while it waits is queued once, and one added while it is being
processed runs again afterwards. The sync function returns True for "not yet": the framework's
`Requeue`, with the exponential back-off of 10 ms doubling to `max_delay`; an exception is retried
the same way and logged; success forgets the item's history.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import structlog

from ...clock import Clock
from ...workqueue import ItemExponentialFailureRateLimiter, Requeue, WorkerQueue

log = structlog.get_logger("agones.localcluster.apiserver.workqueue")
SEPARATOR = "\x1f"
"""Joins an item's parts into a key (the ASCII unit separator: in no Kubernetes name or uid)."""

Sync = Callable[[tuple[str, ...]], Awaitable[bool | None]]


class EmbeddedQueue:
    def __init__(
        self, name: str, sync: Sync, *, clock: Clock | None = None, max_delay: float = 30.0
    ) -> None:
        self._sync = sync
        self.queue = WorkerQueue(
            self._handle,
            log,
            "item",
            name,
            ItemExponentialFailureRateLimiter(0.01, max_delay),
            clock=clock,
        )
        self._worker: asyncio.Task[None] | None = None

    def add(self, *item: str) -> None:
        self.queue.enqueue_immediately(SEPARATOR.join(item))

    def start(self) -> None:
        self._worker = asyncio.create_task(self.queue.run(1), name=self.queue.queue.name)

    async def stop(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
            self._worker = None

    async def _handle(self, key: str) -> None:
        if await self._sync(tuple(key.split(SEPARATOR))):
            raise Requeue("not ready yet")
