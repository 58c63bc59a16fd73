"""What the GameServer controllers' caches keep of pods and nodes (everything they read, nothing
else), and that the informers of the shared factory carry those transforms."""

from __future__ import annotations

from typing import Any

from agones.controllers.gameservers import informers
from agones.informers import SharedInformerFactory
from agones.informers.transform import transform_strip_managed_fields

MANAGED = [{"manager": "kubelet", "operation": "Update"}]


def pod() -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "gs",
            "namespace": "default",
            "resourceVersion": "7",
            "labels": {"agones.dev/role": "gameserver"},
            "annotations": {"agones.dev/container": "game"},
            "ownerReferences": [
                {"kind": "GameServer", "name": "gs", "uid": "u", "controller": True}
            ],
            "deletionTimestamp": "2026-01-01T00:00:00Z",
            "managedFields": MANAGED,
        },
        "spec": {
            "nodeName": "node-1",
            "containers": [{"name": "game", "image": "game:1", "env": [{"name": "A"}]}],
            "volumes": [{"name": "v"}],
        },
        "status": {
            "phase": "Running",
            "podIPs": [{"ip": "10.0.0.1"}],
            "containerStatuses": [{"name": "game", "state": {"running": {}}}],
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def test_pod_keeps_metadata_node_name_and_status() -> None:
    original = pod()
    kept = informers.transform_game_server_pod(original)
    assert kept["metadata"] == {
        k: v for k, v in original["metadata"].items() if k != "managedFields"
    }
    assert kept["spec"] == {"nodeName": "node-1"}
    assert kept["status"] == original["status"]
    assert original == pod()  # the input is untouched


def test_unscheduled_pod_has_an_empty_spec() -> None:
    original = pod()
    del original["spec"]["nodeName"]
    assert informers.transform_game_server_pod(original)["spec"] == {}


def test_node_keeps_metadata_schedulability_and_addresses() -> None:
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node-1", "resourceVersion": "3", "managedFields": MANAGED},
        "spec": {"unschedulable": True, "podCIDR": "10.0.0.0/24"},
        "status": {
            "addresses": [{"type": "InternalIP", "address": "10.0.0.2"}],
            "images": [{"names": ["big"], "sizeBytes": 1}],
        },
    }
    assert informers.transform_node(node) == {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node-1", "resourceVersion": "3"},
        "spec": {"unschedulable": True},
        "status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.2"}]},
    }


def test_the_shared_informers_carry_the_transforms() -> None:
    factory = SharedInformerFactory(client=None)  # type: ignore[arg-type]
    gs = informers.game_servers(factory).informer()
    assert gs.fifo.transform is transform_strip_managed_fields
    assert informers.game_server_pods(factory).informer().fifo.transform is (
        informers.transform_game_server_pod
    )
    assert informers.nodes(factory).informer().fifo.transform is informers.transform_node
    assert informers.game_servers(factory).informer() is gs  # asking again changes nothing
