"""What the local API server's store holds for its watch history, in-process: 1,000 GameServers
(the allocation bench's Ready GameServer, ~2.3 KB of JSON) written and then updated ten times
each, so each resource's history (10,000 events) is full. Prints the objects the cyclic collector
tracks, the time of one full collection (`gc.collect()`, best of 5) and the resident memory the
writes added; then the same for 10,000 more updates, which replace the whole history.

    python bench/store_history_memory.py                      # this tree
    python bench/other_tree.py TREE bench/store_history_memory.py
"""

from __future__ import annotations

import copy
import gc
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agones.localcluster.apiserver.store import Store
from tests.integration.gameserverallocations.harness import ready_game_server

KEY = "agones.dev/gameservers"
COUNT = 1000
UPDATES = 10


def rss_mib() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() / 2**20


def full_collection_ms() -> float:
    best = float("inf")
    for _ in range(5):
        start = time.perf_counter()
        gc.collect()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def update_all(store: Store, entries: dict[str, Any], n: int) -> None:
    for name, entry in entries.items():
        obj = copy.deepcopy(entry.obj)
        obj["metadata"].setdefault("annotations", {})["round"] = str(n)
        entries[name] = store.put(KEY, obj, entry)


def report(label: str, store: Store, rss_before: float) -> None:
    gc.collect()
    print(
        json.dumps(
            {
                "after": label,
                "history_events": len(store.resource(KEY).history),
                "gc_tracked_objects": len(gc.get_objects()),
                "full_collection_ms": round(full_collection_ms(), 1),
                "rss_added_mib": round(rss_mib() - rss_before, 1),
            }
        )
    )


def main() -> None:
    gc.collect()
    gc.freeze()  # what the process held before: not the store's
    rss_before = rss_mib()
    store = Store()
    entries = {}
    for i in range(COUNT):
        gs = ready_game_server(f"gs-{i:04d}", labels={"agones.dev/fleet": "green-fleet"})
        gs["metadata"]["uid"] = f"uid-{i}"
        entries[gs["metadata"]["name"]] = store.put(KEY, gs, None)
    for n in range(UPDATES - 1):
        update_all(store, entries, n)
    report(f"{COUNT} creates + {COUNT * (UPDATES - 1)} updates", store, rss_before)
    for n in range(UPDATES):
        update_all(store, entries, 100 + n)
    report(f"{COUNT * UPDATES} more updates", store, rss_before)


if __name__ == "__main__":
    main()
