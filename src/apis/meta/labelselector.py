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
* `parse_selector(text)` is `labels.Parse` (the `?labelSelector=` form, `gt`/`lt` included) with
  its error texts; `selector_from_set(labels)` is `labels.SelectorFromSet`.
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
    GREATER_THAN = "gt"
    LESS_THAN = "lt"


def _parse_int64(text: str) -> int | None:
    """Go's `strconv.ParseInt(text, 10, 64)`, None on error."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


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
        if op is Operator.DOES_NOT_EXIST:
            return self.key not in labels
        # gt / lt: both sides must be integers
        if self.key not in labels or len(self.values) != 1:
            return False
        have, want = _parse_int64(labels[self.key]), _parse_int64(self.values[0])
        if have is None or want is None:
            return False
        return have > want if op is Operator.GREATER_THAN else have < want

    def __str__(self) -> str:
        op = self.operator
        if op is Operator.EXISTS:
            return self.key
        if op is Operator.DOES_NOT_EXIST:
            return "!" + self.key
        values = self.values[0] if len(self.values) == 1 else ",".join(sorted(self.values))
        if op in (Operator.IN, Operator.NOT_IN):
            return f"{self.key} {op.value} ({values})"
        symbol = {Operator.GREATER_THAN: ">", Operator.LESS_THAN: "<"}.get(op, op.value)
        return f"{self.key}{symbol}{values}"


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
    elif op in (Operator.GREATER_THAN, Operator.LESS_THAN):
        if len(values) != 1:
            errs.append(
                invalid(
                    value_path, shown, "for 'Gt', 'Lt' operators, exactly one value is required"
                )
            )
        for i, value in enumerate(values):
            if _parse_int64(value) is None:
                errs.append(
                    invalid(
                        value_path.index(i),
                        value,
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    )
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


# ------------------------------------------------------------------------------------------------
# The text form (`labels.Parse`): `a=b,c!=d,e in (f,g),h notin (i),j,!k,l>1,m<2`


class _Tok(enum.Enum):
    ERROR = enum.auto()
    END = enum.auto()
    CLOSED_PAR = enum.auto()
    COMMA = enum.auto()
    DOES_NOT_EXIST = enum.auto()
    DOUBLE_EQUALS = enum.auto()
    EQUALS = enum.auto()
    GREATER_THAN = enum.auto()
    IDENTIFIER = enum.auto()
    IN = enum.auto()
    LESS_THAN = enum.auto()
    NOT_EQUALS = enum.auto()
    NOT_IN = enum.auto()
    OPEN_PAR = enum.auto()


_STRING_TO_TOKEN = {
    ")": _Tok.CLOSED_PAR,
    ",": _Tok.COMMA,
    "!": _Tok.DOES_NOT_EXIST,
    "==": _Tok.DOUBLE_EQUALS,
    "=": _Tok.EQUALS,
    ">": _Tok.GREATER_THAN,
    "in": _Tok.IN,
    "<": _Tok.LESS_THAN,
    "!=": _Tok.NOT_EQUALS,
    "notin": _Tok.NOT_IN,
    "(": _Tok.OPEN_PAR,
}
_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
_BINARY_OPERATORS = "in, notin, =, ==, !=, gt, lt"


def _lex(text: str) -> list[tuple[_Tok, str]]:
    """The Kubernetes selector lexer: identifiers/keywords and (longest-match) special symbols."""
    items: list[tuple[_Tok, str]] = []
    pos = 0
    while True:
        while pos < len(text) and text[pos] in _WHITESPACE:
            pos += 1
        if pos >= len(text):
            items.append((_Tok.END, ""))
            return items
        if text[pos] in _SPECIAL:
            buffer = ""
            last: tuple[_Tok, str] | None = None
            while pos < len(text) and text[pos] in _SPECIAL:
                buffer += text[pos]
                token = _STRING_TO_TOKEN.get(buffer)
                if token is not None:
                    last = (token, buffer)
                elif last is not None:
                    break
                pos += 1
            if last is None:
                items.append((_Tok.ERROR, f"error expected: keyword found '{buffer}'"))
            else:
                items.append(last)
            continue
        start = pos
        while pos < len(text) and text[pos] not in _WHITESPACE and text[pos] not in _SPECIAL:
            pos += 1
        word = text[start:pos]
        items.append((_STRING_TO_TOKEN.get(word, _Tok.IDENTIFIER), word))


class _Parser:
    def __init__(self, text: str) -> None:
        self._items = _lex(text)
        self._pos = 0

    def lookahead(self, values: bool = True) -> tuple[_Tok, str]:
        tok, lit = self._items[self._pos]
        if values and tok in (_Tok.IN, _Tok.NOT_IN):
            tok = _Tok.IDENTIFIER
        return tok, lit

    def consume(self, values: bool = True) -> tuple[_Tok, str]:
        item = self.lookahead(values)
        if self._pos < len(self._items) - 1:
            self._pos += 1
        return item

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            tok, lit = self.lookahead()
            if tok in (_Tok.IDENTIFIER, _Tok.DOES_NOT_EXIST):
                try:
                    requirements.append(self.requirement())
                except SelectorError as err:
                    raise SelectorError(f"unable to parse requirement: {err}") from None
                tok, lit = self.consume()
                if tok is _Tok.END:
                    return requirements
                if tok is _Tok.COMMA:
                    tok2, lit2 = self.lookahead()
                    if tok2 not in (_Tok.IDENTIFIER, _Tok.DOES_NOT_EXIST):
                        raise SelectorError(f"found '{lit2}', expected: identifier after ','")
                else:
                    raise SelectorError(f"found '{lit}', expected: ',' or 'end of string'")
            elif tok is _Tok.END:
                return requirements
            else:
                raise SelectorError(f"found '{lit}', expected: !, identifier, or 'end of string'")

    def requirement(self) -> Requirement:
        op: Operator | None = None
        tok, lit = self.consume()
        if tok is _Tok.DOES_NOT_EXIST:
            op = Operator.DOES_NOT_EXIST
            tok, lit = self.consume()
        if tok is not _Tok.IDENTIFIER:
            raise SelectorError(f"found '{lit}', expected: identifier")
        key_errs = is_qualified_name(lit)
        if key_errs:
            raise SelectorError(str(invalid(Path("key"), lit, "; ".join(key_errs))))
        if self.lookahead()[0] in (_Tok.END, _Tok.COMMA) and op is None:
            op = Operator.EXISTS
        if op in (Operator.EXISTS, Operator.DOES_NOT_EXIST):
            return new_requirement(lit, op, [])
        key = lit
        tok, lit = self.consume(values=False)
        operators = {
            _Tok.IN: Operator.IN,
            _Tok.EQUALS: Operator.EQUALS,
            _Tok.DOUBLE_EQUALS: Operator.DOUBLE_EQUALS,
            _Tok.GREATER_THAN: Operator.GREATER_THAN,
            _Tok.LESS_THAN: Operator.LESS_THAN,
            _Tok.NOT_IN: Operator.NOT_IN,
            _Tok.NOT_EQUALS: Operator.NOT_EQUALS,
        }
        if tok not in operators:
            raise SelectorError(f"found '{lit}', expected: {_BINARY_OPERATORS}")
        op = operators[tok]
        values = self.values() if op in (Operator.IN, Operator.NOT_IN) else self.exact_value()
        return new_requirement(key, op, sorted(values))

    def values(self) -> set[str]:
        tok, lit = self.consume()
        if tok is not _Tok.OPEN_PAR:
            raise SelectorError(f"found '{lit}' expected: '('")
        tok, lit = self.lookahead()
        if tok in (_Tok.IDENTIFIER, _Tok.COMMA):
            found = self.identifiers()
            if self.consume()[0] is not _Tok.CLOSED_PAR:
                raise SelectorError(f"found '{lit}', expected: ')'")
            return found
        if tok is _Tok.CLOSED_PAR:
            self.consume()
            return {""}
        raise SelectorError(f"found '{lit}', expected: ',', ')' or identifier")

    def identifiers(self) -> set[str]:
        found: set[str] = set()
        while True:
            tok, lit = self.consume()
            if tok is _Tok.IDENTIFIER:
                found.add(lit)
                tok2, lit2 = self.lookahead()
                if tok2 is _Tok.COMMA:
                    continue
                if tok2 is _Tok.CLOSED_PAR:
                    return found
                raise SelectorError(f"found '{lit2}', expected: ',' or ')'")
            if tok is _Tok.COMMA:
                if not found:
                    found.add("")
                tok2 = self.lookahead()[0]
                if tok2 is _Tok.CLOSED_PAR:
                    found.add("")
                    return found
                if tok2 is _Tok.COMMA:
                    self.consume()
                    found.add("")
                continue
            raise SelectorError(f"found '{lit}', expected: ',', or identifier")

    def exact_value(self) -> set[str]:
        if self.lookahead()[0] in (_Tok.END, _Tok.COMMA):
            return {""}
        tok, lit = self.consume()
        if tok is _Tok.IDENTIFIER:
            return {lit}
        raise SelectorError(f"found '{lit}', expected: identifier")


def parse_selector(text: str) -> Selector:
    """`labels.Parse`: the text form of a selector (as in `?labelSelector=`), sorted by key."""
    requirements = _Parser(text).parse()
    return Selector(tuple(sorted(requirements, key=lambda r: r.key)))


def selector_from_set(labels: Mapping[str, str]) -> Selector:
    """`labels.SelectorFromSet`: every key must equal its value (empty set: everything)."""
    return Selector(tuple(Requirement(k, Operator.EQUALS, (labels[k],)) for k in sorted(labels)))
