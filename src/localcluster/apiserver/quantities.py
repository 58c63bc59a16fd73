"""Resource quantities in built-in objects, stored as kube-apiserver stores them: decoded into Go's
`resource.Quantity` and encoded back in canonical form (`1000` → `1k`, `2000m` → `2`, `0.5` →
`500m`, `1024Mi` → `1Gi`). A value that is not a quantity fails decoding (400), in Go's words.

The parser is `agones.apis.meta.quantity`, the one every reader of quantities uses
(`allocatable_pods` below is the scheduler's).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ...apis.meta.quantity import Quantity, QuantityError

Obj = dict[str, Any]

# apimachinery's ErrFormatWrong text.
FORMAT_WRONG = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
_CONTAINER_LISTS = ("containers", "initContainers", "ephemeralContainers")


def _maps(*candidates: Any) -> Iterator[tuple[Obj, str]]:
    for values in candidates:
        if isinstance(values, dict):
            yield from ((values, name) for name in list(values))


def _in_pod_spec(spec: Any) -> Iterator[tuple[Obj, str]]:
    if not isinstance(spec, dict):
        return
    for name in _CONTAINER_LISTS:
        for c in spec.get(name) or []:
            resources = c.get("resources") if isinstance(c, dict) else None
            if isinstance(resources, dict):
                yield from _maps(resources.get("limits"), resources.get("requests"))
    yield from _maps(spec.get("overhead"))
    for volume in spec.get("volumes") or []:
        empty_dir = volume.get("emptyDir") if isinstance(volume, dict) else None
        if isinstance(empty_dir, dict) and "sizeLimit" in empty_dir:
            yield empty_dir, "sizeLimit"


def quantity_slots(kind: str, obj: Obj) -> Iterator[tuple[Obj, str]]:
    """(map, key) of every quantity in a built-in object."""
    if kind == "Pod":
        yield from _in_pod_spec(obj.get("spec"))
    elif kind == "Deployment":
        template = (obj.get("spec") or {}).get("template")
        if isinstance(template, dict):
            yield from _in_pod_spec(template.get("spec"))
    elif kind == "Node":
        status = obj.get("status")
        if isinstance(status, dict):
            yield from _maps(status.get("capacity"), status.get("allocatable"))


def canonical(value: Any) -> str:
    """The canonical text of a quantity; `QuantityError` when it is not one."""
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise QuantityError(FORMAT_WRONG)
    return str(Quantity.parse(value))


def canonicalize(kind: str, obj: Obj) -> str:
    """Rewrite the quantities of a built-in object canonically, in place; the decoding error
    (empty when all are quantities)."""
    try:
        for values, name in quantity_slots(kind, obj):
            values[name] = canonical(values[name])
    except QuantityError:
        return FORMAT_WRONG
    except (AttributeError, TypeError):
        return ""  # a body of the wrong shape: the shape checks report it
    return ""


def allocatable_pods(node: Mapping[str, Any], default: int = 110) -> int:
    """How many pods a node takes (`status.allocatable.pods`, a quantity)."""
    raw = ((node.get("status") or {}).get("allocatable") or {}).get("pods")
    if raw is None or raw == "":
        return default
    try:
        return int(Quantity.parse(raw).value)
    except QuantityError:
        return default
