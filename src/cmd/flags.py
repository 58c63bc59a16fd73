"""Agones-style flags: every `--some-flag` also reads env `SOME_FLAG` (viper's binding), flag wins.

`add(parser, "--min-port", int, 0, "help")` registers the flag with its environment default;
booleans take `true/false` (Go's `strconv.ParseBool`) or no value (true) and durations Go's `500ms` /
`1m30s` form. A bad value, given or from the environment, is a clear `SystemExit(2)` from argparse
naming the flag and the variable, raised when that command's parser parses (never for another).

`bind_settings(parser, Settings)` derives every flag from a settings dataclass (name, type, default
and help from the field and its docstring) and `settings_from_args(Settings, args)` builds it back:
one binder, so a setting is declared once.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import itertools
import os
import textwrap
import typing
from collections.abc import Callable
from typing import Any, TypeVar, cast

from ..apis.meta.goduration import parse_duration
from ..client.throttle import ClientsetRateLimiters
from ..clock import RealClock
from ..featuregates import parse_bool

T = TypeVar("T")


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
    env: bool = True,
) -> None:
    """Register `flag` (and `aliases`); with `env`, its environment variable is its default.

    The variable is read now but parsed only when this parser parses (argparse types a string
    default then), so a bad value fails the command that reads it, naming flag and variable."""
    name = env_name(flag)
    raw = os.environ.get(name) if env else None
    parse = _named(kind, flag, name if env else None)
    extra: dict[str, Any] = {"nargs": "?", "const": True} if kind is go_bool else {}
    source = f"env {name}; " if env else ""
    parser.add_argument(
        flag,
        *aliases,
        type=parse,
        default=default if raw is None else raw,
        metavar=name if env else "VALUE",
        help=f"{help_text} ({source}default {default!r})",
        **extra,
    )


def _named(kind: Callable[[str], Any], flag: str, env: str | None) -> Callable[[str], Any]:
    """`kind`, whose errors name the flag and its environment variable."""
    where = f"{flag} or ${env}" if env else flag

    def parse(text: str) -> Any:
        try:
            return kind(text)
        except (ValueError, argparse.ArgumentTypeError) as err:
            raise argparse.ArgumentTypeError(f"invalid value {text!r} for {where}: {err}") from None

    parse.__name__ = getattr(kind, "__name__", "value")
    return parse


# --- flags derived from a settings dataclass ------------------------------------------------

DURATION = "go-duration"
"""`field(metadata={"flag": DURATION})`: a float of seconds given as a Go duration (`500ms`).
`field(metadata={"env": False})`: a flag with no environment variable (Agones binds a few so)."""


def _field_docs(cls: type) -> dict[str, str]:
    """Each field's docstring (the string literal after its annotation), as the help text."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError):
        return {}
    docs: dict[str, str] = {}
    body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
    for node, after in itertools.pairwise(body):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(after, ast.Expr)
            and isinstance(after.value, ast.Constant)
            and isinstance(after.value.value, str)
        ):
            docs[node.target.id] = " ".join(after.value.value.split())
    return docs


def _kind(f: dataclasses.Field[Any], hints: dict[str, Any]) -> Callable[[str], Any]:
    if f.metadata.get("flag") == DURATION:
        return go_duration
    hint = hints[f.name]
    if hint is bool:
        return go_bool
    if hint in (int, float, str):
        return cast(Callable[[str], Any], hint)
    raise TypeError(f"settings field {f.name} of type {hint!r} needs its own flag")


def bind_settings(
    parser: argparse.ArgumentParser,
    settings: type,
    *,
    exclude: tuple[str, ...] = (),
    aliases: dict[str, tuple[str, ...]] | None = None,
) -> None:
    """One flag per field of the `settings` dataclass: `--field-name` (env `FIELD_NAME`), typed by
    the field's annotation, defaulting to the field's default, helped by the field's docstring."""
    hints = typing.get_type_hints(settings)
    docs = _field_docs(settings)
    defaults = settings()
    for f in dataclasses.fields(settings):
        if f.name in exclude:
            continue
        flag = "--" + f.name.replace("_", "-")
        extra = (aliases or {}).get(f.name, ())
        kind, default, helptext = _kind(f, hints), getattr(defaults, f.name), docs.get(f.name, "")
        add(parser, flag, kind, default, helptext, *extra, env=f.metadata.get("env", True))


def settings_from_args(settings: type[T], args: argparse.Namespace, **overrides: Any) -> T:
    """The `settings` dataclass from flags bound by `bind_settings` (and `overrides`)."""
    values = {
        f.name: getattr(args, f.name)
        for f in dataclasses.fields(settings)  # type: ignore[arg-type]
        if hasattr(args, f.name) and f.name not in overrides
    }
    return settings(**values, **overrides)


def client_budget_error(qps: float, burst: int) -> str | None:
    """What the REST client's token buckets refuse of `--api-server-qps` / `--api-server-qps-burst`
    (a burst under 1 while throttling is on), as one line for the command to print; None when
    they take it. The rule is theirs: asking them states it once for every command."""
    try:
        ClientsetRateLimiters(qps, burst, RealClock())
    except ValueError as err:
        return f"--api-server-qps / --api-server-qps-burst: {err}"
    return None
