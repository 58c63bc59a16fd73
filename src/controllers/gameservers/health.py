"""The health controller (Agones `pkg/gameservers/health.go`): pod trouble → GameServer Unhealthy.

A GameServer pod is unhealthy when it was evicted; when it cannot be scheduled for lack of free host
ports (not with SidecarContainers); when its game container terminated or restarted (not with
SidecarContainers — then a restart before Ready is allowed, one after Ready is not); or when its
phase is Failed (only with SidecarContainers). Pod updates that look unhealthy and pod deletions
enqueue the GameServer; the sync re-checks from the caches and writes state Unhealthy once, with a
Warning event "Issue with Gameserver pod". Deleting, Unhealthy and Error GameServers are left alone.
"""

from __future__ import annotations

from typing import Any

from msgspec import UNSET

from ...apis.agones.v1.gameserver import (
    GAME_SERVER_CONTAINER_ANNOTATION,
    GAME_SERVER_READY_CONTAINER_ID_ANNOTATION,
    GameServer,
    GameServerState,
)
from ...apis.core.v1 import Pod
from ...featuregates import Feature, FeatureGates
from ...informers import split_meta_namespace_key
from ...informers.shared_informer import ResourceEventHandlerFuncs
from ...record import EventType
from .gameservers import is_being_deleted, is_controlled_by, is_game_server_pod
from .subcontroller import GameServerSubController


def evicted_pod(pod: Pod) -> bool:
    return pod.reason() == "Evicted"


def unschedulable_with_no_free_ports(pod: Pod, gates: FeatureGates) -> bool:
    if gates.enabled(Feature.SIDECAR_CONTAINERS):
        return False
    return any(
        cond.type == "PodScheduled"
        and cond.reason == "Unschedulable"
        and "free ports" in (cond.message or "")
        for cond in pod.conditions()
    )


def failed_container(pod: Pod, gates: FeatureGates) -> bool:
    if gates.enabled(Feature.SIDECAR_CONTAINERS):
        return False
    container = pod.metadata.get_annotations().get(GAME_SERVER_CONTAINER_ANNOTATION, "")
    cs = pod.container_status(container)
    return cs is not None and (cs.terminated() or cs.last_terminated())


def failed_pod(pod: Pod, gates: FeatureGates) -> bool:
    if not gates.enabled(Feature.SIDECAR_CONTAINERS):
        return False
    return pod.phase() == "Failed"


def is_unhealthy(pod: Pod, gates: FeatureGates) -> bool:
    return (
        evicted_pod(pod)
        or unschedulable_with_no_free_ports(pod, gates)
        or failed_container(pod, gates)
        or failed_pod(pod, gates)
    )


def _game_container(gs: GameServer) -> str:
    # Read without `gs_spec`, which would attach an empty spec to a shared cached object.
    container = gs.spec.container if gs.spec is not UNSET else UNSET
    return container if isinstance(container, str) else ""


class OutOfSync(Exception):
    """The pod and GameServer caches disagree on the ready container; retry."""


def skip_unhealthy_game_container(gs: GameServer, pod: Pod, gates: FeatureGates) -> bool:
    """True when a game-container crash must not make the GameServer Unhealthy (pre-Ready restarts,
    or the Ready container itself still running after an earlier restart)."""
    if not is_controlled_by(pod, gs) or gates.enabled(Feature.SIDECAR_CONTAINERS):
        return False
    ready_id = gs.meta.get_annotations().get(GAME_SERVER_READY_CONTAINER_ID_ANNOTATION, "")
    pod_ready_id = pod.metadata.get_annotations().get(GAME_SERVER_READY_CONTAINER_ID_ANNOTATION, "")
    if pod_ready_id != ready_id:
        raise OutOfSync(f"pod and gameserver {gs.meta.get_name()} data are out of sync, retrying")
    if gs.is_before_ready():
        return failed_container(pod, gates)
    cs = pod.container_status(_game_container(gs))
    if cs is not None:
        if cs.terminated():
            return False
        if cs.last_terminated():
            return cs.container_id == ready_id
    return False


class HealthController(GameServerSubController):
    name = "health"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pods.informer().add_event_handler(
            ResourceEventHandlerFuncs(update_func=self._on_update, delete_func=self._on_delete)
        )

    def _on_update(self, _old: Pod, pod: Pod) -> None:
        if not is_being_deleted(pod) and is_game_server_pod(pod) and is_unhealthy(pod, self.gates):
            self.workerqueue.enqueue(pod)

    def _on_delete(self, obj: Any) -> None:
        if isinstance(obj, Pod) and is_game_server_pod(obj) and self._may_act_on(obj):
            self.workerqueue.enqueue(obj)

    def _may_act_on(self, pod: Pod) -> bool:
        """False when the pod's GameServer is gone or being deleted: the sync would do nothing,
        and queued through the shared 10/s bucket every pod of a 1000 scale-down waited up to
        100 s (with its timer) for that nothing."""
        gs = self.get_game_server(pod.metadata.get_namespace(), pod.metadata.get_name())
        return gs is not None and not gs.is_being_deleted()

    async def sync_game_server(self, key: str) -> None:
        namespace, name = split_meta_namespace_key(key)
        gs = self.get_game_server(namespace, name)
        if gs is None or gs.is_being_deleted():
            return
        if gs.state() in (GameServerState.UNHEALTHY, GameServerState.ERROR):
            return
        pod = self.get_pod(namespace, name)
        if pod is not None:
            if skip_unhealthy_game_container(gs, pod, self.gates):
                return
            if not is_unhealthy(pod, self.gates):
                return
        await self.move_to_state(
            gs, GameServerState.UNHEALTHY, EventType.WARNING, "Issue with Gameserver pod"
        )
