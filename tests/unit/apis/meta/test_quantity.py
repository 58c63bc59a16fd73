import pytest

from agones.apis.meta.quantity import Quantity, QuantityError


@pytest.mark.parametrize(
    ("raw", "canonical"),
    [
        pytest.param("2", "2", id="int"),
        pytest.param("500m", "500m", id="milli"),
        pytest.param("0.5", "500m", id="fraction-to-milli"),
        pytest.param("1Gi", "1Gi", id="binary"),
        pytest.param("1024Mi", "1Gi", id="binary-normalised"),
        pytest.param("1.5Gi", "1536Mi", id="binary-fraction"),
        pytest.param("1000M", "1G", id="decimal-normalised"),
        pytest.param("1e2", "100", id="exponent-small"),
        pytest.param("100e3", "100e3", id="exponent"),
        pytest.param("0.1n", "1n", id="nano-round-up"),
        pytest.param("-1", "-1", id="negative"),
        pytest.param("0", "0", id="zero"),
        pytest.param("512", "512", id="plain"),
        pytest.param(3, "3", id="json-int"),
        pytest.param(0.25, "250m", id="json-float"),
    ],
)
def test_canonical_string(raw: str | int | float, canonical: str) -> None:
    assert str(Quantity.parse(raw)) == canonical


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        pytest.param("2", "1", 1, id="greater"),
        pytest.param("1000m", "1", 0, id="equal-across-suffixes"),
        pytest.param("1Gi", "1G", 1, id="binary-vs-decimal"),
        pytest.param("100Mi", "1Gi", -1, id="less"),
    ],
)
def test_cmp(a: str, b: str, want: int) -> None:
    assert Quantity.parse(a).cmp(Quantity.parse(b)) == want


@pytest.mark.parametrize("raw", ["", "abc", "1.2.3", "1Zi", "1 Gi", True, float("nan")])
def test_rejects(raw: str | bool | float) -> None:
    with pytest.raises(QuantityError):
        Quantity.parse(raw)
