"""Defaults and validation of apps/v1 Deployments and ReplicaSets (kube-apiserver's
`pkg/apis/apps/v1/defaults.go` and `pkg/apis/apps/validation`, the part clients observe), and the
pure pieces both local controllers share.

`create_deployment` / `create_replicaset` default a new object and return its field errors; the
same checks run on every update (`validate_deployment`, `validate_replicaset`). A Deployment
defaults to 1 replica, `RollingUpdate` with 25%/25%, `revisionHistoryLimit` 10,
`progressDeadlineSeconds` 600; its selector is required, non-empty and must select the template's
labels; the template's `restartPolicy` must be `Always`; `maxSurge`/`maxUnavailable` are
non-negative integers or percentages and not both zero.

`pod_template_hash(template, collision_count)` is the `pod-template-hash` label value, FNV-32a over
the template as the deployment controller computes it (rendered safe-encoded, so it only uses the
letters of `rand.SafeEncodeString`); `resolve_fenceposts` turns maxSurge/maxUnavailable into
counts (surge rounds up, unavailable down, 1 unavailable when both come to 0).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from ...apis import field
from ...apis.field import FieldError
from ...informers.labels import label_selector_as_selector
from .builtins import create_pod
from .coredefaults import set_defaults_pod_spec

Obj = dict[str, Any]
POD_TEMPLATE_HASH = "pod-template-hash"
_PERCENT = re.compile(r"^(\d+)%$")
_SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def _int_or_percent(value: Any, path: str) -> list[FieldError]:
    if isinstance(value, bool) or not isinstance(value, int | str):
        return [field.invalid(path, value, "must be an integer or percentage (e.g '5%')")]
    if isinstance(value, int):
        return (
            [] if value >= 0 else [field.invalid(path, value, "must be greater than or equal to 0")]
        )
    if not _PERCENT.match(value):
        return [
            field.invalid(
                path,
                value,
                "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
            )
        ]
    return []


def non_negative(spec: Obj, name: str, at: str) -> list[FieldError]:
    value = spec.get(name)
    if value is None:
        return []
    if isinstance(value, bool) or not isinstance(value, int):
        return [field.invalid(f"{at}.{name}", value, "must be an integer")]
    if value < 0:
        return [field.invalid(f"{at}.{name}", value, "must be greater than or equal to 0")]
    return []


def template_errors(spec: Obj, at: str, kind: str = "deployment") -> list[FieldError]:
    """The selector and the pod template (defaulted in place, as pods are); `kind` names the
    workload in the empty-selector message."""
    errs: list[FieldError] = []
    selector = spec.get("selector")
    template = spec.get("template")
    if not isinstance(selector, dict):
        errs.append(field.required(f"{at}.selector", ""))
    elif not selector.get("matchLabels") and not selector.get("matchExpressions"):
        errs.append(
            field.invalid(f"{at}.selector", selector, f"empty selector is invalid for {kind}")
        )
    if not isinstance(template, dict):
        return [*errs, field.required(f"{at}.template", "")]
    md = template.setdefault("metadata", {})
    if not isinstance(md, dict):
        return [*errs, field.invalid(f"{at}.template.metadata", md, "must be an object")]
    labels = md.get("labels") or {}
    if not isinstance(labels, dict) or not all(isinstance(v, str) for v in labels.values()):
        errs.append(
            field.invalid(f"{at}.template.metadata.labels", labels, "must be a map of strings")
        )
    elif isinstance(selector, dict) and not errs:
        try:
            matches = label_selector_as_selector(selector).matches(labels)
        except ValueError as err:
            errs.append(field.invalid(f"{at}.selector", selector, str(err)))
        else:
            if not matches:
                errs.append(
                    field.invalid(
                        f"{at}.template.metadata.labels",
                        labels,
                        "`selector` does not match template `labels`",
                    )
                )
    pod = {"metadata": {}, "spec": template.setdefault("spec", {})}
    if not isinstance(pod["spec"], dict):
        return [*errs, field.invalid(f"{at}.template.spec", pod["spec"], "must be an object")]
    set_defaults_pod_spec(pod["spec"])
    for pod_err in create_pod(pod):
        errs.append(
            FieldError(
                pod_err.type, f"{at}.template.{pod_err.field}", pod_err.bad_value, pod_err.detail
            )
        )
    template["spec"] = pod["spec"]
    policy = pod["spec"].get("restartPolicy")
    if policy != "Always":
        errs.append(field.not_supported(f"{at}.template.spec.restartPolicy", policy, ["Always"]))
    return errs


def _strategy_errors(spec: Obj) -> list[FieldError]:
    strategy = spec.setdefault("strategy", {})
    if not isinstance(strategy, dict):
        return [field.invalid("spec.strategy", strategy, "must be an object")]
    kind = strategy.setdefault("type", "RollingUpdate")
    if kind == "Recreate":
        if strategy.get("rollingUpdate") is not None:
            return [
                field.forbidden(
                    "spec.strategy.rollingUpdate",
                    "may not be specified when strategy `type` is 'Recreate'",
                )
            ]
        return []
    if kind != "RollingUpdate":
        return [field.not_supported("spec.strategy.type", kind, ["Recreate", "RollingUpdate"])]
    rolling = strategy.setdefault("rollingUpdate", {})
    if not isinstance(rolling, dict):
        return [field.invalid("spec.strategy.rollingUpdate", rolling, "must be an object")]
    rolling.setdefault("maxSurge", "25%")
    rolling.setdefault("maxUnavailable", "25%")
    at = "spec.strategy.rollingUpdate"
    errs = _int_or_percent(rolling["maxSurge"], f"{at}.maxSurge")
    errs += _int_or_percent(rolling["maxUnavailable"], f"{at}.maxUnavailable")
    if errs:
        return errs
    if _is_zero(rolling["maxSurge"]) and _is_zero(rolling["maxUnavailable"]):
        errs.append(
            field.invalid(
                f"{at}.maxUnavailable",
                rolling["maxUnavailable"],
                "may not be 0 when `maxSurge` is 0",
            )
        )
    unavailable = rolling["maxUnavailable"]
    if isinstance(unavailable, str) and int(unavailable[:-1]) > 100:
        errs.append(
            field.invalid(f"{at}.maxUnavailable", unavailable, "must not be greater than 100%")
        )
    return errs


def _is_zero(value: int | str) -> bool:
    return value == 0 or (isinstance(value, str) and int(value[:-1]) == 0)


def _spec_of(obj: Obj) -> tuple[Obj | None, list[FieldError]]:
    spec = obj.setdefault("spec", {})
    if not isinstance(spec, dict):
        return None, [field.invalid("spec", spec, "must be an object")]
    return spec, []


def validate_deployment(obj: Obj) -> list[FieldError]:
    """Default a Deployment in place and return its field errors."""
    spec, errs = _spec_of(obj)
    if spec is None:
        return errs
    spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    for name in ("replicas", "revisionHistoryLimit", "progressDeadlineSeconds", "minReadySeconds"):
        errs += non_negative(spec, name, "spec")
    errs += template_errors(spec, "spec")
    errs += _strategy_errors(spec)
    deadline, ready = spec.get("progressDeadlineSeconds"), spec.get("minReadySeconds") or 0
    if not errs and isinstance(deadline, int) and isinstance(ready, int) and deadline <= ready:
        errs.append(
            field.invalid(
                "spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"
            )
        )
    return errs


def validate_replicaset(obj: Obj) -> list[FieldError]:
    """Default a ReplicaSet in place and return its field errors."""
    spec, errs = _spec_of(obj)
    if spec is None:
        return errs
    spec.setdefault("replicas", 1)
    errs += non_negative(spec, "replicas", "spec")
    errs += non_negative(spec, "minReadySeconds", "spec")
    return errs + template_errors(spec, "spec")


def create_deployment(obj: Obj) -> list[FieldError]:
    obj.pop("status", None)
    return validate_deployment(obj)


def create_replicaset(obj: Obj) -> list[FieldError]:
    obj.pop("status", None)
    return validate_replicaset(obj)


def fnv32a(data: bytes) -> int:
    h = 0x811C9DC5
    for byte in data:
        h = ((h ^ byte) * 0x01000193) & 0xFFFFFFFF
    return h


def safe_encode(text: str) -> str:
    """`rand.SafeEncodeString`: each character mapped onto an alphabet without vowels."""
    return "".join(_SAFE_ALPHABET[ord(c) % len(_SAFE_ALPHABET)] for c in text)


def pod_template_hash(template: Obj, collision_count: int | None = None) -> str:
    """The `pod-template-hash` of a template (without that label) and the collision count."""
    clean = json.loads(json.dumps(template))
    (clean.get("metadata") or {}).get("labels", {}).pop(POD_TEMPLATE_HASH, None)
    data = json.dumps(clean, sort_keys=True, separators=(",", ":")).encode()
    if collision_count:
        data += str(collision_count).encode()
    return safe_encode(str(fnv32a(data)))


def _scaled(value: int | str, total: int, round_up: bool) -> int:
    if isinstance(value, int):
        return value
    exact = int(value[:-1]) * total / 100
    return math.ceil(exact) if round_up else math.floor(exact)


def resolve_fenceposts(deployment: Obj) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) as counts for a RollingUpdate Deployment."""
    spec = deployment.get("spec") or {}
    rolling = (spec.get("strategy") or {}).get("rollingUpdate") or {}
    replicas = int(spec.get("replicas", 1))
    surge = _scaled(rolling.get("maxSurge", "25%"), replicas, True)
    unavailable = _scaled(rolling.get("maxUnavailable", "25%"), replicas, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def templates_equal(a: Obj, b: Obj) -> bool:
    """Whether two pod templates are the same but for the pod-template-hash label."""
    return _without_hash(a) == _without_hash(b)


def _without_hash(template: Obj) -> Obj:
    clean: Obj = json.loads(json.dumps(template))
    md = clean.setdefault("metadata", {})
    labels = md.get("labels") or {}
    labels.pop(POD_TEMPLATE_HASH, None)
    md["labels"] = labels
    for key in [k for k, v in md.items() if v in ({}, None)]:
        del md[key]
    return clean
