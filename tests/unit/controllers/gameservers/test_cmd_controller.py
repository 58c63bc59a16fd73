"""`agones controller`: flag/env mapping, config errors with Agones' texts, and the wired process."""

from __future__ import annotations

import argparse
import asyncio

import aiohttp
import pytest
import structlog
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry

from agones.client.versioned.resources import GAME_SERVERS
from agones.cmd import controller as cmd
from agones.cmd.main import main
from agones.controller import ControllerRunner
from agones.featuregates import Feature
from agones.portallocator import PortRange

from .fakeapi import FakeAPI
from .harness import game_server, node

pytestmark = pytest.mark.timeout(30)


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    cmd.add_flags(parser)
    return parser.parse_args(argv)


def test_flags_and_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MIN_PORT", "7000")
    monkeypatch.setenv("MAX_PORT", "8000")
    monkeypatch.setenv("SIDECAR_IMAGE", "sdk:local")
    monkeypatch.setenv("FEATURE_GATES", "PortRanges=true&SidecarContainers=false")
    config, errors = cmd.config_from_args(
        parse(
            [
                "--additional-port-ranges",
                '{"game": [9000, 9100]}',
                "--leader-election",
                "--sidecar-requests-rate-limit",
                "1s",
                "--sidercar-run-as-user",
                "2000",
            ]
        )
    )
    assert errors == []
    assert config.port_ranges == {
        "game": PortRange(9000, 9100),
        "default": PortRange(7000, 8000),
    }
    assert config.settings.leader_election is True
    assert config.sidecar.image == "sdk:local"
    assert config.sidecar.requests_rate_limit == 1.0
    assert config.sidecar.run_as_user == 2000
    assert not config.gates.enabled(Feature.SIDECAR_CONTAINERS)


PORTS = ["--min-port", "7000", "--max-port", "8000"]


def test_scheduled_write_delay_flag_and_env(monkeypatch: pytest.MonkeyPatch) -> None:
    config, errors = cmd.config_from_args(parse(PORTS))
    assert errors == [] and config.scheduled_write_delay == cmd.SCHEDULED_WRITE_DELAY == 0.1
    config, errors = cmd.config_from_args(parse([*PORTS, "--scheduled-write-delay", "0s"]))
    assert errors == [] and config.scheduled_write_delay == 0.0
    monkeypatch.setenv("SCHEDULED_WRITE_DELAY", "1m30s")
    config, errors = cmd.config_from_args(parse(PORTS))
    assert errors == [] and config.scheduled_write_delay == 90.0
    _, errors = cmd.config_from_args(parse([*PORTS, "--scheduled-write-delay=-1s"]))
    assert errors == ["scheduled-write-delay must not be negative, got -1.0s"]


@given(st.text())
def test_any_scheduled_write_delay_gives_a_config_an_error_line_or_a_usage_error(
    text: str,
) -> None:
    try:
        config, errors = cmd.config_from_args(parse([*PORTS, f"--scheduled-write-delay={text}"]))
    except SystemExit as exit_info:  # not a Go duration: argparse's one-line usage error
        assert exit_info.code == 2
        return
    if config.scheduled_write_delay < 0:
        assert len(errors) == 1 and "\n" not in errors[0]
    else:
        assert errors == []


@pytest.mark.parametrize(
    ("argv", "error"),
    [
        pytest.param([], "min Port and Max Port values are required", id="no-ports"),
        pytest.param(
            [
                "--min-port",
                "7000",
                "--max-port",
                "8000",
                "--additional-port-ranges",
                '{"g": [7500, 9000]}',
            ],
            "port range g overlaps with min/max port",
            id="overlap",
        ),
        pytest.param(
            [
                "--min-port",
                "1",
                "--max-port",
                "2",
                "--sidecar-cpu-request",
                "2",
                "--sidecar-cpu-limit",
                "1",
            ],
            "Request must be less than or equal to cpu limit",
            id="sidecar-request-over-limit",
        ),
        pytest.param(
            ["--min-port", "1", "--max-port", "2", "--feature-gates", "Bogus=true"],
            'Feature Gate "Bogus" is not a valid Feature Gate',
            id="bad-gate",
        ),
        pytest.param(
            ["--min-port", "1", "--max-port", "2", "--api-server-qps-burst", "0"],
            "--api-server-qps / --api-server-qps-burst: burst must be at least 1, got 0",
            id="burst-under-one",
        ),
    ],
)
def test_config_errors(argv: list[str], error: str) -> None:
    _, errors = cmd.config_from_args(parse(argv))
    assert error in errors


def test_command_exits_2_on_bad_config(capsys: pytest.CaptureFixture[str]) -> None:
    try:
        assert main(["controller", "--min-port", "10", "--max-port", "5"]) == 2
    finally:
        structlog.reset_defaults()  # the command configured logging onto captured stderr
    assert "max Port cannot be set less that the Min Port" in capsys.readouterr().out


async def test_runner_wires_the_controller_and_drains_on_stop() -> None:
    api = FakeAPI()
    await api.put("nodes", node("node-1", "127.0.0.2"))
    config, errors = cmd.config_from_args(
        parse(["--min-port", "7000", "--max-port", "7100", "--http-port", "0"])
    )
    assert errors == []
    config.settings.prometheus_exporter = False
    runner = ControllerRunner(
        config.settings,
        api,  # type: ignore[arg-type]
        lambda ctx: cmd.build(ctx, config),
        registry=CollectorRegistry(),
    )
    task = asyncio.create_task(runner.run())
    await api.create(GAME_SERVERS, game_server("gs1"), "default")
    await api.wait_for(
        lambda: (api.find("gameservers", "gs1") or {}).get("status", {}).get("state") == "Starting"
    )
    url = f"http://127.0.0.1:{runner.port}/live?full=1"
    async with aiohttp.ClientSession() as session, session.get(url) as r:
        assert r.status == 200
        assert "OK" in await r.text()
    runner.stop()
    assert await asyncio.wait_for(task, 10) == 0
