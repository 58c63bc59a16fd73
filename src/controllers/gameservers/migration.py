"""The migration controller (Agones `pkg/gameservers/migration.go`).

When a scheduled GameServer's pod reports a different node, or its node a different address, than
the GameServer's status: before Ready the address and ports are re-applied ("Address updated due to
Node migration"); at or after Ready the GameServer becomes Unhealthy ("Node migration occurred"),
so its GameServerSet replaces it. Triggered by adds and updates of scheduled, live GameServer pods
that show such a mismatch (`migration(pod)`, checked in the handler as Agones does): queuing every
pod event fed the queue's shared 10/s rate limiter thousands of entries per round of 1000, which
waited there for minutes, a backlog that grew from round to round.
"""

from __future__ import annotations

from typing import Any

from ...apis.agones.v1.gameserver import GameServer, GameServerState
from ...apis.core.v1.types import Node, Pod
from ...client.errors import NotFoundError
from ...informers import split_meta_namespace_key
from ...informers.shared_informer import ResourceEventHandlerFuncs
from ...record import EventType
from . import informers
from .gameservers import (
    address,
    apply_game_server_address_and_port,
    deep_copy,
    is_being_deleted,
    is_game_server_pod,
    pod_node_name,
)
from .subcontroller import GameServerSubController


def is_active_game_server_with_node(pod: Pod) -> bool:
    return bool(pod_node_name(pod)) and not is_being_deleted(pod) and is_game_server_pod(pod)


class MigrationController(GameServerSubController):
    name = "migration"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.node_lister = informers.nodes(self.factory).lister()
        self.pods.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self._maybe_enqueue, update_func=lambda _o, n: self._maybe_enqueue(n)
            )
        )

    def _maybe_enqueue(self, pod: Pod) -> None:
        if self.migration(pod) is not None:
            self.workerqueue.enqueue(pod)

    def migration(self, pod: Pod) -> tuple[GameServer, Node] | None:
        """The pod's GameServer and its node when they disagree on node or address, else None."""
        if not is_active_game_server_with_node(pod):
            return None
        gs = self.get_game_server(pod.metadata.get_namespace(), pod.metadata.get_name())
        if (
            gs is None
            or not gs.node_name()
            or gs.is_being_deleted()
            or gs.state() == GameServerState.UNHEALTHY
        ):
            return None
        try:
            node = self.node_lister.get(pod_node_name(pod))
        except NotFoundError:
            return None
        if pod_node_name(pod) == gs.node_name() and address(node) == gs.status_address():
            return None
        return gs, node

    async def sync_game_server(self, key: str) -> None:
        namespace, name = split_meta_namespace_key(key)
        pod = self.get_pod(namespace, name)
        found = None if pod is None else self.migration(pod)
        if found is None:
            return
        gs, node = found
        assert pod is not None
        gs_copy = deep_copy(gs)
        if gs_copy.is_before_ready():
            gs_copy = apply_game_server_address_and_port(gs_copy, node, pod, self.gates)
            message = "Address updated due to Node migration"
        else:
            gs_copy.gs_status.state = GameServerState.UNHEALTHY
            message = "Node migration occurred"
        await self.update_with_event(gs, gs_copy, EventType.WARNING, message)
