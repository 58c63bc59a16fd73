"""The local cluster's volume provisioner and binder (what kube-controller-manager's PV controller,
`pkg/controller/volume/persistentvolume`, and an external provisioner such as kind's local-path do
together), on one machine.

`default_storage_class()` is the StorageClass `standard` the stack creates, marked as the default
class (so a claim without `storageClassName` gets it at admission), provisioned by
`PROVISIONER`. `LocalVolumeProvisioner.sync_claim(key)`:

* a Pending claim of a class of `PROVISIONER` gets a PersistentVolume `pvc-<claim uid>` whose
  `hostPath` is a directory of its own under `root` (`<root>/pvc-<uid>`), with the claim's requested
  capacity and access modes, the class's reclaim policy and a `claimRef`; then the volume is marked
  `Bound` and the claim gets `spec.volumeName`, `status.phase: Bound`, its capacity and access modes
  (the annotations `pv.kubernetes.io/provisioned-by`, `bind-completed` and `bound-by-controller`
  as the real controllers write them). Claims of other classes are left alone (static binding is
  not done here).
* when a claim is gone, its volume is `Released` (reclaim policy `Retain`: the directory stays) or
  deleted with its directory (`Delete`).

A pod's `persistentVolumeClaim` volume is then resolved by the kubelet to that directory
(`nodes/volumes_pvc.py`): the data outlives the pod, so a StatefulSet pod recreated under its name
finds its files.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import structlog

from ...client.errors import ApiError
from ...client.rest import RESTClient
from ...client.versioned.resources import (
    PERSISTENT_VOLUME_CLAIMS,
    PERSISTENT_VOLUMES,
    STORAGE_CLASSES,
)
from ...informers import DeletedFinalStateUnknown, ResourceEventHandlerFuncs, SharedInformerFactory
from ...workqueue import WorkerQueue, fast_rate_limiter
from ..apiserver.storage import DEFAULT_CLASS_ANNOTATION

log = structlog.get_logger("agones.localcluster.controllers.volumes")
Obj = dict[str, Any]
PROVISIONER = "local.agones-py.dev/hostpath"
DEFAULT_CLASS = "standard"


CLAIM_INDEX = "claim"


def claim_index(volume: Any) -> list[str]:
    """`<namespace>/<name>` of the claim a volume's claimRef names."""
    ref = ((volume.get("spec") or {}).get("claimRef") or {}) if isinstance(volume, dict) else {}
    return [f"{ref.get('namespace', '')}/{ref['name']}"] if ref.get("name") else []


def default_storage_class() -> Obj:
    return {
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": DEFAULT_CLASS, "annotations": {DEFAULT_CLASS_ANNOTATION: "true"}},
        "provisioner": PROVISIONER,
        "reclaimPolicy": "Delete",
        "volumeBindingMode": "Immediate",
    }


def volume_for_claim(claim: Obj, storage_class: Obj, root: Path) -> Obj:
    """The PersistentVolume provisioned for a claim (pure)."""
    md, spec = claim["metadata"], claim.get("spec") or {}
    name = f"pvc-{md['uid']}"
    requests = (spec.get("resources") or {}).get("requests") or {}
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolume",
        "metadata": {
            "name": name,
            "annotations": {"pv.kubernetes.io/provisioned-by": PROVISIONER},
        },
        "spec": {
            "capacity": {"storage": requests.get("storage", "1Gi")},
            "accessModes": list(spec.get("accessModes") or ["ReadWriteOnce"]),
            "persistentVolumeReclaimPolicy": storage_class.get("reclaimPolicy", "Delete"),
            "storageClassName": storage_class["metadata"]["name"],
            "volumeMode": spec.get("volumeMode", "Filesystem"),
            "hostPath": {"path": str(root / name), "type": "DirectoryOrCreate"},
            "claimRef": {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "namespace": md["namespace"],
                "name": md["name"],
                "uid": md["uid"],
            },
        },
    }


class LocalVolumeProvisioner:
    """Provisions, binds and reclaims hostPath volumes for claims (see the module docstring)."""

    def __init__(self, client: RESTClient, factory: SharedInformerFactory, root: Path) -> None:
        self.client = client
        self.root = root
        self.claims = factory.for_resource(PERSISTENT_VOLUME_CLAIMS)
        self.volumes = factory.for_resource(PERSISTENT_VOLUMES, indexers={CLAIM_INDEX: claim_index})
        self.classes = factory.for_resource(STORAGE_CLASSES)
        self.workerqueue = WorkerQueue(
            self.sync_claim, log, "volumes", "persistentvolumeclaim", fast_rate_limiter(5.0)
        )
        self.claims.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self.workerqueue.enqueue_immediately,
                update_func=lambda _old, new: self.workerqueue.enqueue_immediately(new),
                delete_func=self._on_claim_delete,
            )
        )

    async def run(self, workers: int = 1) -> None:
        await self.workerqueue.run(workers)

    def _on_claim_delete(self, obj: Any) -> None:
        claim = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        if isinstance(claim, dict):
            md = claim["metadata"]
            self.workerqueue.enqueue_immediately(f"{md.get('namespace', '')}/{md['name']}")

    def _volume_of(self, key: str) -> Obj | None:
        found = self.volumes.informer().mutation_cache().by_index(CLAIM_INDEX, key)
        return dict(found[0]) if found else None

    async def sync_claim(self, key: str) -> None:
        claim = self.claims.informer().mutation_cache().get_by_key(key)
        volume = self._volume_of(key)
        if claim is None or claim["metadata"].get("deletionTimestamp"):
            if volume is not None and claim is None:
                await self._reclaim(volume)
            return
        if (claim.get("status") or {}).get("phase") == "Bound":
            return
        class_name = (claim.get("spec") or {}).get("storageClassName")
        storage_class = self.classes.informer().mutation_cache().get_by_key(str(class_name))
        if storage_class is None or storage_class.get("provisioner") != PROVISIONER:
            return
        if volume is None or volume["spec"]["claimRef"].get("uid") != claim["metadata"]["uid"]:
            volume = await self._provision(claim, storage_class)
        await self._bind(claim, volume)

    async def _provision(self, claim: Obj, storage_class: Obj) -> Obj:
        body = volume_for_claim(claim, storage_class, self.root)
        Path(body["spec"]["hostPath"]["path"]).mkdir(parents=True, exist_ok=True)
        try:
            created = await self.client.create(PERSISTENT_VOLUMES, body)
        except ApiError as err:
            if err.status_code != 409:
                raise
            created = await self.client.get(PERSISTENT_VOLUMES, body["metadata"]["name"])
        self.volumes.informer().mutation_cache().mutation(created)
        log.info("provisioned volume", volume=created["metadata"]["name"])
        return created

    async def _bind(self, claim: Obj, volume: Obj) -> None:
        if (volume.get("status") or {}).get("phase") != "Bound":
            volume = await self.client.update_status(
                PERSISTENT_VOLUMES, {**volume, "status": {"phase": "Bound"}}
            )
            self.volumes.informer().mutation_cache().mutation(volume)
        md = claim["metadata"]
        annotations = {
            **(md.get("annotations") or {}),
            "pv.kubernetes.io/bind-completed": "yes",
            "pv.kubernetes.io/bound-by-controller": "yes",
            "volume.kubernetes.io/storage-provisioner": PROVISIONER,
        }
        claim = await self.client.update(
            PERSISTENT_VOLUME_CLAIMS,
            {
                **claim,
                "metadata": {**md, "annotations": annotations},
                "spec": {**claim["spec"], "volumeName": volume["metadata"]["name"]},
            },
        )
        status = {
            "phase": "Bound",
            "accessModes": volume["spec"]["accessModes"],
            "capacity": volume["spec"]["capacity"],
        }
        written = await self.client.update_status(
            PERSISTENT_VOLUME_CLAIMS, {**claim, "status": status}
        )
        self.claims.informer().mutation_cache().mutation(written)

    async def _reclaim(self, volume: Obj) -> None:
        name = volume["metadata"]["name"]
        if volume["spec"].get("persistentVolumeReclaimPolicy") == "Delete":
            try:
                await self.client.delete(PERSISTENT_VOLUMES, name)
            except ApiError as err:
                if err.status_code != 404:
                    raise
            path = Path((volume["spec"].get("hostPath") or {}).get("path", ""))
            if path.is_relative_to(self.root):
                shutil.rmtree(path, ignore_errors=True)
            return
        if (volume.get("status") or {}).get("phase") != "Released":
            written = await self.client.update_status(
                PERSISTENT_VOLUMES, {**volume, "status": {"phase": "Released"}}
            )
            self.volumes.informer().mutation_cache().mutation(written)
