"""Deletion semantics: preconditions, finalizers and deletionTimestamp, propagation policies
(Background, Foreground, Orphan, via the garbage collector's finalizers), graceful pod deletion and
deletecollection, as the generic registry store and the pod strategy implement them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import errors, meta
from .registryops import RegistryOps
from .resources import ResourceInfo
from .selectors import FieldSelector, LabelSelector
from .store import Entry

Obj = dict[str, Any]


@dataclass
class DeleteOptions:
    propagation: str = ""
    dry_run: bool = False
    uid: str | None = None
    resource_version: str | None = None
    grace_period: int | None = None
    # The deprecated orphanDependents=false: the one case kube-apiserver answers 202 Accepted to a
    # deletion that has not finished (every other one gets 200 with the object).
    cascade_requested: bool = False


async def delete(
    reg: RegistryOps,
    info: ResourceInfo,
    ns: str,
    name: str,
    opts: DeleteOptions,
    system: bool = False,
) -> tuple[Entry, bool]:
    """Delete or start deleting; returns (object, whether it is gone now).

    `system` deletions (the garbage collector's, the namespace controller's) skip fault injection.
    """
    if not system:
        await reg.faults.before_write(info.group, info.resource, name)
    current = reg.get(info, ns, name)
    old = current.obj
    omd = old["metadata"]
    _check_preconditions(info, name, omd, opts)
    if reg.admission is not None:
        await reg.admission.validate("DELETE", info, "", None, old, opts.dry_run)
    finalizers = _finalizers_for_propagation(omd, opts.propagation)
    pending_spec = (
        info.kind == "Namespace"
        and not info.group
        and bool((old.get("spec") or {}).get("finalizers"))
    )
    grace = _pod_grace_period(reg, info, old, opts)
    if grace > 0:
        pending = omd.get("deletionGracePeriodSeconds")
        unchanged = finalizers == list(omd.get("finalizers") or [])
        if omd.get("deletionTimestamp") and pending is not None and pending <= grace and unchanged:
            return current, False
        obj = _with_own_metadata(old)
        md = obj["metadata"]
        md["finalizers"] = finalizers
        if not finalizers:
            md.pop("finalizers")
        md["deletionTimestamp"] = meta.rfc3339_after(grace)
        md["deletionGracePeriodSeconds"] = grace
        if opts.dry_run:
            return Entry(obj, b"", reg.store.rv), False
        return reg.commit(info, current, obj), False
    if finalizers or pending_spec:
        if omd.get("deletionTimestamp") and finalizers == list(omd.get("finalizers") or []):
            return current, False
        obj = _with_own_metadata(old)
        md = obj["metadata"]
        md["finalizers"] = finalizers
        if not finalizers:
            md.pop("finalizers")
        if not md.get("deletionTimestamp"):
            md["deletionTimestamp"] = meta.now_rfc3339()
            md["deletionGracePeriodSeconds"] = 0
            if "generation" in md:
                md["generation"] += 1
        if info.kind == "Namespace" and not info.group:
            obj["status"] = {**(obj.get("status") or {}), "phase": "Terminating"}
        if opts.dry_run:
            return Entry(obj, b"", reg.store.rv), False
        return reg.commit(info, current, obj), False
    if opts.dry_run:
        return current, True
    return reg.remove(info, current), True


def _with_own_metadata(stored: Obj) -> Obj:
    """A new object for a deletion's write: its own top level and metadata, the rest shared with
    `stored` (stored objects are never changed in place; deletion writes only metadata)."""
    return {**stored, "metadata": dict(stored["metadata"])}


def _check_preconditions(info: ResourceInfo, name: str, omd: Obj, opts: DeleteOptions) -> None:
    """The request's uid and resourceVersion preconditions must name the stored object (409)."""
    if opts.uid is not None and opts.uid != omd.get("uid"):
        raise errors.conflict(
            info.group,
            info.resource,
            name,
            f"Precondition failed: UID in precondition: {opts.uid}, UID in object meta: {omd.get('uid')}",
        )
    if opts.resource_version is not None and opts.resource_version != omd.get("resourceVersion"):
        raise errors.conflict(
            info.group,
            info.resource,
            name,
            f"Precondition failed: ResourceVersion in precondition: {opts.resource_version}, ResourceVersion in object meta: {omd.get('resourceVersion')}",
        )


def _finalizers_for_propagation(omd: Obj, policy: str) -> list[str]:
    """The object's finalizers once the propagation policy is applied: an explicit policy replaces
    the garbage collector's finalizers with its own (Foreground, Orphan) or none (Background)."""
    finalizers = list(omd.get("finalizers") or [])
    gc_finalizers = {"Foreground": "foregroundDeletion", "Orphan": "orphan"}
    if policy:
        finalizers = [f for f in finalizers if f not in ("orphan", "foregroundDeletion")]
        if policy in gc_finalizers:
            finalizers.append(gc_finalizers[policy])
    return finalizers


def _pod_grace_period(reg: RegistryOps, info: ResourceInfo, pod: Obj, opts: DeleteOptions) -> int:
    """The graceful-deletion period of a pod, as the pod strategy computes it (0: delete now).

    Only with `graceful_pod_deletion`, since only a kubelet ends a graceful deletion.
    """
    if not reg.graceful_pod_deletion or info.kind != "Pod" or info.group:
        return 0
    spec = pod.get("spec") or {}
    period = opts.grace_period
    if period is None:
        period = spec.get("terminationGracePeriodSeconds", 30)
    if not spec.get("nodeName"):
        return 0
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return 0
    return max(int(period or 0), 0)


async def delete_collection(
    reg: RegistryOps,
    info: ResourceInfo,
    ns: str,
    labels: LabelSelector,
    fields: FieldSelector,
    opts: DeleteOptions,
) -> list[Entry]:
    result = reg.list_entries(info, ns, labels, fields)
    out = []
    for entry in result.entries:
        md = entry.obj["metadata"]
        try:
            obj, _ = await delete(reg, info, md.get("namespace", ""), md["name"], opts)
        except errors.StatusError as err:
            if err.code == 404:
                continue
            raise
        out.append(obj)
    return out
