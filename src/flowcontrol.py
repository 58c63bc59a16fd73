"""Token buckets (golang.org/x/time/rate `Limiter` and client-go `util/flowcontrol`).

`Limiter(qps, burst)` holds up to `burst` tokens refilled at `qps` per second. `reserve()` always
succeeds: it takes one token, letting the balance go negative, and returns how long the caller must
wait before acting (0 when a token was available), exactly like `rate.Limiter.Reserve().Delay()`.
`TokenBucketRateLimiter.wait()` is the blocking form used by the REST client for QPS/burst.
Refills and back-off resets are timed by the clock's monotonic reading, as Go's are, so a step of
the wall clock neither stalls the bucket nor resets a back-off.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from .clock import Clock, RealClock


class Limiter:
    """A reservation-based token bucket; `qps == inf` never delays."""

    def __init__(self, qps: float, burst: int, clock: Clock | None = None) -> None:
        if qps <= 0:
            raise ValueError(f"qps must be positive, got {qps}")
        if burst < 1 and not math.isinf(qps):
            raise ValueError(f"burst must be at least 1, got {burst}")
        self.qps = qps
        self.burst = burst
        self._clock = clock or RealClock()
        self._tokens = float(burst)
        self._last = self._clock.monotonic()

    def _advance(self, now: float) -> None:
        elapsed = max(0.0, now - self._last)
        self._tokens = min(float(self.burst), self._tokens + elapsed * self.qps)
        self._last = max(self._last, now)

    def reserve(self) -> float:
        """Take one token; return the delay in seconds before it may be used."""
        if math.isinf(self.qps):
            return 0.0
        now = self._clock.monotonic()
        self._advance(now)
        self._tokens -= 1.0
        if self._tokens >= 0:
            return 0.0
        return -self._tokens / self.qps

    def tokens(self) -> float:
        self._advance(self._clock.monotonic())
        return self._tokens


class TokenBucketRateLimiter:
    """client-go's `flowcontrol.NewTokenBucketRateLimiter`: `wait()` blocks for a token."""

    def __init__(self, qps: float, burst: int, clock: Clock | None = None) -> None:
        self._clock = clock or RealClock()
        self._limiter = Limiter(qps, burst, self._clock)

    def try_accept(self) -> bool:
        if self._limiter.tokens() >= 1.0:
            self._limiter.reserve()
            return True
        return False

    async def wait(self) -> None:
        delay = self._limiter.reserve()
        if delay > 0:
            await self._clock.sleep(delay)


class ExponentialBackoffManager:
    """apimachinery's `wait.NewExponentialBackoffManager`: jittered, doubling, capped, resetting.

    `backoff()` returns the next delay: `d + rand·jitter·d` where `d` starts at `initial`, doubles
    on each call up to `cap`, and returns to `initial` when no backoff was requested for `reset`
    seconds. The reflector uses 0.8 s → 30 s, jitter 1.0, reset after 2 min.
    """

    def __init__(
        self,
        initial: float = 0.8,
        cap: float = 30.0,
        reset: float = 120.0,
        factor: float = 2.0,
        jitter: float = 1.0,
        clock: Clock | None = None,
        rand: Callable[[], float] = random.random,
    ) -> None:
        self.initial, self.cap, self.reset = initial, cap, reset
        self.factor, self.jitter = factor, jitter
        self._clock = clock or RealClock()
        self._rand = rand
        self._duration = initial
        self._last: float | None = None

    def backoff(self) -> float:
        now = self._clock.monotonic()
        if self._last is not None and now - self._last > self.reset:
            self._duration = self.initial
        self._last = now
        base = min(self._duration, self.cap)
        self._duration = min(self._duration * self.factor, self.cap)
        return base + (self._rand() * self.jitter * base if self.jitter > 0 else 0.0)
