"""Table tests: every GameServer default (mutating webhook, CRD schema, Go re-encoding)."""

from __future__ import annotations

from typing import Any

import pytest

from agones.apis.scheme import Scheme
from agones.featuregates import FeatureGates
from agones.version import VERSION

from .manifests import MISSING, container, game_server, lookup

TWO = {"template": {"spec": {"containers": [container("a"), container("b")]}}}
ALL_ON = FeatureGates.all_enabled()
OFF = FeatureGates().with_values(CountsAndLists=False, PlayerTracking=False)


def _defaulted(scheme: Scheme, manifest: dict[str, Any], gates: FeatureGates) -> dict[str, Any]:
    obj = scheme.decode(manifest)
    scheme.apply_defaults(obj, gates)
    return scheme.encode(obj)


CASES = [
    # metadata
    ("finalizer", {}, {}, "metadata.finalizers", ["agones.dev/controller"]),
    # container
    ("container-from-only-container", {}, {}, "spec.container", "game"),
    ("container-overwritten", {"container": "other"}, {}, "spec.container", "game"),
    ("container-not-set-with-two", TWO, {}, "spec.container", MISSING),
    # ports
    ("port-policy-dynamic", {}, {}, "spec.ports.0.portPolicy", "Dynamic"),
    (
        "port-policy-kept",
        {"ports": [{"portPolicy": "Static", "containerPort": 1, "hostPort": 2}]},
        {},
        "spec.ports.0.portPolicy",
        "Static",
    ),
    ("port-range-default", {}, {}, "spec.ports.0.range", "default"),
    (
        "port-range-kept",
        {"ports": [{"range": "game", "containerPort": 1}]},
        {},
        "spec.ports.0.range",
        "game",
    ),
    ("port-protocol-udp", {}, {}, "spec.ports.0.protocol", "UDP"),
    (
        "port-protocol-kept",
        {"ports": [{"protocol": "TCPUDP", "containerPort": 1}]},
        {},
        "spec.ports.0.protocol",
        "TCPUDP",
    ),
    ("port-container-from-spec", {}, {}, "spec.ports.0.container", "game"),
    (
        "port-container-empty-becomes-spec",
        {"ports": [{"container": "", "containerPort": 1}]},
        {},
        "spec.ports.0.container",
        "game",
    ),
    (
        "port-container-kept",
        {"ports": [{"container": "side", "containerPort": 1}]},
        {},
        "spec.ports.0.container",
        "side",
    ),
    (
        "port-container-empty-with-two",
        {**TWO, "ports": [{"containerPort": 1}]},
        {},
        "spec.ports.0.container",
        "",
    ),
    ("no-ports-stay-absent", {"ports": []}, {}, "spec.ports", MISSING),
    # health
    ("health-period", {}, {}, "spec.health.periodSeconds", 5),
    ("health-threshold", {}, {}, "spec.health.failureThreshold", 3),
    ("health-delay", {}, {}, "spec.health.initialDelaySeconds", 5),
    (
        "health-zero-threshold-replaced",
        {"health": {"failureThreshold": 0}},
        {},
        "spec.health.failureThreshold",
        3,
    ),
    (
        "health-negative-threshold-replaced",
        {"health": {"failureThreshold": -1}},
        {},
        "spec.health.failureThreshold",
        3,
    ),
    (
        "health-negative-period-replaced",
        {"health": {"periodSeconds": -5}},
        {},
        "spec.health.periodSeconds",
        5,
    ),
    (
        "health-zero-delay-replaced",
        {"health": {"initialDelaySeconds": 0}},
        {},
        "spec.health.initialDelaySeconds",
        5,
    ),
    ("health-kept", {"health": {"periodSeconds": 60}}, {}, "spec.health.periodSeconds", 60),
    (
        "health-disabled-false-dropped",
        {"health": {"disabled": False}},
        {},
        "spec.health.disabled",
        MISSING,
    ),
    (
        "health-disabled-not-defaulted",
        {"health": {"disabled": True}},
        {},
        "spec.health",
        {"disabled": True},
    ),
    # eviction, scheduling, sdkServer
    ("eviction-never", {}, {}, "spec.eviction.safe", "Never"),
    ("eviction-kept", {"eviction": {"safe": "Always"}}, {}, "spec.eviction.safe", "Always"),
    ("scheduling-packed", {}, {}, "spec.scheduling", "Packed"),
    ("scheduling-kept", {"scheduling": "Distributed"}, {}, "spec.scheduling", "Distributed"),
    ("sdk-log-level", {}, {}, "spec.sdkServer.logLevel", "Info"),
    ("sdk-grpc-port", {}, {}, "spec.sdkServer.grpcPort", 9357),
    ("sdk-http-port", {}, {}, "spec.sdkServer.httpPort", 9358),
    (
        "sdk-kept",
        {"sdkServer": {"logLevel": "Debug", "grpcPort": 1, "httpPort": 2}},
        {},
        "spec.sdkServer",
        {"logLevel": "Debug", "grpcPort": 1, "httpPort": 2},
    ),
    # CRD schema defaults
    ("immutable-replicas-spec", {}, {}, "spec.immutableReplicas", 1),
    ("immutable-replicas-forced", {"immutableReplicas": 2}, {}, "spec.immutableReplicas", 1),
    ("immutable-replicas-status", {}, {}, "status.immutableReplicas", 1),
    (
        "counter-defaults",
        {"counters": {"c": {}}},
        {},
        "spec.counters.c",
        {"count": 0, "capacity": 1000},
    ),
    ("list-defaults", {"lists": {"l": {}}}, {}, "spec.lists.l", {"capacity": 1000, "values": []}),
    (
        "list-null-capacity-defaulted",
        {"lists": {"l": {"capacity": None}}},
        {},
        "spec.lists.l.capacity",
        1000,
    ),
    # status
    ("state-port-allocation", {}, {}, "status.state", "PortAllocation"),
    (
        "state-port-allocation-passthrough",
        {"ports": [{"portPolicy": "Passthrough"}]},
        {},
        "status.state",
        "PortAllocation",
    ),
    (
        "state-creating-static",
        {"ports": [{"portPolicy": "Static", "containerPort": 1, "hostPort": 2}]},
        {},
        "status.state",
        "Creating",
    ),
    (
        "state-creating-none",
        {"ports": [{"portPolicy": "None", "containerPort": 1}]},
        {},
        "status.state",
        "Creating",
    ),
    ("state-creating-no-ports", {"ports": []}, {}, "status.state", "Creating"),
    ("status-address", {}, {}, "status.address", ""),
    ("status-node-name", {}, {}, "status.nodeName", ""),
    ("status-ports-null", {}, {}, "status.ports", None),
    ("status-addresses-null", {}, {}, "status.addresses", None),
    ("status-reserved-until-null", {}, {}, "status.reservedUntil", None),
    ("status-players-null-gate-off", {}, {}, "status.players", None),
    (
        "status-players-gate-on",
        {"players": {"initialCapacity": 10}},
        {"gates": ALL_ON},
        "status.players",
        {"count": 0, "capacity": 10, "ids": None},
    ),
    (
        "status-players-gate-on-no-spec",
        {},
        {"gates": ALL_ON},
        "status.players",
        {"count": 0, "capacity": 0, "ids": None},
    ),
    (
        "status-eviction-copied",
        {"eviction": {"safe": "OnUpgrade"}},
        {},
        "status.eviction.safe",
        "OnUpgrade",
    ),
    (
        "status-eviction-safe-to-evict",
        {
            "template": {
                "metadata": {
                    "annotations": {"cluster-autoscaler.kubernetes.io/safe-to-evict": "true"}
                },
                "spec": {"containers": [container()]},
            }
        },
        {},
        "status.eviction.safe",
        "Always",
    ),
    (
        "status-counters-copied",
        {"counters": {"rooms": {"count": 1, "capacity": 5}}},
        {},
        "status.counters",
        {"rooms": {"count": 1, "capacity": 5}},
    ),
    (
        "status-lists-copied",
        {"lists": {"p": {"capacity": 3, "values": ["a"]}}},
        {},
        "status.lists",
        {"p": {"capacity": 3, "values": ["a"]}},
    ),
    (
        "status-counters-gate-off",
        {"counters": {"rooms": {}}},
        {"gates": OFF},
        "status.counters",
        MISSING,
    ),
    ("status-state-kept", {}, {"status": {"state": "Ready"}}, "status.state", "Ready"),
    # a missing template is written by Go as an empty PodTemplateSpec
    ("template-missing", {"template": None}, {}, "spec.template", {"spec": {"containers": None}}),
]


@pytest.mark.parametrize(
    ("spec", "extra", "path", "want"),
    [pytest.param(s, e, p, w, id=i) for i, s, e, p, w in CASES],
)
def test_game_server_default(
    scheme: Scheme, spec: dict[str, Any], extra: dict[str, Any], path: str, want: Any
) -> None:
    manifest = game_server(spec)
    if spec.get("template", "") is None:
        del manifest["spec"]["template"]
    if "status" in extra:
        manifest["status"] = extra["status"]
    got = _defaulted(scheme, manifest, extra.get("gates", FeatureGates()))
    assert lookup(got, path) == want


def test_finalizer_is_appended_to_existing(scheme: Scheme) -> None:
    got = _defaulted(scheme, game_server(finalizers=["x.io/keep"]), FeatureGates())
    assert got["metadata"]["finalizers"] == ["x.io/keep", "agones.dev/controller"]


def test_version_annotation_is_added(scheme: Scheme) -> None:
    got = _defaulted(scheme, game_server(), FeatureGates())
    assert got["metadata"]["annotations"] == {"agones.dev/sdk-version": VERSION}


def test_version_annotation_overwrites_and_keeps_others(scheme: Scheme) -> None:
    manifest = game_server(annotations={"agones.dev/sdk-version": "old", "mine": "x"})
    got = _defaulted(scheme, manifest, FeatureGates())
    assert got["metadata"]["annotations"] == {"agones.dev/sdk-version": VERSION, "mine": "x"}


def test_unknown_pod_template_fields_survive(scheme: Scheme) -> None:
    manifest = game_server(
        {"template": {"spec": {"containers": [container(futureField={"a": 1})], "newThing": [1]}}}
    )
    got = _defaulted(scheme, manifest, FeatureGates())
    assert got["spec"]["template"]["spec"]["newThing"] == [1]
    assert got["spec"]["template"]["spec"]["containers"][0]["futureField"] == {"a": 1}
