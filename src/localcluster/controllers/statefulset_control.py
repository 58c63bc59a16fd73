"""The StatefulSet controller's decision (`pkg/controller/statefulset/stateful_set_control.go`
`updateStatefulSet`), as a pure function of the set, its pods and its two revisions.

`plan_update(current_set, update_set, pods, current_rev, update_rev, now)` sorts the pods into
`replicas` (ordinals `start..start+replicas-1`) and `condemned` (the rest, highest ordinal first),
then returns the `Action`s to take now and the set's new `status`:

1. Each replica ordinal in ascending order: a Failed or Succeeded pod is deleted (it is recreated
   once gone); a missing pod is created, at the current revision below the partition (or below
   `status.currentReplicas` without one) and at the update revision otherwise; a pod whose
   identity labels are missing is updated. With `OrderedReady` (monotonic) the plan stops at the
   first pod it creates, or that is terminating or not Running-and-Ready (or not yet available for
   `minReadySeconds`): ordinal N+1 waits for N.
2. Condemned pods, highest ordinal first, are deleted; monotonic: one at a time, and only when
   every pod but the first unhealthy one is healthy.
3. `RollingUpdate`: from the highest ordinal down to `partition`, the first pod not at the update
   revision is deleted (it comes back at the update revision), waiting while any is unhealthy;
   `OnDelete` deletes nothing: a pod picks up the update when the user deletes it.

The status counts existing pods (`replicas`), Running-and-Ready ones (`readyReplicas`), available
ones, and non-terminating ones at each revision; when a rolling update has every pod updated and
ready, `currentRevision` becomes the update revision.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .replicaset import ready_since
from .statefulset_utils import (
    get_ordinal,
    identity_matches,
    new_stateful_set_pod,
    revision_of,
    start_ordinal,
)

Obj = dict[str, Any]


@dataclass(frozen=True)
class Action:
    verb: str
    """`create`, `delete` or `update`."""
    pod: Obj
    """The pod to create (its body), to delete or to update (as it is stored)."""


@dataclass
class Plan:
    actions: list[Action] = field(default_factory=list)
    status: Obj = field(default_factory=dict)
    wait: float | None = None
    """Seconds until a Ready pod becomes available (requeue then), None: nothing to wait for."""


def is_failed(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Failed", "Succeeded")


def is_terminating(pod: Obj) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def is_running_and_ready(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and ready_since(pod) is not None


def available_in(pod: Obj, min_ready: int, now: datetime) -> float | None:
    """Seconds until a Running-and-Ready pod is available (0: it is), None when it is not ready."""
    if not is_running_and_ready(pod):
        return None
    since = ready_since(pod)
    assert since is not None
    return max(0.0, min_ready - (now - since).total_seconds())


def is_healthy(pod: Obj) -> bool:
    return is_running_and_ready(pod) and not is_terminating(pod)


def _partition(sts: Obj) -> int | None:
    strategy = (sts.get("spec") or {}).get("updateStrategy") or {}
    if strategy.get("type", "RollingUpdate") != "RollingUpdate":
        return None
    rolling = strategy.get("rollingUpdate")
    return int(rolling.get("partition") or 0) if isinstance(rolling, dict) else None


def versioned_pod(
    current_set: Obj, update_set: Obj, current_rev: str, update_rev: str, ordinal: int
) -> Obj:
    """`newVersionedStatefulSetPod`: the current revision below the partition, else the update."""
    strategy = ((current_set.get("spec") or {}).get("updateStrategy") or {}).get(
        "type", "RollingUpdate"
    )
    partition = _partition(current_set)
    index = ordinal - start_ordinal(current_set)
    current_count = int((current_set.get("status") or {}).get("currentReplicas") or 0)
    if strategy == "RollingUpdate" and (
        (partition is None and index < current_count)
        or (partition is not None and index < partition)
    ):
        return new_stateful_set_pod(current_set, ordinal, current_rev)
    return new_stateful_set_pod(update_set, ordinal, update_rev)


def compute_status(
    sts: Obj, pods: list[Obj], current_rev: str, update_rev: str, now: datetime
) -> tuple[Obj, float | None]:
    min_ready = int((sts.get("spec") or {}).get("minReadySeconds") or 0)
    waits = [available_in(p, min_ready, now) for p in pods]
    live = [p for p in pods if not is_terminating(p)]
    status: Obj = {
        "observedGeneration": sts["metadata"].get("generation", 1),
        "replicas": len(pods),
        "readyReplicas": sum(1 for w in waits if w is not None),
        "availableReplicas": sum(1 for w in waits if w == 0),
        "currentReplicas": sum(1 for p in live if revision_of(p) == current_rev),
        "updatedReplicas": sum(1 for p in live if revision_of(p) == update_rev),
        "currentRevision": current_rev,
        "updateRevision": update_rev,
    }
    collisions = (sts.get("status") or {}).get("collisionCount")
    if collisions is not None:
        status["collisionCount"] = collisions
    replicas = int((sts.get("spec") or {}).get("replicas", 1))
    if (
        _partition(sts) is not None
        and status["updatedReplicas"] == replicas
        and status["readyReplicas"] == replicas
        and status["replicas"] == replicas
    ):
        status["currentRevision"] = update_rev
        status["currentReplicas"] = status["updatedReplicas"]
    pending = [w for w in waits if w]
    return status, (min(pending) if pending else None)


def _split(sts: Obj, pods: list[Obj]) -> tuple[list[Obj | None], list[Obj]]:
    start = start_ordinal(sts)
    count = int((sts.get("spec") or {}).get("replicas", 1))
    replicas: list[Obj | None] = [None] * count
    condemned = []
    for pod in pods:
        ordinal = get_ordinal(sts["metadata"]["name"], pod["metadata"]["name"])
        if start <= ordinal < start + count:
            replicas[ordinal - start] = pod
        elif ordinal >= 0:
            condemned.append(pod)
    condemned.sort(key=lambda p: -get_ordinal(sts["metadata"]["name"], p["metadata"]["name"]))
    return replicas, condemned


def plan_update(
    current_set: Obj,
    update_set: Obj,
    pods: list[Obj],
    current_rev: str,
    update_rev: str,
    now: datetime | None = None,
) -> Plan:
    """What to do now for the set (see the module docstring)."""
    when = now or datetime.now(UTC)
    status, wait = compute_status(update_set, pods, current_rev, update_rev, when)
    plan = Plan(status=status, wait=wait)
    if update_set["metadata"].get("deletionTimestamp"):
        return plan
    replicas, condemned = _split(update_set, pods)
    monotonic = (update_set.get("spec") or {}).get("podManagementPolicy") != "Parallel"
    min_ready = int((update_set.get("spec") or {}).get("minReadySeconds") or 0)
    start = start_ordinal(update_set)
    for index, pod in enumerate(replicas):
        if pod is None:
            body = versioned_pod(current_set, update_set, current_rev, update_rev, start + index)
            plan.actions.append(Action("create", body))
            if monotonic:
                return plan
            continue
        if is_failed(pod) and not is_terminating(pod):
            plan.actions.append(Action("delete", pod))
            if monotonic:
                return plan
            continue
        if is_terminating(pod) or available_in(pod, min_ready, when) != 0:
            if monotonic:
                return plan
            continue
        if not identity_matches(update_set, pod):
            plan.actions.append(Action("update", pod))
    if not _condemn(plan, replicas, condemned, monotonic):
        return plan
    _rolling_update(plan, update_set, replicas, update_rev)
    return plan


def _condemn(plan: Plan, replicas: list[Obj | None], condemned: list[Obj], monotonic: bool) -> bool:
    """Delete the pods beyond the replica count; False when the plan must stop here."""
    unhealthy = next(
        (p for p in [*replicas, *reversed(condemned)] if p is not None and not is_healthy(p)),
        None,
    )
    for pod in condemned:
        if is_terminating(pod):
            if monotonic:
                return False
            continue
        if monotonic and not is_healthy(pod) and pod is not unhealthy:
            return False
        plan.actions.append(Action("delete", pod))
        if monotonic:
            return False
    return True


def _rolling_update(
    plan: Plan, update_set: Obj, replicas: list[Obj | None], update_rev: str
) -> None:
    partition = _partition(update_set)
    if partition is None:
        return
    for pod in reversed(replicas[partition:]):
        if pod is None:
            return
        if revision_of(pod) != update_rev and not is_terminating(pod):
            plan.actions.append(Action("delete", pod))
            return
        if not is_healthy(pod):
            return
