"""`agones allocator`: the allocator service (Agones `cmd/allocator`), flags → `AllocatorServiceSettings`.

Agones' flags, each also read from the environment (`HTTP_PORT`, `GRPC_PORT`, ...), plus what the
image fixes in Agones: `--tls-dir` / `--client-ca-dir` (the mounted secrets), `--health-port`
(8080), `--address`, `--kubeconfig` (out of a cluster) and `--feature-gates`. Exit 0 after a
SIGTERM/SIGINT drain; 2 on bad flags; 1 when a port cannot be bound or the certificates cannot be
read.
"""

from __future__ import annotations

import argparse
import ssl
from typing import Any

from .. import aioloop
from ..allocator.app import AllocatorApp
from ..allocator.server import valid_port
from ..allocator.settings import AllocatorServiceSettings
from ..client.config import ConfigError, load_config
from ..client.rest import RESTClient
from ..featuregates import FeatureGates
from ..logging import configure_logging
from . import flags


def add_flags(parser: argparse.ArgumentParser) -> None:
    flags.bind_settings(parser, AllocatorServiceSettings)
    flags.add(parser, "--kubeconfig", str, "", "kubeconfig (out of cluster)")
    flags.add(parser, "--feature-gates", str, "", "feature gates, e.g. PlayerAllocationFilter=true")


def settings_from_args(args: argparse.Namespace) -> AllocatorServiceSettings:
    """`ValueError` with Agones' message when no API port is valid, or with the client budget's
    when the client would refuse it."""
    settings = flags.settings_from_args(AllocatorServiceSettings, args)
    settings.partition()
    budget = flags.client_budget_error(settings.api_server_qps, settings.api_server_qps_burst)
    if budget is not None:
        raise ValueError(budget)
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
        return aioloop.run(main())
    except (OSError, ssl.SSLError) as err:
        print(f"error: could not serve: {err}")
        return 1
