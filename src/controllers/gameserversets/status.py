"""A GameServerSet's status from its GameServers (Agones `computeStatus`, `aggregateCounters`,
`aggregateLists` in `pkg/gameserversets/controller.go`).

GameServers being deleted (deletion timestamp or Shutdown) count only as `shutdownReplicas`; every
other one counts in `replicas`, and in `readyReplicas` / `allocatedReplicas` / `reservedReplicas` by
state. With CountsAndLists, Counters and Lists are summed over those GameServers (the `allocated*`
fields over Allocated ones only; a List's count is its number of values, duplicates included);
Counter sums saturate at the int64 maximum (`safe_add`), List sums do not, as in Go. With
PlayerTracking, `players` sums count and capacity over Ready, Reserved and Allocated GameServers
not being deleted. Pure: nothing here reads or writes anything else.
"""

from __future__ import annotations

from collections.abc import Sequence

from msgspec import UNSET

from ...apis.agones.v1.common import (
    AggregatedCounterStatus,
    AggregatedListStatus,
    AggregatedPlayerStatus,
    safe_add,
)
from ...apis.agones.v1.gameserver import CounterStatus, GameServer, GameServerState, ListStatus
from ...apis.agones.v1.gameserverset import GameServerSetStatus
from ...featuregates import Feature, FeatureGates

_PLAYER_STATES = frozenset(
    {GameServerState.READY, GameServerState.RESERVED, GameServerState.ALLOCATED}
)


def _int(value: object) -> int:
    return value if isinstance(value, int) else 0


def aggregate_counters(
    aggregated: dict[str, AggregatedCounterStatus],
    counters: dict[str, CounterStatus],
    state: GameServerState | None,
) -> None:
    """Add one GameServer's Counters into `aggregated` (in place)."""
    allocated = state == GameServerState.ALLOCATED
    for key, counter in counters.items():
        count, capacity = _int(counter.count), _int(counter.capacity)
        agg = aggregated.get(key)
        if agg is None:
            agg = aggregated[key] = AggregatedCounterStatus(
                allocated_count=0, allocated_capacity=0, count=0, capacity=0
            )
        agg.count = safe_add(_int(agg.count), count)
        agg.capacity = safe_add(_int(agg.capacity), capacity)
        if allocated:
            agg.allocated_count = safe_add(_int(agg.allocated_count), count)
            agg.allocated_capacity = safe_add(_int(agg.allocated_capacity), capacity)


def aggregate_lists(
    aggregated: dict[str, AggregatedListStatus],
    lists: dict[str, ListStatus],
    state: GameServerState | None,
) -> None:
    """Add one GameServer's Lists into `aggregated` (in place)."""
    allocated = state == GameServerState.ALLOCATED
    for key, lst in lists.items():
        count = len(lst.values) if isinstance(lst.values, list) else 0
        capacity = _int(lst.capacity)
        agg = aggregated.get(key)
        if agg is None:
            agg = aggregated[key] = AggregatedListStatus(
                allocated_count=0, allocated_capacity=0, count=0, capacity=0
            )
        agg.count = _int(agg.count) + count
        agg.capacity = _int(agg.capacity) + capacity
        if allocated:
            agg.allocated_count = _int(agg.allocated_count) + count
            agg.allocated_capacity = _int(agg.allocated_capacity) + capacity


def _players(game_servers: Sequence[GameServer]) -> AggregatedPlayerStatus:
    players = AggregatedPlayerStatus(count=0, capacity=0)
    for gs in game_servers:
        if gs.metadata is not UNSET and gs.meta.is_being_deleted():
            continue
        if gs.state() not in _PLAYER_STATES or gs.status is UNSET:
            continue
        status = gs.status.players
        if status is UNSET or status is None:
            continue
        players.count = _int(players.count) + _int(status.count)
        players.capacity = _int(players.capacity) + _int(status.capacity)
    return players


def compute_status(game_servers: Sequence[GameServer], gates: FeatureGates) -> GameServerSetStatus:
    status = GameServerSetStatus(
        replicas=0, ready_replicas=0, reserved_replicas=0, allocated_replicas=0, shutdown_replicas=0
    )
    counters: dict[str, AggregatedCounterStatus] = {}
    lists: dict[str, AggregatedListStatus] = {}
    counts_and_lists = gates.enabled(Feature.COUNTS_AND_LISTS)
    tally = {
        GameServerState.READY: "ready_replicas",
        GameServerState.ALLOCATED: "allocated_replicas",
        GameServerState.RESERVED: "reserved_replicas",
    }
    for gs in game_servers:
        if gs.is_being_deleted():
            status.shutdown_replicas = _int(status.shutdown_replicas) + 1
            continue
        status.replicas = _int(status.replicas) + 1
        state = gs.state()
        field = tally.get(state) if state is not None else None
        if field is not None:
            setattr(status, field, _int(getattr(status, field)) + 1)
        if counts_and_lists and gs.status is not UNSET:
            if gs.status.counters is not UNSET:
                aggregate_counters(counters, gs.status.counters, state)
            if gs.status.lists is not UNSET:
                aggregate_lists(lists, gs.status.lists, state)
    if counters:
        status.counters = counters
    if lists:
        status.lists = lists
    if gates.enabled(Feature.PLAYER_TRACKING):
        status.players = _players(game_servers)
    return status
