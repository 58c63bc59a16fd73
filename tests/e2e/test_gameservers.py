"""GameServer lifecycle end to end (issue 6, "Must show").

Against the local stack by default; with KUBECONFIG against any cluster running Agones (tests that
need local processes or the controller's process skip there). Simulated GameServers (no process)
behave as simple-game-server does with the same flags.
"""

from __future__ import annotations

import collections
import socket
import time
from typing import Any

import pytest

from tests.e2e.framework import Framework, game_server, tcp, udp

pytestmark = [pytest.mark.cluster, pytest.mark.timeout(180)]


def host_port(gs: dict[str, Any], index: int = 0) -> int:
    port: int = gs["status"]["ports"][index]["port"]
    return port


def test_dynamic_udp_port_ready_with_address_and_the_game_answers(framework: Framework) -> None:
    gs = framework.create_ready(game_server("dynamic-udp", simulate=False))
    status = gs["status"]
    assert status["address"]
    assert status["nodeName"]
    port = host_port(gs)
    assert status["ports"][0]["name"] == "default"
    assert gs["spec"]["ports"][0]["hostPort"] == port
    if framework.local:
        low = framework.stack.stack.options.min_port  # type: ignore[union-attr]
        assert low <= port <= low + 999
    assert udp(status["address"], port, "hello") == "ACK: hello\n"


def test_sdk_shutdown_removes_pod_and_game_server_and_frees_the_port(
    framework: Framework,
) -> None:
    name = "shutdown"
    gs = framework.create_ready(
        game_server(name, args=["-automaticShutdownDelaySec=1"], simulate=False)
    )
    port, address = host_port(gs), gs["status"]["address"]
    assert framework.pod(name) is not None
    assert udp(address, port, "hello") == "ACK: hello\n"  # the port is in use
    # allocate as the allocator does: state Allocated and the last-allocated annotation
    patch = {
        "metadata": {
            "annotations": {"agones.dev/last-allocated": time.strftime("%Y-%m-%dT%H:%M:%SZ")}
        },
        "status": {"state": "Allocated"},
    }
    resp = framework.api.patch(framework.gs_path(name), patch)
    assert resp.status == 200, resp
    framework.wait("GameServer gone", lambda: framework.get(name) is None, 60)
    framework.wait("pod gone", lambda: framework.pod(name) is None, 30)
    # the host port is free again: another GameServer can take it statically, on any cluster
    again = framework.create_ready(
        game_server(
            "shutdown-again",
            [{"name": "p", "portPolicy": "Static", "containerPort": 7654, "hostPort": port}],
        )
    )
    assert host_port(again) == port
    if framework.local:
        framework.api.delete(framework.gs_path("shutdown-again"))
        framework.wait("pod gone", lambda: framework.pod("shutdown-again") is None, 30)

        def bindable() -> bool:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                try:
                    s.bind((address, port))
                except OSError:
                    return False
                return True

        framework.wait("host port free on the node", bindable, 10)


def test_missed_health_pings_make_the_game_server_unhealthy(framework: Framework) -> None:
    # The kubelet's first liveness probe comes initialDelaySeconds after the game container
    # starts, and it is what starts the sidecar's health checking (as Agones' /gshealthz does). On
    # a loaded machine the Python sidecar can take over a second to listen: with a 1 s delay the
    # first probe was refused, the kubelet stopped the game (blocking further probes while it
    # waited out the game's 15 s exit), health checking never started and the GameServer went
    # Ready -> Shutdown. 5 s leaves the sidecar time to come up; the game stops pinging at once.
    health = {"initialDelaySeconds": 5, "periodSeconds": 1, "failureThreshold": 1}
    # the game takes 15 s to exit on SIGTERM, so the failed liveness probe's SIGTERM cannot finish
    # the pod (and so Shutdown the GameServer) before the sidecar has written Unhealthy
    gs = framework.create_ready(
        game_server(
            "unhealthy", simulate=False, health=health, args=["-gracefulTerminationDelaySec=15"]
        )
    )
    assert udp(gs["status"]["address"], host_port(gs), "UNHEALTHY") == "ACK: UNHEALTHY\n"
    # then the liveness probe stops the game, the pod finishes and the GameServer goes away
    framework.watch_for_state(gs, "Unhealthy", 30)


def test_pod_deleted_behind_the_controller_makes_it_unhealthy(framework: Framework) -> None:
    framework.create_ready(game_server("pod-deleted"))
    framework.delete_pod("pod-deleted")
    framework.wait_state("pod-deleted", "Unhealthy", 60)


def test_static_port(framework: Framework) -> None:
    ports = [{"name": "s", "portPolicy": "Static", "containerPort": 7654, "hostPort": 7123}]
    gs = framework.create_ready(game_server("static", ports))
    assert host_port(gs) == 7123
    assert gs["spec"]["ports"][0]["hostPort"] == 7123


def test_passthrough_port_uses_the_host_port_as_container_port(framework: Framework) -> None:
    gs = framework.create_ready(
        game_server("passthrough", [{"name": "p", "portPolicy": "Passthrough"}])
    )
    port = gs["spec"]["ports"][0]
    assert port["containerPort"] == port["hostPort"] == host_port(gs)
    pod = framework.pod("passthrough")
    assert pod is not None
    game = next(c for c in pod["spec"]["containers"] if c["name"] == "simple-game-server")
    assert game["ports"][0]["containerPort"] == port["hostPort"]


def test_none_port_has_no_host_port(framework: Framework) -> None:
    gs = framework.create_ready(
        game_server("none", [{"name": "n", "portPolicy": "None", "containerPort": 7654}])
    )
    assert "hostPort" not in gs["spec"]["ports"][0]
    pod = framework.pod("none")
    assert pod is not None
    game = next(c for c in pod["spec"]["containers"] if c["name"] == "simple-game-server")
    assert "hostPort" not in game["ports"][0]


def test_tcpudp_port_is_split_and_both_protocols_answer(framework: Framework) -> None:
    ports = [{"name": "gp", "portPolicy": "Dynamic", "containerPort": 7654, "protocol": "TCPUDP"}]
    gs = framework.create_ready(game_server("tcpudp", ports, simulate=False, args=["-tcp=true"]))
    spec_ports = {p["name"]: p for p in gs["spec"]["ports"]}
    assert set(spec_ports) == {"gp-tcp", "gp-udp"}
    assert spec_ports["gp-tcp"]["protocol"] == "TCP"
    assert spec_ports["gp-udp"]["protocol"] == "UDP"
    port = spec_ports["gp-udp"]["hostPort"]
    assert spec_ports["gp-tcp"]["hostPort"] == port
    assert udp(gs["status"]["address"], port, "hello") == "ACK: hello\n"
    assert tcp(gs["status"]["address"], port, "hello") == "ACK TCP: hello\n"


def test_two_game_servers_never_share_a_host_port_on_a_node(framework: Framework) -> None:
    names = [f"many-{i}" for i in range(12)]
    for name in names:
        framework.create(game_server(name))
    ready = [framework.wait_state(name, "Ready", 90) for name in names]
    by_node = collections.defaultdict(list)
    for gs in ready:
        by_node[gs["status"]["nodeName"]].append(host_port(gs))
    for node, ports in by_node.items():
        assert len(ports) == len(set(ports)), (node, ports)
    if framework.local:
        assert_ports_not_handed_out_twice(framework, len(framework.stack.stack.addresses))  # type: ignore[union-attr]


RUNNING = ("Scheduled", "RequestReady", "Ready", "Allocated", "Reserved")


def assert_ports_not_handed_out_twice(framework: Framework, nodes: int) -> None:
    """No two running GameServers share a host port and protocol on a node, and no port went to
    more GameServers (any state: the allocator frees a port on deletion only) than the allocator
    has node maps (one per node). A TCPUDP port's -tcp and -udp halves share their host port."""
    holders: dict[tuple[str, str, int], list[str]] = collections.defaultdict(list)
    uses: collections.Counter[int] = collections.Counter()
    for gs in framework.list():
        status = gs.get("status") or {}
        name = gs["metadata"]["name"]
        dynamic = [
            p
            for p in gs["spec"].get("ports") or []
            if p.get("portPolicy", "Dynamic") == "Dynamic" and p.get("hostPort")
        ]
        uses.update({p["hostPort"] for p in dynamic})
        if status.get("nodeName") and status.get("state") in RUNNING:
            for p in dynamic:
                holders[(status["nodeName"], p.get("protocol", "UDP"), p["hostPort"])].append(name)
    shared = {k: v for k, v in holders.items() if len(v) > 1}
    assert not shared, shared
    assert all(n <= nodes for n in uses.values()), uses.most_common(3)


def test_controller_killed_and_restarted_mid_flight_converges(
    framework: Framework, local_stack: Any
) -> None:
    nodes = len(local_stack.stack.addresses)
    names = [f"restart-{i}" for i in range(30)]
    for name in names[:20]:
        framework.create(game_server(name))

    def some_in_flight() -> bool:
        states = [
            (gs.get("status") or {}).get("state", "")
            for gs in framework.list()
            if gs["metadata"]["name"].startswith("restart-")
        ]
        return any(state in RUNNING for state in states)  # the first pods are up

    framework.wait("some GameServers under way", some_in_flight, 30, interval=0.02)
    local_stack.call(local_stack.stack.stop_controller(kill=True))  # SIGKILL, mid-flight
    for name in names[20:]:
        framework.create(game_server(name))  # admitted by the webhook; nobody works on them yet
    local_stack.call(local_stack.stack.start_controller())
    ready = [framework.wait_state(name, "Ready", 120) for name in names]
    # the rebuilt port map keeps new allocations off every port in use
    later = [framework.create_ready(game_server(f"after-restart-{i}")) for i in range(5)]
    assert len(ready) + len(later) == 35
    assert_ports_not_handed_out_twice(framework, nodes)


def test_invalid_game_server_is_refused_by_the_webhook(framework: Framework) -> None:
    gs = game_server(
        "invalid",
        [
            {"name": "a", "portPolicy": "Dynamic", "containerPort": 7654, "hostPort": 7000},
            {"name": "b", "portPolicy": "Passthrough", "containerPort": 7655},
        ],
    )
    resp = framework.api.post(framework.gs_path(), gs)
    assert resp.status == 422, resp
    message = resp.body["message"]
    assert "HostPort cannot be specified with a Dynamic or Passthrough PortPolicy" in message
    assert "ContainerPort cannot be specified with Passthrough PortPolicy" in message
    assert 'admission webhook "validations.agones.dev" denied the request' in message
    assert framework.get("invalid") is None


def test_two_simple_game_servers_on_the_same_container_port_answer_on_their_own_ports(
    framework: Framework, local_stack: Any
) -> None:
    first = framework.create(game_server("same-port-a", simulate=False))
    second = framework.create(game_server("same-port-b", simulate=False))
    del first, second
    a = framework.wait_state("same-port-a", "Ready")
    b = framework.wait_state("same-port-b", "Ready")
    assert a["spec"]["ports"][0]["containerPort"] == b["spec"]["ports"][0]["containerPort"] == 7654
    if a["status"]["nodeName"] == b["status"]["nodeName"]:
        assert host_port(a) != host_port(b)
    for gs in (a, b):
        reply = udp(gs["status"]["address"], host_port(gs), "GAMESERVER")
        assert reply == f"NAME: {gs['metadata']['name']}\n"
        reply = udp("127.0.0.1", host_port(gs), "GAMESERVER")
        assert reply == f"NAME: {gs['metadata']['name']}\n"


def test_static_port_taken_on_every_node_leaves_the_pod_unschedulable_until_freed(
    framework: Framework, local_stack: Any
) -> None:
    nodes = len(local_stack.stack.addresses)
    ports = [{"name": "s", "portPolicy": "Static", "containerPort": 7654, "hostPort": 7125}]
    names = [f"static-full-{i}" for i in range(nodes + 1)]
    for name in names[:-1]:
        framework.create_ready(game_server(name, ports))
    framework.create(game_server(names[-1], ports))

    def unschedulable() -> str:
        pod = framework.pod(names[-1]) or {}
        for cond in (pod.get("status") or {}).get("conditions") or []:
            if cond["type"] == "PodScheduled" and cond.get("reason") == "Unschedulable":
                return str(cond["message"])
        return ""

    message = framework.wait("Unschedulable", unschedulable, 30)
    assert "didn't have free ports for the requested pod ports" in message
    assert framework.get(names[-1])["status"]["state"] != "Ready"  # type: ignore[index]
    framework.api.delete(framework.gs_path(names[0]))
    framework.wait_state(names[-1], "Ready", 60)
