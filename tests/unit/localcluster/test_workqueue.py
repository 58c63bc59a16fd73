"""The embedded controllers' queue is the framework's WorkerQueue: duplicates collapse while an item
waits, not while it runs, and "not yet" / failures come back after the exponential back-off of the
one rate limiter, on fake time."""

from __future__ import annotations

import asyncio

import pytest

from agones.clock import FakeClock
from agones.localcluster.apiserver.workqueue import EmbeddedQueue


async def test_an_item_waiting_is_not_queued_twice() -> None:
    seen: list[tuple[str, ...]] = []
    done = asyncio.Event()

    async def sync(item: tuple[str, ...]) -> None:
        seen.append(item)
        if item == ("last",):
            done.set()

    queue = EmbeddedQueue("test", sync, clock=FakeClock())
    for item in (("ns", "a"), ("ns", "a"), ("other",), ("ns", "a"), ("last",)):
        queue.add(*item)
    queue.start()
    try:
        await asyncio.wait_for(done.wait(), 5)
    finally:
        await queue.stop()
    assert seen == [("ns", "a"), ("other",), ("last",)]


async def test_an_item_added_while_processed_runs_again() -> None:
    seen: list[tuple[str, ...]] = []
    running, release, twice = asyncio.Event(), asyncio.Event(), asyncio.Event()

    async def sync(item: tuple[str, ...]) -> None:
        seen.append(item)
        if len(seen) == 1:
            running.set()
            await release.wait()
        else:
            twice.set()

    queue = EmbeddedQueue("test", sync, clock=FakeClock())
    queue.start()
    try:
        queue.add("ns")
        await asyncio.wait_for(running.wait(), 5)
        queue.add("ns")
        release.set()
        await asyncio.wait_for(twice.wait(), 5)
    finally:
        await queue.stop()
    assert seen == [("ns",), ("ns",)]


@pytest.mark.parametrize(
    ("outcome", "delays"),
    [
        pytest.param("not-yet", [0.01, 0.02, 0.04], id="not-yet-backs-off-exponentially"),
        pytest.param("error", [0.01, 0.02, 0.04], id="errors-back-off-the-same-way"),
    ],
)
async def test_retries_come_back_after_the_rate_limiters_delay(
    outcome: str, delays: list[float]
) -> None:
    clock = FakeClock()
    calls: list[float] = []
    called = asyncio.Event()

    async def sync(item: tuple[str, ...]) -> bool:
        calls.append(clock.monotonic())
        called.set()
        if outcome == "error":
            raise RuntimeError("backend not reachable")
        return True

    queue = EmbeddedQueue("test", sync, clock=clock)
    queue.start()
    try:
        queue.add("svc")
        for delay in delays:
            await asyncio.wait_for(called.wait(), 5)
            called.clear()
            await clock.wait_for_timers(1)
            assert clock.next_timer() == pytest.approx(clock.now() + delay)
            clock.step(delay)
        await asyncio.wait_for(called.wait(), 5)
    finally:
        await queue.stop()
    assert calls == pytest.approx([0.0, 0.01, 0.03, 0.07])


async def test_success_forgets_the_history() -> None:
    clock = FakeClock()
    answers = [True, None, True]
    called = asyncio.Event()

    async def sync(item: tuple[str, ...]) -> bool | None:
        called.set()
        return answers.pop(0)

    queue = EmbeddedQueue("test", sync, clock=clock)
    queue.start()
    try:
        queue.add("svc")
        await asyncio.wait_for(called.wait(), 5)
        called.clear()
        await clock.wait_for_timers(1)
        clock.step(0.01)
        await asyncio.wait_for(called.wait(), 5)
        called.clear()
        queue.add("svc")
        await asyncio.wait_for(called.wait(), 5)
        await clock.wait_for_timers(1)
        assert clock.next_timer() == pytest.approx(clock.now() + 0.01)
    finally:
        await queue.stop()
