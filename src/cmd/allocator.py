"""`agones allocator`: the allocator service (Agones `cmd/allocator`), flags → `AllocatorServiceSettings`.

Agones' flags, each also read from the environment (`HTTP_PORT`, `GRPC_PORT`, ...), plus what the
image fixes in Agones: `--tls-dir` / `--client-ca-dir` (the mounted secrets), `--health-port`
(8080), `--address`, `--kubeconfig` (out of a cluster) and `--feature-gates`. Exit 0 after a
SIGTERM/SIGINT drain; 2 on bad flags; 1 when a port cannot be bound or the certificates cannot be
read.
"""

from __future__ import annotations

import argparse
import asyncio
import ssl
from typing import Any

from ..allocator.app import AllocatorApp
from ..allocator.server import valid_port
from ..allocator.settings import AllocatorServiceSettings
from ..client.config import ConfigError, load_config
from ..client.rest import RESTClient
from ..featuregates import FeatureGates
from ..logging import configure_logging
from . import flags
from .flags import go_bool, go_duration


def add_flags(parser: argparse.ArgumentParser) -> None:
    s = AllocatorServiceSettings()
    add = flags.add
    add(parser, "--http-port", int, s.http_port, "Port to listen on for REST requests")
    add(parser, "--grpc-port", int, s.grpc_port, "Port to listen on for gRPC requests")
    add(parser, "--address", str, s.address, "address the API ports bind to")
    add(parser, "--health-port", int, s.health_port, "port of /live, /ready and /metrics")
    add(parser, "--api-server-qps", int, s.api_server_qps, "sustained QPS to the API server")
    add(parser, "--api-server-qps-burst", int, s.api_server_qps_burst, "burst QPS")
    add(parser, "--prometheus-exporter", go_bool, s.prometheus_exporter, "serve /metrics")
    add(parser, "--disable-mtls", go_bool, s.disable_mtls, "accept clients without certificates")
    add(parser, "--disable-tls", go_bool, s.disable_tls, "serve plaintext")
    add(parser, "--tls-dir", str, s.tls_dir, "directory of tls.crt and tls.key")
    add(parser, "--client-ca-dir", str, s.client_ca_dir, "directory of the client CAs")
    add(
        parser,
        "--remote-allocation-timeout",
        go_duration,
        s.remote_allocation_timeout,
        "remote allocation call timeout",
    )
    add(
        parser,
        "--total-remote-allocation-timeout",
        go_duration,
        s.total_remote_allocation_timeout,
        "total remote allocation timeout including retries",
    )
    add(
        parser,
        "--allocation-batch-wait-time",
        go_duration,
        s.allocation_batch_wait_time,
        "wait between allocation batches (0: serve a lone request at once)",
    )
    add(
        parser,
        "--readiness-shutdown-duration",
        go_duration,
        s.readiness_shutdown_duration,
        "after SIGTERM, fail readiness this long before closing the listeners",
    )
    add(
        parser,
        "--http-unallocated-status-code",
        int,
        s.http_unallocated_status_code,
        "HTTP status code to return when no GameServer is available",
    )
    add(parser, "--log-level", str, s.log_level, "log level")
    add(parser, "--kubeconfig", str, "", "kubeconfig (out of cluster)")
    add(parser, "--feature-gates", str, "", "feature gates, e.g. PlayerAllocationFilter=true")


def settings_from_args(args: argparse.Namespace) -> AllocatorServiceSettings:
    """`ValueError` with Agones' message when no API port is valid."""
    settings = AllocatorServiceSettings(
        http_port=args.http_port,
        grpc_port=args.grpc_port,
        address=args.address,
        health_port=args.health_port,
        api_server_qps=args.api_server_qps,
        api_server_qps_burst=args.api_server_qps_burst,
        prometheus_exporter=args.prometheus_exporter,
        disable_mtls=args.disable_mtls,
        disable_tls=args.disable_tls,
        tls_dir=args.tls_dir,
        client_ca_dir=args.client_ca_dir,
        remote_allocation_timeout=args.remote_allocation_timeout,
        total_remote_allocation_timeout=args.total_remote_allocation_timeout,
        allocation_batch_wait_time=args.allocation_batch_wait_time,
        readiness_shutdown_duration=args.readiness_shutdown_duration,
        http_unallocated_status_code=args.http_unallocated_status_code,
        log_level=args.log_level,
    )
    if not valid_port(settings.grpc_port) and not valid_port(settings.http_port):
        raise ValueError("Must specify a valid gRPC port or an HTTP port for the allocator service")
    return settings


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "allocator", help="serve the allocation API over gRPC and REST (Agones cmd/allocator)"
    )
    add_flags(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        settings = settings_from_args(args)
        gates = FeatureGates.parse(args.feature_gates)
    except ValueError as err:
        print(f"error: {err}")
        return 2
    configure_logging(settings.log_level.lower())
    try:
        client_config = load_config(args.kubeconfig or None)
    except ConfigError as err:
        print(f"error: could not create the client configuration: {err}")
        return 2
    client_config.qps = settings.api_server_qps
    client_config.burst = settings.api_server_qps_burst

    async def main() -> int:
        async with RESTClient(client_config) as client:
            return await AllocatorApp(settings, gates, client).run_until_signalled()

    try:
        return asyncio.run(main())
    except (OSError, ssl.SSLError) as err:
        print(f"error: could not serve: {err}")
        return 1
