"""The missing-pod controller (Agones `pkg/gameservers/missing.go`).

A GameServer past Starting (not dev, not being deleted, not Unhealthy) whose pod is gone from the
cache is moved to Unhealthy once, with a Warning event "Pod is missing". Every such GameServer update
(resyncs included) is a check, so a pod deleted while the controller was down is found too; as in
Agones, the update is queued only when the check finds the pod missing (or not a GameServer pod),
so the queue's shared rate limiter is not fed one entry per GameServer update — those piled up
behind its 10/s bucket, round after round, and kept every name waiting for minutes.
"""

from __future__ import annotations

from typing import Any

from ...apis.agones.v1.gameserver import GameServer, GameServerState
from ...informers import split_meta_namespace_key
from ...informers.shared_informer import ResourceEventHandlerFuncs
from ...record import EventType
from .gameservers import is_before_pod_created, is_game_server_pod
from .subcontroller import GameServerSubController


def should_check(gs: GameServer) -> bool:
    return (
        not gs.get_dev_address()[1]
        and not is_before_pod_created(gs)
        and not gs.is_being_deleted()
        and gs.state() != GameServerState.UNHEALTHY
    )


class MissingPodController(GameServerSubController):
    name = "missing-pod"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.game_servers.informer().add_event_handler(
            ResourceEventHandlerFuncs(update_func=self._on_update)
        )

    def _on_update(self, _old: Any, gs: GameServer) -> None:
        if should_check(gs) and self._pod_missing(gs.meta.get_namespace(), gs.meta.get_name()):
            self.workerqueue.enqueue(gs)

    def _pod_missing(self, namespace: str, name: str) -> bool:
        pod = self.get_pod(namespace, name)
        return pod is None or not is_game_server_pod(pod)

    async def sync_game_server(self, key: str) -> None:
        namespace, name = split_meta_namespace_key(key)
        if not self._pod_missing(namespace, name):
            return
        gs = self.get_game_server(namespace, name)
        if gs is None or gs.is_being_deleted() or gs.state() == GameServerState.UNHEALTHY:
            return
        await self.move_to_state(
            gs,
            GameServerState.UNHEALTHY,
            EventType.WARNING,
            "Pod is missing",
            event_on_stored=True,
        )
