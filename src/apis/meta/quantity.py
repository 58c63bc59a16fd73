"""Kubernetes resource quantities (Go `k8s.io/apimachinery/pkg/api/resource.Quantity`).

`Quantity.parse` accepts what the apiserver accepts (`500m`, `1.5Gi`, `2`, `1e3`, JSON numbers) and
keeps the exact value as a `Fraction`, rounded up to nano units as Kubernetes does; comparisons are
exact. `str(q)` is Go's canonical `String()` (`0.5` prints `500m`, `1024Mi` prints `1Gi`), the form
that appears in validation messages.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

Format = Literal["DecimalSI", "BinarySI", "DecimalExponent"]

# The pattern the PodSpec schema puts on quantities (`resources.limits.*` etc.).
QUANTITY_PATTERN = r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
_QUANTITY = re.compile(
    r"(?P<num>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?P<suffix>[KMGTPE]i|[numkMGTPE]|[eE][+-]?[0-9]+)?"
)
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DECIMAL_SUFFIX = {exp: s for s, exp in _DECIMAL.items()}
_BINARY_SUFFIX = {exp: s for s, exp in _BINARY.items()}
_NANO = Fraction(1, 10**9)


class QuantityError(ValueError):
    """The text is not a quantity (Go's `ErrFormatWrong` and friends)."""


@dataclass(frozen=True, slots=True)
class Quantity:
    value: Fraction
    format: Format = "DecimalSI"

    @classmethod
    def parse(cls, raw: str | int | float) -> Quantity:
        """Parse a quantity as `ParseQuantity` does; `QuantityError` when it is not one."""
        if isinstance(raw, bool):
            raise QuantityError("quantities must match the regular expression")
        if isinstance(raw, int):
            return cls(Fraction(raw))
        if isinstance(raw, float):
            if not math.isfinite(raw):
                raise QuantityError("quantities must match the regular expression")
            raw = repr(raw)
        text = raw.strip()
        if not text:
            raise QuantityError("expected a non-empty quantity")
        m = _QUANTITY.fullmatch(text)
        if m is None:
            raise QuantityError("quantities must match the regular expression")
        number = Fraction(m.group("num"))
        suffix = m.group("suffix") or ""
        fmt: Format
        if suffix in _BINARY:
            fmt = "BinarySI"
            value = number * (1024 ** _BINARY[suffix])
        elif suffix in _DECIMAL:
            fmt = "DecimalSI"
            value = number * Fraction(10) ** _DECIMAL[suffix]
        else:
            fmt = "DecimalExponent"
            value = number * Fraction(10) ** int(suffix[1:])
        # Kubernetes keeps at most nano precision, rounding away from zero.
        scaled = value / _NANO
        if scaled.denominator != 1:
            scaled = Fraction(math.ceil(scaled) if scaled > 0 else math.floor(scaled))
            value = scaled * _NANO
        return cls(value, fmt)

    def cmp(self, other: Quantity) -> int:
        """-1, 0 or 1, like Go's `Cmp`."""
        return (self.value > other.value) - (self.value < other.value)

    def is_negative(self) -> bool:
        return self.value < 0

    def __str__(self) -> str:
        return canonical(self)


def _decimal_parts(value: Fraction) -> tuple[int, int]:
    """Mantissa and exponent (a multiple of 3) with no removable trailing thousands."""
    mantissa, exponent = int(value / _NANO), -9
    while mantissa % 1000 == 0 and exponent < 18:
        mantissa //= 1000
        exponent += 3
    return mantissa, exponent


def canonical(q: Quantity) -> str:
    """Go's `Quantity.String()` for a quantity parsed from the wire."""
    if q.value == 0:
        return "0"
    fmt = q.format
    if fmt == "BinarySI":
        if -1024 < q.value < 1024 or q.value.denominator != 1:
            fmt = "DecimalSI"
        else:
            mantissa, exponent = int(q.value), 0
            while mantissa % 1024 == 0 and exponent < 6:
                mantissa //= 1024
                exponent += 1
            return f"{mantissa}{_BINARY_SUFFIX.get(exponent, '')}"
    mantissa, exponent = _decimal_parts(q.value)
    if fmt == "DecimalExponent":
        return f"{mantissa}e{exponent}" if exponent else str(mantissa)
    return f"{mantissa}{_DECIMAL_SUFFIX[exponent]}"
