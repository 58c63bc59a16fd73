"""Start an aiohttp application on a host and port: the one way every server here binds HTTP.

`serve_app(app, host, port)` sets the runner up, starts one TCP site (TLS when `ssl_context` is
given; port 0 picks a free one) and returns the runner (whose `cleanup()` stops it) and the port
actually bound. Access logs are off; other `AppRunner` options pass through.

`serve_server(server, host, port)` does the same for aiohttp's low-level `web.Server` (one handler
for every request, no router or middlewares: the server's connection options are its own).
"""

from __future__ import annotations

import ssl
from typing import Any

from aiohttp import web


async def serve_app(
    app: web.Application,
    host: str | None,
    port: int,
    *,
    ssl_context: ssl.SSLContext | None = None,
    **runner_options: Any,
) -> tuple[web.AppRunner, int]:
    runner = web.AppRunner(app, access_log=None, **runner_options)
    return runner, await _start(runner, host, port, ssl_context)


async def serve_server(
    server: web.Server,
    host: str | None,
    port: int,
    *,
    ssl_context: ssl.SSLContext | None = None,
    shutdown_timeout: float = 60.0,
) -> tuple[web.ServerRunner, int]:
    runner = web.ServerRunner(server, shutdown_timeout=shutdown_timeout)
    return runner, await _start(runner, host, port, ssl_context)


async def _start(
    runner: web.BaseRunner, host: str | None, port: int, ssl_context: ssl.SSLContext | None
) -> int:
    """Set `runner` up and start its TCP site; the port bound."""
    await runner.setup()
    site = web.TCPSite(runner, host or None, port, ssl_context=ssl_context, reuse_address=True)
    try:
        await site.start()
    except BaseException:
        await runner.cleanup()
        raise
    # IPv4 first: port 0 on every interface binds IPv4 and IPv6 to different ports.
    addresses = sorted(runner.addresses, key=lambda address: len(address) != 2)
    return int(addresses[0][1])
