"""Expose an SDK backend: gRPC on the gRPC port, the REST gateway on the HTTP port, health on its own.

`serve_sdk` binds and starts both servers and returns a handle with the ports actually bound (pass
port 0 to get an ephemeral one); `SDKServing.stop()` stops them. The health app (`/healthz`,
`/gshealthz`) is served only in cluster mode, as in Agones, where the game container's liveness
probe drives the health checks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import grpc
from aiohttp import web

from ..httpserver import serve_app
from .backend import SDKBackend, register_services
from .gateway import Gateway


class HealthSource(Protocol):
    def ensure_health_checks_running(self) -> None: ...
    def healthy(self) -> bool: ...


def grpc_target(address: str, port: int) -> str:
    host = address or "[::]"
    if ":" in host and not host.startswith("["):
        host = f"[{host}]"
    return f"{host}:{port}"


def health_app(source: HealthSource) -> web.Application:
    async def healthz(_: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def gshealthz(_: web.Request) -> web.Response:
        source.ensure_health_checks_running()
        if source.healthy():
            return web.Response(text="ok")
        return web.Response(status=500)

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/gshealthz", gshealthz)
    return app


@dataclass
class SDKServing:
    """Running servers and the ports they are bound to."""

    grpc_server: grpc.aio.Server
    grpc_port: int
    http_port: int
    health_port: int | None = None
    runners: list[web.AppRunner] = field(default_factory=list)

    async def stop(self, grace: float | None = None) -> None:
        for runner in self.runners:
            await runner.cleanup()
        await self.grpc_server.stop(grace)


async def _start_http(app: web.Application, address: str, port: int) -> tuple[web.AppRunner, int]:
    return await serve_app(app, address, port, handler_cancellation=True)


async def serve_sdk(
    backend: SDKBackend,
    *,
    address: str = "localhost",
    grpc_port: int = 9357,
    http_port: int = 9358,
    health: HealthSource | None = None,
    health_port: int = 8080,
) -> SDKServing:
    """Start gRPC + gateway (+ health when `health` is given) for `backend`."""
    server = grpc.aio.server()
    register_services(server, backend)
    bound_grpc = server.add_insecure_port(grpc_target(address, grpc_port))
    if bound_grpc == 0:
        raise OSError(f"could not listen on gRPC endpoint {grpc_target(address, grpc_port)}")
    await server.start()
    serving = SDKServing(server, bound_grpc, 0)
    try:
        runner, serving.http_port = await _start_http(Gateway(backend).app(), address, http_port)
        serving.runners.append(runner)
        if health is not None:
            runner, serving.health_port = await _start_http(health_app(health), "", health_port)
            serving.runners.append(runner)
    except BaseException:
        await serving.stop()
        raise
    return serving
