"""Which addresses a pod's namespace relays to the host (`podmesh`), by table."""

from __future__ import annotations

from typing import Any

import pytest

from agones.localcluster.nodes.podmesh import desired_relays, relays_for, served_ports


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
