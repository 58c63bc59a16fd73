"""The allocation cache's incrementally sorted candidates (`candidates.CandidateIndex`) walk the
same order as a full sort of the same GameServers (`find.sort_packed` / `sort_distributed`),
whatever the sequence of adds, replacements and removals, and whatever the per-node counts."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agones.apis.agones.v1.gameserver import GameServer, PlayerStatus
from agones.controllers.gameserverallocations.candidates import CandidateIndex
from agones.controllers.gameserverallocations.find import (
    distributed_key,
    packed_within_key,
    sort_distributed,
    sort_packed,
)
from agones.controllers.gameservers.pernodecounter import NodeCount
from agones.featuregates import FeatureGates
from tests.unit.controllers.gameserverallocations.test_find import gs, gsa

GATES = FeatureGates.parse("PlayerAllocationFilter=true")
NAMESPACES = ["default", "other"]

server_st = st.fixed_dictionaries(
    {
        "name": st.integers(0, 30),
        "namespace": st.sampled_from(NAMESPACES),
        "state": st.sampled_from(["Ready", "Allocated"]),
        "node": st.sampled_from(["a", "b", "c", "d", ""]),
        "rooms": st.one_of(st.none(), st.integers(0, 10)),
        "players": st.one_of(st.none(), st.integers(0, 4)),
    }
)
op_st = st.one_of(
    st.tuples(st.just("put"), server_st),
    st.tuples(st.just("discard"), st.integers(0, 30), st.sampled_from(NAMESPACES)),
)
counts_st = st.dictionaries(
    st.sampled_from(["a", "b", "c"]), st.builds(NodeCount, st.integers(0, 3), st.integers(0, 3))
)
priorities_st = st.sampled_from(
    [
        [],
        [{"type": "Counter", "key": "rooms", "order": "Ascending"}],
        [{"type": "Counter", "key": "rooms", "order": "Descending"}],
    ]
)


def make(raw: dict[str, Any]) -> GameServer:
    out = gs(
        f"gs-{raw['name']:02d}",
        state=raw["state"],
        node=raw["node"],
        rooms=raw["rooms"],
        namespace=raw["namespace"],
    )
    if raw["players"] is not None:
        out.gs_status.players = PlayerStatus(count=raw["players"], capacity=4, ids=[])
    return out


def apply(ops: list[Any], indexes: list[CandidateIndex]) -> dict[str, GameServer]:
    current: dict[str, GameServer] = {}
    for op in ops:
        if op[0] == "put":
            server = make(op[1])
            key = f"{server.meta.get_namespace()}/{server.meta.get_name()}"
            current[key] = server
            for index in indexes:
                index.put(key, server)
        else:
            key = f"{op[2]}/gs-{op[1]:02d}"
            current.pop(key, None)
            for index in indexes:
                index.discard(key)
    return current


def names(items: Any) -> list[str]:
    return [g.meta.get_name() for g in items]


@settings(max_examples=300, deadline=None)
@given(st.lists(op_st, max_size=60), counts_st, priorities_st, st.sampled_from(NAMESPACES))
def test_packed_walk_equals_the_full_sort(
    ops: list[Any], counts: dict[str, NodeCount], priorities: list[Any], namespace: str
) -> None:
    request = gsa({"priorities": priorities} if priorities else {}, namespace)
    spec_priorities = list(request.spec.priorities or [])  # type: ignore[union-attr]
    index = CandidateIndex(packed_within_key(spec_priorities, GATES))
    current = apply(ops, [index])
    assert len(index) == len(current)
    in_namespace = [s for s in current.values() if s.meta.get_namespace() == namespace]
    want = sort_packed(in_namespace, request, counts, GATES)
    assert names(index.ordered(namespace, counts)) == names(want)
    ready = [s for s in want if s.state() == "Ready"]
    assert names(index.ordered(namespace, counts, {"Ready"})) == names(ready)


@settings(max_examples=200, deadline=None)
@given(st.lists(op_st, max_size=60), priorities_st, st.sampled_from(NAMESPACES))
def test_distributed_walk_equals_the_full_sort(
    ops: list[Any], priorities: list[Any], namespace: str
) -> None:
    request = gsa({"scheduling": "Distributed", "priorities": priorities}, namespace)
    spec_priorities = list(request.spec.priorities or [])  # type: ignore[union-attr]
    index = CandidateIndex(distributed_key(spec_priorities), grouped=False)
    current = apply(ops, [index])
    in_namespace = [s for s in current.values() if s.meta.get_namespace() == namespace]
    want = sort_distributed(in_namespace, request, GATES)
    assert names(index.ordered(namespace, {})) == names(want)
    allocated = [s for s in want if s.state() == "Allocated"]
    assert names(index.ordered(namespace, {}, {"Allocated"})) == names(allocated)
