"""The in-process controllers' work queue: duplicates collapse while waiting, not while running."""

from __future__ import annotations

import asyncio

from agones.localcluster.apiserver.workqueue import WorkQueue


async def test_an_item_waiting_is_not_queued_twice() -> None:
    seen: list[str] = []
    done = asyncio.Event()

    async def process(item: str) -> None:
        seen.append(item)
        if item == "last":
            done.set()

    queue: WorkQueue[str] = WorkQueue("test", process)
    for item in ("ns", "ns", "other", "ns", "last"):
        queue.add(item)
    queue.start()
    try:
        await asyncio.wait_for(done.wait(), 5)
    finally:
        await queue.stop()
    assert seen == ["ns", "other", "last"]


async def test_an_item_added_while_processed_runs_again() -> None:
    seen: list[str] = []
    running = asyncio.Event()
    release = asyncio.Event()
    twice = asyncio.Event()

    async def process(item: str) -> None:
        seen.append(item)
        if len(seen) == 1:
            running.set()
            await release.wait()
        else:
            twice.set()

    queue: WorkQueue[str] = WorkQueue("test", process)
    queue.start()
    try:
        queue.add("ns")
        await asyncio.wait_for(running.wait(), 5)
        queue.add("ns")
        release.set()
        await asyncio.wait_for(twice.wait(), 5)
    finally:
        await queue.stop()
    assert seen == ["ns", "ns"]
