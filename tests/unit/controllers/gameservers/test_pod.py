"""Pod construction: sidecar placement, env, labels/annotations, token mount, probe, affinity."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from agones.apis.agones.v1.gameserver import GameServer
from agones.apis.agones.v1.gameserver_validation import apply_defaults
from agones.controllers.gameservers.pod import (
    PodError,
    SidecarConfig,
    game_server_pod,
    sidecar,
)
from agones.featuregates import FeatureGates
from agones.version import VERSION

GATES = FeatureGates()
OFF = FeatureGates().with_values(SidecarContainers=False)
CONFIG = SidecarConfig(image="sdk:test")


def make(
    template_spec: dict[str, Any] | None = None,
    template_meta: dict[str, Any] | None = None,
    **spec: Any,
) -> GameServer:
    raw = {
        "apiVersion": "agones.dev/v1",
        "kind": "GameServer",
        "metadata": {"name": "my.gs", "namespace": "ns", "uid": "uid-1"},
        "spec": {
            "ports": [{"name": "default", "containerPort": 7654, "hostPort": 7001}],
            "template": {
                "metadata": template_meta or {},
                "spec": template_spec
                or {"containers": [{"name": "game", "image": "img", "env": []}]},
            },
            **spec,
        },
    }
    gs = msgspec.convert(raw, GameServer)
    apply_defaults(gs, GATES)
    return gs


def game(pod: dict[str, Any], name: str = "game") -> dict[str, Any]:
    return next(c for c in pod["spec"]["containers"] if c["name"] == name)


def test_metadata() -> None:
    pod = game_server_pod(make(template_meta={"labels": {"a": "b"}}), CONFIG, GATES)
    meta = pod["metadata"]
    assert meta["name"] == "my.gs" and meta["namespace"] == "ns"
    assert meta["labels"] == {
        "a": "b",
        "agones.dev/role": "gameserver",
        "agones.dev/gameserver": "my.gs",
        "agones.dev/safe-to-evict": "false",
    }
    assert meta["annotations"] == {
        "agones.dev/container": "game",
        "agones.dev/sdk-version": VERSION,
        "cluster-autoscaler.kubernetes.io/safe-to-evict": "false",
    }
    assert meta["ownerReferences"] == [
        {
            "apiVersion": "agones.dev/v1",
            "kind": "GameServer",
            "name": "my.gs",
            "uid": "uid-1",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert pod["spec"]["hostname"] == "my-gs"


@pytest.mark.parametrize(
    ("safe", "template_annotation", "want_annotation", "want_label"),
    [
        pytest.param("Always", None, "true", "true", id="always"),
        pytest.param("OnUpgrade", None, "false", "true", id="on-upgrade"),
        pytest.param("Never", None, "false", "false", id="never"),
        pytest.param("Never", "true", "true", "true", id="template-annotation-wins"),
    ],
)
def test_eviction(
    safe: str, template_annotation: str | None, want_annotation: str, want_label: str
) -> None:
    meta = (
        {"annotations": {"cluster-autoscaler.kubernetes.io/safe-to-evict": template_annotation}}
        if template_annotation
        else None
    )
    pod = game_server_pod(make(template_meta=meta, eviction={"safe": safe}), CONFIG, GATES)
    assert pod["metadata"]["annotations"]["cluster-autoscaler.kubernetes.io/safe-to-evict"] == (
        want_annotation
    )
    assert pod["metadata"]["labels"]["agones.dev/safe-to-evict"] == want_label


@pytest.mark.parametrize(
    ("gates", "where", "restart_policy"),
    [
        pytest.param(GATES, "initContainers", "Never", id="native-sidecar"),
        pytest.param(OFF, "containers", None, id="plain-sidecar"),
    ],
)
def test_sidecar_placement(gates: FeatureGates, where: str, restart_policy: str | None) -> None:
    spec = {
        "containers": [{"name": "game", "image": "img"}],
        "initContainers": [{"name": "setup", "image": "busybox"}],
    }
    pod = game_server_pod(make(spec), CONFIG, gates)
    assert pod["spec"][where][0]["name"] == "agones-gameserver-sidecar"
    assert pod["spec"].get("restartPolicy") == restart_policy
    car = pod["spec"][where][0]
    assert car.get("restartPolicy") == ("Always" if where == "initContainers" else None)
    assert [c["name"] for c in pod["spec"]["initContainers"]][-1] == "setup"


def test_user_restart_policy_kept() -> None:
    spec = {"containers": [{"name": "game", "image": "img"}], "restartPolicy": "OnFailure"}
    assert game_server_pod(make(spec), CONFIG, GATES)["spec"]["restartPolicy"] == "OnFailure"


def test_sidecar_container() -> None:
    gs = make(sdkServer={"logLevel": "Debug", "grpcPort": 9001, "httpPort": 9002})
    car = sidecar(
        gs,
        SidecarConfig(image="sdk:1", cpu_request="30m", memory_limit="100Mi", always_pull=True),
        GATES,
    )
    env = {e["name"]: e.get("value", e.get("valueFrom")) for e in car["env"]}
    assert env == {
        "GAMESERVER_NAME": "my.gs",
        "POD_NAMESPACE": {"fieldRef": {"fieldPath": "metadata.namespace"}},
        "FEATURE_GATES": GATES.encode(),
        "LOG_LEVEL": "Debug",
        "REQUESTS_RATE_LIMIT": "500ms",
    }
    assert car["args"] == ["--grpc-port=9001", "--http-port=9002"]
    assert car["image"] == "sdk:1"
    assert car["imagePullPolicy"] == "Always"
    assert car["resources"] == {"requests": {"cpu": "30m"}, "limits": {"memory": "100Mi"}}
    assert car["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": 8080}
    assert car["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "runAsNonRoot": True,
        "runAsUser": 1000,
    }


def test_sdk_env_replaces_user_values_in_every_other_container() -> None:
    spec = {
        "containers": [
            {
                "name": "game",
                "image": "img",
                "env": [
                    {"name": "AGONES_SDK_GRPC_PORT", "value": "1"},
                    {"name": "KEEP", "value": "x"},
                ],
            },
            {"name": "helper", "image": "img"},
        ]
    }
    pod = game_server_pod(make(spec, container="game"), CONFIG, GATES)
    assert game(pod)["env"] == [
        {"name": "KEEP", "value": "x"},
        {"name": "AGONES_SDK_GRPC_PORT", "value": "9357"},
        {"name": "AGONES_SDK_HTTP_PORT", "value": "9358"},
    ]
    assert [e["name"] for e in game(pod, "helper")["env"]] == [
        "AGONES_SDK_GRPC_PORT",
        "AGONES_SDK_HTTP_PORT",
    ]
    car = pod["spec"]["initContainers"][0]
    assert "AGONES_SDK_GRPC_PORT" not in {e["name"] for e in car["env"]}


def test_service_account_token_is_hidden_from_the_game() -> None:
    pod = game_server_pod(make(), CONFIG, GATES)
    assert pod["spec"]["serviceAccountName"] == "agones-sdk"
    assert pod["spec"]["volumes"] == [{"name": "empty", "emptyDir": {}}]
    assert game(pod)["volumeMounts"] == [
        {
            "name": "empty",
            "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
            "readOnly": True,
        }
    ]


def test_user_service_account_is_left_alone() -> None:
    spec = {"containers": [{"name": "game", "image": "img"}], "serviceAccountName": "mine"}
    pod = game_server_pod(make(spec), CONFIG, GATES)
    assert pod["spec"]["serviceAccountName"] == "mine"
    assert "volumes" not in pod["spec"]
    assert "volumeMounts" not in game(pod)


@pytest.mark.parametrize(
    ("health", "user_probe", "want"),
    [
        pytest.param(
            {"periodSeconds": 7, "failureThreshold": 2, "initialDelaySeconds": 4},
            None,
            {
                "httpGet": {"path": "/gshealthz", "port": 8080},
                "initialDelaySeconds": 4,
                "periodSeconds": 7,
                "failureThreshold": 2,
            },
            id="defaulted-probe",
        ),
        pytest.param({"disabled": True}, None, None, id="health-disabled"),
        pytest.param(
            {}, {"exec": {"command": ["true"]}}, {"exec": {"command": ["true"]}}, id="user"
        ),
    ],
)
def test_liveness_probe(
    health: dict[str, Any], user_probe: dict[str, Any] | None, want: dict[str, Any] | None
) -> None:
    container: dict[str, Any] = {"name": "game", "image": "img"}
    if user_probe:
        container["livenessProbe"] = user_probe
    pod = game_server_pod(make({"containers": [container]}, health=health), CONFIG, GATES)
    assert game(pod).get("livenessProbe") == want


@pytest.mark.parametrize(
    ("scheduling", "want"),
    [
        pytest.param(
            "Packed",
            {
                "podAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 100,
                            "podAffinityTerm": {
                                "topologyKey": "kubernetes.io/hostname",
                                "labelSelector": {"matchLabels": {"agones.dev/role": "gameserver"}},
                            },
                        }
                    ]
                }
            },
            id="packed",
        ),
        pytest.param("Distributed", None, id="distributed"),
    ],
)
def test_scheduling(scheduling: str, want: dict[str, Any] | None) -> None:
    pod = game_server_pod(make(scheduling=scheduling), CONFIG, GATES)
    assert pod["spec"].get("affinity") == want


def test_ports_on_a_native_sidecar_init_container_and_passthrough_assignment() -> None:
    spec = {
        "containers": [{"name": "game", "image": "img"}],
        "initContainers": [{"name": "proxy", "image": "p", "restartPolicy": "Always"}],
    }
    gs = make(
        spec,
        ports=[
            {"name": "a", "containerPort": 1, "hostPort": 7001},
            {"name": "p", "portPolicy": "Passthrough", "hostPort": 7002, "containerPort": 7002},
            {"name": "x", "containerPort": 5, "hostPort": 7003, "container": "proxy"},
        ],
    )
    pod = game_server_pod(gs, CONFIG, GATES)
    assert game(pod)["ports"] == [
        {"containerPort": 1, "hostPort": 7001, "protocol": "UDP"},
        {"containerPort": 7002, "hostPort": 7002, "protocol": "UDP"},
    ]
    proxy = next(c for c in pod["spec"]["initContainers"] if c["name"] == "proxy")
    assert proxy["ports"] == [{"containerPort": 5, "hostPort": 7003, "protocol": "UDP"}]
    assert pod["metadata"]["annotations"]["agones.dev/container-passthrough-port-assignment"] == (
        '{"game":[1]}'
    )


def test_missing_container_is_a_pod_error() -> None:
    gs = make(ports=[{"name": "a", "containerPort": 1, "container": "nope"}])
    with pytest.raises(PodError, match="failed to find container named nope"):
        game_server_pod(gs, CONFIG, GATES)


def test_template_is_not_mutated() -> None:
    gs = make()
    before = msgspec.json.encode(gs)
    game_server_pod(gs, CONFIG, GATES)
    assert msgspec.json.encode(gs) == before


def test_port_without_container_goes_to_the_game_container() -> None:
    gs = make()
    gs.ports()[0].container = msgspec.UNSET  # as if the mutating webhook never ran
    assert game(game_server_pod(gs, CONFIG, GATES))["ports"][0]["hostPort"] == 7001
