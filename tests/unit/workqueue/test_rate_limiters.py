"""Each rate limiter's delay sequence (client-go `default_rate_limiters_test.go` behaviour)."""

from __future__ import annotations

import pytest

from agones.clock import FakeClock
from agones.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    ItemIntervalRateLimiter,
    MaxOfRateLimiter,
    default_controller_rate_limiter,
    fast_rate_limiter,
)


def test_item_exponential_sequence_cap_and_forget() -> None:
    limiter = ItemExponentialFailureRateLimiter(0.001, 1.0)
    seq = [limiter.when("one") for _ in range(12)]
    assert seq == [0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.128, 0.256, 0.512, 1.0, 1.0]
    assert limiter.num_requeues("one") == 12
    assert limiter.when("two") == 0.001, "items are independent"
    limiter.forget("one")
    assert limiter.num_requeues("one") == 0
    assert limiter.when("one") == 0.001


def test_item_exponential_huge_exponent_is_capped() -> None:
    limiter = ItemExponentialFailureRateLimiter(0.001, 1000.0)
    for _ in range(200):
        delay = limiter.when("x")
    assert delay == 1000.0


@pytest.mark.parametrize(
    ("fast", "slow", "attempts", "expected"),
    [
        pytest.param(0.005, 10.0, 3, [0.005, 0.005, 0.005, 10.0, 10.0], id="client-go"),
        pytest.param(0.02, 0.5, 5, [0.02] * 5 + [0.5, 0.5], id="agones-gameserver"),
        pytest.param(0.2, 3.0, 5, [0.2] * 5 + [3.0], id="agones-fleet"),
    ],
)
def test_item_fast_slow_sequence(
    fast: float, slow: float, attempts: int, expected: list[float]
) -> None:
    limiter = ItemFastSlowRateLimiter(fast, slow, attempts)
    assert [limiter.when("a") for _ in expected] == expected
    assert limiter.num_requeues("a") == len(expected)
    limiter.forget("a")
    assert limiter.when("a") == fast


def test_agones_fast_rate_limiter() -> None:
    limiter = fast_rate_limiter(3.0)
    assert [limiter.when("k") for _ in range(7)] == [0.2] * 5 + [3.0, 3.0]


def test_bucket_sequence_on_fake_time() -> None:
    clock = FakeClock()
    limiter = BucketRateLimiter(1.0, 3, clock)
    # Burst of three is free, then each reservation waits one more token period.
    assert [limiter.when(i) for i in range(5)] == [0.0, 0.0, 0.0, 1.0, 2.0]
    assert limiter.num_requeues("anything") == 0
    clock.step(10)  # refill is capped at the burst; the two borrowed tokens are repaid first
    assert [limiter.when(i) for i in range(4)] == [0.0, 0.0, 0.0, 1.0]


def test_max_of_takes_longest_and_forgets_all() -> None:
    clock = FakeClock()
    limiter = MaxOfRateLimiter(
        ItemFastSlowRateLimiter(0.005, 3.0, 3), ItemExponentialFailureRateLimiter(0.001, 1.0)
    )
    assert [limiter.when("a") for _ in range(5)] == [0.005, 0.005, 0.005, 3.0, 3.0]
    assert limiter.num_requeues("a") == 5
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == 0.005
    del clock


def test_default_controller_rate_limiter_sequence() -> None:
    clock = FakeClock()
    limiter = default_controller_rate_limiter(clock)
    # One item: per-item exponential dominates while the bucket (burst 100) has tokens.
    assert [limiter.when("a") for _ in range(4)] == [0.005, 0.01, 0.02, 0.04]
    # Exhaust the bucket with distinct items: the 101st rate-limited add overall waits 0.1 s per token.
    for i in range(96):
        limiter.when(f"other-{i}")
    assert limiter.when("fresh") == pytest.approx(0.1)
    assert limiter.when("fresh2") == pytest.approx(0.2)


@pytest.mark.parametrize(
    ("calls", "delays"),
    [
        pytest.param([0.0], [0.0], id="idle-item-goes-at-once"),
        pytest.param([0.0, 0.001, 0.002], [0.0, 0.499, 0.498], id="burst-waits-for-window-end"),
        pytest.param([0.0, 0.6], [0.0, 0.0], id="after-a-whole-window-at-once"),
        pytest.param([0.0, 0.2, 0.6], [0.0, 0.3, 0.4], id="next-window-after-a-used-slot"),
        pytest.param([0.0, 5.0, 5.1], [0.0, 0.0, 0.4], id="long-idle-resets"),
    ],
)
def test_item_interval_sequence(calls: list[float], delays: list[float]) -> None:
    clock = FakeClock()
    limiter = ItemIntervalRateLimiter(0.5, clock)
    got = []
    for at in calls:
        clock.step(at - clock.monotonic())
        got.append(limiter.when("k"))
    assert got == pytest.approx(delays)
    limiter.forget("k")  # a window, not a failure history: forget keeps it
    assert limiter.num_requeues("k") == 0
    if len(calls) > 1:
        assert limiter.when("k") > 0
    assert limiter.when("other") == 0.0


def test_item_interval_drops_slots_of_items_gone_for_an_interval() -> None:
    clock = FakeClock()
    limiter = ItemIntervalRateLimiter(0.5, clock)
    for i in range(1000):
        limiter.when(f"default/gs-{i}")
    clock.step(0.6)
    for i in range(100):
        assert limiter.when(f"default/next-{i}") == 0.0
    assert len(limiter) <= 100
    assert limiter.when("default/next-0") == pytest.approx(0.5), "live windows are kept"
