"""The order a scale-down removes a Fleet's GameServers in (Go `getSortedGameServers`).

The Counter and List policies walk this order to see how much capacity a smaller Fleet keeps. It is
the GameServerSet controller's order for the Fleet's scheduling strategy, with the Fleet's
priorities when the CountsAndLists gate is on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ...apis.agones.v1.common import Priority
from ...apis.agones.v1.fleet import Fleet, FleetSpec
from ...apis.agones.v1.gameserver import GameServer
from ...apis.scheduling import SchedulingStrategy
from ...featuregates import Feature, FeatureGates
from ..gameservers import NodeCount
from ..gameserversets.gameserversets import sort_game_servers_by_strategy


def game_servers_in_deletion_order(
    fleet: Fleet,
    game_servers: Sequence[GameServer],
    counts: Mapping[str, NodeCount],
    gates: FeatureGates,
) -> list[GameServer]:
    spec = fleet.spec if isinstance(fleet.spec, FleetSpec) else FleetSpec()
    strategy = spec.scheduling if isinstance(spec.scheduling, str) else SchedulingStrategy.PACKED
    priorities: list[Priority] = (
        list(spec.priorities)
        if gates.enabled(Feature.COUNTS_AND_LISTS) and isinstance(spec.priorities, list)
        else []
    )
    return sort_game_servers_by_strategy(strategy, game_servers, counts, priorities)
