"""The work queue behind the in-process controllers (garbage collector, namespaces, CRDs,
APIServices): one worker task processes items in order; an item whose processing fails, or asks to
be retried, is re-added after a back-off of 10 ms doubling to 30 s (reset once it succeeds). As
client-go's workqueue, an item added while it already waits is not queued twice (one added while it
is being processed is queued again, so a change seen mid-processing is not lost).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T", bound=Hashable)

# Process one item; return True to have it retried later (not an error, e.g. not reachable yet).
Process = Callable[[T], Awaitable[bool | None]]


class WorkQueue(Generic[T]):
    def __init__(self, name: str, process: Process[T], max_delay: float = 30.0) -> None:
        self.name = name
        self._process = process
        self._max_delay = max_delay
        self._queue: asyncio.Queue[T] = asyncio.Queue()
        self._waiting: set[T] = set()
        self._failures: dict[T, int] = {}
        self._task: asyncio.Task[None] | None = None

    def add(self, item: T) -> None:
        if item not in self._waiting:
            self._waiting.add(item)
            self._queue.put_nowait(item)

    def start(self) -> None:
        self._task = asyncio.create_task(self._loop(), name=self.name)

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def _retry_later(self, item: T) -> None:
        n = self._failures[item] = self._failures.get(item, 0) + 1
        delay = min(0.01 * 2 ** (n - 1), self._max_delay)
        asyncio.get_running_loop().call_later(delay, self.add, item)

    async def _loop(self) -> None:
        while True:
            item = await self._queue.get()
            self._waiting.discard(item)
            try:
                again = await self._process(item)
            except Exception:
                log.exception("%s failed on %r", self.name, item)
                self._retry_later(item)
                continue
            if again:
                self._retry_later(item)
            else:
                self._failures.pop(item, None)
