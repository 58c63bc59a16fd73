"""Int-or-string values (Go `k8s.io/apimachinery/pkg/util/intstr`).

On the wire an int-or-string is a JSON integer or a JSON string; typed structs hold the raw `int | str`
(`IntOrStr`, introspectable for CRD generation as `x-kubernetes-int-or-string`). `IntOrString` wraps a
raw value for the arithmetic Kubernetes does on it (percent scaling) and renders itself as Go's `%#v`
does, because Agones leaks that rendering into validation messages.
"""

from __future__ import annotations

import enum
import math
import re
from dataclasses import dataclass
from typing import Annotated

from msgspec import Meta

from ..field import go_quote

# The raw wire value, marked so the CRD generator emits `x-kubernetes-int-or-string: true`.
IntOrStr = Annotated[int | str, Meta(extra={"int_or_string": True})]

_ATOI = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class Type(enum.IntEnum):
    INT = 0
    STRING = 1


def atoi(text: str) -> int:
    """Go's `strconv.Atoi` (64-bit): optional sign and decimal digits only; `ValueError` otherwise."""
    if not _ATOI.fullmatch(text):
        raise ValueError(f"strconv.Atoi: parsing {go_quote(text)}: invalid syntax")
    value = int(text)
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise ValueError(f"strconv.Atoi: parsing {go_quote(text)}: value out of range")
    return value


@dataclass(frozen=True, slots=True)
class IntOrString:
    """An int-or-string, typed like Go's `intstr.IntOrString`."""

    type: Type
    int_val: int = 0
    str_val: str = ""

    @classmethod
    def from_int(cls, value: int) -> IntOrString:
        return cls(Type.INT, int_val=value)

    @classmethod
    def from_string(cls, value: str) -> IntOrString:
        return cls(Type.STRING, str_val=value)

    @classmethod
    def parse(cls, raw: int | str) -> IntOrString:
        """Wrap a decoded wire value (JSON integer or string)."""
        if isinstance(raw, str):
            return cls.from_string(raw)
        return cls.from_int(raw)

    def go_repr(self) -> str:
        """Go's `%#v`, e.g. `intstr.IntOrString{Type:1, IntVal:0, StrVal:"0%"}`."""
        return (
            f"intstr.IntOrString{{Type:{int(self.type)}, IntVal:{self.int_val}, "
            f"StrVal:{go_quote(self.str_val)}}}"
        )

    def __str__(self) -> str:
        return self.str_val if self.type is Type.STRING else str(self.int_val)


def _scale(value: int, total: int, round_up: bool) -> int:
    scaled = value * total / 100
    return math.ceil(scaled) if round_up else math.floor(scaled)


def get_value_from_int_or_percent(value: IntOrString | None, total: int, round_up: bool) -> int:
    """The deprecated `GetValueFromIntOrPercent`: any string is a percentage once `%` is removed.

    Raises `ValueError` with Go's message when the value cannot be read.
    """
    if value is None:
        raise ValueError("nil value for IntOrString")
    if value.type is Type.INT:
        return value.int_val
    try:
        number = atoi(value.str_val.replace("%", ""))
    except ValueError as err:
        raise ValueError(
            f"invalid value for IntOrString: invalid value {go_quote(value.str_val)}: {err}"
        ) from None
    return _scale(number, total, round_up)


def get_scaled_value_from_int_or_percent(
    value: IntOrString | None, total: int, round_up: bool
) -> int:
    """`GetScaledValueFromIntOrPercent`: a string must end in `%`; ints are returned unscaled."""
    if value is None:
        raise ValueError("nil value for IntOrString")
    if value.type is Type.INT:
        return value.int_val
    if not value.str_val.endswith("%"):
        raise ValueError("invalid value for IntOrString: invalid type: string is not a percentage")
    try:
        number = atoi(value.str_val[:-1])
    except ValueError as err:
        raise ValueError(
            f"invalid value for IntOrString: invalid value {go_quote(value.str_val)}: {err}"
        ) from None
    return _scale(number, total, round_up)
