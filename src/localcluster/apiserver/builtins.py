"""Create-time defaults and checks of the built-in kinds, as their registry strategies and the
apiserver's defaulting apply them (a useful subset: what clients observe and rely on).

Each hook takes the object being created (a fresh dict the caller owns) and mutates it, returning the
field errors found (empty when valid).
"""

from __future__ import annotations

import base64
import binascii
import copy
import ipaddress
import random
from collections.abc import Callable
from typing import Any

from ...apis import field
from ...apis.field import FieldError

Hook = Callable[[dict[str, Any]], list[FieldError]]


def create_pod(obj: dict[str, Any]) -> list[FieldError]:
    spec = obj.setdefault("spec", {})
    errs: list[FieldError] = []
    containers = spec.get("containers")
    if not containers:
        errs.append(field.required("spec.containers", ""))
    for i, c in enumerate(containers or []):
        if not isinstance(c, dict):
            errs.append(field.invalid(f"spec.containers[{i}]", str(c), "must be an object"))
            continue
        if not c.get("name"):
            errs.append(field.required(f"spec.containers[{i}].name", ""))
        if not c.get("image"):
            errs.append(field.required(f"spec.containers[{i}].image", ""))
    spec.setdefault("serviceAccountName", spec.get("serviceAccount") or "default")
    spec.setdefault("serviceAccount", spec["serviceAccountName"])
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    spec.setdefault("priority", 0)
    spec.setdefault(
        "tolerations",
        [
            {
                "key": "node.kubernetes.io/not-ready",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
            {
                "key": "node.kubernetes.io/unreachable",
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": 300,
            },
        ],
    )
    status: dict[str, Any] = {"phase": "Pending", "qosClass": _qos_class(containers or [])}
    obj["status"] = status
    return errs


def _qos_class(containers: list[Any]) -> str:
    requests = limits = False
    for c in containers:
        res = c.get("resources") or {} if isinstance(c, dict) else {}
        requests = requests or bool(res.get("requests"))
        limits = limits or bool(res.get("limits"))
    if not requests and not limits:
        return "BestEffort"
    return "Burstable"


SERVICE_RANGE = "127.253.0.0/16"
"""Where Service ClusterIPs come from: loopback, so no Service address is ever a private or public
one on this machine (the service proxy listens on them; `serviceproxy.py`). Each API server takes
one /24 of it at random (so local clusters side by side rarely share addresses); its first address
is `default/kubernetes`'s."""


def service_subnet() -> ipaddress.IPv4Network:
    """A random /24 of `SERVICE_RANGE`."""
    base = ipaddress.IPv4Network(SERVICE_RANGE)
    return ipaddress.IPv4Network(f"{base[random.randrange(256) * 256]}/24")


class ClusterIPAllocator:
    """Hands out Service ClusterIPs from one /24 of `SERVICE_RANGE` (`.1` is the kubernetes
    Service's)."""

    def __init__(self, subnet: ipaddress.IPv4Network | None = None) -> None:
        self._net = subnet or service_subnet()
        self._next = 2

    @property
    def kubernetes_ip(self) -> str:
        return str(self._net[1])

    def allocate(self) -> str:
        ip = str(self._net[self._next])
        self._next = self._next % (self._net.num_addresses - 3) + 2
        return ip


def service_hook(alloc: ClusterIPAllocator) -> Hook:
    def create_service(obj: dict[str, Any]) -> list[FieldError]:
        spec = obj.setdefault("spec", {})
        errs: list[FieldError] = []
        spec.setdefault("type", "ClusterIP")
        spec.setdefault("sessionAffinity", "None")
        if spec["type"] != "ExternalName":
            if not spec.get("clusterIP"):
                spec["clusterIP"] = alloc.allocate()
            if spec["clusterIP"] != "None":
                spec.setdefault("clusterIPs", [spec["clusterIP"]])
            spec.setdefault("ipFamilies", ["IPv4"])
            spec.setdefault("ipFamilyPolicy", "SingleStack")
            spec.setdefault("internalTrafficPolicy", "Cluster")
        ports = spec.get("ports") or []
        for i, p in enumerate(ports):
            if not isinstance(p, dict) or "port" not in p:
                errs.append(field.required(f"spec.ports[{i}].port", ""))
                continue
            p.setdefault("protocol", "TCP")
            p.setdefault("targetPort", p["port"])
        if not ports and spec["type"] != "ExternalName" and spec.get("clusterIP") != "None":
            errs.append(field.required("spec.ports", ""))
        obj["status"] = {"loadBalancer": {}}
        return errs

    return create_service


def create_namespace(obj: dict[str, Any]) -> list[FieldError]:
    spec = obj.setdefault("spec", {})
    spec.setdefault("finalizers", ["kubernetes"])
    obj["status"] = {"phase": "Active"}
    labels = obj["metadata"].setdefault("labels", {})
    labels["kubernetes.io/metadata.name"] = obj["metadata"]["name"]
    return []


def create_secret(obj: dict[str, Any]) -> list[FieldError]:
    return normalize_secret(obj)


def normalize_secret(obj: dict[str, Any]) -> list[FieldError]:
    """Fold stringData into data (base64) and check data is base64, as the Secret strategy does."""
    errs: list[FieldError] = []
    obj.setdefault("type", "Opaque")
    data = obj.get("data") or {}
    for k, v in data.items():
        try:
            base64.b64decode(v, validate=True)
        except (binascii.Error, TypeError, ValueError):
            errs.append(
                field.invalid(f"data[{k}]", "<secret contents redacted>", "illegal base64 data")
            )
    string_data = obj.pop("stringData", None) or {}
    for k, v in string_data.items():
        data[k] = base64.b64encode(str(v).encode()).decode()
    if data:
        obj["data"] = data
    return errs


def create_hooks(alloc: ClusterIPAllocator) -> dict[tuple[str, str], Hook]:
    """Create hooks keyed by (group, kind)."""
    return {
        ("", "Pod"): create_pod,
        ("", "Service"): service_hook(alloc),
        ("", "Namespace"): create_namespace,
        ("", "Secret"): create_secret,
    }


_POD_UPDATE_FORBIDDEN = (
    "pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions "
    "to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it "
    "was previously negative)"
)


def validate_pod_update(new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """A pod's spec is immutable but for images, activeDeadlineSeconds, added tolerations and
    removed scheduling gates (the apiserver's ValidatePodUpdate, without its diff)."""
    new_spec = copy.deepcopy(new.get("spec") or {})
    old_spec = old.get("spec") or {}
    for kind in ("containers", "initContainers"):
        olds = old_spec.get(kind) or []
        news = new_spec.get(kind) or []
        if len(olds) == len(news):
            for n, o in zip(news, olds, strict=True):
                if isinstance(n, dict) and isinstance(o, dict) and "image" in o:
                    n["image"] = o["image"]
    old_tolerations = old_spec.get("tolerations") or []
    new_tolerations = new_spec.get("tolerations") or []
    if all(t in new_tolerations for t in old_tolerations):
        new_spec["tolerations"] = old_spec.get("tolerations")
    old_gates = old_spec.get("schedulingGates") or []
    if all(g in old_gates for g in new_spec.get("schedulingGates") or []):
        new_spec["schedulingGates"] = old_spec.get("schedulingGates")
    for k in ("activeDeadlineSeconds", "terminationGracePeriodSeconds"):
        new_spec[k] = old_spec.get(k)
    normalized_old = {**old_spec}
    for k in (
        "tolerations",
        "schedulingGates",
        "activeDeadlineSeconds",
        "terminationGracePeriodSeconds",
    ):
        normalized_old[k] = old_spec.get(k)
    if new_spec != normalized_old:
        return [field.forbidden("spec", _POD_UPDATE_FORBIDDEN)]
    return []
