"""The succeeded controller (Agones `pkg/gameservers/succeeded.go`, SidecarContainers only).

With native sidecars the pod can finish: when a GameServer pod reaches phase Succeeded (the game
container exited 0), its GameServer moves to Shutdown ("Pod is in Succeeded state"), which the main
controller then deletes.
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
from .gameservers import deep_copy, is_game_server_pod


def succeeded(pod: Any) -> bool:
    return is_game_server_pod(pod) and (pod.get("status") or {}).get("phase") == "Succeeded"


class SucceededController:
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
        self.log = (logger or structlog.get_logger()).bind(controller="succeeded")
        self.recorder = events.new_recorder("succeeded-controller")
        self.game_server_lister = informers.game_servers(factory).lister()
        pods = informers.game_server_pods(factory)
        self.pod_lister = pods.lister()
        self.workerqueue = WorkerQueue(
            self.sync_game_server,
            self.log,
            "gameserver",
            "agones.dev.SucceededController",
            default_controller_rate_limiter(),
        )
        pods.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self._maybe_enqueue, update_func=lambda _o, n: self._maybe_enqueue(n)
            )
        )

    def _maybe_enqueue(self, pod: Any) -> None:
        if succeeded(pod):
            self.workerqueue.enqueue(pod)

    async def sync_game_server(self, key: str) -> None:
        namespace, name = split_meta_namespace_key(key)
        try:
            pod = self.pod_lister.by_namespace(namespace).get(name)
            gs = self.game_server_lister.by_namespace(namespace).get(name)
        except NotFoundError:
            return
        if not succeeded(pod) or gs.is_being_deleted():
            return
        gs_copy = deep_copy(gs)
        gs_copy.gs_status.state = GameServerState.SHUTDOWN
        stored = await informers.update_game_server(self.client, gs_copy)
        self.recorder.event(
            stored, EventType.NORMAL, GameServerState.SHUTDOWN, "Pod is in Succeeded state"
        )
