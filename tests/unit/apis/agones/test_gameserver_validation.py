"""Table tests: every GameServer validation rule (CRD schema and webhook), path + reason + text.

Each case goes through `Scheme.admit` (decode, defaults, validate), as a create would. Expected
errors are `(field, reason, body)`; a body of None is not checked.
"""

from __future__ import annotations

from typing import Any

import pytest

from agones.apis.scheme import Scheme
from agones.featuregates import FeatureGates

from .manifests import container, game_server

Err = tuple[str, str, str | None]
ALL_ON = FeatureGates.all_enabled()
TWO = {"spec": {"containers": [container("a"), container("b")]}}
SIDECAR = {
    "spec": {
        "containers": [container("game")],
        "initContainers": [container("side", restartPolicy="Always"), container("init")],
    }
}
DYNAMIC_HOST = [{"portPolicy": "Dynamic", "containerPort": 7654, "hostPort": 7000}]
REQUIRED_CP = "Required value: ContainerPort must be defined for Dynamic and Static PortPolicies"


def _resources(requests: dict[str, Any], limits: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"containers": [container(resources={"requests": requests, "limits": limits})]}}


CASES: list[tuple[str, dict[str, Any], dict[str, Any], FeatureGates, list[Err]]] = [
    # ---- CRD schema: enums and types (reported before decoding) ----
    (
        "protocol-enum",
        {"ports": [{"containerPort": 1, "protocol": "SCTP"}]},
        {},
        FeatureGates(),
        [
            (
                "spec.ports[0].protocol",
                "FieldValueNotSupported",
                'Unsupported value: "SCTP": supported values: "UDP", "TCP", "TCPUDP"',
            )
        ],
    ),
    (
        "port-policy-enum",
        {"ports": [{"containerPort": 1, "portPolicy": "Random"}]},
        {},
        FeatureGates(),
        [
            (
                "spec.ports[0].portPolicy",
                "FieldValueNotSupported",
                'Unsupported value: "Random": supported values: "Dynamic", "Static", "Passthrough", "None"',
            )
        ],
    ),
    (
        "scheduling-enum",
        {"scheduling": "Spread"},
        {},
        FeatureGates(),
        [("spec.scheduling", "FieldValueNotSupported", None)],
    ),
    (
        "log-level-enum",
        {"sdkServer": {"logLevel": "Loud"}},
        {},
        FeatureGates(),
        [
            (
                "spec.sdkServer.logLevel",
                "FieldValueNotSupported",
                'Unsupported value: "Loud": supported values: "Error", "Info", "Debug", "Trace"',
            )
        ],
    ),
    (
        "eviction-enum",
        {"eviction": {"safe": "Sometimes"}},
        {},
        FeatureGates(),
        [
            ("spec.eviction.safe", "FieldValueNotSupported", None),
            ("status.eviction.safe", "FieldValueNotSupported", None),
        ],
    ),
    (
        "container-port-type",
        {"ports": [{"containerPort": "7654"}]},
        {},
        FeatureGates(),
        [
            (
                "spec.ports[0].containerPort",
                "FieldValueTypeInvalid",
                'Invalid value: "string": spec.ports[0].containerPort in body must be of type integer: "string"',
            )
        ],
    ),
    # ---- CRD schema: ranges, sizes, patterns (after defaults) ----
    (
        "container-port-max",
        {"ports": [{"containerPort": 70000}]},
        {},
        FeatureGates(),
        [
            (
                "spec.ports[0].containerPort",
                "FieldValueInvalid",
                "Invalid value: 70000: spec.ports[0].containerPort in body should be less than or equal to 65535",
            )
        ],
    ),
    (
        "host-port-max",
        {"ports": [{"portPolicy": "Static", "containerPort": 1, "hostPort": 65536}]},
        {},
        FeatureGates(),
        [("spec.ports[0].hostPort", "FieldValueInvalid", None)],
    ),
    (
        "sdk-port-range",
        {"sdkServer": {"grpcPort": 70000}},
        {},
        FeatureGates(),
        [("spec.sdkServer.grpcPort", "FieldValueInvalid", None)],
    ),
    (
        "counter-count-negative",
        {"counters": {"c": {"count": -1}}},
        {},
        FeatureGates(),
        [
            (
                "spec.counters.c.count",
                "FieldValueInvalid",
                "Invalid value: -1: spec.counters.c.count in body should be greater than or equal to 0",
            ),
            # The mutating webhook copies the counters into the status, which the schema
            # checks as well: Agones reports the status twin beside the spec error.
            (
                "status.counters.c.count",
                "FieldValueInvalid",
                "Invalid value: -1: status.counters.c.count in body should be greater than or equal to 0",
            ),
        ],
    ),
    (
        "list-capacity-max",
        {"lists": {"l": {"capacity": 1001}}},
        {},
        FeatureGates(),
        [
            ("spec.lists.l.capacity", "FieldValueInvalid", None),
            ("status.lists.l.capacity", "FieldValueInvalid", None),
        ],
    ),
    (
        "list-values-duplicate",
        {"lists": {"l": {"values": ["a", "b", "a"]}}},
        {},
        FeatureGates(),
        [
            ("spec.lists[l].values[2]", "FieldValueDuplicate", 'Duplicate value: "a"'),
            ("status.lists[l].values[2]", "FieldValueDuplicate", 'Duplicate value: "a"'),
        ],
    ),
    (
        "counters-too-many",
        {"counters": {f"c{i}": {} for i in range(1001)}},
        {},
        FeatureGates(),
        [
            ("spec.counters", "FieldValueTooMany", "Too many: 1001: must have at most 1000 items"),
            (
                "status.counters",
                "FieldValueTooMany",
                "Too many: 1001: must have at most 1000 items",
            ),
        ],
    ),
    (
        "container-pattern",
        {"container": "Bad_Name", "template": TWO},
        {},
        FeatureGates(),
        [("spec.container", "FieldValueInvalid", None)],
    ),
    (
        "players-capacity-negative",
        {"players": {"initialCapacity": -1}},
        {},
        ALL_ON,
        [("spec.players.initialCapacity", "FieldValueInvalid", None)],
    ),
    (
        "template-missing",
        {"template": None},
        {},
        FeatureGates(),
        [
            (
                "spec.template.spec.containers",
                "FieldValueTypeInvalid",
                'Invalid value: "null": spec.template.spec.containers in body must be of type array: "null"',
            )
        ],
    ),
    (
        "containers-not-array",
        {"template": {"spec": {"containers": {"name": "x"}}}},
        {},
        FeatureGates(),
        [("spec.template.spec.containers", "FieldValueTypeInvalid", None)],
    ),
    (
        "container-name-required",
        {"template": {"spec": {"containers": [{"image": "x"}]}}},
        {},
        FeatureGates(),
        [("spec.template.spec.containers[0].name", "FieldValueRequired", None)],
    ),
    (
        "quantity-pattern",
        {"template": _resources({"cpu": "lots"}, {})},
        {},
        FeatureGates(),
        [("spec.template.spec.containers[0].resources.requests.cpu", "FieldValueInvalid", None)],
    ),
    (
        "template-label-type",
        {"template": {"metadata": {"labels": {"a": 1}}, "spec": {"containers": [container()]}}},
        {},
        FeatureGates(),
        [("spec.template.metadata.labels.a", "FieldValueTypeInvalid", None)],
    ),
    (
        "metadata-name-dns",
        {},
        {"name": "Bad_Name"},
        FeatureGates(),
        [("metadata.name", "FieldValueInvalid", None)],
    ),
    (
        "metadata-name-required",
        {},
        {"name": ""},
        FeatureGates(),
        [
            (
                "metadata.name",
                "FieldValueRequired",
                "Required value: name or generateName is required",
            )
        ],
    ),
    (
        "metadata-label-invalid",
        {},
        {"labels": {"bad key": "v"}},
        FeatureGates(),
        [("metadata.labels", "FieldValueInvalid", None)],
    ),
    # ---- webhook ----
    (
        "name-too-long",
        {},
        {"name": "a" * 64},
        FeatureGates(),
        [("metadata.name", "FieldValueTooLong", "Too long: may not be more than 63 bytes")],
    ),
    (
        "dynamic-host-port",
        {"ports": DYNAMIC_HOST},
        {},
        FeatureGates(),
        [
            (
                "spec.ports[0].hostPort",
                "FieldValueForbidden",
                "Forbidden: HostPort cannot be specified with a Dynamic or Passthrough PortPolicy",
            )
        ],
    ),
    (
        "passthrough-host-port",
        {"ports": [{"portPolicy": "Passthrough", "hostPort": 7000}]},
        {},
        FeatureGates(),
        [("spec.ports[0].hostPort", "FieldValueForbidden", None)],
    ),
    (
        "dynamic-container-port-required",
        {"ports": [{"name": "p"}]},
        {},
        FeatureGates(),
        [("spec.ports[0].containerPort", "FieldValueRequired", REQUIRED_CP)],
    ),
    (
        "dynamic-container-port-zero",
        {"ports": [{"containerPort": 0}]},
        {},
        FeatureGates(),
        [("spec.ports[0].containerPort", "FieldValueRequired", REQUIRED_CP)],
    ),
    (
        "static-container-port-required",
        {"ports": [{"portPolicy": "Static", "hostPort": 7000}]},
        {},
        FeatureGates(),
        [("spec.ports[0].containerPort", "FieldValueRequired", REQUIRED_CP)],
    ),
    (
        "passthrough-container-port",
        {"ports": [{"portPolicy": "Passthrough", "containerPort": 7654}]},
        {},
        FeatureGates(),
        [
            (
                "spec.ports[0].containerPort",
                "FieldValueRequired",
                "Required value: ContainerPort cannot be specified with Passthrough PortPolicy",
            )
        ],
    ),
    (
        "container-required-with-two",
        {"template": TWO},
        {},
        FeatureGates(),
        [
            (
                "spec.container",
                "FieldValueRequired",
                "Required value: Container is required when using multiple containers in the pod template",
            ),
            (
                "spec.container",
                "FieldValueInvalid",
                'Invalid value: "": Could not find a container named ',
            ),
        ],
    ),
    (
        "container-unknown-with-two",
        {"container": "c", "template": TWO},
        {},
        FeatureGates(),
        [
            (
                "spec.container",
                "FieldValueInvalid",
                'Invalid value: "c": Could not find a container named c',
            ),
            # the port's container defaults to spec.container, so Agones reports it too
            ("spec.ports[0].container", "FieldValueInvalid", None),
        ],
    ),
    (
        "port-container-unknown",
        {"ports": [{"containerPort": 1, "container": "no-such-container"}]},
        {},
        FeatureGates(),
        [
            (
                "spec.ports[0].container",
                "FieldValueInvalid",
                'Invalid value: "no-such-container": Container must be empty or the name of a container in the pod template',
            )
        ],
    ),
    (
        "port-container-plain-init",
        {"ports": [{"containerPort": 1, "container": "init"}], "template": SIDECAR},
        {},
        FeatureGates(),
        [("spec.ports[0].container", "FieldValueInvalid", None)],
    ),
    (
        "request-above-limit",
        {"template": _resources({"cpu": "2"}, {"cpu": "1"})},
        {},
        FeatureGates(),
        [
            (
                "spec.template.spec.containers[0].resources.requests",
                "FieldValueInvalid",
                'Invalid value: "2": must be less than or equal to cpu limit of 1',
            )
        ],
    ),
    (
        "request-above-limit-canonical",
        {"template": _resources({"memory": "1.5Gi"}, {"memory": "1024Mi"})},
        {},
        FeatureGates(),
        [
            (
                "spec.template.spec.containers[0].resources.requests",
                "FieldValueInvalid",
                'Invalid value: "1536Mi": must be less than or equal to memory limit of 1Gi',
            )
        ],
    ),
    (
        "limit-negative",
        {"template": _resources({}, {"cpu": "-1"})},
        {},
        FeatureGates(),
        [
            (
                "spec.template.spec.containers[0].resources.limits[cpu]",
                "FieldValueInvalid",
                'Invalid value: "-1": must be greater than or equal to 0',
            )
        ],
    ),
    (
        "request-negative",
        {"template": _resources({"cpu": "-500m"}, {})},
        {},
        FeatureGates(),
        [
            (
                "spec.template.spec.containers[0].resources.requests[cpu]",
                "FieldValueInvalid",
                'Invalid value: "-500m": must be greater than or equal to 0',
            )
        ],
    ),
    (
        "init-container-resources",
        {
            "template": {
                "spec": {
                    "containers": [container()],
                    "initContainers": [
                        container("i", resources={"requests": {"cpu": "2"}, "limits": {"cpu": "1"}})
                    ],
                }
            }
        },
        {},
        FeatureGates(),
        [("spec.template.spec.initContainers[0].resources.requests", "FieldValueInvalid", None)],
    ),
    (
        "players-gate-off",
        {"players": {"initialCapacity": 10}},
        {},
        FeatureGates(),
        [
            (
                "spec.players",
                "FieldValueForbidden",
                "Forbidden: Value cannot be set unless feature flag PlayerTracking is enabled",
            )
        ],
    ),
    (
        "counters-gate-off",
        {"counters": {"c": {}}},
        {},
        FeatureGates().with_values(CountsAndLists=False),
        [
            (
                "spec.counters",
                "FieldValueForbidden",
                "Forbidden: Value cannot be set unless feature flag CountsAndLists is enabled",
            )
        ],
    ),
    (
        "lists-gate-off",
        {"lists": {"l": {}}},
        {},
        FeatureGates().with_values(CountsAndLists=False),
        [("spec.lists", "FieldValueForbidden", None)],
    ),
    (
        "port-policy-none-gate-off",
        {"ports": [{"portPolicy": "None", "containerPort": 1}]},
        {},
        FeatureGates().with_values(PortPolicyNone=False),
        [
            (
                "spec.ports[0].portPolicy",
                "FieldValueForbidden",
                "Forbidden: Value cannot be set to None unless feature flag PortPolicyNone is enabled",
            )
        ],
    ),
    (
        "template-labels",
        {
            "template": {
                "metadata": {"labels": {"bad key": "v"}},
                "spec": {"containers": [container()]},
            }
        },
        {},
        FeatureGates(),
        [("spec.template.metadata.labels", "FieldValueInvalid", None)],
    ),
    (
        "template-annotations",
        {
            "template": {
                "metadata": {"annotations": {"a/b/c": "v"}},
                "spec": {"containers": [container()]},
            }
        },
        {},
        FeatureGates(),
        [("spec.template.metadata.annotations", "FieldValueInvalid", None)],
    ),
    (
        "dev-address-not-ip",
        {"ports": [{"portPolicy": "Static", "containerPort": 1, "hostPort": 2}]},
        {"annotations": {"agones.dev/dev-address": "not-an-ip"}},
        FeatureGates(),
        [
            (
                "metadata.annotations.agones.dev/dev-address",
                "FieldValueInvalid",
                'Invalid value: "not-an-ip": must be a valid IP address',
            )
        ],
    ),
    (
        "dev-address-needs-static-and-host-port",
        {},
        {"annotations": {"agones.dev/dev-address": "10.0.0.1"}},
        FeatureGates(),
        [
            (
                "spec.ports[0].hostPort",
                "FieldValueRequired",
                "Required value: agones.dev/dev-address",
            ),
            (
                "spec.ports[0].portPolicy",
                "FieldValueRequired",
                "Required value: PortPolicy must be Static",
            ),
        ],
    ),
]

VALID: list[tuple[str, dict[str, Any], dict[str, Any], FeatureGates]] = [
    ("minimal", {}, {}, FeatureGates()),
    ("unknown-container-overwritten-with-one", {"container": "example-server"}, {}, FeatureGates()),
    (
        "health-zero-and-negative-replaced",
        {"health": {"failureThreshold": 0, "periodSeconds": -5}},
        {},
        FeatureGates(),
    ),
    (
        "count-above-capacity-not-checked",
        {"counters": {"c": {"count": 5, "capacity": 1}}},
        {},
        FeatureGates(),
    ),
    (
        "list-over-capacity-not-checked",
        {"lists": {"l": {"capacity": 1, "values": ["a", "b"]}}},
        {},
        FeatureGates(),
    ),
    (
        "duplicate-port-names-not-checked",
        {"ports": [{"name": "p", "containerPort": 1}, {"name": "p", "containerPort": 2}]},
        {},
        FeatureGates(),
    ),
    (
        "unknown-range-not-checked",
        {"ports": [{"range": "no-such-range", "containerPort": 1}]},
        {},
        FeatureGates(),
    ),
    (
        # PortRanges off only stops the controller from loading extra ranges; nothing is rejected.
        "range-with-port-ranges-off",
        {"ports": [{"range": "game", "containerPort": 1}]},
        {},
        FeatureGates().with_values(PortRanges=False),
    ),
    ("players-gate-on", {"players": {"initialCapacity": 10}}, {}, ALL_ON),
    (
        "port-policy-none",
        {"ports": [{"portPolicy": "None", "containerPort": 7654}]},
        {},
        FeatureGates(),
    ),
    ("tcpudp", {"ports": [{"protocol": "TCPUDP", "containerPort": 7654}]}, {}, FeatureGates()),
    (
        "port-on-sidecar-init-container",
        {"ports": [{"containerPort": 1, "container": "side"}], "template": SIDECAR},
        {},
        FeatureGates(),
    ),
    (
        "request-equal-limit",
        {"template": _resources({"cpu": "1000m"}, {"cpu": "1"})},
        {},
        FeatureGates(),
    ),
    (
        "dev-address-ok",
        {"ports": [{"portPolicy": "Static", "containerPort": 1, "hostPort": 2}]},
        {"annotations": {"agones.dev/dev-address": "192.1.1.2"}},
        FeatureGates(),
    ),
    (
        "dev-address-ipv6",
        {"ports": []},
        {"annotations": {"agones.dev/dev-address": "fd00::1"}},
        FeatureGates(),
    ),
    (
        "generate-name-only",
        {},
        {"name": None, "generateName": "simple-game-server-"},
        FeatureGates(),
    ),
    ("name-63", {}, {"name": "a" * 63}, FeatureGates()),
]


def _manifest(spec: dict[str, Any], metadata: dict[str, Any]) -> dict[str, Any]:
    manifest = game_server(spec, **metadata)
    if spec.get("template", "") is None:
        del manifest["spec"]["template"]
    manifest["metadata"] = {k: v for k, v in manifest["metadata"].items() if v is not None}
    return manifest


@pytest.mark.parametrize(
    ("spec", "metadata", "gates", "want"),
    [pytest.param(s, m, g, w, id=i) for i, s, m, g, w in CASES],
)
def test_game_server_rejected(
    scheme: Scheme,
    spec: dict[str, Any],
    metadata: dict[str, Any],
    gates: FeatureGates,
    want: list[Err],
) -> None:
    errors = scheme.admit(_manifest(spec, metadata), gates).errors
    assert sorted((e.field, e.reason) for e in errors) == sorted((f, r) for f, r, _ in want)
    for field, reason, body in want:
        if body is not None:
            assert body in [e.body() for e in errors if (e.field, e.reason) == (field, reason)]


@pytest.mark.parametrize(
    ("spec", "metadata", "gates"), [pytest.param(s, m, g, id=i) for i, s, m, g in VALID]
)
def test_game_server_accepted(
    scheme: Scheme, spec: dict[str, Any], metadata: dict[str, Any], gates: FeatureGates
) -> None:
    assert scheme.admit(_manifest(spec, metadata), gates).errors == []


def test_all_errors_at_once(scheme: Scheme) -> None:
    manifest = game_server(
        {
            "ports": [
                {"portPolicy": "Dynamic", "containerPort": 1, "hostPort": 2},
                {"portPolicy": "Passthrough", "containerPort": 3},
                {"portPolicy": "Static"},
            ],
            "players": {"initialCapacity": 1},
        },
        name="x" * 70,
    )
    fields = [e.field for e in scheme.admit(manifest, FeatureGates()).errors]
    assert fields == [
        "metadata.name",
        "spec.players",
        "spec.ports[0].hostPort",
        "spec.ports[1].containerPort",
        "spec.ports[2].containerPort",
    ]


def test_aggregate_message_matches_apiserver(scheme: Scheme) -> None:
    from agones.apis.field import aggregate_message

    errors = scheme.admit(
        _manifest({"template": TWO}, {"name": "rust-simple-pnttq"}), FeatureGates()
    ).errors
    assert aggregate_message("GameServer", "agones.dev", "rust-simple-pnttq", errors) == (
        'GameServer.agones.dev "rust-simple-pnttq" is invalid: [spec.container: Required value: '
        "Container is required when using multiple containers in the pod template, spec.container: "
        'Invalid value: "": Could not find a container named ]'
    )
