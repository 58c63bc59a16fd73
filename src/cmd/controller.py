"""`agones controller`: the controller binary (Agones `cmd/controller`), on the framework's runner.

Flags mirror Agones' and each falls back to its environment variable (`NUM_WORKERS`,
`API_SERVER_QPS`, `API_SERVER_QPS_BURST`, `LEADER_ELECTION`, `POD_NAMESPACE`, `HTTP_PORT`,
`KUBECONFIG`, `LOG_LEVEL`, `PROMETHEUS_EXPORTER`). Controllers come from the modules listed in
`CONTROLLERS`, each exposing `build(context) -> list[Runnable]`; add a module there (one line) to
run it. Exit codes: 0 after SIGTERM, 1 when leadership is lost, 2 on bad settings.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
from typing import TYPE_CHECKING, Any

from ..controller.settings import ControllerSettings

if TYPE_CHECKING:
    from ..controller.runner import Context, Runnable

CONTROLLERS: tuple[str, ...] = ()

_TRUE = ("1", "true", "yes", "on")


def _env(name: str, default: Any) -> Any:
    return os.environ.get(name, default)


def register(subparsers: Any) -> None:
    d = ControllerSettings()
    p: argparse.ArgumentParser = subparsers.add_parser(
        "controller", help="run the controllers (GameServer, GameServerSet, Fleet, ...)"
    )
    p.add_argument("--http-port", type=int, default=int(_env("HTTP_PORT", d.http_port)))
    p.add_argument("--num-workers", type=int, default=int(_env("NUM_WORKERS", d.num_workers)))
    p.add_argument(
        "--api-server-qps", type=float, default=float(_env("API_SERVER_QPS", d.api_server_qps))
    )
    p.add_argument(
        "--api-server-qps-burst",
        type=int,
        default=int(_env("API_SERVER_QPS_BURST", d.api_server_qps_burst)),
    )
    p.add_argument(
        "--leader-election",
        action=argparse.BooleanOptionalAction,
        default=str(_env("LEADER_ELECTION", d.leader_election)).lower() in _TRUE,
    )
    p.add_argument("--pod-namespace", default=_env("POD_NAMESPACE", d.pod_namespace))
    p.add_argument("--kubeconfig", default=_env("KUBECONFIG", d.kubeconfig))
    p.add_argument("--log-level", default=_env("LOG_LEVEL", d.log_level))
    p.add_argument(
        "--prometheus-exporter",
        action=argparse.BooleanOptionalAction,
        default=str(_env("PROMETHEUS_EXPORTER", d.prometheus_exporter)).lower() in _TRUE,
    )
    p.set_defaults(func=run)


def settings_from_args(args: argparse.Namespace) -> ControllerSettings:
    settings = ControllerSettings(
        http_port=args.http_port,
        num_workers=args.num_workers,
        api_server_qps=args.api_server_qps,
        api_server_qps_burst=args.api_server_qps_burst,
        leader_election=args.leader_election,
        pod_namespace=args.pod_namespace,
        kubeconfig=args.kubeconfig or None,
        log_level=args.log_level,
        prometheus_exporter=args.prometheus_exporter,
    )
    if settings.num_workers < 1:
        raise ValueError("--num-workers must be at least 1")
    if settings.api_server_qps <= 0 or settings.api_server_qps_burst < 1:
        raise ValueError("--api-server-qps must be positive and --api-server-qps-burst at least 1")
    return settings


def build_controllers(ctx: Context) -> list[Runnable]:
    runnables: list[Runnable] = []
    for name in CONTROLLERS:
        runnables.extend(importlib.import_module(name).build(ctx))
    return runnables


def run(args: argparse.Namespace) -> int:
    from ..client.config import ConfigError, load_config
    from ..client.rest import RESTClient
    from ..controller.runner import ControllerRunner
    from ..logging import configure_logging

    try:
        settings = settings_from_args(args)
        configure_logging(settings.log_level)
        config = load_config(settings.kubeconfig)
    except (ValueError, ConfigError) as err:
        print(f"error: {err}")
        return 2
    config.qps, config.burst = settings.api_server_qps, settings.api_server_qps_burst

    async def main() -> int:
        async with RESTClient(config) as client:
            return await ControllerRunner(settings, client, build_controllers).run()

    return asyncio.run(main())
