"""Fleet metrics: the replica gauges, the rollout percentage, counters and lists, removal on delete."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest
from prometheus_client import CollectorRegistry

from agones.apis.agones.v1.fleet import Fleet
from agones.apis.agones.v1.gameserverset import GameServerSet
from agones.client.versioned.resources import GAME_SERVER_SETS
from agones.controllers.fleets import FleetMetrics
from agones.controllers.fleets.metrics import rollout_percent
from agones.featuregates import FeatureGates
from agones.informers import SharedInformerFactory
from agones.informers.store import DeletedFinalStateUnknown


class NoClient:
    """The informers are never started: the test feeds the handlers and the cache directly."""


def a_fleet(**status: Any) -> Fleet:
    return msgspec.convert(
        {
            "metadata": {"name": "f", "namespace": "ns", "uid": "u"},
            "spec": {"replicas": 4, "template": {"spec": {"template": {}}}},
            "status": {
                "replicas": 3,
                "readyReplicas": 2,
                "reservedReplicas": 0,
                "allocatedReplicas": 1,
                **status,
            },
        },
        Fleet,
    )


@pytest.mark.parametrize(
    ("current", "desired", "percent"),
    [(0, 4, 0), (1, 4, 25), (1, 3, 33), (3, 3, 100), (5, 4, 125), (0, 0, 100)],
)
def test_rollout_percent_truncates_as_go(current: int, desired: int, percent: int) -> None:
    assert rollout_percent(current, desired) == percent


def test_fleet_changes_set_the_gauges_and_deletion_removes_them() -> None:
    registry = CollectorRegistry()
    factory = SharedInformerFactory(NoClient())  # type: ignore[arg-type]
    metrics = FleetMetrics(factory, FeatureGates(), registry)
    fleet = a_fleet(
        counters={"rooms": {"count": 3, "capacity": 10, "allocatedCount": 1}},
        lists={"players": {"count": 2, "capacity": 8}},
    )
    active = fleet.game_server_set(FeatureGates())
    body = msgspec.to_builtins(active)
    body["metadata"]["name"] = "f-1"
    body["status"] = {"replicas": 1}
    factory.for_resource(GAME_SERVER_SETS).informer().indexer.add(
        msgspec.convert(body, GameServerSet)
    )
    metrics.record_fleet_changes(fleet)

    def value(metric: str, /, **labels: str) -> float | None:
        return registry.get_sample_value(metric, labels)

    replicas = "agones_fleets_replicas_count"
    assert value(replicas, name="f", type="total", namespace="ns") == 3
    assert value(replicas, name="f", type="desired", namespace="ns") == 4
    assert value(replicas, name="f", type="ready", namespace="ns") == 2
    assert value(replicas, name="f", type="allocated", namespace="ns") == 1
    assert value(replicas, name="f", type="reserved", namespace="ns") == 0
    rollout = "agones_fleet_rollout_percent"
    assert value(rollout, name="f", type="percent", namespace="ns") == 25
    counters = "agones_fleet_counters"
    assert value(counters, name="f", namespace="ns", type="total_count", counter="rooms") == 3
    assert value(counters, name="f", namespace="ns", type="allocated_count", counter="rooms") == 1
    lists = "agones_fleet_lists"
    assert value(lists, name="f", namespace="ns", type="total_capacity", list="players") == 8

    metrics.record_fleet_deletion(DeletedFinalStateUnknown("ns/f", fleet))
    assert value(replicas, name="f", type="total", namespace="ns") is None
    assert value(rollout, name="f", type="percent", namespace="ns") is None
    assert value(counters, name="f", namespace="ns", type="total_count", counter="rooms") is None
    assert value(lists, name="f", namespace="ns", type="total_capacity", list="players") is None
