"""Rate limiters (client-go `util/workqueue/default_rate_limiters.go`).

A rate limiter answers `when(item)`: how long to wait before (re)processing `item`, counting this as
one more failure; `forget(item)` clears the item's history (call it on success); `num_requeues(item)`
is the failure count. Per-item limiters keep no state for forgotten items.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Protocol

from ..clock import Clock
from ..flowcontrol import Limiter


class RateLimiter(Protocol):
    def when(self, item: Hashable) -> float: ...

    def forget(self, item: Hashable) -> None: ...

    def num_requeues(self, item: Hashable) -> int: ...


class ItemExponentialFailureRateLimiter:
    """`base * 2**failures`, capped at `max_delay`, per item."""

    def __init__(self, base_delay: float, max_delay: float) -> None:
        self.base_delay = base_delay
        self.max_delay = max_delay
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        exp = self._failures.get(item, 0)
        self._failures[item] = exp + 1
        if exp > 62:  # 2**exp would overflow an int64 duration in Go; the cap applies anyway.
            return self.max_delay
        backoff = self.base_delay * float(1 << exp)
        return min(backoff, self.max_delay)

    def forget(self, item: Hashable) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)


class ItemFastSlowRateLimiter:
    """`fast_delay` for the first `max_fast_attempts` failures of an item, then `slow_delay`."""

    def __init__(self, fast_delay: float, slow_delay: float, max_fast_attempts: int) -> None:
        self.fast_delay = fast_delay
        self.slow_delay = slow_delay
        self.max_fast_attempts = max_fast_attempts
        self._failures: dict[Hashable, int] = {}

    def when(self, item: Hashable) -> float:
        attempts = self._failures.get(item, 0) + 1
        self._failures[item] = attempts
        return self.fast_delay if attempts <= self.max_fast_attempts else self.slow_delay

    def forget(self, item: Hashable) -> None:
        self._failures.pop(item, None)

    def num_requeues(self, item: Hashable) -> int:
        return self._failures.get(item, 0)


_MIN_SWEEP = 64
"""`ItemIntervalRateLimiter` keeps up to this many slots before sweeping the stale ones."""


class ItemIntervalRateLimiter:
    """At most one slot per `interval` per item: an item idle for a whole interval goes at once,
    and every add within the window after it waits for the window's end (so a burst coalesces
    into that one slot). Not a failure counter: `forget` keeps the window, `num_requeues` is 0.
    A slot a whole interval in the past means what no slot means, so such slots are dropped
    (swept whenever the map has doubled since the last sweep): items that come and go do not
    stay."""

    def __init__(self, interval: float, clock: Clock) -> None:
        self.interval = interval
        self.clock = clock
        self._slot: dict[Hashable, float] = {}
        self._sweep_at = _MIN_SWEEP

    def when(self, item: Hashable) -> float:
        now = self.clock.monotonic()
        slot = self._slot.get(item)
        if slot is not None and slot > now:
            return slot - now
        slot = now if slot is None else max(now, slot + self.interval)
        self._slot[item] = slot
        if len(self._slot) >= self._sweep_at:
            self._sweep(now)
        return slot - now

    def _sweep(self, now: float) -> None:
        self._slot = {k: s for k, s in self._slot.items() if s + self.interval > now}
        self._sweep_at = max(_MIN_SWEEP, 2 * len(self._slot))

    def __len__(self) -> int:
        return len(self._slot)

    def forget(self, item: Hashable) -> None:
        pass

    def num_requeues(self, item: Hashable) -> int:
        return 0


class BucketRateLimiter:
    """One token bucket shared by all items: throttles the overall rate of rate-limited adds."""

    def __init__(self, qps: float, burst: int, clock: Clock | None = None) -> None:
        self.limiter = Limiter(qps, burst, clock)

    def when(self, item: Hashable) -> float:
        return self.limiter.reserve()

    def forget(self, item: Hashable) -> None:
        pass

    def num_requeues(self, item: Hashable) -> int:
        return 0


class MaxOfRateLimiter:
    """The longest delay of several limiters; forgets in all of them."""

    def __init__(self, *limiters: RateLimiter) -> None:
        if not limiters:
            raise ValueError("MaxOfRateLimiter needs at least one limiter")
        self.limiters: Sequence[RateLimiter] = limiters

    def when(self, item: Hashable) -> float:
        # Every limiter must see the failure, so no short-circuit.
        return max([limiter.when(item) for limiter in self.limiters])

    def forget(self, item: Hashable) -> None:
        for limiter in self.limiters:
            limiter.forget(item)

    def num_requeues(self, item: Hashable) -> int:
        return max(limiter.num_requeues(item) for limiter in self.limiters)


def default_controller_rate_limiter(clock: Clock | None = None) -> RateLimiter:
    """client-go's default: per-item 5 ms·2^n up to 1000 s, overall 10 qps with burst 100."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.005, 1000.0),
        BucketRateLimiter(10.0, 100, clock),
    )
