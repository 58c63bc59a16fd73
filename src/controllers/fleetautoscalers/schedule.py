"""The Schedule policy (Go `applySchedulePolicy`, `isScheduleActive`): a policy for a time window.

A Schedule is active at `now` when `now` is not before `between.start`, not after `between.end`
(each optional), and either there is no `activePeriod.startCron`, or `now` lies after the latest
cron activation minus 90 s (room for a daylight-saving jump) and before that activation plus
`duration` (absent: about 290 years). Cron times are computed in `activePeriod.timezone` (IANA;
empty: UTC), durations in absolute time, so a window keeps its length across a DST change.
Active → the inner policy decides; inactive → `InactiveScheduleError` (the Fleet is left alone).
Pure: `now` is a parameter.
"""

from __future__ import annotations

import datetime as dt

from ...apis.autoscaling.v1 import ActivePeriod, Between, SchedulePolicy
from ...apis.autoscaling.v1.cron import CronError, parse_standard
from ...apis.meta.goduration import DurationError, parse_duration
from ...apis.meta.gotime import LocationError, TimeParseError, load_location, parse_rfc3339
from .policy import PolicyError

MAX_DURATION = dt.timedelta(hours=2540400)  # Agones' "290 years"
CRON_DELTA = dt.timedelta(seconds=90)


def _time(value: object) -> dt.datetime | None:
    if not isinstance(value, str) or not value:
        return None
    try:
        return parse_rfc3339(value).astimezone(dt.UTC)
    except TimeParseError as err:
        raise PolicyError(f"invalid schedule time {value!r}: {err}") from None


def is_schedule_active(schedule: SchedulePolicy, now: dt.datetime) -> bool:
    """Whether the Schedule applies at `now` (an aware datetime)."""
    now = now.astimezone(dt.UTC)
    between = schedule.between if isinstance(schedule.between, Between) else Between()
    start, end = _time(between.start), _time(between.end)
    if start is not None and now < start:
        return False
    if end is not None and now > end:
        return False
    period = schedule.active_period
    period = period if isinstance(period, ActivePeriod) else ActivePeriod()
    start_cron = period.start_cron if isinstance(period.start_cron, str) else ""
    if not start_cron:
        return True
    try:
        zone = load_location(period.timezone if isinstance(period.timezone, str) else "")
        cron = parse_standard(start_cron)
        raw_duration = period.duration if isinstance(period.duration, str) else ""
        duration = (
            dt.timedelta(microseconds=parse_duration(raw_duration) // 1000)
            if raw_duration
            else MAX_DURATION
        )
    except (LocationError, CronError, DurationError) as err:
        raise PolicyError(f"invalid activePeriod: {err}") from None
    activation = cron.next((now - duration).astimezone(zone))
    if activation is None:
        return False
    cron_start = activation.astimezone(dt.UTC)
    return cron_start - CRON_DELTA < now < cron_start + duration
