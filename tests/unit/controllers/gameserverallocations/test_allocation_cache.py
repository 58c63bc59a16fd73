"""The allocation cache's choice (`AllocationCache.find_game_server`) is `find.py`'s over a full
sort of the same candidates, with or without a replica's share: the owned index it walks first
for a partitioned replica is a short cut, never a different answer."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agones.apis.agones.v1.gameserver import GameServer
from agones.controllers.gameserverallocations.allocation_cache import AllocationCache
from agones.controllers.gameserverallocations.find import (
    find_game_server_for_allocation,
    sort_distributed,
    sort_packed,
)
from agones.controllers.gameserverallocations.partition import Partition
from agones.controllers.gameservers.pernodecounter import PerNodeCounter
from agones.featuregates import FeatureGates
from agones.informers import SharedInformerFactory
from tests.unit.controllers.gameserverallocations.test_find import gs, gsa

GATES = FeatureGates()

server_st = st.tuples(
    st.integers(0, 25),  # name
    st.sampled_from(["Ready", "Allocated"]),
    st.sampled_from(["a", "b", "c"]),
    st.sampled_from(["blue", "green"]),
    st.sampled_from(["default", "default", "other"]),
    st.one_of(st.none(), st.integers(0, 10)),
)
put_st = st.tuples(st.just("put"), server_st)
op_st = st.one_of(put_st, put_st, put_st, st.tuples(st.just("take"), st.integers(0, 25)))
selectors_st = st.lists(
    st.fixed_dictionaries(
        {"matchLabels": st.fixed_dictionaries({"f": st.sampled_from(["blue", "green", "red"])})},
        optional={"gameServerState": st.sampled_from(["Ready", "Allocated"])},
    ),
    min_size=1,
    max_size=3,
)
spec_st = st.fixed_dictionaries(
    {"selectors": selectors_st},
    optional={
        "scheduling": st.just("Distributed"),
        "priorities": st.just([{"type": "Counter", "key": "rooms", "order": "Descending"}]),
    },
)
partition_st = st.sampled_from(
    [Partition(), Partition(0, 2), Partition(1, 2), Partition(0, 3), Partition(2, 3)]
)


def server(raw: tuple[int, str, str, str, str, int | None]) -> GameServer:
    name, state, node, fleet, namespace, rooms = raw
    out = gs(
        f"gs-{name:02d}",
        state=state,
        node=node,
        rooms=rooms,
        namespace=namespace,
        labels={"f": fleet},
    )
    out.meta.uid = f"uid-{name}-{state}-{node}"
    return out


def new_cache() -> AllocationCache:
    factory = SharedInformerFactory(object())  # type: ignore[arg-type]  # never started
    return AllocationCache(factory, PerNodeCounter(factory), GATES)


def want(cache: AllocationCache, request: Any, owned: Any) -> GameServer | None:
    servers = list(cache.cache.values())
    if request.spec.scheduling == "Distributed":
        ordered = sort_distributed(servers, request, GATES)
    else:
        ordered = sort_packed(servers, request, cache.counter.counts(), GATES)
    found = find_game_server_for_allocation(request, ordered, GATES, owned)
    return found[0] if found else None


@settings(max_examples=300, deadline=None)
@given(st.lists(op_st, min_size=8, max_size=60), spec_st, partition_st, st.data())
def test_the_cache_answers_as_the_full_sort_does(
    ops: list[Any], spec: dict[str, Any], partition: Partition, data: st.DataObject
) -> None:
    cache = new_cache()
    request = gsa(spec)
    owned = partition.owned()
    for op in ops:
        if op[0] == "put":
            cache._on_add(server(op[1]))
        else:
            # an allocation in flight: taken out of the cache (and of every index)
            key = f"default/gs-{op[1]:02d}"
            if key in cache.cache:
                cache.remove_game_server(cache.cache[key])
        # the indexes are built on first use: ask after some of the changes, not only the last
        if data.draw(st.booleans()):
            assert cache.find_game_server(request, owned) is want(cache, request, owned)
    assert cache.find_game_server(request, owned) is want(cache, request, owned)


def test_a_partitioned_replica_prefers_its_share_and_falls_back_to_the_rest() -> None:
    cache = new_cache()
    servers = [server((i, "Ready", "a", "blue", "default", 0)) for i in range(12)]
    for s in servers:
        cache._on_add(s)
    request = gsa({"selectors": [{"matchLabels": {"f": "blue"}}]})
    mine = Partition(0, 2)
    owned = [s for s in servers if mine.owns(s)]
    others = [s for s in servers if not mine.owns(s)]
    assert owned and others
    for expected in owned:
        found = cache.find_game_server(request, mine.owned())
        assert found is expected
        cache.remove_game_server(found)
    # its share is spent: the other replica's last pick, not its next
    assert cache.find_game_server(request, mine.owned()) is others[-1]
