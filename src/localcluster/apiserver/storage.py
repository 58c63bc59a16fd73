"""Defaults and validation of PersistentVolumeClaims, PersistentVolumes and StorageClasses
(kube-apiserver's `pkg/apis/core/v1/defaults.go`, `pkg/apis/core/validation` and
`pkg/apis/storage/validation`, the part clients observe), and the DefaultStorageClass admission
plugin.

A claim needs at least one access mode (of `ACCESS_MODES`) and a positive `resources.requests
.storage`; `volumeMode` defaults to `Filesystem`, `status.phase` to `Pending`. On update its spec is
immutable but for `resources.requests` and for `volumeName` while it is empty (the binder sets it).
A claim created without a `storageClassName` gets the class annotated
`storageclass.kubernetes.io/is-default-class: "true"` (`default_storage_class`). A volume needs a
capacity, access modes and exactly one source (`hostPath` or `local` are the ones the local cluster
provisions); `persistentVolumeReclaimPolicy` defaults to `Retain`. A class needs a `provisioner`;
`reclaimPolicy` defaults to `Delete`, `volumeBindingMode` to `Immediate`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ...apis import field
from ...apis.field import FieldError
from ...apis.meta.quantity import Quantity, QuantityError

Obj = dict[str, Any]
ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class"
_SOURCES = ("hostPath", "local", "nfs", "csi", "iscsi", "fc", "gcePersistentDisk")
_CLAIM_IMMUTABLE = (
    "spec is immutable after creation except resources.requests and "
    "volumeAttributesClassName for bound claims"
)


def _access_mode_errors(spec: Obj) -> list[FieldError]:
    modes = spec.get("accessModes")
    if not modes:
        return [field.required("spec.accessModes", "at least 1 access mode is required")]
    if not isinstance(modes, list):
        return [field.invalid("spec.accessModes", modes, "must be a list")]
    return [
        field.not_supported("spec.accessModes", mode, ACCESS_MODES)
        for mode in modes
        if mode not in ACCESS_MODES
    ]


def _positive_storage(values: Any, path: str) -> list[FieldError]:
    storage = values.get("storage") if isinstance(values, dict) else None
    if storage is None:
        return [field.required(path, "")]
    try:
        quantity = Quantity.parse(storage)
    except (QuantityError, TypeError):
        return [field.invalid(path, storage, "must be a quantity")]
    if quantity.cmp(Quantity.parse(0)) <= 0:
        return [field.invalid(path, storage, "must be greater than zero")]
    return []


def validate_claim(obj: Obj) -> list[FieldError]:
    """Default a PersistentVolumeClaim in place and return its field errors."""
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return [field.invalid("spec", spec, "must be an object")]
    spec.setdefault("volumeMode", "Filesystem")
    errs = _access_mode_errors(spec)
    resources = spec.get("resources") or {}
    if not isinstance(resources, dict):
        return [*errs, field.invalid("spec.resources", resources, "must be an object")]
    errs += _positive_storage(resources.get("requests"), "spec.resources[storage]")
    if spec["volumeMode"] not in ("Block", "Filesystem"):
        errs.append(
            field.not_supported("spec.volumeMode", spec["volumeMode"], ["Block", "Filesystem"])
        )
    return errs


def create_claim(obj: Obj) -> list[FieldError]:
    obj["status"] = {"phase": "Pending"}
    return validate_claim(obj)


def validate_claim_update(new: Obj, old: Obj) -> list[FieldError]:
    new_spec = dict(new.get("spec") or {})
    old_spec = dict(old.get("spec") or {})
    if not old_spec.get("volumeName"):
        new_spec.pop("volumeName", None)
        old_spec.pop("volumeName", None)
    for spec in (new_spec, old_spec):
        spec.pop("resources", None)
        spec.pop("volumeAttributesClassName", None)
    if new_spec != old_spec:
        return [field.forbidden("spec", _CLAIM_IMMUTABLE)]
    return []


def default_storage_class(obj: Obj, classes: Iterable[Obj]) -> None:
    """The DefaultStorageClass admission plugin: a claim with no class gets the default one."""
    spec = obj.get("spec")
    if not isinstance(spec, dict) or "storageClassName" in spec:
        return
    defaults = [
        c
        for c in classes
        if ((c.get("metadata") or {}).get("annotations") or {}).get(DEFAULT_CLASS_ANNOTATION)
        == "true"
    ]
    if defaults:
        newest = max(defaults, key=lambda c: str(c["metadata"].get("creationTimestamp", "")))
        spec["storageClassName"] = newest["metadata"]["name"]


def validate_volume(obj: Obj) -> list[FieldError]:
    """Default a PersistentVolume in place and return its field errors."""
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return [field.invalid("spec", spec, "must be an object")]
    spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
    spec.setdefault("volumeMode", "Filesystem")
    errs = _access_mode_errors(spec)
    errs += _positive_storage(spec.get("capacity"), "spec.capacity[storage]")
    sources = [s for s in _SOURCES if s in spec]
    if not sources:
        errs.append(field.required("spec", "must specify a volume type"))
    elif len(sources) > 1:
        errs.append(
            field.forbidden(f"spec.{sources[1]}", "may not specify more than 1 volume type")
        )
    for name in ("hostPath", "local"):
        source = spec.get(name)
        if isinstance(source, dict) and not source.get("path"):
            errs.append(field.required(f"spec.{name}.path", ""))
    policy = spec["persistentVolumeReclaimPolicy"]
    if policy not in ("Delete", "Recycle", "Retain"):
        errs.append(
            field.not_supported(
                "spec.persistentVolumeReclaimPolicy", policy, ["Delete", "Recycle", "Retain"]
            )
        )
    return errs


def create_volume(obj: Obj) -> list[FieldError]:
    obj["status"] = {"phase": "Pending"}
    return validate_volume(obj)


def validate_storage_class(obj: Obj) -> list[FieldError]:
    """Default a StorageClass in place and return its field errors."""
    obj.setdefault("reclaimPolicy", "Delete")
    obj.setdefault("volumeBindingMode", "Immediate")
    errs = []
    if not obj.get("provisioner"):
        errs.append(field.required("provisioner", ""))
    if obj["reclaimPolicy"] not in ("Delete", "Retain"):
        errs.append(
            field.not_supported("reclaimPolicy", obj["reclaimPolicy"], ["Delete", "Retain"])
        )
    if obj["volumeBindingMode"] not in ("Immediate", "WaitForFirstConsumer"):
        errs.append(
            field.not_supported(
                "volumeBindingMode",
                obj["volumeBindingMode"],
                ["Immediate", "WaitForFirstConsumer"],
            )
        )
    return errs


def validate_storage_class_update(new: Obj, old: Obj) -> list[FieldError]:
    errs = []
    for name in ("provisioner", "reclaimPolicy", "volumeBindingMode", "parameters"):
        if new.get(name) != old.get(name):
            errs.append(field.forbidden(name, "updates to " + name + " are forbidden."))
    return errs
