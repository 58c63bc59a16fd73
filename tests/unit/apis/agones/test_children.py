"""Objects a parent creates: a GameServerSet's GameServers and a Fleet's GameServerSets."""

from __future__ import annotations

from agones.apis.agones.v1.fleet import Fleet
from agones.apis.agones.v1.gameserverset import GameServerSet
from agones.apis.meta.objectmeta import controller_of
from agones.apis.scheme import Scheme
from agones.featuregates import FeatureGates

from .manifests import fleet, game_server_set, template


def test_game_server_from_set(scheme: Scheme) -> None:
    manifest = game_server_set(
        {
            "scheduling": "Distributed",
            "template": {"metadata": {"labels": {"a": "b"}}, **template()},
        },
        uid="u-1",
        labels={"agones.dev/fleet": "f"},
    )
    gss = scheme.decode(manifest)
    assert isinstance(gss, GameServerSet)
    gs = scheme.encode(gss.game_server())
    assert gs["metadata"] == {
        "generateName": "gss-",
        "namespace": "default",
        "labels": {"a": "b", "agones.dev/gameserverset": "gss", "agones.dev/fleet": "f"},
        "ownerReferences": [
            {
                "apiVersion": "agones.dev/v1",
                "kind": "GameServerSet",
                "name": "gss",
                "uid": "u-1",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    assert gs["spec"]["scheduling"] == "Distributed"
    assert gs["spec"]["ports"] == manifest["spec"]["template"]["spec"]["ports"]
    # the parent is not changed
    assert scheme.encode(gss) == manifest


def test_game_server_without_fleet_label_gets_empty_one(scheme: Scheme) -> None:
    gss = scheme.decode(game_server_set())
    assert isinstance(gss, GameServerSet)
    assert scheme.encode(gss.game_server())["metadata"]["labels"]["agones.dev/fleet"] == ""


def test_game_server_set_from_fleet(scheme: Scheme) -> None:
    manifest = fleet(
        {
            "scheduling": "Packed",
            "allocationOverflow": {"labels": {"o": "v"}},
            "priorities": [{"type": "Counter", "key": "rooms", "order": "Ascending"}],
        },
        uid="f-1",
    )
    flt = scheme.decode(manifest)
    assert isinstance(flt, Fleet)
    gss = flt.game_server_set(FeatureGates())
    owner = controller_of(gss.metadata)  # type: ignore[arg-type]
    assert owner is not None and (owner.kind, owner.name, owner.uid) == ("Fleet", "fleet", "f-1")
    got = scheme.encode(gss)
    assert got["metadata"]["generateName"] == "fleet-"
    assert got["metadata"]["labels"] == {"agones.dev/fleet": "fleet"}
    assert got["spec"]["template"] == manifest["spec"]["template"]
    assert got["spec"]["allocationOverflow"] == {"labels": {"o": "v"}}
    assert got["spec"]["priorities"] == manifest["spec"]["priorities"]
    off = flt.game_server_set(FeatureGates().with_values(CountsAndLists=False))
    assert "priorities" not in scheme.encode(off)["spec"]
