"""Server-side apply: field sets, FieldsV1, removal of fields an applier stops setting."""

import pytest

from agones.localcluster.apiserver.apply import (
    ApplyConflict,
    field_set,
    from_fields_v1,
    patch_meta_from_schema,
    remove_path,
    server_side_apply,
    to_fields_v1,
)
from agones.localcluster.apiserver.patch import PRIMITIVE_MERGE

META = {("spec", "ports"): "name", ("spec", "tags"): PRIMITIVE_MERGE}


def test_field_set_and_fields_v1_round_trip() -> None:
    cfg = {
        "spec": {"replicas": 1, "ports": [{"name": "a", "port": 1}], "tags": ["x"], "raw": [1, 2]}
    }
    paths = field_set(cfg, META)
    assert ("f:spec", "f:replicas") in paths
    assert ("f:spec", "f:ports", 'k:{"name":"a"}', "f:port") in paths
    assert ("f:spec", "f:tags", 'v:"x"') in paths
    assert ("f:spec", "f:raw") in paths
    assert from_fields_v1(to_fields_v1(paths)) == paths


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        pytest.param(
            ("f:spec", "f:replicas"),
            {"spec": {"ports": [{"name": "a", "port": 1}], "tags": ["x", "y"]}},
            id="field",
        ),
        pytest.param(
            ("f:spec", "f:ports", 'k:{"name":"a"}', "."),
            {"spec": {"replicas": 1, "ports": [], "tags": ["x", "y"]}},
            id="keyed-item",
        ),
        pytest.param(
            ("f:spec", "f:ports", 'k:{"name":"a"}', "f:port"),
            {"spec": {"replicas": 1, "ports": [{"name": "a"}], "tags": ["x", "y"]}},
            id="item-field",
        ),
        pytest.param(
            ("f:spec", "f:tags", 'v:"y"'),
            {"spec": {"replicas": 1, "ports": [{"name": "a", "port": 1}], "tags": ["x"]}},
            id="set-value",
        ),
        pytest.param(
            ("f:spec", "f:missing"),
            {"spec": {"replicas": 1, "ports": [{"name": "a", "port": 1}], "tags": ["x", "y"]}},
            id="absent",
        ),
    ],
)
def test_remove_path(path: tuple[str, ...], expected: dict) -> None:
    obj = {"spec": {"replicas": 1, "ports": [{"name": "a", "port": 1}], "tags": ["x", "y"]}}
    remove_path(obj, path)
    assert obj == expected


def test_reapply_removes_only_own_dropped_fields() -> None:
    live = {"metadata": {"name": "o"}, "spec": {}}
    one = server_side_apply(live, {"spec": {"a": 1, "b": 2}}, "m1", {}, "t")
    two = server_side_apply(one, {"spec": {"b": 2, "c": 4}}, "m2", {}, "t")
    three = server_side_apply(two, {"spec": {"a": 1}}, "m1", {}, "t")
    # m1 dropped b, but m2 also applied it: it stays.
    assert three["spec"] == {"a": 1, "b": 2, "c": 4}
    four = server_side_apply(three, {"spec": {}}, "m2", {}, "t")
    assert four["spec"] == {"a": 1}
    assert [m["manager"] for m in four["metadata"]["managedFields"]] == ["m1", "m2"]


def test_patch_meta_from_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
                    "ports": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "items": {"type": "object"},
                    },
                    "pairs": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["a", "b"],
                        "items": {"type": "object"},
                    },
                    "tags": {
                        "type": "array",
                        "x-kubernetes-list-type": "set",
                        "items": {"type": "string"},
                    },
                },
            }
        },
    }
    assert patch_meta_from_schema(schema) == {
        ("spec", "ports"): "name",
        ("spec", "tags"): PRIMITIVE_MERGE,
    }


def test_conflicting_appliers_and_force() -> None:
    live = server_side_apply({"metadata": {"name": "o"}}, {"spec": {"a": 1, "b": 1}}, "m1", {}, "t")
    same = server_side_apply(live, {"spec": {"a": 1}}, "m2", {}, "t")  # same value: shared
    assert same["spec"] == {"a": 1, "b": 1}
    with pytest.raises(ApplyConflict) as err:
        server_side_apply(same, {"spec": {"a": 2}}, "m2", {}, "t")
    assert err.value.conflicts == [("m1", ".spec.a")]
    forced = server_side_apply(same, {"spec": {"a": 2}}, "m2", {}, "t", force=True)
    assert forced["spec"] == {"a": 2, "b": 1}
    owners = {
        m["manager"]: from_fields_v1(m["fieldsV1"]) for m in forced["metadata"]["managedFields"]
    }
    assert owners == {"m1": {("f:spec", "f:b")}, "m2": {("f:spec", "f:a")}}
