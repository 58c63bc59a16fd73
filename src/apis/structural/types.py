"""JSON values as a structural schema sees them: the schema type, JSON's integer and number tests
(a bool is neither; a float with no fraction is an integer, as Go's decoder reads it), and
`same_value`, JSON's own equality (the passes' test for a subtree an update left as it was).
"""

from __future__ import annotations

from typing import Any

import msgspec

Schema = dict[str, Any]

_encode = msgspec.json.Encoder().encode


def same_value(value: Any, old: Any) -> bool:
    """Whether `value` is the very JSON value `old` is. Python's `==` alone is not: it equates
    `true` with `1` and `1` with `1.0`, which a schema tells apart; their encodings differ."""
    if value is old:
        return True
    if not isinstance(value, (dict, list)):
        return type(value) is type(old) and bool(value == old)
    if value != old:
        return False
    try:
        return bool(_encode(value) == _encode(old))
    except (TypeError, ValueError, OverflowError):
        return False  # not JSON: no short cut


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
