"""The registry's cheap write paths against the copying ones, on random write sequences.

Deletions share the stored object's subtrees, controllers' writes and admission patches copy
through JSON, JSON patches apply to the registry's private copy, and updates of custom resources
skip the metadata checks the stored object passed. Whatever a sequence of creates, updates,
patches (JSON, merge, strategic), bindings and deletions does, the cheap paths must store the very
objects, managedFields and watch events the deep-copying paths store, and no stored object or
event may change after it was written (each still encodes to the JSON kept beside it).
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agones.localcluster import LocalAPIServer
from agones.localcluster.apiserver import deletion, errors, patching, registry, updates
from agones.localcluster.apiserver.deletion import DeleteOptions
from agones.localcluster.apiserver.registry import Registry
from agones.localcluster.apiserver.resources import ResourceInfo

GROUP = "writes.test.example.com"
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"things.{GROUP}"},
    "spec": {
        "group": GROUP,
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
                                    "replicas": {"type": "integer", "default": 1},
                                    "tags": {"type": "array", "items": {"type": "string"}},
                                },
                            }
                        },
                    }
                },
            }
        ],
    },
}

NAMES = st.sampled_from(["a", "a", "b"])
KINDS = st.sampled_from(["configmaps", "pods", "things"])
LABEL_VALUES = st.sampled_from(["x", "y", "-bad-", ""])
LABELS = st.dictionaries(st.sampled_from(["app", "tier"]), LABEL_VALUES, max_size=2)
VALUES = st.sampled_from(["1", "2", "3"])
VERBS = ["create", "update", "merge", "json", "strategic", "finalize", "delete", "bind"]
OPS = st.tuples(st.sampled_from(VERBS), KINDS, NAMES, LABELS, VALUES)


def _body(kind: str, name: str, labels: dict[str, str], value: str) -> dict[str, Any]:
    md: dict[str, Any] = {"name": name, "labels": dict(labels), "annotations": {"v": value}}
    if kind == "configmaps":
        return {"metadata": md, "data": {"k": value}}
    if kind == "pods":
        spec = {"containers": [{"name": "c", "image": f"img:{value}"}]}
        return {"metadata": md, "spec": spec}
    return {"metadata": md, "spec": {"tags": [value]}}


def _change(kind: str, value: str) -> dict[str, Any]:
    if kind == "configmaps":
        return {"data": {"k": value}}
    if kind == "pods":
        return {"metadata": {"annotations": {"v": value}}}
    return {"spec": {"tags": [value, value]}}


def _json_ops(kind: str, value: str) -> list[dict[str, Any]]:
    path = {"configmaps": "/data/k", "pods": "/metadata/annotations/v", "things": "/spec/tags/0"}
    return [{"op": "replace", "path": path[kind], "value": value}]


async def _apply(reg: Registry, info: ResourceInfo, op: tuple[Any, ...]) -> None:
    verb, _, name, labels, value = op
    kind = info.resource
    if verb == "create":
        await reg.create(info, "default", _body(kind, name, labels, value), manager="m1")
        return
    current = reg.get(info, "default", name).obj
    if verb == "update":
        body = copy.deepcopy(current)
        body["metadata"]["labels"] = dict(labels)
        body |= {k: v for k, v in _change(kind, value).items() if k != "metadata"}
        await reg.update(info, "default", name, body, manager="m2")
    elif verb == "merge":
        patch = _change(kind, value) | {"metadata": {"labels": dict(labels)}}
        await reg.patch(info, "default", name, "merge", patch, manager="m1")
    elif verb == "json":
        await reg.patch(info, "default", name, "json", _json_ops(kind, value), manager="m3")
    elif verb == "strategic" and kind != "things":
        patch = {"metadata": {"finalizers": [f"x.io/{value}"]}}
        await reg.patch(info, "default", name, "strategic", patch, manager="m2")
    elif verb == "finalize":
        patch = {"metadata": {"finalizers": None}}
        await reg.patch(info, "default", name, "merge", patch, manager="m1")
    elif verb == "delete":
        await reg.delete(info, "default", name, DeleteOptions())
    elif verb == "bind" and kind == "pods" and not (current.get("spec") or {}).get("nodeName"):

        def bind(obj: dict[str, Any]) -> None:
            obj["spec"]["nodeName"] = f"node-{value}"
            obj.setdefault("status", {}).setdefault("conditions", []).append({"type": "X"})

        reg.force_update(info, reg.get(info, "default", name), bind)


_SERVER_SET = ("uid", "creationTimestamp", "deletionTimestamp")


def _normal(obj: Any) -> Any:
    """An object without what differs from run to run (uids, times)."""
    out = copy.deepcopy(obj)
    md = out.get("metadata") or {}
    for k in _SERVER_SET:
        md.pop(k, None)
    for entry in md.get("managedFields") or []:
        entry.pop("time", None)
    return out


async def _run(ops: list[tuple[Any, ...]]) -> tuple[list[Any], list[Any], list[Any]]:
    async with LocalAPIServer(graceful_pod_deletion=True) as srv:
        reg = srv.registry
        crds = reg.lookup("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        assert crds is not None
        await reg.create(crds, "", copy.deepcopy(CRD))
        for _ in range(200):
            if reg.lookup(GROUP, "v1", "things") is not None:
                break
            await asyncio.sleep(0.01)
        infos = {
            "configmaps": reg.lookup("", "v1", "configmaps"),
            "pods": reg.lookup("", "v1", "pods"),
            "things": reg.lookup(GROUP, "v1", "things"),
        }
        outcomes: list[Any] = []
        for op in ops:
            info = infos[op[1]]
            assert info is not None
            try:
                await _apply(reg, info, op)
                outcomes.append("ok")
            except errors.StatusError as err:
                outcomes.append((err.code, err.reason))
        stored, events = [], []
        for kind, info in infos.items():
            assert info is not None
            for entry in reg.store.list(info.key):
                assert msgspec.json.encode(entry.obj) == entry.raw  # unchanged since stored
                stored.append((kind, _normal(entry.obj)))
            for event in reg.store.resource(info.key).history:
                assert msgspec.json.encode(event.obj) == event.raw
                events.append((kind, event.type, _normal(event.obj)))
        return outcomes, stored, events


@contextmanager
def _copying_paths() -> Iterator[None]:
    """The registry's steps as they were before the cheap paths: deep copies everywhere."""
    saved = (
        deletion._with_own_metadata,
        registry.copy_of,
        updates.copy_of,
        patching.apply_patch_in_place,
        registry.meta.validate_object_meta,
    )
    from agones.jsonpatch import apply_patch

    check_meta = saved[4]
    deletion._with_own_metadata = copy.deepcopy  # type: ignore[assignment]
    registry.copy_of = updates.copy_of = lambda entry: copy.deepcopy(entry.obj)  # type: ignore[assignment]
    patching.apply_patch_in_place = apply_patch  # type: ignore[assignment]
    registry.meta.validate_object_meta = lambda k, md, ns, stored=None: check_meta(k, md, ns)  # type: ignore[assignment]
    try:
        yield
    finally:
        (
            deletion._with_own_metadata,
            registry.copy_of,
            updates.copy_of,
            patching.apply_patch_in_place,
            registry.meta.validate_object_meta,
        ) = saved  # type: ignore[assignment]


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(ops=st.lists(OPS, min_size=3, max_size=14))
def test_cheap_write_paths_store_what_copying_paths_store(ops: list[tuple[Any, ...]]) -> None:
    created = [
        ("create", kind, "a", {"app": "x"}, "1") for kind in ("configmaps", "pods", "things")
    ]
    ops = [*created, ("bind", "pods", "a", {}, "1"), *ops]
    cheap = asyncio.run(_run(ops))
    with _copying_paths():
        copying = asyncio.run(_run(ops))
    assert cheap == copying


@pytest.mark.parametrize(
    ("stored_labels", "labels", "errors_expected"),
    [
        pytest.param({"app": "x"}, {"app": "x"}, False, id="unchanged"),
        pytest.param({"app": "x"}, {"app": "-bad-"}, True, id="changed-to-invalid"),
        pytest.param({"app": "x"}, {"app": "y"}, False, id="changed-valid"),
    ],
)
def test_update_checks_changed_labels(
    stored_labels: dict[str, str], labels: dict[str, str], errors_expected: bool
) -> None:
    stored = {"name": "n", "namespace": "d", "labels": stored_labels}
    new = {"name": "n", "namespace": "d", "labels": labels}
    got = registry.meta.validate_object_meta("Thing", new, True, stored)
    assert got == registry.meta.validate_object_meta("Thing", new, True)
    assert bool(got) == errors_expected


async def test_webhook_rules_follow_configuration_writes() -> None:
    """The webhooks ruled in for a kind of request are remembered only until a configuration is
    written: a changed rule applies to the next write."""
    async with LocalAPIServer() as srv:
        reg = srv.registry
        configs = reg.lookup("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations")
        cms = reg.lookup("", "v1", "configmaps")
        assert configs is not None and cms is not None

        def config(resource: str) -> dict[str, Any]:
            rule = {"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"]}
            hook = {
                "name": "down.example.com",
                "clientConfig": {"url": "https://127.0.0.1:1/mutate"},
                "rules": [rule | {"resources": [resource]}],
                "sideEffects": "None",
                "admissionReviewVersions": ["v1"],
                "timeoutSeconds": 1,
            }
            return {"metadata": {"name": "down"}, "webhooks": [hook]}

        await reg.create(configs, "", config("secrets"))
        await reg.create(cms, "default", {"metadata": {"name": "c1"}})  # not ruled in
        stored = reg.get(configs, "", "down").obj
        body = config("configmaps")
        body["metadata"]["resourceVersion"] = stored["metadata"]["resourceVersion"]
        await reg.update(configs, "", "down", body)
        with pytest.raises(errors.StatusError) as failed:
            await reg.create(cms, "default", {"metadata": {"name": "c2"}})
        assert failed.value.code == 500 and "down.example.com" in str(failed.value)
        await reg.delete(configs, "", "down", DeleteOptions())
        await reg.create(cms, "default", {"metadata": {"name": "c3"}})
