"""`agones sdkserver`: the SDK sidecar (Agones `cmd/sdk-server`).

Flags and environment variables are Agones': every flag can also be given as the upper-case env
var with `-` → `_` (`--grpc-port` / `GRPC_PORT`), a flag winning over its env var; bools take
`--local` or `--local=false`. `--graceful-termination` has no env var, as in Agones. The flags are
derived from `SDKServerSettings` (`cmd.flags.bind_settings`); a bad value exits 2 naming both.

Modes: `--local` (no Kubernetes; optional `--file` GameServer manifest, re-read on change),
`--test a,b,c` (conformance test mode: records request names and, after `--timeout` seconds or on
SIGTERM, exits 0 when they match the expected set, 1 otherwise), else cluster mode against the
GameServer `--gameserver-name` in `--pod-namespace` (API from `--kubeconfig` or in-cluster).
Two flags are agones-py's own: `--first-write-immediately` and `--health-autostart`. `--delay` sleeps before anything starts;
local and test modes bind only the gRPC and HTTP ports.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
from pathlib import Path
from typing import Any

import structlog

from .. import aioloop
from ..featuregates import FeatureGates
from ..sdkserver.settings import SDKServerSettings
from . import flags

log = structlog.get_logger("agones.sdkserver")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Agones' flags, from the settings dataclass; `-f` is `--file`'s short form."""
    flags.bind_settings(parser, SDKServerSettings, aliases={"file": ("-f",)})


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "sdkserver", help="run the SDK sidecar (gRPC + REST), locally, in test mode or in-cluster"
    )
    add_arguments(parser)
    parser.set_defaults(func=main)


LOG_LEVELS = {"error": logging.ERROR, "info": logging.INFO, "debug": logging.DEBUG}


def configure_logging(level: str) -> None:
    """Agones' levels (Error, Info, Debug, Trace); anything else is Info, as Agones warns."""
    number = LOG_LEVELS.get(level.lower(), logging.DEBUG if level.lower() == "trace" else None)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(number or logging.INFO))
    if number is None and level.lower() != "trace":
        log.warning("Invalid LOG_LEVEL value. Defaulting to 'info'.", log_level=level)


def main(args: argparse.Namespace) -> int:
    settings = flags.settings_from_args(SDKServerSettings, args)
    try:
        gates = FeatureGates.parse(settings.feature_gates)
    except ValueError as err:
        print(f"error: {err}")
        return 2
    configure_logging(settings.log_level)
    return aioloop.run(run(settings, gates))


async def _wait_for_stop(timeout: int) -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, stop.set)
    try:
        if timeout > 0:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout)
        else:
            await stop.wait()
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(sig)


async def run(settings: SDKServerSettings, gates: FeatureGates) -> int:
    """Run the sidecar until its timeout or a signal; the process exit code."""
    from ..sdkserver.localsdk import LocalSDKServer
    from ..sdkserver.serve import serve_sdk

    log.info("Starting sdk sidecar", feature_gates=gates.encode(), settings=settings)
    if settings.delay > 0:
        log.info("Waiting before starting", seconds=settings.delay)
        await asyncio.sleep(settings.delay)

    if not settings.local and not settings.test:
        from ..sdkserver.cluster import run_cluster

        return await run_cluster(settings, gates)

    file: Path | None = None
    if settings.local and settings.file:
        file = Path(settings.file).resolve()
        if not file.exists():
            log.error("Could not start local SDK server", error=f"Could not find file: {file}")
            return 1
    test_mode = not settings.local and bool(settings.test)
    try:
        backend = LocalSDKServer(
            gates,
            file=file,
            test_mode=test_mode,
            expected=settings.test.split(",") if test_mode else None,
            sdk_name=settings.sdk_name,
        )
    except (OSError, ValueError) as err:
        log.error("Could not start local SDK server", error=str(err))
        return 1
    if test_mode:
        backend.generate_uid()
    await backend.start()
    try:
        serving = await serve_sdk(
            backend,
            address=settings.address,
            grpc_port=settings.grpc_port,
            http_port=settings.http_port,
        )
    except OSError as err:
        log.error("Could not listen", error=str(err))
        backend.close()
        return 1
    log.info(
        "Starting SDKServer grpc service and grpc-gateway",
        grpc_port=serving.grpc_port,
        http_port=serving.http_port,
    )
    try:
        await _wait_for_stop(settings.timeout)
    finally:
        log.info("Shutting down SDK server")
        await serving.stop(0)
        ok = backend.close()
    return 0 if ok else 1
