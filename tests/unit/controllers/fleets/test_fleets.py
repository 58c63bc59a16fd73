"""The Fleet controller's pure helpers: ownership, the active set, the summed status."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from agones.apis.agones.v1.common import MAX_INT64
from agones.apis.agones.v1.fleet import Fleet
from agones.apis.agones.v1.gameserverset import GameServerSet
from agones.controllers.fleets import fleets
from agones.controllers.fleets.rollingupdate import FleetReplicas, SetReplicas
from agones.featuregates import FeatureGates


def fleet(**spec: Any) -> Fleet:
    body = {
        "apiVersion": "agones.dev/v1",
        "kind": "Fleet",
        "metadata": {"name": "f", "namespace": "ns", "uid": "uid-f"},
        "spec": {
            "replicas": 5,
            "template": {"spec": {"ports": [{"containerPort": 7654}], "template": {}}},
            **spec,
        },
    }
    return msgspec.convert(body, Fleet)


def gss_of(f: Fleet, name: str, status: dict[str, Any] | None = None, **spec: Any) -> GameServerSet:
    gss = f.game_server_set(FeatureGates())
    body = msgspec.to_builtins(gss)
    body["metadata"]["name"] = name
    body["spec"].update(spec)
    if status is not None:
        body["status"] = status
    return msgspec.convert(body, GameServerSet)


def test_game_server_set_of_a_fleet_is_labelled_and_owned() -> None:
    f = fleet(scheduling="Distributed", allocationOverflow={"labels": {"a": "b"}})
    gss = f.game_server_set(FeatureGates())
    body = msgspec.to_builtins(gss)
    assert body["metadata"]["generateName"] == "f-"
    assert body["metadata"]["labels"] == {"agones.dev/fleet": "f"}
    (ref,) = body["metadata"]["ownerReferences"]
    assert ref == {
        "apiVersion": "agones.dev/v1",
        "kind": "Fleet",
        "name": "f",
        "uid": "uid-f",
        "controller": True,
        "blockOwnerDeletion": True,
    }
    assert body["spec"]["scheduling"] == "Distributed"
    assert body["spec"]["allocationOverflow"] == {"labels": {"a": "b"}}
    assert fleets.is_fleet_game_server_set(gss, f)


@pytest.mark.parametrize(
    ("change", "owned"),
    [
        pytest.param({}, True, id="owned"),
        pytest.param({"labels": {"agones.dev/fleet": "other"}}, False, id="other-label"),
        pytest.param({"ownerReferences": []}, False, id="no-owner"),
    ],
)
def test_ownership_needs_label_and_controller_uid(change: dict[str, Any], owned: bool) -> None:
    f = fleet()
    body = msgspec.to_builtins(gss_of(f, "s"))
    body["metadata"].update(change)
    assert fleets.is_fleet_game_server_set(msgspec.convert(body, GameServerSet), f) is owned


def test_same_name_other_uid_is_not_owned() -> None:
    f = fleet()
    gss = gss_of(f, "s")
    other = msgspec.convert(
        {**msgspec.to_builtins(f), "metadata": {"name": "f", "uid": "uid-x"}}, Fleet
    )
    assert not fleets.is_fleet_game_server_set(gss, other)


def test_active_set_is_the_one_with_the_fleets_template() -> None:
    f = fleet()
    same = gss_of(f, "same")
    other = gss_of(f, "other", template={"spec": {"ports": [{"containerPort": 9999}]}})
    assert fleets.filter_game_server_set_by_active(f, [other, same]) == (same, [other])
    assert fleets.filter_game_server_set_by_active(f, [other]) == (None, [other])


def test_templates_compare_as_go_decodes_them() -> None:
    # Decoded as Go does, an empty metadata, health and sdkServer are the zero structs they stand for.
    f = fleet()
    shaped = gss_of(
        f,
        "shaped",
        template={
            "metadata": {},
            "spec": {
                "ports": [{"containerPort": 7654}],
                "health": {},
                "sdkServer": {},
                "template": {},
            },
        },
    )
    assert fleets.filter_game_server_set_by_active(f, [shaped]) == (shaped, [])


def test_two_matching_sets_keep_the_last_active_and_the_earlier_as_rest() -> None:
    f = fleet()
    first, second = gss_of(f, "first"), gss_of(f, "second")
    assert fleets.filter_game_server_set_by_active(f, [first, second]) == (second, [first])


def test_replica_views() -> None:
    f = fleet(strategy={"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2}})
    f.status = msgspec.convert({"readyReplicas": 3}, type(fleets.fleet_status_of(f)))
    assert fleets.fleet_replicas(f) == FleetReplicas(
        5, ready=3, max_surge=2, max_unavailable=None, name="f"
    )
    status = {"replicas": 4, "readyReplicas": 1, "allocatedReplicas": 2, "shutdownReplicas": 1}
    assert fleets.set_replicas(gss_of(f, "s", status, replicas=4)) == SetReplicas(
        "s", 4, 4, ready=1, allocated=2, shutdown=1
    )


def _status(**kw: Any) -> dict[str, Any]:
    return {"replicas": 0, "readyReplicas": 0, "reservedReplicas": 0, "allocatedReplicas": 0, **kw}


def test_fleet_status_is_the_sum_of_its_sets() -> None:
    f = fleet()
    a = gss_of(
        f,
        "a",
        _status(
            replicas=3,
            readyReplicas=1,
            reservedReplicas=1,
            allocatedReplicas=1,
            players={"count": 2, "capacity": 10},
            counters={"rooms": {"count": 1, "capacity": MAX_INT64, "allocatedCount": 1}},
            lists={"players": {"count": 2, "capacity": 5}},
        ),
    )
    b = gss_of(
        f,
        "b",
        _status(
            replicas=2,
            readyReplicas=2,
            players={"count": 1, "capacity": 5},
            counters={"rooms": {"count": 2, "capacity": 7}, "other": {"count": 1}},
            lists={"players": {"count": 1, "capacity": 5, "allocatedCapacity": 5}},
        ),
    )
    status = fleets.fleet_status([a, b], counts_and_lists=True, player_tracking=True)
    assert msgspec.to_builtins(status) == {
        "replicas": 5,
        "readyReplicas": 3,
        "reservedReplicas": 1,
        "allocatedReplicas": 1,
        "players": {"count": 3, "capacity": 15},
        "counters": {
            # capacity saturates at the int64 maximum (SafeAdd)
            "rooms": {
                "allocatedCount": 1,
                "allocatedCapacity": 0,
                "count": 3,
                "capacity": MAX_INT64,
            },
            "other": {"allocatedCount": 0, "allocatedCapacity": 0, "count": 1, "capacity": 0},
        },
        "lists": {
            "players": {"allocatedCount": 0, "allocatedCapacity": 5, "count": 3, "capacity": 10}
        },
    }


def test_fleet_status_without_gates_has_no_players_counters_or_lists() -> None:
    f = fleet()
    a = gss_of(f, "a", _status(replicas=1, counters={"rooms": {"count": 1}}))
    status = fleets.fleet_status([a], counts_and_lists=False, player_tracking=False)
    assert msgspec.to_builtins(status) == _status(replicas=1)
    assert msgspec.to_builtins(fleets.fleet_status([], True, False)) == _status()


@pytest.mark.parametrize(
    ("stored", "equal"),
    [
        pytest.param(None, True, id="absent-is-zero"),
        pytest.param(_status(), True, id="zeros"),
        pytest.param({"replicas": 0, "counters": {}}, True, id="empty-map-is-absent"),
        pytest.param(_status(replicas=1), False, id="differs"),
    ],
)
def test_normalized_status_compares_as_on_the_wire(stored: Any, equal: bool) -> None:
    f = fleet()
    if stored is not None:
        f.status = msgspec.convert(stored, type(fleets.fleet_status_of(f)))
    computed = fleets.fleet_status([], True, False)
    assert (fleets.normalized_status(computed) == fleets.normalized_status(f.status)) is equal
