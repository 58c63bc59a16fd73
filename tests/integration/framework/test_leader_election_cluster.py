"""Two electors on one Lease: one leader at a time, takeover bounds after a crash and a release."""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid

import pytest

from agones.client.errors import NotFoundError
from agones.client.rest import RESTClient
from agones.client.versioned.resources import LEASES
from agones.leaderelection import (
    LeaderCallbacks,
    LeaderElectionConfig,
    LeaseLock,
    new_leader_elector,
)
from agones.leaderelection.leaderelection import JITTER_FACTOR
from tests.waiting import wait_for_async

pytestmark = pytest.mark.cluster

LEASE, RENEW, RETRY = 3.0, 2.0, 1.0


class Elector:
    def __init__(
        self,
        client: RESTClient,
        lease: str,
        who: str,
        timeline: list[tuple[float, str, str]],
        release: bool,
    ) -> None:
        async def lead() -> None:
            timeline.append((time.monotonic(), who, "start"))
            try:
                await asyncio.Event().wait()
            finally:
                timeline.append((time.monotonic(), who, "stop"))

        self.elector = new_leader_elector(
            LeaderElectionConfig(
                lock=LeaseLock(client, "default", lease, who),
                callbacks=LeaderCallbacks(lead, lambda: None),
                lease_duration=LEASE,
                renew_deadline=RENEW,
                retry_period=RETRY,
                release_on_cancel=release,
            )
        )
        self.task = asyncio.create_task(self.elector.run())

    async def stop(self) -> None:
        self.task.cancel()
        await asyncio.gather(self.task, return_exceptions=True)


def leaders_at_once(timeline: list[tuple[float, str, str]]) -> int:
    current, most = 0, 0
    for _, _, what in sorted(timeline):
        current += 1 if what == "start" else -1
        most = max(most, current)
    return most


async def wait_for_start(timeline: list[tuple[float, str, str]], who: str, timeout: float) -> float:
    def started() -> float | None:
        return next((t for t, w, what in timeline if w == who and what == "start"), None)

    started_at: float = await wait_for_async(started, timeout, 0.02, f"{who} to lead")
    return started_at


async def follows_for_a_lease(follower: Elector, leader: str) -> None:
    """Until `follower` has seen `leader` renew over a whole lease duration (and so had every
    chance to take a lease it wrongly thought expired)."""
    renewals: set[float] = set()

    def followed() -> bool:
        record = follower.elector.observed_record
        if record.holder_identity == leader and record.renew_time is not None:
            renewals.add(record.renew_time)
        return len(renewals) > 1 and max(renewals) - min(renewals) >= LEASE

    await wait_for_async(followed, 4 * LEASE, 0.02, f"a follower seeing {leader} renew")


@pytest.mark.parametrize(
    "release", [pytest.param(False, id="leader-killed"), pytest.param(True, id="clean-release")]
)
async def test_two_electors_one_lease(client: RESTClient, release: bool) -> None:
    lease = f"agones-py-test-{uuid.uuid4().hex[:8]}"
    timeline: list[tuple[float, str, str]] = []
    a = Elector(client, lease, "a", timeline, release)
    await wait_for_start(timeline, "a", 5)
    b = Elector(client, lease, "b", timeline, release)
    await follows_for_a_lease(b, "a")
    assert [w for _, w, what in timeline if what == "start"] == ["a"]
    stopped = time.monotonic()
    await a.stop()
    # Released: the follower's next jittered poll. Killed: it first observes the last renewal
    # (one jittered poll), waits out the lease, then takes it on its next poll.
    poll = RETRY * (1 + JITTER_FACTOR)
    bound = poll if release else LEASE + 2 * poll
    started = await wait_for_start(timeline, "b", bound + 3)
    assert started - stopped <= bound + 0.5, (started - stopped, bound)
    await b.stop()
    assert leaders_at_once(timeline) == 1
    with contextlib.suppress(NotFoundError):
        await client.delete(LEASES, lease, "default")
