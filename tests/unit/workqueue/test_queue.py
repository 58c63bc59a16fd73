"""Queue, delaying queue and rate-limiting queue guarantees (client-go.md §1), on fake time."""

from __future__ import annotations

import asyncio

import pytest

from agones.clock import FakeClock
from agones.workqueue import (
    DelayingQueue,
    ItemExponentialFailureRateLimiter,
    Queue,
    RateLimitingQueue,
)


async def get_now(q: Queue[str]) -> str:
    item, shutdown = await asyncio.wait_for(q.get(), 1)
    assert not shutdown
    assert item is not None
    return item


async def test_fifo_order_and_dirty_dedup() -> None:
    q: Queue[str] = Queue()
    for item in ["a", "b", "a", "c", "b"]:
        q.add(item)
    assert len(q) == 3
    assert [await get_now(q) for _ in range(3)] == ["a", "b", "c"]


async def test_add_while_processing_is_not_handed_out_concurrently() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    item = await get_now(q)
    q.add("a")
    q.add("a")
    assert len(q) == 0, "a held item must not be queued again"
    second = asyncio.create_task(q.get())
    await asyncio.sleep(0)
    assert not second.done()
    q.done(item)
    assert await asyncio.wait_for(second, 1) == ("a", False)
    q.done("a")
    assert len(q) == 0, "the repeated adds while processing collapse into one"


async def test_done_without_readd_drops_item() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    q.done(await get_now(q))
    assert len(q) == 0
    q.add("a")
    assert len(q) == 1


async def test_shut_down_wakes_getters_and_hands_out_remaining() -> None:
    q: Queue[str] = Queue()
    waiters = [asyncio.create_task(q.get()) for _ in range(3)]
    await asyncio.sleep(0)
    q.shut_down()
    assert await asyncio.wait_for(asyncio.gather(*waiters), 1) == [(None, True)] * 3

    q2: Queue[str] = Queue()
    q2.add("x")
    q2.shut_down()
    q2.add("y")
    assert await get_now(q2) == "x"
    assert await q2.get() == (None, True)


async def test_shut_down_with_drain_waits_for_in_flight() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    item = await get_now(q)
    drain = asyncio.create_task(q.shut_down_with_drain())
    await asyncio.sleep(0)
    assert not drain.done()
    assert q.shutting_down()
    q.done(item)
    await asyncio.wait_for(drain, 1)


async def test_shut_down_with_drain_returns_when_idle() -> None:
    q: Queue[str] = Queue()
    await asyncio.wait_for(q.shut_down_with_drain(), 1)


async def test_shut_down_with_drain_serves_every_waiter() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    item = await get_now(q)
    drains = [asyncio.create_task(q.shut_down_with_drain()) for _ in range(2)]
    await asyncio.sleep(0)
    assert not any(d.done() for d in drains)
    q.done(item)
    await asyncio.wait_for(asyncio.gather(*drains), 1)


async def test_shut_down_with_drain_ends_when_last_held_item_is_requeued() -> None:
    # client-go waits for `processing` to empty; a dirty item going back to the queue counts.
    q: Queue[str] = Queue()
    q.add("a")
    item = await get_now(q)
    q.add("a")
    drain = asyncio.create_task(q.shut_down_with_drain())
    await asyncio.sleep(0)
    assert not drain.done()
    q.done(item)
    await asyncio.wait_for(drain, 1)
    assert len(q) == 1


async def test_shut_down_ends_a_pending_drain() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    await get_now(q)
    drain = asyncio.create_task(q.shut_down_with_drain())
    await asyncio.sleep(0)
    assert not drain.done()
    q.shut_down()
    await asyncio.wait_for(drain, 1)
    assert q.processing() == frozenset({"a"})


async def test_cancelled_getter_passes_wakeup_on() -> None:
    q: Queue[str] = Queue()
    first = asyncio.create_task(q.get())
    second = asyncio.create_task(q.get())
    await asyncio.sleep(0)
    q.add("a")
    first.cancel()
    assert await asyncio.wait_for(second, 1) == ("a", False)


async def test_delaying_queue_zero_delay_is_immediate() -> None:
    clock = FakeClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("a", 0)
    q.add_after("b", -1)
    assert len(q) == 2
    assert q.waiting() == 0


async def test_delaying_queue_waits_on_the_clock() -> None:
    clock = FakeClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("a", 5)
    clock.step(4.999)
    assert len(q) == 0
    clock.step(0.001)
    assert len(q) == 1
    assert await get_now(q) == "a"


@pytest.mark.parametrize(
    ("first", "second", "ready_at"),
    [
        pytest.param(10, 2, 2, id="earlier-second-moves-forward"),
        pytest.param(2, 10, 2, id="later-second-ignored"),
        pytest.param(5, 5, 5, id="same-time"),
    ],
)
async def test_delaying_queue_earlier_ready_time_wins(
    first: float, second: float, ready_at: float
) -> None:
    clock = FakeClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("a", first)
    q.add_after("a", second)
    clock.step(ready_at - 0.01)
    assert len(q) == 0
    clock.step(0.01)
    assert len(q) == 1
    clock.step(100)
    assert len(q) == 1, "the superseded timer must not add it again"


async def test_delaying_queue_orders_by_ready_time() -> None:
    clock = FakeClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("late", 3)
    q.add_after("early", 1)
    q.add_after("mid", 2)
    clock.step(3)
    assert [await get_now(q) for _ in range(3)] == ["early", "mid", "late"]


async def test_delaying_queue_shutdown_drops_waiting() -> None:
    clock = FakeClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("a", 1)
    q.shut_down()
    clock.step(2)
    assert await q.get() == (None, True)


async def test_rate_limiting_queue_add_rate_limited_forget_num_requeues() -> None:
    clock = FakeClock()
    q: RateLimitingQueue[str] = RateLimitingQueue(
        ItemExponentialFailureRateLimiter(1, 100), clock=clock
    )
    q.add_rate_limited("a")  # 1 s
    assert q.num_requeues("a") == 1
    clock.step(1)
    q.done(await get_now(q))
    q.add_rate_limited("a")  # 2 s
    clock.step(1.5)
    assert len(q) == 0
    clock.step(0.5)
    assert len(q) == 1
    assert q.num_requeues("a") == 2
    q.forget("a")
    assert q.num_requeues("a") == 0
    assert len(q) == 1, "forget does not remove the item"


async def test_delaying_queue_ready_now_adds_every_waiting_item_once() -> None:
    clock = FakeClock()
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    q.add_after("a", 5)
    q.add_after("b", 1)
    q.ready_now()
    assert q.waiting() == 0
    assert sorted([await get_now(q), await get_now(q)]) == ["a", "b"]
    q.done("a")
    q.done("b")
    clock.step(10)  # the cancelled timers never fire: nothing comes back
    assert len(q) == 0


async def test_wait_for_processing_returns_when_the_held_item_is_done() -> None:
    q: Queue[str] = Queue()
    await asyncio.wait_for(q.wait_for_processing(), 1)  # idle: at once
    q.add("a")
    assert await get_now(q) == "a"
    waiter = asyncio.ensure_future(q.wait_for_processing())
    await asyncio.sleep(0)
    assert not waiter.done()
    q.done("a")
    await asyncio.wait_for(waiter, 1)
    assert not q.shutting_down()  # unlike a drain, the queue keeps running
