import datetime as dt

import pytest

from agones.apis.meta.gotime import (
    LocationError,
    TimeParseError,
    format_rfc3339,
    go_time_gostring,
    go_time_string,
    load_location,
    normalize_rfc3339,
    parse_rfc3339,
)


@pytest.mark.parametrize(
    ("text", "utc"),
    [
        pytest.param("2024-07-04T16:04:04-07:00", "2024-07-04T23:04:04Z", id="offset-to-utc"),
        pytest.param("2100-02-20T16:04:04-05:00", "2100-02-20T21:04:04Z", id="chain-example"),
        pytest.param("2024-07-04T23:04:04Z", "2024-07-04T23:04:04Z", id="utc"),
        pytest.param("2024-07-04T23:04:04.999Z", "2024-07-04T23:04:04Z", id="fraction-dropped"),
        pytest.param("2024-07-04T3:04:04Z", "2024-07-04T03:04:04Z", id="one-digit-hour"),
        pytest.param("2024-12-31T23:30:00-01:00", "2025-01-01T00:30:00Z", id="year-rollover"),
    ],
)
def test_normalize(text: str, utc: str) -> None:
    assert normalize_rfc3339(text) == utc


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "",
            'parsing time "" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "2006"',
            id="empty",
        ),
        pytest.param(
            "2024-07-04",
            'parsing time "2024-07-04" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "T"',
            id="date-only",
        ),
        pytest.param(
            "2024-7-04T00:00:00Z",
            'parsing time "2024-7-04T00:00:00Z" as "2006-01-02T15:04:05Z07:00": cannot parse "7-04T00:00:00Z" as "01"',
            id="one-digit-month",
        ),
        pytest.param(
            "2024-13-01T00:00:00Z",
            'parsing time "2024-13-01T00:00:00Z": month out of range',
            id="month",
        ),
        pytest.param(
            "2023-02-29T00:00:00Z",
            'parsing time "2023-02-29T00:00:00Z": day out of range',
            id="day",
        ),
        pytest.param(
            "2024-01-01T24:00:00Z",
            'parsing time "2024-01-01T24:00:00Z": hour out of range',
            id="hour",
        ),
        pytest.param(
            "2024-01-01T00:00:00Zjunk",
            'parsing time "2024-01-01T00:00:00Zjunk": extra text: "junk"',
            id="extra",
        ),
        pytest.param(
            "2024-01-01T00:00:00+0100",
            'parsing time "2024-01-01T00:00:00+0100" as "2006-01-02T15:04:05Z07:00": cannot parse "+0100" as "Z07:00"',
            id="offset-without-colon",
        ),
    ],
)
def test_parse_errors(text: str, message: str) -> None:
    with pytest.raises(TimeParseError) as err:
        parse_rfc3339(text)
    assert str(err.value) == message


def test_renderings() -> None:
    t = parse_rfc3339("2100-01-02T00:00:00Z")
    assert go_time_gostring(t) == "time.Date(2100, time.January, 2, 0, 0, 0, 0, time.Local)"
    assert go_time_string(parse_rfc3339("2020-01-01T00:00:00Z")) == "2020-01-01 00:00:00 +0000 UTC"
    assert format_rfc3339(t) == "2100-01-02T00:00:00Z"


def test_load_location() -> None:
    assert load_location("") is dt.UTC
    assert str(load_location("America/Los_Angeles")) == "America/Los_Angeles"
    with pytest.raises(LocationError) as err:
        load_location("Mars/Olympus_Mons")
    assert str(err.value) == "unknown time zone Mars/Olympus_Mons"
    with pytest.raises(LocationError) as err:
        load_location("../etc/passwd")
    assert str(err.value) == "time: invalid location name"
