"""Label and field selectors, parsed and matched as apimachinery's `labels` and `fields` packages do.

Label selectors support every operator (`=`, `==`, `!=`, `in`, `notin`, exists, `!` not-exists, `>`,
`<`); field selectors support `=`, `==` and `!=` over the fields a resource declares. Parse errors raise
`ValueError` with a message fit for a 400 BadRequest.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import msgspec

from ...apis.meta import labelselector as metav1
from ...apis.meta.labelselector import (
    EVERYTHING,
    Selector,
    label_selector_as_selector,
    parse_selector,
)

# --- label selectors: the project's one implementation, in apis.meta.labelselector ---

LabelSelector = Selector
"""A parsed label selector; the empty one (`EVERYTHING`) matches every object."""


def parse_label_selector(text: str) -> LabelSelector:
    """Parse `app=x,tier in (a,b),!canary`; '' selects everything. `ValueError` when malformed."""
    return parse_selector(text)


def labels_match(selector: LabelSelector, labels: Mapping[str, str] | None) -> bool:
    return selector.matches(labels or {})


def selector_from_label_selector(sel: Mapping[str, Any] | None) -> LabelSelector:
    """A metav1.LabelSelector (matchLabels/matchExpressions); absent or empty selects everything,
    as a webhook's namespaceSelector/objectSelector does."""
    if not sel:
        return EVERYTHING
    try:
        spec = msgspec.convert(sel, metav1.LabelSelector)
    except msgspec.ValidationError as err:
        raise ValueError(f"invalid label selector: {err}") from None
    return label_selector_as_selector(spec)


# --- field selectors ---

FieldSelector = tuple[tuple[str, str, str], ...]  # (field, "=" | "!=", value)


def _split_unescaped(text: str, sep: str) -> list[str]:
    parts, cur, esc = [], [], False
    for ch in text:
        if esc:
            cur.append(ch)
            esc = False
        elif ch == "\\":
            cur.append(ch)
            esc = True
        elif ch == sep:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def parse_field_selector(text: str) -> FieldSelector:
    """Parse `metadata.name=x,status.phase!=Running`; raises ValueError when malformed."""
    out = []
    for part in _split_unescaped(text, ","):
        if not part:
            continue
        for op in ("!=", "==", "="):
            idx = part.find(op)
            if idx > 0:
                field_name, value = part[:idx], part[idx + len(op) :]
                out.append((field_name.strip(), "!=" if op == "!=" else "=", _unescape(value)))
                break
        else:
            raise ValueError(f"invalid selector: '{text}'; can't understand '{part}'")
    return tuple(out)


FieldGetter = Callable[[Mapping[str, Any]], str]


def field_path(*names: str) -> FieldGetter:
    """The field label read at `names`: '' when absent, booleans as `true`/`false`."""

    def get(obj: Mapping[str, Any]) -> str:
        cur: Any = obj
        for n in names:
            if not isinstance(cur, Mapping):
                return ""
            cur = cur.get(n)
        if cur is None:
            return ""
        if isinstance(cur, bool):
            return "true" if cur else "false"
        return str(cur)

    return get


COMMON_FIELDS: dict[str, FieldGetter] = {
    "metadata.name": field_path("metadata", "name"),
    "metadata.namespace": field_path("metadata", "namespace"),
}
"""The field labels every kind has."""


def fields_match(
    selector: FieldSelector, getters: Mapping[str, FieldGetter], obj: Mapping[str, Any]
) -> bool:
    for name, op, value in selector:
        have = getters[name](obj)
        if (have == value) != (op == "="):
            return False
    return True
