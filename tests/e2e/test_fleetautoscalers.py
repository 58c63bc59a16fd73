"""FleetAutoscalers end to end (issue 11, "Must show"): the scenario from Agones' talks.

A Buffer autoscaler (min 9, max 30, buffer 9) on Agones' example Fleet: the Fleet settles at 9
Ready; 9 allocated → 9 Allocated + 9 Ready; 9 more → 18 + 9; 9 more → capped at 30 (27 Allocated +
3 Ready) with `scalingLimited`; the Allocated servers end (SDK Shutdown) → back to the buffer, 9
Ready. Against the local stack by default, or any cluster with Agones via KUBECONFIG; allocation
writes state Allocated, as the allocator does.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.fleets import Fleets, example_fleet, state
from tests.e2e.framework import Framework

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(420)]

FLEET = "autoscaled"


@pytest.fixture
def fleets(framework: Framework) -> Fleets:
    return Fleets(framework)


def fas_path(fw: Framework, name: str = "") -> str:
    base = f"/apis/autoscaling.agones.dev/v1/namespaces/{fw.namespace}/fleetautoscalers"
    return f"{base}/{name}" if name else base


def fas_status(fw: Framework, name: str) -> dict[str, Any]:
    resp = fw.api.get(fas_path(fw, name))
    assert resp.status == 200, resp
    return dict(resp.body.get("status") or {})


def wait_counts(fw: Framework, fleets: Fleets, allocated: int, ready: int) -> None:
    """Until exactly `allocated` Allocated and `ready` Ready GameServers (and nothing else alive)
    exist, and the Fleet's status says so."""

    def reached() -> bool:
        f = fleets.get(FLEET) or {}
        status = f.get("status") or {}
        if (status.get("allocatedReplicas"), status.get("readyReplicas")) != (allocated, ready):
            return False
        alive = [
            gs for gs in fleets.game_servers(FLEET) if not gs["metadata"].get("deletionTimestamp")
        ]
        states = sorted(state(gs) for gs in alive)
        return states == sorted(["Allocated"] * allocated + ["Ready"] * ready)

    fw.wait(f"{allocated} Allocated + {ready} Ready", reached, timeout=180)


def allocate(fleets: Fleets, count: int) -> None:
    for gs in fleets.in_state(FLEET, "Ready")[:count]:
        fleets.allocate(gs["metadata"]["name"])


def test_buffer_autoscaler_scenario(framework: Framework, fleets: Fleets) -> None:
    fw = framework
    fleets.create(example_fleet(FLEET, replicas=1))
    fas = {
        "apiVersion": "autoscaling.agones.dev/v1",
        "kind": "FleetAutoscaler",
        "metadata": {"name": "buffer"},
        "spec": {
            "fleetName": FLEET,
            "policy": {
                "type": "Buffer",
                "buffer": {"bufferSize": 9, "minReplicas": 9, "maxReplicas": 30},
            },
            "sync": {"type": "FixedInterval", "fixedInterval": {"seconds": 1}},
        },
    }
    resp = fw.api.post(fas_path(fw), fas)
    assert resp.status == 201, resp

    fleets.wait_ready(FLEET, 9, timeout=180)
    status = fw.wait("status", lambda: fas_status(fw, "buffer").get("ableToScale"))
    assert fas_status(fw, "buffer")["desiredReplicas"] == 9

    allocate(fleets, 9)
    wait_counts(fw, fleets, 9, 9)
    allocate(fleets, 9)
    wait_counts(fw, fleets, 18, 9)
    allocate(fleets, 9)
    wait_counts(fw, fleets, 27, 3)
    status = fw.wait(
        "scalingLimited", lambda: (s := fas_status(fw, "buffer")).get("scalingLimited") and s
    )
    assert status["desiredReplicas"] == 30
    assert (fleets.get(FLEET) or {})["spec"]["replicas"] == 30

    for gs in fleets.in_state(FLEET, "Allocated"):
        name = gs["metadata"]["name"]
        for _ in range(20):
            current = fw.get(name)
            if current is None:
                break
            current["status"]["state"] = "Shutdown"
            if fw.api.put(fw.gs_path(name), current).status == 200:
                break
    fleets.wait_ready(FLEET, 9, timeout=180)
    status = fw.wait(
        "back to the buffer",
        lambda: (s := fas_status(fw, "buffer")).get("desiredReplicas") == 9 and s,
    )
    assert status["scalingLimited"] is False
    assert status["lastAppliedPolicy"] == "Buffer"
    reasons = {
        e["reason"]
        for e in fw.api.get(
            f"/api/v1/namespaces/{fw.namespace}/events",
            fieldSelector="involvedObject.name=buffer,involvedObject.kind=FleetAutoscaler",
        ).body["items"]
    }
    assert {"AutoScalingFleet", "ScalingLimited"} <= reasons
    fw.api.delete(fas_path(fw, "buffer"))
    fleets.delete(FLEET)
