"""A userspace kube-proxy for the local cluster: Service ClusterIPs (loopback, `SERVICE_CIDR`) that
answer.

`ServiceProxy` watches Services and Endpoints. For every port of every Service whose ClusterIP is a
loopback address (and so bindable here without creating an interface) it listens on
`<clusterIP>:<port>` (TCP: `relay.relay_server`; UDP: relays each sender's datagrams through a socket of
its own and sends the answers back), and forwards each new connection or sender to one of the ready
addresses of the Service's Endpoints, picked at random as kube-proxy spreads them, on the port whose
name matches. No ready endpoint: the TCP connection is closed, the datagram dropped. LoadBalancer
Services get their ClusterIP as `status.loadBalancer.ingress`, so no LoadBalancer address is ever a
private or public one. `desired_listeners` is the pure part.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import ipaddress
import random
from typing import Any, cast

import structlog

from ...client.errors import ApiError
from ...client.rest import RESTClient
from ...client.versioned.resources import ENDPOINTS, SERVICES
from ...informers import ResourceEventHandlerFuncs, SharedInformerFactory
from ...relay import relay_server

log = structlog.get_logger("agones.localcluster.nodes.serviceproxy")
Obj = dict[str, Any]
Listener = tuple[str, int, str, str, str]  # (ip, port, protocol, service key, port name)
UDP_IDLE = 60.0
CONNECT_TIMEOUT = 5.0
"""Seconds a TCP connection waits for its endpoint to accept before it is closed."""


def desired_listeners(services: list[Obj]) -> set[Listener]:
    """What to listen on for these Services: their loopback ClusterIPs' ports."""
    out: set[Listener] = set()
    for svc in services:
        spec = svc.get("spec") or {}
        ip = spec.get("clusterIP") or ""
        try:
            if not ipaddress.ip_address(ip).is_loopback:
                continue
        except ValueError:
            continue
        key = f"{svc['metadata']['namespace']}/{svc['metadata']['name']}"
        for p in spec.get("ports") or []:
            if isinstance(p.get("port"), int):
                out.add((ip, p["port"], p.get("protocol", "TCP"), key, p.get("name", "")))
    return out


def pick_endpoint(endpoints: Obj | None, port_name: str, protocol: str) -> tuple[str, int] | None:
    """A random ready address of the Endpoints with the port named `port_name`."""
    choices: list[tuple[str, int]] = []
    for subset in (endpoints or {}).get("subsets") or []:
        ports = [p for p in subset.get("ports") or [] if p.get("protocol", "TCP") == protocol]
        port = next((p for p in ports if p.get("name", "") == port_name), None)
        if port is None and len(ports) == 1:
            port = ports[0]
        if port is None:
            continue
        choices += [(a["ip"], int(port["port"])) for a in subset.get("addresses") or []]
    return random.choice(choices) if choices else None


class _UDPRelay(asyncio.DatagramProtocol):
    def __init__(self, proxy: ServiceProxy, listener: Listener) -> None:
        self.proxy = proxy
        self.listener = listener
        self.transport: asyncio.DatagramTransport | None = None
        self.peers: dict[tuple[str, int], asyncio.DatagramTransport] = {}

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.DatagramTransport, transport)

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        peer = self.peers.get(addr)
        if peer is not None and not peer.is_closing():
            peer.sendto(data)
            return
        target = self.proxy.target(self.listener)
        if target is not None:
            self.proxy.spawn(self._open(addr, target, data))

    async def _open(self, addr: tuple[str, int], target: tuple[str, int], first: bytes) -> None:
        loop = asyncio.get_running_loop()
        relay = self

        class Back(asyncio.DatagramProtocol):
            def datagram_received(self, data: bytes, _addr: tuple[str, int]) -> None:
                if relay.transport is not None:
                    relay.transport.sendto(data, addr)

        transport, _ = await loop.create_datagram_endpoint(Back, remote_addr=target)
        self.peers[addr] = transport
        transport.sendto(first)
        loop.call_later(UDP_IDLE, self._expire, addr, transport)

    def _expire(self, addr: tuple[str, int], transport: asyncio.DatagramTransport) -> None:
        if self.peers.get(addr) is transport:
            del self.peers[addr]
        transport.close()

    def close(self) -> None:
        for peer in self.peers.values():
            peer.close()
        if self.transport is not None:
            self.transport.close()


class ServiceProxy:
    """Makes loopback ClusterIPs answer (see the module docstring)."""

    def __init__(self, client: RESTClient, factory: SharedInformerFactory) -> None:
        self.client = client
        self.services = factory.for_resource(SERVICES)
        self.endpoints = factory.for_resource(ENDPOINTS)
        self._wake = asyncio.Event()
        self._open: dict[Listener, asyncio.Server | _UDPRelay] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        wake = ResourceEventHandlerFuncs(
            add_func=lambda _: self._wake.set(),
            update_func=lambda _o, _n: self._wake.set(),
            delete_func=lambda _: self._wake.set(),
        )
        self.services.informer().add_event_handler(wake)

    def spawn(self, coro: Any) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def target(self, listener: Listener) -> tuple[str, int] | None:
        eps = self.endpoints.informer().get_store().get_by_key(listener[3])
        return pick_endpoint(eps, listener[4], listener[2])

    async def run(self) -> None:
        try:
            while True:
                await self._wake.wait()
                self._wake.clear()
                services = list(self.services.informer().get_store().list())
                await self._reconcile(desired_listeners(services))
                await self._publish_load_balancers(services)
        finally:
            await self.stop()

    async def stop(self) -> None:
        for listener in list(self._open):
            self._close(listener)
        for task in list(self._tasks):
            task.cancel()

    def _close(self, listener: Listener) -> None:
        opened = self._open.pop(listener)
        opened.close()

    async def _reconcile(self, wanted: set[Listener]) -> None:
        for listener in set(self._open) - wanted:
            self._close(listener)
        for listener in wanted - set(self._open):
            ip, port, protocol = listener[:3]
            try:
                if protocol == "UDP":
                    loop = asyncio.get_running_loop()
                    _, relay = await loop.create_datagram_endpoint(
                        functools.partial(_UDPRelay, self, listener), local_addr=(ip, port)
                    )
                    self._open[listener] = relay
                elif protocol == "TCP":
                    self._open[listener] = await relay_server(
                        functools.partial(self._endpoint, listener),
                        ip,
                        port,
                        timeout=CONNECT_TIMEOUT,
                    )
            except OSError as err:
                log.warning(
                    "cannot listen for service", service=listener[3], port=port, error=str(err)
                )

    async def _endpoint(self, listener: Listener) -> tuple[str, int]:
        """Where a connection to `listener` goes now (refused without a ready endpoint)."""
        target = self.target(listener)
        if target is None:
            raise ConnectionRefusedError("no ready endpoint")
        return target

    async def _publish_load_balancers(self, services: list[Obj]) -> None:
        for svc in services:
            spec = svc.get("spec") or {}
            ip = spec.get("clusterIP")
            ingress = ((svc.get("status") or {}).get("loadBalancer") or {}).get("ingress")
            if spec.get("type") != "LoadBalancer" or not ip or ingress == [{"ip": ip}]:
                continue
            md = svc["metadata"]
            body = {"status": {"loadBalancer": {"ingress": [{"ip": ip}]}}}
            with contextlib.suppress(ApiError):
                await self.client.patch(
                    SERVICES, md["name"], body, namespace=md["namespace"], subresource="status"
                )
