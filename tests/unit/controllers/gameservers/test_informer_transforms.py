"""What the GameServer controllers' caches keep of pods and nodes (everything they read, nothing
else: the typed read models of `apis.core.v1`), and that the shared factory's informers decode into
them and strip managedFields."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from agones.apis.core.v1 import Node, Pod
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


def cached(obj: dict[str, Any], kind: type[Any]) -> dict[str, Any]:
    """What an informer of these caches holds for `obj`: decoded into the read model (as the
    informer's StructDecoder does), managedFields stripped, seen back as JSON."""
    typed = transform_strip_managed_fields(msgspec.json.decode(json.dumps(obj), type=kind))
    kept: dict[str, Any] = msgspec.to_builtins(typed)
    return kept


def test_pod_keeps_metadata_node_name_and_what_health_reads() -> None:
    original = pod()
    kept = cached(original, Pod)
    assert kept["metadata"] == {
        k: v for k, v in original["metadata"].items() if k != "managedFields"
    }
    assert kept["spec"] == {"nodeName": "node-1"}  # containers and volumes are not kept
    assert kept["status"] == {
        "phase": "Running",
        "podIPs": [{"ip": "10.0.0.1"}],
        "containerStatuses": [{"name": "game", "state": {"running": {}}}],
        "conditions": [{"type": "Ready", "status": "True"}],
    }
    assert original == pod()  # the input is untouched


def test_unscheduled_pod_has_no_node_name() -> None:
    original = pod()
    del original["spec"]["nodeName"]
    assert cached(original, Pod)["spec"] == {}
    assert msgspec.convert(original, Pod).node_name() == ""


def test_null_parts_read_as_empty() -> None:
    typed = msgspec.convert({"metadata": {"name": "p"}, "spec": None, "status": None}, Pod)
    assert (typed.node_name(), typed.pod_ips(), typed.conditions(), typed.phase()) == (
        "",
        [],
        [],
        "",
    )
    assert typed.container_status("game") is None
    bare = msgspec.convert({"metadata": {"name": "n"}, "status": {"addresses": None}}, Node)
    assert (bare.addresses(), bare.unschedulable()) == ([], False)


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
    assert cached(node, Node) == {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "node-1", "resourceVersion": "3"},
        "spec": {"unschedulable": True},
        "status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.2"}]},
    }


def test_the_shared_informers_decode_into_the_read_models_and_strip_managed_fields() -> None:
    factory = SharedInformerFactory(client=None)  # type: ignore[arg-type]
    gs = informers.game_servers(factory).informer()
    assert gs.fifo.transform is transform_strip_managed_fields
    for informer, kind in (
        (informers.game_server_pods(factory).informer(), Pod),
        (informers.nodes(factory).informer(), Node),
    ):
        assert informer.fifo.transform is transform_strip_managed_fields
        raw = json.dumps({"type": "ADDED", "object": {"metadata": {"name": "x"}}}).encode()
        assert isinstance(informer.lister_watcher.decoder.decode_event(raw).object, kind)
    assert informers.game_servers(factory).informer() is gs  # asking again changes nothing
