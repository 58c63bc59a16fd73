"""Admission webhooks as tables of AdmissionReview JSON: patches, denials with Agones' messages."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import pytest

from agones.apis.scheme import load
from agones.apis.structural import crds, customresource
from agones.extensions import ReviewError, review
from agones.featuregates import FeatureGates
from agones.jsonpatch import PatchError, apply_patch, diff
from agones.version import VERSION
from tests import gobodies
from tests.unit.apis.agones.conftest import strip_go_artefacts

GATES = FeatureGates()
ORACLE = Path(__file__).parents[2] / "fixtures" / "agones-oracle" / "valid"


def admission(
    obj: Any,
    operation: str = "CREATE",
    old: Any = None,
    name: str | None = None,
    kind: tuple[str, str, str] | None = None,
) -> dict[str, Any]:
    if kind is None:
        group, _, version = obj["apiVersion"].rpartition("/")
        kind = (group, version, obj["kind"])
    request: dict[str, Any] = {
        "uid": "req-1",
        "kind": {"group": kind[0], "version": kind[1], "kind": kind[2]},
        "name": name if name is not None else obj.get("metadata", {}).get("name", ""),
        "namespace": "default",
        "operation": operation,
        "object": obj,
    }
    if old is not None:
        request["oldObject"] = old
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": request}


def patch_of(answer: dict[str, Any]) -> list[dict[str, Any]]:
    response = answer["response"]
    if "patch" not in response:
        return []
    assert response["patchType"] == "JSONPatch"
    ops: list[dict[str, Any]] = json.loads(base64.b64decode(response["patch"]))
    return ops


def mutate_then_validate(obj: dict[str, Any]) -> dict[str, Any]:
    """What the apiserver does: mutating webhook, then the validating one on the result."""
    mutated = apply_patch(obj, patch_of(review("/mutate", admission(obj), GATES)))
    return review("/validate", admission(mutated), GATES)


def gs(name: str = "gs", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "agones.dev/v1",
        "kind": "GameServer",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "ports": [{"name": "default", "containerPort": 7654}],
            "template": {"spec": {"containers": [{"name": "game", "image": "img"}]}},
            **spec,
        },
    }


# -- JSON patch ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "ops"),
    [
        pytest.param({"a": 1}, {"a": 1}, [], id="equal"),
        pytest.param(
            {}, {"a": {"b/c": 1}}, [{"op": "add", "path": "/a", "value": {"b/c": 1}}], id="add"
        ),
        pytest.param(
            {"m": {"x~y": 1}},
            {"m": {"x~y": 2}},
            [{"op": "replace", "path": "/m/x~0y", "value": 2}],
            id="escape-tilde",
        ),
        pytest.param(
            {"m": {}},
            {"m": {"agones.dev/sdk-version": "v"}},
            [{"op": "add", "path": "/m/agones.dev~1sdk-version", "value": "v"}],
            id="escape-slash",
        ),
        pytest.param({"a": 1, "b": 2}, {"b": 2}, [{"op": "remove", "path": "/a"}], id="remove"),
        pytest.param(
            {"l": [1, 2]},
            {"l": [1, 3]},
            [{"op": "replace", "path": "/l/1", "value": 3}],
            id="list-elem",
        ),
        pytest.param(
            {"l": [1]},
            {"l": [1, 2]},
            [{"op": "replace", "path": "/l", "value": [1, 2]}],
            id="list-len",
        ),
        pytest.param(
            {"a": 1}, {"a": "1"}, [{"op": "replace", "path": "/a", "value": "1"}], id="type-change"
        ),
        pytest.param(
            {"a": True}, {"a": 1}, [{"op": "replace", "path": "/a", "value": 1}], id="bool-vs-int"
        ),
    ],
)
def test_diff(old: Any, new: Any, ops: list[dict[str, Any]]) -> None:
    assert diff(old, new) == ops
    assert apply_patch(old, ops) == new


def test_apply_patch_bad_path() -> None:
    with pytest.raises(PatchError):
        apply_patch({"a": {}}, [{"op": "replace", "path": "/a/b/c", "value": 1}])


# -- routing ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "operation", "kind"),
    [
        pytest.param("/validate", "UPDATE", ("agones.dev", "v1", "GameServer"), id="gs-update"),
        pytest.param(
            "/mutate", "UPDATE", ("agones.dev", "v1", "GameServer"), id="gs-mutate-update"
        ),
        pytest.param(
            "/mutate", "CREATE", ("agones.dev", "v1", "GameServerSet"), id="gss-no-mutation"
        ),
        pytest.param("/validate", "CREATE", ("apps", "v1", "Deployment"), id="foreign-kind"),
        pytest.param("/validate", "DELETE", ("agones.dev", "v1", "Fleet"), id="delete"),
    ],
)
def test_unrouted_requests_are_allowed_untouched(
    path: str, operation: str, kind: tuple[str, str, str]
) -> None:
    bad = gs(name="x" * 70)
    answer = review(path, admission(bad, operation, old=bad, kind=kind), GATES)
    assert answer["response"] == {"uid": "req-1", "allowed": True}


def test_unknown_registered_route_kind_is_allowed_with_a_warning() -> None:
    obj = {"apiVersion": "autoscaling.agones.dev/v1", "kind": "NoSuchKind", "metadata": {}}
    answer = review(
        "/validate",
        admission(obj, kind=("autoscaling.agones.dev", "v9", "FleetAutoscaler")),
        GATES,
    )
    assert answer["response"]["allowed"] is True
    assert answer["response"]["warnings"]


@pytest.mark.parametrize(
    "body",
    [None, [], {"request": "x"}, {"kind": "AdmissionReview"}, {"request": {"kind": "GameServer"}}],
)
def test_not_a_review(body: Any) -> None:
    with pytest.raises(ReviewError):
        review("/validate", body, GATES)


# -- mutation ---------------------------------------------------------------------------------------


def test_game_server_defaults_as_a_patch() -> None:
    obj = gs()
    answer = review("/mutate", admission(obj), GATES)
    assert answer["response"]["uid"] == "req-1" and answer["response"]["allowed"] is True
    mutated = apply_patch(obj, patch_of(answer))
    assert mutated["metadata"]["finalizers"] == ["agones.dev/controller"]
    assert mutated["metadata"]["annotations"] == {"agones.dev/sdk-version": VERSION}
    assert mutated["spec"]["container"] == "game"
    assert mutated["spec"]["ports"][0] == {
        "name": "default",
        "portPolicy": "Dynamic",
        "range": "default",
        "container": "game",
        "containerPort": 7654,
        "protocol": "UDP",
    }
    assert mutated["status"]["state"] == "PortAllocation"
    # The patch never drops what the port does not model.
    obj["spec"]["template"]["spec"]["someFutureField"] = {"x": 1}
    obj["unmodelled"] = True
    mutated = apply_patch(obj, patch_of(review("/mutate", admission(obj), GATES)))
    assert mutated["spec"]["template"]["spec"]["someFutureField"] == {"x": 1}
    assert mutated["unmodelled"] is True


def test_undecodable_object_falls_through_mutation() -> None:
    obj = gs()
    obj["spec"]["ports"] = "not a list"
    answer = review("/mutate", admission(obj), GATES)
    assert answer["response"] == {"uid": "req-1", "allowed": True}


def test_fleet_defaults() -> None:
    fleet = {
        "apiVersion": "agones.dev/v1",
        "kind": "Fleet",
        "metadata": {"name": "f", "namespace": "default"},
        "spec": {"replicas": 2, "template": {"spec": gs()["spec"]}},
    }
    mutated = apply_patch(fleet, patch_of(review("/mutate", admission(fleet), GATES)))
    assert mutated["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
    }
    assert mutated["spec"]["scheduling"] == "Packed"


def test_passthrough_pod_mutation() -> None:
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "p",
            "annotations": {"agones.dev/container-passthrough-port-assignment": '{"game":[1]}'},
        },
        "spec": {
            "containers": [
                {
                    "name": "game",
                    "ports": [
                        {"containerPort": 1, "hostPort": 7001},
                        {"containerPort": 0, "hostPort": 7002},
                    ],
                }
            ]
        },
    }
    answer = review("/mutate", admission(pod, kind=("", "v1", "Pod")), GATES)
    mutated = apply_patch(pod, patch_of(answer))
    assert [p["containerPort"] for p in mutated["spec"]["containers"][0]["ports"]] == [1, 7002]
    no_annotation = copy.deepcopy(pod)
    del no_annotation["metadata"]["annotations"]
    answer = review("/mutate", admission(no_annotation, kind=("", "v1", "Pod")), GATES)
    assert answer["response"] == {"uid": "req-1", "allowed": True}


# -- validation -------------------------------------------------------------------------------------

CONTAINERS_2 = {"spec": {"containers": [{"name": "a", "image": "i"}, {"name": "b", "image": "i"}]}}


@pytest.mark.parametrize(
    ("obj", "message", "causes"),
    [
        pytest.param(
            gs("rust-simple-pnttq", ports=[{"name": "d", "containerPort": 1, "hostPort": 7000}]),
            'GameServer.agones.dev "rust-simple-pnttq" is invalid: spec.ports[0].hostPort: '
            "Forbidden: HostPort cannot be specified with a Dynamic or Passthrough PortPolicy",
            [("FieldValueForbidden", "spec.ports[0].hostPort")],
            id="dynamic-host-port",
        ),
        pytest.param(
            gs(ports=[{"name": "d", "portPolicy": "Static", "hostPort": 7000}]),
            'GameServer.agones.dev "gs" is invalid: spec.ports[0].containerPort: Required value: '
            "ContainerPort must be defined for Dynamic and Static PortPolicies",
            [("FieldValueRequired", "spec.ports[0].containerPort")],
            id="container-port-required",
        ),
        pytest.param(
            gs(template=CONTAINERS_2),
            'GameServer.agones.dev "gs" is invalid: [spec.container: Required value: Container is '
            "required when using multiple containers in the pod template, spec.container: Invalid "
            'value: "": Could not find a container named ]',
            [("FieldValueRequired", "spec.container"), ("FieldValueInvalid", "spec.container")],
            id="multiple-containers",
        ),
        pytest.param(
            gs("x" * 64),
            f'GameServer.agones.dev "{"x" * 64}" is invalid: metadata.name: Too long: may not be '
            "more than 63 bytes",
            [("FieldValueTooLong", "metadata.name")],
            id="name-too-long",
        ),
        pytest.param(
            gs(players={"initialCapacity": 10}),
            'GameServer.agones.dev "gs" is invalid: spec.players: Forbidden: Value cannot be set '
            "unless feature flag PlayerTracking is enabled",
            [("FieldValueForbidden", "spec.players")],
            id="player-tracking-gate",
        ),
    ],
)
def test_game_server_denials(
    obj: dict[str, Any], message: str, causes: list[tuple[str, str]]
) -> None:
    answer = mutate_then_validate(obj)
    response = answer["response"]
    assert response["allowed"] is False
    status = response["status"]
    assert status["message"] == message
    assert not status["message"].startswith("admission webhook")  # the apiserver adds that
    assert (status["code"], status["reason"], status["status"]) == (422, "Invalid", "Failure")
    assert status["details"]["group"] == "agones.dev"
    assert status["details"]["kind"] == "GameServer"
    assert [(c["reason"], c["field"]) for c in status["details"]["causes"]] == causes


def test_dev_address_denial() -> None:
    obj = gs(ports=[{"name": "d", "portPolicy": "Static", "containerPort": 1, "hostPort": 7}])
    obj["metadata"]["annotations"] = {"agones.dev/dev-address": "not-an-ip"}
    status = mutate_then_validate(obj)["response"]["status"]
    assert status["message"].endswith(
        'metadata.annotations.agones.dev/dev-address: Invalid value: "not-an-ip": '
        "must be a valid IP address"
    )


def test_valid_game_server_allowed() -> None:
    assert mutate_then_validate(gs())["response"] == {"uid": "req-1", "allowed": True}


def gss(template_image: str) -> dict[str, Any]:
    spec = gs()["spec"]
    spec["template"]["spec"]["containers"][0]["image"] = template_image
    return {
        "apiVersion": "agones.dev/v1",
        "kind": "GameServerSet",
        "metadata": {"name": "set", "namespace": "default"},
        "spec": {"replicas": 1, "template": {"spec": spec}},
    }


def test_game_server_set_template_is_immutable_on_update() -> None:
    answer = review("/validate", admission(gss("v2"), "UPDATE", old=gss("v1")), GATES)
    status = answer["response"]["status"]
    assert answer["response"]["allowed"] is False
    assert status["message"].startswith('GameServerSet.agones.dev "set" is invalid: spec.template')
    same = review("/validate", admission(gss("v1"), "UPDATE", old=gss("v1")), GATES)
    assert same["response"]["allowed"] is True


def test_fleet_rolling_update_denial_with_go_value() -> None:
    fleet = {
        "apiVersion": "agones.dev/v1",
        "kind": "Fleet",
        "metadata": {"name": "f", "namespace": "default"},
        "spec": {
            "replicas": 1,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "0%"}},
            "template": {"spec": gs()["spec"]},
        },
    }
    status = mutate_then_validate(fleet)["response"]["status"]
    assert status["message"] == (
        'Fleet.agones.dev "f" is invalid: spec.strategy.rollingUpdate.maxSurge: Invalid value: '
        'intstr.IntOrString{Type:1, IntVal:0, StrVal:"0%"}: must be between 1% and 99%'
    )


def test_validation_of_undecodable_object_is_an_internal_error() -> None:
    obj = gs()
    obj["spec"]["ports"] = "nope"
    response = review("/validate", admission(obj), GATES)["response"]
    assert response["allowed"] is False
    status = response["status"]
    assert (status["code"], status["reason"]) == (400, "InternalError")
    assert status["message"].startswith(
        "error unmarshalling GameServer json after schema validation: {"
    )
    assert status["details"]["causes"][0]["reason"] == "InternalError"


# -- the oracle: Agones' own examples -----------------------------------------------------------


def _oracle(kinds: set[str]) -> list[Any]:
    params = []
    for path in sorted(ORACLE.glob("*.json")):
        data = json.loads(path.read_text())
        if data["input"].get("kind") in kinds:
            params.append(pytest.param(data, id=path.stem))
    return params


@pytest.mark.parametrize("data", _oracle({"GameServer", "Fleet"}))
def test_oracle_examples_mutate_to_what_agones_stored(data: dict[str, Any]) -> None:
    obj = copy.deepcopy(data["input"])
    obj["metadata"]["namespace"] = data["output"]["metadata"]["namespace"]
    mutated = apply_patch(obj, patch_of(review("/mutate", admission(obj), GATES)))
    expected = copy.deepcopy(data["output"])
    annotations = expected["metadata"].get("annotations", {})
    if "agones.dev/sdk-version" in annotations:
        annotations["agones.dev/sdk-version"] = VERSION
    assert strip_go_artefacts(mutated) == strip_go_artefacts(expected)
    answer = review("/validate", admission(mutated, name="generated-name"), GATES)
    assert answer["response"]["allowed"] is True, answer


def test_webhook_configurations_route_what_the_handlers_serve() -> None:
    from agones.extensions import webhook_configurations

    mutating, validating = webhook_configurations(b"PEM")
    assert mutating["webhooks"][0]["rules"] == [
        {
            "apiGroups": ["agones.dev"],
            "apiVersions": ["v1"],
            "operations": ["CREATE"],
            "resources": ["gameservers", "fleets"],
            "scope": "Namespaced",
        },
        {
            "apiGroups": ["autoscaling.agones.dev"],
            "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["fleetautoscalers"],
            "scope": "Namespaced",
        },
    ]
    rules = validating["webhooks"][0]["rules"]
    assert {(r["apiGroups"][0], tuple(r["operations"]), tuple(r["resources"])) for r in rules} == {
        ("agones.dev", ("CREATE",), ("gameservers",)),
        ("agones.dev", ("CREATE", "UPDATE"), ("fleets", "gameserversets")),
        ("autoscaling.agones.dev", ("CREATE", "UPDATE"), ("fleetautoscalers",)),
    }
    service = validating["webhooks"][0]["clientConfig"]["service"]
    assert service == {
        "name": "agones-controller-service",
        "namespace": "agones-system",
        "path": "/validate",
    }
    assert validating["webhooks"][0]["name"] == "validations.agones.dev"


# -- Go clients: zero values for unset fields (issue 15 item 0a) --------------------------------


@pytest.mark.parametrize(
    ("obj", "path", "value"),
    [
        pytest.param(
            gobodies.game_server("g"), ("status", "state"), "PortAllocation", id="gs-state"
        ),
        pytest.param(
            gobodies.game_server("g"), ("spec", "health", "periodSeconds"), 5, id="gs-health"
        ),
        pytest.param(
            gobodies.game_server("g"), ("spec", "sdkServer", "logLevel"), "Info", id="gs-sdkserver"
        ),
        pytest.param(
            gobodies.fleet("f"), ("spec", "strategy", "type"), "RollingUpdate", id="fleet"
        ),
        pytest.param(
            gobodies.fleet_autoscaler("a", "f"), ("spec", "sync", "type"), "FixedInterval", id="fas"
        ),
    ],
)
def test_go_zero_values_are_defaulted_and_pass_validation(
    obj: dict[str, Any], path: tuple[str, ...], value: Any
) -> None:
    mutated = apply_patch(obj, patch_of(review("/mutate", admission(obj), GATES)))
    got: Any = mutated
    for key in path:
        got = got[key]
    assert got == value
    assert review("/validate", admission(mutated), GATES)["response"]["allowed"] is True


@pytest.mark.parametrize(
    "obj",
    [
        pytest.param(gobodies.game_server("g"), id="GameServer"),
        pytest.param(gobodies.fleet("f"), id="Fleet"),
        pytest.param(gobodies.fleet_autoscaler("a", "f"), id="FleetAutoscaler"),
    ],
)
def test_webhook_defaults_go_bodies_as_agones_validate_does(obj: dict[str, Any]) -> None:
    """One path: /mutate's object (after the API server's decode with the CRD schema, as the
    webhook receives it) equals what `agones validate` (Scheme.admit) defaults."""
    scheme = load()
    version = crds.version_of(obj["apiVersion"], obj["kind"])
    assert version is not None
    decoded = copy.deepcopy(obj)
    customresource.decode(decoded, version)
    mutated = apply_patch(decoded, patch_of(review("/mutate", admission(decoded), GATES)))
    admitted = scheme.admit(copy.deepcopy(obj))
    assert admitted.errors == []
    assert strip_nulls(mutated) == strip_nulls(scheme.encode(admitted.obj))


def strip_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: strip_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [strip_nulls(v) for v in value]
    return value
