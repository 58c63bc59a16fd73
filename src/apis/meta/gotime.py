"""Go's time handling where it shows through the Agones API: RFC 3339 parsing, `metav1.Time` JSON,
time-zone loading and the renderings Go's validation messages print.

* `parse_rfc3339(text)` accepts exactly what `time.Parse(time.RFC3339, text)` accepts (which is
  laxer than the RFC: one-digit hours, a fractional second the layout does not name) and raises
  `TimeParseError` with Go's message, e.g.
  `parsing time "" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "2006"`.
* `format_rfc3339(t)` is `metav1.Time`'s JSON form: UTC, whole seconds, `Z`.
* `load_location(name)` is `time.LoadLocation` over the IANA database (zoneinfo + tzdata), with
  Go's error texts (`unknown time zone Mars/Olympus_Mons`).
* `go_time_string(t)` / `go_time_gostring(t)` are Go's `Time.String()` and `%#v`
  (`time.Date(2100, time.January, 2, 0, 0, 0, 0, time.Local)`), printed as a process with
  `TZ=UTC` prints them (the Agones webhook runs that way; decoded times are `time.Local`).

Python's `datetime` holds microseconds and years 1..9999; Go's nanoseconds beyond the sixth digit
are dropped and years outside that range are refused with a `year out of range` error.
"""

from __future__ import annotations

import datetime as dt
import zoneinfo
from collections.abc import Callable
from typing import NamedTuple

from .goduration import go_time_quote

RFC3339 = "2006-01-02T15:04:05Z07:00"

_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


class TimeParseError(ValueError):
    """A value Go's `time.Parse(time.RFC3339, ...)` refuses; `str()` is Go's message."""


class LocationError(ValueError):
    """A name Go's `time.LoadLocation` refuses; `str()` is Go's message."""


def _quote(text: str) -> str:
    return go_time_quote(text.encode("utf-8", errors="surrogateescape"))


def _cannot_parse(value: str, value_elem: str, layout_elem: str) -> TimeParseError:
    return TimeParseError(
        f"parsing time {_quote(value)} as {_quote(RFC3339)}: cannot parse "
        f"{_quote(value_elem)} as {_quote(layout_elem)}"
    )


def _message(value: str, message: str) -> TimeParseError:
    return TimeParseError(f"parsing time {_quote(value)}{message}")


def _is_digit(s: str, i: int) -> bool:
    return len(s) > i and "0" <= s[i] <= "9"


def _getnum(s: str, fixed: bool) -> tuple[int, str] | None:
    if not _is_digit(s, 0):
        return None
    if not _is_digit(s, 1):
        if fixed:
            return None
        return int(s[0]), s[1:]
    return int(s[:2]), s[2:]


def _days_in(month: int, year: int) -> int:
    if month == 2:
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        return 29 if leap else 28
    return 30 if month in (4, 6, 9, 11) else 31


def _atoi(s: str) -> int | None:
    digits = s[1:] if s[:1] in ("+", "-") else s
    if not digits or not all("0" <= c <= "9" for c in digits):
        return None
    return int(s)


class _Element(NamedTuple):
    """One layout element read off the front of the value: its number, what follows, and the
    name of the field that is out of range ("" if none). `micro` is the second's fraction."""

    number: int
    rest: str
    range_err: str = ""
    micro: int = 0


def _year(value: str) -> _Element | None:
    if len(value) < 4 or not _is_digit(value, 0):
        return None
    year = _atoi(value[:4])
    return None if year is None else _Element(year, value[4:])


def _two_digits(field: str, limit: int, fixed: bool = True) -> Callable[[str], _Element | None]:
    """A two-digit element (one digit allowed unless `fixed`); `limit` is the first bad value."""

    def parse(value: str) -> _Element | None:
        got = _getnum(value, fixed)
        if got is None:
            return None
        number, rest = got
        bad = number >= limit or (field == "month" and number < 1)
        return _Element(number, rest, field if bad else "")

    return parse


def _fraction(value: str) -> tuple[int, str]:
    """Microseconds of a `.123456789` (or `,`) fraction at the front of `value`, and the rest."""
    if not (len(value) >= 2 and value[0] in ".," and _is_digit(value, 1)):
        return 0, value
    n = 2
    while n < len(value) and _is_digit(value, n):
        n += 1
    digits = value[1 : min(n, 10)]
    nanos = int(digits) * 10 ** (9 - len(digits))
    return nanos // 1000, value[n:]


def _second(value: str) -> _Element | None:
    element = _two_digits("second", 60)(value)
    if element is None or element.range_err:
        return element
    micro, rest = _fraction(element.rest)
    return _Element(element.number, rest, "", micro)


def _zone(value: str) -> _Element | None:
    """`Z` or `±hh:mm`, as seconds east of UTC."""
    if value[:1] == "Z":
        return _Element(0, value[1:])
    if len(value) < 6 or value[3] != ":":
        return None
    sign, rest = value[0], value[6:]
    hours = _getnum(value[1:3], True)
    minutes = _getnum(value[4:6], True) if hours is not None else None
    if hours is None or minutes is None:
        return None
    range_err = ""
    if hours[0] > 24:
        range_err = "time zone offset hour"
    if minutes[0] > 60:
        range_err = "time zone offset minute"
    offset = (hours[0] * 60 + minutes[0]) * 60
    if sign not in "+-" or not sign:
        return _Element(0, rest, range_err) if range_err else None
    return _Element(-offset if sign == "-" else offset, rest, range_err)


# RFC 3339 as Go's layout: (literal before the element, element, its parser), in order.
_LAYOUT: tuple[tuple[str, str, Callable[[str], _Element | None]], ...] = (
    ("", "2006", _year),
    ("-", "01", _two_digits("month", 13)),
    ("-", "02", _two_digits("day", 100)),
    ("T", "15", _two_digits("hour", 24, fixed=False)),
    (":", "04", _two_digits("minute", 60)),
    (":", "05", _second),
    ("", "Z07:00", _zone),
)


def _read_elements(orig: str) -> tuple[list[_Element], str]:
    """Every layout element of `orig`, in order, and the text left after the last; Go's errors."""
    value, elements = orig, []
    for prefix, layout, parse in _LAYOUT:
        for ch in prefix:
            if not value or value[0] != ch:
                raise _cannot_parse(orig, value, prefix)
            value = value[1:]
        element = parse(value)
        if element is not None and element.range_err:
            raise _message(orig, f": {element.range_err} out of range")
        if element is None:
            raise _cannot_parse(orig, value, layout)
        elements.append(element)
        value = element.rest
    return elements, value


def parse_rfc3339(value: str) -> dt.datetime:
    """Parse like Go's `time.Parse(time.RFC3339, value)`; returns an aware datetime."""
    elements, extra = _read_elements(value)
    if extra:
        raise _message(value, ": extra text: " + _quote(extra))
    year, month, day, hour, minute, second, zone = elements
    if day.number < 1 or day.number > _days_in(month.number, year.number):
        raise _message(value, ": day out of range")
    try:
        base = dt.datetime(
            year.number,
            month.number,
            day.number,
            hour.number,
            minute.number,
            second.number,
            second.micro,
            tzinfo=dt.UTC,
        )
        return base - dt.timedelta(seconds=zone.number)
    except (ValueError, OverflowError):
        raise _message(value, ": year out of range") from None


def format_rfc3339(t: dt.datetime) -> str:
    """`metav1.Time` JSON: the instant in UTC as `2006-01-02T15:04:05Z` (fraction dropped)."""
    u = t.astimezone(dt.UTC)
    return f"{u.year:04d}-{u.month:02d}-{u.day:02d}T{u.hour:02d}:{u.minute:02d}:{u.second:02d}Z"


def normalize_rfc3339(text: str) -> str:
    """Round-trip a `metav1.Time` string through Go: parse, then re-serialise in UTC."""
    return format_rfc3339(parse_rfc3339(text))


def go_time_string(t: dt.datetime) -> str:
    """Go's `Time.String()` for a `time.Local` time in a `TZ=UTC` process."""
    u = t.astimezone(dt.UTC)
    text = f"{u.year:04d}-{u.month:02d}-{u.day:02d} {u.hour:02d}:{u.minute:02d}:{u.second:02d}"
    if u.microsecond:
        text += f".{u.microsecond:06d}".rstrip("0")
    return text + " +0000 UTC"


def go_time_gostring(t: dt.datetime | None) -> str:
    """Go's `%#v` of a `time.Time`: `time.Date(y, time.Month, d, h, m, s, ns, time.Local)`."""
    if t is None:
        return "time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)"
    u = t.astimezone(dt.UTC)
    return (
        f"time.Date({u.year}, time.{_MONTHS[u.month - 1]}, {u.day}, {u.hour}, {u.minute}, "
        f"{u.second}, {u.microsecond * 1000}, time.Local)"
    )


def load_location(name: str) -> dt.tzinfo:
    """Go's `time.LoadLocation`: "" and "UTC" are UTC, "Local" is (here) UTC, else IANA names."""
    if name in ("", "UTC", "Local"):
        return dt.UTC
    if ".." in name or name[0] in "/\\":
        raise LocationError("time: invalid location name")
    try:
        return zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
        raise LocationError(f"unknown time zone {name}") from None
