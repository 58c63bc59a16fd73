"""An update's schema passes may skip what the stored object already had, and find the same.

`customresource.decode`/`validate` with `old` (the stored object, admitted by the same `Version`)
must give exactly the object, pruned paths and errors the full pass gives, for any stored object
and any update; the registry must use the short cut only while the schema that admitted the
stored object is the one served: after a schema change an unchanged field that is now invalid
is refused on update, as kube-apiserver v1.28 (which validates the whole object) refuses it.
"""

from __future__ import annotations

import asyncio
import copy
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agones.apis.structural import customresource
from agones.localcluster import LocalAPIServer
from agones.localcluster.apiserver import errors
from tests.waiting import wait_for_async

PORT = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string"},
        "port": {"type": "integer", "minimum": 1},
        "flag": {"type": "boolean", "default": False},
    },
}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "required": ["size"],
            "properties": {
                "size": {"type": "integer", "minimum": 0, "maximum": 5},
                "on": {"type": "boolean"},
                "mode": {"type": "string", "enum": ["A", "B"], "default": "A"},
                "tags": {
                    "type": "array",
                    "items": {"type": "string"},
                    "x-kubernetes-list-type": "set",
                },
                "ports": {
                    "type": "array",
                    "items": PORT,
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                },
                "nested": {
                    "type": "object",
                    "properties": {
                        "a": {"type": "integer"},
                        "b": {"type": "boolean"},
                        "inner": {
                            "type": "object",
                            "default": {},
                            "properties": {"c": {"type": "number", "default": 1}},
                        },
                    },
                },
                "labels": {"type": "object", "additionalProperties": {"type": "integer"}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
            },
        },
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    },
}
VERSION = customresource.Version(SCHEMA)

KEYS = st.sampled_from(["size", "on", "mode", "a", "b", "inner", "c", "name", "port", "zz"])
# 1, 1.0 and True are equal in Python and not in JSON: the short cut must tell them apart.
LEAVES = st.one_of(
    st.none(), st.booleans(), st.sampled_from([0, 1, 1.0, 3, 7, -1]), st.sampled_from(["A", "x"])
)
TREES = st.recursive(
    LEAVES,
    lambda kids: st.one_of(st.lists(kids, max_size=2), st.dictionaries(KEYS, kids, max_size=3)),
    max_leaves=6,
)
PORTS = st.lists(
    st.fixed_dictionaries(
        {"name": st.sampled_from(["p", "q", "r"])},
        optional={"port": st.integers(1, 3), "flag": st.booleans()},
    ),
    max_size=3,
    unique_by=lambda p: p["name"],
)
SPECS = st.fixed_dictionaries(
    {"size": st.integers(0, 5)},
    optional={
        "on": st.booleans(),
        "mode": st.sampled_from(["A", "B"]),
        "tags": st.lists(st.sampled_from(["t", "u"]), unique=True, max_size=2),
        "ports": PORTS,
        "nested": st.fixed_dictionaries(
            {}, optional={"a": st.integers(0, 2), "b": st.booleans(), "zz": TREES}
        ),
        "labels": st.dictionaries(st.sampled_from(["x", "y"]), st.integers(0, 2), max_size=2),
        "free": st.dictionaries(KEYS, TREES, max_size=2),
        "zz": TREES,
    },
)


def _objects() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {
            "apiVersion": st.just("x.example.com/v1"),
            "kind": st.just("Thing"),
            "metadata": st.just({"name": "o", "resourceVersion": "3"}),
            "spec": SPECS,
        },
        optional={"status": st.dictionaries(KEYS, TREES, max_size=2)},
    )


@st.composite
def _near(draw: st.DrawFn, value: Any, depth: int = 0) -> Any:
    """A value like `value`: most of it as it is, some parts changed, dropped or added."""
    pick = draw(st.integers(0, 9))
    if pick == 0:
        return draw(TREES)
    if isinstance(value, dict) and depth < 4:
        out = {}
        for k, v in value.items():
            keep = draw(st.integers(0, 9))
            if keep == 0:
                continue
            out[k] = draw(_near(v, depth + 1)) if keep < 4 else copy.deepcopy(v)
        if draw(st.integers(0, 4)) == 0:
            out[draw(KEYS)] = draw(TREES)
        return out
    if isinstance(value, list) and depth < 4 and pick < 4:
        return [draw(_near(item, depth + 1)) for item in value]
    if pick == 1:
        return draw(LEAVES)
    if pick < 5 and isinstance(value, (bool, int, float)) and value in (0, 1):
        return draw(st.sampled_from([False, 0, 0.0] if value == 0 else [True, 1, 1.0]))
    return copy.deepcopy(value)


def _pass(obj: dict[str, Any], old: dict[str, Any] | None) -> tuple[bytes, list[str], list[str]]:
    dropped = customresource.decode(obj, VERSION, old)
    errs = customresource.validate(obj, VERSION, old)
    return msgspec.json.encode(obj), dropped, [str(e) for e in errs]


@st.composite
def _stored_and_update(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any]]:
    stored = draw(_objects())
    customresource.decode(stored, VERSION)
    if customresource.validate(stored, VERSION):
        stored = draw(_objects().filter(lambda o: not _pass(copy.deepcopy(o), None)[2]))
        customresource.decode(stored, VERSION)
    body = {k: v for k, v in stored.items() if k in ("spec", "status")}
    changed = draw(_near(body))
    fixed = {k: copy.deepcopy(v) for k, v in stored.items() if k not in body}
    return stored, {**(changed if isinstance(changed, dict) else {}), **fixed}


@settings(max_examples=600, deadline=None)
@given(case=_stored_and_update())
def test_the_short_cut_gives_what_the_full_pass_gives(
    case: tuple[dict[str, Any], dict[str, Any]],
) -> None:
    stored, update = case
    assert not customresource.validate(stored, VERSION)
    before = msgspec.json.encode(stored)
    fast = _pass(copy.deepcopy(update), stored)
    assert fast == _pass(copy.deepcopy(update), None)
    assert msgspec.json.encode(stored) == before


@pytest.mark.parametrize(
    ("update", "want"),
    [
        pytest.param({"size": 1}, 0, id="unchanged-subtree-not-walked"),
        pytest.param({"size": 1, "on": 1}, 1, id="true-became-1"),
        pytest.param({"size": 1, "on": True, "ports": [{"name": "p", "port": 0}]}, 1, id="list"),
    ],
)
def test_the_short_cut_skips_only_what_is_unchanged(update: dict[str, Any], want: int) -> None:
    # A stored object the schema would refuse (it never is, when `old` is kept as documented)
    # shows which subtrees the short cut leaves alone.
    stored = {"spec": {"size": 1, "on": True, "ports": [{"name": "p", "port": -1}]}}
    body = {"spec": {**stored["spec"], **update}}
    errs = customresource.validate(body, VERSION, stored)
    assert len(errs) == want, errs


CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "things.skip.example.com"},
    "spec": {
        "group": "skip.example.com",
        "scope": "Namespaced",
        "names": {"plural": "things", "kind": "Thing"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "size": {"type": "integer", "maximum": 10},
                                    "note": {"type": "string"},
                                },
                            }
                        },
                    }
                },
            }
        ],
    },
}


async def _update_after_schema_change(change: bool) -> list[tuple[str, Any]]:
    """Create a Thing with size 7, optionally lower the CRD's maximum to 5, then update only its
    note; the causes of the refusal (empty when the update is admitted)."""
    async with LocalAPIServer() as srv:
        reg = srv.registry
        crds = reg.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        assert crds is not None
        crd = (await reg.create(crds, "", copy.deepcopy(CRD))).obj

        def served() -> Any:
            return reg.lookup("skip.example.com", "v1", "things")

        info = await wait_for_async(served, what="the CRD served")
        body = {"apiVersion": "skip.example.com/v1", "kind": "Thing", "metadata": {"name": "t"}}
        current = (await reg.create(info, "default", {**body, "spec": {"size": 7}})).obj
        current = (await reg.update(info, "default", "t", _noted(current, "a"))).obj
        if change:
            crd = reg.get(crds, "", crd["metadata"]["name"]).obj
            new_crd = copy.deepcopy(crd)
            props = new_crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
            props["spec"]["properties"]["size"]["maximum"] = 5
            await reg.update(crds, "", new_crd["metadata"]["name"], new_crd)
            old_custom = info.custom

            def reserved() -> Any:
                now = served()
                return now if now is not None and now.custom is not old_custom else None

            info = await wait_for_async(reserved, what="the new schema served")
        try:
            await reg.update(info, "default", "t", _noted(current, "b"))
        except errors.StatusError as err:
            assert err.details is not None
            return [(c["field"], c["message"]) for c in err.details["causes"]]
        return []


def _noted(obj: dict[str, Any], note: str) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    out["spec"]["note"] = note
    return out


def test_an_unchanged_field_the_new_schema_refuses_is_refused_on_update() -> None:
    assert asyncio.run(_update_after_schema_change(change=False)) == []
    causes = asyncio.run(_update_after_schema_change(change=True))
    assert [f for f, _ in causes] == ["spec.size"], causes
    assert "less than or equal to 5" in causes[0][1]


def test_the_registry_update_takes_the_short_cut(monkeypatch: pytest.MonkeyPatch) -> None:
    taken: list[object] = []
    real = customresource.Admitted.take

    def spy(self: customresource.Admitted, stored: Any, version: Any) -> Any:
        taken.append(real(self, stored, version))
        return taken[-1]

    monkeypatch.setattr(customresource.Admitted, "take", spy)
    assert asyncio.run(_update_after_schema_change(change=False)) == []
    # The first update's stored object came from the create, the second's from the first update.
    assert [t is not None for t in taken[-2:]] == [True, True]
