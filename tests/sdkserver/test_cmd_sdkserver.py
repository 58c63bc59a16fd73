"""`agones sdkserver`: flags and env onto settings, and the test-mode process's exit code."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import os
import sys
from typing import Any

import pytest

from agones.cmd import flags
from agones.cmd.sdkserver import SDKServerSettings, add_arguments, run
from agones.featuregates import FeatureGates
from agones.sdk import AsyncSDK
from agones.sdkserver.settings import GO_DURATION
from tests.sdk.sequences import default_sequence
from tests.sdkserver.harness import COUNTS_AND_LISTS, DEFAULT_CONFORMANCE, free_port

ENV_NAMES = [f.name.upper() for f in dataclasses.fields(SDKServerSettings)]


@pytest.fixture
def parse(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Parse `argv` with exactly `env` as the sidecar's environment (the rest of it unset)."""

    def parse(argv: list[str], env: dict[str, str] | None = None) -> SDKServerSettings:
        for name in ENV_NAMES:
            monkeypatch.delenv(name, raising=False)
        for name, value in (env or {}).items():
            monkeypatch.setenv(name, value)
        parser = argparse.ArgumentParser()
        add_arguments(parser)
        return flags.settings_from_args(SDKServerSettings, parser.parse_args(argv))

    return parse


@pytest.mark.parametrize(
    ("argv", "env", "expected"),
    [
        pytest.param([], {}, SDKServerSettings(), id="defaults"),
        pytest.param(
            [],
            {"TEST": "ready", "TIMEOUT": "40", "DELAY": "3", "ADDRESS": "", "SDK_NAME": "node"},
            SDKServerSettings(test="ready", timeout=40, delay=3, address="", sdk_name="node"),
            id="conformance-env",
        ),
        pytest.param(
            ["--grpc-port", "9002", "--http-port=9102"],
            {"GRPC_PORT": "1"},
            SDKServerSettings(grpc_port=9002, http_port=9102),
            id="flags-win-over-env",
        ),
        pytest.param(
            ["--local", "-f", "gs.yaml"],
            {},
            SDKServerSettings(local=True, file="gs.yaml"),
            id="local",
        ),
        pytest.param(
            ["--local=false", "--graceful-termination=false"],
            {"LOCAL": "true"},
            SDKServerSettings(local=False, graceful_termination=False),
            id="bool-values",
        ),
        pytest.param(
            [],
            {"REQUEST_RATE_LIMIT": "1m30s", "FEATURE_GATES": "PlayerTracking=true"},
            SDKServerSettings(request_rate_limit=90.0, feature_gates="PlayerTracking=true"),
            id="duration-and-gates",
        ),
        pytest.param(
            [], {"GRACEFUL_TERMINATION": "false"}, SDKServerSettings(), id="no-env-for-graceful"
        ),
    ],
)
def test_settings(
    parse: Any, argv: list[str], env: dict[str, str], expected: SDKServerSettings
) -> None:
    assert parse(argv, env) == expected


# Agones' cmd/sdk-server: every flag, its environment variable (None: flag only) and default.
AGONES_FLAGS = [
    ("--local", "LOCAL", False),
    ("--file", "FILE", ""),
    ("--test", "TEST", ""),
    ("--sdk-name", "SDK_NAME", ""),
    ("--timeout", "TIMEOUT", 0),
    ("--delay", "DELAY", 0),
    ("--address", "ADDRESS", "localhost"),
    ("--grpc-port", "GRPC_PORT", 9357),
    ("--http-port", "HTTP_PORT", 9358),
    ("--health-port", "HEALTH_PORT", 8080),
    ("--gameserver-name", "GAMESERVER_NAME", ""),
    ("--pod-namespace", "POD_NAMESPACE", ""),
    ("--kubeconfig", "KUBECONFIG", ""),
    ("--graceful-termination", None, True),
    ("--log-level", "LOG_LEVEL", "Info"),
    ("--request-rate-limit", "REQUEST_RATE_LIMIT", 0.5),
    ("--feature-gates", "FEATURE_GATES", ""),
]


@pytest.mark.parametrize(
    ("flag", "env", "default"), [pytest.param(*f, id=f[0]) for f in AGONES_FLAGS]
)
def test_flag_and_env_parity_with_agones(
    parse: Any, flag: str, env: str | None, default: object
) -> None:
    field = flag[2:].replace("-", "_")
    assert getattr(parse([]), field) == default
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    action = next(a for a in parser._actions if flag in a.option_strings)
    assert (action.metavar == env) if env else (action.metavar == "VALUE")
    if env is None:
        assert getattr(parse([], {flag[2:].upper().replace("-", "_"): "false"}), field) == default


def test_the_duration_metadata_is_the_binders() -> None:
    assert GO_DURATION["flag"] == flags.DURATION


@pytest.mark.parametrize(
    ("argv", "env", "named"),
    [
        pytest.param([], {"TIMEOUT": "soon"}, "$TIMEOUT", id="bad-env"),
        pytest.param(["--grpc-port", "x"], {}, "--grpc-port", id="bad-flag"),
        pytest.param([], {"REQUEST_RATE_LIMIT": "fast"}, "$REQUEST_RATE_LIMIT", id="bad-duration"),
        pytest.param([], {"LOCAL": "maybe"}, "$LOCAL", id="bad-bool"),
    ],
)
def test_a_bad_value_is_a_one_line_usage_error(
    parse: Any, capsys: pytest.CaptureFixture[str], argv: list[str], env: dict[str, str], named: str
) -> None:
    with pytest.raises(SystemExit) as exit_:
        parse(argv, env)
    assert exit_.value.code == 2
    error = capsys.readouterr().err.strip().splitlines()[-1]
    assert "error:" in error and named in error


def test_a_bad_env_var_of_the_sidecar_does_not_break_another_command(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agones.cmd.main import build_parser

    monkeypatch.setenv("TIMEOUT", "soon")
    args = build_parser().parse_args(["version"])
    assert args.func is not None


async def _run_test_mode(expected: str, skip: str) -> tuple[int, str]:
    grpc_port, http_port = free_port(), free_port()
    env = dict(os.environ, TEST=expected, TIMEOUT="3", DELAY="1", ADDRESS="127.0.0.1")
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "agones",
        "sdkserver",
        f"--grpc-port={grpc_port}",
        f"--http-port={http_port}",
        env=env,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    sdk = AsyncSDK("127.0.0.1", grpc_port)
    await sdk.connect(20)  # blocks through the server's DELAY
    await default_sequence(sdk, skip=skip)
    out, _ = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode is not None
    return proc.returncode, out.decode()


@pytest.mark.slow
async def test_test_mode_process_exits_0_on_match_and_1_on_a_missing_call() -> None:
    expected = f"{DEFAULT_CONFORMANCE},{COUNTS_AND_LISTS}"
    (ok_code, ok_out), (bad_code, bad_out) = await asyncio.gather(
        _run_test_mode(expected, skip=""), _run_test_mode(expected, skip="reserve")
    )
    assert ok_code == 0, ok_out
    assert "Received requests match expected list. Test run was successful" in ok_out
    assert bad_code == 1, bad_out
    assert "Could not find a request which was expected" in bad_out
    assert "Testing Failed" in bad_out


@pytest.mark.parametrize(
    "settings",
    [
        pytest.param(SDKServerSettings(local=True, file="/nonexistent/gs.yaml"), id="missing-file"),
        pytest.param(SDKServerSettings(), id="cluster-mode-without-a-gameserver-name"),
        pytest.param(
            SDKServerSettings(gameserver_name="gs", pod_namespace="ns", kubeconfig="/nonexistent"),
            id="cluster-mode-bad-kubeconfig",
        ),
    ],
)
async def test_startup_errors_exit_1(settings: SDKServerSettings) -> None:
    assert await run(settings, FeatureGates()) == 1
