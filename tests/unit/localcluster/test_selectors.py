"""Label and field selector parsing and matching."""

import pytest

from agones.localcluster.apiserver.selectors import (
    fields_match,
    labels_match,
    parse_field_selector,
    parse_label_selector,
    selector_from_label_selector,
)

LABELS = {"app": "web", "tier": "front", "rank": "3"}


@pytest.mark.parametrize(
    ("selector", "labels", "matches"),
    [
        pytest.param("", LABELS, True, id="empty-matches-all"),
        pytest.param("app=web", LABELS, True, id="eq"),
        pytest.param("app==web", LABELS, True, id="double-eq"),
        pytest.param("app=db", LABELS, False, id="eq-miss"),
        pytest.param("app!=db", LABELS, True, id="neq"),
        pytest.param("missing!=x", LABELS, True, id="neq-absent"),
        pytest.param("tier in (front, back)", LABELS, True, id="in"),
        pytest.param("tier notin (front)", LABELS, False, id="notin"),
        pytest.param("missing notin (front)", LABELS, True, id="notin-absent"),
        pytest.param("tier", LABELS, True, id="exists"),
        pytest.param("!tier", LABELS, False, id="not-exists"),
        pytest.param("!missing", LABELS, True, id="not-exists-absent"),
        pytest.param("rank>2", LABELS, True, id="gt"),
        pytest.param("rank<3", LABELS, False, id="lt"),
        pytest.param("app=web,tier=back", LABELS, False, id="and"),
        pytest.param("app=", {"app": ""}, True, id="empty-value"),
        pytest.param("example.com/role=x", {"example.com/role": "x"}, True, id="prefixed-key"),
    ],
)
def test_label_selector(selector: str, labels: dict[str, str], matches: bool) -> None:
    assert labels_match(parse_label_selector(selector), labels) is matches


@pytest.mark.parametrize(
    "selector",
    [
        pytest.param("app in (web", id="unclosed"),
        pytest.param("app in web", id="no-paren"),
        pytest.param("rank>x", id="gt-not-int"),
        pytest.param("app=we b", id="space-in-value"),
        pytest.param("Bad Key=1", id="bad-key"),
    ],
)
def test_label_selector_errors(selector: str) -> None:
    with pytest.raises(ValueError):
        parse_label_selector(selector)


def test_label_selector_object() -> None:
    sel = selector_from_label_selector(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["back"]}],
        }
    )
    assert labels_match(sel, LABELS)
    assert not labels_match(sel, {"app": "web", "tier": "back"})


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        pytest.param("metadata.name=a", (("metadata.name", "=", "a"),), id="eq"),
        pytest.param("metadata.name==a", (("metadata.name", "=", "a"),), id="double-eq"),
        pytest.param(
            "status.phase!=Running,spec.nodeName=",
            (("status.phase", "!=", "Running"), ("spec.nodeName", "=", "")),
            id="two",
        ),
        pytest.param(r"metadata.name=a\,b", (("metadata.name", "=", "a,b"),), id="escaped-comma"),
    ],
)
def test_parse_field_selector(text: str, parsed: tuple[tuple[str, str, str], ...]) -> None:
    assert parse_field_selector(text) == parsed


def test_field_selector_error() -> None:
    with pytest.raises(ValueError):
        parse_field_selector("nonsense")


def test_fields_match() -> None:
    getters = {"status.phase": lambda o: o["status"]["phase"]}
    obj = {"status": {"phase": "Running"}}
    assert fields_match((("status.phase", "=", "Running"),), getters, obj)
    assert not fields_match((("status.phase", "!=", "Running"),), getters, obj)
