"""Label selectors (apimachinery `pkg/labels` and `metav1.LabelSelectorAsSelector`).

`parse("a=b,c!=d,e in (x,y),f notin (z),g,!h")` returns a `Selector`; `matches(labels)` is true when
every requirement holds. `everything()` matches all; `selector_from_set({...})` is equality on each
pair; `label_selector_as_selector(spec)` converts a LabelSelector (`matchLabels`,
`matchExpressions`), where a None spec selects nothing and an empty one everything. Malformed input
raises `SelectorError` with the offending text.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any


class SelectorError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str  # "=", "!=", "in", "notin", "exists", "!"
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == "exists":
            return self.key in labels
        if op == "!":
            return self.key not in labels
        if op in ("=", "in"):
            return self.key in labels and labels[self.key] in self.values
        # "!=" and "notin" also match objects without the label.
        return self.key not in labels or labels[self.key] not in self.values

    def __str__(self) -> str:
        if self.operator == "exists":
            return self.key
        if self.operator == "!":
            return f"!{self.key}"
        if self.operator in ("=", "!="):
            return f"{self.key}{self.operator}{self.values[0]}"
        return f"{self.key} {self.operator} ({','.join(sorted(self.values))})"


@dataclass(frozen=True, slots=True)
class Selector:
    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        return all(r.matches(labels) for r in self.requirements)

    def empty(self) -> bool:
        return not self.requirements and not self.nothing

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


_KEY = r"(?:[A-Za-z0-9.\-]+/)?[A-Za-z0-9]([A-Za-z0-9_.\-]*[A-Za-z0-9])?"
_VALUE = r"(?:[A-Za-z0-9]([A-Za-z0-9_.\-]*[A-Za-z0-9])?)?"
_SET_RE = re.compile(rf"^\s*(?P<key>{_KEY})\s+(?P<op>in|notin)\s*\((?P<values>[^)]*)\)\s*$")
_EQ_RE = re.compile(rf"^\s*(?P<key>{_KEY})\s*(?P<op>==|=|!=)\s*(?P<value>{_VALUE})\s*$")
_EXISTS_RE = re.compile(rf"^\s*(?P<neg>!?)\s*(?P<key>{_KEY})\s*$")


def _split_terms(text: str) -> list[str]:
    terms: list[str] = []
    current: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            terms.append("".join(current))
            current = []
        else:
            current.append(ch)
    terms.append("".join(current))
    return terms


def _valid_value(value: str) -> bool:
    return re.fullmatch(_VALUE, value) is not None and len(value) <= 63


def parse(text: str) -> Selector:
    if not text.strip():
        return Selector()
    requirements = []
    for term in _split_terms(text):
        if m := _SET_RE.match(term):
            values = tuple(v.strip() for v in m["values"].split(",") if v.strip())
            if not values or not all(_valid_value(v) for v in values):
                raise SelectorError(f"invalid values in {term.strip()!r}")
            requirements.append(Requirement(m["key"], m["op"], values))
        elif m := _EQ_RE.match(term):
            op = "!=" if m["op"] == "!=" else "="
            requirements.append(Requirement(m["key"], op, (m["value"],)))
        elif m := _EXISTS_RE.match(term):
            requirements.append(Requirement(m["key"], "!" if m["neg"] else "exists"))
        else:
            raise SelectorError(f"unable to parse requirement {term.strip()!r} in {text!r}")
    return Selector(tuple(requirements))


def everything() -> Selector:
    return Selector()


def nothing() -> Selector:
    return Selector(nothing=True)


def selector_from_set(labels: Mapping[str, str]) -> Selector:
    return Selector(tuple(Requirement(k, "=", (v,)) for k, v in sorted(labels.items())))


_EXPRESSION_OPS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}


def label_selector_as_selector(spec: Mapping[str, Any] | None) -> Selector:
    if spec is None:
        return nothing()
    requirements = [
        Requirement(k, "=", (v,)) for k, v in sorted((spec.get("matchLabels") or {}).items())
    ]
    expressions: Iterable[Mapping[str, Any]] = spec.get("matchExpressions") or []
    for i, expr in enumerate(expressions):
        op = _EXPRESSION_OPS.get(expr.get("operator", ""))
        if op is None:
            raise SelectorError(
                f"matchExpressions[{i}].operator: {expr.get('operator')!r} is not a valid operator"
            )
        values = tuple(expr.get("values") or ())
        if op in ("in", "notin") and not values:
            raise SelectorError(
                f"matchExpressions[{i}].values: must be specified for {expr['operator']}"
            )
        if op in ("exists", "!") and values:
            raise SelectorError(
                f"matchExpressions[{i}].values: must be empty for {expr['operator']}"
            )
        requirements.append(Requirement(expr.get("key", ""), op, values))
    return Selector(tuple(requirements))
