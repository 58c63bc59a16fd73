"""Schedule windows (between, cron in a zone, the 90 s lead, DST) and Chain fall-through."""

from __future__ import annotations

import datetime as dt

import msgspec
import pytest

from agones.apis.autoscaling.v1 import FleetAutoscalerPolicy, SchedulePolicy
from agones.controllers.fleetautoscalers import (
    ChainPolicyError,
    InactiveScheduleError,
    PolicyError,
    PolicyInputs,
    PolicyRegistry,
    Scale,
    compute_desired_fleet_size,
    schedule,
)
from agones.featuregates import FeatureGates

from .fixtures import fleet

P = pytest.param
BUFFER = {"type": "Buffer", "buffer": {"bufferSize": 5, "maxReplicas": 100}}


def sched(between: dict[str, str] | None = None, **period: str) -> SchedulePolicy:
    return msgspec.convert(
        {"between": between or {}, "activePeriod": period, "policy": BUFFER}, SchedulePolicy
    )


def at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


NY_9AM = {"timezone": "America/New_York", "startCron": "0 9 * * *", "duration": "1h"}


@pytest.mark.parametrize(
    ("policy", "now", "active"),
    [
        P(sched(), "2024-03-11T13:30:00Z", True, id="no-between-no-cron"),
        P(
            sched({"start": "2024-03-11T14:00:00Z"}),
            "2024-03-11T13:59:59Z",
            False,
            id="before-start",
        ),
        P(sched({"start": "2024-03-11T14:00:00Z"}), "2024-03-11T14:00:00Z", True, id="at-start"),
        P(sched({"end": "2024-03-11T14:00:00Z"}), "2024-03-11T14:00:01Z", False, id="after-end"),
        P(sched({"end": "2024-03-11T14:00:00Z"}), "2024-03-11T14:00:00Z", True, id="at-end"),
        P(sched(**NY_9AM), "2024-03-09T14:30:00Z", True, id="9:30-EST-before-dst"),
        P(sched(**NY_9AM), "2024-03-09T13:30:00Z", False, id="8:30-EST-before-dst"),
        P(sched(**NY_9AM), "2024-03-11T13:30:00Z", True, id="9:30-EDT-after-dst"),
        P(sched(**NY_9AM), "2024-03-11T14:30:00Z", False, id="10:30-EDT-after-dst"),
        P(sched(**NY_9AM), "2024-03-11T12:58:31Z", True, id="89s-before-start-counts"),
        P(sched(**NY_9AM), "2024-03-11T12:58:29Z", False, id="91s-before-start-does-not"),
        P(sched(**NY_9AM), "2024-03-11T14:00:00Z", False, id="end-is-exclusive"),
        P(
            sched(timezone="America/New_York", startCron="0 1 * * *", duration="2h"),
            "2024-03-10T07:30:00Z",
            True,
            id="window-across-spring-forward-03:30-EDT",
        ),
        P(
            sched(timezone="America/New_York", startCron="0 1 * * *", duration="2h"),
            "2024-03-10T08:30:00Z",
            False,
            id="window-is-2h-of-real-time",
        ),
        P(
            sched(timezone="America/New_York", startCron="0 1 * * *", duration="2h"),
            "2024-11-03T06:30:00Z",
            True,
            id="window-across-fall-back",
        ),
        P(
            sched(timezone="UTC", startCron="0 9 * * *"),
            "2024-03-11T23:00:00Z",
            True,
            id="no-duration-is-forever",
        ),
        P(
            sched(timezone="", startCron="0 9 * * 1", duration="1h"),
            "2024-03-11T09:10:00Z",
            True,
            id="monday-utc",
        ),
        P(
            sched(timezone="", startCron="0 9 * * 1", duration="1h"),
            "2024-03-12T09:10:00Z",
            False,
            id="not-tuesday",
        ),
    ],
)
def test_is_schedule_active(policy: SchedulePolicy, now: str, active: bool) -> None:
    assert schedule.is_schedule_active(policy, at(now)) is active


def inputs(now: str = "2024-03-11T13:30:00Z", gates: str = "") -> PolicyInputs:
    return PolicyInputs(
        fleet=fleet(10, 4),
        gates=FeatureGates.parse(gates),
        now=at(now),
        registry=PolicyRegistry(group="agones-tests.none"),
    )


def policy(data: dict[str, object]) -> FleetAutoscalerPolicy:
    return msgspec.convert(data, FleetAutoscalerPolicy)


INACTIVE = {
    "id": "weekend",
    "type": "Schedule",
    "schedule": {"between": {"start": "2030-01-01T00:00:00Z"}, "policy": BUFFER},
}
ACTIVE = {
    "id": "office",
    "type": "Schedule",
    "schedule": {
        "activePeriod": NY_9AM,
        "policy": {"type": "Buffer", "buffer": {"bufferSize": 20, "maxReplicas": 100}},
    },
}
BROKEN = {"id": "hook", "type": "Webhook", "webhook": {"url": "python:missing"}}
FALLBACK = {"id": "default", **BUFFER}


@pytest.mark.parametrize(
    ("chain", "now", "replicas", "entry"),
    [
        P([INACTIVE, FALLBACK], "2024-03-11T13:30:00Z", 9, "default", id="inactive-falls-through"),
        P(
            [BROKEN, FALLBACK],
            "2024-03-11T13:30:00Z",
            9,
            "default",
            id="failing-webhook-falls-through",
        ),
        P([ACTIVE, FALLBACK], "2024-03-11T13:30:00Z", 24, "office", id="active-schedule-wins"),
        P([ACTIVE, FALLBACK], "2024-03-11T15:30:00Z", 9, "default", id="outside-office-hours"),
        P([], "2024-03-11T13:30:00Z", 10, None, id="empty-keeps-size"),
    ],
)
async def test_chain(chain: list[object], now: str, replicas: int, entry: str | None) -> None:
    decision = await compute_desired_fleet_size(
        policy({"type": "Chain", "chain": chain}), inputs(now)
    )
    assert decision.scale == Scale(replicas)
    assert (decision.chain_entry.id if decision.chain_entry else None) == entry
    if entry is not None:
        kind = next(e["type"] for e in chain if isinstance(e, dict) and e["id"] == entry)  # type: ignore[index]
        assert decision.applied_policy("Chain") == f"Chain:{entry}:{kind}"


async def test_chain_falling_off_raises_the_last_error() -> None:
    with pytest.raises(ChainPolicyError, match="python policy 'missing' is not registered") as err:
        await compute_desired_fleet_size(
            policy({"type": "Chain", "chain": [INACTIVE, BROKEN]}), inputs()
        )
    assert not isinstance(err.value.cause, InactiveScheduleError)
    with pytest.raises(ChainPolicyError) as err:
        await compute_desired_fleet_size(
            policy({"type": "Chain", "chain": [BROKEN, INACTIVE]}), inputs()
        )
    assert isinstance(err.value.cause, InactiveScheduleError)


async def test_schedule_inactive_and_gates() -> None:
    with pytest.raises(InactiveScheduleError):
        await compute_desired_fleet_size(
            policy({"type": "Schedule", "schedule": INACTIVE["schedule"]}), inputs()
        )
    with pytest.raises(
        PolicyError, match="cannot apply ChainPolicy unless feature flag ScheduledAutoscaler"
    ):
        await compute_desired_fleet_size(
            policy({"type": "Chain", "chain": []}), inputs(gates="ScheduledAutoscaler=false")
        )
    with pytest.raises(PolicyError, match="cannot apply SchedulePolicy unless"):
        await compute_desired_fleet_size(
            policy({"type": "Schedule", "schedule": INACTIVE["schedule"]}),
            inputs(gates="ScheduledAutoscaler=false"),
        )
    with pytest.raises(
        PolicyError, match="cannot apply CounterPolicy unless feature flag CountsAndLists"
    ):
        await compute_desired_fleet_size(
            policy({"type": "Counter", "counter": {"key": "x"}}),
            inputs(gates="CountsAndLists=false"),
        )
    with pytest.raises(
        PolicyError, match="cannot apply WasmPolicy unless feature flag WasmAutoscaler"
    ):
        await compute_desired_fleet_size(policy({"type": "Wasm", "wasm": {}}), inputs())
    with pytest.raises(PolicyError, match="wrong policy type"):
        await compute_desired_fleet_size(
            policy({"type": "Buffer"}).__class__(type="Nope"), inputs()
        )  # type: ignore[arg-type]
