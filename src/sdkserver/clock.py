"""Time for the sidecar's timers (write delays, health checks, Reserve), injectable for tests.

The project's clocks (`agones.clock`), whose `monotonic()` times intervals. `FakeClock` only
moves when a test calls `advance()`, firing due timers one at a time in deadline order and letting
the tasks each wakes run before the next (and before and after the whole step).
"""

from __future__ import annotations

import asyncio
import heapq

from .. import clock

Timer = clock.TimerHandle


Clock = clock.Clock
"""`now()` is wall time (timestamps written to the GameServer), `monotonic()` times intervals."""

RealClock = clock.RealClock


class FakeClock(clock.FakeClock):
    """A clock that stands still until `advance`d; monotonic time starts at 0."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        super().__init__(start)

    async def settle(self, rounds: int = 50) -> None:
        """Let woken tasks run until the loop is idle (bounded)."""
        for _ in range(rounds):
            await asyncio.sleep(0)

    async def advance(self, seconds: float, *, settle: int = 50) -> None:
        """Move time forward, firing each due timer at its own time."""
        await self.settle(settle)
        end = self.now() + seconds
        while self._timers and self._timers[0][0] <= end:
            due, _, timer = heapq.heappop(self._timers)
            self._now = max(self._now, due)
            if not timer.cancelled:
                timer.callback()
            await self.settle(settle)
        self._now = max(self._now, end)
        await self.settle(settle)
