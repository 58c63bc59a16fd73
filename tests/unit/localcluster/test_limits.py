"""The request limits' pure checks: nesting depth, YAML aliasing, int64 query parameters."""

from __future__ import annotations

import pytest
import yaml
from multidict import MultiDict

from agones.localcluster.apiserver import errors
from agones.localcluster.apiserver.limits import MAX_DEPTH, check_depth, may_be_too_deep, too_deep
from agones.localcluster.apiserver.requests import query_int64


def nested(depth: int) -> object:
    obj: object = 1
    for i in range(depth - 1):
        obj = {"a": obj} if i % 2 else [obj]
    return obj


@pytest.mark.parametrize(
    ("depth", "deep"),
    [
        pytest.param(1, False, id="scalar"),
        pytest.param(MAX_DEPTH, False, id="at-limit"),
        pytest.param(MAX_DEPTH + 2, True, id="past-limit"),
        pytest.param(5000, True, id="far-past-limit"),
    ],
)
def test_too_deep(depth: int, deep: bool) -> None:
    assert too_deep(nested(depth)) is deep


def test_bracket_count_spares_shallow_json_the_walk() -> None:
    assert not may_be_too_deep(b'{"a": [1, 2, {"b": 3}]}', is_json=True)
    assert may_be_too_deep(b"[" * (MAX_DEPTH + 1), is_json=True)
    assert may_be_too_deep(b"a: b", is_json=False)


def test_yaml_alias_bomb_is_refused() -> None:
    doc = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
    for i, name in enumerate("bcdefgh"):
        prev = "abcdefgh"[i]
        doc += f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 10) + "]\n"
    body = yaml.safe_load(doc)
    with pytest.raises(errors.StatusError) as err:
        check_depth(doc.encode(), body, is_json=False)
    assert err.value.code == 400
    assert "excessive aliasing" in err.value.message


@pytest.mark.parametrize(
    ("raw", "value", "message"),
    [
        pytest.param("", None, None, id="empty"),
        pytest.param("30", 30, None, id="number"),
        pytest.param("+5", 5, None, id="plus-sign"),
        pytest.param("-1", -1, None, id="negative"),
        pytest.param("abc", None, 'strconv.ParseInt: parsing "abc": invalid syntax', id="word"),
        pytest.param("1.5", None, 'strconv.ParseInt: parsing "1.5": invalid syntax', id="float"),
        pytest.param(
            "1_000", None, 'strconv.ParseInt: parsing "1_000": invalid syntax', id="py-int"
        ),
        pytest.param(
            "9" * 20, None, f'strconv.ParseInt: parsing "{"9" * 20}": value out of range', id="big"
        ),
    ],
)
def test_query_int64(raw: str, value: int | None, message: str | None) -> None:
    query = MultiDict({"timeoutSeconds": raw})
    if message is None:
        assert query_int64(query, "timeoutSeconds") == value
        return
    with pytest.raises(errors.StatusError) as err:
        query_int64(query, "timeoutSeconds")
    assert (err.value.code, err.value.message) == (400, message)
