"""What one cached GameServer pod costs the controllers' informer: decode time and bytes kept.

One realistic GameServer pod (two containers, four conditions, managedFields) as a watch event,
decoded the way the GameServer controllers' pod informer does (`StructDecoder(Pod)`, the
`apis.core.v1` read model, then `transform_strip_managed_fields`), against the whole object as a
raw JSON dict (`RawDecoder`, what an untrimmed cache would hold). Reports microseconds per event
(best of five runs) and the bytes each cached copy keeps alive (tracemalloc over N copies).

    .venv/bin/python bench/bench_pod_cache.py [events]
"""

from __future__ import annotations

import json
import sys
import timeit
import tracemalloc
from collections.abc import Callable
from typing import Any

from agones.apis.core.v1 import Pod
from agones.informers.listwatch import RawDecoder, StructDecoder
from agones.informers.transform import transform_strip_managed_fields

CONDITIONS = ("Initialized", "Ready", "ContainersReady", "PodScheduled")
POD: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "gs-abc",
        "namespace": "default",
        "resourceVersion": "123",
        "uid": "u",
        "labels": {"agones.dev/role": "gameserver", "agones.dev/gameserver": "gs-abc"},
        "annotations": {"agones.dev/container": "game", "agones.dev/sdk-version": "1.40"},
        "ownerReferences": [
            {"apiVersion": "agones.dev/v1", "kind": "GameServer", "name": "gs-abc", "uid": "u",
             "controller": True, "blockOwnerDeletion": True}
        ],
        "managedFields": [
            {"manager": "kubelet", "operation": "Update", "fieldsV1": {"f:status": {}}}
        ] * 3,
    },
    "spec": {
        "nodeName": "node-1",
        "containers": [
            {"name": "game", "image": "img", "ports": [{"containerPort": 7654, "hostPort": 7001}],
             "env": [{"name": f"A{i}", "value": "b"} for i in range(5)]},
            {"name": "agones-gameserver-sidecar", "image": "sdk",
             "env": [{"name": f"X{i}", "value": "y"} for i in range(6)]},
        ],
        "volumes": [{"name": "v"}],
    },
    "status": {
        "phase": "Running",
        "podIP": "10.0.0.1",
        "podIPs": [{"ip": "10.0.0.1"}],
        "conditions": [
            {"type": t, "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"}
            for t in CONDITIONS
        ],
        "containerStatuses": [
            {"name": "game", "containerID": "c1", "image": "img", "ready": True,
             "restartCount": 0, "state": {"running": {"startedAt": "2024-01-01T00:00:00Z"}}}
        ],
    },
}  # fmt: skip


def measure(name: str, decode: Callable[[], Any], events: int) -> None:
    # the best of five runs: the machine is shared, the minimum is the least disturbed
    micros = min(timeit.repeat(decode, number=events // 5, repeat=5)) / (events // 5) * 1e6
    tracemalloc.start()
    kept = [decode() for _ in range(2000)]
    size = tracemalloc.get_traced_memory()[0] / len(kept)
    tracemalloc.stop()
    print(f"  {name:40s} {micros:6.1f} us/event   {size:6.0f} bytes per cached pod")


def main(events: int) -> None:
    raw = json.dumps({"type": "MODIFIED", "object": POD}).encode()
    whole, typed = RawDecoder(), StructDecoder(Pod)
    print(f"one GameServer pod watch event ({len(raw)} bytes), {events} decodes")
    measure("whole object as a dict (RawDecoder)", lambda: whole.decode_event(raw).object, events)
    measure(
        "read model (StructDecoder(Pod) + strip)",
        lambda: transform_strip_managed_fields(typed.decode_event(raw).object),
        events,
    )


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20000)
