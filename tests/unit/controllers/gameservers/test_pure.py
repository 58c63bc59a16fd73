"""Pure decisions: node address choice, address/port application, pod health predicates."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from agones.apis.agones.v1.gameserver import GameServer
from agones.apis.core.v1 import Node, Pod
from agones.controllers.gameservers.gameservers import (
    AddressError,
    address,
    apply_game_server_address_and_port,
    is_game_server_pod,
)
from agones.controllers.gameservers.health import (
    OutOfSync,
    is_unhealthy,
    skip_unhealthy_game_container,
)
from agones.controllers.gameservers.pernodecounter import _deltas
from agones.featuregates import FeatureGates

GATES = FeatureGates()
OFF = FeatureGates().with_values(SidecarContainers=False)


def node(*addresses: tuple[str, str]) -> Node:
    return msgspec.convert(
        {
            "metadata": {"name": "n"},
            "status": {"addresses": [{"type": t, "address": a} for t, a in addresses]},
        },
        Node,
    )


@pytest.mark.parametrize(
    ("addresses", "want"),
    [
        pytest.param(
            [("InternalIP", "10.0.0.1"), ("ExternalDNS", "n.example"), ("ExternalIP", "1.2.3.4")],
            "n.example",
            id="external-dns-first",
        ),
        pytest.param(
            [("InternalIP", "10.0.0.1"), ("ExternalIP", "1.2.3.4"), ("InternalDNS", "n.local")],
            "1.2.3.4",
            id="external-ip-next",
        ),
        pytest.param(
            [("InternalIP", "10.0.0.1"), ("InternalDNS", "n.local")],
            "n.local",
            id="internal-dns-before-internal-ip",
        ),
        pytest.param(
            [("Hostname", "n"), ("InternalIP", "10.0.0.1")], "10.0.0.1", id="internal-ip-last"
        ),
        pytest.param(
            [("ExternalIP", "not-an-ip"), ("InternalIP", "10.0.0.1")],
            "10.0.0.1",
            id="unparseable-ip-skipped",
        ),
        pytest.param([("InternalIP", "::1")], "::1", id="ipv6"),
    ],
)
def test_address(addresses: list[tuple[str, str]], want: str) -> None:
    assert address(node(*addresses)) == want


def test_address_none() -> None:
    with pytest.raises(AddressError, match="Could not find an address for Node: n"):
        address(node(("Hostname", "n")))


def gs(ports: list[dict[str, Any]]) -> GameServer:
    return msgspec.convert(
        {"metadata": {"name": "g"}, "spec": {"ports": ports}, "status": {"state": "Starting"}},
        GameServer,
    )


def test_apply_address_and_port() -> None:
    pod = {"spec": {"nodeName": "n"}, "status": {"podIPs": [{"ip": "10.1.0.5"}, {"ip": "fd::5"}]}}
    out = apply_game_server_address_and_port(
        gs(
            [
                {"name": "a", "portPolicy": "Dynamic", "hostPort": 7001, "containerPort": 1},
                {"name": "b", "portPolicy": "None", "containerPort": 9},
            ]
        ),
        node(("InternalIP", "10.0.0.1"), ("Hostname", "n")),
        msgspec.convert(pod, Pod),
        GATES,
    )
    assert msgspec.to_builtins(out.status) == {
        "state": "Starting",
        "ports": [{"name": "a", "port": 7001}, {"name": "b", "port": 9}],
        "address": "10.0.0.1",
        "addresses": [
            {"type": "InternalIP", "address": "10.0.0.1"},
            {"type": "Hostname", "address": "n"},
            {"type": "PodIP", "address": "10.1.0.5"},
            {"type": "PodIP", "address": "fd::5"},
        ],
        "nodeName": "n",
    }


def test_apply_address_without_address_names_the_game_server() -> None:
    with pytest.raises(AddressError, match="GameServer g"):
        apply_game_server_address_and_port(gs([]), node(), Pod(), GATES)


OWNED = {
    "metadata": {
        "labels": {"agones.dev/role": "gameserver"},
        "ownerReferences": [{"kind": "GameServer", "name": "g", "uid": "u", "controller": True}],
        "annotations": {"agones.dev/container": "game"},
    }
}


@pytest.mark.parametrize(
    ("pod", "want"),
    [
        pytest.param(OWNED, True, id="owned"),
        pytest.param(
            {"metadata": {"labels": {"agones.dev/role": "gameserver"}}}, False, id="no-owner"
        ),
        pytest.param({"metadata": {**OWNED["metadata"], "labels": {}}}, False, id="no-role-label"),
        pytest.param(
            {
                "metadata": {
                    **OWNED["metadata"],
                    "ownerReferences": [{"kind": "ReplicaSet", "name": "r", "controller": True}],
                }
            },
            False,
            id="other-controller",
        ),
    ],
)
def test_is_game_server_pod(pod: dict[str, Any], want: bool) -> None:
    assert is_game_server_pod(msgspec.convert(pod, Pod)) is want


def pod_with(status: dict[str, Any], annotations: dict[str, str] | None = None) -> Pod:
    meta = {**OWNED["metadata"], "annotations": {**OWNED["metadata"]["annotations"]}}
    meta["annotations"].update(annotations or {})
    return msgspec.convert({"metadata": meta, "status": status}, Pod)


TERMINATED = {"containerStatuses": [{"name": "game", "state": {"terminated": {"exitCode": 1}}}]}
RESTARTED = {
    "containerStatuses": [
        {
            "name": "game",
            "containerID": "c2",
            "state": {"running": {}},
            "lastState": {"terminated": {"exitCode": 1}},
        }
    ]
}
NO_PORTS = {
    "conditions": [
        {
            "type": "PodScheduled",
            "reason": "Unschedulable",
            "message": "0/3 nodes are available: 3 node(s) didn't have free ports",
        }
    ]
}


@pytest.mark.parametrize(
    ("status", "gates", "want"),
    [
        pytest.param({"reason": "Evicted"}, GATES, True, id="evicted"),
        pytest.param({"reason": "Evicted"}, OFF, True, id="evicted-no-sidecars"),
        pytest.param(NO_PORTS, OFF, True, id="no-free-ports"),
        pytest.param(NO_PORTS, GATES, False, id="no-free-ports-ignored-with-sidecars"),
        pytest.param(TERMINATED, OFF, True, id="container-terminated"),
        pytest.param(RESTARTED, OFF, True, id="container-restarted"),
        pytest.param(TERMINATED, GATES, False, id="container-ignored-with-sidecars"),
        pytest.param({"phase": "Failed"}, GATES, True, id="failed-phase"),
        pytest.param({"phase": "Failed"}, OFF, False, id="failed-phase-needs-sidecars"),
        pytest.param({"phase": "Running"}, GATES, False, id="healthy"),
    ],
)
def test_is_unhealthy(status: dict[str, Any], gates: FeatureGates, want: bool) -> None:
    assert is_unhealthy(pod_with(status), gates) is want


def owned_gs(state: str, ready_id: str = "") -> GameServer:
    annotations = {"agones.dev/ready-container-id": ready_id} if ready_id else {}
    return msgspec.convert(
        {
            "metadata": {"name": "g", "uid": "u", "annotations": annotations},
            "spec": {"container": "game"},
            "status": {"state": state},
        },
        GameServer,
    )


@pytest.mark.parametrize(
    ("state", "ready_id", "status", "want"),
    [
        pytest.param("Scheduled", "", RESTARTED, True, id="before-ready-restart-skipped"),
        pytest.param("Ready", "c2", RESTARTED, True, id="ready-container-is-the-restarted-one"),
        pytest.param("Ready", "c1", RESTARTED, False, id="restart-after-ready"),
        pytest.param("Ready", "c1", TERMINATED, False, id="terminated-after-ready"),
    ],
)
def test_skip_unhealthy_game_container(
    state: str, ready_id: str, status: dict[str, Any], want: bool
) -> None:
    annotations = {"agones.dev/ready-container-id": ready_id} if ready_id else {}
    pod = pod_with(status, annotations)
    assert skip_unhealthy_game_container(owned_gs(state, ready_id), pod, OFF) is want


def test_skip_unhealthy_out_of_sync() -> None:
    with pytest.raises(OutOfSync):
        skip_unhealthy_game_container(owned_gs("Ready", "c1"), pod_with(RESTARTED), OFF)


@pytest.mark.parametrize(
    ("old", "new", "want"),
    [
        pytest.param(None, "Ready", (1, 0), id="add-ready"),
        pytest.param("Ready", "Allocated", (-1, 1), id="allocate"),
        pytest.param("Allocated", None, (0, -1), id="delete-allocated"),
        pytest.param("Scheduled", "RequestReady", (0, 0), id="unrelated"),
    ],
)
def test_per_node_counter_deltas(old: str | None, new: str | None, want: tuple[int, int]) -> None:
    from agones.apis.agones.v1.gameserver import GameServerState

    o = GameServerState(old) if old else None
    n = GameServerState(new) if new else None
    assert _deltas(o, n) == want
