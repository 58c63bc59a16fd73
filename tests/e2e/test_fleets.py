"""Fleets end to end (issue 13, "Must show"): Agones' example Fleet, `kubectl scale`, rolling
updates watched event by event, Recreate, allocation overflow, deletion.

Against the local stack by default (simulated game servers); with KUBECONFIG against any cluster
running Agones. Allocation is done by writing state Allocated, as the allocator would.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.cluster import Cluster
from tests.e2e.fleets import Fleets, Watcher, example_fleet, is_up, state
from tests.e2e.framework import Framework

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(300)]


@pytest.fixture
def fleets(framework: Framework) -> Fleets:
    return Fleets(framework)


def kubectl(framework: Framework, *args: str) -> str:
    cluster = Cluster(framework.kubeconfig, local=framework.local)
    return cluster.kubectl("-n", framework.namespace, *args).stdout


def set_version(version: str) -> Any:
    def change(fleet: dict[str, Any]) -> None:
        meta = fleet["spec"]["template"].setdefault("metadata", {})
        meta.setdefault("labels", {})["version"] = version

    return change


def test_example_fleet_gets_two_ready_and_scales_with_kubectl(
    framework: Framework, fleets: Fleets
) -> None:
    fleets.create(example_fleet("simple-game-server"))
    fleet = fleets.wait_ready("simple-game-server", 2)
    (gss,) = fleets.sets("simple-game-server")
    assert gss["metadata"]["name"].startswith("simple-game-server-")
    (owner,) = gss["metadata"]["ownerReferences"]
    assert (owner["kind"], owner["uid"], owner["controller"]) == (
        "Fleet",
        fleet["metadata"]["uid"],
        True,
    )
    assert gss["spec"]["scheduling"] == "Packed"

    kubectl(framework, "scale", "fleet", "simple-game-server", "--replicas=25")
    fleets.wait_ready("simple-game-server", 25, timeout=180)
    table = kubectl(framework, "get", "fleet", "simple-game-server")
    header, row = table.splitlines()
    assert header.split() == [
        "NAME",
        "SCHEDULING",
        "DESIRED",
        "CURRENT",
        "ALLOCATED",
        "READY",
        "AGE",
    ]
    assert row.split()[:6] == ["simple-game-server", "Packed", "25", "25", "0", "25"]

    kubectl(framework, "scale", "fleet", "simple-game-server", "--replicas=3")
    fleets.wait_ready("simple-game-server", 3, timeout=180)
    framework.wait(
        "surplus GameServers gone",
        lambda: len(fleets.game_servers("simple-game-server")) == 3,
        120,
    )
    reasons = {reason for reason, _ in fleets.events("simple-game-server")}
    assert {"CreatingGameServerSet", "ScalingGameServerSet"} <= reasons


def test_rolling_update_stays_within_surge_and_unavailable_and_spares_allocated(
    framework: Framework, fleets: Fleets
) -> None:
    replicas, max_surge, max_unavailable = 8, 2, 2  # 25% of 8, as the defaults resolve
    fleets.create(example_fleet("rolling", replicas))
    fleets.wait_ready("rolling", replicas)
    allocated = [gs["metadata"]["name"] for gs in fleets.in_state("rolling", "Ready")[:2]]
    for name in allocated:
        fleets.allocate(name)
    framework.wait(
        "fleet sees the allocations",
        lambda: ((fleets.get("rolling") or {}).get("status") or {}).get("allocatedReplicas") == 2,
    )

    watcher = Watcher(framework)
    fleets.update("rolling", set_version("2"))

    def rolled_out() -> bool:
        current = fleets.game_servers("rolling")
        new_ready = [
            gs
            for gs in current
            if state(gs) == "Ready" and gs["metadata"].get("labels", {}).get("version") == "2"
        ]
        return len(new_ready) == replicas - 2 and len(current) == replicas

    framework.wait("rolling update done", rolled_out, 240)
    watcher.stop()

    assert watcher.events, "the watcher saw nothing"
    mixed = 0
    for moment in watcher.views():
        mine = {n: gs for n, gs in moment.items() if gs["metadata"]["name"].startswith("rolling-")}
        up = [gs for gs in mine.values() if is_up(gs)]
        available = [gs for gs in up if state(gs) in ("Ready", "Allocated", "Reserved")]
        assert len(up) <= replicas + max_surge, sorted((n, state(g)) for n, g in mine.items())
        assert len(available) >= replicas - max_unavailable, sorted(
            (n, state(g)) for n, g in mine.items()
        )
        versions = {gs["metadata"].get("labels", {}).get("version") for gs in available}
        mixed += versions == {None, "2"}
    assert mixed, "old and new servers were never up side by side: not a rolling update"
    for event in watcher.events:
        obj = event["object"]
        if obj["metadata"]["name"] in allocated:
            assert event["type"] == "MODIFIED" and state(obj) == "Allocated", event["type"]
            assert not obj["metadata"].get("deletionTimestamp")
    for name in allocated:
        gs = framework.get(name)
        assert gs is not None and state(gs) == "Allocated"
    reasons = [reason for reason, _ in fleets.events("rolling")]
    assert "ScalingGameServerSet" in reasons


def test_recreate_replaces_every_server_at_once(framework: Framework, fleets: Fleets) -> None:
    fleets.create(example_fleet("recreate", 4, strategy={"type": "Recreate"}))
    fleets.wait_ready("recreate", 4)
    (old,) = fleets.sets("recreate")
    fleets.update("recreate", set_version("2"))

    def recreated() -> bool:
        current = fleets.game_servers("recreate")
        return len(current) == 4 and all(
            state(gs) == "Ready" and gs["metadata"].get("labels", {}).get("version") == "2"
            for gs in current
        )

    framework.wait("recreated", recreated, 180)
    old_name = old["metadata"]["name"]
    messages = [m for reason, m in fleets.events("recreate") if reason == "ScalingGameServerSet"]
    assert f"Scaling inactive GameServerSet {old_name} from 4 to 0" in messages
    framework.wait(
        "old GameServerSet deleted",
        lambda: all(s["metadata"]["name"] != old_name for s in fleets.sets("recreate")),
        60,
    )
    # the Event follows the delete it reports (written by the recorder after the call returns)
    framework.wait(
        "DeletingGameServerSet event",
        lambda: any(r == "DeletingGameServerSet" for r, _ in fleets.events("recreate")),
        30,
    )


def test_allocation_overflow_labels_the_surplus_allocated_servers(
    framework: Framework, fleets: Fleets
) -> None:
    overflow = {"labels": {"overflow": "true"}, "annotations": {"overflowed": "yes"}}
    fleets.create(example_fleet("overflow", 4, allocationOverflow=overflow))
    fleets.wait_ready("overflow", 4)
    names = [gs["metadata"]["name"] for gs in fleets.in_state("overflow", "Ready")[:3]]
    for name in names:
        fleets.allocate(name)
    fleets.update("overflow", lambda f: f["spec"].update(replicas=1))

    def labelled() -> list[str]:
        return [
            gs["metadata"]["name"]
            for gs in fleets.in_state("overflow", "Allocated")
            if gs["metadata"].get("labels", {}).get("overflow") == "true"
            and gs["metadata"].get("annotations", {}).get("overflowed") == "yes"
        ]

    framework.wait("two overflowed", lambda: len(labelled()) == 2, 120)
    assert set(labelled()) <= set(names)
    assert len(fleets.in_state("overflow", "Allocated")) == 3  # allocated servers are kept

    def counts() -> tuple[Any, Any]:
        status = (fleets.get("overflow") or {}).get("status") or {}
        return status.get("allocatedReplicas"), status.get("readyReplicas")

    # replicas 1 < 3 Allocated: the Ready one goes, the Allocated ones stay
    framework.wait("only the allocated left", lambda: counts() == (3, 0), 60)


def test_deleting_the_fleet_removes_its_sets_and_servers(
    framework: Framework, fleets: Fleets
) -> None:
    fleets.create(example_fleet("doomed", 3))
    fleets.wait_ready("doomed", 3)
    fleets.delete("doomed")
    framework.wait("sets gone", lambda: not fleets.sets("doomed"), 120)
    framework.wait("servers gone", lambda: not fleets.game_servers("doomed"), 120)
    assert fleets.get("doomed") is None
