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
from ...featuregates import Feature, FeatureGates
from ...informers import split_meta_namespace_key
from ...informers.shared_informer import ResourceEventHandlerFuncs
from ...record import EventType
from .gameservers import is_being_deleted, is_controlled_by, is_game_server_pod
from .subcontroller import GameServerSubController


def _container_status(pod: Any, name: str) -> dict[str, Any] | None:
    for cs in (pod.get("status") or {}).get("containerStatuses") or []:
        if cs.get("name") == name:
            return dict(cs)
    return None


def evicted_pod(pod: Any) -> bool:
    return (pod.get("status") or {}).get("reason") == "Evicted"


def unschedulable_with_no_free_ports(pod: Any, gates: FeatureGates) -> bool:
    if gates.enabled(Feature.SIDECAR_CONTAINERS):
        return False
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if (
            cond.get("type") == "PodScheduled"
            and cond.get("reason") == "Unschedulable"
            and "free ports" in (cond.get("message") or "")
        ):
            return True
    return False


def failed_container(pod: Any, gates: FeatureGates) -> bool:
    if gates.enabled(Feature.SIDECAR_CONTAINERS):
        return False
    container = (pod.get("metadata", {}).get("annotations") or {}).get(
        GAME_SERVER_CONTAINER_ANNOTATION, ""
    )
    cs = _container_status(pod, container)
    if cs is None:
        return False
    return bool((cs.get("state") or {}).get("terminated")) or bool(
        (cs.get("lastState") or {}).get("terminated")
    )


def failed_pod(pod: Any, gates: FeatureGates) -> bool:
    if not gates.enabled(Feature.SIDECAR_CONTAINERS):
        return False
    return (pod.get("status") or {}).get("phase") == "Failed"


def is_unhealthy(pod: Any, gates: FeatureGates) -> bool:
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


def skip_unhealthy_game_container(gs: GameServer, pod: Any, gates: FeatureGates) -> bool:
    """True when a game-container crash must not make the GameServer Unhealthy (pre-Ready restarts,
    or the Ready container itself still running after an earlier restart)."""
    if not is_controlled_by(pod, gs) or gates.enabled(Feature.SIDECAR_CONTAINERS):
        return False
    ready_id = gs.meta.get_annotations().get(GAME_SERVER_READY_CONTAINER_ID_ANNOTATION, "")
    pod_ready_id = (pod.get("metadata", {}).get("annotations") or {}).get(
        GAME_SERVER_READY_CONTAINER_ID_ANNOTATION, ""
    )
    if pod_ready_id != ready_id:
        raise OutOfSync(f"pod and gameserver {gs.meta.get_name()} data are out of sync, retrying")
    if gs.is_before_ready():
        return failed_container(pod, gates)
    cs = _container_status(pod, _game_container(gs))
    if cs is not None:
        if (cs.get("state") or {}).get("terminated"):
            return False
        if (cs.get("lastState") or {}).get("terminated"):
            return bool(cs.get("containerID") == ready_id)
    return False


class HealthController(GameServerSubController):
    name = "health"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.pods.informer().add_event_handler(
            ResourceEventHandlerFuncs(update_func=self._on_update, delete_func=self._on_delete)
        )

    def _on_update(self, _old: Any, pod: Any) -> None:
        if not is_being_deleted(pod) and is_game_server_pod(pod) and is_unhealthy(pod, self.gates):
            self.workerqueue.enqueue(pod)

    def _on_delete(self, obj: Any) -> None:
        if isinstance(obj, dict) and is_game_server_pod(obj):
            self.workerqueue.enqueue(obj)

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
