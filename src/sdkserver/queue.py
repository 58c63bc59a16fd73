"""The sidecar's write queue: the framework's `WorkerQueue` keyed by operation, one worker.

As in Agones' `pkg/sdkserver`, each kind of change has a fixed key (`updateState`, `updateLabel`,
...) on a rate-limited work queue with one worker, so a burst of SDK calls becomes one write: every
enqueue is rate-limited (`delay`, 500 ms by default) and a key already waiting is not queued twice
(the delaying queue's earlier time wins); a key enqueued while its write runs is written again
afterwards (the queue's dirty set); a failed write is re-added through the same limiter, and the
handler's outcome is decided by `WorkerQueue` alone (errors logged once, conflicts at debug).

The limiter is `ItemFastSlowRateLimiter(delay, delay, 1)` (the same delay every time), or with
`first_immediately=True` the `ItemIntervalRateLimiter` measured in bench/: a key idle for a whole
window is written at once, and only what follows within the window waits for the window's end.

`flush(timeout)` is the sidecar's last word before it exits: the limiter answers 0, every waiting
key is made ready, and the flush works the queue beside the worker (failed writes retried at once)
until nothing is pending or the timeout passes, so a change an RPC or the health check queued just
before a SIGTERM (Unhealthy, Shutdown, a label) is not lost.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable, Hashable

import structlog

from ..clock import Clock
from ..workqueue import (
    ItemFastSlowRateLimiter,
    ItemIntervalRateLimiter,
    RateLimiter,
    WorkerQueue,
)

log = structlog.get_logger("agones.sdkserver.queue")

QUEUE_NAME = "agones.dev.sdkserver"
"""The work queue's name in the `agones_k8s_client_workqueue_*` metrics."""


class _FlushableLimiter:
    """`limiter`, except that it answers 0 while the queue flushes."""

    def __init__(self, limiter: RateLimiter) -> None:
        self.limiter = limiter
        self.flushing = False

    def when(self, item: Hashable) -> float:
        delay = self.limiter.when(item)
        return 0.0 if self.flushing else delay

    def forget(self, item: Hashable) -> None:
        self.limiter.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        return self.limiter.num_requeues(item)


class UpdateQueue:
    def __init__(
        self,
        handler: Callable[[str], Awaitable[None]],
        clock: Clock,
        delay: float = 0.5,
        *,
        first_immediately: bool = False,
        name: str = QUEUE_NAME,
    ) -> None:
        inner: RateLimiter = (
            ItemIntervalRateLimiter(delay, clock)
            if first_immediately
            else ItemFastSlowRateLimiter(delay, delay, 1)
        )
        self.limiter = _FlushableLimiter(inner)
        self.worker = WorkerQueue(handler, log, "operation", name, self.limiter, clock=clock)
        self.queue = self.worker.queue
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._work())

    async def _work(self) -> None:
        """The one worker (as `WorkerQueue.run(1)` runs it, in one task and without its two log
        lines: a node's simulated pods start and stop a sidecar each)."""
        try:
            while await self.worker.process_next_work_item():
                await asyncio.sleep(0)  # a write failing at once must not starve the loop
        finally:
            self.queue.shut_down()

    async def stop(self) -> None:
        """Stop the worker; what is still waiting is dropped (flush first to keep it)."""
        self.worker.shut_down()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    def enqueue(self, key: str) -> None:
        """Queue `key` after the rate limit."""
        self.worker.enqueue(key)

    def enqueue_after(self, key: str, delay: float) -> None:
        """Queue `key` in `delay` seconds (at once while flushing); the earlier time wins."""
        self.worker.enqueue_after(key, 0.0 if self.limiter.flushing else delay)

    def pending(self) -> bool:
        return bool(len(self.queue) or self.queue.waiting() or self.queue.processing())

    async def flush(self, timeout: float) -> bool:
        """Write every pending key now; whether all were written within `timeout` seconds."""
        if not self.pending():
            return True  # the usual case at a pod's stop: no timeout (and its task) to set up
        self.limiter.flushing = True
        try:
            await asyncio.wait_for(self._work_off(), timeout)
        except TimeoutError:
            log.warning("pending writes not flushed before exit", pending=self.pending())
            return False
        finally:
            self.limiter.flushing = False
        return True

    async def _work_off(self) -> None:
        while self.pending():
            self.queue.ready_now()
            if len(self.queue):
                await self.worker.process_next_work_item()
            else:
                await self.queue.wait_for_processing()
            await asyncio.sleep(0)  # a write failing at once must not starve the timeout
