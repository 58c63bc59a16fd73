"""Table tests: Fleet defaults (strategy, scheduling, annotation only) and validation rules."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agones.apis.agones.v1.fleet import Fleet, FleetSpec, validate_rolling_update
from agones.apis.field import Path
from agones.apis.scheme import Scheme
from agones.featuregates import FeatureGates
from agones.version import VERSION

from .manifests import MISSING, container, fleet, game_server_set, lookup, template


def _defaulted(scheme: Scheme, manifest: dict[str, Any]) -> dict[str, Any]:
    obj = scheme.decode(manifest)
    scheme.apply_defaults(obj, FeatureGates())
    return scheme.encode(obj)


DEFAULTS = [
    ("strategy-type", {}, "spec.strategy.type", "RollingUpdate"),
    ("max-surge", {}, "spec.strategy.rollingUpdate.maxSurge", "25%"),
    ("max-unavailable", {}, "spec.strategy.rollingUpdate.maxUnavailable", "25%"),
    (
        "max-surge-only-gets-unavailable",
        {"strategy": {"rollingUpdate": {"maxSurge": 3}}},
        "spec.strategy.rollingUpdate",
        {"maxSurge": 3, "maxUnavailable": "25%"},
    ),
    (
        "recreate-no-rolling-update",
        {"strategy": {"type": "Recreate"}},
        "spec.strategy",
        {"type": "Recreate"},
    ),
    (
        "recreate-rolling-update-kept",
        {"strategy": {"type": "Recreate", "rollingUpdate": {"maxSurge": "10%"}}},
        "spec.strategy",
        {"type": "Recreate", "rollingUpdate": {"maxSurge": "10%"}},
    ),
    ("scheduling-packed", {}, "spec.scheduling", "Packed"),
    ("scheduling-kept", {"scheduling": "Distributed"}, "spec.scheduling", "Distributed"),
    ("replicas-written", {"replicas": None}, "spec.replicas", 0),
    (
        "priority-order-ascending",
        {"priorities": [{"type": "Counter", "key": "rooms"}]},
        "spec.priorities.0.order",
        "Ascending",
    ),
    (
        "priority-key-written",
        {"priorities": [{"type": "List"}]},
        "spec.priorities.0",
        {"type": "List", "key": "", "order": "Ascending"},
    ),
    # the template is not defaulted, only shaped by Go's encoding and the CRD defaults
    ("template-container-not-set", {}, "spec.template.spec.container", MISSING),
    (
        "template-port-policy-not-set",
        {},
        "spec.template.spec.ports.0",
        {"name": "default", "containerPort": 7654},
    ),
    ("template-health-empty", {}, "spec.template.spec.health", {}),
    ("template-sdk-server-empty", {}, "spec.template.spec.sdkServer", {}),
    ("template-immutable-replicas", {}, "spec.template.spec.immutableReplicas", 1),
    (
        "template-zero-threshold-dropped",
        {"template": template({"health": {"failureThreshold": 0, "periodSeconds": 3}})},
        "spec.template.spec.health",
        {"periodSeconds": 3},
    ),
    (
        "template-list-defaults",
        {"template": template({"lists": {"players": {"capacity": None}}})},
        "spec.template.spec.lists.players",
        {"capacity": 1000, "values": []},
    ),
    (
        "template-counter-zero-kept",
        {"template": template({"counters": {"rooms": {"count": 0, "capacity": 10}}})},
        "spec.template.spec.counters.rooms",
        {"count": 0, "capacity": 10},
    ),
    ("no-status-invented", {}, "status", MISSING),
]


@pytest.mark.parametrize(
    ("spec", "path", "want"), [pytest.param(s, p, w, id=i) for i, s, p, w in DEFAULTS]
)
def test_fleet_default(scheme: Scheme, spec: dict[str, Any], path: str, want: Any) -> None:
    manifest = fleet(spec)
    manifest["spec"] = {k: v for k, v in manifest["spec"].items() if v is not None}
    assert lookup(_defaulted(scheme, manifest), path) == want


def test_fleet_version_annotation(scheme: Scheme) -> None:
    got = _defaulted(scheme, fleet())
    assert got["metadata"]["annotations"] == {"agones.dev/sdk-version": VERSION}


Err = tuple[str, str, str | None]
NO_CAL = FeatureGates().with_values(CountsAndLists=False)
REJECTED: list[tuple[str, dict[str, Any], dict[str, Any], FeatureGates, list[Err]]] = [
    (
        "replicas-negative",
        {"replicas": -1},
        {},
        FeatureGates(),
        [
            (
                "spec.replicas",
                "FieldValueInvalid",
                "Invalid value: -1: spec.replicas in body should be greater than or equal to 0",
            ),
            (
                ".spec.replicas",
                "FieldValueInvalid",
                "Invalid value: -1: should be a non-negative integer",
            ),
        ],
    ),
    (
        "strategy-type-enum",
        {"strategy": {"type": "Canary"}},
        {},
        FeatureGates(),
        [
            (
                "spec.strategy.type",
                "FieldValueNotSupported",
                'Unsupported value: "Canary": supported values: "Recreate", "RollingUpdate"',
            )
        ],
    ),
    (
        "max-surge-zero-percent",
        {"strategy": {"rollingUpdate": {"maxSurge": "0%"}}},
        {},
        FeatureGates(),
        [
            (
                "spec.strategy.rollingUpdate.maxSurge",
                "FieldValueInvalid",
                'Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:"0%"}: must be between 1% and 99%',
            )
        ],
    ),
    (
        "max-surge-zero",
        {"strategy": {"rollingUpdate": {"maxSurge": 0}}},
        {},
        FeatureGates(),
        [
            (
                "spec.strategy.rollingUpdate.maxSurge",
                "FieldValueInvalid",
                'Invalid value: intstr.IntOrString{Type:0, IntVal:0, StrVal:""}: must be at least 1',
            )
        ],
    ),
    (
        "max-unavailable-100-percent",
        {"strategy": {"rollingUpdate": {"maxUnavailable": "100%"}}},
        {},
        FeatureGates(),
        [("spec.strategy.rollingUpdate.maxUnavailable", "FieldValueInvalid", None)],
    ),
    (
        "max-unavailable-not-a-number",
        {"strategy": {"rollingUpdate": {"maxUnavailable": "lots%"}}},
        {},
        FeatureGates(),
        [("spec.strategy.rollingUpdate.maxUnavailable", "FieldValueInvalid", None)],
    ),
    (
        "both-bounds-unavailable-first",
        {"strategy": {"rollingUpdate": {"maxSurge": "0%", "maxUnavailable": "0%"}}},
        {},
        FeatureGates(),
        [
            ("spec.strategy.rollingUpdate.maxUnavailable", "FieldValueInvalid", None),
            ("spec.strategy.rollingUpdate.maxSurge", "FieldValueInvalid", None),
        ],
    ),
    (
        "template-spec-rules",
        {
            "template": template(
                {"ports": [{"portPolicy": "Dynamic", "containerPort": 1, "hostPort": 2}]}
            )
        },
        {},
        FeatureGates(),
        [("spec.template.spec.ports[0].hostPort", "FieldValueForbidden", None)],
    ),
    (
        "template-two-containers",
        {
            "template": template(
                {"template": {"spec": {"containers": [container("a"), container("b")]}}}
            )
        },
        {},
        FeatureGates(),
        [
            ("spec.template.spec.container", "FieldValueRequired", None),
            ("spec.template.spec.container", "FieldValueInvalid", None),
        ],
    ),
    (
        "template-negative-threshold-schema",
        {"template": template({"health": {"failureThreshold": -1}})},
        {},
        FeatureGates(),
        [("spec.template.spec.health.failureThreshold", "FieldValueInvalid", None)],
    ),
    (
        "template-metadata-labels",
        {"template": {"metadata": {"labels": {"bad key": "x"}}, "spec": template()["spec"]}},
        {},
        FeatureGates(),
        [("spec.template.metadata.labels", "FieldValueInvalid", None)],
    ),
    (
        "template-pod-labels",
        {
            "template": template(
                {
                    "template": {
                        "metadata": {"labels": {"k": "-bad"}},
                        "spec": {"containers": [container()]},
                    }
                }
            )
        },
        {},
        FeatureGates(),
        [("spec.template.spec.template.metadata.labels", "FieldValueInvalid", None)],
    ),
    (
        "template-missing-pod-template",
        {"template": {"spec": {"ports": []}}},
        {},
        FeatureGates(),
        [("spec.template.spec.template.spec.containers", "FieldValueTypeInvalid", None)],
    ),
    (
        "allocation-overflow-labels",
        {"allocationOverflow": {"labels": {"bad key": "v"}}},
        {},
        FeatureGates(),
        [("spec.allocationOverflow.labels", "FieldValueInvalid", None)],
    ),
    (
        "allocation-overflow-annotations",
        {"allocationOverflow": {"annotations": {"/x": "v"}}},
        {},
        FeatureGates(),
        [
            (
                "spec.allocationOverflow.annotations",
                "FieldValueInvalid",
                'Invalid value: "/x": prefix part must be non-empty',
            )
        ],
    ),
    (
        "priorities-gate-off",
        {"priorities": [{"type": "Counter", "key": "rooms"}]},
        {},
        NO_CAL,
        [
            (
                "spec.priorities",
                "FieldValueForbidden",
                "Forbidden: FeatureCountsAndLists is not enabled",
            )
        ],
    ),
    (
        "name-too-long",
        {},
        {"name": "f" * 64},
        FeatureGates(),
        [("metadata.name", "FieldValueTooLong", "Too long: may not be more than 63 bytes")],
    ),
]

ACCEPTED: list[tuple[str, dict[str, Any]]] = [
    ("minimal", {}),
    (
        "recreate-with-rolling-update",
        {"strategy": {"type": "Recreate", "rollingUpdate": {"maxSurge": "0%"}}},
    ),
    ("template-container-unknown-one-container", {"template": template({"container": "nope"})}),
    ("template-zero-threshold", {"template": template({"health": {"failureThreshold": 0}})}),
    ("priority-without-key", {"priorities": [{"type": "Counter"}]}),
    ("int-bounds", {"strategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": 5}}}),
    (
        "percent-bounds",
        {"strategy": {"rollingUpdate": {"maxSurge": "1%", "maxUnavailable": "99%"}}},
    ),
    ("zero-replicas", {"replicas": 0}),
]


@pytest.mark.parametrize(
    ("spec", "metadata", "gates", "want"),
    [pytest.param(s, m, g, w, id=i) for i, s, m, g, w in REJECTED],
)
def test_fleet_rejected(
    scheme: Scheme,
    spec: dict[str, Any],
    metadata: dict[str, Any],
    gates: FeatureGates,
    want: list[Err],
) -> None:
    errors = scheme.admit(fleet(spec, **metadata), gates).errors
    assert [(e.field, e.reason) for e in errors] == [(f, r) for f, r, _ in want]
    for err, (_, _, body) in zip(errors, want, strict=True):
        if body is not None:
            assert err.body() == body


@pytest.mark.parametrize("spec", [pytest.param(s, id=i) for i, s in ACCEPTED])
def test_fleet_accepted(scheme: Scheme, spec: dict[str, Any]) -> None:
    assert scheme.admit(fleet(spec), FeatureGates()).errors == []


def test_fleet_validation_does_not_default_the_template(scheme: Scheme) -> None:
    obj = scheme.decode(fleet())
    assert isinstance(obj, Fleet)
    scheme.apply_defaults(obj, FeatureGates())
    before = scheme.encode(obj)
    assert scheme.validate(obj, FeatureGates()) == []
    assert scheme.encode(obj) == before
    assert "container" not in before["spec"]["template"]["spec"]


def test_undefaulted_strategy_is_not_supported(scheme: Scheme) -> None:
    # Updates skip the mutating webhook: an empty strategy type is rejected as Go rejects "".
    obj = scheme.decode(fleet())
    assert [str(e) for e in scheme.validate(obj, FeatureGates())] == [
        'spec.strategy.type: Unsupported value: "": supported values: "Recreate", "RollingUpdate"'
    ]


@pytest.mark.parametrize(
    ("raw", "ok"),
    [
        (1, True),
        (0, False),
        (-1, False),
        ("1%", True),
        ("99%", True),
        ("0%", False),
        ("100%", False),
        ("25", True),
        ("x", False),
    ],
)
def test_validate_rolling_update_bounds(raw: int | str, ok: bool) -> None:
    assert (validate_rolling_update(raw, Path("p")) == []) is ok


def test_replica_bounds() -> None:
    f = Fleet(spec=FleetSpec(replicas=5))
    assert f.upper_bound_replicas(7) == 5
    assert f.upper_bound_replicas(3) == 3
    assert Fleet.lower_bound_replicas(-2) == 0


@pytest.mark.parametrize("build", [fleet, game_server_set], ids=["fleet", "gameserverset"])
def test_status_is_not_the_main_resource_schema(
    scheme: Scheme, build: Callable[..., dict[str, Any]]
) -> None:
    # The apiserver drops a status-subresource kind's status on create before the schema runs,
    # so a status the schema would reject (replicas < 0) does not fail the create.
    manifest = build()
    manifest["status"] = {"replicas": -1, "counters": {"c": {"count": -1}}}
    assert scheme.admit(manifest, FeatureGates()).errors == []
