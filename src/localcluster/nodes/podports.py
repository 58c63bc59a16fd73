"""A process pod's addresses and ports on its node: its pod IP and the host ports relayed to it.

* `POD_IPS` (`PodIPs`) hands out `POD_CIDR` addresses, one per pod uid, process-wide.
* `own_ip(pod)`: a pod gets an IP of its own when it declares a container port without a host
  port and is not a GameServer's pod (those keep the node's address, which Agones reports);
  `pod_ports(pod)` are the (containerPort, protocol) pairs relayed there.
* `forward_ports(runner, every)` (the pod in a network namespace): gives the pod its address and
  relays its declared container ports there (`own_ip`), then relays every `hostPort` from the
  node's address (and from 127.0.0.1 when that is free) to its container port.
"""

from __future__ import annotations

import random
import socket
from collections.abc import Callable
from ipaddress import ip_network
from typing import Any, Protocol

import structlog

from .netns import PodNetwork

log = structlog.get_logger("agones.localcluster.nodes.podports")

POD_CIDR = ip_network("127.254.0.0/16")
"""Pods in a network namespace of their own (but GameServers' pods) get an address here, where
their declared container ports are relayed (so Services reach them); loopback only."""


class PodIPs:
    """Hands out `POD_CIDR` addresses, one per pod uid, process-wide (so two local clusters in
    one process never give two pods one address)."""

    def __init__(self) -> None:
        self._by_uid: dict[str, str] = {}
        self._next = random.randrange(POD_CIDR.num_addresses)

    def allocate(self, uid: str, free: Callable[[str], bool] = lambda _ip: True) -> str:
        """An address no pod of this process holds and `free` accepts (another process's local
        cluster may be using it: its ports are then taken)."""
        if uid in self._by_uid:
            return self._by_uid[uid]
        taken = set(self._by_uid.values())
        while True:
            ip = str(POD_CIDR[self._next % (POD_CIDR.num_addresses - 2) + 1])
            self._next += 1
            if ip not in taken and free(ip):
                self._by_uid[uid] = ip
                return ip

    def release(self, uid: str) -> None:
        self._by_uid.pop(uid, None)


POD_IPS = PodIPs()


def bindable(ip: str, ports: list[tuple[int, str]]) -> bool:
    """Whether every (port, protocol) can be bound on `ip` now."""
    for port, protocol in ports:
        kind = socket.SOCK_DGRAM if protocol == "UDP" else socket.SOCK_STREAM
        with socket.socket(socket.AF_INET, kind) as sock:
            try:
                sock.bind((ip, port))
            except OSError:
                return False
    return True


def own_ip(pod: dict[str, Any]) -> bool:
    """Whether the pod gets an IP of its own: in its namespace, declaring a container port
    without a host port, and not a GameServer's pod (those keep the node's address, which
    Agones reports)."""
    labels = pod["metadata"].get("labels") or {}
    return "agones.dev/gameserver" not in labels and bool(pod_ports(pod))


def pod_ports(pod: dict[str, Any]) -> list[tuple[int, str]]:
    spec = pod.get("spec") or {}
    every = [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    ports = [p for c in every for p in c.get("ports") or [] if p.get("containerPort")]
    if all(p.get("hostPort") for p in ports):
        return []
    return sorted({(int(p["containerPort"]), p.get("protocol") or "TCP") for p in ports})


def allocate_pod_ip(uid: str, pod: dict[str, Any]) -> str:
    """The pod's address from `POD_IPS`, one where its declared ports are free."""
    return POD_IPS.allocate(uid, lambda ip: bindable(ip, pod_ports(pod)))


class Runner(Protocol):
    """What this module uses of a `podrunner.PodRunner`."""

    name: str
    uid: str
    pod: dict[str, Any]
    node_ip: str
    pod_ip: str
    net: PodNetwork | None


async def forward_ports(runner: Runner, every: list[dict[str, Any]]) -> None:
    """Relay the pod's ports into its network namespace: its declared container ports at an
    address of its own (when it gets one), and every container's host ports."""
    if runner.net is None:
        return
    if own_ip(runner.pod):
        await _forward_pod_ports(runner, runner.net)
    for c in every:
        for p in c.get("ports") or []:
            if not p.get("hostPort"):
                continue
            await _forward(
                runner,
                runner.net,
                int(p["hostPort"]),
                int(p.get("containerPort") or p["hostPort"]),
                p.get("protocol") or "TCP",
            )


async def _forward_pod_ports(runner: Runner, net: PodNetwork) -> None:
    """Give the pod an address of its own and relay its declared container ports there."""
    ports = pod_ports(runner.pod)
    runner.pod_ip = POD_IPS.allocate(runner.uid, lambda ip: bindable(ip, ports))
    for port, protocol in ports:
        await net.forward_host_port(runner.pod_ip, port, port, protocol)


async def _forward(
    runner: Runner, net: PodNetwork, host_port: int, container_port: int, protocol: str
) -> None:
    await net.forward_host_port(runner.node_ip, host_port, container_port, protocol)
    if runner.node_ip != "127.0.0.1":
        try:
            await net.forward_host_port("127.0.0.1", host_port, container_port, protocol)
        except OSError:
            log.info(
                "127.0.0.1 host port already taken by another node's pod",
                pod=runner.name,
                port=host_port,
            )
