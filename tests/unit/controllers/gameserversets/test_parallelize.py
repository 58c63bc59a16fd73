"""`parallelize`: every item once, at most `parallelism` at a time, no more workers than items."""

from __future__ import annotations

import asyncio

import pytest

from agones.controllers.gameserversets.controller import parallelize


@pytest.mark.parametrize(
    ("items", "parallelism", "most_at_once"),
    [
        pytest.param(3, 64, 3, id="fewer-items-than-workers"),
        pytest.param(100, 16, 16, id="capped-by-parallelism"),
        pytest.param(0, 16, 0, id="nothing"),
    ],
)
async def test_each_item_once_within_parallelism(
    items: int, parallelism: int, most_at_once: int
) -> None:
    done: list[int] = []
    in_flight = 0
    most = 0
    tasks_before = len(asyncio.all_tasks())
    tasks_seen = 0

    async def work(i: int) -> None:
        nonlocal in_flight, most, tasks_seen
        in_flight += 1
        most = max(most, in_flight)
        tasks_seen = max(tasks_seen, len(asyncio.all_tasks()) - tasks_before)
        await asyncio.sleep(0)
        done.append(i)
        in_flight -= 1

    assert await parallelize(range(items), parallelism, work) is None
    assert sorted(done) == list(range(items))
    assert most == most_at_once
    assert tasks_seen <= max(1, min(items, parallelism))


async def test_a_worker_stops_at_its_error_and_the_others_go_on() -> None:
    done: list[int] = []

    async def work(i: int) -> None:
        if i == 0:
            raise ValueError("boom")
        done.append(i)

    error = await parallelize(range(10), 2, work)
    assert isinstance(error, ValueError)
    assert sorted(done) == list(range(1, 10))
