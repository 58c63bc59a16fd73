"""Counter and List policy tables: buffer, min/max capacity limits, scale-down order, floor of 1."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from agones.apis.agones.v1.gameserver import GameServer
from agones.apis.autoscaling.v1 import CounterPolicy, ListPolicy
from agones.controllers.fleetautoscalers import PolicyError, Scale, counterlist

from .fixtures import fleet, game_server

P = pytest.param


def rooms(replicas: int, count: int, capacity: int, allocated: int = 0, tcap: int = 10) -> object:
    return fleet(
        replicas,
        template_counters={"rooms": {"count": 0, "capacity": tcap}},
        counters={"rooms": {"count": count, "capacity": capacity, "allocatedCount": allocated}},
    )


def servers(*held: tuple[int, int]) -> list[GameServer]:
    return [game_server(f"gs-{i}", counter=("rooms", c, cap)) for i, (c, cap) in enumerate(held)]


def never() -> Sequence[GameServer]:
    raise AssertionError("the scale-down order was not needed here")


SIX_EMPTY = servers(*[(0, 10)] * 6)
SIX_FULLISH = servers((0, 10), (0, 10), (0, 10), (5, 10), (5, 10), (0, 10))


@pytest.mark.parametrize(
    ("policy", "f", "order", "want"),
    [
        P(
            CounterPolicy(key="rooms", buffer_size=10, max_capacity=100),
            rooms(3, 25, 30),
            never,
            Scale(4),
            id="scale-up",
        ),
        P(
            CounterPolicy(key="rooms", buffer_size=10, max_capacity=35),
            rooms(3, 25, 30),
            never,
            Scale(3, True),
            id="scale-up-cut-by-max",
        ),
        P(
            CounterPolicy(key="rooms", buffer_size=5, min_capacity=55, max_capacity=100),
            rooms(3, 25, 30),
            never,
            Scale(6, True),
            id="below-min-adds-one-at-a-time",
        ),
        P(
            CounterPolicy(key="rooms", buffer_size=5, max_capacity=100),
            rooms(3, 25, 30),
            never,
            Scale(3),
            id="at-buffer",
        ),
        P(
            CounterPolicy(key="rooms", buffer_size=5, max_capacity=40),
            rooms(6, 58, 60),
            lambda: SIX_EMPTY,
            Scale(4, True),
            id="above-max-removes-in-order",
        ),
        P(
            CounterPolicy(key="rooms", buffer_size=5, max_capacity=5),
            rooms(6, 58, 60),
            lambda: SIX_EMPTY,
            Scale(1, True),
            id="above-max-floor-one",
        ),
        P(
            CounterPolicy(key="rooms", buffer_size=5, max_capacity=40),
            rooms(6, 0, 60),
            lambda: SIX_EMPTY,
            Scale(1),
            id="scale-down-floor-one",
        ),
        P(
            CounterPolicy(key="rooms", buffer_size=20, max_capacity=100),
            rooms(6, 10, 60),
            lambda: SIX_FULLISH,
            Scale(3),
            id="scale-down-to-buffer",
        ),
        P(
            CounterPolicy(key="rooms", buffer_size=20, min_capacity=40, max_capacity=100),
            rooms(6, 10, 60),
            lambda: SIX_FULLISH,
            Scale(4, True),
            id="scale-down-stops-at-min",
        ),
        P(
            CounterPolicy(key="rooms", buffer_size=5, min_capacity=60, max_capacity=100),
            rooms(6, 0, 60),
            never,
            Scale(6, True),
            id="at-min-no-scale-down",
        ),
        P(
            CounterPolicy(key="rooms", buffer_size="50%", max_capacity=100),
            rooms(3, 0, 30),
            never,
            Scale(1, True),
            id="percent-nothing-allocated",
        ),
        P(
            CounterPolicy(key="rooms", buffer_size="50%", max_capacity=100),
            rooms(3, 20, 30, allocated=20),
            never,
            Scale(4),
            id="percent-scale-up",
        ),
        P(
            CounterPolicy(key="rooms", buffer_size="30%", max_capacity=100),
            rooms(3, 20, 30, allocated=20),
            lambda: servers((0, 10), (10, 10), (10, 10)),
            Scale(3),
            id="percent-ceil-29-keeps-size",
        ),
    ],
)
def test_counter_policy(policy: CounterPolicy, f: object, order: object, want: Scale) -> None:
    assert counterlist.compute_desired_fleet_size(policy, f, order) == want  # type: ignore[arg-type]


def players(replicas: int, count: int, capacity: int) -> object:
    return fleet(
        replicas,
        template_lists={"players": {"capacity": 5, "values": []}},
        lists={"players": {"count": count, "capacity": capacity}},
    )


@pytest.mark.parametrize(
    ("policy", "f", "order", "want"),
    [
        P(
            ListPolicy(key="players", buffer_size=5, max_capacity=100),
            players(2, 8, 10),
            never,
            Scale(3),
            id="scale-up",
        ),
        P(
            ListPolicy(key="players", buffer_size=5, max_capacity=100),
            players(2, 3, 10),
            lambda: [
                game_server("a", lst=("players", 0, 5)),
                game_server("b", lst=("players", 3, 5)),
            ],
            Scale(2),
            id="scale-down-would-overshoot",
        ),
        P(
            ListPolicy(key="players", buffer_size=1, min_capacity=12, max_capacity=100),
            players(2, 3, 10),
            never,
            Scale(3, True),
            id="below-min",
        ),
    ],
)
def test_list_policy(policy: ListPolicy, f: object, order: object, want: Scale) -> None:
    assert counterlist.compute_desired_fleet_size(policy, f, order) == want  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("policy", "f", "message"),
    [
        P(
            CounterPolicy(key="nope", buffer_size=1, max_capacity=10),
            rooms(1, 0, 10),
            "Counter key nope does not exist in the Fleet Spec",
            id="no-template-counter",
        ),
        P(
            CounterPolicy(key="rooms", buffer_size=1, max_capacity=10),
            fleet(1, template_counters={"rooms": {"count": 0, "capacity": 1}}),
            "does not exist in the Fleet Status",
            id="no-status-counter",
        ),
        P(
            ListPolicy(key="nope", buffer_size=1, max_capacity=10),
            players(1, 0, 5),
            "List key nope does not exist in the Fleet Spec",
            id="no-template-list",
        ),
        P(
            CounterPolicy(key="rooms", buffer_size=50, max_capacity=100),
            rooms(1, 0, 10, tcap=0),
            "does not increase available Capacity",
            id="no-capacity-gained",
        ),
        P(
            CounterPolicy(key="rooms", buffer_size=0, min_capacity=50, max_capacity=100),
            rooms(1, 0, 0, tcap=0),
            "Capacity is equal to 0",
            id="below-min-zero-capacity",
        ),
    ],
)
def test_capacity_policy_errors(
    policy: CounterPolicy | ListPolicy, f: object, message: str
) -> None:
    with pytest.raises(PolicyError, match=message):
        counterlist.compute_desired_fleet_size(policy, f, never)  # type: ignore[arg-type]
