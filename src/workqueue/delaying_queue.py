"""The delaying queue (client-go `util/workqueue/delaying_queue.go`).

`add_after(item, delay)` adds `item` once `delay` seconds have passed on the queue's clock;
`delay <= 0` is an immediate `add`. Every call counts as a retry in the metrics, as in client-go. While an item waits, adding it again with a later ready time is
ignored and with an earlier ready time moves it forward: the earlier ready time always wins. Waiting
items are timers on the clock (the event loop's own heap), so there is no polling heartbeat. Waiting
items are dropped at shutdown; `ready_now()` adds them all at once (a flush before exit).
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import TypeVar

from ..clock import Clock, TimerHandle
from .metrics import MetricsProvider
from .queue import Queue

T = TypeVar("T", bound=Hashable)


class DelayingQueue(Queue[T]):
    def __init__(
        self,
        name: str = "",
        *,
        clock: Clock | None = None,
        metrics_provider: MetricsProvider | None = None,
    ) -> None:
        super().__init__(name, clock=clock, metrics_provider=metrics_provider)
        self._waiting: dict[T, tuple[float, TimerHandle]] = {}

    def add_after(self, item: T, delay: float) -> None:
        if self._shutting_down:
            return
        self.metrics.retry()
        if delay <= 0:
            self.add(item)
            return
        ready_at = self.clock.monotonic() + delay
        current = self._waiting.get(item)
        if current is not None:
            if current[0] <= ready_at:
                return
            current[1].cancel()
        handle = self.clock.call_later(delay, lambda: self._ready(item))
        self._waiting[item] = (ready_at, handle)

    def _ready(self, item: T) -> None:
        self._waiting.pop(item, None)
        self.add(item)

    def ready_now(self) -> None:
        """Add every waiting item at once (a last flush before exit: no write left waiting)."""
        for item, (_, handle) in list(self._waiting.items()):
            handle.cancel()
            self._ready(item)

    def waiting(self) -> int:
        """How many items are waiting for their ready time."""
        return len(self._waiting)

    def shut_down(self) -> None:
        super().shut_down()
        for _, handle in self._waiting.values():
            handle.cancel()
        self._waiting.clear()
