import pytest

from agones.apis.meta.intstr import (
    IntOrString,
    atoi,
    get_scaled_value_from_int_or_percent,
    get_value_from_int_or_percent,
)


@pytest.mark.parametrize(
    ("raw", "text"),
    [
        pytest.param("0%", 'intstr.IntOrString{Type:1, IntVal:0, StrVal:"0%"}', id="percent"),
        pytest.param(0, 'intstr.IntOrString{Type:0, IntVal:0, StrVal:""}', id="zero-int"),
        pytest.param(5, 'intstr.IntOrString{Type:0, IntVal:5, StrVal:""}', id="int"),
        pytest.param('a"b', 'intstr.IntOrString{Type:1, IntVal:0, StrVal:"a\\"b"}', id="quoted"),
    ],
)
def test_go_repr(raw: int | str, text: str) -> None:
    assert IntOrString.parse(raw).go_repr() == text


@pytest.mark.parametrize(
    ("raw", "total", "round_up", "want"),
    [
        pytest.param("25%", 10, True, 3, id="ceil"),
        pytest.param("25%", 10, False, 2, id="floor"),
        pytest.param(7, 10, True, 7, id="int-unscaled"),
        pytest.param("100%", 3, True, 3, id="whole"),
        pytest.param("0%", 100, True, 0, id="zero"),
    ],
)
def test_scaled_value(raw: int | str, total: int, round_up: bool, want: int) -> None:
    v = IntOrString.parse(raw)
    assert get_scaled_value_from_int_or_percent(v, total, round_up) == want
    assert get_value_from_int_or_percent(v, total, round_up) == want


def test_scaled_value_errors() -> None:
    with pytest.raises(ValueError, match="string is not a percentage"):
        get_scaled_value_from_int_or_percent(IntOrString.parse("25"), 100, True)
    # The deprecated reader treats any string as a percentage.
    assert get_value_from_int_or_percent(IntOrString.parse("25"), 100, True) == 25
    with pytest.raises(ValueError, match='invalid value "x%"'):
        get_value_from_int_or_percent(IntOrString.parse("x%"), 100, True)
    with pytest.raises(ValueError, match="nil value"):
        get_value_from_int_or_percent(None, 100, True)


@pytest.mark.parametrize("text", ["1 ", " 1", "1_0", "", "+", "1.0", "٣"])
def test_atoi_is_strict(text: str) -> None:
    with pytest.raises(ValueError):
        atoi(text)


def test_atoi_accepts_signs() -> None:
    assert atoi("+12") == 12
    assert atoi("-3") == -3
