"""Agones' opinionated queue + workers (`pkg/util/workerqueue/workerqueue.go`).

* `enqueue(obj)` adds the object's key **rate-limited** (as Agones does, even for informer events);
  `enqueue_immediately(obj)` adds it now; `enqueue_after(obj, delay)` after `delay` seconds.
  `obj` may be an object, a `DeletedFinalStateUnknown`, an `ExplicitKey`, or a key string.
* `run(workers)` runs that many workers until cancelled or `shut_down()`; each takes a key and
  awaits the sync handler. The handler's outcome decides what happens to the key, in one place
  (`process_next_work_item`, as controller-runtime's `reconcileHandler`):

  | outcome                          | queue action                               | logged        |
  |----------------------------------|--------------------------------------------|---------------|
  | returns                          | `forget` (history wiped)                   | no            |
  | raises `Requeue(reason)`         | `add_rate_limited` (history kept)          | debug         |
  | raises `Requeue(reason, after=d)`| `forget`, then `add_after(d)`              | debug         |
  | raises a 409 Conflict            | `add_rate_limited`                         | debug         |
  | raises anything else             | `add_rate_limited`                         | error, once   |

  So "not yet, look again soon" goes through the queue's one rate limiter like any retry, and
  a handler never runs a back-off of its own. Exceptions never kill a worker, and a worker
  yields to the loop between items.
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


class Requeue(Exception):
    """A sync handler's "not yet": the world has not caught up, look at this key again.

    Without `after`, the key is re-added through the queue's rate limiter and its failure history
    is kept (the next delay grows as for an error); with `after`, the history is forgotten and the
    key comes back after exactly that many seconds. Neither is logged as an error.
    """

    def __init__(self, reason: str = "", *, after: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.after = after


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
        except Requeue as requeue:
            self._requeue(key, requeue)
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

    def _requeue(self, key: str, requeue: Requeue) -> None:
        log = self.logger_for(key)
        if requeue.after is None:
            log.debug("not yet, requeued", reason=requeue.reason)
            self.queue.add_rate_limited(key)
        else:
            log.debug("requeued after", reason=requeue.reason, after=requeue.after)
            self.queue.forget(key)
            self.queue.add_after(key, requeue.after)

    async def _run_worker(self) -> None:
        self._running += 1
        try:
            while await self.process_next_work_item():
                # Yield between items: a handler that fails at once, re-added with no delay,
                # must not starve the loop (and the timers that would end it).
                await asyncio.sleep(0)
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
