"""The rate-limiting queue (client-go `util/workqueue/rate_limiting_queue.go`).

`add_rate_limited(item)` is `add_after(item, limiter.when(item))`;
`forget(item)` clears the limiter's history of the item (it does not remove it from the queue);
`num_requeues(item)` is the limiter's failure count.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TypeVar

from ..clock import Clock
from .default_rate_limiters import RateLimiter, default_controller_rate_limiter
from .delaying_queue import DelayingQueue
from .metrics import MetricsProvider

T = TypeVar("T", bound=Hashable)


class RateLimitingQueue(DelayingQueue[T]):
    def __init__(
        self,
        rate_limiter: RateLimiter | None = None,
        name: str = "",
        *,
        clock: Clock | None = None,
        metrics_provider: MetricsProvider | None = None,
    ) -> None:
        super().__init__(name, clock=clock, metrics_provider=metrics_provider)
        self.rate_limiter = rate_limiter or default_controller_rate_limiter(self.clock)

    def add_rate_limited(self, item: T) -> None:
        self.add_after(item, self.rate_limiter.when(item))

    def forget(self, item: T) -> None:
        self.rate_limiter.forget(item)

    def num_requeues(self, item: T) -> int:
        return self.rate_limiter.num_requeues(item)
