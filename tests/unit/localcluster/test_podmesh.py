"""Which addresses a pod's namespace relays to the host (`podmesh`), by table."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agones.localcluster.nodes.podmesh import (
    MeshRelays,
    desired_relays,
    relays_for,
    served_ports,
)


def pod(ip: str, *ports: int, protocol: str = "TCP", deleting: bool = False) -> dict[str, Any]:
    md: dict[str, Any] = {"name": ip}
    if deleting:
        md["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {
        "metadata": md,
        "spec": {
            "containers": [
                {"name": "c", "ports": [{"containerPort": p, "protocol": protocol} for p in ports]}
            ]
        },
        "status": {"podIP": ip},
    }


def service(ip: str, *ports: int) -> dict[str, Any]:
    return {"spec": {"clusterIP": ip, "ports": [{"port": p} for p in ports]}}


@pytest.mark.parametrize(
    ("pods", "services", "relays"),
    [
        pytest.param([pod("127.254.0.2", 7000)], [], {("127.254.0.2", 7000)}, id="pod-port"),
        pytest.param([pod("127.0.0.5", 7000)], [], set(), id="node-address-pod"),
        pytest.param([pod("127.254.0.2", 7000, protocol="UDP")], [], set(), id="udp"),
        pytest.param([pod("127.254.0.2", 7000, deleting=True)], [], set(), id="terminating"),
        pytest.param(
            [],
            [service("127.240.0.9", 80, 81)],
            {("127.240.0.9", 80), ("127.240.0.9", 81)},
            id="svc",
        ),
        pytest.param([], [service("None", 80)], set(), id="headless"),
        pytest.param([], [service("10.0.0.1", 80)], set(), id="not-loopback"),
    ],
)
def test_desired_relays(pods: list[Any], services: list[Any], relays: set[Any]) -> None:
    assert desired_relays(pods, services) == relays


def test_a_pod_gets_no_relay_on_its_address_or_its_own_ports() -> None:
    relays = {
        ("127.254.0.2", 7000),
        ("127.254.0.3", 7000),
        ("127.254.0.3", 8080),
        ("127.240.0.9", 80),
    }
    me = pod("127.254.0.2", 7000)
    assert relays_for(me, relays) == {("127.254.0.3", 8080), ("127.240.0.9", 80)}


def _game_server_pod(sidecar_args: list[str]) -> dict[str, Any]:
    """A GameServer's pod as the controller builds it: the SDK sidecar declares no port, the game
    declares its game port, and their liveness probes check the sidecar's health port."""
    health = {"httpGet": {"path": "/gshealthz", "port": 8080}}
    return {
        "metadata": {"name": "gs"},
        "spec": {
            "initContainers": [
                {
                    "name": "agones-gameserver-sidecar",
                    "args": sidecar_args,
                    "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080}},
                }
            ],
            "containers": [
                {"name": "game", "ports": [{"containerPort": 7654}], "livenessProbe": health}
            ],
        },
        "status": {"podIP": "127.0.0.5"},
    }


@pytest.mark.parametrize(
    ("spec", "ports"),
    [
        pytest.param(_game_server_pod([]), {7654, 8080, 9357, 9358}, id="sdk-default-ports"),
        pytest.param(
            _game_server_pod(["--grpc-port=9001", "--http-port=9002"]),
            {7654, 8080, 9001, 9002},
            id="sdk-ports-from-flags",
        ),
        pytest.param(
            {
                "spec": {
                    "containers": [{"name": "web", "readinessProbe": {"tcpSocket": {"port": 81}}}]
                }
            },
            {81},
            id="probe-port",
        ),
        pytest.param(
            {
                "spec": {
                    "containers": [{"name": "web", "livenessProbe": {"httpGet": {"port": "http"}}}]
                }
            },
            set(),
            id="named-probe-port-is-a-declared-one",
        ),
    ],
)
def test_served_ports(spec: dict[str, Any], ports: set[int]) -> None:
    assert served_ports(spec) == ports


def test_a_game_server_pod_gets_no_relay_on_its_sidecars_ports() -> None:
    """Another pod serving 8080 (ping, a controller's /live) must not take the port the sidecar
    binds on all addresses in the GameServer's pod."""
    relays = {("127.254.0.3", 8080), ("127.254.0.3", 9357), ("127.254.0.3", 7000)}
    assert relays_for(_game_server_pod([]), relays) == {("127.254.0.3", 7000)}


def named(obj: dict[str, Any], name: str) -> dict[str, Any]:
    return {**obj, "metadata": {**obj.get("metadata", {}), "name": name, "namespace": "default"}}


mesh_pods = st.builds(
    lambda name, ip, ports, deleting: named(pod(ip, *ports, deleting=deleting), name),
    st.sampled_from(["a", "b", "c"]),
    st.sampled_from(["127.254.0.2", "127.254.0.3", "127.0.0.5", "", "not-an-ip"]),
    st.lists(st.sampled_from([80, 7000, 8080]), max_size=2),
    st.booleans(),
)
mesh_services = st.builds(
    lambda name, ip, ports: named(service(ip, *ports), name),
    st.sampled_from(["s", "t"]),
    st.sampled_from(["127.240.0.9", "127.254.0.2", "None", "10.0.0.1"]),
    st.lists(st.sampled_from([80, 7000]), max_size=2),
)
mesh_events = st.lists(
    st.one_of(
        st.tuples(st.just("pod"), mesh_pods),
        st.tuples(st.just("service"), mesh_services),
        st.tuples(st.just("delete-pod"), st.sampled_from(["a", "b", "c"])),
        st.tuples(st.just("delete-service"), st.sampled_from(["s", "t"])),
    ),
    max_size=30,
)


@settings(max_examples=300, deadline=None)
@given(mesh_events)
@example(  # a pod and a Service share a relay; the pod goes, the Service keeps it
    [
        ("pod", named(pod("127.254.0.2", 80), "a")),
        ("service", named(service("127.254.0.2", 80), "s")),
        ("delete-pod", "a"),
    ]
)
def test_mesh_relays_equal_the_recomputation_after_any_sequence_of_events(
    events: list[tuple[str, Any]],
) -> None:
    mesh = MeshRelays()
    pods: dict[str, dict[str, Any]] = {}
    services: dict[str, dict[str, Any]] = {}
    for kind, arg in events:
        before, version = set(mesh.relays), mesh.version
        if kind == "pod":
            pods[arg["metadata"]["name"]] = arg
            mesh.set_pod(arg)
        elif kind == "service":
            services[arg["metadata"]["name"]] = arg
            mesh.set_service(arg)
        elif kind == "delete-pod" and arg in pods:
            mesh.remove("Pod", pods.pop(arg))
        elif kind == "delete-service" and arg in services:
            mesh.remove("Service", services.pop(arg))
        assert mesh.relays == desired_relays(list(pods.values()), list(services.values()))
        if mesh.relays != before:
            assert mesh.version > version
