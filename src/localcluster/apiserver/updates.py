"""The checks an update passes before it is validated and written (steps of the registry's update).

`check_preconditions`: the request's resourceVersion (digits, equal to the stored one; required
for custom resources) and uid preconditions, as 409 Conflict or 422 Invalid. `check_update_rules`:
what a kind forbids on update (no new finalizers on an object being deleted, pod and container
state transitions, Secret data, a CRD's own rules). `spec_changed`: whether the write changes
anything that bumps `metadata.generation`. `merge_subresource`: what a write of the main resource
or of its status subresource keeps of the stored object.
"""

from __future__ import annotations

from collections.abc import Callable

from ...apis import field
from ...apis.field import FieldError
from . import errors
from .builtins import normalize_secret, validate_pod_update
from .decoding import guarded
from .podadmission import validate_container_state_transitions
from .registryops import Obj
from .resources import ResourceInfo
from .store import Entry, copy_of

UpdateValidator = Callable[[Obj], list[FieldError]]
UpdateTransition = Callable[[Obj, Obj], list[FieldError]]
"""Checks an update against the stored object: (new, old) -> errors."""


def check_preconditions(info: ResourceInfo, name: str, md: Obj, stored_md: Obj) -> None:
    """The request's resourceVersion and uid must name the stored object."""
    want_rv = md.get("resourceVersion", "")
    if want_rv:
        if not want_rv.isdigit():
            # kube-apiserver fails these with 500 (an unconverted storage error); say 400.
            raise errors.bad_request(
                f'resourceVersion: Invalid value: "{want_rv}": must be an unsigned integer'
            )
        if want_rv != stored_md["resourceVersion"]:
            raise errors.conflict(info.group, info.resource, name, errors.OBJECT_MODIFIED)
    elif info.custom is not None:
        raise errors.invalid(
            info.group,
            info.kind,
            name,
            [field.invalid("metadata.resourceVersion", "0x0", "must be specified for an update")],
        )
    uid = md.get("uid")
    if uid and uid != stored_md.get("uid"):
        raise errors.conflict(
            info.group,
            info.resource,
            name,
            f"Precondition failed: UID in precondition: {uid}, UID in object meta: {stored_md.get('uid')}",
        )


def check_update_rules(
    info: ResourceInfo,
    name: str,
    sub: str,
    obj: Obj,
    old: Obj,
    validators: dict[tuple[str, str], UpdateValidator],
    transitions: dict[tuple[str, str], UpdateTransition],
) -> None:
    """What the kind forbids on update, as 422 Invalid (a body of the wrong shape is a 400): the
    kind's own rules (`validators`), then what it may not change from the stored object
    (`transitions`)."""
    md, old_md = obj["metadata"], old["metadata"]
    if old_md.get("deletionTimestamp"):
        added = set(md.get("finalizers") or []) - set(old_md.get("finalizers") or [])
        if added:
            raise errors.invalid(
                info.group,
                info.kind,
                name,
                [
                    field.forbidden(
                        "metadata.finalizers",
                        f"no new finalizers can be added if the object is being deleted, found new finalizers {sorted(added)!r}",
                    )
                ],
            )
    if info.kind == "Pod" and not info.group:
        check = validate_pod_update if not sub else validate_container_state_transitions
        errs = guarded(info, lambda o: check(o, old), obj)
        if errs:
            raise errors.invalid("", "Pod", name, errs)
    if info.kind == "Secret" and not info.group:
        errs = guarded(info, normalize_secret, obj)
        if errs:
            raise errors.invalid("", "Secret", name, errs)
    validator = validators.get((info.group, info.kind))
    transition = transitions.get((info.group, info.kind))
    if validator is not None and not sub:
        errs = guarded(info, validator, obj)
        if transition is not None and not errs:
            errs = guarded(info, lambda o: transition(o, old), obj)
        if errs:
            raise errors.invalid(info.group, info.kind, name, errs)


def merge_subresource(info: ResourceInfo, sub: str, obj: Obj, current: Entry) -> Obj:
    """What a write of the main resource or its status subresource leaves of `obj` over the
    stored object: the stored status, or only the status (labels and annotations too, for a
    built-in kind)."""
    if not info.has_status:
        return obj
    old = current.obj
    if sub == "status":
        out = copy_of(current)
        out["metadata"]["resourceVersion"] = obj["metadata"].get("resourceVersion", "")
        if "status" in obj:
            out["status"] = obj["status"]
        else:
            out.pop("status", None)
        if not info.custom:
            # Built-in status updates may also change labels and annotations.
            for k in ("labels", "annotations"):
                if k in obj["metadata"]:
                    out["metadata"][k] = obj["metadata"][k]
        return out
    if "status" in old:
        obj["status"] = old["status"]
    else:
        obj.pop("status", None)
    return obj


_NOT_SPEC = frozenset(("metadata", "apiVersion", "kind"))
_NOT_SPEC_STATUS = _NOT_SPEC | {"status"}


def spec_changed(info: ResourceInfo, new: Obj, old: Obj) -> bool:
    """Whether anything but metadata (and status, when it is a subresource) changed."""
    skip = _NOT_SPEC_STATUS if info.custom is None or info.has_status else _NOT_SPEC
    for k, v in new.items():
        if k not in skip and old.get(k) != v:
            return True
    return any(v is not None and k not in new and k not in skip for k, v in old.items())
