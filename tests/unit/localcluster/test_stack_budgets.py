"""The client budget the local stack gives the controller and the allocator service it runs:
its own (`StackOptions.client_qps` / `client_burst`) unless the caller's controller flags say
otherwise, each parsed by the command's own flags."""

from __future__ import annotations

import argparse
from pathlib import Path
from types import SimpleNamespace

import pytest

from agones.allocator.certs import write_allocator_certs
from agones.cmd import allocator as allocator_cmd
from agones.cmd import controller as controller_cmd
from agones.localcluster.stack_agones import allocator_argv, controller_argv
from agones.localcluster.stack_options import StackOptions


def _stack(options: StackOptions, tmp_path: Path) -> SimpleNamespace:
    certs = write_allocator_certs(tmp_path, ["localhost", "127.0.0.1"])
    return SimpleNamespace(
        options=options,
        api=SimpleNamespace(kubeconfig=str(tmp_path / "kubeconfig")),
        allocator_certs=certs,
        allocator_port=1,
        allocator_health_port=2,
    )


def _parse(add_flags: object, argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_flags(parser)  # type: ignore[operator]
    return parser.parse_args(argv[4:])  # after `python -m agones COMMAND`


@pytest.mark.parametrize(
    ("options", "qps", "burst"),
    [
        pytest.param(StackOptions(), 2000, 3000, id="the-stack's-budget"),
        pytest.param(StackOptions(client_qps=50, client_burst=60), 50, 60, id="set-by-option"),
        pytest.param(
            StackOptions(controller_args=["--api-server-qps=400", "--api-server-qps-burst=500"]),
            400,
            500,
            id="agones-budget-by-flag-wins",
        ),
    ],
)
def test_controller_budget(options: StackOptions, qps: int, burst: int, tmp_path: Path) -> None:
    args = _parse(controller_cmd.add_flags, controller_argv(_stack(options, tmp_path)))  # type: ignore[arg-type]
    assert (args.api_server_qps, args.api_server_qps_burst) == (qps, burst)


def test_allocator_budget(tmp_path: Path) -> None:
    argv = allocator_argv(_stack(StackOptions(client_qps=900, client_burst=950), tmp_path))  # type: ignore[arg-type]
    settings = allocator_cmd.settings_from_args(_parse(allocator_cmd.add_flags, argv))
    assert (settings.api_server_qps, settings.api_server_qps_burst) == (900, 950)
