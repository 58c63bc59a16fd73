"""ObjectMeta validation: qualified names, labels, annotations, finalizers, owner references."""

import pytest

from agones.localcluster.apiserver.meta import qualified_name_errors, validate_object_meta


@pytest.mark.parametrize(
    ("value", "ok"),
    [
        pytest.param("app", True, id="plain"),
        pytest.param("agones.dev/role", True, id="prefixed"),
        pytest.param("kubernetes", True, id="standard-finalizer"),
        pytest.param("Bad Key", False, id="space"),
        pytest.param("/x", False, id="empty-prefix"),
        pytest.param("a.b/", False, id="empty-name"),
        pytest.param("UPPER.example.com/x", False, id="prefix-not-subdomain"),
        pytest.param("x" * 64, False, id="name-too-long"),
        pytest.param("app\n", False, id="trailing-newline"),
    ],
)
def test_qualified_names(value: str, ok: bool) -> None:
    assert (qualified_name_errors(value) == []) is ok


@pytest.mark.parametrize(
    ("meta", "fields"),
    [
        pytest.param(
            {"name": "ok", "namespace": "d", "labels": {"a": "b"}, "finalizers": ["example.com/f"]},
            [],
            id="valid",
        ),
        pytest.param(
            {"name": "ok", "namespace": "d", "labels": {"bad key": "b"}},
            ["metadata.labels"],
            id="label-key",
        ),
        pytest.param(
            {"name": "ok", "namespace": "d", "annotations": {"a": 1}},
            ["metadata.annotations"],
            id="annotation-value",
        ),
        pytest.param(
            {"name": "ok", "namespace": "d", "finalizers": ["bad finalizer"]},
            ["metadata.finalizers[0]"],
            id="finalizer",
        ),
        pytest.param(
            {
                "name": "ok",
                "namespace": "d",
                "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o"}],
            },
            ["metadata.ownerReferences.uid"],
            id="owner-without-uid",
        ),
        pytest.param(
            {
                "name": "ok",
                "namespace": "d",
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "K", "name": n, "uid": n, "controller": True}
                    for n in "ab"
                ],
            },
            ["metadata.ownerReferences"],
            id="two-controllers",
        ),
        pytest.param({"name": "ok"}, ["metadata.namespace"], id="namespace-required"),
        pytest.param(
            {"name": "ok\n", "namespace": "d"}, ["metadata.name"], id="name-trailing-newline"
        ),
        pytest.param(
            {"name": "ok", "namespace": "d", "labels": {"a": "b\n"}},
            ["metadata.labels"],
            id="label-value-trailing-newline",
        ),
    ],
)
def test_validate_object_meta(meta: dict, fields: list[str]) -> None:
    assert [e.field for e in validate_object_meta("ConfigMap", meta, True)] == fields
