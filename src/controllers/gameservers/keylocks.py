"""One sync per GameServer at a time, across the GameServer controller's worker queues.

A WorkerQueue never runs one key twice at once, but the controller has three queues (creation,
main, deletion) with one pipeline behind them: a GameServer whose creation sync is still waiting
for its pod can be enqueued on the main queue by that pod's scheduling, and both syncs then carry
it Starting → Scheduled (or RequestReady → Ready) from the same cached object — two writes of one
transition, the second a 409. `KeyLocks.hold(key)` serialises such syncs: the later one waits,
then reads the MutationCache, which by then holds the first one's write, and finds nothing to do.

A lock exists only while someone holds or waits for it, so the map is empty between syncs (no
entry per GameServer name is kept).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator


class KeyLocks:
    """Per-key mutual exclusion whose entries go away when unused."""

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    def __len__(self) -> int:
        return len(self._locks)

    @contextlib.asynccontextmanager
    async def hold(self, key: str) -> AsyncIterator[None]:
        lock, users = self._locks.get(key, (None, 0))
        if lock is None:
            lock = asyncio.Lock()
        self._locks[key] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[key]
            if users == 1:
                del self._locks[key]
            else:
                self._locks[key] = (lock, users - 1)
