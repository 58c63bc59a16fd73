"""Host-port allocation for GameServers (Agones `pkg/portallocator/portallocator.go`).

Contract:
* One `PortRangeAllocator` per named range (`default` from `--min-port/--max-port`, more with the
  PortRanges gate). Each keeps an ordered list of "node" maps of taken ports: one map per schedulable
  node at `sync_all` time, most-used first. A port may be handed out once per map, so with N maps at
  most N GameServers share a host port, and the scheduler's host-port check spreads them over nodes.
* `allocate(gs)` never fails: it fills `hostPort` of every Dynamic/Passthrough port of its range (and
  `containerPort` for Passthrough) with free ports taken from the first maps that have them; when the
  maps are full it appends a fresh one (a node the autoscaler may still add). TCPUDP ports become a
  `<name>-tcp` port and an appended `<name>-udp` port sharing the host port. Which free port is
  chosen is random (Agones' Go map order is too), so callers must not rely on particular numbers.
* `deallocate(gs)` frees the ports of a GameServer this allocator handed out or found at
  `sync_all` (registry by UID); anything else is ignored, so it is safe on every delete event.
  Unlike Agones, a TCPUDP pair frees its shared port once, and `sync_all` marks it once.
* `sync_all(game_servers, nodes)` rebuilds the whole state from the caches (at start).
All methods are synchronous and mutate only the allocator (and the GameServer passed to
`allocate`, which must be the caller's own copy); there is no I/O here.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from msgspec import UNSET

from ..apis.agones.v1.gameserver import (
    DEFAULT_PORT_RANGE,
    GameServer,
    GameServerPort,
    PortPolicy,
    Protocol,
)
from ..apis.core.v1 import Node
from ..featuregates import Feature, FeatureGates

_ALLOCATED_POLICIES = (PortPolicy.DYNAMIC, PortPolicy.PASSTHROUGH)


@dataclass(frozen=True)
class PortRange:
    """A named range of host ports, both ends included."""

    min_port: int
    max_port: int


def parse_port_ranges(text: str, gates: FeatureGates) -> dict[str, PortRange]:
    """`--additional-port-ranges` JSON (`{"game": [5000, 6000]}`); empty unless PortRanges is on."""
    if not text or not gates.enabled(Feature.PORT_RANGES):
        return {}
    try:
        raw = json.loads(text)
    except ValueError as err:
        raise ValueError(f"invalid additional port range format: {err}") from None
    if not isinstance(raw, dict):
        raise ValueError("invalid additional port range format: want a JSON object")
    ranges: dict[str, PortRange] = {}
    for name, ports in raw.items():
        if (
            not isinstance(ports, list)
            or len(ports) != 2
            or not all(isinstance(p, int) and not isinstance(p, bool) for p in ports)
        ):
            raise ValueError(f"invalid port range ports for {name}: requires both min and max port")
        ranges[name] = PortRange(ports[0], ports[1])
    return ranges


def _overlaps(a: PortRange, b: PortRange) -> bool:
    # Ranges sharing only an end-point are tolerated, as in Agones.
    return max(a.min_port, b.min_port) < min(a.max_port, b.max_port)


def validate_port_ranges(ranges: Mapping[str, PortRange]) -> list[str]:
    """Agones' controller config checks: both ends > 0, max ≥ min, no overlaps."""
    errors: list[str] = []
    for name, r in ranges.items():
        ctx = "" if name == DEFAULT_PORT_RANGE else f" for port range {name}"
        if r.min_port <= 0 or r.max_port <= 0:
            errors.append("min Port and Max Port values are required" + ctx)
        if r.max_port < r.min_port:
            errors.append("max Port cannot be set less that the Min Port" + ctx)
    if errors:
        return errors
    items = list(ranges.items())
    for i, (name_i, r_i) in enumerate(items):
        for name_j, r_j in items[i + 1 :]:
            if not _overlaps(r_i, r_j):
                continue
            if name_j == DEFAULT_PORT_RANGE:
                errors.append(f"port range {name_i} overlaps with min/max port")
            elif name_i == DEFAULT_PORT_RANGE:
                errors.append(f"port range {name_j} overlaps with min/max port")
            else:
                errors.append(f"port range {name_i} overlaps with min/max port of range {name_j}")
    return errors


def _uid(gs: GameServer) -> str:
    uid = gs.metadata.uid if gs.metadata is not UNSET else UNSET
    return uid if isinstance(uid, str) else ""


def _node_name(node: Node) -> str:
    return node.metadata.get_name()


def _schedulable(node: Node) -> bool:
    return not node.unschedulable()


class PortRangeAllocator:
    """Allocation state of one named range."""

    def __init__(
        self,
        name: str,
        port_range: PortRange,
        gates: FeatureGates,
        rng: random.Random | None = None,
    ) -> None:
        self.name = name
        self.min_port = port_range.min_port
        self.max_port = port_range.max_port
        self.gates = gates
        self.rng = rng or random.Random()
        # Taken ports, one set per node map, in allocation order.
        self.port_allocations: list[set[int]] = []
        self.game_server_registry: set[str] = set()

    # -- which ports are ours ---------------------------------------------------------------

    def _is_ours(self, port: GameServerPort) -> bool:
        if port.port_policy not in _ALLOCATED_POLICIES:
            return False
        if self.gates.enabled(Feature.PORT_RANGES):
            return port.range == self.name
        return True

    def _in_range(self, port: int) -> bool:
        return self.min_port <= port <= self.max_port

    def _held_ports(self, gs: GameServer) -> set[int]:
        """Distinct host ports of this range the GameServer holds (a TCPUDP pair counts once)."""
        return {
            p.host_port
            for p in gs.ports()
            if self._is_ours(p) and isinstance(p.host_port, int) and self._in_range(p.host_port)
        }

    # -- allocation -------------------------------------------------------------------------

    def _find_open_ports(self, amount: int) -> list[tuple[set[int], int]]:
        # A port is never chosen twice for one GameServer, even from two maps (Agones may),
        # unless the GameServer wants more ports than the range has.
        found: list[tuple[set[int], int]] = []
        chosen: set[int] = set()
        size = self.max_port - self.min_port + 1
        distinct = amount <= size
        for taken in self.port_allocations:
            if len(taken) >= size:
                continue
            free = [
                p
                for p in range(self.min_port, self.max_port + 1)
                if p not in taken and p not in chosen
            ]
            picked = self.rng.sample(free, min(amount - len(found), len(free)))
            if distinct:
                chosen.update(picked)
            found += [(taken, p) for p in picked]
            if len(found) == amount:
                break
        return found

    def allocate(self, gs: GameServer) -> GameServer:
        """Fill this range's Dynamic/Passthrough host ports of `gs` (in place); returns it."""
        ports = gs.ports()
        amount = sum(1 for p in ports if self._is_ours(p))
        if amount == 0:
            return gs
        found = self._find_open_ports(amount)
        while len(found) < amount:
            self.port_allocations.append(set())
            found = self._find_open_ports(amount)
        self.game_server_registry.add(_uid(gs))
        extra: list[GameServerPort] = []
        for port in ports:
            if not self._is_ours(port):
                continue
            taken, host_port = found.pop(0)
            taken.add(host_port)
            port.host_port = host_port
            if port.port_policy == PortPolicy.PASSTHROUGH:
                port.container_port = host_port
            if port.protocol == Protocol.TCPUDP:
                name = port.name if isinstance(port.name, str) else ""
                udp = GameServerPort(
                    name=name + "-udp",
                    range=port.range,
                    port_policy=port.port_policy,
                    container=port.container,
                    container_port=port.container_port,
                    host_port=host_port,
                    protocol=Protocol.UDP,
                )
                extra.append(udp)
                port.name = name + "-tcp"
                port.protocol = Protocol.TCP
        ports.extend(extra)
        return gs

    def _set(self, port: int, taken: bool) -> None:
        """Mark `port` taken on the first map where it is free (or free where it is taken)."""
        for allocation in self.port_allocations:
            if (port in allocation) != taken:
                if taken:
                    allocation.add(port)
                else:
                    allocation.discard(port)
                return

    def deallocate(self, gs: GameServer) -> None:
        uid = _uid(gs)
        if uid not in self.game_server_registry:
            return
        for port in self._held_ports(gs):
            self._set(port, False)
        self.game_server_registry.discard(uid)

    # -- rebuild ----------------------------------------------------------------------------

    def sync_all(self, game_servers: Iterable[GameServer], nodes: Iterable[Node]) -> None:
        """Rebuild from every GameServer's held ports and every schedulable node."""
        node_ports: dict[str, set[int]] = {
            _node_name(n): set() for n in nodes if _schedulable(n) and _node_name(n)
        }
        counts = dict.fromkeys(node_ports, 0)
        registry: set[str] = set()
        unscheduled: list[int] = []
        for gs in game_servers:
            held = self._held_ports(gs)
            if not held:
                continue
            registry.add(_uid(gs))
            node = gs.node_name()
            for port in sorted(held):
                if node and node in node_ports:
                    node_ports[node].add(port)
                    counts[node] += 1
                else:
                    unscheduled.append(port)
        order = sorted(node_ports, key=lambda n: counts[n], reverse=True)
        self.port_allocations = [node_ports[n] for n in order]
        # Ports of GameServers not (yet) on a known node: any map will do, the scheduler's
        # host-port check finds them a node.
        for port in unscheduled:
            before = sum(len(a) for a in self.port_allocations)
            self._set(port, True)
            if sum(len(a) for a in self.port_allocations) == before:
                self.port_allocations.append({port})
        self.game_server_registry = registry

    def taken_count(self) -> int:
        return sum(len(a) for a in self.port_allocations)


class PortAllocator:
    """All ranges together: what the GameServer controller talks to."""

    def __init__(
        self,
        port_ranges: Mapping[str, PortRange],
        gates: FeatureGates,
        rng: random.Random | None = None,
    ) -> None:
        if DEFAULT_PORT_RANGE not in port_ranges:
            raise ValueError("the default port range (min/max port) is required")
        rng = rng or random.Random()
        self.allocators = [
            PortRangeAllocator(DEFAULT_PORT_RANGE, port_ranges[DEFAULT_PORT_RANGE], gates, rng)
        ]
        if gates.enabled(Feature.PORT_RANGES):
            self.allocators += [
                PortRangeAllocator(name, r, gates, rng)
                for name, r in port_ranges.items()
                if name != DEFAULT_PORT_RANGE
            ]

    def sync_all(self, game_servers: Iterable[GameServer], nodes: Iterable[Node]) -> None:
        gss, ns = list(game_servers), list(nodes)
        for allocator in self.allocators:
            allocator.sync_all(gss, ns)

    def allocate(self, gs: GameServer) -> GameServer:
        for allocator in self.allocators:
            gs = allocator.allocate(gs)
        return gs

    def deallocate(self, gs: GameServer) -> None:
        for allocator in self.allocators:
            allocator.deallocate(gs)

    def on_delete(self, obj: Any) -> None:
        """GameServer informer delete handler; tombstones carry the last known object."""
        gs = getattr(obj, "obj", obj)
        if isinstance(gs, GameServer):
            self.deallocate(gs)
