"""Go's `time.ParseDuration`, with its exact acceptance rules and error texts.

`parse_duration(text)` returns a whole number of nanoseconds (Go's `time.Duration`) or raises
`DurationError` whose `str()` is the message Go gives (`format_duration(ns)` is the inverse, Go's
`Duration.String()`), e.g.
`time: unknown unit " hours" in duration "5 hours"`. Agones puts that text verbatim into
validation messages, so it has to match byte for byte.

Go scans bytes, not characters: a unit is the run of bytes up to the next digit or `.`, and only
`ns`, `us`, `µs` (U+00B5), `μs` (U+03BC), `ms`, `s`, `m`, `h` are units. Values above
2^63-1 ns (about 292 years) are rejected; `-2^63` is accepted. Fractions are applied with float64
arithmetic, as Go does, so results agree to the nanosecond.
"""

from __future__ import annotations

NANOSECOND = 1
MICROSECOND = 1000 * NANOSECOND
MILLISECOND = 1000 * MICROSECOND
SECOND = 1000 * MILLISECOND
MINUTE = 60 * SECOND
HOUR = 60 * MINUTE

_UNITS: dict[bytes, int] = {
    b"ns": NANOSECOND,
    b"us": MICROSECOND,
    "µs".encode(): MICROSECOND,  # U+00B5 micro sign
    "μs".encode(): MICROSECOND,  # U+03BC Greek small letter mu
    b"ms": MILLISECOND,
    b"s": SECOND,
    b"m": MINUTE,
    b"h": HOUR,
}

_MAX = 1 << 63
_HEX = "0123456789abcdef"


class DurationError(ValueError):
    """A duration Go's `time.ParseDuration` would refuse; `str()` is Go's message."""


def go_time_quote(raw: bytes) -> str:
    """The `quote` helper of Go's time package: `"` + text + `"`, non-ASCII and control bytes as `\\xNN`."""
    out = ['"']
    text = raw.decode("utf-8", errors="surrogateescape")
    for ch in text:
        code = ord(ch)
        if code >= 0x80 or code < 0x20:
            for byte in ch.encode("utf-8", errors="surrogateescape"):
                out.append("\\x" + _HEX[byte >> 4] + _HEX[byte & 0xF])
        else:
            if ch in '"\\':
                out.append("\\")
            out.append(ch)
    out.append('"')
    return "".join(out)


def _leading_int(s: bytes) -> tuple[int, bytes]:
    x = 0
    i = 0
    while i < len(s) and 0x30 <= s[i] <= 0x39:
        if x > _MAX // 10:
            raise OverflowError
        x = x * 10 + (s[i] - 0x30)
        if x > _MAX:
            raise OverflowError
        i += 1
    return x, s[i:]


def _leading_fraction(s: bytes) -> tuple[int, float, bytes]:
    x = 0
    scale = 1.0
    overflow = False
    i = 0
    while i < len(s) and 0x30 <= s[i] <= 0x39:
        if not overflow:
            if x > (_MAX - 1) // 10:
                overflow = True
            else:
                y = x * 10 + (s[i] - 0x30)
                if y > _MAX:
                    overflow = True
                else:
                    x = y
                    scale *= 10
        i += 1
    return x, scale, s[i:]


def parse_duration(text: str | bytes) -> int:
    """Parse a Go duration string (`"1h30m"`, `"-1.5h"`, `"300ms"`) into nanoseconds."""
    orig = text.encode() if isinstance(text, str) else text
    s = orig
    invalid = DurationError("time: invalid duration " + go_time_quote(orig))
    neg = False
    if s[:1] in (b"-", b"+"):
        neg = s[:1] == b"-"
        s = s[1:]
    if s == b"0":
        return 0
    if not s:
        raise invalid
    total = 0
    while s:
        if not (s[0] == 0x2E or 0x30 <= s[0] <= 0x39):
            raise invalid
        before = len(s)
        try:
            v, s = _leading_int(s)
        except OverflowError:
            raise invalid from None
        pre = before != len(s)
        post = False
        f, scale = 0, 1.0
        if s[:1] == b".":
            s = s[1:]
            before = len(s)
            f, scale, s = _leading_fraction(s)
            post = before != len(s)
        if not pre and not post:
            raise invalid
        i = 0
        while i < len(s) and not (s[i] == 0x2E or 0x30 <= s[i] <= 0x39):
            i += 1
        if i == 0:
            raise DurationError("time: missing unit in duration " + go_time_quote(orig))
        unit_text, s = s[:i], s[i:]
        unit = _UNITS.get(unit_text)
        if unit is None:
            raise DurationError(
                "time: unknown unit "
                + go_time_quote(unit_text)
                + " in duration "
                + go_time_quote(orig)
            )
        if v > _MAX // unit:
            raise invalid
        v *= unit
        if f > 0:
            v += int(float(f) * (float(unit) / scale))
            if v > _MAX:
                raise invalid
        total += v
        if total > _MAX:
            raise invalid
    if neg:
        return -total
    if total > _MAX - 1:
        raise invalid
    return total


def format_duration(ns: int) -> str:
    """Go's `time.Duration.String()`: `1h2m3.5s`, `300ms`, `1.5µs`, `0s`."""
    if ns == 0:
        return "0s"
    sign, ns = ("-", -ns) if ns < 0 else ("", ns)
    if ns < SECOND:
        for unit, size in (("ms", MILLISECOND), ("µs", MICROSECOND), ("ns", NANOSECOND)):
            if ns >= size:
                return sign + _decimal(ns, size) + unit
    out = ""
    for unit, size in (("h", HOUR), ("m", MINUTE)):
        if ns >= size or out:
            out += f"{ns // size}{unit}"
            ns %= size
    return sign + out + _decimal(ns, SECOND) + "s"


def _decimal(value: int, size: int) -> str:
    whole, frac = divmod(value, size)
    if not frac:
        return str(whole)
    return f"{whole}." + f"{frac:0{len(str(size)) - 1}d}".rstrip("0")
