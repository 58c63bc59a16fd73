"""What choosing one GameServer costs the allocator, per request, against a pool of 1000 Ready
GameServers on 4 nodes (no I/O): Agones' way (sort the whole cache, then walk it: what the batch
loop did for every batch, and a lone request is a batch of one) beside the allocation cache's
incrementally sorted `CandidateIndex` (walk the order kept as the cache changes). Each of 800
requests takes the first Ready match of the simple-game-server selector; the chosen GameServer
then turns Allocated (back into the cache, its node's count moved), as the informer would report.

    .venv/bin/python -m bench.bench_allocation_choose
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable

import msgspec

from agones.apis.agones.v1.gameserver import GameServer
from agones.apis.allocation.v1 import GameServerAllocation, apply_defaults, converter
from agones.controllers.gameserverallocations.candidates import CandidateIndex
from agones.controllers.gameserverallocations.find import (
    find_game_server_for_allocation,
    find_in_order,
    packed_within_key,
    selector_states,
    sort_packed,
)
from agones.controllers.gameservers.pernodecounter import NodeCount
from agones.featuregates import FeatureGates

GATES = FeatureGates()
POOL = 1000
REQUESTS = 800


def pool() -> dict[str, GameServer]:
    out = {}
    for i in range(POOL):
        gs = msgspec.convert(
            {
                "metadata": {
                    "name": f"gs-{i:04d}",
                    "namespace": "default",
                    "labels": {"agones.dev/fleet": "green-fleet"},
                },
                "spec": {"ports": [{"name": "default", "containerPort": 7654}]},
                "status": {"state": "Ready", "nodeName": f"node-{i % 4}"},
            },
            GameServer,
        )
        out[f"default/{gs.meta.get_name()}"] = gs
    return out


def request() -> GameServerAllocation:
    gsa = msgspec.convert(
        {
            "metadata": {"namespace": "default"},
            "spec": {"selectors": [{"matchLabels": {"agones.dev/fleet": "green-fleet"}}]},
        },
        GameServerAllocation,
    )
    apply_defaults(gsa, GATES)
    converter(gsa)
    return gsa


def run(choose: Callable[[dict[str, GameServer], dict[str, NodeCount]], GameServer]) -> float:
    """Seconds per request (choose + the bookkeeping of the allocation)."""
    cache = pool()
    counts = {f"node-{n}": NodeCount(ready=POOL // 4, allocated=0) for n in range(4)}
    start = time.perf_counter()
    for _ in range(REQUESTS):
        gs = choose(cache, counts)
        allocated = copy.copy(gs)
        allocated.status = copy.copy(gs.status)
        allocated.gs_status.state = "Allocated"
        key = f"default/{gs.meta.get_name()}"
        cache[key] = allocated
        count = counts[gs.node_name()]
        count.ready, count.allocated = count.ready - 1, count.allocated + 1
        on_change(key, allocated)
    return (time.perf_counter() - start) / REQUESTS


_index: CandidateIndex | None = None


def on_change(key: str, gs: GameServer) -> None:
    if _index is not None:
        _index.put(key, gs)


def main() -> None:
    global _index
    gsa = request()

    def full_sort(cache: dict[str, GameServer], counts: dict[str, NodeCount]) -> GameServer:
        found = find_game_server_for_allocation(
            gsa, sort_packed(list(cache.values()), gsa, counts, GATES), GATES
        )
        assert found is not None
        return found[0]

    sorted_per_request = run(full_sort)
    _index = CandidateIndex(packed_within_key([], GATES))
    for key, gs in pool().items():
        _index.put(key, gs)
    index = _index

    def walk(cache: dict[str, GameServer], counts: dict[str, NodeCount]) -> GameServer:
        order = index.ordered("default", counts, selector_states(gsa))
        found = find_in_order(gsa, ((gs, None) for gs in order), GATES)
        assert found is not None
        return found[0]

    incremental = run(walk)
    print(
        f"choose one of {POOL} (x{REQUESTS}): full sort + walk {sorted_per_request * 1e3:.3f} ms, "
        f"incremental index {incremental * 1e3:.3f} ms per request "
        f"({sorted_per_request / incremental:.0f}x)"
    )


if __name__ == "__main__":
    main()
