"""JSON values as a structural schema sees them: the schema type, and JSON's integer and number
tests (a bool is neither; a float with no fraction is an integer, as Go's decoder reads it)."""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]


def is_int(v: Any) -> bool:
    return (isinstance(v, int) and not isinstance(v, bool)) or (
        isinstance(v, float) and v.is_integer()
    )


def is_num(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def type_ok(kind: str, v: Any) -> bool:
    if kind == "object":
        return isinstance(v, dict)
    if kind == "array":
        return isinstance(v, list)
    if kind == "string":
        return isinstance(v, str)
    if kind == "integer":
        return is_int(v)
    if kind == "number":
        return is_num(v)
    if kind == "boolean":
        return isinstance(v, bool)
    return True
