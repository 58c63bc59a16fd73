"""Updates: the apiserver's schema checks always run; each webhook's UPDATE rules as Agones has them
(GameServer: none, GameServerSet: name + immutable template, Fleet: the create rules again)."""

from __future__ import annotations

import copy

from agones.apis.scheme import Scheme
from agones.featuregates import FeatureGates

from .manifests import fleet, game_server, game_server_set


def _stored(scheme: Scheme, manifest: dict) -> dict:  # type: ignore[type-arg]
    obj = scheme.decode(manifest)
    scheme.apply_defaults(obj, FeatureGates())
    return scheme.encode(obj)


def test_game_server_update_skips_webhook_rules(scheme: Scheme) -> None:
    stored = _stored(scheme, game_server())
    old = scheme.decode(stored)
    allocated = copy.deepcopy(stored)
    # The port allocator sets hostPort on a Dynamic port: forbidden at create, fine on update.
    allocated["spec"]["ports"][0]["hostPort"] = 7001
    allocated["status"]["state"] = "Scheduled"
    assert scheme.admit(allocated, FeatureGates(), old=old).errors == []
    assert scheme.admit(allocated, FeatureGates()).errors[0].field == "spec.ports[0].hostPort"


def test_game_server_update_still_checks_schema(scheme: Scheme) -> None:
    stored = _stored(scheme, game_server())
    old = scheme.decode(stored)
    bad = copy.deepcopy(stored)
    bad["spec"]["ports"][0]["hostPort"] = 70000
    errors = scheme.admit(bad, FeatureGates(), old=old).errors
    assert [(e.field, e.reason) for e in errors] == [
        ("spec.ports[0].hostPort", "FieldValueInvalid")
    ]


def test_fleet_update_runs_webhook_rules(scheme: Scheme) -> None:
    stored = _stored(scheme, fleet())
    old = scheme.decode(stored)
    scaled = copy.deepcopy(stored)
    scaled["spec"]["replicas"] = 10
    assert scheme.admit(scaled, FeatureGates(), old=old).errors == []
    bad = copy.deepcopy(stored)
    bad["spec"]["strategy"]["rollingUpdate"]["maxSurge"] = "0%"
    errors = scheme.admit(bad, FeatureGates(), old=old).errors
    assert [e.field for e in errors] == ["spec.strategy.rollingUpdate.maxSurge"]


def test_game_server_set_update_checks_name_and_template_only(scheme: Scheme) -> None:
    old = scheme.decode(game_server_set())
    # A rule only checked on create (priorities gate) is not re-checked on update.
    with_priorities = game_server_set({"priorities": [{"type": "Counter", "key": "k"}]})
    gates = FeatureGates().with_values(CountsAndLists=False)
    assert scheme.admit(with_priorities, gates, old=old).errors == []
    assert [e.field for e in scheme.admit(with_priorities, gates).errors] == ["spec.priorities"]


def test_empty_enum_strings_read_as_unset_only_through_a_mutating_webhook(scheme: Scheme) -> None:
    manifest = game_server({"ports": [{"portPolicy": "", "protocol": "", "containerPort": 1}]})
    admission = scheme.admit(manifest, FeatureGates())
    assert admission.errors == []
    assert scheme.encode(admission.obj)["spec"]["ports"][0]["portPolicy"] == "Dynamic"
    # No webhook decodes an update (GameServer) or a GameServerSet: the schema sees "".
    old = scheme.decode(_stored(scheme, game_server()))
    assert [e.reason for e in scheme.admit(manifest, FeatureGates(), old=old).errors] == [
        "FieldValueNotSupported",
        "FieldValueNotSupported",
    ]
    gss = scheme.admit(game_server_set({"scheduling": ""}), FeatureGates())
    assert [str(e) for e in gss.errors] == [
        'spec.scheduling: Unsupported value: "": supported values: "Packed", "Distributed"'
    ]
