"""`compute_status`: replica counts by state, shutdown replicas, players, counters and lists."""

from __future__ import annotations

import msgspec
import pytest

from agones.apis.agones.v1.common import MAX_INT64, safe_add
from agones.controllers.gameserversets import compute_status
from agones.featuregates import Feature, FeatureGates

from .fixtures import gs

ALL_ON = FeatureGates({Feature.COUNTS_AND_LISTS: True, Feature.PLAYER_TRACKING: True})


def test_counts_by_state() -> None:
    status = compute_status(
        [
            gs("r1", "Ready"),
            gs("r2", "Ready"),
            gs("a", "Allocated"),
            gs("res", "Reserved"),
            gs("c", "Creating"),
            gs("s", "Shutdown"),
            gs("d", "Ready", deleting=True),
        ],
        FeatureGates({Feature.COUNTS_AND_LISTS: False}),
    )
    assert msgspec.to_builtins(status) == {
        "replicas": 5,
        "readyReplicas": 2,
        "reservedReplicas": 1,
        "allocatedReplicas": 1,
        "shutdownReplicas": 2,
    }


def test_empty_set_has_zero_counts() -> None:
    assert msgspec.to_builtins(compute_status([], FeatureGates())) == {
        "replicas": 0,
        "readyReplicas": 0,
        "reservedReplicas": 0,
        "allocatedReplicas": 0,
        "shutdownReplicas": 0,
    }


def test_players_over_ready_reserved_allocated_not_deleting() -> None:
    p = {"count": 2, "capacity": 10}
    status = compute_status(
        [
            gs("r", "Ready", players=p),
            gs("res", "Reserved", players=p),
            gs("a", "Allocated", players=p),
            gs("c", "Scheduled", players=p),
            gs("d", "Allocated", deleting=True, players=p),
            gs("none", "Ready"),
        ],
        ALL_ON,
    )
    assert msgspec.to_builtins(status.players) == {"count": 6, "capacity": 30}


def test_players_absent_without_player_tracking() -> None:
    status = compute_status([gs("r", players={"count": 1, "capacity": 2})], FeatureGates())
    assert "players" not in msgspec.to_builtins(status)


def test_counters_summed_and_allocated_only_from_allocated() -> None:
    status = compute_status(
        [
            gs("r", "Ready", counters={"rooms": {"count": 1, "capacity": 10}}),
            gs("a", "Allocated", counters={"rooms": {"count": 4, "capacity": 5}}),
            gs("d", "Allocated", deleting=True, counters={"rooms": {"count": 9, "capacity": 9}}),
        ],
        ALL_ON,
    )
    assert msgspec.to_builtins(status.counters) == {
        "rooms": {"allocatedCount": 4, "allocatedCapacity": 5, "count": 5, "capacity": 15}
    }


def test_counter_sums_saturate_at_int64_max() -> None:
    big = {"rooms": {"count": MAX_INT64 - 1, "capacity": MAX_INT64}}
    status = compute_status(
        [gs("a", "Allocated", counters=big), gs("b", "Allocated", counters=big)], ALL_ON
    )
    assert msgspec.to_builtins(status.counters) == {
        "rooms": {
            "allocatedCount": MAX_INT64,
            "allocatedCapacity": MAX_INT64,
            "count": MAX_INT64,
            "capacity": MAX_INT64,
        }
    }


def test_lists_count_values_with_duplicates_across_servers() -> None:
    status = compute_status(
        [
            gs("r", "Ready", lists={"players": {"capacity": 10, "values": ["x", "y"]}}),
            gs("a", "Allocated", lists={"players": {"capacity": 5, "values": ["x"]}}),
        ],
        ALL_ON,
    )
    assert msgspec.to_builtins(status.lists) == {
        "players": {"allocatedCount": 1, "allocatedCapacity": 5, "count": 3, "capacity": 15}
    }


def test_counters_and_lists_dropped_without_the_gate() -> None:
    status = compute_status(
        [gs("r", counters={"rooms": {"count": 1, "capacity": 2}})],
        FeatureGates({Feature.COUNTS_AND_LISTS: False}),
    )
    assert "counters" not in msgspec.to_builtins(status)


@pytest.mark.parametrize(
    ("x", "y", "want"),
    [
        pytest.param(1, 2, 3, id="small"),
        pytest.param(MAX_INT64, 1, MAX_INT64, id="overflow"),
        pytest.param(MAX_INT64 - 1, 1, MAX_INT64, id="exactly-max"),
        pytest.param(0, 0, 0, id="zeros"),
    ],
)
def test_safe_add(x: int, y: int, want: int) -> None:
    assert safe_add(x, y) == want
