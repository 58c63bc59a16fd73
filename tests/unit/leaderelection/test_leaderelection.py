"""Leader election timing and safety on fake time, two electors sharing one in-memory Lease."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable
from typing import Any

import pytest

from agones.apis.meta.objectmeta import format_micro_time, parse_micro_time
from agones.client.errors import error_from_status
from agones.client.rest import Resource
from agones.clock import FakeClock
from agones.leaderelection import (
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaseLock,
    new_leader_elector,
)
from agones.leaderelection.resourcelock import LeaderElectionRecord


def status(code: int, reason: str) -> dict[str, Any]:
    return {"kind": "Status", "code": code, "reason": reason, "message": reason}


class LeaseStore:
    """One Lease object with resourceVersion checks, like the API server."""

    def __init__(self) -> None:
        self.lease: dict[str, Any] | None = None
        self.rv = 0
        self.calls: list[str] = []


class LeaseAPI:
    """A client view of the store; `down` makes every call fail (network partition)."""

    def __init__(self, store: LeaseStore, who: str) -> None:
        self.store = store
        self.who = who
        self.down = False
        # Fails only the calls it matches: (verb, body or None) -> bool.
        self.reject: Callable[[str, Any], bool] = lambda verb, body: False

    def _check(self, verb: str, body: Any = None) -> None:
        self.store.calls.append(f"{self.who}:{verb}")
        if self.down or self.reject(verb, body):
            raise ConnectionError("api unreachable")

    async def get(
        self, res: Resource, name: str, namespace: str | None = None, subresource: str | None = None
    ) -> dict[str, Any]:
        self._check("get")
        if self.store.lease is None:
            raise error_from_status(404, status(404, "NotFound"))
        return copy.deepcopy(self.store.lease)

    async def create(
        self, res: Resource, body: Any, namespace: str | None = None
    ) -> dict[str, Any]:
        self._check("create", body)
        if self.store.lease is not None:
            raise error_from_status(409, status(409, "AlreadyExists"))
        self.store.rv += 1
        self.store.lease = copy.deepcopy(body)
        self.store.lease["metadata"]["resourceVersion"] = str(self.store.rv)
        return copy.deepcopy(self.store.lease)

    async def update(
        self, res: Resource, body: Any, namespace: str | None = None, subresource: str | None = None
    ) -> dict[str, Any]:
        self._check("update", body)
        assert self.store.lease is not None
        if body["metadata"]["resourceVersion"] != self.store.lease["metadata"]["resourceVersion"]:
            raise error_from_status(409, status(409, "Conflict"))
        self.store.rv += 1
        self.store.lease = copy.deepcopy(body)
        self.store.lease["metadata"]["resourceVersion"] = str(self.store.rv)
        return copy.deepcopy(self.store.lease)


class Candidate:
    def __init__(
        self,
        name: str,
        store: LeaseStore,
        clock: FakeClock,
        timeline: list[tuple[float, str, str]],
        release: bool = True,
    ) -> None:
        self.name = name
        self.api = LeaseAPI(store, name)
        self.clock = clock
        self.timeline = timeline
        self.leaders: list[str] = []
        self.stopped = asyncio.Event()

        async def lead() -> None:
            self.timeline.append((clock.now(), name, "start"))
            try:
                await asyncio.Event().wait()
            finally:
                self.timeline.append((clock.now(), name, "stop"))

        self.elector = new_leader_elector(
            LeaderElectionConfig(
                lock=LeaseLock(self.api, "agones-system", "agones-controller-lock", name),
                callbacks=LeaderCallbacks(lead, self.stopped.set, self.leaders.append),
                release_on_cancel=release,
                clock=clock,
                rand=lambda: 0.0,
            )
        )
        self.task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self.task = asyncio.create_task(self.elector.run())

    async def kill(self) -> None:
        assert self.task is not None
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


def lock(identity: str = "me") -> LeaseLock:
    return LeaseLock(LeaseAPI(LeaseStore(), identity), "ns", "l", identity)


@pytest.mark.parametrize(
    ("lease", "renew", "retry", "message"),
    [
        pytest.param(10, 10, 2, "leaseDuration must be greater", id="lease<=renew"),
        pytest.param(15, 2.4, 2, "renewDeadline must be greater", id="renew<=1.2retry"),
        pytest.param(15, 10, 0.5, "at least 1 second", id="retry<1"),
    ],
)
def test_config_validation(lease: float, renew: float, retry: float, message: str) -> None:
    async def noop() -> None: ...

    config = LeaderElectionConfig(lock(), LeaderCallbacks(noop, lambda: None), lease, renew, retry)
    with pytest.raises(ValueError, match=message):
        new_leader_elector(config)


def test_defaults_are_client_go_core() -> None:
    async def noop() -> None: ...

    config = LeaderElectionConfig(lock(), LeaderCallbacks(noop, lambda: None))
    assert (config.lease_duration, config.renew_deadline, config.retry_period) == (15, 10, 2)
    assert config.release_on_cancel
    new_leader_elector(config)


def test_micro_time_round_trip() -> None:
    assert format_micro_time(0.5) == "1970-01-01T00:00:00.500000Z"
    assert parse_micro_time("1970-01-01T00:00:00.500000Z") == 0.5


async def test_acquire_then_optimistic_renewals() -> None:
    clock, store, timeline = FakeClock(), LeaseStore(), []
    a = Candidate("a", store, clock, timeline)
    a.start()
    await clock.advance(0)
    assert timeline == [(clock.now(), "a", "start")]
    assert a.leaders == ["a"]
    assert store.lease is not None and store.lease["spec"]["holderIdentity"] == "a"
    assert store.lease["spec"]["leaseDurationSeconds"] == 15
    store.calls.clear()
    for _ in range(5):
        await clock.advance(2)
    assert store.calls == ["a:update"] * 5, "renewals take the optimistic path: no GETs"
    await a.kill()
    assert store.lease["spec"]["holderIdentity"] == "", "released on cancel"
    assert store.lease["spec"]["leaseDurationSeconds"] == 1
    assert a.stopped.is_set()


async def test_exactly_one_leader_and_takeover_after_crash_within_lease_plus_retry() -> None:
    clock, store, timeline = FakeClock(), LeaseStore(), []
    a = Candidate("a", store, clock, timeline, release=False)
    b = Candidate("b", store, clock, timeline, release=False)
    a.start()
    await clock.advance(0)
    b.start()
    for _ in range(10):
        await clock.advance(1)
    assert [e[1:] for e in timeline] == [("a", "start")]
    assert b.leaders == ["a"]
    crashed_at = clock.now()
    await a.kill()  # no release: b must wait out the lease
    for _ in range(30):
        await clock.advance(1)
    started = [t for t, who, what in timeline if who == "b" and what == "start"]
    assert len(started) == 1
    takeover = started[0] - crashed_at
    assert 15 - 2 <= takeover <= 15 + 2, takeover
    assert b.leaders == ["a", "b"]
    assert store.lease is not None and store.lease["spec"]["leaseTransitions"] == 1
    await b.kill()


async def test_takeover_within_retry_period_after_clean_release() -> None:
    clock, store, timeline = FakeClock(), LeaseStore(), []
    a = Candidate("a", store, clock, timeline)
    b = Candidate("b", store, clock, timeline)
    a.start()
    await clock.advance(0)
    b.start()
    await clock.advance(5)
    released_at = clock.now()
    await a.kill()
    for _ in range(8):
        await clock.advance(0.25)
    started = [t for t, who, what in timeline if who == "b" and what == "start"]
    assert started and started[0] - released_at <= 2.0
    await b.kill()


async def test_partitioned_leader_stops_before_anyone_else_can_lead() -> None:
    clock, store, timeline = FakeClock(), LeaseStore(), []
    a = Candidate("a", store, clock, timeline, release=False)
    b = Candidate("b", store, clock, timeline, release=False)
    a.start()
    await clock.advance(0)
    b.start()
    await clock.advance(4)
    a.api.down = True
    partitioned_at = clock.now()
    for _ in range(40):
        await clock.advance(0.5)
    assert a.task is not None and a.task.done(), "run() returns after the renew deadline"
    assert a.stopped.is_set()
    events = [(who, what) for _, who, what in timeline]
    assert events == [("a", "start"), ("a", "stop"), ("b", "start")]
    a_stop = timeline[1][0]
    b_start = timeline[2][0]
    # The last renewal was at most one retry period before the partition; the renew round that
    # follows gives up after the renew deadline: well inside the 15 s others must wait.
    assert a_stop - partitioned_at <= 2 + 10
    assert b_start - partitioned_at >= 15 - 2
    assert a_stop < b_start, "never two leaders at once"
    await b.kill()


async def test_on_stopped_leading_called_even_if_never_leading() -> None:
    clock, store, timeline = FakeClock(), LeaseStore(), []
    a = Candidate("a", store, clock, timeline)
    store.lease = {
        "metadata": {"name": "x", "resourceVersion": "1"},
        "spec": {"holderIdentity": "other", "leaseDurationSeconds": 15},
    }
    a.start()
    await clock.advance(1)
    assert a.leaders == ["other"]
    await a.kill()
    assert a.stopped.is_set() and timeline == []
    assert store.lease["spec"]["holderIdentity"] == "other", "a non-leader releases nothing"


def test_record_raw_is_canonical() -> None:
    assert LeaderElectionRecord("a", 15).raw() == LeaderElectionRecord("a", 15).raw()
    assert LeaderElectionRecord("a", 15).raw() != LeaderElectionRecord("b", 15).raw()


async def test_release_retries_after_a_renewal_landed_in_flight() -> None:
    clock, store, timeline = FakeClock(), LeaseStore(), []
    a = Candidate("a", store, clock, timeline)
    a.start()
    await clock.advance(0)
    assert store.lease is not None
    # Someone (a renewal whose response we never saw) bumped the lease's resourceVersion.
    store.rv += 1
    store.lease["metadata"]["resourceVersion"] = str(store.rv)
    await a.kill()
    assert store.lease["spec"]["holderIdentity"] == ""


async def test_lost_leadership_stops_work_then_releases_the_lease() -> None:
    # client-go's renew() releases on its way out whether cancelled or out of renewals.
    clock, store, timeline = FakeClock(), LeaseStore(), []
    a = Candidate("a", store, clock, timeline)
    b = Candidate("b", store, clock, timeline)
    a.start()
    await clock.advance(0)
    b.start()
    await clock.advance(4)
    # a's renewals fail (GETs and updates naming a as holder); its release would get through.
    a.api.reject = lambda verb, body: (
        verb == "get" or (body is not None and body["spec"].get("holderIdentity") == "a")
    )
    for _ in range(30):
        await clock.advance(0.5)
    assert a.task is not None and a.task.done()
    assert a.stopped.is_set()
    events = [(who, what) for _, who, what in timeline]
    assert events[:3] == [("a", "start"), ("a", "stop"), ("b", "start")]
    a_stop, b_start = timeline[1][0], timeline[2][0]
    assert b_start - a_stop <= 2 * 1.2 + 1, "released: b need not wait out the 15 s lease"
    assert store.lease is not None and store.lease["spec"]["holderIdentity"] == "b"
    await b.kill()


class SteppedWallClock(FakeClock):
    """A FakeClock whose wall time can be stepped (as NTP does) without moving monotonic time."""

    def __init__(self) -> None:
        super().__init__()
        self.wall_offset = 0.0

    def now(self) -> float:
        return super().now() + self.wall_offset


async def test_a_wall_clock_step_does_not_expire_a_live_lease() -> None:
    clock, store, timeline = SteppedWallClock(), LeaseStore(), []
    a = Candidate("a", store, clock, timeline, release=False)
    b = Candidate("b", store, clock, timeline, release=False)
    a.start()
    await clock.advance(0)
    b.start()
    await clock.advance(3)
    a.api.down = True  # a stops renewing: b must still wait out the lease from its last change
    await clock.advance(2)  # b has seen a's last renewal
    clock.wall_offset = 60.0  # far past the 15 s lease, on the wall clock only
    for _ in range(30):
        await clock.advance(1)
    events = [(who, what) for _, who, what in timeline]
    assert events == [("a", "start"), ("a", "stop"), ("b", "start")], "never two leaders at once"
    await a.kill()
    await b.kill()
