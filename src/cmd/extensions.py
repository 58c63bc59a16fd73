"""`agones extensions`: the admission webhook server (Agones `cmd/extensions`, webhook part).

Serves `/mutate` and `/validate` over HTTPS on `--webhook-port` (8081) and `/live`, `/ready`,
`/metrics` over HTTP on `--http-port` (8080). TLS: `--cert-file`/`--key-file` when both exist;
otherwise a self-signed pair is generated for `--tls-hosts` and, when the two paths were given,
written there (so whoever registers the webhooks can read the CA bundle from the certificate file).
On SIGTERM `/ready` fails at once, the servers keep answering for `--readiness-shutdown-duration`
(so the Service stops routing first), then stop. The GameServerAllocation API Agones also serves
here is not part of this command yet.
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

from ..controller import HealthHandler
from ..extensions.certs import load_or_generate, self_signed, server_ssl_context
from ..extensions.server import WebhookServer
from ..featuregates import FeatureGates
from ..httpserver import serve_app
from ..logging import configure_logging
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


def settings_from_args(args: argparse.Namespace) -> ExtensionsSettings:
    """`ValueError` with a clear message for bad feature gates."""
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
        self.webhooks = WebhookServer(settings.gates, server_ssl_context(self.cert_pem, key_pem))
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

    async def start(self) -> None:
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
        asyncio.run(Extensions(settings).run_until_signalled())
    except OSError as err:
        print(f"error: could not serve: {err}")
        return 1
    return 0


__all__ = ["Extensions", "ExtensionsSettings", "register", "run", "self_signed"]
