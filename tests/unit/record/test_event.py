"""EventRecorder: core/v1 Event shape, folding repeats, aggregation, spam filter, never blocking."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agones.client.errors import error_from_status
from agones.client.rest import Resource
from agones.clock import FakeClock
from agones.record import EventBroadcaster, EventRecorder

GS = {
    "apiVersion": "agones.dev/v1",
    "kind": "GameServer",
    "metadata": {"name": "gs-1", "namespace": "default", "uid": "u-1", "resourceVersion": "7"},
}


class FakeEvents:
    def __init__(self) -> None:
        self.created: list[dict[str, Any]] = []
        self.patches: list[tuple[str, Any, dict[str, Any]]] = []
        self.expired: set[str] = set()
        self.failures: list[Exception] = []
        self.attempts = 0

    async def create(
        self, res: Resource, body: Any, namespace: str | None = None
    ) -> dict[str, Any]:
        self.attempts += 1
        if self.failures:
            raise self.failures.pop(0)
        self.created.append(body)
        return body

    async def patch(self, res: Resource, name: str, patch: Any, **kw: Any) -> dict[str, Any]:
        if name in self.expired:
            raise error_from_status(404, {"kind": "Status", "code": 404, "reason": "NotFound"})
        self.patches.append((name, patch, kw))
        return {}


@pytest.fixture
async def rec() -> AsyncIterator[tuple[EventRecorder, EventBroadcaster, FakeEvents, FakeClock]]:
    client, clock = FakeEvents(), FakeClock(1_700_000_000.0)
    broadcaster = EventBroadcaster(client, clock=clock)
    task = asyncio.create_task(broadcaster.run())
    yield broadcaster.new_recorder("gameserver-controller", "host-1"), broadcaster, client, clock
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def test_event_shape(rec: Any) -> None:
    recorder, broadcaster, client, _ = rec
    recorder.event(GS, "Normal", "Ready", "SDK.Ready() complete")
    await asyncio.wait_for(broadcaster.flush(), 1)
    (event,) = client.created
    assert event["metadata"]["namespace"] == "default"
    assert event["metadata"]["name"].startswith("gs-1.")
    assert event["involvedObject"] == {
        "kind": "GameServer",
        "namespace": "default",
        "name": "gs-1",
        "uid": "u-1",
        "apiVersion": "agones.dev/v1",
        "resourceVersion": "7",
    }
    assert (event["type"], event["reason"], event["message"], event["count"]) == (
        "Normal",
        "Ready",
        "SDK.Ready() complete",
        1,
    )
    assert event["source"] == {"component": "gameserver-controller", "host": "host-1"}
    assert event["firstTimestamp"] == event["lastTimestamp"] == "2023-11-14T22:13:20Z"


async def test_repeats_fold_into_count_and_last_timestamp(rec: Any) -> None:
    recorder, broadcaster, client, clock = rec
    recorder.event(GS, "Normal", "Creating", "Pod gs-1 created")
    await asyncio.wait_for(broadcaster.flush(), 1)
    clock.step(5)
    recorder.event(GS, "Normal", "Creating", "Pod gs-1 created")
    recorder.eventf(GS, "Normal", "Creating", "Pod %s created", "gs-1")
    recorder.event(GS, "Warning", "Creating", "Pod gs-1 created")  # different type: new event
    await asyncio.wait_for(broadcaster.flush(), 1)
    assert len(client.created) == 2
    name = client.created[0]["metadata"]["name"]
    assert [p[0] for p in client.patches] == [name, name]
    assert [p[1]["count"] for p in client.patches] == [2, 3]
    assert client.patches[0][1]["lastTimestamp"] == "2023-11-14T22:13:25Z"
    assert client.patches[0][2] == {"namespace": "default", "patch_type": "strategic"}
    # The folded event expired on the server: client-go creates it again, name and count kept.
    client.expired.add(name)
    recorder.event(GS, "Normal", "Creating", "Pod gs-1 created")
    await asyncio.wait_for(broadcaster.flush(), 1)
    assert len(client.created) == 3
    again = client.created[-1]
    assert (again["metadata"]["name"], again["count"]) == (name, 4)
    assert again["firstTimestamp"] == client.created[0]["firstTimestamp"]


async def test_many_similar_messages_are_aggregated(rec: Any) -> None:
    recorder, broadcaster, client, _ = rec
    for i in range(13):
        recorder.event(GS, "Warning", "Unhealthy", f"failure {i}")
    await asyncio.wait_for(broadcaster.flush(), 1)
    messages = [e["message"] for e in client.created]
    # client-go's EventAggregate combines from the 10th distinct message on.
    assert messages[:9] == [f"failure {i}" for i in range(9)]
    assert messages[9] == "(combined from similar events): failure 9"
    assert len(client.created) == 10
    assert [p[1]["message"] for p in client.patches] == [
        f"(combined from similar events): failure {i}" for i in (10, 11, 12)
    ]


async def test_aggregation_window_slides_with_each_similar_event(rec: Any) -> None:
    recorder, broadcaster, client, clock = rec
    for i in range(10):
        recorder.event(GS, "Warning", "Unhealthy", f"failure {i}")
        clock.step(100)  # each within 10 min of the last, though the first is 15 min back
    await asyncio.wait_for(broadcaster.flush(), 1)
    assert client.created[-1]["message"] == "(combined from similar events): failure 9"
    clock.step(601)
    recorder.event(GS, "Warning", "Unhealthy", "failure 10")
    await asyncio.wait_for(broadcaster.flush(), 1)
    assert client.created[-1]["message"] == "failure 10", "a quiet 10 min starts afresh"


async def test_spam_filter_and_buffer_never_block(rec: Any) -> None:
    recorder, broadcaster, client, clock = rec
    for _ in range(30):
        recorder.event(GS, "Normal", "Same", "same")
    await asyncio.wait_for(broadcaster.flush(), 1)
    assert len(client.created) + len(client.patches) == 25
    clock.step(300)
    recorder.event(GS, "Normal", "Same", "same")
    await asyncio.wait_for(broadcaster.flush(), 1)
    assert len(client.created) + len(client.patches) == 26
    before = broadcaster.dropped
    for i in range(1500):
        recorder.event({**GS, "metadata": {**GS["metadata"], "name": f"g{i}"}}, "Normal", "X", "y")
    assert broadcaster.dropped - before == 500, "a full buffer drops instead of blocking"


def test_bad_input_is_dropped_not_raised() -> None:
    broadcaster = EventBroadcaster(FakeEvents(), clock=FakeClock())
    recorder = broadcaster.new_recorder("c", "h")
    recorder.event(GS, "Fatal", "X", "y")
    recorder.event({"metadata": {}}, "Normal", "X", "y")
    assert broadcaster._queue.qsize() == 0


async def test_unreachable_server_is_retried_and_a_rejection_is_not() -> None:
    client, clock = FakeEvents(), FakeClock(1_700_000_000.0)
    broadcaster = EventBroadcaster(client, clock=clock, rand=lambda: 0.5)
    task = asyncio.create_task(broadcaster.run())
    recorder = broadcaster.new_recorder("c", "h")
    client.failures = [ConnectionError("refused"), ConnectionError("refused")]
    recorder.event(GS, "Normal", "Ready", "ready")
    await clock.wait_for_timers(1)
    assert client.attempts == 1
    await clock.advance(5)  # the first wait: random, half of 10 s here
    await clock.wait_for_timers(1)
    assert client.attempts == 2
    await clock.advance(10)
    await asyncio.wait_for(broadcaster.flush(), 1)
    assert client.attempts == 3 and len(client.created) == 1

    client.failures = [error_from_status(422, {"kind": "Status", "code": 422})]
    recorder.event(GS, "Normal", "Other", "rejected")
    await asyncio.wait_for(broadcaster.flush(), 1)
    assert client.attempts == 4 and len(client.created) == 1, "a rejection is not retried"
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


class GatedEvents(FakeEvents):
    """Creates wait on a gate, so a test can see how many are in flight at once."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.in_flight = 0
        self.most_in_flight = 0

    async def create(
        self, res: Resource, body: Any, namespace: str | None = None
    ) -> dict[str, Any]:
        self.in_flight += 1
        self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            await self.gate.wait()
            return await super().create(res, body, namespace)
        finally:
            self.in_flight -= 1


def named(name: str) -> dict[str, Any]:
    return {**GS, "metadata": {**GS["metadata"], "name": name, "uid": f"u-{name}"}}


async def test_writes_about_different_objects_overlap_up_to_the_writers() -> None:
    client = GatedEvents()
    broadcaster = EventBroadcaster(client, clock=FakeClock(1_700_000_000.0), writers=4)
    task = asyncio.create_task(broadcaster.run())
    recorder = broadcaster.new_recorder("c", "h")
    for i in range(10):
        recorder.event(named(f"g{i}"), "Normal", "Ready", "ready")

    async def four_in_flight() -> None:
        while client.in_flight < 4:
            await asyncio.sleep(0)

    await asyncio.wait_for(four_in_flight(), 1)
    client.gate.set()
    await asyncio.wait_for(broadcaster.flush(), 1)
    assert client.most_in_flight == 4
    assert len(client.created) == 10
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


async def test_events_about_one_object_are_written_in_order_one_at_a_time() -> None:
    client = GatedEvents()
    broadcaster = EventBroadcaster(client, clock=FakeClock(1_700_000_000.0), writers=4)
    task = asyncio.create_task(broadcaster.run())
    recorder = broadcaster.new_recorder("c", "h")
    reasons = ["PortAllocation", "Creating", "Scheduled", "Ready"]
    for reason in reasons:
        recorder.event(GS, "Normal", reason, reason.lower())

    async def all_taken() -> None:
        while client.in_flight < 1 or broadcaster._queue.qsize():
            await asyncio.sleep(0)

    await asyncio.wait_for(all_taken(), 1)
    # Every event is off the queue; three wait behind the one being written.
    (parked,) = broadcaster._writing.values()
    assert len(parked) == 4
    assert client.in_flight == 1
    client.gate.set()
    await asyncio.wait_for(broadcaster.flush(), 1)
    assert [e["reason"] for e in client.created] == reasons
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


def test_a_pending_event_keeps_a_reference_not_the_object() -> None:
    broadcaster = EventBroadcaster(FakeEvents(), clock=FakeClock())
    big = {**GS, "spec": {"template": "x" * 10_000}}
    broadcaster.new_recorder("c", "h").event(big, "Normal", "Ready", "ready")
    pending = broadcaster._queue.get_nowait()
    assert pending.involved == {
        "kind": "GameServer",
        "namespace": "default",
        "name": "gs-1",
        "uid": "u-1",
        "apiVersion": "agones.dev/v1",
        "resourceVersion": "7",
    }


async def test_forgetting_a_deleted_object_drops_its_correlator_entries(rec: Any) -> None:
    """Every key holds the object's uid, so a deleted object's entries can never match again:
    kept, they filled the caches with every GameServer ever seen (4,096 per cache)."""
    recorder, broadcaster, client, _ = rec
    other = {**GS, "metadata": {**GS["metadata"], "name": "gs-2", "uid": "u-2"}}
    recorder.event(GS, "Normal", "Creating", "Pod gs-1 created")
    recorder.event(GS, "Normal", "Ready", "SDK.Ready() complete")
    recorder.event(other, "Normal", "Ready", "SDK.Ready() complete")
    await asyncio.wait_for(broadcaster.flush(), 1)
    assert broadcaster.cached() == 2 + 2 + 1 + 1 + 1 + 1  # seen, similar, spam: gs-1 then gs-2
    broadcaster.forget(GS)
    assert broadcaster.cached() == 3
    assert set(broadcaster.correlator._keys_of) == {"u-2"}
    broadcaster.forget(other)
    assert broadcaster.cached() == 0
    assert broadcaster.correlator._keys_of == {}
    # a repeat after forgetting is a new Event, not a patch of the forgotten one
    recorder.event(other, "Normal", "Ready", "SDK.Ready() complete")
    await asyncio.wait_for(broadcaster.flush(), 1)
    assert len(client.created) == 4 and client.patches == []


async def test_two_events_at_one_clock_reading_get_two_names(rec: Any) -> None:
    """The fake clock stands still, as a float clock does for back-to-back events."""
    recorder, broadcaster, client, _ = rec
    recorder.event(GS, "Normal", "Scheduled", "Address and port populated")
    recorder.event(GS, "Normal", "Ready", "SDK.Ready() complete")
    await asyncio.wait_for(broadcaster.flush(), 1)
    names = [e["metadata"]["name"] for e in client.created]
    assert len(set(names)) == 2
