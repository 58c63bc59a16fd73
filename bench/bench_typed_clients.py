"""What the generated typed clients cost over the raw REST client, on a loopback API server.

Serves a list of N realistic GameServers (the one `bench_apis_codec` uses) from an in-process
aiohttp server and measures, per call, `list` through:

* `raw`    `RESTClient.list` (bytes → dicts, what the informers' RawDecoder does);
* `typed`  the generated `GameServerClient.list` (bytes → `ObjectList[GameServer]` in one pass);

plus `get` of one object each way. Prints calls/s and objects/s. Run:

    .venv/bin/python -m bench.bench_typed_clients [--objects 1000] [--seconds 2.0]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from aiohttp.test_utils import TestServer

from agones.client.config import Config
from agones.client.rest import RESTClient
from agones.client.versioned import Clientset
from agones.client.versioned.resources import GAME_SERVERS
from bench.bench_apis_codec import realistic_game_server


def make_app(n: int) -> web.Application:
    items = []
    for i in range(n):
        gs = realistic_game_server()
        gs["metadata"]["name"] = f"gs-{i}"
        items.append(gs)
    listing = json.dumps(
        {"kind": "GameServerList", "metadata": {"resourceVersion": "1"}, "items": items}
    )
    one = json.dumps(items[0])

    async def handle(request: web.Request) -> web.Response:
        if request.path.endswith("/gameservers"):
            return web.Response(body=listing.encode(), content_type="application/json")
        return web.Response(body=one.encode(), content_type="application/json")

    app = web.Application()
    app.router.add_get("/{tail:.*}", handle)
    return app


async def rate(call: Callable[[], Awaitable[Any]], seconds: float) -> float:
    await call()  # warm up
    count, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        await call()
        count += 1
    return count / (time.perf_counter() - start)


async def main(objects: int, seconds: float) -> None:
    server = TestServer(make_app(objects), host="127.0.0.1")
    await server.start_server()
    config = Config(host=str(server.make_url("")).rstrip("/"), qps=0)
    rest = RESTClient(config)
    typed = Clientset(rest).agones_v1().game_servers("default")
    try:
        rows = [
            (
                "list raw dicts",
                await rate(lambda: rest.list(GAME_SERVERS, "default"), seconds),
                objects,
            ),
            ("list typed", await rate(lambda: typed.list(), seconds), objects),
            (
                "get raw dict",
                await rate(lambda: rest.get(GAME_SERVERS, "gs-0", "default"), seconds),
                1,
            ),
            ("get typed", await rate(lambda: typed.get("gs-0"), seconds), 1),
        ]
    finally:
        await rest.close()
        await server.close()
    print(f"{'call':<16}{'calls/s':>10}{'objects/s':>12}")
    for name, per_second, n in rows:
        print(f"{name:<16}{per_second:>10.1f}{per_second * n:>12.0f}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    asyncio.run(main(args.objects, args.seconds))
