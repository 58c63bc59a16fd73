"""Scale-down order (Agones `SortGameServersByStrategy`): Packed, Distributed, Counter/List
priorities and node ties; and which priorities apply under the CountsAndLists gate."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from agones.apis.agones.v1.common import Priority
from agones.apis.agones.v1.gameserver import GameServer
from agones.apis.scheduling import SchedulingStrategy
from agones.controllers.gameservers import NodeCount
from agones.controllers.gameserversets.gameserversets import (
    compare_game_server_capacity,
    priorities_for,
    sort_game_servers_by_strategy,
)
from agones.featuregates import Feature, FeatureGates

from .fixtures import gs, gss, names


def priority(type_: str, key: str, order: str = "Ascending") -> Priority:
    return msgspec.convert({"type": type_, "key": key, "order": order}, Priority)


def counter(capacity: int, count: int = 0) -> dict[str, dict[str, int]]:
    return {"rooms": {"capacity": capacity, "count": count}}


def lst(capacity: int, values: int) -> dict[str, dict[str, Any]]:
    return {"players": {"capacity": capacity, "values": [f"p{i}" for i in range(values)]}}


COUNTS = {
    "busy": NodeCount(ready=3, allocated=2),
    "quiet": NodeCount(ready=1, allocated=0),
    "a-node": NodeCount(ready=1, allocated=1),
    "b-node": NodeCount(ready=2, allocated=0),
}

PACKED = [
    pytest.param(
        [gs("on-busy", node="busy"), gs("nowhere", "Creating"), gs("on-gone", node="gone")],
        [],
        ["nowhere", "on-gone", "on-busy"],
        id="unknown-nodes-first-in-input-order",
    ),
    pytest.param(
        [gs("r", "Ready", node="busy"), gs("s", "Scheduled", node="busy")],
        [],
        ["s", "r"],
        id="same-node-before-ready-first",
    ),
    pytest.param(
        [gs("a-ready", "Ready", node="busy"), gs("z-creating", "Creating", node="busy")],
        [],
        ["z-creating", "a-ready"],
        id="same-node-before-ready-beats-name",
    ),
    pytest.param(
        [gs("on-busy", node="busy"), gs("on-quiet", node="quiet")],
        [],
        ["on-quiet", "on-busy"],
        id="least-full-node-first",
    ),
    pytest.param(
        [gs("z", node="b-node"), gs("a", node="a-node")],
        [],
        ["a", "z"],
        id="equal-totals-by-node-name",
    ),
    pytest.param(
        [gs("b", node="busy"), gs("a", node="busy")],
        [],
        ["a", "b"],
        id="same-node-by-name",
    ),
    pytest.param(
        [
            gs("big", node="b-node", counters=counter(10)),
            gs("small", node="a-node", counters=counter(5)),
        ],
        [priority("Counter", "rooms")],
        ["small", "big"],
        id="equal-totals-counter-ascending-beats-node-name",
    ),
    pytest.param(
        [
            gs("small", node="a-node", counters=counter(5)),
            gs("big", node="b-node", counters=counter(10)),
        ],
        [priority("Counter", "rooms", "Descending")],
        ["big", "small"],
        id="equal-totals-counter-descending",
    ),
    pytest.param(
        [
            gs("big", node="quiet", counters=counter(10)),
            gs("small", node="busy", counters=counter(1)),
        ],
        [priority("Counter", "rooms")],
        ["big", "small"],
        id="node-totals-beat-priorities",
    ),
    pytest.param(
        [gs("b", node="busy", lists=lst(10, 3)), gs("a", node="busy", lists=lst(10, 5))],
        [priority("List", "players", "Descending")],
        ["a", "b"],
        id="same-node-list-count-descending-beats-name",
    ),
]


@pytest.mark.parametrize(("servers", "priorities", "want"), PACKED)
def test_packed_order(
    servers: list[GameServer], priorities: list[Priority], want: list[str]
) -> None:
    ordered = sort_game_servers_by_strategy(SchedulingStrategy.PACKED, servers, COUNTS, priorities)
    assert names(ordered) == want


DISTRIBUTED = [
    pytest.param(
        [gs("new", age=1), gs("old", age=100), gs("mid", age=50)],
        [],
        ["old", "mid", "new"],
        id="oldest-first-as-the-go-code-does",
    ),
    pytest.param(
        [gs("old", age=100, counters=counter(10)), gs("new", age=1, counters=counter(5))],
        [priority("Counter", "rooms")],
        ["new", "old"],
        id="priorities-before-age",
    ),
    pytest.param(
        [gs("old", age=100, counters=counter(10, 2)), gs("new", age=1, counters=counter(10, 1))],
        [priority("Counter", "rooms")],
        ["new", "old"],
        id="equal-capacity-then-count",
    ),
    pytest.param(
        [gs("old", age=100, counters=counter(10)), gs("new", age=1, counters=counter(10))],
        [priority("Counter", "rooms")],
        ["old", "new"],
        id="priority-tie-falls-back-to-age",
    ),
    pytest.param(
        [gs("without", age=100), gs("with", age=1, counters=counter(10))],
        [priority("Counter", "rooms")],
        ["with", "without"],
        id="only-one-has-it-ascending-prefers-it",
    ),
    pytest.param(
        [gs("with", age=100, counters=counter(10)), gs("without", age=1)],
        [priority("Counter", "rooms", "Descending")],
        ["with", "without"],
        id="only-one-has-it-descending-prefers-it-too",
    ),
    pytest.param(
        [gs("old", age=100, lists=lst(5, 0)), gs("new", age=1, lists=lst(5, 0))],
        [priority("List", "missing"), priority("List", "players")],
        ["old", "new"],
        id="second-priority-consulted-when-first-ties",
    ),
    pytest.param(
        [gs("old", age=100, lists=lst(9, 0)), gs("new", age=1, lists=lst(5, 4))],
        [priority("List", "players")],
        ["new", "old"],
        id="list-capacity-not-available-room",
    ),
]


@pytest.mark.parametrize(("servers", "priorities", "want"), DISTRIBUTED)
def test_distributed_order(
    servers: list[GameServer], priorities: list[Priority], want: list[str]
) -> None:
    ordered = sort_game_servers_by_strategy(
        SchedulingStrategy.DISTRIBUTED, servers, COUNTS, priorities
    )
    assert names(ordered) == want


def test_sorting_does_not_mutate_its_input() -> None:
    servers = [gs("new", age=1), gs("old", age=100)]
    sort_game_servers_by_strategy(SchedulingStrategy.DISTRIBUTED, servers, {}, [])
    assert names(servers) == ["new", "old"]


@pytest.mark.parametrize(
    ("p", "a", "b", "want"),
    [
        pytest.param(priority("Counter", "rooms"), counter(1), counter(2), -1, id="lower-capacity"),
        pytest.param(
            priority("Counter", "rooms"), counter(2, 1), counter(2, 0), 1, id="higher-count"
        ),
        pytest.param(priority("Counter", "rooms"), counter(2, 1), counter(2, 1), 0, id="equal"),
        pytest.param(priority("Counter", "rooms"), counter(2), None, -1, id="only-first-asc"),
        pytest.param(
            priority("Counter", "rooms", "Descending"), counter(2), None, 1, id="only-first-desc"
        ),
        pytest.param(priority("Counter", "rooms"), None, counter(2), 1, id="only-second-asc"),
        pytest.param(
            priority("Counter", "rooms", "Descending"), None, counter(2), -1, id="only-second-desc"
        ),
        pytest.param(priority("Counter", "rooms"), None, None, 0, id="neither"),
        pytest.param(priority("Counter", "other"), counter(1), counter(2), 0, id="other-key"),
    ],
)
def test_compare_game_server_capacity(
    p: Priority, a: dict[str, Any] | None, b: dict[str, Any] | None, want: int
) -> None:
    assert compare_game_server_capacity(p, gs("a", counters=a), gs("b", counters=b)) == want


def test_list_priority_compares_capacity_then_values() -> None:
    p = priority("List", "players")
    assert compare_game_server_capacity(p, gs("a", lists=lst(5, 3)), gs("b", lists=lst(5, 1))) == 1
    assert compare_game_server_capacity(p, gs("a", lists=lst(4, 3)), gs("b", lists=lst(5, 1))) == -1


@pytest.mark.parametrize(
    ("gate", "want"),
    [pytest.param(True, 1, id="counts-and-lists-on"), pytest.param(False, 0, id="gate-off")],
)
def test_priorities_only_with_counts_and_lists(gate: bool, want: int) -> None:
    gates = FeatureGates({Feature.COUNTS_AND_LISTS: gate})
    s = gss(priorities=[{"type": "Counter", "key": "rooms", "order": "Ascending"}])
    assert len(priorities_for(s, gates)) == want
