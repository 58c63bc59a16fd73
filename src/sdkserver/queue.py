"""Per-operation write queue: coalesces rapid SDK calls into few GameServer writes.

Agones queues each change under a fixed key per operation (`updateState`, `updateLabel`, ...) on a
rate-limited work queue with one worker: every enqueue waits the rate limit (500 ms) and a key
already waiting is not queued twice, so a burst of calls becomes one write. A key enqueued while its
write is running is written again afterwards. A failed write is retried after the same delay.

`flush(timeout)` is the sidecar's last word before it exits: every waiting key is written at once
(failed ones retried at once) until nothing is pending or the timeout passes, so a change an RPC or
the health check queued just before a SIGTERM (Unhealthy, Shutdown, a label) is not lost.

`first_immediately=True` is the alternative measured in bench/: a key idle for a whole window is
written at once, and only what follows within the window is coalesced into one write at its end.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

import structlog

from .clock import Clock, Timer

log = structlog.get_logger("agones.sdkserver.queue")


class CoalescingQueue:
    def __init__(
        self,
        handler: Callable[[str], Awaitable[None]],
        clock: Clock,
        delay: float = 0.5,
        *,
        first_immediately: bool = False,
    ) -> None:
        self.handler = handler
        self.clock = clock
        self.delay = delay
        self.first_immediately = first_immediately
        self._waiting: dict[str, tuple[float, Timer]] = {}
        self._queued: list[str] = []
        self._processing: set[str] = set()
        self._dirty: set[str] = set()
        self._last_start: dict[str, float] = {}
        self._wake = asyncio.Event()
        self._idle = asyncio.Event()
        self._flushing = False
        self._task: asyncio.Task[None] | None = None
        self.processed = 0
        self.failures = 0

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        for _, timer in self._waiting.values():
            timer.cancel()
        self._waiting.clear()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def flush(self, timeout: float) -> bool:
        """Write every pending key now; whether all were written within `timeout` seconds."""
        self._flushing = True
        for key, (_, timer) in list(self._waiting.items()):
            timer.cancel()
            del self._waiting[key]
            self._ready(key)
        deadline = asyncio.get_running_loop().time() + timeout
        try:
            while self.pending():
                self._idle.clear()
                left = deadline - asyncio.get_running_loop().time()
                await asyncio.wait_for(self._idle.wait(), max(left, 0.0))
        except TimeoutError:
            log.warning("pending writes not flushed before exit", keys=self._pending_keys())
            return False
        finally:
            self._flushing = False
        return True

    def _pending_keys(self) -> list[str]:
        return sorted({*self._waiting, *self._queued, *self._processing})

    def pending(self) -> bool:
        return bool(self._waiting or self._queued or self._processing)

    def enqueue(self, key: str) -> None:
        """Queue `key` after the rate limit (or at once, see `first_immediately`)."""
        delay = self.delay
        if self.first_immediately:
            last = self._last_start.get(key)
            now = self.clock.monotonic()
            delay = 0.0 if last is None else max(0.0, last + self.delay - now)
        self.enqueue_after(key, delay)

    def enqueue_after(self, key: str, delay: float) -> None:
        """Queue `key` in `delay` seconds; a key already waiting keeps the earlier time."""
        if self._flushing:
            delay = 0.0
        ready_at = self.clock.monotonic() + delay
        waiting = self._waiting.get(key)
        if waiting is not None:
            if waiting[0] <= ready_at:
                return
            waiting[1].cancel()
        if delay <= 0:
            self._waiting.pop(key, None)
            self._ready(key)
            return
        timer = self.clock.call_later(delay, lambda: self._fire(key, ready_at))
        self._waiting[key] = (ready_at, timer)

    def _fire(self, key: str, ready_at: float) -> None:
        waiting = self._waiting.get(key)
        if waiting is None or waiting[0] != ready_at:
            return
        del self._waiting[key]
        self._ready(key)

    def _ready(self, key: str) -> None:
        if key in self._processing:
            self._dirty.add(key)
        elif key not in self._queued:
            self._queued.append(key)
            self._wake.set()

    async def _run(self) -> None:
        while True:
            while not self._queued:
                self._wake.clear()
                await self._wake.wait()
            key = self._queued.pop(0)
            self._processing.add(key)
            self._last_start[key] = self.clock.monotonic()
            try:
                await self.handler(key)
            except Exception as err:
                self.failures += 1
                log.warning("sync failed, retrying", key=key, error=str(err))
                retry = True
            else:
                self.processed += 1
                retry = False
            finally:
                self._processing.discard(key)
            if retry:
                # the retry writes whatever was asked for meanwhile: one write, not two
                self._dirty.discard(key)
                self.enqueue_after(key, self.delay)
                if self._flushing:
                    await asyncio.sleep(0)  # an immediate retry must not starve the flush's timer
            elif key in self._dirty:
                self._dirty.discard(key)
                self._ready(key)
            if not self.pending():
                self._idle.set()
