"""The succeeded controller (Agones `pkg/gameservers/succeeded.go`, SidecarContainers only).

With native sidecars the pod can finish: when a GameServer pod reaches phase Succeeded (the game
container exited 0), its GameServer moves to Shutdown ("Pod is in Succeeded state"), which the main
controller then deletes.
"""

from __future__ import annotations

from typing import Any

from ...apis.agones.v1.gameserver import GameServerState
from ...apis.core.v1 import Pod
from ...informers import split_meta_namespace_key
from ...informers.shared_informer import ResourceEventHandlerFuncs
from ...record import EventType
from .gameservers import is_game_server_pod
from .subcontroller import GameServerSubController


def succeeded(pod: Pod) -> bool:
    return is_game_server_pod(pod) and pod.phase() == "Succeeded"


class SucceededController(GameServerSubController):
    name = "succeeded"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pods.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self._maybe_enqueue, update_func=lambda _o, n: self._maybe_enqueue(n)
            )
        )

    def _maybe_enqueue(self, pod: Any) -> None:
        if succeeded(pod):
            self.workerqueue.enqueue(pod)

    async def sync_game_server(self, key: str) -> None:
        namespace, name = split_meta_namespace_key(key)
        pod = self.get_pod(namespace, name)
        gs = self.get_game_server(namespace, name)
        if pod is None or gs is None or not succeeded(pod) or gs.is_being_deleted():
            return
        await self.move_to_state(
            gs,
            GameServerState.SHUTDOWN,
            EventType.NORMAL,
            "Pod is in Succeeded state",
            event_on_stored=True,
        )
