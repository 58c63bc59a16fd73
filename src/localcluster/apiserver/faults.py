"""Fault injection for tests: fail or delay the next writes, drop watches, compact history.

`Faults` is consulted by every write verb (`before_write`) before it touches anything. Watch dropping
and compaction act on the store directly (see `LocalAPIServer.faults` and the `/_faults` endpoint).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from . import errors

_FAILURES = {
    409: lambda g, r, n: errors.conflict(g, r, n, errors.OBJECT_MODIFIED),
    429: lambda g, r, n: errors.too_many_requests(),
    500: lambda g, r, n: errors.internal("injected failure"),
}


@dataclass
class Faults:
    """Pending injected write failures (HTTP codes, in order) and a latency added to each write."""

    fail_codes: list[int] = field(default_factory=list)
    write_latency: float = 0.0
    injected: int = 0

    def fail_next_writes(self, count: int, code: int) -> None:
        if code not in _FAILURES:
            raise ValueError(f"unsupported code {code}: use one of {sorted(_FAILURES)}")
        self.fail_codes.extend([code] * count)

    def clear(self) -> None:
        self.fail_codes.clear()
        self.write_latency = 0.0

    async def before_write(self, group: str, resource: str, name: str) -> None:
        if self.write_latency > 0:
            await asyncio.sleep(self.write_latency)
        if self.fail_codes:
            code = self.fail_codes.pop(0)
            self.injected += 1
            raise _FAILURES[code](group, resource, name)
