"""Label selectors for listers and indexers (apimachinery `pkg/labels`).

One implementation serves the whole project: this module adapts `apis.meta.labelselector` (the
parser, matcher and `LabelSelectorAsSelector` with Kubernetes' error texts) to the shapes informers
deal in, raw JSON dicts. `parse("a=b,c!=d,e in (x,y),f notin (z),g,!h")` returns a `Selector` whose
`matches(labels)` is true when every requirement holds; `label_selector_as_selector(spec)` converts a
LabelSelector given as a dict, where None selects nothing and an empty one everything. Malformed
input raises `SelectorError` with Kubernetes' message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

from ..apis.meta import labelselector as _ls
from ..apis.meta.labelselector import (
    EVERYTHING,
    NOTHING,
    LabelSelector,
    Requirement,
    Selector,
    SelectorError,
    selector_from_set,
)

__all__ = [
    "Requirement",
    "Selector",
    "SelectorError",
    "everything",
    "label_selector_as_selector",
    "nothing",
    "parse",
    "selector_from_set",
]


def parse(text: str) -> Selector:
    """Parse the text form used by `?labelSelector=` and `kubectl -l`."""
    return _ls.parse_selector(text)


def everything() -> Selector:
    return EVERYTHING


def nothing() -> Selector:
    return NOTHING


def label_selector_as_selector(spec: Mapping[str, Any] | None) -> Selector:
    """`metav1.LabelSelectorAsSelector` for a LabelSelector in its JSON form."""
    if spec is None:
        return NOTHING
    try:
        selector = msgspec.convert(spec, LabelSelector)
    except msgspec.ValidationError as err:
        raise SelectorError(f"invalid label selector: {err}") from None
    return _ls.label_selector_as_selector(selector)
