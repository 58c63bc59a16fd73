"""`agones sdkserver`: the SDK sidecar (Agones `cmd/sdk-server`).

Flags and environment variables are Agones': every flag can also be given as the upper-case env
var with `-` → `_` (`--grpc-port` / `GRPC_PORT`), a flag winning over its env var; bools take
`--local` or `--local=false`. `--graceful-termination` has no env var, as in Agones.

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
import os
import signal
from dataclasses import fields
from pathlib import Path
from typing import Any

import structlog

from ..featuregates import FeatureGates, parse_bool
from ..sdk.duration import parse_go_duration
from ..sdkserver.settings import SDKServerSettings

log = structlog.get_logger("agones.sdkserver")


# flag name → (env var or None, parser)
_FLAGS: dict[str, tuple[str | None, Any]] = {
    "gameserver-name": ("GAMESERVER_NAME", str),
    "pod-namespace": ("POD_NAMESPACE", str),
    "local": ("LOCAL", parse_bool),
    "file": ("FILE", str),
    "test": ("TEST", str),
    "sdk-name": ("SDK_NAME", str),
    "timeout": ("TIMEOUT", int),
    "delay": ("DELAY", int),
    "address": ("ADDRESS", str),
    "grpc-port": ("GRPC_PORT", int),
    "http-port": ("HTTP_PORT", int),
    "health-port": ("HEALTH_PORT", int),
    "kubeconfig": ("KUBECONFIG", str),
    "graceful-termination": (None, parse_bool),
    "log-level": ("LOG_LEVEL", str),
    "request-rate-limit": ("REQUEST_RATE_LIMIT", parse_go_duration),
    "feature-gates": ("FEATURE_GATES", str),
    "first-write-immediately": ("FIRST_WRITE_IMMEDIATELY", parse_bool),
    "health-autostart": ("HEALTH_AUTOSTART", parse_bool),
}


def _attr(flag: str) -> str:
    return flag.replace("-", "_")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    docs = {f.name: f for f in fields(SDKServerSettings)}
    for flag, (env, parse) in _FLAGS.items():
        names = [f"--{flag}", "-f"] if flag == "file" else [f"--{flag}"]
        helptext = f"(env {env})" if env else ""
        kwargs: dict[str, Any] = {"dest": _attr(flag), "default": None, "help": helptext}
        if parse is parse_bool:
            kwargs.update(nargs="?", const=True, type=parse_bool, metavar="BOOL")
        elif parse is parse_go_duration:
            kwargs.update(type=parse_go_duration, metavar="DURATION")
        else:
            kwargs.update(type=parse)
        assert _attr(flag) in docs
        parser.add_argument(*names, **kwargs)


def settings_from(
    args: argparse.Namespace, environ: dict[str, str] | None = None
) -> SDKServerSettings:
    """Flags over env vars over defaults; `ValueError` on an env var that does not parse."""
    environ = dict(os.environ) if environ is None else environ
    values: dict[str, Any] = {}
    for flag, (env, parse) in _FLAGS.items():
        given = getattr(args, _attr(flag), None)
        if given is not None:
            values[_attr(flag)] = given
        elif env is not None and env in environ:
            try:
                values[_attr(flag)] = parse(environ[env])
            except ValueError as err:
                raise ValueError(f"invalid {env}={environ[env]!r}: {err}") from err
    return SDKServerSettings(**values)


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
    try:
        settings = settings_from(args)
        gates = FeatureGates.parse(settings.feature_gates)
    except ValueError as err:
        print(f"error: {err}")
        return 2
    configure_logging(settings.log_level)
    return asyncio.run(run(settings, gates))


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
