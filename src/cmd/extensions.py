"""`agones extensions`: the admission webhooks and the allocation API (Agones `cmd/extensions`).

Serves `/mutate` and `/validate` and, on the same HTTPS port, the aggregated API
`allocation.agones.dev/v1` (`POST .../namespaces/<ns>/gameserverallocations`, discovery under
`/apis/allocation.agones.dev/v1`, registered by the APIService `v1.allocation.agones.dev`) over
HTTPS on `--webhook-port` (8081), and `/live`, `/ready`,
`/metrics` over HTTP on `--http-port` (8080). TLS: `--cert-file`/`--key-file` when both exist;
otherwise a self-signed pair is generated for `--tls-hosts` and, when the two paths were given,
written there (so whoever registers the webhooks can read the CA bundle from the certificate file).
On SIGTERM `/ready` fails at once, the servers keep answering for `--readiness-shutdown-duration`
(so the Service stops routing first), then stop. The allocation API needs the cluster
(`--kubeconfig`, `$KUBECONFIG` or in-cluster); `--allocation-api=false` serves the webhooks alone.
`--allocation-batch-wait-time` is Agones' idle sleep of the batch loop (0, the default here, serves
a lone request at once); `--allocation-partition I/N` gives replica I of N its share of the
candidates (see `controllers/gameserverallocations/partition.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog
from aiohttp import web
from prometheus_client import REGISTRY, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from .. import aioloop
from ..client.config import ConfigError, load_config
from ..client.rest import RESTClient
from ..controller import HealthHandler
from ..controllers.gameserverallocations import Allocator, AllocatorSettings, Partition
from ..controllers.gameserverallocations.controller import Extensions as AllocationExtensions
from ..controllers.gameserverallocations.multicluster import MultiClusterAllocator
from ..extensions.apiserver import APIServer
from ..extensions.certs import load_or_generate, self_signed, server_ssl_context
from ..extensions.server import WebhookServer
from ..featuregates import FeatureGates
from ..httpserver import serve_app
from ..informers import SharedInformerFactory
from ..logging import configure_logging
from ..record import EventBroadcaster
from . import flags

DEFAULT_TLS_HOSTS = (
    "agones-controller-service.agones-system.svc",
    "agones-controller-service",
    "localhost",
    "127.0.0.1",
)


@dataclass
class ExtensionsSettings:
    webhook_port: int = 8081
    """HTTPS port of /mutate and /validate."""
    http_port: int = 8080
    """HTTP port of /live, /ready and /metrics."""
    cert_file: str = ""
    """Serving certificate (PEM); generated when absent."""
    key_file: str = ""
    """Serving key (PEM); generated when absent."""
    tls_hosts: list[str] = field(default_factory=lambda: list(DEFAULT_TLS_HOSTS))
    """Names and IPs a generated certificate is valid for."""
    readiness_shutdown_duration: float = 0.0
    """Seconds to keep serving after SIGTERM while /ready fails."""
    gates: FeatureGates = field(default_factory=FeatureGates)
    """Feature gates."""
    log_level: str = "info"
    """debug, info, warn or error."""
    bind: str = "0.0.0.0"
    """Address both servers listen on."""
    kubeconfig: str = ""
    """Cluster of the allocation API (empty: $KUBECONFIG, then in-cluster)."""
    allocation_api: bool = True
    """Serve `allocation.agones.dev/v1` beside the webhooks."""
    allocation_batch_wait_time: float = 0.0
    """Seconds the idle allocation batch loop sleeps (Agones: 0.5)."""
    allocation_partition: Partition = field(default_factory=Partition)
    """This replica's share of the allocation candidates."""
    api_server_qps: float = 400.0
    """Sustained queries per second to the API server, per clientset (Agones' default)."""
    api_server_qps_burst: int = 500
    """Burst of queries per second to the API server, per clientset."""


def add_flags(parser: argparse.ArgumentParser) -> None:
    s = ExtensionsSettings()
    flags.add(parser, "--webhook-port", int, s.webhook_port, "HTTPS port of the webhooks")
    flags.add(parser, "--http-port", int, s.http_port, "port of /live, /ready and /metrics")
    flags.add(parser, "--cert-file", str, s.cert_file, "TLS certificate (generated if absent)")
    flags.add(parser, "--key-file", str, s.key_file, "TLS key (generated if absent)")
    flags.add(parser, "--tls-hosts", str, ",".join(s.tls_hosts), "hosts of a generated cert")
    flags.add(
        parser,
        "--readiness-shutdown-duration",
        flags.go_duration,
        s.readiness_shutdown_duration,
        "keep serving this long after SIGTERM",
    )
    flags.add(parser, "--bind", str, s.bind, "listen address")
    flags.add(parser, "--log-level", str, "Info", "log level")
    flags.add(parser, "--feature-gates", str, "", "feature gates, e.g. PlayerTracking=true")
    flags.add(parser, "--kubeconfig", str, s.kubeconfig, "kubeconfig of the allocation API")
    flags.add(parser, "--allocation-api", flags.go_bool, s.allocation_api, "serve allocation API")
    flags.add(
        parser,
        "--allocation-batch-wait-time",
        flags.go_duration,
        s.allocation_batch_wait_time,
        "idle sleep of the allocation batch loop (Agones 500ms)",
    )
    flags.add(parser, "--allocation-partition", str, "", "this replica's share: INDEX/COUNT")
    flags.add(
        parser, "--api-server-qps", float, s.api_server_qps, "sustained QPS to the API server"
    )
    flags.add(
        parser, "--api-server-qps-burst", int, s.api_server_qps_burst, "burst to the API server"
    )


def settings_from_args(args: argparse.Namespace) -> ExtensionsSettings:
    """`ValueError` with a clear message for bad feature gates or a client budget the client's
    token buckets refuse (a burst under 1 while throttling is on)."""
    budget = flags.client_budget_error(args.api_server_qps, args.api_server_qps_burst)
    if budget is not None:
        raise ValueError(budget)
    return ExtensionsSettings(
        webhook_port=args.webhook_port,
        http_port=args.http_port,
        cert_file=args.cert_file,
        key_file=args.key_file,
        tls_hosts=[h.strip() for h in args.tls_hosts.split(",") if h.strip()],
        readiness_shutdown_duration=args.readiness_shutdown_duration,
        gates=FeatureGates.parse(args.feature_gates),
        log_level=args.log_level.lower(),
        bind=args.bind,
        kubeconfig=args.kubeconfig,
        allocation_api=args.allocation_api,
        allocation_batch_wait_time=args.allocation_batch_wait_time,
        allocation_partition=Partition.parse(args.allocation_partition),
        api_server_qps=args.api_server_qps,
        api_server_qps_burst=args.api_server_qps_burst,
    )


def tls_material(settings: ExtensionsSettings) -> tuple[bytes, bytes]:
    """The serving pair; a generated one is written to the given paths when both were named."""
    cert, key = load_or_generate(settings.cert_file, settings.key_file, settings.tls_hosts)
    if settings.cert_file and settings.key_file and not Path(settings.cert_file).is_file():
        Path(settings.cert_file).parent.mkdir(parents=True, exist_ok=True)
        Path(settings.cert_file).write_bytes(cert)
        Path(settings.key_file).write_bytes(key)
        Path(settings.key_file).chmod(0o600)
    return cert, key


class Extensions:
    """The running process: webhook server plus health/metrics server."""

    def __init__(self, settings: ExtensionsSettings) -> None:
        self.settings = settings
        self.log = structlog.get_logger().bind(component="extensions")
        self.cert_pem, key_pem = tls_material(settings)
        self.api = APIServer()
        self.webhooks = WebhookServer(
            settings.gates, server_ssl_context(self.cert_pem, key_pem), api=self.api
        )
        self.allocator: Allocator | None = None
        self._client: RESTClient | None = None
        self._factory: SharedInformerFactory | None = None
        self._events_task: asyncio.Task[None] | None = None
        self.health = HealthHandler()
        self.stopping = asyncio.Event()
        self.health.add_readiness_check("shutdown", self._not_stopping)
        self.http_port: int | None = None
        self._http: web.AppRunner | None = None

    def _not_stopping(self) -> None:
        if self.stopping.is_set():
            raise RuntimeError("shutting down")

    async def _metrics(self, _: web.Request) -> web.Response:
        return web.Response(
            body=generate_latest(REGISTRY), headers={"Content-Type": CONTENT_TYPE_LATEST}
        )

    async def _start_allocation(self) -> None:
        """The allocator, fed by its own informers, behind the allocation API."""
        s = self.settings
        config = load_config(s.kubeconfig or None)
        config.qps, config.burst = s.api_server_qps, s.api_server_qps_burst
        self._client = RESTClient(config)
        self._factory = SharedInformerFactory(self._client)
        # Events draw from the client's Kubernetes budget, the allocation writes from its Agones
        # one (Agones' kubeClient beside its agonesClient), so Events never slow allocations.
        events = EventBroadcaster(self._client)
        settings = AllocatorSettings(
            batch_wait_time=s.allocation_batch_wait_time, partition=s.allocation_partition
        )
        self.allocator = Allocator(
            self._client,
            self._factory,
            events,
            s.gates,
            settings,
            multi_cluster=MultiClusterAllocator(self._factory, s.gates),
        )
        self._factory.start()
        self._events_task = asyncio.create_task(events.run())
        await self.allocator.start()
        AllocationExtensions(self.allocator).register_api_resource(self.api)

    async def start(self) -> None:
        if self.settings.allocation_api:
            await self._start_allocation()
        # What lives now (modules, schemas, the synced caches) lives long (as the controller
        # runner and the allocator find).
        aioloop.freeze_long_lived()
        await self.webhooks.start(self.settings.bind, self.settings.webhook_port)
        app = web.Application()
        self.health.add_routes(app)
        app.router.add_get("/metrics", self._metrics)
        self._http, self.http_port = await serve_app(
            app, self.settings.bind, self.settings.http_port
        )

    async def stop(self) -> None:
        self.stopping.set()
        await asyncio.sleep(self.settings.readiness_shutdown_duration)
        await self._close()

    async def _close(self) -> None:
        await self.webhooks.stop()
        if self.allocator is not None:
            await self.allocator.stop()
        if self._events_task is not None:
            self._events_task.cancel()
            await asyncio.gather(self._events_task, return_exceptions=True)
        if self._factory is not None:
            await self._factory.shutdown()
        if self._client is not None:
            await self._client.close()
        if self._http is not None:
            await self._http.cleanup()
            self._http = None

    async def run_until_signalled(self) -> None:
        loop = asyncio.get_running_loop()
        done = asyncio.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(sig, done.set)
        try:
            await self.start()
        except BaseException:
            await self._close()  # the server that did start
            raise
        await done.wait()
        self.log.info("shutting down")
        await self.stop()


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "extensions", help="serve the admission webhooks (Agones cmd/extensions)"
    )
    add_flags(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        settings = settings_from_args(args)
    except ValueError as err:
        print(f"error: {err}")
        return 2
    configure_logging(settings.log_level)
    try:
        aioloop.run(Extensions(settings).run_until_signalled())
    except ConfigError as err:
        print(f"error: no cluster for the allocation API: {err} (or --allocation-api=false)")
        return 1
    except OSError as err:
        print(f"error: could not serve: {err}")
        return 1
    return 0


__all__ = ["Extensions", "ExtensionsSettings", "register", "run", "self_signed"]
