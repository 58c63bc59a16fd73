"""What an informer in the local API server's own process costs per watch event: over HTTP
(`RESTListWatches`: the event framed, written to a loopback socket, read and decoded again) or
in-process (`InProcessListWatches`: the store's watch fan-out, the object decoded from its stored
JSON).

One process runs the local API server and `--informers` ConfigMap informers (a payload about the
size of a GameServer), and writes `--objects` creates, as many updates and as many deletes
straight into the registry; once every informer has seen the last write, the process's CPU time
(`time.process_time`) less that of the same writes with no informer, divided by events x
informers, is the CPU per event per informer, in microseconds. Each mode runs `--repeat` times
alternately; the best of each is reported (the machine may be shared: CPU time, not rates).

    .venv/bin/python -m bench.bench_inprocess_watch --objects 2000 --informers 3 --repeat 3
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from typing import Any

from agones.aioloop import run
from agones.client.config import load_config
from agones.client.rest import RESTClient
from agones.client.versioned.resources import CONFIG_MAPS
from agones.informers import RESTListWatches, SharedInformerFactory
from agones.localcluster import LocalAPIServer
from agones.localcluster.apiserver.deletion import DeleteOptions
from agones.localcluster.apiserver.inprocess import InProcessListWatches

PAYLOAD = {f"key-{i}": "x" * 40 for i in range(40)}  # ~2.5 KB of JSON, as a GameServer


async def one_run(mode: str, objects: int, informers: int) -> float:
    """CPU seconds for the writes and, unless `mode` is "none", every informer catching up."""
    async with LocalAPIServer() as server, RESTClient(load_config(server.kubeconfig)) as rest:
        source = (
            InProcessListWatches(server.registry, 5.0)
            if mode == "inprocess"
            else RESTListWatches(rest)
        )
        factories = [
            SharedInformerFactory(rest, 0.0, namespace="default", list_watches=source)
            for _ in range(informers if mode != "none" else 0)
        ]
        caught = [f.for_resource(CONFIG_MAPS).informer() for f in factories]
        for f in factories:
            f.start()
            await f.wait_for_cache_sync(30)
        info = server.registry.lookup("", "v1", "configmaps")
        assert info is not None
        start = time.process_time()
        for i in range(objects):
            body = {"metadata": {"name": f"c{i}"}, "data": PAYLOAD}
            await server.registry.create(info, "default", body)
        for i in range(objects):
            body = {"metadata": {"name": f"c{i}"}, "data": {**PAYLOAD, "key-0": "y"}}
            await server.registry.update(info, "default", f"c{i}", body)
        for i in range(objects):
            await server.registry.delete(info, "default", f"c{i}", DeleteOptions())
        last = str(server.store.rv)
        while any(i.last_sync_resource_version() != last for i in caught):
            await asyncio.sleep(0.001)
        spent = time.process_time() - start
        for f in factories:
            await f.shutdown()
        return spent


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    best: dict[str, float] = {}
    for _ in range(args.repeat):
        for mode in ("none", "http", "inprocess"):
            spent = await one_run(mode, args.objects, args.informers)
            best[mode] = min(best.get(mode, spent), spent)
    events = 3 * args.objects * args.informers
    per_event = {
        mode: round(1e6 * (best[mode] - best["none"]) / events, 1) for mode in ("http", "inprocess")
    }
    return {
        "objects": args.objects,
        "informers": args.informers,
        "cpu_seconds_best": {k: round(v, 3) for k, v in best.items()},
        "us_per_event_per_informer": per_event,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=2000)
    parser.add_argument("--informers", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=3)
    print(json.dumps(run(bench(parser.parse_args())), indent=2))


if __name__ == "__main__":
    main()
