"""A loopback HTTP proxy to an API server that injects faults into lists and watches.

Requests are forwarded with the upstream client's credentials and TLS. Faults are queued per kind of
request (`list` or `watch`) and each applies to the next matching request:
`"410"` (watch: a 410 Expired ERROR event, then close; list: a 410 Status), `"429"` (429 with
Retry-After: 1), `"500"` (500 InternalError). `drop_watches()` closes every open watch stream.
"""

from __future__ import annotations

import asyncio
import json
from collections import deque
from typing import Any

import aiohttp
from aiohttp import web

from agones.client.config import Config
from agones.client.rest import RESTClient
from tests.status import failure_status


def status(code: int, reason: str) -> dict[str, Any]:
    return failure_status(code, reason, f"injected {reason}")


class FaultProxy:
    def __init__(self, upstream: RESTClient) -> None:
        self.upstream = upstream
        self.faults: dict[str, deque[str]] = {"list": deque(), "watch": deque()}
        self.injected: list[tuple[str, str]] = []
        self.requests: list[tuple[str, str]] = []
        self._drop = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.url = ""

    def config(self) -> Config:
        return Config(host=self.url, qps=0)

    def inject(self, kind: str, fault: str) -> None:
        self.faults[kind].append(fault)

    def drop_watches(self) -> None:
        self._drop.set()
        self._drop = asyncio.Event()

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self.handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        self.drop_watches()
        if self._runner is not None:
            await self._runner.cleanup()

    def _fault_response(self, fault: str, watch: bool) -> web.Response:
        if fault == "410":
            if watch:
                line = json.dumps({"type": "ERROR", "object": status(410, "Expired")}) + "\n"
                return web.Response(text=line, content_type="application/json")
            return web.json_response(status(410, "Expired"), status=410)
        if fault == "429":
            return web.json_response(
                status(429, "TooManyRequests"), status=429, headers={"Retry-After": "1"}
            )
        return web.json_response(status(500, "InternalError"), status=500)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        watch = request.query.get("watch") in ("true", "1")
        kind = "watch" if watch else ("list" if request.method == "GET" else "write")
        self.requests.append((kind, request.path_qs))
        if self.faults.get(kind):
            fault = self.faults[kind].popleft()
            self.injected.append((kind, fault))
            return self._fault_response(fault, watch)
        up = self.upstream
        session = up._get_session()
        headers = up._headers(request.headers.get("Content-Type"))
        headers["Accept"] = request.headers.get("Accept", "application/json")
        body = await request.read() if request.can_read_body else None
        timeout = aiohttp.ClientTimeout(total=None if watch else 60)
        async with session.request(
            request.method,
            up.config.host + request.path,
            params=request.query,
            data=body,
            headers=headers,
            timeout=timeout,
        ) as resp:
            if not watch or resp.status >= 300:
                payload = await resp.read()
                return web.Response(
                    body=payload,
                    status=resp.status,
                    headers={"Content-Type": resp.headers.get("Content-Type", "application/json")},
                )
            out = web.StreamResponse(status=resp.status)
            out.content_type = "application/json"
            await out.prepare(request)
            drop = self._drop
            reader = asyncio.ensure_future(self._pump(resp, out))
            dropper = asyncio.ensure_future(drop.wait())
            await asyncio.wait({reader, dropper}, return_when=asyncio.FIRST_COMPLETED)
            for task in (reader, dropper):
                task.cancel()
            await asyncio.gather(reader, dropper, return_exceptions=True)
            return out

    @staticmethod
    async def _pump(resp: aiohttp.ClientResponse, out: web.StreamResponse) -> None:
        async for chunk in resp.content.iter_any():
            await out.write(chunk)
