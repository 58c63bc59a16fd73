"""`agones controller`'s GameServerSet flags: Agones' names and defaults, env binding, and a
clear configuration error for values that would stall the controller."""

from __future__ import annotations

import argparse

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agones.cmd import controller as cmd
from agones.controllers.gameserversets import GameServerSetSettings

PORTS = ["--min-port", "7000", "--max-port", "8000"]
FLAGS = [
    "--max-creation-parallelism",
    "--max-game-server-creations-per-batch",
    "--max-deletion-parallelism",
    "--max-game-server-deletions-per-batch",
    "--max-pod-pending-count",
]


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    cmd.add_flags(parser)
    return parser.parse_args(argv)


def test_defaults_are_agones() -> None:
    config, errors = cmd.config_from_args(parse(PORTS))
    assert errors == []
    assert config.game_server_sets == GameServerSetSettings(16, 64, 64, 64, 5000)


def test_flags_and_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAX_POD_PENDING_COUNT", "100")
    monkeypatch.setenv("MAX_CREATION_PARALLELISM", "3")
    config, errors = cmd.config_from_args(
        parse(
            [
                *PORTS,
                "--max-creation-parallelism",
                "4",
                "--max-game-server-deletions-per-batch",
                "9",
            ]
        )
    )
    assert errors == []
    assert config.game_server_sets.max_creation_parallelism == 4  # the flag wins over the env
    assert config.game_server_sets.max_pod_pending_count == 100
    assert config.game_server_sets.max_game_server_deletions_per_batch == 9


@pytest.mark.parametrize("flag", FLAGS)
def test_values_below_one_are_configuration_errors(flag: str) -> None:
    _, errors = cmd.config_from_args(parse([*PORTS, flag, "0"]))
    assert errors == [f"{flag.lstrip('-')} must be at least 1, got 0"]


@given(st.sampled_from(FLAGS), st.integers(min_value=-(2**40), max_value=2**40))
def test_any_integer_gives_a_config_or_one_error_line(flag: str, value: int) -> None:
    _, errors = cmd.config_from_args(parse([*PORTS, flag, str(value)]))
    if value >= 1:
        assert errors == []
    else:
        assert len(errors) == 1 and "\n" not in errors[0]


@given(st.text(min_size=1).filter(lambda t: not t.strip().lstrip("-+").isdigit()))
def test_a_non_integer_is_an_argparse_usage_error(text: str) -> None:
    with pytest.raises(SystemExit) as exit_info:
        parse([*PORTS, "--max-pod-pending-count", text])
    assert exit_info.value.code == 2
