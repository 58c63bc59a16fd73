"""Table tests for the simulated nodes' pure decisions: scheduling, simple-game-server flags,
local programs for images, env resolution and node addresses."""

from __future__ import annotations

from typing import Any

import aiohttp
import pytest

from agones.informers import SharedInformerFactory
from agones.localcluster.apiserver.discovery import VERSION_INFO
from agones.localcluster.nodes.containers import program_for, resolve_env
from agones.localcluster.nodes.scheduler import Scheduler, choose_node, host_ports, node_object
from agones.localcluster.nodes.simulated import GameOptions, game_options
from agones.localcluster.stack import node_addresses

PACKED = {
    "podAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 100,
                "podAffinityTerm": {
                    "labelSelector": {"matchLabels": {"agones.dev/role": "gameserver"}},
                    "topologyKey": "kubernetes.io/hostname",
                },
            }
        ]
    }
}


def pod(
    name: str,
    node: str = "",
    ports: list[tuple[str, int]] = (),  # type: ignore[assignment]
    gameserver: bool = True,
    packed: bool = True,
    phase: str = "Running",
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": "game",
                "ports": [
                    {"containerPort": 7654, "hostPort": p, "protocol": pr} for pr, p in ports
                ],
            }
        ]
    }
    if node:
        spec["nodeName"] = node
    if packed:
        spec["affinity"] = PACKED
    labels = {"agones.dev/role": "gameserver"} if gameserver else {"app": "other"}
    return {
        "metadata": {"name": name, "labels": labels},
        "spec": spec,
        "status": {"phase": phase},
    }


def not_ready(name: str) -> dict[str, Any]:
    node = node_object(name, "127.0.0.9")
    node["status"]["conditions"][0]["status"] = "False"
    return node


NODES = [node_object("n1", "127.0.0.2"), node_object("n2", "127.0.0.3")]


@pytest.mark.parametrize(
    ("new", "nodes", "existing", "expected"),
    [
        (pod("p"), NODES, [], "n1"),
        (pod("p"), NODES, [pod("a", "n2")], "n2"),  # Packed: with the other game servers
        (pod("p", packed=False), NODES, [pod("a", "n1")], "n2"),  # spread: fewest pods
        (pod("p"), NODES, [pod("a", "n2", gameserver=False)], "n1"),  # affinity by labels
        (
            pod("p", ports=[("UDP", 7000)]),
            NODES,
            [pod("a", "n1", [("UDP", 7000)]), pod("b", "n1")],
            "n2",
        ),  # host port taken on n1
        (
            pod("p", ports=[("TCP", 7000)]),
            NODES,
            [pod("a", "n1", [("UDP", 7000)])],
            "n1",
        ),  # same number, other protocol
        (
            pod("p", ports=[("UDP", 7000)]),
            NODES,
            [pod("a", "n1", [("UDP", 7000)]), pod("b", "n2", [("UDP", 7000)])],
            None,
        ),  # no node fits
        (
            pod("p", ports=[("UDP", 7000)]),
            NODES,
            [pod("a", "n1", [("UDP", 7000)], phase="Failed")],
            "n1",
        ),  # finished pods hold nothing
        (pod("p"), [not_ready("n0"), *NODES], [], "n1"),
        (pod("p"), [not_ready("n0")], [], None),
    ],
    ids=[
        "empty",
        "packed",
        "spread",
        "affinity-labels",
        "port-conflict",
        "other-protocol",
        "unschedulable",
        "failed-pod",
        "skip-not-ready",
        "none-ready",
    ],
)
def test_choose_node(
    new: dict[str, Any], nodes: list[dict[str, Any]], existing: list[dict[str, Any]], expected: str
) -> None:
    assert choose_node(new, nodes, existing) == expected


def test_host_ports_include_native_sidecars() -> None:
    p = pod("p", ports=[("UDP", 7001)])
    p["spec"]["initContainers"] = [{"name": "s", "ports": [{"containerPort": 1, "hostPort": 7002}]}]
    assert host_ports(p) == {("UDP", 7001), ("TCP", 7002)}


@pytest.mark.parametrize(
    ("container", "expected"),
    [
        ({}, GameOptions()),
        ({"args": ["-ready=false"]}, GameOptions(ready=False)),
        ({"env": [{"name": "READY", "value": "FALSE"}]}, GameOptions(ready=False)),
        ({"args": ["-readyDelaySec", "3"]}, GameOptions(ready_delay=3)),
        (
            {"args": ["--automaticShutdownDelaySec=5", "-readyIterations=2"]},
            GameOptions(automatic_shutdown_delay=5, ready_iterations=2),
        ),
        ({"args": ["-automaticShutdownDelayMin=1"]}, GameOptions(automatic_shutdown_delay=60)),
        ({"args": ["-readyDelaySec=soon"]}, GameOptions()),
    ],
    ids=["defaults", "not-ready", "env-ready", "ready-delay", "shutdown", "minutes", "bad"],
)
def test_game_options(container: dict[str, Any], expected: GameOptions) -> None:
    assert game_options(container) == expected


@pytest.mark.parametrize(
    ("container", "tail"),
    [
        ({"image": "us-docker.pkg.dev/agones-images/examples/simple-game-server:0.41"}, None),
        ({"image": "simple-game-server", "args": ["-tcp"]}, ["-tcp"]),
        ({"image": "us-docker.pkg.dev/agones-images/release/agones-sdk:1.50.0"}, ["sdkserver"]),
        ({"image": "example.com/game:1"}, "none"),
        ({"image": "x", "command": ["sleep"], "args": ["5"]}, ["sleep", "5"]),
        ({"image": "us-docker.pkg.dev/x/agones-ping:1.57.0-py"}, ["agones", "ping"]),
        ({"image": "r/agones-controller:1", "args": ["controller"]}, ["agones", "controller"]),
        ({"image": "r/agones-extensions:1"}, ["agones", "extensions"]),
        (
            {"image": "r/agones-allocator@sha256:ab", "args": ["allocator", "-v"]},
            ["allocator", "-v"],
        ),
        ({"image": "r/agones-sdk:1", "args": ["--grpc-port=1"]}, ["sdkserver", "--grpc-port=1"]),
        ({"image": "r/agones-ping:1", "command": ["python"]}, ["python"]),
    ],
    ids=[
        "simple-game-server",
        "args-appended",
        "sidecar",
        "unknown-image",
        "command",
        "ping-default-cmd",
        "controller-args-replace-cmd",
        "extensions",
        "allocator-by-digest",
        "sdk-args",
        "command-replaces-entrypoint",
    ],
)
def test_program_for(container: dict[str, Any], tail: Any) -> None:
    argv = program_for(container)
    if tail == "none":
        assert argv is None
        return
    assert argv is not None
    if tail is None:
        assert argv[-1].endswith("examples/simple-game-server")
    else:
        assert argv[-len(tail) :] == tail


def test_resolve_env() -> None:
    p = {
        "metadata": {"name": "gs", "namespace": "ns", "labels": {"a": "b"}},
        "spec": {"nodeName": "n1"},
    }
    container = {
        "env": [
            {"name": "PLAIN", "value": "1"},
            {"name": "NS", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
            {"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}},
            {"name": "IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}},
            {"name": "L", "valueFrom": {"fieldRef": {"fieldPath": "metadata.labels['a']"}}},
        ]
    }
    assert resolve_env(container, p, "127.0.0.2") == {
        "PLAIN": "1",
        "NS": "ns",
        "NODE": "n1",
        "IP": "127.0.0.2",
        "L": "b",
    }


def test_node_addresses_are_loopback_only() -> None:
    assert node_addresses(2, "127.0.0.2") == {
        "agones-local-node-1": "127.0.0.2",
        "agones-local-node-2": "127.0.0.3",
    }
    with pytest.raises(ValueError, match="not a loopback"):
        node_addresses(1, "10.0.0.1")
    with pytest.raises(ValueError, match="not a loopback"):
        node_addresses(2, "127.255.255.255")


@pytest.mark.parametrize(
    ("schema", "errors"),
    [
        (
            {
                "x-kubernetes-int-or-string": True,
                "anyOf": [{"type": "integer"}, {"type": "string"}],
            },
            0,
        ),
        (
            {
                "x-kubernetes-int-or-string": True,
                "anyOf": [{"type": "string"}, {"type": "integer"}],
            },
            2,
        ),
        ({"type": "string", "anyOf": [{"type": "integer"}, {"type": "string"}]}, 2),
    ],
    ids=["int-or-string-pattern", "other-order", "without-int-or-string"],
)
def test_structural_int_or_string_any_of(schema: dict[str, Any], errors: int) -> None:
    """The generated CRDs' IntOrString fields (as apiextensions' isIntOrStringAnyOfPattern)."""
    from agones.localcluster.apiserver.crdschema import structural_errors

    assert len(structural_errors(schema, "spec", root=False)) == errors


def test_unschedulable_message_names_each_reason() -> None:
    from agones.localcluster.nodes.scheduler import NodeUsage, unschedulable_message

    nodes = [*NODES, not_ready("n3")]
    existing = [pod("a", "n1", [("UDP", 7000)]), pod("b", "n2", [("UDP", 7000)])]
    message = unschedulable_message(pod("p", ports=[("UDP", 7000)]), nodes, NodeUsage(existing))
    assert message == (
        "0/3 nodes are available: 2 node(s) didn't have free ports for the requested pod ports, "
        "1 node(s) were not ready."
    )


class _UnreachableClient:
    async def request(self, *_args: Any, **_kw: Any) -> bytes:
        raise aiohttp.ClientConnectionError("connection refused")


async def test_a_bind_that_fails_to_connect_leaves_the_pod_unbound() -> None:
    client: Any = _UnreachableClient()
    scheduler = Scheduler(client, SharedInformerFactory(client))
    unbound = {"metadata": {"name": "p", "namespace": "default", "uid": "uid-1"}, "spec": {}}
    scheduler.cache.add_pod(unbound)
    scheduler.cache.assume_pod(unbound, "node-1")
    assert scheduler.cache.usage.running("node-1") == 1 and not scheduler.cache.pending
    with pytest.raises(aiohttp.ClientConnectionError):
        await scheduler._bind("default", "p", "uid-1", "node-1")
    assert scheduler.cache.assumed == {}
    assert scheduler.cache.usage.running("node-1") == 0
    assert list(scheduler.cache.pending) == ["uid-1"]


def test_nodes_report_the_api_servers_version() -> None:
    node = node_object("n1", "10.0.0.1")
    assert node["status"]["nodeInfo"]["kubeletVersion"] == VERSION_INFO["gitVersion"]
