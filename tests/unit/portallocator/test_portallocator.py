"""Port allocator: ranges, policies, TCPUDP, overflow into new node maps, rebuild, no double hand-out."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import msgspec
import pytest

from agones.apis.agones.v1.gameserver import GameServer, PortPolicy, Protocol
from agones.apis.core.v1 import Node
from agones.featuregates import FeatureGates
from agones.portallocator import (
    PortAllocator,
    PortRange,
    parse_port_ranges,
    validate_port_ranges,
)

GATES = FeatureGates()
NO_RANGES = FeatureGates().with_values(PortRanges=False)


def make_gs(
    uid: str,
    *ports: dict[str, Any],
    node: str = "",
) -> GameServer:
    raw: dict[str, Any] = {
        "apiVersion": "agones.dev/v1",
        "kind": "GameServer",
        "metadata": {"name": f"gs-{uid}", "namespace": "default", "uid": uid},
        "spec": {"ports": [{"range": "default", "protocol": "UDP", **p} for p in ports]},
        "status": {"state": "PortAllocation"},
    }
    if node:
        raw["status"]["nodeName"] = node
    return msgspec.convert(raw, GameServer)


def dyn(name: str = "default", **kw: Any) -> dict[str, Any]:
    return {"name": name, "portPolicy": "Dynamic", "containerPort": 7654, **kw}


def node(name: str, unschedulable: bool = False) -> Node:
    return msgspec.convert(
        {"metadata": {"name": name}, "spec": {"unschedulable": unschedulable}}, Node
    )


def allocator(
    lo: int = 10, hi: int = 20, gates: FeatureGates = GATES, **extra: PortRange
) -> PortAllocator:
    return PortAllocator({"default": PortRange(lo, hi), **extra}, gates, random.Random(7))


# -- configuration ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "gates", "want"),
    [
        pytest.param("", GATES, {}, id="empty"),
        pytest.param('{"game": [5000, 6000]}', GATES, {"game": PortRange(5000, 6000)}, id="one"),
        pytest.param('{"game": [5000, 6000]}', NO_RANGES, {}, id="gate-off-ignored"),
    ],
)
def test_parse_port_ranges(text: str, gates: FeatureGates, want: dict[str, PortRange]) -> None:
    assert parse_port_ranges(text, gates) == want


@pytest.mark.parametrize(
    ("text", "error"),
    [
        pytest.param("{", "invalid additional port range format", id="bad-json"),
        pytest.param('{"game": [5000]}', "requires both min and max port", id="one-end"),
        pytest.param('{"game": "x"}', "requires both min and max port", id="not-list"),
    ],
)
def test_parse_port_ranges_errors(text: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        parse_port_ranges(text, GATES)


@pytest.mark.parametrize(
    ("ranges", "want"),
    [
        pytest.param({"default": PortRange(7000, 8000)}, [], id="default-only"),
        pytest.param(
            {"default": PortRange(7000, 8000), "game": PortRange(8000, 9000)},
            [],
            id="shared-endpoint-tolerated",
        ),
        pytest.param(
            {"default": PortRange(7000, 8000), "game": PortRange(7500, 9000)},
            ["port range game overlaps with min/max port"],
            id="overlaps-default",
        ),
        pytest.param(
            {
                "default": PortRange(1, 2),
                "a": PortRange(100, 200),
                "b": PortRange(150, 250),
            },
            ["port range a overlaps with min/max port of range b"],
            id="overlap-named",
        ),
        pytest.param(
            {"default": PortRange(0, 0)},
            ["min Port and Max Port values are required"],
            id="missing-default",
        ),
        pytest.param(
            {"default": PortRange(10, 20), "g": PortRange(30, 25)},
            ["max Port cannot be set less that the Min Port for port range g"],
            id="inverted",
        ),
    ],
)
def test_validate_port_ranges(ranges: dict[str, PortRange], want: list[str]) -> None:
    assert validate_port_ranges(ranges) == want


# -- allocation ---------------------------------------------------------------------------------


def test_dynamic_gets_host_port_in_range() -> None:
    gs = allocator().allocate(make_gs("a", dyn()))
    (port,) = gs.ports()
    assert isinstance(port.host_port, int) and 10 <= port.host_port <= 20
    assert port.container_port == 7654


def test_passthrough_sets_container_port_to_host_port() -> None:
    gs = allocator().allocate(make_gs("a", {"name": "p", "portPolicy": "Passthrough"}))
    (port,) = gs.ports()
    assert port.host_port == port.container_port and 10 <= port.host_port <= 20


@pytest.mark.parametrize(
    "policy",
    [
        pytest.param({"portPolicy": "Static", "hostPort": 9999, "containerPort": 1}, id="static"),
        pytest.param({"portPolicy": "None", "containerPort": 1}, id="none"),
    ],
)
def test_static_and_none_untouched(policy: dict[str, Any]) -> None:
    pa = allocator()
    gs = pa.allocate(make_gs("a", {"name": "x", **policy}))
    (port,) = gs.ports()
    assert port.host_port == policy.get("hostPort", msgspec.UNSET)
    assert pa.allocators[0].taken_count() == 0


def test_tcpudp_splits_into_tcp_and_udp_sharing_the_port() -> None:
    pa = allocator()
    gs = pa.allocate(make_gs("a", dyn("game", protocol="TCPUDP"), dyn("other")))
    ports = {p.name: p for p in gs.ports()}
    assert list(ports) == ["game-tcp", "other", "game-udp"]
    assert ports["game-tcp"].protocol == Protocol.TCP
    assert ports["game-udp"].protocol == Protocol.UDP
    assert ports["game-tcp"].host_port == ports["game-udp"].host_port
    assert ports["game-udp"].container_port == 7654
    assert ports["game-udp"].port_policy == PortPolicy.DYNAMIC
    assert ports["other"].host_port != ports["game-tcp"].host_port
    assert pa.allocators[0].taken_count() == 2
    pa.deallocate(gs)
    assert pa.allocators[0].taken_count() == 0


def test_overflow_appends_a_node_map_and_never_fails() -> None:
    pa = allocator(10, 12)  # three ports per node map
    gss = [pa.allocate(make_gs(str(i), dyn(), dyn("b"))) for i in range(4)]
    maps = pa.allocators[0].port_allocations
    assert len(maps) == 3  # 8 ports over maps of 3
    assert sum(len(m) for m in maps) == 8
    for gs in gss:
        a, b = (p.host_port for p in gs.ports())
        assert a != b  # a GameServer never gets the same port twice


def test_each_port_at_most_once_per_map() -> None:
    pa = allocator(10, 14)
    gss = [pa.allocate(make_gs(str(i), dyn())) for i in range(15)]
    counts = Counter(gs.ports()[0].host_port for gs in gss)
    assert set(counts) == set(range(10, 15))
    assert set(counts.values()) == {3}  # three maps, each port handed out once per map


def test_more_ports_than_the_range_still_allocates() -> None:
    pa = allocator(10, 10)
    gs = pa.allocate(make_gs("a", dyn("a"), dyn("b")))
    assert [p.host_port for p in gs.ports()] == [10, 10]
    assert len(pa.allocators[0].port_allocations) == 2


def test_named_ranges() -> None:
    pa = allocator(10, 20, game=PortRange(100, 110))
    gs = pa.allocate(make_gs("a", dyn(), dyn("g", range="game")))
    default, game = gs.ports()
    assert 10 <= default.host_port <= 20
    assert 100 <= game.host_port <= 110


def test_without_port_ranges_gate_everything_uses_default() -> None:
    pa = allocator(10, 20, gates=NO_RANGES, game=PortRange(100, 110))
    assert len(pa.allocators) == 1
    gs = pa.allocate(make_gs("a", dyn("g", range="game")))
    assert 10 <= gs.ports()[0].host_port <= 20


def test_deallocate_only_registered() -> None:
    pa = allocator()
    gs = pa.allocate(make_gs("a", dyn()))
    stranger = make_gs("b", dyn(hostPort=gs.ports()[0].host_port))
    pa.deallocate(stranger)
    assert pa.allocators[0].taken_count() == 1
    pa.deallocate(gs)
    pa.deallocate(gs)  # idempotent
    assert pa.allocators[0].taken_count() == 0


def test_on_delete_accepts_tombstones() -> None:
    from agones.informers import DeletedFinalStateUnknown

    pa = allocator()
    gs = pa.allocate(make_gs("a", dyn()))
    pa.on_delete(DeletedFinalStateUnknown("default/gs-a", gs))
    assert pa.allocators[0].taken_count() == 0


# -- rebuild ------------------------------------------------------------------------------------


def test_sync_all_orders_maps_by_use_and_skips_unschedulable() -> None:
    pa = allocator()
    gss = [
        make_gs("1", dyn(hostPort=10), node="n2"),
        make_gs("2", dyn(hostPort=11), node="n2"),
        make_gs("3", dyn(hostPort=10), node="n1"),
        make_gs("4", {"name": "s", "portPolicy": "Static", "hostPort": 12}, node="n1"),
        make_gs("5", dyn(hostPort=500), node="n1"),  # outside the range
    ]
    pa.sync_all(gss, [node("n1"), node("n2"), node("n3", unschedulable=True)])
    ra = pa.allocators[0]
    assert ra.port_allocations == [{10, 11}, {10}]
    assert ra.game_server_registry == {"1", "2", "3"}


def test_sync_all_places_unscheduled_ports_on_first_free_map() -> None:
    pa = allocator()
    gss = [
        make_gs("1", dyn(hostPort=10), node="n1"),
        make_gs("2", dyn(hostPort=10)),  # no node yet
        make_gs("3", dyn(hostPort=10), node="gone"),  # node no longer known
    ]
    pa.sync_all(gss, [node("n1"), node("n2")])
    maps = pa.allocators[0].port_allocations
    assert sum(10 in m for m in maps) == 3
    assert len(maps) == 3  # a map was added for the third holder of port 10


def test_sync_all_tcpudp_pair_counts_once() -> None:
    pa = allocator()
    gs = pa.allocate(make_gs("a", dyn(protocol="TCPUDP")))
    fresh = allocator()
    fresh.sync_all([gs], [node("n1")])
    assert fresh.allocators[0].port_allocations == [{gs.ports()[0].host_port}]


def test_rebuild_then_allocate_does_not_reuse_taken_ports() -> None:
    pa = allocator(10, 13)
    held = [make_gs(str(p), dyn(hostPort=p), node="n1") for p in (10, 11, 12)]
    pa.sync_all(held, [node("n1")])
    gs = pa.allocate(make_gs("new", dyn()))
    assert gs.ports()[0].host_port == 13


@pytest.mark.parametrize("seed", range(5))
def test_random_sequences_never_double_hand_out(seed: int) -> None:
    """Random allocate/deallocate/rebuild: per map no port is ever held by two live servers."""
    rng = random.Random(seed)
    pa = PortAllocator({"default": PortRange(100, 119)}, GATES, random.Random(seed))
    live: dict[str, GameServer] = {}
    for step in range(400):
        op = rng.random()
        if op < 0.55 or not live:
            n = rng.randint(1, 3)
            ports = [dyn(f"p{i}", protocol=rng.choice(["UDP", "TCPUDP"])) for i in range(n)]
            gs = pa.allocate(make_gs(f"{step}", *ports))
            live[f"{step}"] = gs
        elif op < 0.95:
            uid = rng.choice(sorted(live))
            pa.deallocate(live.pop(uid))
        else:
            pa.sync_all(list(live.values()), [])
        # Invariant: the number of live holders of any port never exceeds the number of maps
        # holding it, and each live GameServer's distinct ports are all marked taken.
        holders: Counter[int] = Counter()
        for gs in live.values():
            distinct = {p.host_port for p in gs.ports()}
            assert len(distinct) == len({p.name.rsplit("-", 1)[0] for p in gs.ports()})
            holders.update(distinct)
        maps = pa.allocators[0].port_allocations
        for port, count in holders.items():
            assert sum(port in m for m in maps) == count
        assert sum(len(m) for m in maps) == sum(holders.values())
