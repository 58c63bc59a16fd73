"""JSON patch, merge patch and strategic merge patch, including kubectl's directives."""

import pytest

from agones.jsonpatch import PatchError
from agones.jsonpatch import apply_patch as apply_json_patch
from agones.localcluster.apiserver.patch import (
    PRIMITIVE_MERGE,
    apply_merge_patch,
    apply_strategic_merge_patch,
)

DOC = {"a": {"b": [1, 2, 3]}, "c": "x"}


@pytest.mark.parametrize(
    ("ops", "expected"),
    [
        pytest.param(
            [{"op": "add", "path": "/a/b/-", "value": 4}],
            {"a": {"b": [1, 2, 3, 4]}, "c": "x"},
            id="append",
        ),
        pytest.param(
            [{"op": "add", "path": "/a/b/0", "value": 0}],
            {"a": {"b": [0, 1, 2, 3]}, "c": "x"},
            id="insert",
        ),
        pytest.param(
            [{"op": "remove", "path": "/a/b/1"}], {"a": {"b": [1, 3]}, "c": "x"}, id="remove-index"
        ),
        pytest.param(
            [{"op": "replace", "path": "/c", "value": "y"}],
            {"a": {"b": [1, 2, 3]}, "c": "y"},
            id="replace",
        ),
        pytest.param(
            [{"op": "move", "from": "/c", "path": "/d"}],
            {"a": {"b": [1, 2, 3]}, "d": "x"},
            id="move",
        ),
        pytest.param(
            [{"op": "copy", "from": "/c", "path": "/d"}],
            {"a": {"b": [1, 2, 3]}, "c": "x", "d": "x"},
            id="copy",
        ),
        pytest.param([{"op": "test", "path": "/c", "value": "x"}], DOC, id="test-ok"),
        pytest.param([{"op": "add", "path": "/e~1f", "value": 1}], {**DOC, "e/f": 1}, id="escaped"),
    ],
)
def test_json_patch(ops: list[dict], expected: dict) -> None:
    assert apply_json_patch(DOC, ops) == expected
    assert DOC == {"a": {"b": [1, 2, 3]}, "c": "x"}


@pytest.mark.parametrize(
    "ops",
    [
        pytest.param([{"op": "test", "path": "/c", "value": "y"}], id="test-fails"),
        pytest.param([{"op": "test", "path": "/a/b/0", "value": "1"}], id="test-type-differs"),
        pytest.param([{"op": "remove", "path": "/zz"}], id="remove-missing"),
        pytest.param([{"op": "replace", "path": "/zz", "value": 1}], id="replace-missing"),
        pytest.param([{"op": "add", "path": "/a/b/9", "value": 1}], id="index-out-of-range"),
        pytest.param([{"op": "frob", "path": "/c"}], id="unknown-op"),
        pytest.param({"op": "add"}, id="not-a-list"),
    ],
)
def test_json_patch_errors(ops: object) -> None:
    with pytest.raises(PatchError):
        apply_json_patch(DOC, ops)


def test_merge_patch() -> None:
    assert apply_merge_patch(
        {"a": {"b": 1, "c": 2}, "l": [1, 2]}, {"a": {"b": None, "d": 3}, "l": [3]}
    ) == {
        "a": {"c": 2, "d": 3},
        "l": [3],
    }


META = {
    ("spec", "containers"): "name",
    ("spec", "containers", "ports"): "containerPort",
    ("metadata", "finalizers"): PRIMITIVE_MERGE,
}
POD = {
    "metadata": {"finalizers": ["a"]},
    "spec": {
        "containers": [
            {"name": "x", "image": "i", "ports": [{"containerPort": 1}]},
            {"name": "y", "image": "j"},
        ]
    },
}


@pytest.mark.parametrize(
    ("patch", "expected_spec", "finalizers"),
    [
        pytest.param(
            {"spec": {"containers": [{"name": "y", "image": "k"}]}},
            {
                "containers": [
                    {"name": "x", "image": "i", "ports": [{"containerPort": 1}]},
                    {"name": "y", "image": "k"},
                ]
            },
            ["a"],
            id="merge-by-key",
        ),
        pytest.param(
            {"spec": {"containers": [{"name": "x", "ports": [{"containerPort": 2}]}]}},
            {
                "containers": [
                    {
                        "name": "x",
                        "image": "i",
                        # the patch's new item first, as strategicpatch orders it
                        "ports": [{"containerPort": 2}, {"containerPort": 1}],
                    },
                    {"name": "y", "image": "j"},
                ]
            },
            ["a"],
            id="nested-merge-key",
        ),
        pytest.param(
            {"spec": {"containers": [{"name": "x", "$patch": "delete"}]}},
            {"containers": [{"name": "y", "image": "j"}]},
            ["a"],
            id="delete-directive",
        ),
        pytest.param(
            {"spec": {"containers": [{"name": "z", "image": "n"}, {"$patch": "replace"}]}},
            {"containers": [{"name": "z", "image": "n"}]},
            ["a"],
            id="replace-list",
        ),
        pytest.param(
            {"metadata": {"finalizers": ["b", "a"]}},
            POD["spec"],
            ["b", "a"],  # every item is the patch's: the patch's order
            id="primitive-merge",
        ),
        pytest.param(
            {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}},
            POD["spec"],
            None,
            id="delete-from-primitive-list",
        ),
        pytest.param(
            {"spec": {"$setElementOrder/containers": [{"name": "y"}, {"name": "x"}]}},
            {
                "containers": [
                    {"name": "y", "image": "j"},
                    {"name": "x", "image": "i", "ports": [{"containerPort": 1}]},
                ]
            },
            ["a"],
            id="set-element-order",
        ),
    ],
)
def test_strategic_merge_patch(
    patch: dict, expected_spec: dict, finalizers: list[str] | None
) -> None:
    out = apply_strategic_merge_patch(POD, patch, META)
    assert out["spec"] == expected_spec
    assert out["metadata"].get("finalizers", None) == (finalizers if finalizers is not None else [])


def test_strategic_merge_patch_requires_merge_key() -> None:
    with pytest.raises(PatchError):
        apply_strategic_merge_patch(POD, {"spec": {"containers": [{"image": "no-name"}]}}, META)
