"""Choosing a GameServer for an allocation (Agones `find.go` and the sorts of `allocation_cache.go`).

Pure functions over values:

* `sort_packed(list, gsa, counts, gates)` is Agones' Packed order: Allocated before Ready; then
  the node with more Allocated, then more Ready GameServers (a node the per-node counter does not
  know sorts after the nodes it knows); then (PlayerAllocationFilter) fewer free player slots;
  then the Counter/List priorities (available capacity, ascending or descending, a GameServer
  lacking the key last); then the name. Keys, not a comparator, so 1,000 GameServers sort in about
  a millisecond; the order is total (Go's comparator leaves ties between unknown nodes, and
  between a GameServer with players and one without, to `sort.Slice`; here unknown nodes fall
  through to the next criterion and a GameServer without player status sorts after those with).
* `sort_distributed(list, gsa, gates)` is Agones' order for Distributed with CountsAndLists:
  priorities, then name.
* `find_game_server_for_allocation(gsa, list, gates, owned)` walks the sorted list (Distributed
  without CountsAndLists: in a random order) and returns the first GameServer of the first
  selector, in selector order, that matches one, only in the GSA's namespace, with its index;
  `None` when nothing matches. `owned(gs)` (None: every one) says whether this replica owns a
  candidate (see `partition.py`): within the winning selector an owned match is preferred to an
  earlier one owned by another replica, so replicas that see the same cache do not all reach for
  the same server;
  with no owned match the LAST match is taken (the one its owner, walking the same order, comes to
  last), so a replica whose share ran out does not collide with the owner's next pick.
  With the default (everything owned) this is exactly Agones' choice. `find_in_order` is the same
  walk over any ordered iterable (the allocation cache's `candidates.CandidateIndex`);
  `first_match` the short cut over a replica's owned candidates alone (the first selector's
  first owned match is the answer whenever there is one); `selector_states(gsa)` says which
  GameServer states the selectors can match at all.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar

from ...apis.agones.v1.gameserver import (
    GameServer,
    GameServerState,
    GameServerStatus,
    PlayerStatus,
)
from ...apis.allocation.v1.gameserverallocation import (
    PRIORITY_COUNTER,
    PRIORITY_DESCENDING,
    PRIORITY_LIST,
    SCHEDULING_DISTRIBUTED,
    SCHEDULING_PACKED,
    GameServerAllocation,
    GameServerAllocationSpec,
    Priority,
)
from ...apis.meta.objectmeta import ObjectMeta
from ...featuregates import Feature, FeatureGates
from ..gameservers.pernodecounter import NodeCount

Owned = Callable[[GameServer], bool]
T = TypeVar("T")


def _everything(_: GameServer) -> bool:
    return True


def _spec(gsa: GameServerAllocation) -> GameServerAllocationSpec:
    return (
        gsa.spec if isinstance(gsa.spec, GameServerAllocationSpec) else GameServerAllocationSpec()
    )


def _priorities(gsa: GameServerAllocation | None, gates: FeatureGates) -> list[Priority]:
    if gsa is None or not gates.enabled(Feature.COUNTS_AND_LISTS):
        return []
    return list(_spec(gsa).priorities or [])


def _available(gs: GameServer, priority: Priority) -> int | None:
    key = priority.key if isinstance(priority.key, str) else ""
    status = gs.status
    if not isinstance(status, GameServerStatus):
        return None
    if priority.type == PRIORITY_COUNTER:
        counters = status.counters if isinstance(status.counters, dict) else {}
        counter = counters.get(key)
        if counter is None:
            return None
        count = counter.count if isinstance(counter.count, int) else 0
        capacity = counter.capacity if isinstance(counter.capacity, int) else 0
        return capacity - count
    if priority.type == PRIORITY_LIST:
        lists = status.lists if isinstance(status.lists, dict) else {}
        found = lists.get(key)
        if found is None:
            return None
        values = found.values if isinstance(found.values, list) else []
        capacity = found.capacity if isinstance(found.capacity, int) else 0
        return capacity - len(values)
    return None


def priority_key(gs: GameServer, priorities: Sequence[Priority]) -> tuple[int, ...]:
    """Sort key of the Counter/List priorities: per priority (has-it flag, signed available)."""
    key: list[int] = []
    for priority in priorities:
        available = _available(gs, priority)
        if available is None:
            key += [1, 0]
        else:
            key += [0, -available if priority.order == PRIORITY_DESCENDING else available]
    return tuple(key)


def _players_key(gs: GameServer, gates: FeatureGates) -> tuple[int, int]:
    """Fewer free player slots first; a GameServer without player status after those with."""
    if not gates.enabled(Feature.PLAYER_ALLOCATION_FILTER):
        return (0, 0)
    players = gs.status.players if isinstance(gs.status, GameServerStatus) else None
    if not isinstance(players, PlayerStatus):
        return (1, 0)
    capacity = players.capacity if isinstance(players.capacity, int) else 0
    count = players.count if isinstance(players.count, int) else 0
    return (0, capacity - count)


def packed_key(
    gs: GameServer,
    priorities: Sequence[Priority],
    counts: dict[str, NodeCount],
    gates: FeatureGates,
) -> tuple[Any, ...]:
    """The Packed sort key of one GameServer (smaller sorts first)."""
    return _packed_keys(priorities, counts, gates)(gs)


UNKNOWN_NODE = (1, 0, 0)
"""The node part of the Packed key for a node the per-node counter does not know (last)."""


def node_keys(counts: dict[str, NodeCount]) -> dict[str, tuple[int, int, int]]:
    """The node part of the Packed key: more Allocated, then more Ready, first."""
    return {name: (0, -c.allocated, -c.ready) for name, c in counts.items()}


def packed_within_key(
    priorities: Sequence[Priority], gates: FeatureGates
) -> Callable[[GameServer], tuple[Any, ...]]:
    """The Packed key after (state, node): players, priorities, name. It depends on the
    GameServer alone, so `candidates.CandidateIndex` can keep groups sorted by it."""
    players = gates.enabled(Feature.PLAYER_ALLOCATION_FILTER)
    with_priorities = bool(priorities)

    def key(gs: GameServer) -> tuple[Any, ...]:
        return (
            _players_key(gs, gates) if players else (0, 0),
            priority_key(gs, priorities) if with_priorities else (),
            gs.meta.get_name(),
        )

    return key


def distributed_key(priorities: Sequence[Priority]) -> Callable[[GameServer], tuple[Any, ...]]:
    """The Distributed (CountsAndLists) key: priorities, then name."""

    def key(gs: GameServer) -> tuple[Any, ...]:
        return (priority_key(gs, priorities), gs.meta.get_name())

    return key


def _packed_keys(
    priorities: Sequence[Priority], counts: dict[str, NodeCount], gates: FeatureGates
) -> Callable[[GameServer], tuple[Any, ...]]:
    """The key function, with the feature checks and node keys worked out once per sort."""
    nodes = node_keys(counts)
    within = packed_within_key(priorities, gates)

    def key(gs: GameServer) -> tuple[Any, ...]:
        status = gs.status
        state = status.state if isinstance(status, GameServerStatus) else None
        node = status.node_name if isinstance(status, GameServerStatus) else ""
        return (
            0 if state == GameServerState.ALLOCATED else 1,
            nodes.get(node if isinstance(node, str) else "", UNKNOWN_NODE),
            *within(gs),
        )

    return key


def sort_packed(
    game_servers: Sequence[GameServer],
    gsa: GameServerAllocation | None,
    counts: dict[str, NodeCount],
    gates: FeatureGates,
) -> list[GameServer]:
    """Agones' `ListSortedGameServers`."""
    return sorted(game_servers, key=_packed_keys(_priorities(gsa, gates), counts, gates))


def sort_distributed(
    game_servers: Sequence[GameServer], gsa: GameServerAllocation | None, gates: FeatureGates
) -> list[GameServer]:
    """Agones' `ListSortedGameServersPriorities`."""
    return sorted(game_servers, key=distributed_key(_priorities(gsa, gates)))


def _order(gsa: GameServerAllocation, size: int, gates: FeatureGates) -> Sequence[int]:
    scheduling = _spec(gsa).scheduling
    if scheduling == SCHEDULING_PACKED:
        return range(size)
    if scheduling == SCHEDULING_DISTRIBUTED:
        if gates.enabled(Feature.COUNTS_AND_LISTS):
            return range(size)
        indices = list(range(size))
        random.shuffle(indices)
        return indices
    raise ValueError(f"scheduling strategy of '{scheduling}' is not supported")


def selector_states(gsa: GameServerAllocation) -> frozenset[str] | None:
    """The GameServer states the GSA's selectors can match; None when one matches any state."""
    states: set[str] = set()
    for selector in _spec(gsa).selectors or []:
        state = selector.game_server_state
        if not isinstance(state, str):
            return None
        states.add(state)
    return frozenset(states)


def find_game_server_for_allocation(
    gsa: GameServerAllocation,
    game_servers: Sequence[GameServer | None],
    gates: FeatureGates,
    owned: Owned | None = None,
) -> tuple[GameServer, int] | None:
    """The GameServer to allocate and its index in `game_servers`; `None` if none matches.

    `game_servers` must be sorted (`sort_packed` / `sort_distributed`); `None` entries (taken
    earlier in a batch) are skipped. The GSA must have passed validation and `converter`.
    """
    order = _order(gsa, len(game_servers), gates)
    return find_in_order(
        gsa, ((gs, i) for i in order if (gs := game_servers[i]) is not None), gates, owned
    )


def first_match(
    gsa: GameServerAllocation, candidates: Iterable[GameServer], gates: FeatureGates
) -> GameServer | None:
    """The first of `candidates`, walked in the order given, in the GSA's namespace, that the
    GSA's first selector matches. Walking a replica's owned candidates only, this is
    `find_in_order`'s answer over all of them whenever it is not None: an owned match of the
    first selector wins, and the first owned one is the one taken."""
    selectors = _spec(gsa).selectors or []
    if not selectors:
        return None
    match = selectors[0].matcher(gates)
    namespace = gsa.metadata.get_namespace() if isinstance(gsa.metadata, ObjectMeta) else ""
    for gs in candidates:
        if gs.meta.get_namespace() == namespace and match(gs):
            return gs
    return None


def find_in_order(
    gsa: GameServerAllocation,
    candidates: Iterable[tuple[GameServer, T]],
    gates: FeatureGates,
    owned: Owned | None = None,
) -> tuple[GameServer, T] | None:
    """The first `(GameServer, tag)` of `candidates`, walked in the order given, that the first
    selector with a match matches (an owned one preferred within it, else its last match), in the
    GSA's namespace."""
    owns = owned or _everything
    selectors = [s.matcher(gates) for s in _spec(gsa).selectors or []]
    namespace = gsa.metadata.get_namespace() if isinstance(gsa.metadata, ObjectMeta) else ""
    last: list[tuple[GameServer, T] | None] = [None] * len(selectors)
    mine: list[tuple[GameServer, T] | None] = [None] * len(selectors)
    pending = len(selectors)
    for gs, tag in candidates:
        if gs.meta.get_namespace() != namespace:
            continue
        is_mine: bool | None = None
        for j, selector in enumerate(selectors):
            if mine[j] is not None or not selector(gs):
                continue
            if is_mine is None:
                is_mine = owns(gs)
            if is_mine:
                mine[j] = (gs, tag)
                pending -= 1
            else:
                last[j] = (gs, tag)
        if pending == 0 or (mine and mine[0] is not None):
            break
    for j in range(len(selectors)):
        if mine[j] is not None:
            return mine[j]
        if last[j] is not None:
            return last[j]
    return None
