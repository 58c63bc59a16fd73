"""The allocator service's servers and lifecycle (Agones `cmd/allocator` `main`, `runMux`, `runREST`,
`runGRPC`).

`AllocatorServer.start()`:
* runs the gRPC server (`grpcserver.Server`: the allocation service and `grpc.health.v1.Health`,
  keepalive as Agones: pings no more often than 1 min, idle connections closed after 5 min) and
  the REST app, neither with a socket of its own: the listeners hand them their connections;
* exposes them through `mux.Listener`s: one for both when `grpc_port == http_port`, else one per
  API; (m)TLS per the settings, done by the listeners for both APIs, certificates hot-reloaded by
  `TLSFiles.watch`;
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

import structlog
from aiohttp import web
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from ..controller.health import HealthHandler
from ..grpcserver import Server
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

# Agones' keepalive: a connection without calls for 5 min is closed; pings once a minute at most.
MAX_CONNECTION_IDLE = 300.0
MIN_PING_INTERVAL = 60.0

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
        self._grpc: Server | None = None
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
            if valid_port(s.grpc_port):
                await self._listen("grpc", {Route.GRPC: backends[Route.GRPC]}, s.grpc_port)
        self.health.add_readiness_check("allocator-agones-client", self._ready_check)
        if self.api_check is not None:
            self._tasks.append(asyncio.create_task(self._check_api_loop()))
        await self._start_health()
        for service in ("", SERVICE_NAME):
            await self.grpc_health.set(service, health_pb2.HealthCheckResponse.SERVING)

    async def _start_backends(self) -> Backends:
        server = Server(
            max_connection_idle=MAX_CONNECTION_IDLE, min_ping_interval=MIN_PING_INTERVAL
        )
        server.add_generic_rpc_handlers((self.service.grpc_handler(),))
        health_pb2_grpc.add_HealthServicer_to_server(self.grpc_health, server)
        self._grpc = server
        self._rest = web.AppRunner(
            self.service.rest_app(), access_log=None, shutdown_timeout=self.settings.drain_timeout
        )
        await self._rest.setup()
        assert self._rest.server is not None
        return {Route.GRPC: server.protocol, Route.REST: self._rest.server}

    async def _listen(self, name: str, backends: Backends, port: int) -> None:
        listener = Listener(backends, self.tls, self.log)
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
