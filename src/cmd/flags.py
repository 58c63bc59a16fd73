"""Agones-style flags: every `--some-flag` also reads env `SOME_FLAG` (viper's binding), flag wins.

`add(parser, "--min-port", int, 0, "help")` registers the flag with its environment default;
booleans take `true/false` (Go's `strconv.ParseBool`) or no value (true) and durations Go's `500ms` / `1m30s` form.
A bad environment value is a clear `SystemExit(2)` from argparse, naming the variable.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

from ..apis.meta.goduration import parse_duration
from ..featuregates import parse_bool


def env_name(flag: str) -> str:
    return flag.lstrip("-").upper().replace("-", "_")


def go_bool(text: str) -> bool:
    try:
        return parse_bool(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def go_duration(text: str) -> float:
    """Seconds from a Go duration string."""
    try:
        return parse_duration(text) / 1e9
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def add(
    parser: argparse.ArgumentParser,
    flag: str,
    kind: Callable[[str], Any],
    default: Any,
    help_text: str,
    *aliases: str,
) -> None:
    env = env_name(flag)
    raw = os.environ.get(env)
    if raw is not None:
        try:
            default = kind(raw)
        except (ValueError, argparse.ArgumentTypeError) as err:
            parser.error(f"invalid value {raw!r} in ${env}: {err}")
    extra: dict[str, Any] = {"nargs": "?", "const": True} if kind is go_bool else {}
    parser.add_argument(
        flag,
        *aliases,
        type=kind,
        default=default,
        metavar=env,
        help=f"{help_text} (env {env}; default {default!r})",
        **extra,
    )
