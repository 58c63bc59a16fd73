"""The Deployment controller of the local cluster (kube-controller-manager's
`pkg/controller/deployment`: `deployment_controller.go`, `sync.go`, `rolling.go`, `recreate.go`,
`progress.go`).

`sync_deployment(key)` reads the Deployment and the ReplicaSets it controls (controllerRef uid,
through an index, via the informer's mutation cache), finds the new ReplicaSet (the one whose
template equals the Deployment's but for `pod-template-hash`) or creates it as
`<deployment>-<hash>` (the hash label added to its selector, template and labels; annotations
`deployment.kubernetes.io/revision` one above the old ones', `desired-replicas`, `max-replicas`),
then rolls out:

* `Recreate`: old ReplicaSets to 0; once none of their pods is left, the new one to `replicas`;
* `RollingUpdate`: the new ReplicaSet grows while the total stays within `replicas + maxSurge`
  (`reconcile_new_replica_set`); old ones shrink while the available pods stay at least
  `replicas - maxUnavailable`, their unhealthy pods first (`reconcile_old_replica_sets`).
A paused Deployment is only scaled. Old ReplicaSets at 0 beyond `revisionHistoryLimit` are deleted,
oldest first. The status (`replicas`, `updatedReplicas`, `readyReplicas`, `availableReplicas`,
`unavailableReplicas`, `observedGeneration`, the `Available` and `Progressing` conditions with
kube-controller-manager's reasons and messages) is written once when it changed, so
`kubectl rollout status` and `kubectl get deploy` read it as on a cluster.

The pure planning (`plan_rolling`, `plan_recreate`) returns the replica counts each ReplicaSet
should have; the shell writes them, each change once, carrying the returned objects forward.
Keys come from Deployment events and from events of the ReplicaSets they control.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import structlog

from ...client.errors import ApiError
from ...client.rest import RESTClient
from ...client.versioned.resources import DEPLOYMENTS, REPLICA_SETS
from ...informers import DeletedFinalStateUnknown, ResourceEventHandlerFuncs, SharedInformerFactory
from ...workqueue import Requeue, WorkerQueue, fast_rate_limiter
from ..apiserver.apps import (
    POD_TEMPLATE_HASH,
    pod_template_hash,
    resolve_fenceposts,
    templates_equal,
)
from ..apiserver.meta import now_rfc3339
from .replicaset import (
    CONTROLLER_UID_INDEX,
    controller_ref,
    controller_uid_index,
    owner_reference,
)

log = structlog.get_logger("agones.localcluster.controllers.deployment")
Obj = dict[str, Any]
REVISION = "deployment.kubernetes.io/revision"
DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"


def _replicas(rs: Obj) -> int:
    return int((rs.get("spec") or {}).get("replicas", 0))


def _status(rs: Obj, name: str) -> int:
    return int((rs.get("status") or {}).get(name, 0))


def revision(rs: Obj) -> int:
    try:
        return int((rs["metadata"].get("annotations") or {}).get(REVISION, "0"))
    except ValueError:
        return 0


@dataclass(frozen=True)
class Plan:
    """Replica counts to write, by ReplicaSet name."""

    scale: dict[str, int]


def plan_rolling(deployment: Obj, new: Obj, olds: list[Obj]) -> Plan:
    """One step of a rolling update (`rolling.go`): the new ReplicaSet up within the surge, or the
    old ones down within the unavailability budget."""
    wanted = int(deployment["spec"].get("replicas", 1))
    surge, max_unavailable = resolve_fenceposts(deployment)
    every = [new, *olds]
    total = sum(_replicas(rs) for rs in every)
    name = new["metadata"]["name"]
    if _replicas(new) > wanted:
        return Plan({name: wanted})
    if _replicas(new) < wanted and total < wanted + surge:
        return Plan({name: _replicas(new) + min(wanted + surge - total, wanted - _replicas(new))})
    old_total = sum(_replicas(rs) for rs in olds)
    if old_total == 0:
        return Plan({})
    min_available = wanted - max_unavailable
    new_unavailable = _replicas(new) - _status(new, "availableReplicas")
    budget = total - min_available - new_unavailable
    if budget <= 0:
        return Plan({})
    scale: dict[str, int] = {}
    oldest_first = sorted(olds, key=lambda rs: rs["metadata"].get("creationTimestamp", ""))
    for rs in oldest_first:  # unhealthy replicas first
        unhealthy = min(_replicas(rs) - _status(rs, "availableReplicas"), budget)
        if unhealthy > 0:
            scale[rs["metadata"]["name"]] = _replicas(rs) - unhealthy
            budget -= unhealthy
    available = sum(_status(rs, "availableReplicas") for rs in every)
    can_remove = min(available - min_available, budget)
    for rs in oldest_first:
        current = scale.get(rs["metadata"]["name"], _replicas(rs))
        step = min(current, max(can_remove, 0))
        if step > 0:
            scale[rs["metadata"]["name"]] = current - step
            can_remove -= step
    return Plan(scale)


def plan_recreate(deployment: Obj, new: Obj, olds: list[Obj]) -> Plan:
    """`recreate.go`: every old ReplicaSet to 0, then, once their pods are gone, the new one up."""
    scale = {rs["metadata"]["name"]: 0 for rs in olds if _replicas(rs) > 0}
    if scale or any(_status(rs, "replicas") > 0 for rs in olds):
        return Plan(scale)
    wanted = int(deployment["spec"].get("replicas", 1))
    return Plan({new["metadata"]["name"]: wanted} if _replicas(new) != wanted else {})


def _condition(kind: str, status: str, reason: str, message: str, old: list[Obj]) -> Obj:
    now = now_rfc3339()
    prev = next((c for c in old if c.get("type") == kind), None)
    since = prev.get("lastTransitionTime", now) if prev and prev.get("status") == status else now
    same = prev is not None and prev.get("reason") == reason and prev.get("status") == status
    return {
        "type": kind,
        "status": status,
        "lastUpdateTime": prev.get("lastUpdateTime", now) if same and prev else now,
        "lastTransitionTime": since,
        "reason": reason,
        "message": message,
    }


def deployment_status(deployment: Obj, new: Obj | None, every: list[Obj]) -> Obj:
    """The status of a Deployment from its ReplicaSets (`sync.go: calculateStatus`)."""
    wanted = int(deployment["spec"].get("replicas", 1))
    available = sum(_status(rs, "availableReplicas") for rs in every)
    _, max_unavailable = resolve_fenceposts(deployment)
    if (deployment["spec"].get("strategy") or {}).get("type") == "Recreate":
        max_unavailable = wanted
    old = (deployment.get("status") or {}).get("conditions") or []
    status: Obj = {
        "observedGeneration": deployment["metadata"].get("generation", 1),
        "replicas": sum(_status(rs, "replicas") for rs in every),
        "updatedReplicas": _status(new, "replicas") if new else 0,
        "readyReplicas": sum(_status(rs, "readyReplicas") for rs in every),
        "availableReplicas": available,
        "unavailableReplicas": max(sum(_status(rs, "replicas") for rs in every) - available, 0),
    }
    if status["unavailableReplicas"] == 0:
        del status["unavailableReplicas"]
    if available >= wanted - max_unavailable:
        avail = _condition(
            "Available",
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.",
            old,
        )
    else:
        avail = _condition(
            "Available",
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability.",
            old,
        )
    rs_name = new["metadata"]["name"] if new else ""
    complete = (
        new is not None
        and status["updatedReplicas"] == wanted
        and status["replicas"] == wanted
        and available >= wanted
    )
    if complete:
        progressing = _condition(
            "Progressing",
            "True",
            "NewReplicaSetAvailable",
            f'ReplicaSet "{rs_name}" has successfully progressed.',
            old,
        )
    else:
        progressing = _condition(
            "Progressing",
            "True",
            "ReplicaSetUpdated",
            f'ReplicaSet "{rs_name}" is progressing.',
            old,
        )
    status["conditions"] = [avail, progressing]
    collision = (deployment.get("status") or {}).get("collisionCount")
    if collision:
        status["collisionCount"] = collision
    return status


def new_replica_set(deployment: Obj, olds: list[Obj]) -> Obj:
    """The ReplicaSet a Deployment's current template runs in (`sync.go: getNewReplicaSet`)."""
    spec = deployment["spec"]
    template = spec["template"]
    pod_hash = pod_template_hash(template, (deployment.get("status") or {}).get("collisionCount"))
    labels = {**(template.get("metadata", {}).get("labels") or {}), POD_TEMPLATE_HASH: pod_hash}
    selector = dict(spec["selector"])
    selector["matchLabels"] = {**(selector.get("matchLabels") or {}), POD_TEMPLATE_HASH: pod_hash}
    wanted = int(spec.get("replicas", 1))
    rolling = (spec.get("strategy") or {}).get("type") != "Recreate"
    surge = resolve_fenceposts(deployment)[0] if rolling else 0
    md = deployment["metadata"]
    return {
        "apiVersion": "apps/v1",
        "kind": "ReplicaSet",
        "metadata": {
            "name": f"{md['name']}-{pod_hash}",
            "namespace": md["namespace"],
            "labels": labels,
            "annotations": {
                REVISION: str(max([revision(rs) for rs in olds], default=0) + 1),
                DESIRED: str(wanted),
                MAX_REPLICAS: str(wanted + surge),
            },
            "ownerReferences": [owner_reference(deployment, "Deployment")],
        },
        "spec": {
            "replicas": 0,
            "minReadySeconds": spec.get("minReadySeconds", 0),
            "selector": selector,
            "template": {
                **template,
                "metadata": {**template.get("metadata", {}), "labels": labels},
            },
        },
    }


class DeploymentController:
    """Rolls Deployments out through ReplicaSets (see the module docstring)."""

    def __init__(self, client: RESTClient, factory: SharedInformerFactory) -> None:
        self.client = client
        self.deployments = factory.for_resource(DEPLOYMENTS)
        self.replica_sets = factory.for_resource(
            REPLICA_SETS, indexers={CONTROLLER_UID_INDEX: controller_uid_index}
        )
        self.workerqueue = WorkerQueue(
            self.sync_deployment, log, "deployment", "deployment", fast_rate_limiter(5.0)
        )
        self.deployments.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self.workerqueue.enqueue_immediately,
                update_func=lambda _old, new: self.workerqueue.enqueue_immediately(new),
            )
        )
        self.replica_sets.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self._on_rs,
                update_func=lambda _old, new: self._on_rs(new),
                delete_func=self._on_rs,
            )
        )

    async def run(self, workers: int = 2) -> None:
        await self.workerqueue.run(workers)

    def _on_rs(self, obj: Any) -> None:
        rs = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        ref = controller_ref(rs) if isinstance(rs, dict) else None
        if ref is not None and ref.get("kind") == "Deployment":
            self.workerqueue.enqueue_immediately(
                f"{rs['metadata'].get('namespace', '')}/{ref.get('name', '')}"
            )

    async def sync_deployment(self, key: str) -> None:
        deployment = self.deployments.informer().mutation_cache().get_by_key(key)
        if deployment is None or deployment["metadata"].get("deletionTimestamp"):
            return
        cache = self.replica_sets.informer().mutation_cache()
        owned = [
            rs
            for rs in cache.by_index(CONTROLLER_UID_INDEX, deployment["metadata"]["uid"])
            if not rs["metadata"].get("deletionTimestamp")
        ]
        template = deployment["spec"]["template"]
        new = next((rs for rs in owned if templates_equal(rs["spec"]["template"], template)), None)
        olds = [rs for rs in owned if rs is not new]
        if new is None:
            new = await self._create_new(deployment, olds)
        wanted = int(deployment["spec"].get("replicas", 1))
        if deployment["spec"].get("paused"):
            # Only scaled while paused (`sync.go: sync`), here when no rollout is under way.
            idle = olds or _replicas(new) == wanted
            plan = Plan({} if idle else {new["metadata"]["name"]: wanted})
        elif (deployment["spec"].get("strategy") or {}).get("type") == "Recreate":
            plan = plan_recreate(deployment, new, olds)
        else:
            plan = plan_rolling(deployment, new, olds)
        by_name = {rs["metadata"]["name"]: rs for rs in [new, *olds]}
        for name, replicas in plan.scale.items():
            by_name[name] = await self._scale(by_name[name], replicas, deployment)
        new = by_name[new["metadata"]["name"]]
        olds = [by_name[rs["metadata"]["name"]] for rs in olds]
        await self._cleanup(deployment, olds)
        await self._write_status(deployment, new, [new, *olds])

    async def _create_new(self, deployment: Obj, olds: list[Obj]) -> Obj:
        body = new_replica_set(deployment, olds)
        ns = deployment["metadata"]["namespace"]
        try:
            return await self.client.create(REPLICA_SETS, body, namespace=ns)
        except ApiError as err:
            if err.status_code != 409:
                raise
        existing = await self.client.get(REPLICA_SETS, body["metadata"]["name"], namespace=ns)
        ref = controller_ref(existing) or {}
        if ref.get("uid") == deployment["metadata"]["uid"]:
            return existing
        # A hash collision with a ReplicaSet we do not own: bump collisionCount and retry.
        count = int((deployment.get("status") or {}).get("collisionCount") or 0) + 1
        status = {**(deployment.get("status") or {}), "collisionCount": count}
        written = await self.client.update_status(DEPLOYMENTS, {**deployment, "status": status})
        self.deployments.informer().mutation_cache().mutation(written)
        raise Requeue(f"pod-template-hash collision for {body['metadata']['name']}")

    async def _scale(self, rs: Obj, replicas: int, deployment: Obj) -> Obj:
        wanted = int(deployment["spec"].get("replicas", 1))
        surge = resolve_fenceposts(deployment)[0]
        patch = {
            "metadata": {
                "resourceVersion": rs["metadata"]["resourceVersion"],
                "annotations": {DESIRED: str(wanted), MAX_REPLICAS: str(wanted + surge)},
            },
            "spec": {"replicas": replicas},
        }
        written = await self.client.patch(
            REPLICA_SETS, rs["metadata"]["name"], patch, namespace=rs["metadata"]["namespace"]
        )
        self.replica_sets.informer().mutation_cache().mutation(written)
        return written

    async def _cleanup(self, deployment: Obj, olds: list[Obj]) -> None:
        limit = deployment["spec"].get("revisionHistoryLimit", 10)
        idle = [rs for rs in olds if _replicas(rs) == 0 and _status(rs, "replicas") == 0]
        idle.sort(key=revision)
        for rs in idle[: max(len(idle) - int(limit), 0)]:
            try:
                await self.client.delete(
                    REPLICA_SETS, rs["metadata"]["name"], rs["metadata"]["namespace"]
                )
            except ApiError as err:
                if err.status_code != 404:
                    raise

    async def _write_status(self, deployment: Obj, new: Obj, every: list[Obj]) -> None:
        status = deployment_status(deployment, new, every)
        old = deployment.get("status") or {}
        if _comparable(old) == _comparable(status):
            return
        written = await self.client.update_status(DEPLOYMENTS, {**deployment, "status": status})
        self.deployments.informer().mutation_cache().mutation(written)


def _comparable(status: Obj) -> Obj:
    conditions = [
        {k: v for k, v in c.items() if k not in ("lastUpdateTime", "lastTransitionTime")}
        for c in status.get("conditions") or []
    ]
    return {**status, "conditions": conditions}
