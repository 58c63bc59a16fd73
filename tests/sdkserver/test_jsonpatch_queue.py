"""JSON patch creation/application and the sidecar's write queue on WorkerQueue (fake clock)."""

from __future__ import annotations

from typing import Any

import pytest

from agones.jsonpatch import PatchTestFailed, apply_patch, create_patch, diff
from agones.sdkserver.clock import FakeClock
from agones.sdkserver.queue import UpdateQueue


@pytest.mark.parametrize(
    ("old", "new", "ops"),
    [
        pytest.param({"a": 1}, {"a": 1}, [], id="same"),
        pytest.param(
            {"a": 1}, {"a": 2}, [{"op": "replace", "path": "/a", "value": 2}], id="replace"
        ),
        pytest.param(
            {}, {"a": {"b": 1}}, [{"op": "add", "path": "/a", "value": {"b": 1}}], id="add"
        ),
        pytest.param({"a": 1, "b": 2}, {"b": 2}, [{"op": "remove", "path": "/a"}], id="remove"),
        pytest.param(
            {"l": {}},
            {"l": {"agones.dev/sdk-k": "v"}},
            [{"op": "add", "path": "/l/agones.dev~1sdk-k", "value": "v"}],
            id="escaped-key",
        ),
        pytest.param(
            {"x": [1, 2]}, {"x": [2]}, [{"op": "replace", "path": "/x", "value": [2]}], id="list"
        ),
        pytest.param(
            {"x": None}, {"x": "t"}, [{"op": "replace", "path": "/x", "value": "t"}], id="null"
        ),
    ],
)
def test_diff(old: dict[str, Any], new: dict[str, Any], ops: list[dict[str, Any]]) -> None:
    assert diff(old, new) == ops
    assert apply_patch(old, ops) == new


def test_create_patch_tests_the_resource_version_first() -> None:
    old = {"metadata": {"resourceVersion": "7"}, "status": {"state": "Scheduled"}}
    new = {"metadata": {"resourceVersion": "7"}, "status": {"state": "RequestReady"}}
    patch = create_patch(old, new)
    assert patch[0] == {"op": "test", "path": "/metadata/resourceVersion", "value": "7"}
    assert apply_patch(old, patch) == new
    with pytest.raises(PatchTestFailed):
        apply_patch({"metadata": {"resourceVersion": "8"}, "status": {}}, patch)
    assert create_patch(old, old) == []


class Recorder:
    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.calls: list[tuple[str, float]] = []
        self.fail = 0

    async def __call__(self, key: str) -> None:
        self.calls.append((key, self.clock.monotonic()))
        if self.fail:
            self.fail -= 1
            raise RuntimeError("boom")


async def burst(queue: UpdateQueue, clock: FakeClock, key: str, n: int, every: float) -> None:
    for _ in range(n):
        queue.enqueue(key)
        await clock.advance(every)


@pytest.mark.parametrize(
    ("first_immediately", "times"),
    [
        pytest.param(False, [0.5], id="agones-delay-each"),
        pytest.param(True, [0.0, 0.5], id="first-at-once"),
    ],
)
async def test_a_burst_coalesces(first_immediately: bool, times: list[float]) -> None:
    clock = FakeClock()
    recorder = Recorder(clock)
    queue = UpdateQueue(recorder, clock, 0.5, first_immediately=first_immediately)
    queue.start()
    await burst(queue, clock, "updateLabel", 100, 0.001)
    await clock.advance(2)
    assert [t for _, t in recorder.calls] == pytest.approx(times)
    await queue.stop()


async def test_keys_are_independent_and_failures_retry() -> None:
    clock = FakeClock()
    recorder = Recorder(clock)
    recorder.fail = 1
    queue = UpdateQueue(recorder, clock, 0.5)
    queue.start()
    queue.enqueue("a")
    queue.enqueue("b")
    await clock.advance(0.5)
    await clock.advance(0.5)
    assert sorted(k for k, _ in recorder.calls) == ["a", "a", "b"]
    assert [t for k, t in recorder.calls if k == "a"] == pytest.approx([0.5, 1.0])
    assert not queue.pending()
    await queue.stop()


async def test_a_change_asked_for_during_a_failed_write_is_written_at_once() -> None:
    clock = FakeClock()
    calls: list[float] = []

    async def handler(key: str) -> None:
        calls.append(clock.monotonic())
        if len(calls) == 1:
            queue.enqueue_after(key, 0)  # an SDK call lands while the write is in flight
            raise RuntimeError("boom")

    queue = UpdateQueue(handler, clock, 0.5)
    queue.start()
    queue.enqueue("updateState")
    await clock.advance(3)
    # the work queue's dirty set: the re-added key runs once the failed run is done; the
    # failure's own rate-limited retry follows (and finds nothing left to write)
    assert calls == pytest.approx([0.5, 0.5, 1.0])
    assert not queue.pending()
    await queue.stop()


async def test_enqueue_after_keeps_the_earlier_time() -> None:
    clock = FakeClock()
    recorder = Recorder(clock)
    queue = UpdateQueue(recorder, clock, 0.5)
    queue.start()
    queue.enqueue_after("p", 1.0)
    queue.enqueue_after("p", 3.0)
    await clock.advance(1.5)
    assert recorder.calls == [("p", 1.0)]
    await queue.stop()
