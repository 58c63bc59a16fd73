"""Defaults and validation of apps/v1 StatefulSets and ControllerRevisions (kube-apiserver's
`pkg/apis/apps/v1/defaults.go` SetDefaults_StatefulSet and `pkg/apis/apps/validation`
ValidateStatefulSet / ValidateStatefulSetUpdate / ValidateControllerRevision).

A StatefulSet defaults to 1 replica, `podManagementPolicy: OrderedReady`, `updateStrategy`
`RollingUpdate` with `partition: 0`, `revisionHistoryLimit: 10` and a
`persistentVolumeClaimRetentionPolicy` of Retain/Retain; each `volumeClaimTemplates[]` entry gets
`apiVersion: v1`, `kind: PersistentVolumeClaim`, `spec.volumeMode: Filesystem` and
`status.phase: Pending`, as the API server stores them (their specs are checked only when the
controller creates the claims, as on Kubernetes). Its pod template is defaulted and validated as a
Deployment's (`apps.template_errors`), must not set `activeDeadlineSeconds`, and the selector must be
non-empty and select it. On update only `replicas`, `ordinals`, `template`, `updateStrategy`,
`persistentVolumeClaimRetentionPolicy` and `minReadySeconds` may change.
"""

from __future__ import annotations

from typing import Any

from ...apis import field
from ...apis.field import FieldError
from .apps import non_negative, template_errors

Obj = dict[str, Any]
POLICIES = ("OrderedReady", "Parallel")
STRATEGIES = ("RollingUpdate", "OnDelete")
RETENTION = ("Retain", "Delete")
MUTABLE_SPEC = (
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
)
_UPDATE_FORBIDDEN = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
    "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
)


def _strategy_errors(spec: Obj) -> list[FieldError]:
    strategy = spec.setdefault("updateStrategy", {})
    if not isinstance(strategy, dict):
        return [field.invalid("spec.updateStrategy", strategy, "must be an object")]
    kind = strategy.setdefault("type", "RollingUpdate")
    if kind == "OnDelete":
        if strategy.get("rollingUpdate") is not None:
            return [
                field.invalid(
                    "spec.updateStrategy.rollingUpdate",
                    strategy["rollingUpdate"],
                    "only allowed for updateStrategy 'RollingUpdate'",
                )
            ]
        return []
    if kind != "RollingUpdate":
        return [field.invalid("spec.updateStrategy", kind, "must be 'RollingUpdate' or 'OnDelete'")]
    rolling = strategy.setdefault("rollingUpdate", {})
    if not isinstance(rolling, dict):
        return [field.invalid("spec.updateStrategy.rollingUpdate", rolling, "must be an object")]
    rolling.setdefault("partition", 0)
    return non_negative(rolling, "partition", "spec.updateStrategy.rollingUpdate")


def _retention_errors(spec: Obj) -> list[FieldError]:
    policy = spec.setdefault("persistentVolumeClaimRetentionPolicy", {})
    at = "spec.persistentVolumeClaimRetentionPolicy"
    if not isinstance(policy, dict):
        return [field.invalid(at, policy, "must be an object")]
    errs = []
    for name in ("whenDeleted", "whenScaled"):
        value = policy.setdefault(name, "Retain")
        if value not in RETENTION:
            errs.append(field.not_supported(f"{at}.{name}", value, list(RETENTION)))
    return errs


def _claim_templates_errors(spec: Obj) -> list[FieldError]:
    claims = spec.get("volumeClaimTemplates")
    if claims is None:
        return []
    if not isinstance(claims, list):
        return [field.invalid("spec.volumeClaimTemplates", claims, "must be a list")]
    errs = []
    for i, claim in enumerate(claims):
        at = f"spec.volumeClaimTemplates[{i}]"
        if not isinstance(claim, dict) or not isinstance(claim.get("spec", {}), dict):
            errs.append(field.invalid(at, claim, "must be an object"))
            continue
        claim.setdefault("apiVersion", "v1")
        claim.setdefault("kind", "PersistentVolumeClaim")
        if not isinstance(claim.setdefault("metadata", {}), dict):
            errs.append(field.invalid(f"{at}.metadata", claim["metadata"], "must be an object"))
        elif not claim["metadata"].get("name"):
            errs.append(field.required(f"{at}.metadata.name", "name or generateName is required"))
        claim.setdefault("spec", {}).setdefault("volumeMode", "Filesystem")
        claim.setdefault("status", {"phase": "Pending"})
    return errs


def _policy_errors(spec: Obj) -> list[FieldError]:
    policy = spec.setdefault("podManagementPolicy", "OrderedReady")
    if policy == "":
        return [field.required("spec.podManagementPolicy", "")]
    if policy not in POLICIES:
        return [
            field.invalid(
                "spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'"
            )
        ]
    return []


def validate_statefulset(obj: Obj) -> list[FieldError]:
    """Default a StatefulSet in place and return its field errors."""
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return [field.invalid("spec", spec, "must be an object")]
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    errs = _policy_errors(spec)
    errs += _strategy_errors(spec)
    errs += _retention_errors(spec)
    for name in ("replicas", "minReadySeconds"):
        errs += non_negative(spec, name, "spec")
    ordinals = spec.get("ordinals")
    if ordinals is not None:
        if isinstance(ordinals, dict):
            errs += non_negative(ordinals, "start", "spec.ordinals")
        else:
            errs.append(field.invalid("spec.ordinals", ordinals, "must be an object"))
    service = spec.get("serviceName", "")
    if not isinstance(service, str):
        errs.append(field.invalid("spec.serviceName", service, "must be a string"))
    errs += _claim_templates_errors(spec)
    errs += template_errors(spec, "spec", "statefulset")
    template_spec = (spec.get("template") or {}).get("spec")
    if isinstance(template_spec, dict) and template_spec.get("activeDeadlineSeconds") is not None:
        errs.append(
            field.invalid(
                "spec.template.spec.activeDeadlineSeconds",
                template_spec["activeDeadlineSeconds"],
                "must not be specified",
            )
        )
    return errs


def create_statefulset(obj: Obj) -> list[FieldError]:
    obj.pop("status", None)
    return validate_statefulset(obj)


def validate_statefulset_update(new: Obj, old: Obj) -> list[FieldError]:
    """Only the mutable part of the spec changed (the whole new object is validated apart)."""
    new_spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    if not isinstance(new_spec, dict) or not isinstance(old_spec, dict):
        return []
    frozen_new = {k: v for k, v in new_spec.items() if k not in MUTABLE_SPEC}
    frozen_old = {k: v for k, v in old_spec.items() if k not in MUTABLE_SPEC}
    if frozen_new != frozen_old:
        return [field.forbidden("spec", _UPDATE_FORBIDDEN)]
    return []


def validate_controller_revision(obj: Obj) -> list[FieldError]:
    errs = []
    if obj.get("data") is None:
        errs.append(field.required("data", "data is mandatory"))
    revision = obj.get("revision", 0)
    if isinstance(revision, bool) or not isinstance(revision, int):
        errs.append(field.invalid("revision", revision, "must be an integer"))
    elif revision < 0:
        errs.append(field.invalid("revision", revision, "must be greater than or equal to 0"))
    return errs


def validate_controller_revision_update(new: Obj, old: Obj) -> list[FieldError]:
    if new.get("data") != old.get("data"):
        return [field.invalid("data", field.OMIT, "field is immutable")]
    return []
