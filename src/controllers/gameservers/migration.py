"""The migration controller (Agones `pkg/gameservers/migration.go`).

When a scheduled GameServer's pod reports a different node, or its node a different address, than
the GameServer's status: before Ready the address and ports are re-applied ("Address updated due to
Node migration"); at or after Ready the GameServer becomes Unhealthy ("Node migration occurred"),
so its GameServerSet replaces it. Triggered by adds and updates of scheduled, live GameServer pods.
"""

from __future__ import annotations

from typing import Any

import structlog

from ...apis.agones.v1.gameserver import GameServerState
from ...client.errors import NotFoundError
from ...featuregates import FeatureGates
from ...informers import SharedInformerFactory, split_meta_namespace_key
from ...informers.shared_informer import ResourceEventHandlerFuncs
from ...record import EventBroadcaster, EventType
from ...workqueue import WorkerQueue, default_controller_rate_limiter
from . import informers
from .gameservers import (
    address,
    apply_game_server_address_and_port,
    deep_copy,
    is_being_deleted,
    is_game_server_pod,
    pod_node_name,
)


def is_active_game_server_with_node(pod: Any) -> bool:
    return bool(pod_node_name(pod)) and not is_being_deleted(pod) and is_game_server_pod(pod)


class MigrationController:
    def __init__(
        self,
        client: informers.Client,
        factory: SharedInformerFactory,
        events: EventBroadcaster,
        gates: FeatureGates,
        *,
        logger: Any = None,
    ) -> None:
        self.client = client
        self.gates = gates
        self.log = (logger or structlog.get_logger()).bind(controller="migration")
        self.recorder = events.new_recorder("migration-controller")
        self.game_server_lister = informers.game_servers(factory).lister()
        pods = informers.game_server_pods(factory)
        self.pod_lister = pods.lister()
        self.node_lister = informers.nodes(factory).lister()
        self.workerqueue = WorkerQueue(
            self.sync_game_server,
            self.log,
            "gameserver",
            "agones.dev.MigrationController",
            default_controller_rate_limiter(),
        )
        pods.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self._maybe_enqueue, update_func=lambda _o, n: self._maybe_enqueue(n)
            )
        )

    def _maybe_enqueue(self, pod: Any) -> None:
        if is_active_game_server_with_node(pod):
            self.workerqueue.enqueue(pod)

    async def sync_game_server(self, key: str) -> None:
        namespace, name = split_meta_namespace_key(key)
        try:
            gs = self.game_server_lister.by_namespace(namespace).get(name)
            pod = self.pod_lister.by_namespace(namespace).get(name)
        except NotFoundError:
            return
        if (
            not gs.node_name()
            or gs.is_being_deleted()
            or gs.state() == GameServerState.UNHEALTHY
            or is_being_deleted(pod)
            or not pod_node_name(pod)
        ):
            return
        node = self.node_lister.get(pod_node_name(pod))
        if pod_node_name(pod) == gs.node_name() and address(node) == gs.status_address():
            return
        gs_copy = deep_copy(gs)
        if gs_copy.is_before_ready():
            gs_copy = apply_game_server_address_and_port(gs_copy, node, pod, self.gates)
            message = "Address updated due to Node migration"
        else:
            gs_copy.gs_status.state = GameServerState.UNHEALTHY
            message = "Node migration occurred"
        await informers.update_game_server(self.client, gs_copy)
        self.recorder.event(gs, EventType.WARNING, str(gs_copy.state() or ""), message)
