"""Agones objects as Go clients send them (issue 15 item 0a): every field without `omitempty` with
its zero value (`status.state: ""`, `ports: null`, `replicas: 0`, `strategy: {}`, ...). Created over
HTTP through the API server, its CRD schema and Agones' webhooks, each is accepted and defaulted as
Agones defaults it."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests import gobodies
from tests.e2e.framework import Framework

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(120)]


def _create(framework: Framework, group_version: str, plural: str, body: dict[str, Any]) -> Any:
    path = f"/apis/{group_version}/namespaces/{framework.namespace}/{plural}"
    resp = framework.api.post(path, body)
    assert resp.status == 201, resp
    return resp.body


def _name(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:6]}"


def test_game_server_with_go_zero_values_is_defaulted(framework: Framework) -> None:
    gs = _create(framework, "agones.dev/v1", "gameservers", gobodies.game_server(_name("go-gs")))
    assert gs["status"]["state"] in ("PortAllocation", "Creating")
    spec = gs["spec"]
    assert spec["ports"][0]["portPolicy"] == "Dynamic"
    assert spec["ports"][0]["protocol"] == "UDP"
    assert spec["health"] == {"periodSeconds": 5, "failureThreshold": 3, "initialDelaySeconds": 5}
    assert spec["sdkServer"] == {"logLevel": "Info", "grpcPort": 9357, "httpPort": 9358}
    assert spec["scheduling"] == "Packed"
    assert spec["container"] == "simple-game-server"
    assert "agones.dev/controller" in gs["metadata"]["finalizers"]
    assert gs["metadata"]["creationTimestamp"]


def test_game_server_with_go_zero_values_becomes_ready(framework: Framework) -> None:
    body = gobodies.game_server(_name("go-ready"), gobodies.SIMULATE)
    created = _create(framework, "agones.dev/v1", "gameservers", body)
    ready = framework.wait_state(created["metadata"]["name"], "Ready")
    assert ready["status"]["ports"][0]["port"] == ready["spec"]["ports"][0]["hostPort"]


def test_fleet_with_go_zero_values_is_defaulted(framework: Framework) -> None:
    flt = _create(framework, "agones.dev/v1", "fleets", gobodies.fleet(_name("go-fleet")))
    spec = flt["spec"]
    assert spec["replicas"] == 0
    assert spec["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"},
    }
    assert spec["scheduling"] == "Packed"
    # Agones defaults a Fleet's template only when its GameServers are made.
    assert spec["template"]["spec"]["ports"] == [{"name": "default", "containerPort": 7654}]


def test_game_server_set_with_go_zero_values_is_accepted(framework: Framework) -> None:
    gss = _create(
        framework, "agones.dev/v1", "gameserversets", gobodies.game_server_set(_name("gss"))
    )
    assert gss["spec"]["replicas"] == 0
    assert gss["spec"]["template"]["spec"]["ports"][0]["containerPort"] == 7654


def test_fleet_autoscaler_with_go_zero_values_is_defaulted(framework: Framework) -> None:
    body = gobodies.fleet_autoscaler(_name("go-fas"), _name("absent-fleet"))
    fas = _create(framework, "autoscaling.agones.dev/v1", "fleetautoscalers", body)
    assert fas["spec"]["sync"] == {"type": "FixedInterval", "fixedInterval": {"seconds": 30}}
    assert fas["spec"]["policy"]["buffer"] == {"maxReplicas": 10, "minReplicas": 0, "bufferSize": 2}


def test_allocation_policy_with_go_zero_values_is_accepted(framework: Framework) -> None:
    body = gobodies.game_server_allocation_policy(_name("go-gsap"))
    policy = _create(framework, "multicluster.agones.dev/v1", "gameserverallocationpolicies", body)
    assert policy["spec"]["connectionInfo"]["clusterName"] == ""
    assert (policy["spec"]["priority"], policy["spec"]["weight"]) == (1, 100)


@pytest.mark.parametrize(
    "make",
    [gobodies.schedule_fleet_autoscaler, gobodies.chain_fleet_autoscaler],
    ids=["schedule", "chain"],
)
def test_fleet_autoscaler_policies_with_go_zero_values_are_accepted(
    framework: Framework, make: Any
) -> None:
    body = make(_name("go-fas"), _name("absent-fleet"))
    fas = _create(framework, "autoscaling.agones.dev/v1", "fleetautoscalers", body)
    assert fas["spec"]["policy"]["type"] == body["spec"]["policy"]["type"]
    assert fas["spec"]["sync"]["type"] == "FixedInterval"
