"""`agones sdkserver`: flags and env onto settings, and the test-mode process's exit code."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

import pytest

from agones.cmd.sdkserver import SDKServerSettings, add_arguments, run, settings_from
from agones.featuregates import FeatureGates
from agones.sdk import AsyncSDK
from tests.sdk.sequences import default_sequence
from tests.sdkserver.harness import COUNTS_AND_LISTS, DEFAULT_CONFORMANCE, free_port


def parse(argv: list[str], env: dict[str, str] | None = None) -> SDKServerSettings:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return settings_from(parser.parse_args(argv), env or {})


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
def test_settings(argv: list[str], env: dict[str, str], expected: SDKServerSettings) -> None:
    assert parse(argv, env) == expected


def test_bad_env_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="invalid TIMEOUT='soon'"):
        parse([], {"TIMEOUT": "soon"})


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
