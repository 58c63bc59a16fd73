"""The missing-pod controller (Agones `pkg/gameservers/missing.go`).

A GameServer past Starting (not dev, not being deleted, not Unhealthy) whose pod is gone from the
cache is moved to Unhealthy once, with a Warning event "Pod is missing". Every such GameServer update
(resyncs included) is a check, so a pod deleted while the controller was down is found too.
"""

from __future__ import annotations

from typing import Any

import structlog

from ...apis.agones.v1.gameserver import GameServer, GameServerState
from ...client.errors import NotFoundError
from ...featuregates import FeatureGates
from ...informers import SharedInformerFactory, split_meta_namespace_key
from ...informers.shared_informer import ResourceEventHandlerFuncs
from ...record import EventBroadcaster, EventType
from ...workqueue import WorkerQueue, default_controller_rate_limiter
from . import informers
from .gameservers import deep_copy, is_before_pod_created, is_game_server_pod


def should_check(gs: GameServer) -> bool:
    return (
        not gs.get_dev_address()[1]
        and not is_before_pod_created(gs)
        and not gs.is_being_deleted()
        and gs.state() != GameServerState.UNHEALTHY
    )


class MissingPodController:
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
        self.log = (logger or structlog.get_logger()).bind(controller="missing-pod")
        self.recorder = events.new_recorder("missing-pod-controller")
        game_servers = informers.game_servers(factory)
        self.game_server_lister = game_servers.lister()
        self.pod_lister = informers.game_server_pods(factory).lister()
        self.workerqueue = WorkerQueue(
            self.sync_game_server,
            self.log,
            "gameserver",
            "agones.dev.MissingPodController",
            default_controller_rate_limiter(),
        )
        game_servers.informer().add_event_handler(
            ResourceEventHandlerFuncs(update_func=self._on_update)
        )

    def _on_update(self, _old: Any, gs: GameServer) -> None:
        if should_check(gs):
            self.workerqueue.enqueue(gs)

    async def sync_game_server(self, key: str) -> None:
        namespace, name = split_meta_namespace_key(key)
        try:
            pod = self.pod_lister.by_namespace(namespace).get(name)
        except NotFoundError:
            pod = None
        if pod is not None and is_game_server_pod(pod):
            return
        try:
            gs = self.game_server_lister.by_namespace(namespace).get(name)
        except NotFoundError:
            return
        if gs.is_being_deleted() or gs.state() == GameServerState.UNHEALTHY:
            return
        gs_copy = deep_copy(gs)
        gs_copy.gs_status.state = GameServerState.UNHEALTHY
        stored = await informers.update_game_server(self.client, gs_copy)
        self.recorder.event(stored, EventType.WARNING, GameServerState.UNHEALTHY, "Pod is missing")
