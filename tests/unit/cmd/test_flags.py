"""Flags derived from a settings dataclass: names, env vars, types, defaults and help."""

from __future__ import annotations

import argparse
import math
from dataclasses import dataclass, field

import pytest

from agones.cmd import allocator as allocator_cmd
from agones.cmd import flags


@dataclass(frozen=True)
class Demo:
    name: str = "x"
    """The name."""
    workers: int = 4
    """How many
    workers."""
    ratio: float = 0.5
    """A ratio."""
    enabled: bool = False
    """On or off."""
    wait: float = field(default=0.5, metadata={"flag": flags.DURATION})
    """How long."""


def parse(argv: list[str], monkeypatch: pytest.MonkeyPatch, **env: str) -> Demo:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    parser = argparse.ArgumentParser()
    flags.bind_settings(parser, Demo)
    return flags.settings_from_args(Demo, parser.parse_args(argv))


@pytest.mark.parametrize(
    ("argv", "env", "want"),
    [
        pytest.param([], {}, Demo(), id="defaults"),
        pytest.param(
            ["--name", "y", "--workers", "9", "--ratio", "2", "--enabled", "--wait", "1m30s"],
            {},
            Demo("y", 9, 2.0, True, 90.0),
            id="flags",
        ),
        pytest.param(
            [],
            {"WORKERS": "7", "ENABLED": "true", "WAIT": "250ms"},
            Demo(workers=7, enabled=True, wait=0.25),
            id="env",
        ),
        pytest.param(["--workers", "3"], {"WORKERS": "7"}, Demo(workers=3), id="flag-wins"),
        pytest.param(["--enabled=false"], {"ENABLED": "1"}, Demo(enabled=False), id="go-bool"),
    ],
)
def test_bind_settings(
    argv: list[str], env: dict[str, str], want: Demo, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert parse(argv, monkeypatch, **env) == want


def test_help_comes_from_the_field_docstring() -> None:
    parser = argparse.ArgumentParser()
    flags.bind_settings(parser, Demo)
    text = parser.format_help()
    assert "How many workers." in text and "(env WORKERS; default 4)" in text


@pytest.mark.parametrize(
    ("argv", "env"),
    [
        pytest.param(["--workers", "many"], {}, id="bad-flag"),
        pytest.param([], {"WAIT": "soon"}, id="bad-env-duration"),
    ],
)
def test_bad_values_are_a_clean_usage_error(
    argv: list[str], env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(SystemExit) as exit_:
        parse(argv, monkeypatch, **env)
    assert exit_.value.code == 2


@pytest.mark.parametrize(
    ("qps", "burst", "refused"),
    [
        pytest.param(400.0, 500, False, id="agones-defaults"),
        pytest.param(400.0, 1, False, id="burst-one"),
        pytest.param(400.0, 0, True, id="burst-zero"),
        pytest.param(400.0, -3, True, id="burst-negative"),
        pytest.param(0.0, 0, False, id="throttling-off"),
        pytest.param(-1.0, -1, False, id="negative-qps-is-off"),
        pytest.param(math.inf, 0, False, id="infinite-qps-never-waits"),
    ],
)
def test_client_budget_error(qps: float, burst: int, refused: bool) -> None:
    error = flags.client_budget_error(qps, burst)
    assert (error is not None) is refused
    if error is not None:
        assert error.startswith(
            "--api-server-qps / --api-server-qps-burst: burst must be at least 1"
        )


def test_allocator_refuses_a_budget_its_client_would() -> None:
    parser = argparse.ArgumentParser()
    allocator_cmd.add_flags(parser)
    args = parser.parse_args(["--http-port=8443", "--api-server-qps-burst=0"])
    with pytest.raises(ValueError, match="burst must be at least 1, got 0"):
        allocator_cmd.settings_from_args(args)
