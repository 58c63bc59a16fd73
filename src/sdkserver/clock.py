"""Time for the sidecar's timers (write delays, health checks, Reserve), injectable for tests.

`RealClock` uses the event loop; `FakeClock` only moves when a test calls `advance()`, firing due
timers in deadline order and letting the tasks they wake run before returning.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable
from typing import Protocol


class Timer(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    def now(self) -> float:
        """Wall time, seconds since the epoch (for timestamps written to the GameServer)."""
        ...

    def monotonic(self) -> float:
        """Monotonic seconds (for intervals)."""
        ...

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer: ...

    async def sleep(self, delay: float) -> None: ...


class RealClock:
    def now(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        return asyncio.get_running_loop().call_later(max(delay, 0.0), callback)

    async def sleep(self, delay: float) -> None:
        await asyncio.sleep(delay)


class _FakeTimer:
    def __init__(self) -> None:
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeClock:
    """A clock that stands still until `advance`d."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self._now = start
        self._mono = 0.0
        self._seq = itertools.count()
        self._timers: list[tuple[float, int, _FakeTimer, Callable[[], None]]] = []

    def now(self) -> float:
        return self._now

    def monotonic(self) -> float:
        return self._mono

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        timer = _FakeTimer()
        heapq.heappush(
            self._timers, (self._mono + max(delay, 0.0), next(self._seq), timer, callback)
        )
        return timer

    async def sleep(self, delay: float) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not future.done():
                future.set_result(None)

        timer = self.call_later(delay, wake)
        try:
            await future
        finally:
            timer.cancel()

    async def settle(self) -> None:
        """Let woken tasks run until the loop is idle (bounded)."""
        for _ in range(50):
            await asyncio.sleep(0)

    async def advance(self, seconds: float) -> None:
        """Move time forward, firing each due timer at its own time."""
        await self.settle()
        end = self._mono + seconds
        while self._timers and self._timers[0][0] <= end:
            deadline, _, timer, callback = heapq.heappop(self._timers)
            self._now += deadline - self._mono
            self._mono = deadline
            if not timer.cancelled:
                callback()
            await self.settle()
        self._now += end - self._mono
        self._mono = end
        await self.settle()
