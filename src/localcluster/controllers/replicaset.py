"""The ReplicaSet controller of the local cluster (kube-controller-manager's
`pkg/controller/replicaset/replica_set.go`).

`sync_replica_set(key)` reads the ReplicaSet through its informer's mutation cache, lists the
active pods it controls (controllerRef uid, through an index; not terminating, not Succeeded or
Failed), and when its expectations are met (every create and delete it issued has been observed, or
five minutes have passed, as `ControllerExpectations`) creates the missing pods (`generateName:
<rs>-`, the template's labels and annotations, a controller ownerReference) or deletes the surplus
(`pod_deletion_order`: unscheduled, then Pending, then not Ready, then the most recently Ready
first). Then it writes the status once when it changed: `replicas`, `fullyLabeledReplicas`,
`readyReplicas`, `availableReplicas` (Ready for `minReadySeconds`; a pod not yet available
requeues the key after what is left), `observedGeneration`.

Keys come from ReplicaSet adds and updates and from every pod event of a pod a ReplicaSet controls.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import structlog

from ...client.errors import ApiError
from ...client.rest import Resource, RESTClient
from ...client.versioned.resources import PODS, REPLICA_SETS
from ...clock import Clock, RealClock
from ...informers import DeletedFinalStateUnknown, ResourceEventHandlerFuncs, SharedInformerFactory
from ...informers.labels import label_selector_as_selector
from ...workqueue import Requeue, WorkerQueue, fast_rate_limiter

log = structlog.get_logger("agones.localcluster.controllers.replicaset")
Obj = dict[str, Any]
CONTROLLER_UID_INDEX = "controller-uid"
EXPECTATIONS_TIMEOUT = 300.0


def controller_ref(obj: Obj) -> Obj | None:
    """The ownerReference with `controller: true`, if any."""
    refs = (obj.get("metadata") or {}).get("ownerReferences") or []
    return next((r for r in refs if isinstance(r, dict) and r.get("controller")), None)


def controller_uid_index(obj: Any) -> list[str]:
    ref = controller_ref(obj) if isinstance(obj, dict) else None
    return [str(ref.get("uid", ""))] if ref else []


def controlled_informer(factory: SharedInformerFactory, resource: Resource) -> Any:
    """The factory's informer of `resource` with the controller-uid index (added once, whichever
    controller asks first)."""
    informer = factory.for_resource(resource)
    if CONTROLLER_UID_INDEX not in informer.informer().indexer.get_indexers():
        informer.informer().add_indexers({CONTROLLER_UID_INDEX: controller_uid_index})
    return informer


def owner_reference(owner: Obj, kind: str) -> Obj:
    md = owner["metadata"]
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "name": md["name"],
        "uid": md["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _parse(stamp: Any) -> datetime | None:
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None


def ready_since(pod: Obj) -> datetime | None:
    """When the pod last became Ready, or None when it is not Ready."""
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            if cond.get("status") != "True":
                return None
            return _parse(cond.get("lastTransitionTime")) or datetime.min.replace(tzinfo=UTC)
    return None


def is_active(pod: Obj) -> bool:
    phase = (pod.get("status") or {}).get("phase")
    return phase not in ("Succeeded", "Failed") and not pod["metadata"].get("deletionTimestamp")


def available_in(pod: Obj, min_ready: int, now: datetime) -> float | None:
    """Seconds until the pod counts as available (0: it does), None when it is not Ready."""
    since = ready_since(pod)
    if since is None:
        return None
    return max(0.0, min_ready - (now - since).total_seconds())


def pod_deletion_order(pod: Obj) -> tuple[int, int, int, float]:
    """Sort key: the pods to delete first sort first (controller.ActivePods' order, reversed)."""
    spec, status = pod.get("spec") or {}, pod.get("status") or {}
    phase_rank = {"Pending": 0, "Unknown": 1, "Running": 2}.get(status.get("phase", "Pending"), 0)
    since = ready_since(pod)
    return (
        1 if spec.get("nodeName") else 0,
        phase_rank,
        0 if since is None else 1,
        -(since.timestamp() if since is not None else 0.0),
    )


class Expectations:
    """How many creates and deletes of each controller's are still to be observed."""

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self._pending: dict[str, tuple[int, int, float]] = {}

    def expect(self, key: str, adds: int, deletes: int) -> None:
        self._pending[key] = (adds, deletes, self.clock.now())

    def observed(self, key: str, adds: int = 0, deletes: int = 0) -> None:
        if key in self._pending:
            a, d, at = self._pending[key]
            self._pending[key] = (a - adds, d - deletes, at)

    def satisfied(self, key: str) -> bool:
        entry = self._pending.get(key)
        if entry is None:
            return True
        adds, deletes, at = entry
        if (adds <= 0 and deletes <= 0) or self.clock.now() - at > EXPECTATIONS_TIMEOUT:
            del self._pending[key]
            return True
        return False

    def forget(self, key: str) -> None:
        self._pending.pop(key, None)


class ReplicaSetController:
    """Keeps `spec.replicas` pods of each ReplicaSet (see the module docstring)."""

    def __init__(
        self, client: RESTClient, factory: SharedInformerFactory, clock: Clock | None = None
    ) -> None:
        self.client = client
        self.clock = clock or RealClock()
        self.replica_sets = factory.for_resource(REPLICA_SETS)
        self.pods = controlled_informer(factory, PODS)
        self.expectations = Expectations(self.clock)
        self.workerqueue = WorkerQueue(
            self.sync_replica_set, log, "replicaset", "replicaset", fast_rate_limiter(5.0)
        )
        self.replica_sets.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self.workerqueue.enqueue_immediately,
                update_func=lambda _old, new: self.workerqueue.enqueue_immediately(new),
                delete_func=self._on_rs_delete,
            )
        )
        self.pods.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=lambda pod: self._on_pod(pod, adds=1),
                update_func=self._on_pod_update,
                delete_func=self._on_pod_delete,
            )
        )

    async def run(self, workers: int = 2) -> None:
        await self.workerqueue.run(workers)

    def _owner_key(self, pod: Obj) -> str | None:
        ref = controller_ref(pod)
        if ref is None or ref.get("kind") != "ReplicaSet":
            return None
        return f"{pod['metadata'].get('namespace', '')}/{ref.get('name', '')}"

    def _on_pod(self, pod: Obj, adds: int = 0, deletes: int = 0) -> None:
        key = self._owner_key(pod)
        if key is not None:
            self.expectations.observed(key, adds, deletes)
            self.workerqueue.enqueue_immediately(key)

    def _on_pod_update(self, old: Obj, new: Obj) -> None:
        terminating = new["metadata"].get("deletionTimestamp") and not old["metadata"].get(
            "deletionTimestamp"
        )
        self._on_pod(new, deletes=1 if terminating else 0)

    def _on_pod_delete(self, obj: Any) -> None:
        pod = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if isinstance(pod, dict) and not pod["metadata"].get("deletionTimestamp"):
            self._on_pod(pod, deletes=1)
        elif isinstance(pod, dict):
            self._on_pod(pod)

    def _on_rs_delete(self, obj: Any) -> None:
        rs = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if isinstance(rs, dict):
            self.expectations.forget(
                f"{rs['metadata'].get('namespace', '')}/{rs['metadata']['name']}"
            )

    def _active_pods(self, rs: Obj) -> list[Obj]:
        cache = self.pods.informer().mutation_cache()
        return [
            p for p in cache.by_index(CONTROLLER_UID_INDEX, rs["metadata"]["uid"]) if is_active(p)
        ]

    async def sync_replica_set(self, key: str) -> None:
        rs = self.replica_sets.informer().mutation_cache().get_by_key(key)
        if rs is None:
            self.expectations.forget(key)
            return
        pods = self._active_pods(rs)
        wanted = int((rs.get("spec") or {}).get("replicas", 1))
        failure: Exception | None = None
        if self.expectations.satisfied(key) and not rs["metadata"].get("deletionTimestamp"):
            try:
                await self._manage_replicas(key, rs, pods, wanted)
            except ApiError as err:
                failure = err
            pods = self._active_pods(rs)
        wait = await self._update_status(rs, pods)
        if failure is not None:
            raise failure
        if wait is not None:
            raise Requeue("pods not yet available", after=wait)

    async def _manage_replicas(self, key: str, rs: Obj, pods: list[Obj], wanted: int) -> None:
        diff = len(pods) - wanted
        if diff < 0:
            self.expectations.expect(key, -diff, 0)
            await self._batch([functools.partial(self._create_pod, key, rs) for _ in range(-diff)])
        elif diff > 0:
            doomed = sorted(pods, key=pod_deletion_order)[:diff]
            self.expectations.expect(key, 0, diff)
            await self._batch([functools.partial(self._delete_pod, key, p) for p in doomed])

    async def _batch(self, calls: list[Callable[[], Any]]) -> None:
        results = await asyncio.gather(*(call() for call in calls), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result

    async def _create_pod(self, key: str, rs: Obj) -> None:
        template = (rs.get("spec") or {}).get("template") or {}
        md = template.get("metadata") or {}
        body = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "generateName": f"{rs['metadata']['name']}-",
                "labels": dict(md.get("labels") or {}),
                "annotations": dict(md.get("annotations") or {}),
                "ownerReferences": [owner_reference(rs, "ReplicaSet")],
            },
            "spec": template.get("spec") or {},
        }
        try:
            await self.client.create(PODS, body, namespace=rs["metadata"]["namespace"])
        except ApiError:
            self.expectations.observed(key, adds=1)
            raise

    async def _delete_pod(self, key: str, pod: Obj) -> None:
        md = pod["metadata"]
        try:
            deleted = await self.client.delete(PODS, md["name"], md["namespace"])
        except ApiError as err:
            self.expectations.observed(key, deletes=1)
            if err.status_code != 404:
                raise
            return
        if deleted.get("kind") == "Pod":
            self.pods.informer().mutation_cache().mutation(deleted)

    async def _update_status(self, rs: Obj, pods: list[Obj]) -> float | None:
        spec = rs.get("spec") or {}
        min_ready = int(spec.get("minReadySeconds") or 0)
        now = datetime.fromtimestamp(self.clock.now(), UTC)
        template_labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        waits = [available_in(p, min_ready, now) for p in pods]
        status = {
            "replicas": len(pods),
            "fullyLabeledReplicas": sum(
                1
                for p in pods
                if label_selector_as_selector({"matchLabels": template_labels}).matches(
                    p["metadata"].get("labels") or {}
                )
            ),
            "readyReplicas": sum(1 for w in waits if w is not None),
            "availableReplicas": sum(1 for w in waits if w == 0),
            "observedGeneration": rs["metadata"].get("generation", 1),
        }
        old = rs.get("status") or {}
        if any(old.get(k, 0) != v for k, v in status.items()):
            written = await self.client.update_status(REPLICA_SETS, {**rs, "status": status})
            self.replica_sets.informer().mutation_cache().mutation(written)
        pending = [w for w in waits if w]
        return min(pending) if pending else None
