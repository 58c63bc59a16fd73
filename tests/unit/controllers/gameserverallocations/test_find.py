"""The pure choice of a GameServer: Agones' Packed and Distributed orders, selectors in order,
namespaces, and a replica's preferred share (`find.py`, `partition.py`)."""

from __future__ import annotations

import functools
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agones.apis.agones.v1.gameserver import GameServer
from agones.apis.allocation.v1 import GameServerAllocation, apply_defaults, converter
from agones.controllers.gameserverallocations.find import (
    find_game_server_for_allocation,
    sort_distributed,
    sort_packed,
)
from agones.controllers.gameserverallocations.partition import Partition
from agones.controllers.gameservers.pernodecounter import NodeCount
from agones.featuregates import FeatureGates
from tests.integration.gameserverallocations.harness import ready_game_server

GATES = FeatureGates()


def gs(
    name: str, *, state: str = "Ready", node: str = "a", rooms: int | None = 0, **kw: Any
) -> GameServer:
    counters = {} if rooms is None else {"rooms": {"count": rooms, "capacity": 10}}
    return msgspec.convert(
        ready_game_server(name, node=node, counters=counters, state=state, **kw), GameServer
    )


def gsa(spec: dict[str, Any], namespace: str = "default") -> GameServerAllocation:
    out = msgspec.convert(
        {"metadata": {"namespace": namespace}, "spec": spec}, GameServerAllocation
    )
    apply_defaults(out, GATES)
    converter(out)
    return out


def names(items: list[GameServer]) -> list[str]:
    return [g.meta.get_name() for g in items]


COUNTS = {
    "a": NodeCount(ready=2, allocated=1),
    "b": NodeCount(ready=5, allocated=1),
    "c": NodeCount(ready=9, allocated=0),
}


@pytest.mark.parametrize(
    ("servers", "spec", "want"),
    [
        pytest.param(
            [gs("z", node="c"), gs("y", node="a"), gs("x", node="b")],
            {},
            ["x", "y", "z"],
            id="more-allocated-then-more-ready-node-first",
        ),
        pytest.param(
            [gs("r", node="c"), gs("q", node="c", state="Allocated")],
            {},
            ["q", "r"],
            id="allocated-before-ready",
        ),
        pytest.param(
            [gs("b1", node="b"), gs("b2", node="b"), gs("b0", node="b")],
            {},
            ["b0", "b1", "b2"],
            id="name-breaks-ties",
        ),
        pytest.param(
            [gs("p", node="b", rooms=1), gs("o", node="b", rooms=7), gs("n", node="b", rooms=None)],
            {"priorities": [{"type": "Counter", "key": "rooms", "order": "Ascending"}]},
            ["o", "p", "n"],
            id="counter-ascending-available-missing-last",
        ),
        pytest.param(
            [gs("p", node="b", rooms=1), gs("o", node="b", rooms=7), gs("n", node="b", rooms=None)],
            {"priorities": [{"type": "Counter", "key": "rooms", "order": "Descending"}]},
            ["p", "o", "n"],
            id="counter-descending-missing-last",
        ),
        pytest.param(
            [gs("u", node="x"), gs("t", node="a")],
            {},
            ["t", "u"],
            id="unknown-node-last",
        ),
    ],
)
def test_packed_order(servers: list[GameServer], spec: dict[str, Any], want: list[str]) -> None:
    assert names(sort_packed(servers, gsa(spec), COUNTS, GATES)) == want


def test_distributed_sorts_by_priorities_then_name() -> None:
    servers = [gs("b", rooms=3), gs("a", rooms=3), gs("c", rooms=9)]
    spec = {"scheduling": "Distributed", "priorities": [{"type": "Counter", "key": "rooms"}]}
    assert names(sort_distributed(servers, gsa(spec), GATES)) == ["c", "a", "b"]


FLEETS = [
    gs("g1", labels={"agones.dev/fleet": "green"}),
    gs("b1", labels={"agones.dev/fleet": "blue"}),
    gs("b2", labels={"agones.dev/fleet": "blue"}, state="Allocated"),
    gs("other-ns", namespace="elsewhere", labels={"agones.dev/fleet": "red"}),
]


@pytest.mark.parametrize(
    ("spec", "want"),
    [
        pytest.param(
            {
                "selectors": [
                    {"matchLabels": {"agones.dev/fleet": "blue"}},
                    {"matchLabels": {"agones.dev/fleet": "green"}},
                ]
            },
            "b1",
            id="first-selector-wins",
        ),
        pytest.param(
            {
                "selectors": [
                    {"matchLabels": {"agones.dev/fleet": "pink"}},
                    {"matchLabels": {"agones.dev/fleet": "green"}},
                ]
            },
            "g1",
            id="falls-to-next-selector",
        ),
        pytest.param(
            {
                "selectors": [
                    {"matchLabels": {"agones.dev/fleet": "blue"}, "gameServerState": "Allocated"}
                ]
            },
            "b2",
            id="allocated-state-selector",
        ),
        pytest.param(
            {"selectors": [{"matchLabels": {"agones.dev/fleet": "red"}}]},
            None,
            id="other-namespace-never",
        ),
        pytest.param(
            {
                "required": {"matchLabels": {"agones.dev/fleet": "green"}},
                "preferred": [{"matchLabels": {"agones.dev/fleet": "blue"}}],
            },
            "b1",
            id="preferred-before-required",
        ),
        pytest.param(
            {"selectors": [{"counters": {"rooms": {"minCount": 1}}}]}, None, id="counter-selector"
        ),
    ],
)
def test_find_selectors_in_order(spec: dict[str, Any], want: str | None) -> None:
    found = find_game_server_for_allocation(gsa(spec), FLEETS, GATES)
    assert (found[0].meta.get_name() if found else None) == want


def test_owned_candidate_preferred_within_the_winning_selector() -> None:
    servers = [gs(f"gs-{i}", labels={"f": "x"}) for i in range(20)]
    for s, i in zip(servers, range(20), strict=True):
        s.meta.uid = f"uid-{i}"
    request = gsa({"selectors": [{"matchLabels": {"f": "x"}}]})
    two = [Partition(0, 2), Partition(1, 2)]
    picks = [find_game_server_for_allocation(request, servers, GATES, p.owns) for p in two]
    assert picks[0] and picks[1]
    assert picks[0][0] is not picks[1][0]
    for p, pick in zip(two, picks, strict=True):
        assert p.owns(pick[0])
    # nothing owned: the whole set is used
    only = [s for s in servers if not two[0].owns(s)][:1]
    fallback = find_game_server_for_allocation(request, only, GATES, two[0].owns)
    assert fallback is not None and fallback[0] is only[0]


def test_without_an_owned_match_the_owners_last_pick_is_taken() -> None:
    """A replica whose share ran out reaches for what the owner would allocate last, not for the
    owner's next pick (which would lose to the owner in a conflict)."""
    servers = [gs(f"gs-{i:02d}", labels={"f": "x"}) for i in range(20)]
    for i, s in enumerate(servers):
        s.meta.uid = f"uid-{i}"
    request = gsa({"selectors": [{"matchLabels": {"f": "x"}}]})
    mine, theirs = Partition(0, 2), Partition(1, 2)
    others = [s for s in servers if theirs.owns(s)]
    assert len(others) > 1
    owner_pick = find_game_server_for_allocation(request, others, GATES, theirs.owns)
    fallback = find_game_server_for_allocation(request, others, GATES, mine.owns)
    assert owner_pick is not None and owner_pick[0] is others[0]
    assert fallback is not None and fallback[0] is others[-1]


def test_partition_rejects_bad_numbers() -> None:
    with pytest.raises(ValueError, match="need 0 <= index < count"):
        Partition(2, 2)


def go_less(
    a: GameServer, b: GameServer, counts: dict[str, NodeCount], request: GameServerAllocation
) -> bool:
    """Agones' Packed comparator, literally (players filter off)."""
    if a.state() != b.state():
        return a.state() == "Allocated"
    c1, c2 = counts.get(a.node_name()), counts.get(b.node_name())
    if c1 is None:
        return False
    if c2 is None:
        return True
    if c1.allocated != c2.allocated:
        return c1.allocated > c2.allocated
    if c1.ready != c2.ready:
        return c1.ready > c2.ready
    assert request.spec is not msgspec.UNSET
    res = a.compare_count_and_list_priorities(list(request.spec.priorities or []), b)
    if res is not None:
        return res
    return a.meta.get_name() < b.meta.get_name()


servers_st = st.lists(
    st.tuples(
        st.sampled_from(["Ready", "Allocated"]),
        st.sampled_from(["a", "b", "c"]),
        st.one_of(st.none(), st.integers(0, 10)),
        st.sampled_from(["x", "y"]),
    ),
    max_size=25,
)
counts_st = st.fixed_dictionaries(
    {n: st.builds(NodeCount, st.integers(0, 5), st.integers(0, 5)) for n in "abc"}
)
order_st = st.sampled_from([None, "Ascending", "Descending"])


@settings(max_examples=200, deadline=None)
@given(servers_st, counts_st, order_st)
def test_packed_picks_by_agones_order(
    raw: list[tuple[str, str, int | None, str]], counts: dict[str, NodeCount], order: str | None
) -> None:
    servers = [
        gs(f"gs-{i:02d}", state=s, node=n, rooms=r, labels={"f": f})
        for i, (s, n, r, f) in enumerate(raw)
    ]
    spec: dict[str, Any] = {"selectors": [{"matchLabels": {"f": "x"}}]}
    if order:
        spec["priorities"] = [{"type": "Counter", "key": "rooms", "order": order}]
    request = gsa(spec)

    def cmp(a: GameServer, b: GameServer) -> int:
        return (
            -1 if go_less(a, b, counts, request) else (1 if go_less(b, a, counts, request) else 0)
        )

    want = sorted(servers, key=functools.cmp_to_key(cmp))
    got = sort_packed(servers, request, counts, GATES)
    assert names(got) == names(want)
    expected = next(
        (s for s in want if s.meta.get_labels()["f"] == "x" and s.state() == "Ready"), None
    )
    found = find_game_server_for_allocation(request, got, GATES)
    assert (found[0] if found else None) is expected


def test_distributed_without_counts_and_lists_searches_in_random_order() -> None:
    gates = FeatureGates.parse("CountsAndLists=false")
    servers = [gs(f"gs-{i}", labels={"f": "x"}, rooms=None) for i in range(30)]
    request = msgspec.convert(
        {"metadata": {"namespace": "default"}, "spec": {"scheduling": "Distributed"}},
        GameServerAllocation,
    )
    apply_defaults(request, gates)
    converter(request)
    picks = set()
    for _ in range(40):
        found = find_game_server_for_allocation(request, servers, gates)
        assert found is not None
        picks.add(found[0].meta.get_name())
    assert len(picks) > 1  # Packed would always answer gs-0


def test_allocation_metrics_use_agones_names_and_buckets() -> None:
    from prometheus_client import CollectorRegistry

    from agones.controllers.gameserverallocations.metrics import families

    registry = CollectorRegistry()
    latency, retries = families(registry)
    labels = ("green", "none", "false", "Allocated", "Packed")
    latency.labels(*labels).observe(0.02)
    retries.labels(*labels).observe(2)
    samples = [s for m in registry.collect() for s in m.samples]
    bounds = sorted(
        float(s.labels["le"])
        for s in samples
        if s.name == "agones_gameserver_allocations_duration_seconds_bucket"
        and s.labels["le"] != "+Inf"
    )
    assert bounds == [0, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2, 3]
    assert "agones_gameserver_allocations_retry_total_bucket" in {s.name for s in samples}
    assert families(registry) == (latency, retries)
