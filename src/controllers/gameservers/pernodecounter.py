"""Ready and Allocated GameServers per node (Agones `pkg/gameservers/pernodecounter.go`).

Maintained from GameServer informer events (adds, state transitions, deletes — tombstones included)
and node deletions; `counts()` returns a copy. Allocation sorting, GameServerSet scale-down and the
Counter/List autoscalers read it. Counts never go below zero.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...apis.agones.v1.gameserver import GameServer, GameServerState
from ...apis.core.v1 import Node
from ...informers import SharedInformerFactory
from ...informers.shared_informer import ResourceEventHandlerFuncs
from ...informers.store import DeletedFinalStateUnknown
from . import informers


@dataclass
class NodeCount:
    ready: int = 0
    allocated: int = 0


def _deltas(old: GameServerState | None, new: GameServerState | None) -> tuple[int, int]:
    """(ready, allocated) change for a state transition."""

    def delta(state: GameServerState) -> int:
        if old == state and new != state:
            return -1
        if new == state and old != state:
            return 1
        return 0

    return delta(GameServerState.READY), delta(GameServerState.ALLOCATED)


class PerNodeCounter:
    def __init__(self, factory: SharedInformerFactory) -> None:
        self._counts: dict[str, NodeCount] = {}
        informers.game_servers(factory).informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=lambda gs: self._inc(gs, *_deltas(None, gs.state())),
                update_func=lambda old, new: self._inc(new, *_deltas(old.state(), new.state())),
                delete_func=self._on_delete,
            )
        )
        informers.nodes(factory).informer().add_event_handler(
            ResourceEventHandlerFuncs(delete_func=self._on_node_delete)
        )

    def _on_delete(self, obj: Any) -> None:
        gs = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if isinstance(gs, GameServer):
            self._inc(gs, *_deltas(gs.state(), None))

    def _on_node_delete(self, obj: Any) -> None:
        node = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if isinstance(node, Node):
            self._counts.pop(node.metadata.get_name(), None)

    def _inc(self, gs: GameServer, ready: int, allocated: int) -> None:
        if not ready and not allocated:
            return
        count = self._counts.setdefault(gs.node_name(), NodeCount())
        count.ready = max(0, count.ready + ready)
        count.allocated = max(0, count.allocated + allocated)

    def counts(self) -> dict[str, NodeCount]:
        return {k: NodeCount(v.ready, v.allocated) for k, v in self._counts.items()}
