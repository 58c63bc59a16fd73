"""Standard 5-field cron specs, parsed as `robfig/cron/v3`'s `ParseStandard` parses them.

`parse_standard(spec)` returns a `SpecSchedule` (one bit set per allowed value of each field) or
raises `CronError` whose `str()` is robfig's message, e.g.
`expected exactly 5 fields, found 3: [not a cron]`; Agones embeds it in the validation message
`invalid startCron: <err>`. Accepted: `minute hour day-of-month month day-of-week`, each a
comma list of `*`, `?`, `N`, `N-M`, with optional `/step`; month and weekday names (`jan`,
`sun`, case-insensitive); descriptors `@yearly`/`@annually`/`@monthly`/`@weekly`/`@daily`/
`@midnight`/`@hourly` and `@every <go duration>`. A `TZ=`/`CRON_TZ=` prefix is parsed as robfig
does (the zone must load); Agones then rejects any spec containing `TZ` separately.

`SpecSchedule.next(t)` is robfig's `Next`: the first activation strictly after `t` (to the second),
or `None` when there is none within five years.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from ...field import go_quote
from ...meta.goduration import DurationError, parse_duration
from ...meta.gotime import LocationError, load_location

STAR_BIT = 1 << 63


class CronError(ValueError):
    """A spec robfig/cron refuses; `str()` is its message."""


@dataclass(frozen=True)
class _Bounds:
    low: int
    high: int
    names: dict[str, int] | None = None


_SECONDS = _Bounds(0, 59)
_MINUTES = _Bounds(0, 59)
_HOURS = _Bounds(0, 23)
_DOM = _Bounds(1, 31)
_MONTHS = _Bounds(
    1,
    12,
    {
        m: i + 1
        for i, m in enumerate(
            ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        )
    },
)
_DOW = _Bounds(
    0, 6, {d: i for i, d in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}
)


@dataclass(frozen=True)
class SpecSchedule:
    """Allowed values of each field as bit sets (bit N set = value N allowed; bit 63 = `*`)."""

    second: int
    minute: int
    hour: int
    dom: int
    month: int
    dow: int
    location: dt.tzinfo | None = None  # None: the time zone of the time passed to `next`

    def _day_matches(self, t: dt.datetime) -> bool:
        dom_match = bool((1 << t.day) & self.dom)
        dow_match = bool((1 << ((t.weekday() + 1) % 7)) & self.dow)
        if self.dom & STAR_BIT or self.dow & STAR_BIT:
            return dom_match and dow_match
        return dom_match or dow_match

    def next(self, t: dt.datetime) -> dt.datetime | None:
        """The next activation after `t` (aware), in `t`'s zone; None if none within 5 years."""
        orig_tz = t.tzinfo or dt.UTC
        loc = self.location or orig_tz
        t = t.astimezone(loc)
        t = _add(t, dt.timedelta(seconds=1, microseconds=-t.microsecond))
        added = False
        year_limit = t.year + 5
        while True:
            if t.year > year_limit:
                return None
            wrapped = False
            while not (1 << t.month) & self.month:
                if not added:
                    added = True
                    t = _go_date(t.year, t.month, 1, 0, 0, 0, loc)
                t = _go_date(t.year, t.month + 1, t.day, t.hour, t.minute, t.second, loc)
                if t.month == 1:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not self._day_matches(t):
                if not added:
                    added = True
                    t = _go_date(t.year, t.month, t.day, 0, 0, 0, loc)
                t = _go_date(t.year, t.month, t.day + 1, t.hour, t.minute, t.second, loc)
                if t.hour != 0:  # midnight skipped or doubled by a DST change
                    shift = 24 - t.hour if t.hour > 12 else -t.hour
                    t = _add(t, dt.timedelta(hours=shift))
                if t.day == 1:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not (1 << t.hour) & self.hour:
                if not added:
                    added = True
                    t = _go_date(t.year, t.month, t.day, t.hour, 0, 0, loc)
                t = _add(t, dt.timedelta(hours=1))
                if t.hour == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not (1 << t.minute) & self.minute:
                if not added:
                    added = True
                    t = t.replace(second=0, microsecond=0)
                t = _add(t, dt.timedelta(minutes=1))
                if t.minute == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not (1 << t.second) & self.second:
                if not added:
                    added = True
                    t = t.replace(microsecond=0)
                t = _add(t, dt.timedelta(seconds=1))
                if t.second == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            return t.astimezone(orig_tz)


@dataclass(frozen=True)
class ConstantDelaySchedule:
    """`@every <duration>`: activations every `delay` (rounded down to whole seconds, min 1 s)."""

    delay: dt.timedelta

    def next(self, t: dt.datetime) -> dt.datetime | None:
        return t + self.delay - dt.timedelta(microseconds=t.microsecond)


Schedule = SpecSchedule | ConstantDelaySchedule


def _add(t: dt.datetime, delta: dt.timedelta) -> dt.datetime:
    """Absolute-time addition (Go's `Time.Add`), not Python's wall-clock addition."""
    tz = t.tzinfo
    return (t.astimezone(dt.UTC) + delta).astimezone(tz)


def _go_date(
    year: int, month: int, day: int, hour: int, minute: int, second: int, tz: dt.tzinfo
) -> dt.datetime:
    """Go's `time.Date`: normalises out-of-range fields and resolves DST gaps Go's way."""
    year += (month - 1) // 12
    month = (month - 1) % 12 + 1
    base = dt.datetime(year, month, 1) + dt.timedelta(
        days=day - 1, hours=hour, minutes=minute, seconds=second
    )
    wall = base.replace(tzinfo=dt.UTC).timestamp()

    def offset_at(unix: float) -> float:
        off = dt.datetime.fromtimestamp(unix, tz).utcoffset()
        return off.total_seconds() if off else 0.0

    offset = offset_at(wall)
    if offset:
        utc = wall - offset
        if offset_at(utc) != offset:
            offset = offset_at(utc)
    return dt.datetime.fromtimestamp(wall - offset, tz)


def _bits(low: int, high: int, step: int) -> int:
    if step == 1:
        return ~(-1 << (high + 1)) & (-1 << low)
    bits = 0
    for i in range(low, high + 1, step):
        bits |= 1 << i
    return bits


def _go_atoi(text: str) -> int:
    """Go's `strconv.Atoi` for the cron parser: optional sign, decimal digits, int64 range."""
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not digits or not all("0" <= c <= "9" for c in digits):
        raise CronError(
            f"failed to parse int from {text}: strconv.Atoi: parsing {go_quote(text)}: invalid syntax"
        )
    value = int(text)
    if not -(1 << 63) <= value < (1 << 63):
        raise CronError(
            f"failed to parse int from {text}: strconv.Atoi: parsing {go_quote(text)}: value out of range"
        )
    return value


def _must_parse_int(expr: str) -> int:
    num = _go_atoi(expr)
    if num < 0:
        raise CronError(f"negative number ({num}) not allowed: {expr}")
    return num


def _parse_int_or_name(expr: str, names: dict[str, int] | None) -> int:
    if names is not None and expr.lower() in names:
        return names[expr.lower()]
    return _must_parse_int(expr)


def _get_range(expr: str, b: _Bounds) -> int:
    range_and_step = expr.split("/")
    low_and_high = range_and_step[0].split("-")
    single = len(low_and_high) == 1
    extra = 0
    if low_and_high[0] in ("*", "?"):
        start, end, extra = b.low, b.high, STAR_BIT
    else:
        start = _parse_int_or_name(low_and_high[0], b.names)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _parse_int_or_name(low_and_high[1], b.names)
        else:
            raise CronError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _must_parse_int(range_and_step[1])
        if single:  # "N/step" means "N-max/step"
            end = b.high
        if step > 1:
            extra = 0
    else:
        raise CronError(f"too many slashes: {expr}")
    if start < b.low:
        raise CronError(f"beginning of range ({start}) below minimum ({b.low}): {expr}")
    if end > b.high:
        raise CronError(f"end of range ({end}) above maximum ({b.high}): {expr}")
    if start > end:
        raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise CronError(f"step of range should be a positive number: {expr}")
    return _bits(start, end, step) | extra


def _get_field(text: str, b: _Bounds) -> int:
    bits = 0
    for expr in (part for part in text.split(",") if part):
        bits |= _get_range(expr, b)
    return bits


def _all(b: _Bounds) -> int:
    return _bits(b.low, b.high, 1) | STAR_BIT


def _parse_descriptor(spec: str, loc: dt.tzinfo | None) -> Schedule:
    one = 1
    if spec in ("@yearly", "@annually"):
        return SpecSchedule(1 << 0, 1 << 0, 1 << 0, 1 << 1, 1 << 1, _all(_DOW), loc)
    if spec == "@monthly":
        return SpecSchedule(one, one, one, 1 << 1, _all(_MONTHS), _all(_DOW), loc)
    if spec == "@weekly":
        return SpecSchedule(one, one, one, _all(_DOM), _all(_MONTHS), 1 << 0, loc)
    if spec in ("@daily", "@midnight"):
        return SpecSchedule(one, one, one, _all(_DOM), _all(_MONTHS), _all(_DOW), loc)
    if spec == "@hourly":
        return SpecSchedule(one, one, _all(_HOURS), _all(_DOM), _all(_MONTHS), _all(_DOW), loc)
    prefix = "@every "
    if spec.startswith(prefix):
        text = spec[len(prefix) :]
        try:
            nanos = parse_duration(text)
        except DurationError as err:
            raise CronError(f"failed to parse duration {spec}: {err}") from None
        seconds = max(nanos // 1_000_000_000, 1) if nanos >= 0 else 1
        return ConstantDelaySchedule(dt.timedelta(seconds=seconds))
    raise CronError(f"unrecognized descriptor: {spec}")


def go_fields(text: str) -> list[str]:
    """Go's `strings.Fields`: split on runs of Unicode white space."""
    return text.split()


def parse_standard(spec: str) -> Schedule:
    """Parse `spec` as robfig/cron's `ParseStandard` (minute hour dom month dow, descriptors)."""
    if not spec:
        raise CronError("empty spec string")
    loc: dt.tzinfo | None = None
    if spec.startswith("TZ=") or spec.startswith("CRON_TZ="):
        space = spec.find(" ")
        eq = spec.find("=")
        name = spec[eq + 1 : space] if space >= 0 else spec[eq + 1 :]
        try:
            loc = load_location(name)
        except LocationError as err:
            raise CronError(f"provided bad location {name}: {err}") from None
        spec = spec[space:].strip() if space >= 0 else ""
    if spec.startswith("@"):
        return _parse_descriptor(spec, loc)
    fields = go_fields(spec)
    if len(fields) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    return SpecSchedule(
        second=1 << 0,
        minute=_get_field(fields[0], _MINUTES),
        hour=_get_field(fields[1], _HOURS),
        dom=_get_field(fields[2], _DOM),
        month=_get_field(fields[3], _MONTHS),
        dow=_get_field(fields[4], _DOW),
        location=loc,
    )


__all__ = [
    "ConstantDelaySchedule",
    "CronError",
    "Schedule",
    "SpecSchedule",
    "parse_standard",
]
