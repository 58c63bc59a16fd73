"""What the event correlator keeps per object: bytes per GameServer after its four usual Events.

One `EventBroadcaster` (client-go's correlator: seen, similar and spam caches plus the index that
`forget` uses) records, for each of N GameServers, the four Events a GameServer gets on its way
to Ready (Port allocated, Pod created, Address and port populated, SDK.Ready() complete) against
an in-memory client; then the bytes still traced (tracemalloc) per GameServer and the entries
cached. Run:

    .venv/bin/python -m bench.bench_event_memory [objects]
"""

from __future__ import annotations

import asyncio
import gc
import json
import sys
import tracemalloc
from typing import Any

from agones.record.event import EventBroadcaster


class _Client:
    async def create(self, res: Any, body: Any, namespace: str | None = None) -> dict[str, Any]:
        return dict(body)

    async def patch(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return {}


def game_server(i: int) -> dict[str, Any]:
    return {
        "apiVersion": "agones.dev/v1",
        "kind": "GameServer",
        "metadata": {
            "name": f"bench-fleet-abcde-{i:05d}",
            "namespace": "default",
            "uid": f"9f0c8a47-3d3b-4c43-9b3a-{i:012d}",
            "resourceVersion": str(i),
        },
    }


async def measure(objects: int) -> dict[str, Any]:
    broadcaster = EventBroadcaster(_Client())  # type: ignore[arg-type]
    recorder = broadcaster.new_recorder("gameserver-controller", "controller-0")
    servers = [game_server(i) for i in range(objects)]
    writer = asyncio.create_task(broadcaster.run())
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    for gs in servers:
        name = gs["metadata"]["name"]
        recorder.event(gs, "Normal", "PortAllocation", "Port allocated")
        recorder.event(gs, "Normal", "Creating", f"Pod {name} created")
        recorder.event(gs, "Normal", "Scheduled", "Address and port populated")
        recorder.event(gs, "Normal", "RequestReady", "SDK.Ready() complete")
        await asyncio.sleep(0)
    await broadcaster.flush()
    gc.collect()
    kept = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    writer.cancel()
    return {
        "objects": objects,
        "bytes_per_object": round(kept / objects),
        "cache_entries": broadcaster.cached(),
    }


def main() -> None:
    objects = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    print(json.dumps(asyncio.run(measure(objects)), indent=2))


if __name__ == "__main__":
    main()
