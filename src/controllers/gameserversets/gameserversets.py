"""Pure helpers of the GameServerSet controllers (Agones `pkg/gameserversets/gameserversets.go`).

`sort_game_servers_by_strategy` orders a set's GameServers for scale-down (the first ones go first):
* Packed — GameServers on a node the per-node counter does not know (not scheduled yet, node
  gone) first; on one node, those before Ready ahead of Ready ones; then the node with the fewest
  Ready + Allocated GameServers first; equal totals go on to the Counter/List priorities, then to
  the name (same node) or the node name (so one node is emptied before the next).
* Distributed — the priorities, then the oldest first (`creationTimestamp` ascending: Agones' comment
  says "newest first" but its comparison yields the oldest).
Priorities compare capacity, then count (the length of a List), not what is left available; a
priority with an order other than Ascending or Descending decides nothing, as in Go. Callers pass
the priorities only when the CountsAndLists gate is on. Sorting returns a new list; inputs are the
informer's shared objects and are never mutated.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from msgspec import UNSET

from ...apis.agones.v1.common import Priority, PriorityOrder, PriorityType
from ...apis.agones.v1.gameserver import GameServer, GameServerState
from ...apis.agones.v1.gameserverset import GAME_SERVER_SET_GAME_SERVER_LABEL, GameServerSet
from ...apis.meta.objectmeta import controller_of, parse_time
from ...apis.scheduling import SchedulingStrategy
from ...client.informers.externalversions import SharedInformerFactory as TypedInformerFactory
from ...client.informers.externalversions.agones.v1.gameserverset import GameServerSetInformer
from ...featuregates import Feature, FeatureGates
from ...informers import SharedIndexInformer, SharedInformerFactory
from ...informers.mutation_cache import MutationCache
from ...informers.shared_informer import ensure_transform
from ...informers.transform import transform_strip_managed_fields
from ..gameservers import NodeCount


def sort_game_servers_by_strategy(
    strategy: SchedulingStrategy | object,
    game_servers: Sequence[GameServer],
    counts: Mapping[str, NodeCount],
    priorities: Sequence[Priority],
) -> list[GameServer]:
    """Scale-down order: Packed by least full nodes, anything else as Distributed."""
    if strategy == SchedulingStrategy.PACKED:
        return sort_game_servers_by_packed_strategy(game_servers, counts, priorities)
    return sort_game_servers_by_distributed_strategy(game_servers, priorities)


def _priorities_less(priorities: Sequence[Priority], a: GameServer, b: GameServer) -> bool | None:
    """True/False when a priority orders a before/after b; None when none tells them apart."""
    for priority in priorities:
        res = compare_game_server_capacity(priority, a, b)
        if res == 0:
            continue
        if priority.order == PriorityOrder.ASCENDING:
            return res < 0
        if priority.order == PriorityOrder.DESCENDING:
            return res > 0
    return None


def _packed_less(
    counts: Mapping[str, NodeCount], priorities: Sequence[Priority], a: GameServer, b: GameServer
) -> bool:
    a_count, b_count = counts.get(a.node_name()), counts.get(b.node_name())
    if a_count is None:
        return b_count is not None
    if b_count is None:
        return False
    same_node = a.node_name() == b.node_name()
    if same_node:
        if a.is_before_ready() and b.state() == GameServerState.READY:
            return True
        if b.is_before_ready() and a.state() == GameServerState.READY:
            return False
    a_total, b_total = a_count.allocated + a_count.ready, b_count.allocated + b_count.ready
    if a_total != b_total:
        return a_total < b_total
    by_priority = _priorities_less(priorities, a, b)
    if by_priority is not None:
        return by_priority
    if same_node:
        return a.meta.get_name() < b.meta.get_name()
    return a.node_name() < b.node_name()


Less = Callable[[GameServer, GameServer], bool]


def _sorted(game_servers: Sequence[GameServer], less: Less) -> list[GameServer]:
    """Go's `sort.Slice` with a less function, made stable."""

    def compare(a: GameServer, b: GameServer) -> int:
        if less(a, b):
            return -1
        if less(b, a):
            return 1
        return 0

    return sorted(game_servers, key=functools.cmp_to_key(compare))


def sort_game_servers_by_packed_strategy(
    game_servers: Sequence[GameServer],
    counts: Mapping[str, NodeCount],
    priorities: Sequence[Priority],
) -> list[GameServer]:
    """Least full nodes first (see the module docstring). Two GameServers both on unknown nodes
    keep their relative order (Go's comparison is not antisymmetric there; ours is stable)."""
    return _sorted(game_servers, functools.partial(_packed_less, counts, priorities))


def _created(gs: GameServer) -> float:
    stamp = gs.meta.creation_timestamp
    if not isinstance(stamp, str):
        return 0.0
    try:
        return parse_time(stamp).timestamp()
    except ValueError:
        return 0.0


def _distributed_less(priorities: Sequence[Priority], a: GameServer, b: GameServer) -> bool:
    by_priority = _priorities_less(priorities, a, b)
    if by_priority is not None:
        return by_priority
    return _created(a) < _created(b)


def sort_game_servers_by_distributed_strategy(
    game_servers: Sequence[GameServer], priorities: Sequence[Priority]
) -> list[GameServer]:
    """Priorities first, then the oldest first."""
    return _sorted(game_servers, functools.partial(_distributed_less, priorities))


def _counter(gs: GameServer, key: str) -> tuple[int, int] | None:
    counters = gs.status.counters if gs.status is not UNSET else UNSET
    if counters is UNSET or key not in counters:
        return None
    c = counters[key]
    return (
        c.capacity if isinstance(c.capacity, int) else 0,
        c.count if isinstance(c.count, int) else 0,
    )


def _list(gs: GameServer, key: str) -> tuple[int, int] | None:
    lists = gs.status.lists if gs.status is not UNSET else UNSET
    if lists is UNSET or key not in lists:
        return None
    lst = lists[key]
    values = lst.values if isinstance(lst.values, list) else []
    return (lst.capacity if isinstance(lst.capacity, int) else 0, len(values))


def compare_game_server_capacity(p: Priority, gs1: GameServer, gs2: GameServer) -> int:
    """-1, 0 or 1 as gs1's (capacity, count) for the priority's Counter or List is below, equal
    to or above gs2's. When only one has it, the result makes that one sort first in either order
    (Ascending 0, 1, 2, nil; Descending 2, 1, 0, nil)."""
    key = p.key if isinstance(p.key, str) else ""
    if p.type == PriorityType.COUNTER:
        v1, v2 = _counter(gs1, key), _counter(gs2, key)
    elif p.type == PriorityType.LIST:
        v1, v2 = _list(gs1, key), _list(gs2, key)
    else:
        return 0
    if v1 is not None and v2 is not None:
        return (v1 > v2) - (v1 < v2)
    ok1, ok2 = v1 is not None, v2 is not None
    ascending, descending = p.order == PriorityOrder.ASCENDING, p.order == PriorityOrder.DESCENDING
    if (ok1 and descending) or (ok2 and ascending):
        return 1
    if (ok1 and ascending) or (ok2 and descending):
        return -1
    return 0


def priorities_for(gss: GameServerSet, gates: FeatureGates) -> list[Priority]:
    """The set's Counter/List priorities, or none while the CountsAndLists gate is off."""
    priorities = gss.spec.priorities if gss.spec is not UNSET else UNSET
    if not isinstance(priorities, list) or not gates.enabled(Feature.COUNTS_AND_LISTS):
        return []
    return list(priorities)


def scheduling_of(gss: GameServerSet) -> SchedulingStrategy | object:
    return gss.spec.scheduling if gss.spec is not UNSET else UNSET


def is_controlled_by(gs: GameServer, gss: GameServerSet) -> bool:
    """`metav1.IsControlledBy`: the GameServer's controller reference carries the set's uid."""
    ref = controller_of(gs.meta)
    owner_uid = gss.metadata.uid if gss.metadata is not UNSET else UNSET
    return ref is not None and ref.uid is not UNSET and ref.uid == owner_uid


def game_server_sets_informer(factory: SharedInformerFactory) -> GameServerSetInformer:
    """The shared GameServerSet informer, its cache without `managedFields`."""
    informer = TypedInformerFactory.from_generic(factory).agones().v1().game_server_sets()
    ensure_transform(informer.informer(), transform_strip_managed_fields)
    return informer


GAME_SERVER_SET_INDEX = "agones.dev/gameserverset"
"""Index of GameServers by `<namespace>/<label agones.dev/gameserverset>`."""


def game_server_set_index_func(obj: Any) -> list[str]:
    if not isinstance(obj, GameServer) or obj.metadata is UNSET:
        return []
    name = obj.metadata.get_labels().get(GAME_SERVER_SET_GAME_SERVER_LABEL)
    return [] if name is None else [f"{obj.metadata.get_namespace()}/{name}"]


def ensure_game_server_set_index(informer: SharedIndexInformer) -> None:
    """Index the GameServer informer by set (once, whichever controller asks first)."""
    if GAME_SERVER_SET_INDEX not in informer.indexer.get_indexers():
        informer.add_indexers({GAME_SERVER_SET_INDEX: game_server_set_index_func})


def list_game_servers_by_game_server_set_owner(
    cache: MutationCache, gss: GameServerSet
) -> list[GameServer]:
    """The GameServers labelled with the set's name and controlled by it (by uid), each the newer
    of the cached one and this process's last write of it."""
    meta = gss.metadata
    name = meta.get_name() if meta is not UNSET else ""
    namespace = meta.get_namespace() if meta is not UNSET else ""
    listed = cache.by_index(GAME_SERVER_SET_INDEX, f"{namespace}/{name}")
    return [
        gs
        for gs in listed
        if gs.meta.get_labels().get(GAME_SERVER_SET_GAME_SERVER_LABEL) == name
        and is_controlled_by(gs, gss)
    ]
