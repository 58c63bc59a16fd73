from typing import Any

import msgspec
import pytest

from agones.apis.agones.v1.gameserver import GameServer
from agones.apis.allocation.v1 import GameServerSelector
from agones.featuregates import DEFAULT_GATES, FeatureGates

PLAYERS_ON = DEFAULT_GATES.with_values(PlayerAllocationFilter=True)
NO_COUNTS = DEFAULT_GATES.with_values(CountsAndLists=False)


def game_server(state: str = "Ready", without: str = "") -> GameServer:
    status = {
        "state": state,
        "players": {"count": 8, "capacity": 10},
        "counters": {"rooms": {"count": 3, "capacity": 10}},
        "lists": {"players": {"capacity": 5, "values": ["a", "b"]}},
    }
    status.pop(without, None)
    return msgspec.convert(
        {
            "metadata": {"name": "gs", "labels": {"agones.dev/fleet": "green", "mode": "dm"}},
            "status": status,
        },
        GameServer,
    )


def selector(**fields: Any) -> GameServerSelector:
    return msgspec.convert(fields, GameServerSelector)


@pytest.mark.parametrize(
    ("sel", "gs", "gates", "matches"),
    [
        pytest.param(selector(), game_server(), DEFAULT_GATES, True, id="empty-selector"),
        pytest.param(
            selector(matchLabels={"mode": "dm"}), game_server(), DEFAULT_GATES, True, id="labels"
        ),
        pytest.param(
            selector(matchLabels={"mode": "ctf"}),
            game_server(),
            DEFAULT_GATES,
            False,
            id="labels-miss",
        ),
        pytest.param(
            selector(matchExpressions=[{"key": "mode", "operator": "NotIn", "values": ["ctf"]}]),
            game_server(),
            DEFAULT_GATES,
            True,
            id="expression",
        ),
        pytest.param(
            selector(gameServerState="Ready"), game_server(), DEFAULT_GATES, True, id="state"
        ),
        pytest.param(
            selector(gameServerState="Allocated"),
            game_server(),
            DEFAULT_GATES,
            False,
            id="state-miss",
        ),
        pytest.param(
            selector(gameServerState="Allocated"),
            game_server("Allocated"),
            DEFAULT_GATES,
            True,
            id="allocated",
        ),
        pytest.param(
            selector(players={"minAvailable": 3, "maxAvailable": 5}),
            game_server(),
            PLAYERS_ON,
            False,
            id="players-too-few-free",
        ),
        pytest.param(
            selector(players={"minAvailable": 1, "maxAvailable": 5}),
            game_server(),
            PLAYERS_ON,
            True,
            id="players-in-range",
        ),
        pytest.param(
            selector(players={"minAvailable": 3, "maxAvailable": 5}),
            game_server(),
            DEFAULT_GATES,
            True,
            id="players-gate-off",
        ),
        pytest.param(
            selector(players={"minAvailable": 3, "maxAvailable": 0}),
            game_server(),
            PLAYERS_ON,
            True,
            id="players-max-0-no-filter",
        ),
        pytest.param(
            selector(counters={"rooms": {"minAvailable": 7, "maxCount": 3}}),
            game_server(),
            DEFAULT_GATES,
            True,
            id="counter-ok",
        ),
        pytest.param(
            selector(counters={"rooms": {"minAvailable": 8}}),
            game_server(),
            DEFAULT_GATES,
            False,
            id="counter-available",
        ),
        pytest.param(
            selector(counters={"rooms": {"minCount": 4}}),
            game_server(),
            DEFAULT_GATES,
            False,
            id="counter-count",
        ),
        pytest.param(
            selector(counters={"rooms": {"maxAvailable": 6}}),
            game_server(),
            DEFAULT_GATES,
            False,
            id="counter-max-available",
        ),
        pytest.param(
            selector(counters={"sessions": {}}),
            game_server(),
            DEFAULT_GATES,
            False,
            id="counter-key-missing",
        ),
        pytest.param(
            selector(counters={"sessions": {}}),
            game_server(),
            NO_COUNTS,
            True,
            id="counters-gate-off",
        ),
        pytest.param(
            selector(lists={"players": {"containsValue": "b", "minAvailable": 3}}),
            game_server(),
            DEFAULT_GATES,
            True,
            id="list-ok",
        ),
        pytest.param(
            selector(lists={"players": {"containsValue": "z"}}),
            game_server(),
            DEFAULT_GATES,
            False,
            id="list-contains-miss",
        ),
        pytest.param(
            selector(lists={"players": {"maxAvailable": 2}}),
            game_server(),
            DEFAULT_GATES,
            False,
            id="list-max-available",
        ),
        pytest.param(
            selector(lists={"players": {}}),
            game_server(without="lists"),
            DEFAULT_GATES,
            False,
            id="list-gs-without-lists",
        ),
    ],
)
def test_matches(
    sel: GameServerSelector, gs: GameServer, gates: FeatureGates, matches: bool
) -> None:
    assert sel.matches(gs, gates) is matches
