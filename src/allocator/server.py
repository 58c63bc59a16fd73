"""The allocator service's servers and lifecycle (Agones `cmd/allocator` `main`, `runMux`, `runREST`,
`runGRPC`).

`AllocatorServer.start()`:
* runs the gRPC server (the allocation service and `grpc.health.v1.Health`, keepalive as Agones:
  pings no more often than 1 min, idle connections closed after 5 min) on loopback, in plaintext
  and, with TLS, also on a port where grpc does the TLS of the clients a listener passes to it;
* runs the REST app without a socket of its own: the listeners hand it their REST connections;
* exposes them through `mux.Listener`s: one for both when `grpc_port == http_port`, else one for
  REST, while a gRPC port of its own is bound by grpc itself (its TLS done by grpc); (m)TLS per
  the settings, certificates hot-reloaded by `TLSFiles.watch`;
* serves `/live`, `/ready` and `/metrics` on `health_port`; `/ready` fails while shutting down and
  when the API server did not answer its last `/version` probe (one a second).

`shutdown()` (SIGTERM/SIGINT in `run_until_signalled`): readiness and gRPC health go NOT_SERVING,
then after `readiness_shutdown_duration` the listeners stop accepting, in-flight requests finish
(up to `drain_timeout`), and everything stops; `run_until_signalled` then returns 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import structlog
from aiohttp import web
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from ..controller.health import HealthHandler
from ..httpserver import serve_app
from .mux import Backends, Listener, Route
from .service import SERVICE_NAME, AllocationService
from .settings import AllocatorServiceSettings
from .tlsfiles import TLSFiles

LOOPBACK = "127.0.0.1"
API_CHECK_INTERVAL = 1.0
MAX_PORT = 65535
# Seconds the public connections get to flush the last answers once the backends stopped.
CONNECTION_LINGER = 1.0

GRPC_OPTIONS = (
    ("grpc.keepalive_permit_without_calls", 1),
    ("grpc.http2.min_recv_ping_interval_without_data_ms", 60_000),
    ("grpc.http2.min_ping_interval_without_data_ms", 60_000),
    ("grpc.max_connection_idle_ms", 300_000),
    ("grpc.keepalive_timeout_ms", 600_000),
)

ApiCheck = Callable[[], Awaitable[None]]


def valid_port(port: int) -> bool:
    """Agones' `validPort`."""
    return 0 <= port < MAX_PORT


class AllocatorServer:
    def __init__(
        self,
        settings: AllocatorServiceSettings,
        service: AllocationService,
        *,
        api_check: ApiCheck | None = None,
        registry: CollectorRegistry | None = None,
        logger: Any = None,
    ) -> None:
        if not valid_port(settings.grpc_port) and not valid_port(settings.http_port):
            raise ValueError(
                "Must specify a valid gRPC port or an HTTP port for the allocator service"
            )
        self.settings = settings
        self.service = service
        self.api_check = api_check
        self.registry = registry or REGISTRY
        self.log = (logger or structlog.get_logger()).bind(component="allocator")
        self.tls = (
            None
            if settings.disable_tls
            else TLSFiles(settings.tls_dir, settings.client_ca_dir, settings.mtls(), self.log)
        )
        self.health = HealthHandler()
        self.grpc_health = health.aio.HealthServicer()
        self.listeners: dict[str, Listener] = {}
        self.ports: dict[str, int] = {}
        self.health_port = 0
        self.shutting_down = False
        self._api_error: str | None = "API server not checked yet" if api_check else None
        self._stop = asyncio.Event()
        self._grpc: grpc.aio.Server | None = None
        self._grpc_tls_port = 0
        self._grpc_public_port = 0
        self._rest: web.AppRunner | None = None
        self._health_runner: web.AppRunner | None = None
        self._tasks: list[asyncio.Task[None]] = []

    # -- start --------------------------------------------------------------------------------

    async def start(self) -> None:
        s = self.settings
        if self.tls is not None:
            self.tls.load()
            self._tasks.append(asyncio.create_task(self.tls.watch(s.cert_watch_interval)))
        backends = await self._start_backends()
        if s.grpc_port == s.http_port:
            await self._listen("mux", backends, s.http_port)
        else:
            if valid_port(s.http_port):
                await self._listen("http", {Route.REST: backends[Route.REST]}, s.http_port)
            if self._grpc_public_port:
                self.ports["grpc"] = self._grpc_public_port
            elif valid_port(s.grpc_port):
                await self._listen("grpc", {Route.GRPC: backends[Route.GRPC]}, s.grpc_port)
        self.health.add_readiness_check("allocator-agones-client", self._ready_check)
        if self.api_check is not None:
            self._tasks.append(asyncio.create_task(self._check_api_loop()))
        await self._start_health()
        for service in ("", SERVICE_NAME):
            await self.grpc_health.set(service, health_pb2.HealthCheckResponse.SERVING)

    async def _start_backends(self) -> Backends:
        server = grpc.aio.server(options=GRPC_OPTIONS)
        server.add_generic_rpc_handlers((self.service.grpc_handler(),))
        health_pb2_grpc.add_HealthServicer_to_server(self.grpc_health, server)
        grpc_port = server.add_insecure_port(f"{LOOPBACK}:0")
        self._grpc_tls_port = (
            0
            if self.tls is None or not self.tls.grpc_ready()
            else server.add_secure_port(f"{LOOPBACK}:0", self.tls.grpc_credentials())
        )
        self._grpc_public_port = self._bind_grpc_port(server)
        await server.start()
        self._grpc = server
        self._rest = web.AppRunner(
            self.service.rest_app(), access_log=None, shutdown_timeout=self.settings.drain_timeout
        )
        await self._rest.setup()
        assert self._rest.server is not None
        return {Route.GRPC: (LOOPBACK, grpc_port), Route.REST: self._rest.server}

    def _bind_grpc_port(self, server: grpc.aio.Server) -> int:
        """A gRPC port of its own is grpc's alone, its TLS done by grpc (0: not bound here; a
        listener serves it, as when mTLS has no client CA yet, which grpc cannot start with)."""
        s = self.settings
        if s.grpc_port == s.http_port or not valid_port(s.grpc_port):
            return 0
        address = f"{s.address or '[::]'}:{s.grpc_port}"
        if self.tls is None:
            return int(server.add_insecure_port(address))
        if not self.tls.grpc_ready():
            return 0
        return int(server.add_secure_port(address, self.tls.grpc_credentials()))

    async def _listen(self, name: str, backends: Backends, port: int) -> None:
        grpc_tls = (LOOPBACK, self._grpc_tls_port) if self._grpc_tls_port else None
        listener = Listener(backends, self.tls, self.log, grpc_tls=grpc_tls)
        self.ports[name] = await listener.start(self.settings.address, port)
        self.listeners[name] = listener
        self.log.info("allocator listening", listener=name, port=self.ports[name])

    async def _metrics(self, request: web.Request) -> web.Response:
        del request
        return web.Response(
            body=generate_latest(self.registry), headers={"Content-Type": CONTENT_TYPE_LATEST}
        )

    async def _start_health(self) -> None:
        app = web.Application()
        self.health.add_routes(app)
        if self.settings.prometheus_exporter:
            app.router.add_get("/metrics", self._metrics)
        self._health_runner, self.health_port = await serve_app(
            app, self.settings.address, self.settings.health_port
        )

    # -- readiness ----------------------------------------------------------------------------

    def _ready_check(self) -> None:
        if self.shutting_down:
            raise RuntimeError("asked to shut down, failed readiness check")
        if self._api_error is not None:
            raise RuntimeError(f"failed to reach Kubernetes: {self._api_error}")

    async def _check_api_loop(self) -> None:
        assert self.api_check is not None
        while True:
            try:
                await asyncio.wait_for(self.api_check(), timeout=API_CHECK_INTERVAL * 5)
                self._api_error = None
            except Exception as err:
                self._api_error = str(err) or type(err).__name__
            await asyncio.sleep(API_CHECK_INTERVAL)

    # -- stop ---------------------------------------------------------------------------------

    def stop(self) -> None:
        """Begin a graceful shutdown (what SIGTERM does)."""
        self._stop.set()

    async def shutdown(self) -> None:
        """Fail readiness, stop taking connections, finish in-flight requests, stop."""
        s = self.settings
        self.shutting_down = True
        await self.grpc_health.enter_graceful_shutdown()
        self.log.info("shutdown requested, failing readiness")
        if s.readiness_shutdown_duration > 0:
            await asyncio.sleep(s.readiness_shutdown_duration)
        for listener in self.listeners.values():
            listener.close()
        # The backends stop first, while the public connections still carry their answers:
        # gRPC refuses new calls and finishes the running ones, aiohttp the same for requests.
        stopping = []
        if self._grpc is not None:
            stopping.append(self._grpc.stop(s.drain_timeout))
        if self._rest is not None:
            stopping.append(self._rest.cleanup())
        await asyncio.gather(*stopping, return_exceptions=True)
        await self._drain(s.drain_timeout)
        for listener in self.listeners.values():
            await listener.wait_closed(CONNECTION_LINGER)
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._health_runner is not None:
            await self._health_runner.cleanup()
        self.log.info("allocator shut down")

    async def _drain(self, timeout: float) -> None:
        """Wait until no request is being served (or `timeout`)."""
        try:
            await asyncio.wait_for(self.service.wait_idle(), timeout)
        except TimeoutError:
            self.log.warning("requests still in flight at the drain timeout", timeout=timeout)

    async def run_until_signalled(self) -> int:
        loop = asyncio.get_running_loop()
        installed = []
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, self.stop)
                installed.append(sig)
        try:
            await self._stop.wait()
            await self.shutdown()
        finally:
            for sig in installed:
                loop.remove_signal_handler(sig)
        return 0
