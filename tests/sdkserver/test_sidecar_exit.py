"""The sidecar's last word: what is queued when it stops is written before it exits (the write
queue's flush), within a bound, and a write that keeps failing does not hold the exit for ever."""

from __future__ import annotations

import asyncio
from typing import Any

from agones.sdk.proto import sdk_pb2
from agones.sdkserver.clock import FakeClock
from agones.sdkserver.queue import UpdateQueue
from tests.sdkserver.test_cluster_sdkserver import START, Harness


async def test_unhealthy_queued_just_before_stop_is_written() -> None:
    h = Harness()
    await h.server.run()
    await h.server.ready(sdk_pb2.Empty())
    await h.clock.advance(0.5)
    h.store.update(lambda gs: gs["status"].update(state="Ready"))
    h.server.ensure_health_checks_running()
    await h.clock.advance(5 * 3)  # the third missed period: Unhealthy queued, not yet written
    assert not h.server.healthy()
    assert h.state == "Ready"
    await h.server.stop()  # SIGTERM in the same second: the game exited, the pod is done
    assert h.state == "Unhealthy"
    assert h.store.events[-1] == ("Warning", "Unhealthy", "Health check failure")


async def test_every_queued_key_is_flushed_at_once() -> None:
    h = Harness()
    await h.server.run()
    await h.server.set_label(sdk_pb2.KeyValue(key="a", value="1"))
    await h.server.set_annotation(sdk_pb2.KeyValue(key="b", value="2"))
    await h.server.shutdown(sdk_pb2.Empty())
    await h.server.stop()
    assert h.gs["metadata"]["labels"]["agones.dev/sdk-a"] == "1"
    assert h.gs["metadata"]["annotations"]["agones.dev/sdk-b"] == "2"
    assert h.state == "Shutdown"


async def test_flush_retries_a_failed_write_and_then_gives_up_by_its_timeout() -> None:
    calls: list[str] = []

    async def handler(key: str) -> None:
        calls.append(key)
        raise RuntimeError("the API is gone")

    queue = UpdateQueue(handler, FakeClock(START), 0.5)
    queue.start()
    queue.enqueue("updateState")
    assert await asyncio.wait_for(queue.flush(0.2), 10) is False
    assert len(calls) > 1  # retried at once, not after the (fake, frozen) rate limit
    await queue.stop()


async def test_flush_of_an_idle_queue_returns_at_once() -> None:
    written: list[str] = []

    async def handler(key: str) -> None:
        written.append(key)

    queue: Any = UpdateQueue(handler, FakeClock(START), 0.5)
    queue.start()
    assert await asyncio.wait_for(queue.flush(5), 10) is True
    queue.enqueue("k")
    assert await asyncio.wait_for(queue.flush(5), 10) is True
    assert written == ["k"]
    await queue.stop()
