"""The scale subresource's checks of a custom resource (ValidateScaleSpec, ValidateScaleStatus):
the replica counts at `specReplicasPath` and `statusReplicasPath` must be int32s at or above 0,
the label selector a string, each read as unstructured.NestedFieldNoCopy reads it. The field of
each error is the `.a.b` path as the CRD declares it, as the apiserver reports it.
"""

from __future__ import annotations

from typing import Any

from .. import field as fielderr
from ..field import FieldError

Obj = dict[str, Any]

_GO_TYPES = {str: "string", float: "float64", bool: "bool", dict: "map[string]interface {}"}
_MAX_INT32 = 2**31 - 1


def _nested(obj: Obj, path: str) -> tuple[Any, str]:
    """unstructured.NestedFieldNoCopy at a `.a.b` path: (value or None, accessor error)."""
    cur: Any = obj
    steps = path.lstrip(".").split(".")
    for i, step in enumerate(steps):
        if not isinstance(cur, dict):
            shown = "." + ".".join(steps[:i])
            return (
                None,
                f"{shown} accessor error: {cur} is of the type {_go_type(cur)}, expected map[string]interface{{}}",
            )
        if step not in cur:
            return None, ""
        cur = cur[step]
    return cur, ""


def _go_type(value: Any) -> str:
    return "[]interface {}" if isinstance(value, list) else _GO_TYPES.get(type(value), "int64")


def _replicas_errors(obj: Obj, path: str | None) -> list[FieldError]:
    if not path:
        return []
    value, err = _nested(obj, path)
    if not err and value is not None and (type(value) is not int):
        err = f"{path} accessor error: {value} is of the type {_go_type(value)}, expected int64"
    if err:
        return [fielderr.invalid(path, 0, err)]
    if value is not None and value < 0:
        return [fielderr.invalid(path, value, "should be a non-negative integer")]
    if value is not None and value > _MAX_INT32:
        return [fielderr.invalid(path, value, f"should be less than or equal to {_MAX_INT32}")]
    return []


def scale_errors(obj: Obj, scale: Obj | None) -> list[FieldError]:
    """ValidateScaleSpec and ValidateScaleStatus: the replica counts the scale subresource reads
    must be int32s at or above 0 (the label selector, when declared, a string)."""
    if not scale:
        return []
    errs = _replicas_errors(obj, scale.get("specReplicasPath"))
    errs += _replicas_errors(obj, scale.get("statusReplicasPath"))
    selector_path = scale.get("labelSelectorPath")
    if selector_path:
        value, err = _nested(obj, selector_path)
        if not err and value is not None and not isinstance(value, str):
            err = f"{selector_path} accessor error: {value} is of the type {_go_type(value)}, expected string"
        if err:
            errs.append(fielderr.invalid(selector_path, "", err))
    return errs
