"""`agones controller`: flag/env mapping, config errors with Agones' texts, and the wired process."""

from __future__ import annotations

import argparse
import asyncio

import aiohttp
import pytest
import structlog
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
