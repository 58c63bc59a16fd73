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


def parse_rfc3339(value: str) -> dt.datetime:
    """Parse like Go's `time.Parse(time.RFC3339, value)`; returns an aware datetime."""
    orig = value
    # Layout chunks: (literal prefix, element). Elements are parsed below by name.
    chunks = [
        ("", "2006"),
        ("-", "01"),
        ("-", "02"),
        ("T", "15"),
        (":", "04"),
        (":", "05"),
        ("", "Z07:00"),
    ]
    year = month = day = hour = minute = second = micro = 0
    offset: int | None = None
    for prefix, elem in chunks:
        for ch in prefix:
            if not value or value[0] != ch:
                raise _cannot_parse(orig, value, prefix)
            value = value[1:]
        hold = value
        range_err = ""
        ok = True
        if elem == "2006":
            if len(value) < 4 or not _is_digit(value, 0):
                ok = False
            else:
                parsed = _atoi(value[:4])
                if parsed is None:
                    ok = False
                else:
                    year, value = parsed, value[4:]
        elif elem in ("01", "02", "04", "05"):
            got = _getnum(value, True)
            if got is None:
                ok = False
            elif elem == "01":
                month, value = got
                if not 1 <= month <= 12:
                    range_err = "month"
            elif elem == "02":
                day, value = got
            elif elem == "04":
                minute, value = got
                if minute >= 60:
                    range_err = "minute"
            else:
                second, value = got
                if second >= 60:
                    range_err = "second"
                elif len(value) >= 2 and value[0] in ".," and _is_digit(value, 1):
                    n = 2
                    while n < len(value) and _is_digit(value, n):
                        n += 1
                    digits = value[1 : min(n, 10)]
                    nanos = int(digits) * 10 ** (9 - len(digits))
                    micro = nanos // 1000
                    value = value[n:]
        elif elem == "15":
            got = _getnum(value, False)
            if got is None:
                ok = False
            else:
                hour, value = got
                if hour >= 24:
                    range_err = "hour"
        else:  # Z07:00
            if value[:1] == "Z":
                value = value[1:]
                offset = 0
            elif len(value) < 6 or value[3] != ":":
                ok = False
            else:
                sign, hh, mm, value = value[0], value[1:3], value[4:6], value[6:]
                hr = _getnum(hh, True)
                mi = _getnum(mm, True) if hr is not None else None
                if hr is None or mi is None:
                    ok = False
                else:
                    if hr[0] > 24:
                        range_err = "time zone offset hour"
                    if mi[0] > 60:
                        range_err = "time zone offset minute"
                    offset = (hr[0] * 60 + mi[0]) * 60
                    if sign == "-":
                        offset = -offset
                    elif sign != "+":
                        ok = False
        if range_err:
            raise _message(orig, f": {range_err} out of range")
        if not ok:
            raise _cannot_parse(orig, hold, elem)
    if value:
        raise _message(orig, ": extra text: " + _quote(value))
    if day < 1 or day > _days_in(month, year):
        raise _message(orig, ": day out of range")
    try:
        base = dt.datetime(year, month, day, hour, minute, second, micro, tzinfo=dt.UTC)
        result = base - dt.timedelta(seconds=offset or 0)
    except (ValueError, OverflowError):
        raise _message(orig, ": year out of range") from None
    return result


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
