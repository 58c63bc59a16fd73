"""`agones validate` answers what the cluster answers (issue 15 item 5, "one code path").

Each manifest is created with `dryRun=All` through the API server (its CRD schema, then Agones'
webhooks) and given to `Scheme.admit`, the function behind `agones validate`: both accept it, or
both refuse it with the same set of causes (`field: message`, compared as a set as reference §12
says). On the local cluster this pins the CRD pass of `agones.apis.structural` to the webhooks';
with `KUBECONFIG` set to a cluster running Agones it compares `agones validate` with Agones itself.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Callable
from typing import Any

import pytest

from agones.apis.scheme import load
from agones.featuregates import FeatureGates
from tests.e2e.framework import Framework

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(120)]

Obj = dict[str, Any]
PORTS = [{"name": "default", "containerPort": 7654}]
CONTAINERS = [{"name": "game", "image": "example.com/game:1"}]
GS: Obj = {
    "apiVersion": "agones.dev/v1",
    "kind": "GameServer",
    "metadata": {"name": "probe"},
    "spec": {"ports": PORTS, "template": {"spec": {"containers": CONTAINERS}}},
}
FLEET: Obj = {
    "apiVersion": "agones.dev/v1",
    "kind": "Fleet",
    "metadata": {"name": "probe"},
    "spec": {"replicas": 1, "template": {"spec": copy.deepcopy(GS["spec"])}},
}
GSS: Obj = {**copy.deepcopy(FLEET), "kind": "GameServerSet"}
FAS: Obj = {
    "apiVersion": "autoscaling.agones.dev/v1",
    "kind": "FleetAutoscaler",
    "metadata": {"name": "probe"},
    "spec": {
        "fleetName": "probe",
        "policy": {"type": "Buffer", "buffer": {"bufferSize": 2, "maxReplicas": 10}},
    },
}
PLURALS = {
    "GameServer": "agones.dev/v1/gameservers",
    "Fleet": "agones.dev/v1/fleets",
    "GameServerSet": "agones.dev/v1/gameserversets",
    "FleetAutoscaler": "autoscaling.agones.dev/v1/fleetautoscalers",
}


def _with(base: Obj, change: Callable[[Obj], Any]) -> Obj:
    obj = copy.deepcopy(base)
    change(obj)
    return obj


def _container(obj: Obj) -> Obj:
    spec = obj["spec"]
    while "template" in spec:
        spec = spec["template"]["spec"]
    container: Obj = spec["containers"][0]
    return container


CASES: list[tuple[str, Obj]] = [
    ("gameserver-valid", GS),
    ("gameserver-unknown-field-pruned", _with(GS, lambda o: o["spec"].update(nope=1))),
    ("gameserver-eviction-enum", _with(GS, lambda o: o["spec"].update(eviction={"safe": "X"}))),
    (
        "gameserver-counter-negative-status-twin",
        _with(GS, lambda o: o["spec"].update(counters={"rooms": {"count": -1, "capacity": 9}})),
    ),
    (
        "gameserver-list-duplicate-status-twin",
        _with(GS, lambda o: o["spec"].update(lists={"p": {"values": ["a", "a"]}})),
    ),
    ("gameserver-image-integer", _with(GS, lambda o: _container(o).update(image=5))),
    ("gameserver-no-template", _with(GS, lambda o: o["spec"].pop("template"))),
    (
        "gameserver-port-string",
        _with(GS, lambda o: o["spec"]["ports"][0].update(containerPort="x")),
    ),
    (
        "gameserver-webhook-rule",
        _with(GS, lambda o: o["spec"]["ports"][0].update(hostPort=7000)),
    ),
    (
        "gameserver-schema-before-webhook",
        _with(
            GS,
            lambda o: o["spec"]["ports"][0].update(hostPort=7000, protocol="SCTP"),
        ),
    ),
    ("fleet-valid", FLEET),
    ("fleet-no-template", _with(FLEET, lambda o: o["spec"].pop("template"))),
    ("fleet-replicas-negative", _with(FLEET, lambda o: o["spec"].update(replicas=-1))),
    ("fleet-image-integer", _with(FLEET, lambda o: _container(o).update(image=5))),
    (
        "fleet-status-ignored-on-create",
        _with(FLEET, lambda o: o.update(status={"replicas": -1})),
    ),
    ("gameserverset-valid", GSS),
    ("gameserverset-replicas-missing", _with(GSS, lambda o: o["spec"].pop("replicas"))),
    ("fleetautoscaler-valid", FAS),
    (
        "fleetautoscaler-max-replicas-zero",
        _with(FAS, lambda o: o["spec"]["policy"]["buffer"].update(maxReplicas=0)),
    ),
    ("fleetautoscaler-fleet-name-empty", _with(FAS, lambda o: o["spec"].update(fleetName=""))),
]


def _cluster_causes(framework: Framework, obj: Obj) -> tuple[int, list[str]]:
    path = f"/apis/{PLURALS[obj['kind']].rsplit('/', 1)[0]}/namespaces/{framework.namespace}"
    resp = framework.api.request(
        "POST",
        f"{path}/{PLURALS[obj['kind']].rsplit('/', 1)[1]}",
        copy.deepcopy(obj),
        query={"dryRun": "All"},
    )
    body = resp.body if isinstance(resp.body, dict) else {}
    causes = (body.get("details") or {}).get("causes") or []
    return resp.status, sorted(f"{c.get('field')}: {c.get('message')}" for c in causes)


@pytest.mark.parametrize("obj", [pytest.param(o, id=i) for i, o in CASES])
def test_agones_validate_answers_as_the_cluster(framework: Framework, obj: Obj) -> None:
    status, cluster = _cluster_causes(framework, obj)
    admission = load().admit(copy.deepcopy(obj), FeatureGates())
    assert (status == 201) is admission.allowed, (status, cluster, admission.errors)
    assert sorted(str(e) for e in admission.errors) == cluster


SUPPORTED = 'supported values: "Always", "OnUpgrade", "Never"'
EVICTION_CASES: list[tuple[str, Obj, list[str]]] = [
    (
        "gameserver-enum-status-twin",
        _with(GS, lambda o: o["spec"].update(eviction={"safe": "Sometimes"})),
        [
            f'spec.eviction.safe: Unsupported value: "Sometimes": {SUPPORTED}',
            f'status.eviction.safe: Unsupported value: "Sometimes": {SUPPORTED}',
        ],
    ),
    (
        "gameserver-integer",
        _with(GS, lambda o: o["spec"].update(eviction={"safe": 5})),
        [
            'spec.eviction.safe: Invalid value: "integer": spec.eviction.safe in body must be '
            'of type string: "integer"',
            f"spec.eviction.safe: Unsupported value: 5: {SUPPORTED}",
        ],
    ),
    (
        "fleet-template-enum",
        _with(FLEET, lambda o: o["spec"]["template"]["spec"].update(eviction={"safe": "X"})),
        [f'spec.template.spec.eviction.safe: Unsupported value: "X": {SUPPORTED}'],
    ),
]


@pytest.mark.parametrize(("obj", "want"), [pytest.param(o, w, id=i) for i, o, w in EVICTION_CASES])
def test_bad_eviction_safe_is_refused_as_agones_refuses_it(
    framework: Framework, obj: Obj, want: list[str]
) -> None:
    """The exact 422 of Agones on a real cluster: Go's webhook copies a bad `spec.eviction` into
    `status.eviction` before the schema speaks, so an enum error comes with its status twin."""
    path = f"/apis/{PLURALS[obj['kind']].rsplit('/', 1)[0]}/namespaces/{framework.namespace}"
    resp = framework.api.request(
        "POST", f"{path}/{PLURALS[obj['kind']].rsplit('/', 1)[1]}", copy.deepcopy(obj)
    )
    assert resp.status == 422, resp.body
    body = resp.body if isinstance(resp.body, dict) else {}
    causes = (body.get("details") or {}).get("causes") or []
    assert sorted(f"{c['field']}: {c['message']}" for c in causes) == sorted(want)
    assert {c["reason"] for c in causes} <= {"FieldValueNotSupported", "FieldValueTypeInvalid"}
    kind = f"{obj['kind']}.{obj['apiVersion'].split('/')[0]}"
    # the causes' order in the message is the server's; reference §12 compares them as a set
    joined = {
        order[0] if len(order) == 1 else "[" + ", ".join(order) + "]"
        for order in itertools.permutations(want)
    }
    assert body["message"] in {f'{kind} "probe" is invalid: {j}' for j in joined}
    assert sorted(str(e) for e in load().admit(copy.deepcopy(obj)).errors) == sorted(want)
