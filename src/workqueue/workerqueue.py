"""Agones' opinionated queue + workers (`pkg/util/workerqueue/workerqueue.go`).

* `enqueue(obj)` adds the object's key **rate-limited** (as Agones does, even for informer events);
  `enqueue_immediately(obj)` adds it now; `enqueue_after(obj, delay)` after `delay` seconds.
  `obj` may be an object, a `DeletedFinalStateUnknown`, an `ExplicitKey`, or a key string.
* `run(workers)` runs that many workers until cancelled or `shut_down()`; each takes a key, awaits
  the sync handler, `forget`s the key on success and re-adds it rate-limited on error. A 409
  Conflict (`errors.is_conflict`) is expected under contention and is logged at debug level only;
  other errors are logged once with
  the key. Exceptions never kill a worker.
* `healthy()` raises unless exactly the requested number of workers is running (liveness).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import structlog

from ..client.errors import is_conflict
from ..clock import Clock
from ..informers.store import meta_namespace_key
from .default_rate_limiters import ItemFastSlowRateLimiter, RateLimiter
from .metrics import MetricsProvider
from .rate_limiting_queue import RateLimitingQueue

Handler = Callable[[str], Awaitable[None]]


def fast_rate_limiter(max_delay: float) -> RateLimiter:
    """Agones' `FastRateLimiter`: 200 ms for five retries, then `max_delay`."""
    return ItemFastSlowRateLimiter(0.2, max_delay, 5)


class UnhealthyError(RuntimeError):
    """Raised by `healthy()` when workers are missing."""


class WorkerQueue:
    def __init__(
        self,
        handler: Handler,
        logger: Any,
        key_name: str,
        queue_name: str,
        rate_limiter: RateLimiter | None = None,
        *,
        clock: Clock | None = None,
        metrics_provider: MetricsProvider | None = None,
    ) -> None:
        self.sync_handler = handler
        self.key_name = key_name
        self.logger = (logger or structlog.get_logger()).bind(queue=queue_name)
        self.queue: RateLimitingQueue[str] = RateLimitingQueue(
            rate_limiter, queue_name, clock=clock, metrics_provider=metrics_provider
        )
        self._workers = 0
        self._running = 0

    def logger_for(self, key: str) -> Any:
        """The queue's logger bound to one key (what sync handlers log with)."""
        return self.logger.bind(**{self.key_name: key})

    def _key(self, obj: Any) -> str | None:
        try:
            return meta_namespace_key(obj)
        except ValueError as err:
            self.logger.error("error creating key for object", error=str(err))
            return None

    def enqueue(self, obj: Any) -> None:
        key = self._key(obj)
        if key is not None:
            self.queue.add_rate_limited(key)

    def enqueue_immediately(self, obj: Any) -> None:
        key = self._key(obj)
        if key is not None:
            self.queue.add(key)

    def enqueue_after(self, obj: Any, delay: float) -> None:
        key = self._key(obj)
        if key is not None:
            self.queue.add_after(key, delay)

    async def process_next_work_item(self) -> bool:
        """Process one key; False once the queue is shut down and empty."""
        key, quit_ = await self.queue.get()
        if quit_ or key is None:
            return False
        try:
            await self.sync_handler(key)
        except asyncio.CancelledError:
            self.queue.done(key)
            raise
        except Exception as err:
            log = self.logger_for(key)
            if is_conflict(err):
                log.debug("sync conflict, retrying", error=str(err))
            else:
                log.error("sync failed, retrying", error=str(err), exc_info=err)
            self.queue.add_rate_limited(key)
        else:
            self.queue.forget(key)
        self.queue.done(key)
        return True

    async def _run_worker(self) -> None:
        self._running += 1
        try:
            while await self.process_next_work_item():
                pass
        finally:
            self._running -= 1

    async def run(self, workers: int) -> None:
        """Run `workers` workers until cancelled (then shut down) or until `shut_down()`."""
        self._workers = workers
        self.logger.info("starting workers", workers=workers)
        tasks = [asyncio.create_task(self._run_worker()) for _ in range(workers)]
        try:
            await asyncio.gather(*tasks)
        finally:
            self.logger.info("shutting down workers")
            self.queue.shut_down()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    def shut_down(self) -> None:
        self.queue.shut_down()

    async def shut_down_with_drain(self) -> None:
        await self.queue.shut_down_with_drain()

    def healthy(self) -> None:
        if self._workers != self._running:
            raise UnhealthyError(f"want {self._workers} worker(s), got {self._running}")

    def run_count(self) -> int:
        return self._running
