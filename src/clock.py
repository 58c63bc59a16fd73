"""Clocks for everything time-based (k8s.io/utils/clock): a real one and a fake one for tests.

Contract: `now()` is wall-clock seconds (epoch) and only ever moves forward on a FakeClock;
`monotonic()` is seconds that never jump (measure intervals and deadlines with it, as Go's
monotonic clock reading does: a wall-clock step must not expire a lease or a deadline early);
`call_later(delay, fn)` runs `fn` once `delay` seconds have passed on *this* clock and returns a
handle whose `cancel()` is idempotent; `sleep(delay)` suspends the calling task for `delay` clock
seconds. Code that must be testable without sleeping takes a `Clock` and never calls `time` or
`asyncio.sleep` itself. A FakeClock only moves when a test calls `step()`/`set_time()`; timers that
fall due run synchronously, in due order, inside that call.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable
from typing import Protocol


class TimerHandle(Protocol):
    def cancel(self) -> None: ...


class Clock(Protocol):
    def now(self) -> float: ...

    def monotonic(self) -> float: ...

    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle: ...

    async def sleep(self, delay: float) -> None: ...


class RealClock:
    """The system clock, with timers on the running asyncio loop."""

    def now(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle:
        return asyncio.get_running_loop().call_later(max(delay, 0.0), callback)

    async def sleep(self, delay: float) -> None:
        await asyncio.sleep(max(delay, 0.0))


class _FakeTimer:
    __slots__ = ("callback", "cancelled", "when")

    def __init__(self, when: float, callback: Callable[[], None]) -> None:
        self.when = when
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class FakeClock:
    """A clock that moves only when told to; timers fire inside `step()`."""

    def __init__(self, start: float = 1_000_000.0) -> None:
        self._now = start
        self._start = start
        self._timers: list[tuple[float, int, _FakeTimer]] = []
        self._seq = itertools.count()
        self._changed: asyncio.Event | None = None

    def now(self) -> float:
        return self._now

    def monotonic(self) -> float:
        """Seconds since the clock was made: moves exactly as `now()` does."""
        return self._now - self._start

    def call_later(self, delay: float, callback: Callable[[], None]) -> TimerHandle:
        timer = _FakeTimer(self._now + max(delay, 0.0), callback)
        heapq.heappush(self._timers, (timer.when, next(self._seq), timer))
        if self._changed is not None:
            self._changed.set()
        return timer

    async def sleep(self, delay: float) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not future.done():
                future.set_result(None)

        handle = self.call_later(delay, wake)
        try:
            await future
        finally:
            handle.cancel()

    def step(self, seconds: float) -> None:
        self.set_time(self._now + seconds)

    def set_time(self, when: float) -> None:
        """Move to `when`, firing each due timer at its own time, earliest first."""
        while self._timers and self._timers[0][0] <= when:
            due, _, timer = heapq.heappop(self._timers)
            if timer.cancelled:
                continue
            self._now = max(self._now, due)
            timer.callback()
        self._now = max(self._now, when)

    def pending_timers(self) -> int:
        return sum(1 for _, _, t in self._timers if not t.cancelled)

    def next_timer(self) -> float | None:
        live = [w for w, _, t in self._timers if not t.cancelled]
        return min(live) if live else None

    async def wait_for_timers(self, count: int = 1, timeout: float = 5.0) -> None:
        """Wait (in real time, bounded) until at least `count` live timers are registered."""

        async def poll() -> None:
            while self.pending_timers() < count:
                self._changed = asyncio.Event()
                await self._changed.wait()

        await asyncio.wait_for(poll(), timeout)

    async def advance(self, seconds: float, *, settle: int = 20) -> None:
        """Step the clock, letting woken tasks run between due timers (for task-based code)."""
        target = self._now + seconds
        while True:
            nxt = self.next_timer()
            if nxt is None or nxt > target:
                break
            self.set_time(nxt)
            for _ in range(settle):
                await asyncio.sleep(0)
        self.set_time(target)
        for _ in range(settle):
            await asyncio.sleep(0)
