"""The ping service process (Agones `cmd/ping/main.go`): an HTTP answer and a UDP echo.

HTTP (`http_port`, 8080): `/live` is the liveness check (the UDP server is up); every other path and
method answers 200 with `http_response` (`ok`), which lets a player's client measure round trips and
tell clusters apart. UDP (`udp_port`, 8080 as in Agones, where both share the number): the
rate-limited echo of `agones.ping.udp`. `run_until_signalled()` serves until SIGTERM or SIGINT, then
closes both and returns, so the process exits 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from dataclasses import dataclass

import structlog
from aiohttp import web

from ..clock import Clock
from ..controller import HealthHandler
from ..httpserver import serve_app
from .udp import UDPEchoServer

log = structlog.get_logger("agones.ping")


@dataclass(frozen=True)
class PingSettings:
    """Configuration of `agones ping`; defaults are Agones'."""

    http_response: str = "ok"
    """Text of every 200 answer; can identify the cluster."""
    udp_rate_limit: float = 20.0
    """UDP datagrams answered per second per sender (burst: its floor)."""
    http_port: int = 8080
    """HTTP port (0 picks a free one)."""
    udp_port: int = 8080
    """UDP port (0 picks a free one)."""
    address: str = "0.0.0.0"
    """Address both listen on."""


class PingServer:
    def __init__(self, settings: PingSettings, clock: Clock | None = None) -> None:
        self.settings = settings
        self.udp = UDPEchoServer(settings.udp_rate_limit, clock)
        self.health = HealthHandler()
        self.health.add_liveness_check("udp-server", self.udp.healthy)
        self._runner: web.AppRunner | None = None
        self.http_port = 0
        self.udp_port = 0

    async def _answer(self, _: web.Request) -> web.Response:
        return web.Response(text=self.settings.http_response)

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        transport, _ = await loop.create_datagram_endpoint(
            lambda: self.udp, local_addr=(self.settings.address, self.settings.udp_port)
        )
        self.udp_port = transport.get_extra_info("sockname")[1]
        app = web.Application()
        app.router.add_get("/live", self.health.live)
        app.router.add_route("*", "/{tail:.*}", self._answer)
        self._runner, self.http_port = await serve_app(
            app, self.settings.address, self.settings.http_port
        )
        log.info("starting ping", http_port=self.http_port, udp_port=self.udp_port)

    async def stop(self) -> None:
        log.info("shutting down...")
        self.udp.close()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def run_until_signalled(self) -> None:
        loop = asyncio.get_running_loop()
        done = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, done.set)
        await self.start()
        try:
            await done.wait()
        finally:
            await self.stop()
