import pytest

from agones.apis.meta.goduration import (
    HOUR,
    MINUTE,
    SECOND,
    DurationError,
    format_duration,
    parse_duration,
)


@pytest.mark.parametrize(
    ("text", "nanos"),
    [
        pytest.param("0", 0, id="bare-zero"),
        pytest.param("-0", 0, id="negative-zero"),
        pytest.param("5h", 5 * HOUR, id="hours"),
        pytest.param("2h45m", 2 * HOUR + 45 * MINUTE, id="compound"),
        pytest.param("-1.5h", -(HOUR + 30 * MINUTE), id="negative-fraction"),
        pytest.param("+300ms", 300_000_000, id="plus-ms"),
        pytest.param("1us", 1000, id="us"),
        pytest.param("1µs", 1000, id="micro-sign"),
        pytest.param("1μs", 1000, id="greek-mu"),
        pytest.param("7ns", 7, id="ns"),
        pytest.param(".5s", SECOND // 2, id="leading-dot"),
        pytest.param("1.s", SECOND, id="trailing-dot"),
        pytest.param("1h1h", 2 * HOUR, id="repeated-unit"),
        pytest.param("1.0000000001s", SECOND, id="sub-ns-fraction-dropped"),
        pytest.param("2562047h47m16.854775807s", (1 << 63) - 1, id="max"),
        pytest.param("-2562047h47m16.854775808s", -(1 << 63), id="min"),
    ],
)
def test_parse_duration_accepts(text: str, nanos: int) -> None:
    assert parse_duration(text) == nanos


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("", 'time: invalid duration ""', id="empty"),
        pytest.param("5", 'time: missing unit in duration "5"', id="no-unit"),
        pytest.param(
            "5 hours", 'time: unknown unit " hours" in duration "5 hours"', id="agones-example"
        ),
        pytest.param("1d", 'time: unknown unit "d" in duration "1d"', id="days"),
        pytest.param("h", 'time: invalid duration "h"', id="unit-only"),
        pytest.param(".s", 'time: invalid duration ".s"', id="dot-only"),
        pytest.param("-", 'time: invalid duration "-"', id="sign-only"),
        pytest.param("1h-1m", 'time: unknown unit "h-" in duration "1h-1m"', id="inner-sign"),
        pytest.param(
            "2562047h47m16.854775808s",
            'time: invalid duration "2562047h47m16.854775808s"',
            id="overflow",
        ),
        pytest.param(
            "99999999999999999999s",
            'time: invalid duration "99999999999999999999s"',
            id="int-overflow",
        ),
        pytest.param(
            "1é", 'time: unknown unit "\\xc3\\xa9" in duration "1\\xc3\\xa9"', id="non-ascii-quoted"
        ),
        pytest.param('1"', 'time: unknown unit "\\"" in duration "1\\""', id="quote-escaped"),
    ],
)
def test_parse_duration_rejects_with_go_text(text: str, message: str) -> None:
    with pytest.raises(DurationError) as err:
        parse_duration(text)
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("ns", "text"),
    [
        pytest.param(0, "0s", id="zero"),
        pytest.param(5400 * SECOND, "1h30m0s", id="hours"),
        pytest.param(1_500_000_000, "1.5s", id="fraction"),
        pytest.param(300_000_000, "300ms", id="millis"),
        pytest.param(-123 * SECOND, "-2m3s", id="negative"),
        pytest.param(1500, "1.5µs", id="micro"),
        pytest.param(7, "7ns", id="nanos"),
        pytest.param(HOUR + MINUTE + 1, "1h1m0.000000001s", id="hour-and-a-nanosecond"),
    ],
)
def test_format_duration_is_go_duration_string(ns: int, text: str) -> None:
    assert format_duration(ns) == text
    assert parse_duration(text) == ns
