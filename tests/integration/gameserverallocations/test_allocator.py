"""The Allocator against the local API server over HTTP: concurrent allocations never hand a
GameServer out twice and always match their selector; actions, events, metrics; Agones' fixed wait.
"""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agones.apis.allocation.v1 import GameServerAllocation
from agones.client.errors import ApiError
from agones.client.versioned.resources import EVENTS, GAME_SERVERS
from agones.clock import FakeClock
from agones.controllers.gameserverallocations import (
    AllocatorSettings,
    ConflictInGameServerSelection,
    GameServerAllocationInvalid,
)
from tests.integration.gameserverallocations.harness import AllocationHarness, harness


def request(selectors: list[dict[str, Any]] | None = None, **spec: Any) -> GameServerAllocation:
    if selectors is not None:
        spec["selectors"] = selectors
    body = {"metadata": {"namespace": "default"}, "spec": spec}
    return msgspec.convert(body, GameServerAllocation)


async def wait_cached(h: AllocationHarness, allocator: Any, count: int) -> None:
    for _ in range(500):
        if len(allocator.allocation_cache) >= count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"cache has {len(allocator.allocation_cache)}, want {count}")


async def wait_state_cached(allocator: Any, name: str, state: str) -> None:
    for _ in range(500):
        gs = allocator.allocation_cache.cache.get(f"default/{name}")
        if gs is not None and gs.state() == state:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"{name} never {state} in the cache")


servers_st = st.lists(
    st.tuples(
        st.sampled_from(["x", "y"]), st.sampled_from(["Ready", "Allocated"]), st.sampled_from("abc")
    ),
    min_size=1,
    max_size=10,
)
selector_st = st.sampled_from(
    [
        {"matchLabels": {"f": "x"}},
        {"matchLabels": {"f": "y"}},
        {"matchLabels": {"f": "x"}, "gameServerState": "Allocated"},
        {},
    ]
)
requests_st = st.lists(st.lists(selector_st, min_size=1, max_size=2), min_size=1, max_size=14)


def wants_ready(selectors: list[dict[str, Any]]) -> bool:
    return all(s.get("gameServerState", "Ready") == "Ready" for s in selectors)


def label_matches(selector: dict[str, Any], fleet: str) -> bool:
    return selector.get("matchLabels", {}).get("f", fleet) == fleet


async def scenario(
    servers: list[tuple[str, str, str]], requests: list[list[dict[str, Any]]]
) -> None:
    async with harness() as h:
        for i, (fleet, state, node) in enumerate(servers):
            await h.create_ready(f"gs-{i}", labels={"f": fleet}, state=state, node=f"node-{node}")
        allocator = await h.allocator()
        await wait_cached(h, allocator, len(servers))
        initial = {f"gs-{i}": (f, s) for i, (f, s, _) in enumerate(servers)}
        gsas = [request(sels) for sels in requests]
        outs = await asyncio.gather(*(allocator.allocate(g) for g in gsas))
        from_ready: dict[str, int] = {}
        for sels, out in zip(requests, outs, strict=True):
            assert out.status.state in ("Allocated", "UnAllocated")
            if out.status.state != "Allocated":
                continue
            name = out.status.game_server_name
            fleet, state = initial[name]
            assert any(label_matches(s, fleet) for s in sels), f"{name} matches none of {sels}"
            if wants_ready(sels):
                assert state == "Ready", f"{name} was {state}, handed out as Ready"
                from_ready[name] = from_ready.get(name, 0) + 1
        assert all(n == 1 for n in from_ready.values()), f"handed out twice: {from_ready}"
        handed = {o.status.game_server_name for o in outs if o.status.state == "Allocated"}
        for sels, out in zip(requests, outs, strict=True):
            if out.status.state == "UnAllocated" and wants_ready(sels):
                left = [
                    n
                    for n, (f, s) in initial.items()
                    if s == "Ready" and n not in handed and any(label_matches(x, f) for x in sels)
                ]
                assert not left, f"UnAllocated for {sels} while {left} were Ready"
        stored = await h.rest.list(GAME_SERVERS, "default")
        states = {o["metadata"]["name"]: o["status"]["state"] for o in stored["items"]}
        assert all(states[n] == "Allocated" for n in from_ready)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(servers_st, requests_st)
def test_concurrent_allocations_never_double_and_match(
    servers: list[tuple[str, str, str]], requests: list[list[dict[str, Any]]]
) -> None:
    asyncio.run(scenario(servers, requests))


FULL_EXAMPLE = {
    "selectors": [{"matchLabels": {"agones.dev/fleet": "green-fleet"}}],
    "metadata": {"labels": {"mode": "deathmatch"}, "annotations": {"map": "garden22"}},
    "counters": {
        "rooms": {"action": "Increment", "amount": 1, "capacity": 5},
        "ghosts": {"capacity": 3},
    },
    "lists": {
        "players": {"addValues": ["x7un", "8inz"], "capacity": 40, "deleteValues": ["alice", "bob"]}
    },
}


async def events_for(h: AllocationHarness, name: str, count: int) -> list[dict[str, Any]]:
    for _ in range(500):
        items = (await h.rest.list(EVENTS, "default"))["items"]
        found = [e for e in items if e["involvedObject"]["name"] == name]
        if len(found) >= count:
            return found
        await asyncio.sleep(0.01)
    raise AssertionError(f"events of {name}: {found}")


async def test_actions_metadata_events_and_metrics() -> None:
    async with harness() as h:
        await h.create_ready("gs-0")
        allocator = await h.allocator()
        await wait_cached(h, allocator, 1)
        out = await allocator.allocate(request(**FULL_EXAMPLE))
        assert out.status.state == "Allocated"
        assert out.metadata.name == out.status.game_server_name == "gs-0"
        assert out.status.source == "local"
        assert (
            out.status.counters["rooms"].count == 1 and out.status.counters["rooms"].capacity == 5
        )
        assert out.status.lists["players"].values == ["x7un", "8inz"]
        assert out.status.metadata.labels["mode"] == "deathmatch"
        assert "agones.dev/last-allocated" in out.status.metadata.annotations
        stored = await h.rest.get(GAME_SERVERS, "gs-0", "default")
        assert stored["status"]["state"] == "Allocated"
        assert stored["metadata"]["annotations"]["map"] == "garden22"
        assert stored["status"]["lists"]["players"] == {"capacity": 40, "values": ["x7un", "8inz"]}
        events = await events_for(h, "gs-0", 2)
        reasons = {(e["type"], e["reason"]) for e in events}
        assert ("Normal", "Allocated") in reasons
        warning = next(e for e in events if e["reason"] == "CounterActionError")
        assert warning["type"] == "Warning" and "ghosts" in warning["message"]
        labels = {
            "fleet_name": "green-fleet",
            "cluster_name": "none",
            "is_multicluster": "false",
            "status": "Allocated",
            "scheduling_strategy": "Packed",
        }
        assert allocator.latency.labels(**labels)._sum.get() > 0  # type: ignore[attr-defined]
        unallocated = await allocator.allocate(request([{"matchLabels": {"none": "x"}}]))
        assert unallocated.status.state == "UnAllocated"
        assert unallocated.status.game_server_name == "" and unallocated.status.source == ""


async def test_invalid_request_carries_agones_field_errors() -> None:
    async with harness() as h:
        allocator = await h.allocator()
        try:
            await allocator.allocate(request([{"gameServerState": "Shutdown"}]))
        except GameServerAllocationInvalid as err:
            assert [str(e) for e in err.errors] == [
                'spec.selectors[0].gameServerState: Invalid value: "Shutdown": '
                "GameServerState must be either Allocated or Ready"
            ]
        else:
            raise AssertionError("no error")


async def test_write_failures_are_retried_then_raised_with_a_resync() -> None:
    async with harness() as h:
        await h.create_ready("gs-0")
        allocator = await h.allocator()
        await wait_cached(h, allocator, 1)
        h.server.faults.fail_next_writes(2, 500)
        out = await allocator.allocate(request([{}]))
        assert out.status.state == "Allocated"
        await events_for(h, "gs-0", 1)  # written before the next failures are armed
        await h.ready_again("gs-0")
        await wait_state_cached(allocator, "gs-0", "Ready")
        h.server.faults.fail_next_writes(5, 500)
        try:
            await allocator.allocate(request([{}]))
        except ApiError as err:
            assert err.status_code == 500
        else:
            raise AssertionError("no error")


async def test_lost_candidates_answer_contention(monkeypatch: Any) -> None:
    async with harness() as h:
        await h.create_ready("gs-0")
        allocator = await h.allocator()
        await wait_cached(h, allocator, 1)

        def taken(_: Any) -> None:
            raise ConflictInGameServerSelection()

        monkeypatch.setattr(allocator.allocation_cache, "remove_game_server", taken)
        out = await allocator.allocate(request([{}]))
        assert out.status.state == "Contention"


async def test_agones_fixed_wait_holds_a_lone_request_until_the_wait_ends() -> None:
    clock = FakeClock()
    async with harness() as h:
        await h.create_ready("gs-0")
        allocator = await h.allocator(AllocatorSettings(batch_wait_time=0.5), clock=clock)
        await wait_cached(h, allocator, 1)
        await clock.wait_for_timers(1)
        pending = asyncio.ensure_future(allocator.allocate(request([{}])))
        while allocator._pending.empty():
            await asyncio.sleep(0)
        assert not pending.done() and allocator._pending.qsize() == 1
        await clock.advance(0.5)
        out = await asyncio.wait_for(pending, 10)
        assert out.status.state == "Allocated"


async def test_default_mode_serves_a_lone_request_without_the_clock_moving() -> None:
    clock = FakeClock()
    async with harness() as h:
        await h.create_ready("gs-0")
        allocator = await h.allocator(clock=clock)
        await wait_cached(h, allocator, 1)
        out = await asyncio.wait_for(allocator.allocate(request([{}])), 10)
        assert out.status.state == "Allocated"
        assert clock.now() == 1_000_000.0


async def test_a_failing_batch_fails_its_request_and_the_loop_serves_the_next(
    monkeypatch: Any,
) -> None:
    async with harness() as h:
        await h.create_ready("gs-0")
        allocator = await h.allocator()
        await wait_cached(h, allocator, 1)
        cache = allocator.allocation_cache

        def broken(*_: Any) -> Any:
            raise RuntimeError("sort exploded")

        monkeypatch.setattr(cache, "find_game_server", broken)
        try:
            await allocator.allocate(request([{}]))
        except RuntimeError as err:
            assert "sort exploded" in str(err)
        else:
            raise AssertionError("no error")
        monkeypatch.undo()
        out = await asyncio.wait_for(allocator.allocate(request([{}])), 10)
        assert out.status.state == "Allocated"
