"""The allocation cache's candidates kept in sort order as they change, so that choosing one costs
O(groups · log groups + the candidates walked), not a sort of the whole cache per batch.

Agones sorts every cached GameServer (`ListSortedGameServers`) at the start of each batch. Its
Packed order is `(state, node counts, players, priorities, name)`; of these only the node counts
change without the GameServer changing (every allocation moves one node's Allocated count). So a
`CandidateIndex` groups the candidates by `(namespace, state, node)` and keeps each group sorted
by the rest of the key (`find.packed_within_key`), updated on each add and removal (bisect: O(log
g) to find, a memmove to insert). `ordered(namespace, counts, states)` sorts the few groups by
`(state, node counts)` and walks them; groups whose keys tie (two nodes with equal counts, or two
nodes the counter does not know) are merged by the within-group key, so the walk is exactly the
order of `find.sort_packed` over the same GameServers and counts (a property test holds it to
that). A `CandidateIndex(within, grouped=False)` keeps one group per namespace: the Distributed
order with CountsAndLists (`find.distributed_key`). With `admit` it keeps only the GameServers
`admit` accepts, in the same order: the allocation cache keeps one of a replica's own share
(`partition.py`) beside the whole set, so a replica finds its next candidate without walking
past the ones other replicas have taken and it has not yet heard of.

Pure data structure: no I/O, no clock; GameServers are the informer's shared objects and are never
mutated.
"""

from __future__ import annotations

import heapq
import itertools
from bisect import bisect_left
from collections.abc import Callable, Collection, Iterator
from typing import Any

from ...apis.agones.v1.gameserver import GameServer, GameServerState, GameServerStatus
from ..gameservers.pernodecounter import NodeCount
from .find import UNKNOWN_NODE, node_keys

WithinKey = Callable[[GameServer], tuple[Any, ...]]
GroupId = tuple[str, str, str]
"""(namespace, state, node) of a Packed group; ("namespace", "", "") when not grouped."""


class _Group:
    """One group's GameServers, sorted by their within-group key (parallel lists)."""

    __slots__ = ("items", "keys", "node", "state")

    def __init__(self, state: str, node: str) -> None:
        self.state = state
        self.node = node
        self.keys: list[tuple[Any, ...]] = []
        self.items: list[GameServer] = []

    def insert(self, key: tuple[Any, ...], gs: GameServer) -> None:
        i = bisect_left(self.keys, key)
        self.keys.insert(i, key)
        self.items.insert(i, gs)

    def remove(self, key: tuple[Any, ...]) -> None:
        i = bisect_left(self.keys, key)
        if i < len(self.keys) and self.keys[i] == key:
            del self.keys[i]
            del self.items[i]


def _state_and_node(gs: GameServer) -> tuple[str, str]:
    status = gs.status
    if not isinstance(status, GameServerStatus):
        return "", ""
    state = status.state if isinstance(status.state, str) else ""
    node = status.node_name if isinstance(status.node_name, str) else ""
    return state, node


class CandidateIndex:
    """Candidates by `namespace/name` key, kept in order (see the module docstring)."""

    def __init__(
        self,
        within: WithinKey,
        grouped: bool = True,
        admit: Callable[[GameServer], bool] | None = None,
    ) -> None:
        self.within = within
        self.grouped = grouped
        self.admit = admit
        """When set, only the GameServers it admits are kept (a replica's own share, say)."""
        self._where: dict[str, tuple[GroupId, tuple[Any, ...]]] = {}
        self._groups: dict[str, dict[GroupId, _Group]] = {}

    def __len__(self) -> int:
        return len(self._where)

    def put(self, key: str, gs: GameServer) -> None:
        """Add `gs` under `key`, replacing what was there (only removing it when `admit` says no)."""
        self.discard(key)
        if self.admit is not None and not self.admit(gs):
            return
        namespace = gs.meta.get_namespace()
        state, node = _state_and_node(gs) if self.grouped else ("", "")
        group_id = (namespace, state, node)
        groups = self._groups.setdefault(namespace, {})
        group = groups.get(group_id)
        if group is None:
            group = groups[group_id] = _Group(state, node)
        within = self.within(gs)
        group.insert(within, gs)
        self._where[key] = (group_id, within)

    def discard(self, key: str) -> None:
        where = self._where.pop(key, None)
        if where is None:
            return
        group_id, within = where
        groups = self._groups[group_id[0]]
        group = groups[group_id]
        group.remove(within)
        if not group.items:
            del groups[group_id]
            if not groups:
                del self._groups[group_id[0]]

    def ordered(
        self,
        namespace: str,
        counts: dict[str, NodeCount],
        states: Collection[str] | None = None,
    ) -> Iterator[GameServer]:
        """The namespace's candidates in order; only those whose state is in `states` (None: all).

        Do not change the index while walking it."""
        groups = self._groups.get(namespace, {})
        if not self.grouped:
            for group in groups.values():
                yield from (gs for gs in group.items if states is None or _in(gs, states))
            return
        nodes = node_keys(counts)
        ranked = sorted(
            (
                (
                    (0 if g.state == GameServerState.ALLOCATED else 1),
                    nodes.get(g.node, UNKNOWN_NODE),
                ),
                i,
                g,
            )
            for i, g in enumerate(groups.values())
            if states is None or g.state in states
        )
        for _, tied_iter in itertools.groupby(ranked, key=lambda r: r[0]):
            tied = [g for _, _, g in tied_iter]
            if len(tied) == 1:
                yield from tied[0].items
            else:
                merged = heapq.merge(*(zip(g.keys, g.items, strict=True) for g in tied))
                yield from (gs for _, gs in merged)


def _in(gs: GameServer, states: Collection[str]) -> bool:
    return _state_and_node(gs)[0] in states
