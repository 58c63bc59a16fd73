"""The `agones` command: one sub-command per entry point.

Each sub-command lives in its own module under `agones.cmd` and exposes
`register(subparsers)`, which adds its parser and sets `func` (taking the parsed namespace, returning
an exit code). Modules are listed in `SUBCOMMANDS`, in the order `agones --help` shows them.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

SUBCOMMANDS: tuple[str, ...] = (
    "agones.cmd.version",
    "agones.cmd.validate",
    "agones.cmd.localcluster",
    "agones.cmd.controller",
    "agones.cmd.extensions",
    "agones.cmd.sdkserver",
    "agones.cmd.ping",
    "agones.cmd.local",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agones",
        description="agones-py: dedicated game-server hosting and scaling on Kubernetes.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in SUBCOMMANDS:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 2
    code: int = func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
