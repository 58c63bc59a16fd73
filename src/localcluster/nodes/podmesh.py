"""Pod-to-pod and pod-to-Service TCP inside pods' network namespaces (what the CNI's routes and
kube-proxy's rules give a pod on a cluster), on loopback only.

A pod in a network namespace of its own has only its `lo`: every 127.x address there is its own, so
another pod's address (`127.254.x.y`, relayed on the host by its kubelet) or a Service's ClusterIP
(served on the host by `serviceproxy`) would loop back into the pod itself. `PodMesh` therefore
listens, inside each running pod's namespace, on every other pod's `podIP:containerPort` and every
Service's `clusterIP:port` (TCP), relaying each connection to the same address on the host, where
the real listener is. `desired_relays(pods, services)` is the pure part; a pod gets no relay on its
own address nor on a port it serves itself (`served_ports`: its declared ports, the ports its
probes check, and the Agones SDK sidecar's gRPC and HTTP ports, which the sidecar binds on all
addresses without declaring them): a relay there would take the port its own server binds.
Relays come and go with pods and Services: `MeshRelays` keeps the union of `pod_relays` and
`service_relays` from the informers' events, one object at a time (after any sequence of events it
equals `desired_relays` over the objects last seen), and one reconcile pass per burst of events
reopens relays only in the namespaces of pods that have not seen the current union yet. UDP between
pods is not relayed (a pod reaches UDP game servers through their node's address and host port).
"""

from __future__ import annotations

import asyncio
import collections
import functools
import ipaddress
from collections.abc import Callable
from typing import Any

import structlog

from ...client.versioned.resources import PODS, SERVICES
from ...informers import ResourceEventHandlerFuncs, SharedInformerFactory
from .containers import SIDECAR_NAME
from .podports import POD_CIDR
from .podrunner import PodRunner

log = structlog.get_logger("agones.localcluster.nodes.podmesh")
Obj = dict[str, Any]
Relay = tuple[str, int]


def _tcp_ports(pod: Obj) -> set[int]:
    spec = pod.get("spec") or {}
    every = [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    return {
        int(p["containerPort"])
        for c in every
        for p in c.get("ports") or []
        if p.get("containerPort") and (p.get("protocol") or "TCP") == "TCP"
    }


SDK_PORT_FLAGS = ("--grpc-port=", "--http-port=")
SDK_PORT_DEFAULTS = (9357, 9358)
"""The SDK sidecar's gRPC and HTTP ports: from its flags, else Agones' defaults."""


def _int_port(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.isdigit():
        return int(value)
    return None


def served_ports(pod: Obj) -> set[int]:
    """The TCP ports the pod's own processes listen on, as far as its spec tells."""
    spec = pod.get("spec") or {}
    every = [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
    out = _tcp_ports(pod)
    for c in every:
        for kind in ("livenessProbe", "readinessProbe", "startupProbe"):
            probe = c.get(kind) or {}
            for action in ("httpGet", "tcpSocket"):
                port = _int_port((probe.get(action) or {}).get("port"))
                if port is not None:
                    out.add(port)
        if c.get("name") == SIDECAR_NAME:
            args = [str(a) for a in c.get("args") or []]
            for flag, default in zip(SDK_PORT_FLAGS, SDK_PORT_DEFAULTS, strict=True):
                given = [a.removeprefix(flag) for a in args if a.startswith(flag)]
                port = _int_port(given[-1]) if given else default
                if port is not None:
                    out.add(port)
    return out


@functools.lru_cache(maxsize=8192)
def _address_kind(ip: str) -> str:
    """ "pod" for a POD_CIDR address, "loopback" for another loopback one, "" for the rest."""
    try:
        address = ipaddress.ip_address(ip)
    except ValueError:
        return ""
    return "pod" if address in POD_CIDR else "loopback" if address.is_loopback else ""


def pod_relays(pod: Obj) -> set[Relay]:
    """The (podIP, port) pairs a running pod serves on TCP, when its address is a pod address."""
    ip = (pod.get("status") or {}).get("podIP")
    if not ip or (pod.get("metadata") or {}).get("deletionTimestamp"):
        return set()
    return {(ip, port) for port in _tcp_ports(pod)} if _address_kind(ip) == "pod" else set()


def service_relays(svc: Obj) -> set[Relay]:
    """A Service's (clusterIP, port) pairs on TCP, when its ClusterIP is a loopback address."""
    spec = svc.get("spec") or {}
    ip = spec.get("clusterIP")
    if not ip or ip == "None" or _address_kind(ip) == "":
        return set()
    return {
        (ip, int(p["port"]))
        for p in spec.get("ports") or []
        if p.get("port") and (p.get("protocol") or "TCP") == "TCP"
    }


def desired_relays(pods: list[Obj], services: list[Obj]) -> set[Relay]:
    """Every (address, port) a pod may dial: pods' own addresses and Services' ClusterIPs."""
    out: set[Relay] = set()
    for pod in pods:
        out |= pod_relays(pod)
    for svc in services:
        out |= service_relays(svc)
    return out


def _key(kind: str, obj: Obj) -> tuple[str, str, str]:
    md = obj.get("metadata") or {}
    return (kind, md.get("namespace") or "", md.get("name") or "")


class MeshRelays:
    """`desired_relays` kept from events: `set_pod` / `set_service` / `remove` per object."""

    def __init__(self) -> None:
        self.relays: set[Relay] = set()
        self.version = 0
        """Bumped whenever `relays` changes."""
        self._by_object: dict[tuple[str, str, str], set[Relay]] = {}
        self._count: collections.Counter[Relay] = collections.Counter()

    def set_pod(self, pod: Obj) -> None:
        self._set(_key("Pod", pod), pod_relays(pod))

    def set_service(self, svc: Obj) -> None:
        self._set(_key("Service", svc), service_relays(svc))

    def remove(self, kind: str, obj: Obj) -> None:
        self._set(_key(kind, obj), set())

    def _set(self, key: tuple[str, str, str], relays: set[Relay]) -> None:
        before = self._by_object.pop(key, set())
        if relays:
            self._by_object[key] = relays
        if before == relays:
            return
        for relay in before - relays:
            self._count[relay] -= 1
            if self._count[relay] <= 0:
                del self._count[relay]
                self.relays.discard(relay)
        for relay in relays - before:
            self._count[relay] += 1
            self.relays.add(relay)
        self.version += 1


def relays_for(pod: Obj, relays: set[Relay]) -> set[Relay]:
    """The relays one pod gets: none on its own address nor on a port it serves."""
    own_ip = (pod.get("status") or {}).get("podIP")
    own_ports = served_ports(pod)
    return {(ip, port) for ip, port in relays if ip != own_ip and port not in own_ports}


class PodMesh:
    """Keeps each running pod's relays equal to `relays_for` (see the module docstring)."""

    def __init__(self, runners: dict[str, PodRunner], factory: SharedInformerFactory) -> None:
        self.runners = runners
        self.pods = factory.for_resource(PODS)
        self.services = factory.for_resource(SERVICES)
        self.mesh = MeshRelays()
        self._dirty = asyncio.Event()
        self._open: dict[str, dict[Relay, asyncio.AbstractServer]] = {}
        self._synced: dict[str, int] = {}
        """runner uid → the `mesh.version` its relays were last made equal to."""
        self.pods.informer().add_event_handler(self._handler(self.mesh.set_pod, "Pod"))
        self.services.informer().add_event_handler(self._handler(self.mesh.set_service, "Service"))

    def _handler(self, put: Callable[[Obj], None], kind: str) -> ResourceEventHandlerFuncs:
        def changed(obj: Obj) -> None:
            version = self.mesh.version
            put(obj)
            if self.mesh.version != version or self._concerns(obj):
                self._dirty.set()

        def deleted(obj: Any) -> None:
            self.mesh.remove(kind, getattr(obj, "obj", obj))  # a DeletedFinalStateUnknown's last
            self._dirty.set()

        return ResourceEventHandlerFuncs(
            add_func=changed, update_func=lambda _o, new: changed(new), delete_func=deleted
        )

    def _concerns(self, obj: Obj) -> bool:
        """Whether a change that left the relays as they were may still need a pass: the pod of
        a runner with a network namespace (it may have just made it), or one with relays open.
        Other pods (simulated ones, those in the host's namespace) have nothing to reconcile."""
        uid = (obj.get("metadata") or {}).get("uid", "")
        runner = self.runners.get(uid)
        return uid in self._open or (runner is not None and runner.net is not None)

    async def run(self) -> None:
        try:
            while True:
                await self._dirty.wait()
                self._dirty.clear()
                await self.reconcile()
        finally:
            for servers in self._open.values():
                for server in servers.values():
                    server.close()

    async def reconcile(self) -> None:
        for uid in [u for u in self._open if u not in self.runners]:
            self._synced.pop(uid, None)
            for server in self._open.pop(uid).values():
                server.close()
        version = self.mesh.version
        for uid, runner in list(self.runners.items()):
            if runner.net is None or runner.terminating or self._synced.get(uid) == version:
                continue
            current = self._open.setdefault(uid, {})
            wanted = relays_for(runner.pod | {"status": {"podIP": runner.pod_ip}}, self.mesh.relays)
            for relay in [r for r in current if r not in wanted]:
                current.pop(relay).close()
            opened = True
            for relay in sorted(wanted - set(current)):
                try:
                    current[relay] = await runner.net.relay_tcp(relay)
                except OSError as err:
                    opened = False  # tried again on the next pass
                    log.debug("relay not opened", pod=runner.name, relay=relay, error=str(err))
            if opened:
                self._synced[uid] = version
