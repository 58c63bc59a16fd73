"""`agones controller` flags and environment map onto ControllerSettings with Agones' defaults."""

from __future__ import annotations

import argparse

import pytest

from agones.cmd import controller as cmd
from agones.cmd.main import build_parser, main


def parse(argv: list[str]) -> argparse.Namespace:
    return build_parser().parse_args(["controller", *argv])


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("NUM_WORKERS", "API_SERVER_QPS", "LEADER_ELECTION", "KUBECONFIG", "HTTP_PORT"):
        monkeypatch.delenv(name, raising=False)
    settings = cmd.settings_from_args(parse([]))
    assert (settings.num_workers, settings.api_server_qps, settings.api_server_qps_burst) == (
        64,
        400,
        500,
    )
    assert not settings.leader_election and settings.pod_namespace == "agones-system"


def test_env_and_flags(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NUM_WORKERS", "100")
    monkeypatch.setenv("LEADER_ELECTION", "true")
    settings = cmd.settings_from_args(parse(["--api-server-qps", "50", "--http-port", "0"]))
    assert (
        settings.num_workers,
        settings.leader_election,
        settings.api_server_qps,
        settings.http_port,
    ) == (100, True, 50, 0)
    assert not cmd.settings_from_args(parse(["--no-leader-election"])).leader_election


def test_bad_settings_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["controller", "--num-workers", "0"]) == 2
    assert "num-workers" in capsys.readouterr().out
