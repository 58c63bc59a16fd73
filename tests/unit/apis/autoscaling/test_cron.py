import datetime as dt
from zoneinfo import ZoneInfo

import pytest

from agones.apis.autoscaling.v1.cron import (
    STAR_BIT,
    ConstantDelaySchedule,
    CronError,
    SpecSchedule,
    parse_standard,
)


def bits(*values: int) -> int:
    out = 0
    for v in values:
        out |= 1 << v
    return out


@pytest.mark.parametrize(
    ("spec", "field", "expected"),
    [
        pytest.param("0 1 * * 0", "minute", bits(0), id="minute"),
        pytest.param("0 1 * * 0", "hour", bits(1), id="hour"),
        pytest.param("0 1 * * 0", "dow", bits(0), id="sunday"),
        pytest.param("0 1 * * 0", "dom", bits(*range(1, 32)) | STAR_BIT, id="star-dom"),
        pytest.param("*/15 * * * *", "minute", bits(0, 15, 30, 45), id="step-drops-star"),
        pytest.param("5/20 * * * *", "minute", bits(5, 25, 45), id="n-slash-step"),
        pytest.param("1-3,7 * * * *", "minute", bits(1, 2, 3, 7), id="list-and-range"),
        pytest.param("0 0 * JAN-mar *", "month", bits(1, 2, 3), id="month-names"),
        pytest.param("0 0 * * Mon-fri", "dow", bits(1, 2, 3, 4, 5), id="weekday-names"),
        pytest.param("0 0 ? * *", "dom", bits(*range(1, 32)) | STAR_BIT, id="question-mark"),
        pytest.param("  0\t0  * * *  ", "hour", bits(0), id="whitespace"),
    ],
)
def test_parse_fields(spec: str, field: str, expected: int) -> None:
    schedule = parse_standard(spec)
    assert isinstance(schedule, SpecSchedule)
    assert getattr(schedule, field) == expected


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param(
            "not a cron", "expected exactly 5 fields, found 3: [not a cron]", id="agones-example"
        ),
        pytest.param("", "empty spec string", id="empty"),
        pytest.param(
            "* * * * * *", "expected exactly 5 fields, found 6: [* * * * * *]", id="six-fields"
        ),
        pytest.param("60 * * * *", "end of range (60) above maximum (59): 60", id="minute-max"),
        pytest.param("* * 0 * *", "beginning of range (0) below minimum (1): 0", id="dom-min"),
        pytest.param(
            "5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1", id="backwards"
        ),
        pytest.param(
            "*/0 * * * *", "step of range should be a positive number: */0", id="zero-step"
        ),
        pytest.param("1-2-3 * * * *", "too many hyphens: 1-2-3", id="hyphens"),
        pytest.param("1/2/3 * * * *", "too many slashes: 1/2/3", id="slashes"),
        pytest.param(
            "x * * * *",
            'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax',
            id="not-a-number",
        ),
        pytest.param("@often", "unrecognized descriptor: @often", id="descriptor"),
        pytest.param(
            "@every 5 hours",
            'failed to parse duration @every 5 hours: time: unknown unit " hours" in duration "5 hours"',
            id="every-bad-duration",
        ),
        pytest.param(
            "TZ=Mars/Base 0 1 * * *",
            "provided bad location Mars/Base: unknown time zone Mars/Base",
            id="bad-tz",
        ),
    ],
)
def test_parse_errors_match_robfig(spec: str, message: str) -> None:
    with pytest.raises(CronError) as err:
        parse_standard(spec)
    assert str(err.value) == message


def test_descriptors_and_tz_prefix() -> None:
    assert parse_standard("@daily") == parse_standard("0 0 * * *")
    assert parse_standard("@hourly") == parse_standard("0 * * * *")
    every = parse_standard("@every 1m30s")
    assert every == ConstantDelaySchedule(dt.timedelta(seconds=90))
    tz = parse_standard("CRON_TZ=America/New_York 0 1 * * 0")
    assert isinstance(tz, SpecSchedule)
    assert tz.location == ZoneInfo("America/New_York")


UTC = dt.UTC
NY = ZoneInfo("America/New_York")


@pytest.mark.parametrize(
    ("spec", "after", "expected"),
    [
        pytest.param(
            "0 1 * * 0",
            dt.datetime(2024, 7, 4, 12, 0, tzinfo=UTC),
            dt.datetime(2024, 7, 7, 1, 0, tzinfo=UTC),
            id="next-sunday",
        ),
        pytest.param(
            "*/15 * * * *",
            dt.datetime(2024, 1, 1, 0, 15, 0, tzinfo=UTC),
            dt.datetime(2024, 1, 1, 0, 30, tzinfo=UTC),
            id="strictly-after",
        ),
        pytest.param(
            "0 0 29 2 *",
            dt.datetime(2025, 3, 1, tzinfo=UTC),
            dt.datetime(2028, 2, 29, tzinfo=UTC),
            id="leap-day",
        ),
        pytest.param(
            "0 0 1,15 * 1",
            dt.datetime(2024, 4, 2, tzinfo=UTC),
            dt.datetime(2024, 4, 8, tzinfo=UTC),
            id="dom-or-dow",
        ),
        pytest.param(
            "CRON_TZ=America/New_York 0 1 * * 0",
            dt.datetime(2024, 7, 4, 12, 0, tzinfo=UTC),
            dt.datetime(2024, 7, 7, 5, 0, tzinfo=UTC),
            id="schedule-zone",
        ),
        pytest.param(
            "30 2 * * *",
            dt.datetime(2024, 3, 9, 12, 0, tzinfo=NY),
            dt.datetime(2024, 3, 11, 2, 30, tzinfo=NY),
            id="dst-gap-skipped",
        ),
    ],
)
def test_next(spec: str, after: dt.datetime, expected: dt.datetime) -> None:
    schedule = parse_standard(spec)
    got = schedule.next(after)
    assert got == expected


def test_next_none_when_impossible() -> None:
    assert parse_standard("0 0 30 2 *").next(dt.datetime(2024, 1, 1, tzinfo=UTC)) is None
