"""A watcher of one object by name (`metadata.name=` field selector) sees what its predicate admits,
whether or not the name is known to the watcher before the predicate runs."""

from __future__ import annotations

from typing import Any

import pytest

from agones.localcluster.apiserver.requests import only_name
from agones.localcluster.apiserver.selectors import COMMON_FIELDS, fields_match, labels_match
from agones.localcluster.apiserver.selectors import parse_label_selector as labels
from agones.localcluster.apiserver.watch import Event, Watcher


def obj(name: str, **lbls: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns", "labels": lbls}}


def watcher(
    selector: str, field_selector: tuple[tuple[str, str, str], ...], named: bool
) -> Watcher:
    sel = labels(selector)

    def predicate(o: dict[str, Any]) -> bool:
        return labels_match(sel, o["metadata"].get("labels")) and fields_match(
            field_selector, COMMON_FIELDS, o
        )

    w = Watcher("ns", predicate, 100)
    if named:
        w.name = only_name(field_selector)
    return w


NAME_A = (("metadata.name", "=", "a"),)
CASES = [
    pytest.param(NAME_A, "", Event("ADDED", 2, "ns", obj("a"), b"{}"), "ADDED", id="own-added"),
    pytest.param(NAME_A, "", Event("ADDED", 2, "ns", obj("b"), b"{}"), None, id="other-added"),
    pytest.param(
        NAME_A,
        "",
        Event("MODIFIED", 3, "ns", obj("b"), b"{}", obj("b")),
        None,
        id="other-modified",
    ),
    pytest.param(
        NAME_A,
        "x=1",
        Event("MODIFIED", 3, "ns", obj("a"), b"{}", obj("a", x="1")),
        "DELETED",
        id="own-stops-matching",
    ),
    pytest.param(
        NAME_A,
        "x=1",
        Event("MODIFIED", 3, "ns", obj("a", x="1"), b"{}", obj("a")),
        "ADDED",
        id="own-starts-matching",
    ),
    pytest.param(
        (("metadata.name", "!=", "a"),),
        "",
        Event("ADDED", 2, "ns", obj("b"), b"{}"),
        "ADDED",
        id="not-equal-is-no-name",
    ),
    pytest.param(
        (("metadata.name", "=", "a"), ("metadata.name", "=", "b")),
        "",
        Event("ADDED", 2, "ns", obj("b"), b"{}"),
        None,
        id="two-names-match-nothing",
    ),
]


@pytest.mark.parametrize(("fields", "selector", "event", "seen"), CASES)
def test_named_watcher_sees_what_its_predicate_admits(
    fields: tuple[tuple[str, str, str], ...], selector: str, event: Event, seen: str | None
) -> None:
    outcomes = []
    for named in (False, True):
        w = watcher(selector, fields, named)
        item = w.interested(event)
        outcomes.append(None if item is None else item[0])
    assert outcomes == [seen, seen]


@pytest.mark.parametrize(
    ("fields", "name"),
    [
        pytest.param((), None, id="none"),
        pytest.param(NAME_A, "a", id="equal"),
        pytest.param((("metadata.name", "!=", "a"),), None, id="not-equal"),
        pytest.param((("metadata.namespace", "=", "a"),), None, id="other-field"),
        pytest.param((("spec.nodeName", "=", "n"), *NAME_A), "a", id="second"),
    ],
)
def testonly_name(fields: tuple[tuple[str, str, str], ...], name: str | None) -> None:
    assert only_name(fields) == name
