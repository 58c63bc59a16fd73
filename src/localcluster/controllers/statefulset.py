"""The StatefulSet controller of the local cluster (kube-controller-manager's
`pkg/controller/statefulset`: `stateful_set.go` the informers and queue, `stateful_set_control.go`
the revisions and the update, `stateful_pod_control.go` the pod and claim writes).

`sync_stateful_set(key)` reads the set through its informer's mutation cache and the pods and
ControllerRevisions it controls (controllerRef uid, through indexes), then:

1. revisions (`get_stateful_set_revisions`): the update revision is the existing revision equal to
   the set's template (the newest one is reused; an older one is renumbered to the next revision
   number) or a new ControllerRevision `<set>-<hash>`; a name taken by a different template bumps
   `status.collisionCount` and retries. The current revision is `status.currentRevision`'s, else
   the update revision.
2. the plan of `statefulset_control.plan_update`, executed in order: a pod is created after its
   claims (`<claim>-<set>-N`, kept when they exist; with `whenDeleted: Delete` owned by the set,
   so the garbage collector removes them with it), deleted (with `whenScaled: Delete`, a condemned
   pod's claims are first given the pod as owner), or relabelled; each write records the event
   kube-controller-manager records (`SuccessfulCreate`, `SuccessfulDelete`, `FailedCreate`).
3. the status, written once when it changed; then revisions beyond `revisionHistoryLimit` that no
   pod uses and that are neither current nor the update revision are deleted, oldest first.

Keys come from set adds and updates, and from every event of a pod or revision a set controls.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import structlog

from ...client.errors import ApiError
from ...client.rest import RESTClient
from ...client.versioned.resources import (
    CONTROLLER_REVISIONS,
    PERSISTENT_VOLUME_CLAIMS,
    PODS,
    STATEFUL_SETS,
)
from ...clock import Clock, RealClock
from ...informers import DeletedFinalStateUnknown, ResourceEventHandlerFuncs, SharedInformerFactory
from ...record import EventRecorder
from ...workqueue import Requeue, WorkerQueue, fast_rate_limiter
from .replicaset import CONTROLLER_UID_INDEX, controlled_informer, controller_ref
from .statefulset_control import Action, plan_update
from .statefulset_utils import (
    POD_INDEX_LABEL,
    POD_NAME_LABEL,
    apply_revision,
    equal_revision,
    get_ordinal,
    new_revision,
    persistent_volume_claims,
    revision_of,
)

log = structlog.get_logger("agones.localcluster.controllers.statefulset")
Obj = dict[str, Any]
STATUS_KEYS = (
    "observedGeneration",
    "replicas",
    "readyReplicas",
    "availableReplicas",
    "currentReplicas",
    "updatedReplicas",
    "currentRevision",
    "updateRevision",
    "collisionCount",
)


class StatefulSetController:
    """Keeps each StatefulSet's ordinal pods and claims (see the module docstring)."""

    def __init__(
        self,
        client: RESTClient,
        factory: SharedInformerFactory,
        recorder: EventRecorder | None = None,
        clock: Clock | None = None,
    ) -> None:
        self.client = client
        self.recorder = recorder
        self.clock = clock or RealClock()
        self.sets = factory.for_resource(STATEFUL_SETS)
        self.pods = controlled_informer(factory, PODS)
        self.revisions = controlled_informer(factory, CONTROLLER_REVISIONS)
        self.claims = factory.for_resource(PERSISTENT_VOLUME_CLAIMS)
        self.workerqueue = WorkerQueue(
            self.sync_stateful_set, log, "statefulset", "statefulset", fast_rate_limiter(5.0)
        )
        self.sets.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self.workerqueue.enqueue_immediately,
                update_func=lambda _old, new: self.workerqueue.enqueue_immediately(new),
            )
        )
        for informer in (self.pods.informer(), self.revisions.informer()):
            informer.add_event_handler(
                ResourceEventHandlerFuncs(
                    add_func=self._on_owned,
                    update_func=lambda _old, new: self._on_owned(new),
                    delete_func=self._on_owned,
                )
            )

    async def run(self, workers: int = 2) -> None:
        await self.workerqueue.run(workers)

    def _on_owned(self, obj: Any) -> None:
        owned = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if not isinstance(owned, dict):
            return
        ref = controller_ref(owned)
        if ref is not None and ref.get("kind") == "StatefulSet":
            ns = owned["metadata"].get("namespace", "")
            self.workerqueue.enqueue_immediately(f"{ns}/{ref.get('name', '')}")

    def _event(self, obj: Obj, kind: str, reason: str, message: str) -> None:
        if self.recorder is not None:
            self.recorder.event(obj, kind, reason, message)

    def _owned(self, informer: Any, sts: Obj) -> list[Obj]:
        cache = informer.informer().mutation_cache()
        return list(cache.by_index(CONTROLLER_UID_INDEX, sts["metadata"]["uid"]))

    async def sync_stateful_set(self, key: str) -> None:
        sts = self.sets.informer().mutation_cache().get_by_key(key)
        if sts is None:
            return
        pods = self._owned(self.pods, sts)
        revisions = sorted(self._owned(self.revisions, sts), key=lambda r: r.get("revision", 0))
        current, update = await self.get_stateful_set_revisions(sts, revisions)
        now = datetime.fromtimestamp(self.clock.now(), UTC)
        current_name, update_name = current["metadata"]["name"], update["metadata"]["name"]
        plan = plan_update(apply_revision(sts, current), sts, pods, current_name, update_name, now)
        failure: ApiError | None = None
        for action in plan.actions:
            try:
                await self._execute(sts, action)
            except ApiError as err:
                failure = err
                break
        await self._update_status(sts, plan.status)
        await self._truncate_history(sts, pods, revisions, {current_name, update_name})
        if failure is not None:
            raise failure
        if plan.wait is not None:
            raise Requeue("pods not yet available", after=plan.wait)

    async def get_stateful_set_revisions(self, sts: Obj, revisions: list[Obj]) -> tuple[Obj, Obj]:
        """(current, update) revision, creating or renumbering the update revision as needed."""
        status = sts.get("status") or {}
        collisions = status.get("collisionCount")
        next_number = (revisions[-1].get("revision", 0) if revisions else 0) + 1
        candidate = new_revision(sts, next_number, collisions)
        equal = [r for r in revisions if equal_revision(r, candidate)]
        if equal and equal[-1] is revisions[-1]:
            update = equal[-1]
        elif equal:
            update = await self.client.update(
                CONTROLLER_REVISIONS, {**equal[-1], "revision": next_number}
            )
            self.revisions.informer().mutation_cache().mutation(update)
        else:
            update = await self._create_revision(sts, candidate)
        current = next(
            (r for r in revisions if r["metadata"]["name"] == status.get("currentRevision")),
            update,
        )
        return current, update

    async def _create_revision(self, sts: Obj, candidate: Obj) -> Obj:
        ns = sts["metadata"]["namespace"]
        try:
            created = await self.client.create(CONTROLLER_REVISIONS, candidate, namespace=ns)
        except ApiError as err:
            if err.status_code != 409:
                raise
            existing = await self.client.get(
                CONTROLLER_REVISIONS, candidate["metadata"]["name"], namespace=ns
            )
            if equal_revision(existing, candidate) and controller_ref(existing) is not None:
                return existing
            collisions = int((sts.get("status") or {}).get("collisionCount") or 0) + 1
            written = await self.client.update_status(
                STATEFUL_SETS,
                {**sts, "status": {**(sts.get("status") or {}), "collisionCount": collisions}},
            )
            self.sets.informer().mutation_cache().mutation(written)
            raise Requeue("controller revision hash collision") from err
        self.revisions.informer().mutation_cache().mutation(created)
        return created

    async def _execute(self, sts: Obj, action: Action) -> None:
        if action.verb == "create":
            await self._create_pod(sts, action.pod)
        elif action.verb == "delete":
            await self._delete_pod(sts, action.pod)
        else:
            await self._update_identity(sts, action.pod)

    async def _create_claims(self, sts: Obj, ordinal: int) -> None:
        ns = sts["metadata"]["namespace"]
        retention = (sts.get("spec") or {}).get("persistentVolumeClaimRetentionPolicy") or {}
        cache = self.claims.informer().mutation_cache()
        for claim in persistent_volume_claims(sts, ordinal):
            if cache.get_by_key(f"{ns}/{claim['metadata']['name']}") is not None:
                continue
            if retention.get("whenDeleted") == "Delete":
                owner = {
                    "apiVersion": "apps/v1",
                    "kind": "StatefulSet",
                    "name": sts["metadata"]["name"],
                    "uid": sts["metadata"]["uid"],
                }
                claim["metadata"]["ownerReferences"] = [owner]
            try:
                created = await self.client.create(PERSISTENT_VOLUME_CLAIMS, claim, namespace=ns)
            except ApiError as err:
                if err.status_code == 409:
                    continue
                self._event(
                    sts,
                    "Warning",
                    "FailedCreate",
                    f"create Claim {claim['metadata']['name']} for Pod "
                    f"{sts['metadata']['name']}-{ordinal} in StatefulSet "
                    f"{sts['metadata']['name']} failed error: {err}",
                )
                raise
            cache.mutation(created)
            self._event(
                sts,
                "Normal",
                "SuccessfulCreate",
                f"create Claim {claim['metadata']['name']} Pod {sts['metadata']['name']}-{ordinal} "
                f"in StatefulSet {sts['metadata']['name']} success",
            )

    async def _create_pod(self, sts: Obj, body: Obj) -> None:
        set_name, name = sts["metadata"]["name"], body["metadata"]["name"]
        await self._create_claims(sts, get_ordinal(set_name, name))
        try:
            created = await self.client.create(PODS, body, namespace=sts["metadata"]["namespace"])
        except ApiError as err:
            if err.status_code == 409:
                return
            self._event(
                sts,
                "Warning",
                "FailedCreate",
                f"create Pod {name} in StatefulSet {set_name} failed error: {err}",
            )
            raise
        self.pods.informer().mutation_cache().mutation(created)
        self._event(
            sts,
            "Normal",
            "SuccessfulCreate",
            f"create Pod {name} in StatefulSet {set_name} successful",
        )

    async def _delete_pod(self, sts: Obj, pod: Obj) -> None:
        md = pod["metadata"]
        set_name = sts["metadata"]["name"]
        retention = (sts.get("spec") or {}).get("persistentVolumeClaimRetentionPolicy") or {}
        ordinal = get_ordinal(set_name, md["name"])
        replicas = int((sts.get("spec") or {}).get("replicas", 1))
        if retention.get("whenScaled") == "Delete" and ordinal >= replicas:
            await self._claims_owned_by_pod(sts, pod, ordinal)
        try:
            deleted = await self.client.delete(PODS, md["name"], md["namespace"])
        except ApiError as err:
            if err.status_code == 404:
                return
            raise
        if deleted.get("kind") == "Pod":
            self.pods.informer().mutation_cache().mutation(deleted)
        self._event(
            sts,
            "Normal",
            "SuccessfulDelete",
            f"delete Pod {md['name']} in StatefulSet {set_name} successful",
        )

    async def _claims_owned_by_pod(self, sts: Obj, pod: Obj, ordinal: int) -> None:
        owner = {"apiVersion": "v1", "kind": "Pod", "name": pod["metadata"]["name"]}
        owner["uid"] = pod["metadata"]["uid"]
        for claim in persistent_volume_claims(sts, ordinal):
            try:
                await self.client.patch(
                    PERSISTENT_VOLUME_CLAIMS,
                    claim["metadata"]["name"],
                    {"metadata": {"ownerReferences": [owner]}},
                    namespace=sts["metadata"]["namespace"],
                )
            except ApiError as err:
                if err.status_code != 404:
                    raise

    async def _update_identity(self, sts: Obj, pod: Obj) -> None:
        md = pod["metadata"]
        ordinal = get_ordinal(sts["metadata"]["name"], md["name"])
        labels = {POD_NAME_LABEL: md["name"], POD_INDEX_LABEL: str(ordinal)}
        patched = await self.client.patch(
            PODS, md["name"], {"metadata": {"labels": labels}}, namespace=md["namespace"]
        )
        self.pods.informer().mutation_cache().mutation(patched)

    async def _update_status(self, sts: Obj, status: Obj) -> None:
        old = sts.get("status") or {}
        if all(old.get(k) == status.get(k) for k in STATUS_KEYS):
            return
        merged = {**old, **status}
        written = await self.client.update_status(STATEFUL_SETS, {**sts, "status": merged})
        self.sets.informer().mutation_cache().mutation(written)

    async def _truncate_history(
        self, sts: Obj, pods: list[Obj], revisions: list[Obj], keep: set[str]
    ) -> None:
        live = keep | {revision_of(p) for p in pods}
        history = [r for r in revisions if r["metadata"]["name"] not in live]
        limit = int((sts.get("spec") or {}).get("revisionHistoryLimit", 10))
        for revision in history[: max(0, len(history) - limit)]:
            try:
                await self.client.delete(
                    CONTROLLER_REVISIONS, revision["metadata"]["name"], sts["metadata"]["namespace"]
                )
            except ApiError as err:
                if err.status_code != 404:
                    raise
