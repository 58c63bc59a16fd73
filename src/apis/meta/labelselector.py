"""Label selectors (Go `metav1.LabelSelector` and `k8s.io/apimachinery/pkg/labels`).

* `LabelSelector` / `LabelSelectorRequirement`: the wire types (`matchLabels`, `matchExpressions`),
  presence-preserving, with Go's JSON encoding marked for `go_roundtrip`.
* `label_selector_as_selector(ls)` is `metav1.LabelSelectorAsSelector`: `None` selects nothing, an
  empty selector selects everything; it raises `SelectorError` with Kubernetes' text for a bad
  operator (`"Like" is not a valid label selector operator`), key, value or value count. Keys of
  `matchLabels` are visited in sorted order (Go visits them randomly), so the first error reported
  is deterministic.
* `Selector.matches(labels)` has Kubernetes' semantics: `In`/`=` need the key present with one of
  the values; `NotIn`/`!=` also match when the key is absent; `Exists`/`DoesNotExist` test
  presence. `str(selector)` is the canonical text form (`a=b,c in (x,y),!d`), requirements sorted
  by key as `labels.Selector.String()` prints them.
* `go_label_selector(ls)` renders Go's `%#v` of the selector, which Agones leaks into a message.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated

from msgspec import UNSET, Struct, UnsetType

from ..field import FieldError, GoValue, Path, go_quote, invalid, not_supported
from .schema import crd
from .validation import is_qualified_name, is_valid_label_value


class LabelSelectorOperator(enum.StrEnum):
    IN = "In"
    NOT_IN = "NotIn"
    EXISTS = "Exists"
    DOES_NOT_EXIST = "DoesNotExist"


class LabelSelectorRequirement(Struct, rename="camel", omit_defaults=True):
    key: Annotated[str, crd(required=True, go="always")] | UnsetType = UNSET
    # A plain string on the wire: an unknown operator must reach validation to be reported.
    operator: Annotated[str, crd(required=True, go="always")] | UnsetType = UNSET
    values: list[str] | UnsetType | None = UNSET


class LabelSelector(Struct, rename="camel", omit_defaults=True):
    """`matchLabels` and `matchExpressions` are ANDed; an empty selector matches everything."""

    match_labels: dict[str, str] | UnsetType | None = UNSET
    match_expressions: list[LabelSelectorRequirement] | UnsetType | None = UNSET


class Operator(enum.StrEnum):
    """Go `selection.Operator` values used by requirements."""

    EQUALS = "="
    DOUBLE_EQUALS = "=="
    NOT_EQUALS = "!="
    IN = "in"
    NOT_IN = "notin"
    EXISTS = "exists"
    DOES_NOT_EXIST = "!"


class SelectorError(ValueError):
    """A selector Kubernetes refuses to build; `str()` is its aggregated error text."""


@dataclass(frozen=True)
class Requirement:
    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op in (Operator.IN, Operator.EQUALS, Operator.DOUBLE_EQUALS):
            return self.key in labels and labels[self.key] in self.values
        if op in (Operator.NOT_IN, Operator.NOT_EQUALS):
            return self.key not in labels or labels[self.key] not in self.values
        if op is Operator.EXISTS:
            return self.key in labels
        return self.key not in labels

    def __str__(self) -> str:
        op = self.operator
        if op is Operator.EXISTS:
            return self.key
        if op is Operator.DOES_NOT_EXIST:
            return "!" + self.key
        if op in (Operator.IN, Operator.NOT_IN):
            return f"{self.key} {op.value} ({','.join(sorted(self.values))})"
        return f"{self.key}{op.value}{self.values[0]}"


@dataclass(frozen=True)
class Selector:
    """A built selector. `requirements` empty and `nothing` false: matches every label set."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self.nothing:
            return False
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    def empty(self) -> bool:
        return not self.nothing and not self.requirements

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


EVERYTHING = Selector()
NOTHING = Selector(nothing=True)


def _aggregate(errors: list[FieldError]) -> str:
    texts: list[str] = []
    for err in errors:
        text = str(err)
        if text not in texts:
            texts.append(text)
    return texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"


def _go_string_slice(values: list[str] | None) -> str:
    if values is None:
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_quote(v) for v in values) + "}"


def new_requirement(key: str, op: Operator, values: list[str]) -> Requirement:
    """`labels.NewRequirement`: validates key, value count and values; every error at once."""
    errs: list[FieldError] = []
    key_errs = is_qualified_name(key)
    if key_errs:
        errs.append(invalid(Path("key"), key, "; ".join(key_errs)))
    value_path = Path("values")
    shown = GoValue(_go_string_slice(values))
    if op in (Operator.IN, Operator.NOT_IN):
        if not values:
            errs.append(
                invalid(value_path, shown, "for 'in', 'notin' operators, values set can't be empty")
            )
    elif op in (Operator.EQUALS, Operator.DOUBLE_EQUALS, Operator.NOT_EQUALS):
        if len(values) != 1:
            errs.append(
                invalid(value_path, shown, "exact-match compatibility requires one single value")
            )
    elif op in (Operator.EXISTS, Operator.DOES_NOT_EXIST):
        if values:
            errs.append(
                invalid(value_path, shown, "values set must be empty for exists and does not exist")
            )
    else:
        errs.append(not_supported(Path("operator"), str(op), [o.value for o in Operator]))
    for i, value in enumerate(values):
        value_errs = is_valid_label_value(value)
        if value_errs:
            errs.append(invalid(value_path.index(i).key(key), value, "; ".join(value_errs)))
    if errs:
        raise SelectorError(_aggregate(errs))
    return Requirement(key, op, tuple(values))


_OPERATORS = {
    LabelSelectorOperator.IN: Operator.IN,
    LabelSelectorOperator.NOT_IN: Operator.NOT_IN,
    LabelSelectorOperator.EXISTS: Operator.EXISTS,
    LabelSelectorOperator.DOES_NOT_EXIST: Operator.DOES_NOT_EXIST,
}


def label_selector_as_selector(ls: LabelSelector | None) -> Selector:
    """`metav1.LabelSelectorAsSelector`; raises `SelectorError` with Kubernetes' message."""
    if ls is None:
        return NOTHING
    match_labels = ls.match_labels if isinstance(ls.match_labels, dict) else {}
    expressions = ls.match_expressions if isinstance(ls.match_expressions, list) else []
    if not match_labels and not expressions:
        return EVERYTHING
    requirements: list[Requirement] = []
    for key in sorted(match_labels):
        requirements.append(new_requirement(key, Operator.EQUALS, [match_labels[key]]))
    for expr in expressions:
        operator = expr.operator if isinstance(expr.operator, str) else ""
        try:
            op = _OPERATORS[LabelSelectorOperator(operator)]
        except ValueError:
            raise SelectorError(
                f"{go_quote(operator)} is not a valid label selector operator"
            ) from None
        key = expr.key if isinstance(expr.key, str) else ""
        values = list(expr.values) if isinstance(expr.values, list) else []
        requirements.append(new_requirement(key, op, values))
    # labels.Selector keeps its requirements sorted by key.
    return Selector(tuple(sorted(requirements, key=lambda r: r.key)))


def go_label_selector(ls: LabelSelector) -> str:
    """Go's `%#v` of a `metav1.LabelSelector` (nil and empty collections told apart)."""
    labels = ls.match_labels
    if isinstance(labels, dict):
        shown_labels = (
            "map[string]string{"
            + ", ".join(f"{go_quote(k)}:{go_quote(labels[k])}" for k in sorted(labels))
            + "}"
        )
    else:
        shown_labels = "map[string]string(nil)"
    exprs = ls.match_expressions
    if isinstance(exprs, list):
        items = []
        for e in exprs:
            values = e.values if isinstance(e.values, list) else None
            items.append(
                "v1.LabelSelectorRequirement{"
                f"Key:{go_quote(e.key if isinstance(e.key, str) else '')}, "
                f"Operator:{go_quote(e.operator if isinstance(e.operator, str) else '')}, "
                f"Values:{_go_string_slice(values)}}}"
            )
        shown_exprs = "[]v1.LabelSelectorRequirement{" + ", ".join(items) + "}"
    else:
        shown_exprs = "[]v1.LabelSelectorRequirement(nil)"
    return f"v1.LabelSelector{{MatchLabels:{shown_labels}, MatchExpressions:{shown_exprs}}}"
