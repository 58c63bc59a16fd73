"""Reflector + SharedIndexInformer guarantees (client-go.md §1) on an in-memory API and fake time."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from agones.client.errors import error_from_status
from agones.client.versioned.resources import GAME_SERVERS as RES
from agones.clock import FakeClock
from agones.informers import DeletedFinalStateUnknown, ListWatch, SharedIndexInformer
from agones.informers.meta import get_resource_version
from agones.informers.store import meta_namespace_key
from tests.waiting import wait_for_async

from .fakeapi import FakeAPI, gs, status


async def until(cond: Callable[[], bool], timeout: float = 3.0) -> None:
    await wait_for_async(cond, timeout, interval=0)


class Recorder:
    """A handler that records notifications and checks the cache was updated first."""

    def __init__(self, informer: SharedIndexInformer) -> None:
        self.informer = informer
        self.events: list[tuple[Any, ...]] = []

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        key = meta_namespace_key(obj)
        assert self.informer.indexer.get_by_key(key) is not None
        self.events.append(("add", key, get_resource_version(obj), is_in_initial_list))

    def on_update(self, old: Any, new: Any) -> None:
        key = meta_namespace_key(new)
        assert self.informer.indexer.get_by_key(key) is not None
        self.events.append(("update", key, get_resource_version(old), get_resource_version(new)))

    def on_delete(self, obj: Any) -> None:
        key = meta_namespace_key(obj)
        tombstone = isinstance(obj, DeletedFinalStateUnknown)
        self.events.append(("delete", key, tombstone))

    def kinds(self) -> list[tuple[str, str]]:
        return [(e[0], e[1]) for e in self.events]


@pytest.fixture
async def env() -> AsyncIterator[tuple[FakeAPI, FakeClock, Callable[..., SharedIndexInformer]]]:
    api, clock = FakeAPI(), FakeClock()
    tasks: list[asyncio.Task[None]] = []

    def start(resync: float = 0.0, page_size: int = 2, run: bool = True) -> SharedIndexInformer:
        informer = SharedIndexInformer(
            ListWatch(api, RES),
            resync_period=resync,
            clock=clock,
            rand=random.Random(1),
            page_size=page_size,
        )
        if run:
            tasks.append(asyncio.create_task(informer.run()))
        return informer

    yield api, clock, start
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def launch(informer: SharedIndexInformer) -> asyncio.Task[None]:
    return asyncio.create_task(informer.run())


async def test_paginated_initial_list_from_rv0_then_watch_in_order(env: Any) -> None:
    api, _, start = env
    for i in range(5):
        api.create(gs(f"gs-{i}"))
    informer = start(run=False)
    rec = Recorder(informer)
    registration = informer.add_event_handler(rec)
    task = launch(informer)
    await asyncio.wait_for(informer.wait_for_sync(), 2)
    await until(registration.has_synced)
    assert [c["resource_version"] for c in api.list_calls] == ["0", None, None]
    assert [c["continue_"] for c in api.list_calls] == [None, "2", "4"]
    assert [e[3] for e in rec.events] == [True] * 5
    assert len(informer.indexer) == 5

    rec.events.clear()
    a = api.create(gs("new"))
    api.update({**a, "status": {"state": "Ready"}})
    api.delete("default/gs-0")
    api.bookmark()
    await until(lambda: len(rec.events) == 3)
    assert rec.kinds() == [
        ("add", "default/new"),
        ("update", "default/new"),
        ("delete", "default/gs-0"),
    ]
    assert rec.events[0][3] is False
    await until(lambda: informer.last_sync_resource_version() == str(api.rv))
    watch = api.watch_calls[0]
    assert watch["allow_watch_bookmarks"] is True
    assert 300 <= watch["timeout_seconds"] < 600
    assert watch["resource_version"] == "105"
    task.cancel()


async def test_watch_410_relists_and_tombstones_objects_deleted_meanwhile(env: Any) -> None:
    api, clock, start = env
    for name in ("a", "b", "c"):
        api.create(gs(name))
    informer = start()
    rec = Recorder(informer)
    informer.add_event_handler(rec)
    await asyncio.wait_for(informer.wait_for_sync(), 2)
    await until(lambda: len(api.watch_calls) == 1)
    rec.events.clear()

    # While we are "not watching", b is deleted and c changes; history is compacted.
    api.drop_watches()
    api.watch_faults.append(ConnectionResetError("dropped"))
    api.objects.pop("default/b")
    api.objects["default/c"] = {**api.objects["default/c"], "status": {"state": "Ready"}}
    api.rv += 5
    api.objects["default/c"]["metadata"] = {
        **api.objects["default/c"]["metadata"],
        "resourceVersion": str(api.rv),
    }
    api.compact()
    # The dropped watch is short (0 events) -> back off, relist from the last RV (too old: 410),
    # then a consistent list from "".
    await clock.wait_for_timers(1)
    await clock.advance(30)
    await until(lambda: len(rec.events) == 2)
    assert rec.events == [
        ("delete", "default/b", True),
        ("update", "default/c", "103", str(api.rv)),
    ]
    rvs = [c["resource_version"] for c in api.list_calls if not c["continue_"]]
    assert rvs[:3] == ["0", "103", ""], (
        "the relist from the last RV got 410, then a consistent read"
    )
    assert sorted(informer.indexer.list_keys()) == ["default/a", "default/c"]


async def test_watch_error_event_410_relists_from_last_rv(env: Any) -> None:
    api, clock, start = env
    api.create(gs("a"))
    informer = start()
    rec = Recorder(informer)
    informer.add_event_handler(rec)
    await asyncio.wait_for(informer.wait_for_sync(), 2)
    await until(lambda: len(api.watch_calls) == 1)
    api.compacted = 0
    api.create(gs("b"))
    await until(lambda: len(rec.events) == 2)
    # Now the server expires our RV: the open watch ends, the next one gets an ERROR 410 event.
    api.compact()
    api.drop_watches()
    # Short watch -> backoff -> relist with last RV (list succeeds: lists are not compacted below)
    api.compacted = api.rv + 1
    await clock.wait_for_timers(1)
    await clock.advance(30)
    await until(lambda: len(api.list_calls) >= 3)
    assert api.list_calls[1]["resource_version"] == str(api.rv)  # too old -> 410
    assert api.list_calls[2]["resource_version"] == ""


async def test_watch_open_410_event_relists_with_last_synced_rv(env: Any) -> None:
    api, clock, start = env
    api.create(gs("a"))
    api.compacted = api.rv + 1  # every watch from the list's RV gets a 410 ERROR event
    informer = start()
    await asyncio.wait_for(informer.wait_for_sync(), 2)
    await until(lambda: len(api.watch_calls) == 1)
    await clock.wait_for_timers(1)
    api.compacted = 0  # history available again
    await clock.advance(30)
    await until(lambda: len(api.list_calls) == 2)
    assert api.list_calls[1]["resource_version"] == "101", (
        "410 on watch relists from last RV, not ''"
    )


async def test_429_on_watch_backs_off_at_least_retry_after_then_rewatches(env: Any) -> None:
    api, clock, start = env
    api.create(gs("a"))
    throttled = error_from_status(429, status(429, "TooManyRequests"), {"Retry-After": "7"})
    api.watch_faults.append(throttled)
    informer = start()
    await asyncio.wait_for(informer.wait_for_sync(), 2)
    await clock.wait_for_timers(1)
    assert clock.next_timer() == pytest.approx(clock.now() + 7)
    await clock.advance(6.9)
    assert len(api.watch_calls) == 1
    await clock.advance(0.1)
    await until(lambda: len(api.watch_calls) == 2)
    assert len(api.list_calls) == 1, "a throttled watch does not relist"


async def test_500_on_watch_relists_after_a_back_off(env: Any) -> None:
    # An informer's reflector has no internal-error retry budget (client-go's
    # MaxInternalErrorRetryDuration is only set for the API server's own cache): it relists.
    api, clock, start = env
    api.create(gs("a"))
    api.watch_faults.append(error_from_status(500, status(500, "InternalError")))
    informer = start()
    await asyncio.wait_for(informer.wait_for_sync(), 2)
    await clock.wait_for_timers(1)
    await clock.advance(30)
    await until(lambda: len(api.list_calls) == 2)
    assert api.list_calls[1]["resource_version"] == "101", "relists from the last synced RV"


async def test_500_on_list_backs_off_and_retries(env: Any) -> None:
    api, clock, start = env
    api.create(gs("a"))
    api.list_faults.append(error_from_status(500, status(500, "InternalError")))
    informer = start()
    await clock.wait_for_timers(1)
    assert not informer.has_synced()
    await clock.advance(1.6)
    await asyncio.wait_for(informer.wait_for_sync(), 2)
    assert len(api.list_calls) == 2


async def test_late_handler_gets_synthetic_adds(env: Any) -> None:
    api, _, start = env
    for name in ("a", "b"):
        api.create(gs(name))
    informer = start()
    await asyncio.wait_for(informer.wait_for_sync(), 2)
    late = Recorder(informer)
    registration = informer.add_event_handler(late)
    assert not registration.has_synced()
    await until(registration.has_synced)
    assert sorted(late.events) == [
        ("add", "default/a", "101", True),
        ("add", "default/b", "102", True),
    ]
    api.create(gs("c"))
    await until(lambda: len(late.events) == 3)
    assert late.events[-1][3] is False


async def test_resync_goes_only_to_handlers_due(env: Any) -> None:
    api, clock, start = env
    api.create(gs("a"))
    informer = start(resync=30, run=False)
    every30 = Recorder(informer)
    never = Recorder(informer)
    informer.add_event_handler(every30)
    informer.add_event_handler(never, resync_period=0)
    launch_task = launch(informer)
    await asyncio.wait_for(informer.wait_for_sync(), 2)
    await until(lambda: len(every30.events) == 1 and len(never.events) == 1)
    await clock.wait_for_timers(1)
    await clock.advance(29)
    assert len(every30.events) == 1
    await clock.advance(1)
    await until(lambda: len(every30.events) == 2)
    assert every30.events[-1] == ("update", "default/a", "101", "101")
    assert len(never.events) == 1
    # A real change goes to everyone.
    api.update(api.objects["default/a"])
    await until(lambda: len(never.events) == 2 and len(every30.events) == 3)
    launch_task.cancel()


async def test_resync_minimum_and_handler_raised_to_check_period(env: Any) -> None:
    _, _, start = env
    informer = start(resync=0.2, run=False)
    assert informer.resync_check_period == 1.0
    informer2 = start(resync=30)
    await asyncio.wait_for(informer2.wait_for_sync(), 2)
    reg = informer2.add_event_handler(Recorder(informer2), resync_period=5)
    assert reg.resync_period == 30


async def test_relist_of_unchanged_objects_is_a_resync_not_an_update(env: Any) -> None:
    api, clock, start = env
    api.create(gs("a"))
    informer = start()
    rec = Recorder(informer)
    informer.add_event_handler(rec)
    await asyncio.wait_for(informer.wait_for_sync(), 2)
    await until(lambda: len(api.watch_calls) == 1)
    api.drop_watches()
    await clock.wait_for_timers(1)
    await clock.advance(2)
    await until(lambda: len(api.list_calls) == 2)
    await until(lambda: len(api.watch_calls) == 2)
    assert rec.kinds() == [("add", "default/a")], "same RV on relist is not delivered as an update"


async def test_watched_update_with_unchanged_rv_is_a_resync_not_an_update(env: Any) -> None:
    # client-go's OnUpdate: any update that keeps the resourceVersion counts as a resync.
    api, _, start = env
    a = api.create(gs("a"))
    informer = start()
    rec = Recorder(informer)
    informer.add_event_handler(rec)
    await asyncio.wait_for(informer.wait_for_sync(), 2)
    api.rv += 1
    api.log.append((api.rv, "MODIFIED", a))
    changed = api.update(a)
    await until(lambda: len(rec.events) == 2)
    await until(lambda: informer.last_sync_resource_version() == get_resource_version(changed))
    assert rec.events == [
        ("add", "default/a", "101", True),
        ("update", "default/a", "101", get_resource_version(changed)),
    ]


async def test_removed_handler_gets_no_more_resyncs(env: Any) -> None:
    api, clock, start = env
    a = api.create(gs("a"))
    informer = start(resync=30)
    rec = Recorder(informer)
    registration = informer.add_event_handler(rec)
    await asyncio.wait_for(informer.wait_for_sync(), 2)
    await clock.wait_for_timers(1)
    await clock.advance(30)
    await until(lambda: len(rec.events) == 2)  # the add, then a resync
    await informer.remove_event_handler(registration)
    api.rv += 1
    api.log.append((api.rv, "MODIFIED", a))  # unchanged RV: a resync for the due handlers
    changed = api.update(a)
    await until(lambda: informer.last_sync_resource_version() == get_resource_version(changed))
    assert registration.pending() == 0 and len(rec.events) == 2


async def test_uid_change_seen_as_update(env: Any) -> None:
    api, _, start = env
    a = api.create(gs("a"))
    informer = start()
    rec = Recorder(informer)
    informer.add_event_handler(rec)
    await asyncio.wait_for(informer.wait_for_sync(), 2)
    recreated = {**a, "metadata": {**a["metadata"], "uid": "new-uid"}}
    api.update(recreated)
    await until(lambda: len(rec.events) == 2)
    assert rec.events[1][0] == "update"


async def test_handler_exception_does_not_stop_delivery(env: Any) -> None:
    api, _, start = env
    informer = start()
    seen: list[str] = []

    class Flaky:
        def on_add(self, obj: Any, initial: bool) -> None:
            seen.append(obj["metadata"]["name"])
            if obj["metadata"]["name"] == "bad":
                raise RuntimeError("handler bug")

        def on_update(self, old: Any, new: Any) -> None: ...

        def on_delete(self, obj: Any) -> None: ...

    informer.add_event_handler(Flaky())
    await asyncio.wait_for(informer.wait_for_sync(), 2)
    api.create(gs("bad"))
    api.create(gs("good"))
    await until(lambda: seen == ["bad", "good"])


async def test_add_indexers_only_before_start(env: Any) -> None:
    api, _, start = env
    api.create(gs("a", role="x"))
    informer = start(run=False)
    informer.add_indexers({"role": lambda o: [o["metadata"]["labels"].get("role", "")]})
    task = launch(informer)
    await asyncio.wait_for(informer.wait_for_sync(), 2)
    assert informer.indexer.index_keys("role", "x") == ["default/a"]
    with pytest.raises(ValueError, match="already started"):
        informer.add_indexers({"other": lambda o: []})
    task.cancel()


async def test_mutation_detector_catches_a_mutated_cache_object(env: Any) -> None:
    from agones.informers.mutation_detector import CacheMutationError

    api, _, _ = env
    api.create(gs("a"))
    informer = SharedIndexInformer(ListWatch(api, RES), detect_mutations=True)
    task = launch(informer)
    await asyncio.wait_for(informer.wait_for_sync(), 2)
    informer.mutation_detector.check()
    informer.indexer.get_by_key("default/a")["status"]["state"] = "Ready"  # the bug it exists for
    with pytest.raises(CacheMutationError, match="default/a"):
        informer.mutation_detector.check()
    task.cancel()
