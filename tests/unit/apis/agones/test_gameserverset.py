"""GameServerSet: schema defaults only, validation on create, template immutability on update."""

from __future__ import annotations

from typing import Any

import pytest

from agones.apis.scheme import Scheme
from agones.featuregates import FeatureGates

from .manifests import container, game_server_set, template


def test_only_schema_defaults_apply(scheme: Scheme) -> None:
    obj = scheme.decode(game_server_set())
    scheme.apply_defaults(obj, FeatureGates())
    got = scheme.encode(obj)
    assert got["metadata"] == {"name": "gss", "namespace": "default"}  # no version annotation
    assert "scheduling" not in got["spec"]
    assert got["spec"]["template"]["spec"]["immutableReplicas"] == 1
    assert "health" not in got["spec"]["template"]["spec"]


Err = tuple[str, str]
REJECTED: list[tuple[str, dict[str, Any], FeatureGates, list[Err]]] = [
    (
        "replicas-required",
        {"replicas": None},
        FeatureGates(),
        [("spec.replicas", "FieldValueRequired")],
    ),
    (
        "template-required",
        {"template": None},
        FeatureGates(),
        [("spec.template", "FieldValueRequired")],
    ),
    (
        "replicas-negative",
        {"replicas": -1},
        FeatureGates(),
        [("spec.replicas", "FieldValueInvalid"), (".spec.replicas", "FieldValueInvalid")],
    ),
    (
        "immutable-replicas-max",
        {"template": template({"immutableReplicas": 2})},
        FeatureGates(),
        [("spec.template.spec.immutableReplicas", "FieldValueInvalid")],
    ),
    (
        "template-spec-rules",
        {"template": template({"ports": [{"portPolicy": "Passthrough", "containerPort": 1}]})},
        FeatureGates(),
        [("spec.template.spec.ports[0].containerPort", "FieldValueRequired")],
    ),
    (
        "template-metadata",
        {"template": {"metadata": {"annotations": {"a b": "c"}}, "spec": template()["spec"]}},
        FeatureGates(),
        [("spec.template.metadata.annotations", "FieldValueInvalid")],
    ),
    (
        "priorities-gate-off",
        {"priorities": [{"type": "List", "key": "p"}]},
        FeatureGates().with_values(CountsAndLists=False),
        [("spec.priorities", "FieldValueForbidden")],
    ),
    (
        "scheduling-enum",
        {"scheduling": "Nope"},
        FeatureGates(),
        [("spec.scheduling", "FieldValueNotSupported")],
    ),
]


@pytest.mark.parametrize(
    ("spec", "gates", "want"), [pytest.param(s, g, w, id=i) for i, s, g, w in REJECTED]
)
def test_game_server_set_rejected(
    scheme: Scheme, spec: dict[str, Any], gates: FeatureGates, want: list[Err]
) -> None:
    manifest = game_server_set(spec)
    manifest["spec"] = {k: v for k, v in manifest["spec"].items() if v is not None}
    errors = scheme.admit(manifest, gates).errors
    assert [(e.field, e.reason) for e in errors] == want


def test_game_server_set_name_too_long(scheme: Scheme) -> None:
    errors = scheme.admit(game_server_set(name="g" * 64), FeatureGates()).errors
    assert [str(e) for e in errors] == ["metadata.name: Too long: may not be more than 63 bytes"]


def test_template_is_immutable_on_update(scheme: Scheme) -> None:
    old = scheme.decode(game_server_set())
    scaled = scheme.decode(game_server_set({"replicas": 10}))
    assert scheme.validate_update(old, scaled, FeatureGates()) == []
    # Differences Go cannot see (a false omitempty bool) are not changes.
    same = scheme.decode(game_server_set({"template": template({"health": {"disabled": False}})}))
    assert scheme.validate_update(old, same, FeatureGates()) == []
    changed = scheme.decode(
        game_server_set(
            {"template": template({"template": {"spec": {"containers": [container(image="x:2")]}}})}
        )
    )
    errors = scheme.validate_update(old, changed, FeatureGates())
    assert [(e.field, e.reason, e.detail) for e in errors] == [
        ("spec.template", "FieldValueInvalid", "GameServerSet template cannot be updated")
    ]


def test_update_still_validates_the_new_object(scheme: Scheme) -> None:
    old = scheme.decode(game_server_set())
    new = scheme.decode(game_server_set(name="g" * 64))
    assert [e.field for e in scheme.validate_update(old, new, FeatureGates())] == ["metadata.name"]
    admission = scheme.admit(game_server_set(name="g" * 64), FeatureGates(), old=old)
    assert [e.field for e in admission.errors] == ["metadata.name"]
