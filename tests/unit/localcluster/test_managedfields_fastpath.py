"""The short cuts of managedFields recording give what the general path gives.

`update_in_place` (an update that only changes leaves its manager alone owns) must equal
`record_update(compare(...))` whenever it answers, and `created_fields` with a `TreeCache` must
equal it without, for any objects and any sequence of writes through the registry.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agones.localcluster import LocalAPIServer
from agones.localcluster.apiserver import managedfields, meta
from agones.localcluster.apiserver.managedfields import (
    TreeCache,
    compare,
    created_fields,
    encode_fields_v1,
    parse_fields_v1,
    record_update,
    update_in_place,
)
from agones.localcluster.apiserver.patch import PRIMITIVE_MERGE

META = {("spec", "ports"): "name", ("metadata", "finalizers"): PRIMITIVE_MERGE}
KEYS = st.sampled_from(["a", "b", "c", "ports"])
# 1, 1.0 and True are equal or not by type: both paths must agree on them.
LEAVES = st.one_of(
    st.none(), st.booleans(), st.sampled_from([0, 1, 1.0, 2]), st.sampled_from(["x", "y"])
)
PORTS = st.lists(
    st.fixed_dictionaries({"name": st.sampled_from(["p", "q"]), "port": st.integers(1, 3)}),
    max_size=3,
)


def _trees(depth: int = 2) -> st.SearchStrategy[Any]:
    if depth == 0:
        return LEAVES
    children = _trees(depth - 1)
    return st.one_of(
        LEAVES, st.dictionaries(KEYS, children, max_size=3), st.lists(LEAVES, max_size=2)
    )


def _objects() -> st.SearchStrategy[dict[str, Any]]:
    md = st.fixed_dictionaries(
        {"name": st.just("o"), "resourceVersion": st.just("5")},
        optional={
            "labels": st.dictionaries(KEYS, st.sampled_from(["1", "2"]), max_size=2),
            "finalizers": st.lists(st.sampled_from(["f/a", "f/b"]), max_size=2),
        },
    )
    spec = st.dictionaries(KEYS, _trees(), max_size=3).flatmap(
        lambda d: st.one_of(st.just(d), PORTS.map(lambda p: {**d, "ports": p}))
    )
    return st.fixed_dictionaries(
        {"apiVersion": st.just("v1"), "kind": st.just("K"), "metadata": md, "spec": spec},
        optional={"data": st.dictionaries(KEYS, LEAVES, max_size=2)},
    )


def _changed_leaves(draw: st.DrawFn, value: Any) -> Any:
    """`value` with some of its leaves replaced: the shape of the common update."""
    if isinstance(value, dict):
        return {k: _changed_leaves(draw, v) for k, v in value.items()}
    if isinstance(value, list):
        return [_changed_leaves(draw, v) for v in value]
    return draw(LEAVES) if draw(st.booleans()) else value


@st.composite
def _writes(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    old = draw(_objects())
    if draw(st.booleans()):
        new = {**old, "metadata": old["metadata"], "spec": _changed_leaves(draw, old["spec"])}
    else:
        new = draw(_objects())
    paths = sorted(parse_fields_v1(created_fields({}, old, META, ())))
    managed = []
    for manager, operation, sub in draw(
        st.lists(
            st.sampled_from(
                [
                    ("me", "Update", ""),
                    ("other", "Update", ""),
                    ("me", "Apply", ""),
                    ("me", "Update", "status"),
                ]
            ),
            min_size=1,
            max_size=3,
            unique=True,
        )
    ):
        owned = (
            draw(st.sets(st.sampled_from(paths))) if paths and draw(st.booleans()) else set(paths)
        )
        entry = managedfields.entry(manager, "v1", sub, draw(st.sampled_from(["t0", "t1"])), {})
        entry["operation"] = operation
        entry["fieldsV1"] = encode_fields_v1(owned)
        managed.append(entry)
    return managed, old, new


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_writes())
def test_update_in_place_equals_the_general_path(
    write: tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]],
) -> None:
    managed, old, new = write
    before = copy.deepcopy((managed, old, new))
    fast = update_in_place(managed, old, new, META, (), "me", "v2", "", "NOW")
    assert (managed, old, new) == before  # nothing the short cut reads is changed
    if fast is not None:
        assert fast == record_update(managed, compare(old, new, META), "me", "v2", "", "NOW")


@pytest.mark.parametrize(
    ("new_spec", "fires"),
    [
        pytest.param({"a": 2, "b": "x"}, True, id="own-leaf-changed"),
        pytest.param({"a": 1, "b": "x"}, True, id="nothing-changed"),
        pytest.param({"a": 1.0, "b": "x"}, True, id="equal-across-types"),
        pytest.param({"a": 1, "b": "y"}, False, id="other-managers-leaf"),
        pytest.param({"a": 1}, False, id="field-removed"),
        pytest.param({"a": 1, "b": "x", "c": 1}, False, id="field-added"),
        pytest.param({"a": {"z": 1}, "b": "x"}, False, id="leaf-becomes-map"),
    ],
)
def test_update_in_place_takes_only_leaf_changes_of_its_own(new_spec: dict, fires: bool) -> None:
    old = {"metadata": {"name": "o"}, "spec": {"a": 1, "b": "x"}}
    managed = [
        managedfields.entry("me", "v1", "", "t0", {"f:spec": {".": {}, "f:a": {}}}),
        managedfields.entry("other", "v1", "", "t0", {"f:spec": {"f:b": {}}}),
    ]
    new = {"metadata": {"name": "o"}, "spec": new_spec}
    fast = update_in_place(managed, old, new, META, (), "me", "v2", "", "t1")
    assert (fast is not None) == fires
    if fast is not None:
        assert fast == record_update(managed, compare(old, new, META), "me", "v2", "", "t1")


_SHARED = TreeCache(META, size=4)  # small: entries are evicted between examples


@settings(max_examples=400, deadline=None)
@given(_objects(), st.booleans())
def test_created_fields_with_a_tree_cache_equals_without(
    obj: dict[str, Any], builtin: bool
) -> None:
    empty = managedfields.empty_object(builtin, True, True)
    ignored = ("status",)
    first = created_fields(empty, obj, META, ignored, _SHARED)
    assert first == created_fields(empty, obj, META, ignored)
    # Shared subtrees are never changed by a later create of another kind's shape.
    created_fields(managedfields.empty_object(not builtin, True, True), obj, META, ignored, _SHARED)
    assert first == created_fields(empty, obj, META, ignored)


CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "things.fast.example.com"},
    "spec": {
        "group": "fast.example.com",
        "scope": "Namespaced",
        "names": {"plural": "things", "kind": "Thing"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                            "status": {
                                "type": "object",
                                "x-kubernetes-preserve-unknown-fields": True,
                            },
                        },
                    }
                },
            }
        ],
    },
}

SPEC_WRITES = st.lists(
    st.tuples(
        st.sampled_from(["alice", "bob"]),
        st.dictionaries(st.sampled_from(["a", "b", "c"]), st.sampled_from([1, 2, "x"]), max_size=3),
        st.booleans(),
        st.booleans(),
    ),
    min_size=1,
    max_size=6,
)


async def _run(writes: list[tuple[str, dict, bool, bool]]) -> list[Any]:
    """The managedFields after each update of `writes` (manager, spec, whether the body carries
    managedFields, whether the spec is merged into the stored one or replaces it)."""
    out = []
    async with LocalAPIServer() as srv:
        reg = srv.registry
        crds = reg.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        assert crds is not None
        await reg.create(crds, "", copy.deepcopy(CRD))
        info = reg.lookup("fast.example.com", "v1", "things")
        while info is None:  # the CRD controller serves it once it is established
            await asyncio.sleep(0.01)
            info = reg.lookup("fast.example.com", "v1", "things")
        body = {"apiVersion": "fast.example.com/v1", "kind": "Thing", "metadata": {"name": "t"}}
        current = (
            await reg.create(info, "default", {**body, "spec": {"a": 1}}, manager="alice")
        ).obj
        for manager, spec, send_managed, merge in writes:
            obj = copy.deepcopy(current)
            obj["spec"] = {**obj["spec"], **spec} if merge else spec
            if not send_managed:
                obj["metadata"].pop("managedFields", None)
            current = (await reg.update(info, "default", "t", obj, manager=manager)).obj
            out.append(current["metadata"].get("managedFields"))
    return out


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(writes=SPEC_WRITES)
def test_registry_writes_record_what_the_general_path_records(
    writes: list[tuple[str, dict, bool, bool]], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(meta, "now_rfc3339", lambda: "2026-12-01T00:00:00Z")
    with_fast = asyncio.run(_run(writes))
    monkeypatch.setattr(managedfields, "update_in_place", lambda *args: None)
    general = asyncio.run(_run(writes))
    monkeypatch.undo()
    assert with_fast == general


def test_registry_update_of_own_leaves_takes_the_short_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    answers: list[object] = []
    real = managedfields.update_in_place

    def spy(*args: Any) -> Any:
        answers.append(real(*args))
        return answers[-1]

    monkeypatch.setattr(managedfields, "update_in_place", spy)
    (recorded,) = asyncio.run(_run([("alice", {"a": 2}, True, True)]))
    assert answers and answers[0] is not None
    assert [(m["manager"], m["fieldsV1"]) for m in recorded] == [
        ("alice", {"f:spec": {".": {}, "f:a": {}}})
    ]
