"""Field errors, as Kubernetes' `apimachinery/pkg/util/validation/field` shapes them.

Validation in this project returns a list of `FieldError` values, never raises. Each error carries the
JSON path of the offending field, a type (whose `reason` is the Status cause reason, e.g.
`FieldValueRequired`) and an optional bad value and detail. `FieldError.body()` renders the text a
kube-apiserver puts in a Status cause's `message`; `str(err)` is `<path>: <body>`, the form joined into a
422 Status message. Values are rendered as Go's `field.Error` renders them: strings quoted, numbers and
bools bare, `None` as `"null"`; a `GoValue` carries text that must appear verbatim (Go's `%#v` of a
struct, which some Agones messages leak).
"""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass
from typing import Any


class ErrorType(enum.Enum):
    """Kind of field error: (cause reason, human text)."""

    NOT_FOUND = ("FieldValueNotFound", "Not found")
    REQUIRED = ("FieldValueRequired", "Required value")
    DUPLICATE = ("FieldValueDuplicate", "Duplicate value")
    INVALID = ("FieldValueInvalid", "Invalid value")
    NOT_SUPPORTED = ("FieldValueNotSupported", "Unsupported value")
    FORBIDDEN = ("FieldValueForbidden", "Forbidden")
    TOO_LONG = ("FieldValueTooLong", "Too long")
    TOO_MANY = ("FieldValueTooMany", "Too many")
    INTERNAL = ("InternalError", "Internal error")
    TYPE_INVALID = ("FieldValueTypeInvalid", "Invalid value")

    @property
    def reason(self) -> str:
        return self.value[0]

    @property
    def text(self) -> str:
        return self.value[1]


@dataclass(frozen=True)
class GoValue:
    """A bad value whose rendering is given verbatim (for Go `%#v` and `String()` output)."""

    text: str


class _Omit:
    def __repr__(self) -> str:
        return "OMIT"


# A bad value that is not printed at all (Go's `omitValue`).
OMIT: Any = _Omit()

# Types whose bad value is never printed, whatever was passed.
_VALUELESS = {ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.TOO_LONG, ErrorType.INTERNAL}


def go_quote(text: str) -> str:
    """Go's `%q` for the strings that appear in validation messages (JSON escaping is close enough)."""
    return json.dumps(text, ensure_ascii=False)


def go_syntax(value: Any) -> str:
    """Go's `%#v` of a decoded JSON value (`map[string]interface {}`, `[]interface {}`, int64,
    float64, string, bool, nil), as it shows in a schema error about an object or array value."""
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, dict):
        inner = ", ".join(f"{go_quote(str(k))}:{go_syntax(value[k])}" for k in sorted(value))
        return "map[string]interface {}{" + inner + "}"
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(go_syntax(v) for v in value) + "}"
    return render_value(value)


def render_value(value: Any) -> str:
    """Render a bad value the way `field.Error` does."""
    if value is None:
        return "null"
    if isinstance(value, GoValue):
        return value.text
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return go_quote(value)
    return repr(value)


@dataclass(frozen=True)
class FieldError:
    type: ErrorType
    field: str
    bad_value: Any = OMIT
    detail: str = ""

    @property
    def reason(self) -> str:
        return self.type.reason

    def body(self) -> str:
        """The cause message: type text, the rendered bad value where shown, then the detail."""
        if self.type in _VALUELESS or self.bad_value is OMIT:
            text = self.type.text
        else:
            text = f"{self.type.text}: {render_value(self.bad_value)}"
        if self.detail:
            text += f": {self.detail}"
        return text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"

    def to_cause(self) -> dict[str, str]:
        """The `Status.details.causes[]` entry a kube-apiserver returns for this error."""
        return {"reason": self.reason, "message": self.body(), "field": self.field}


class Path:
    """A JSON field path built up like Go's `field.Path`: `Path("spec").child("ports").index(0)`."""

    __slots__ = ("_text",)

    def __init__(self, *names: str) -> None:
        self._text = ".".join(names)

    @classmethod
    def _raw(cls, text: str) -> Path:
        p = cls()
        p._text = text
        return p

    def child(self, *names: str) -> Path:
        parts = [self._text, *names] if self._text else list(names)
        return Path._raw(".".join(parts))

    def index(self, i: int) -> Path:
        return Path._raw(f"{self._text}[{i}]")

    def key(self, k: str) -> Path:
        return Path._raw(f"{self._text}[{k}]")

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"Path({self._text!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Path) and other._text == self._text

    def __hash__(self) -> int:
        return hash(self._text)


def required(path: Path | str, detail: str = "") -> FieldError:
    return FieldError(ErrorType.REQUIRED, str(path), OMIT, detail)


def invalid(path: Path | str, value: Any, detail: str = "") -> FieldError:
    return FieldError(ErrorType.INVALID, str(path), value, detail)


def forbidden(path: Path | str, detail: str = "") -> FieldError:
    return FieldError(ErrorType.FORBIDDEN, str(path), OMIT, detail)


def duplicate(path: Path | str, value: Any) -> FieldError:
    return FieldError(ErrorType.DUPLICATE, str(path), value)


def not_found(path: Path | str, value: Any) -> FieldError:
    return FieldError(ErrorType.NOT_FOUND, str(path), value)


def not_supported(path: Path | str, value: Any, valid_values: list[str]) -> FieldError:
    detail = (
        "supported values: " + ", ".join(go_quote(v) for v in valid_values) if valid_values else ""
    )
    return FieldError(ErrorType.NOT_SUPPORTED, str(path), value, detail)


def too_long(path: Path | str, max_length: int) -> FieldError:
    detail = f"may not be more than {max_length} bytes" if max_length >= 0 else ""
    return FieldError(ErrorType.TOO_LONG, str(path), OMIT, detail)


def too_many(path: Path | str, actual: int, max_items: int) -> FieldError:
    detail = f"must have at most {max_items} items" if max_items >= 0 else ""
    return FieldError(ErrorType.TOO_MANY, str(path), actual, detail)


def internal(path: Path | str, err: str) -> FieldError:
    return FieldError(ErrorType.INTERNAL, str(path), OMIT, err)


def aggregate_message(kind: str, group: str, name: str, errors: list[FieldError]) -> str:
    """The 422 message: `<Kind>.<group> "<name>" is invalid: <err>` or `...: [<e1>, <e2>]`."""
    qualified = f"{kind}.{group}" if group else kind
    if len(errors) == 1:
        body = str(errors[0])
    else:
        body = "[" + ", ".join(str(e) for e in errors) + "]"
    return f'{qualified} "{name}" is invalid: {body}'
