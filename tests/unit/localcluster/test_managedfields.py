"""managedFields of non-apply writes: what a write owns, takes from others, and gives up."""

from __future__ import annotations

import pytest

from agones.localcluster.apiserver.managedfields import (
    compare,
    created_fields,
    encode_fields_v1,
    manager_or_user_agent,
    parse_fields_v1,
    record_update,
)
from agones.localcluster.apiserver.patch import PRIMITIVE_MERGE

META = {("spec", "ports"): "name", ("metadata", "finalizers"): PRIMITIVE_MERGE}


def _entry(manager: str, fields: dict, operation: str = "Update", time: str = "t0") -> dict:
    return {
        "manager": manager,
        "operation": operation,
        "apiVersion": "v1",
        "time": time,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
    }


@pytest.mark.parametrize(
    ("empty", "obj", "fields"),
    [
        pytest.param(
            {},
            {"metadata": {"name": "x", "uid": "u", "labels": {"a": "1"}}, "spec": {"replicas": 1}},
            {
                "f:metadata": {"f:labels": {".": {}, "f:a": {}}},
                "f:spec": {".": {}, "f:replicas": {}},
            },
            id="custom-resource",
        ),
        pytest.param(
            {"metadata": {}, "spec": {}, "status": {}},
            {"spec": {"ports": [{"name": "p", "port": 1}]}},
            {
                "f:spec": {
                    "f:ports": {".": {}, 'k:{"name":"p"}': {".": {}, "f:name": {}, "f:port": {}}}
                }
            },
            id="built-in-keyed-list",
        ),
        pytest.param(
            {},
            {"metadata": {"finalizers": ["a"]}, "data": {}},
            {"f:data": {}, "f:metadata": {"f:finalizers": {".": {}, 'v:"a"': {}}}},
            id="set-and-empty-map",
        ),
    ],
)
def test_created_fields(empty: dict, obj: dict, fields: dict) -> None:
    assert created_fields(empty, obj, META, ("status",)) == fields
    change = compare(empty, obj, META, ("status",))
    assert encode_fields_v1(change.added | change.modified) == fields


def test_update_takes_changed_fields_and_drops_removed_ones() -> None:
    old = {"spec": {"a": 1, "b": 2, "c": 3}}
    managed = [_entry("creator", {"f:spec": {".": {}, "f:a": {}, "f:b": {}, "f:c": {}}})]
    change = compare(old, {"spec": {"a": 9, "b": 2, "d": 4}}, META)
    out = record_update(managed, change, "updater", "v1", "", "t1")
    owners = {m["manager"]: parse_fields_v1(m["fieldsV1"]) for m in out}
    assert owners == {
        "creator": {("f:spec",), ("f:spec", "f:b")},
        "updater": {("f:spec", "f:a"), ("f:spec", "f:d")},
    }
    assert [m["time"] for m in out] == ["t0", "t1"]


def test_update_of_own_fields_only_moves_the_time() -> None:
    managed = [_entry("me", {"f:spec": {".": {}, "f:a": {}}})]
    change = compare({"spec": {"a": 1}}, {"spec": {"a": 2}}, META)
    (entry,) = record_update(managed, change, "me", "v1", "", "t1")
    assert entry["fieldsV1"] == {"f:spec": {".": {}, "f:a": {}}}
    assert entry["time"] == "t1"


def test_manager_left_with_nothing_disappears_and_apply_sorts_first() -> None:
    managed = [_entry("gone", {"f:data": {"f:a": {}}}), _entry("ssa", {"f:x": {}}, "Apply")]
    change = compare({"data": {"a": "1"}}, {"data": {"a": "2"}}, META)
    out = record_update(managed, change, "me", "v1", "", "t1")
    assert [(m["manager"], m["operation"]) for m in out] == [("ssa", "Apply"), ("me", "Update")]


@pytest.mark.parametrize(
    ("manager", "agent", "expected"),
    [
        pytest.param("given", "kubectl/v1.28", "given", id="parameter"),
        pytest.param("", "kubectl/v1.28.7 (linux/amd64)", "kubectl", id="user-agent"),
        pytest.param("", "", "", id="nothing"),
        pytest.param("", "x" * 200, "x" * 128, id="truncated"),
    ],
)
def test_manager_or_user_agent(manager: str, agent: str, expected: str) -> None:
    assert manager_or_user_agent(manager, agent) == expected
