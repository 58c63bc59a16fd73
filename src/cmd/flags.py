"""Agones-style flags: every `--some-flag` also reads env `SOME_FLAG` (viper's binding), flag wins.

`add(parser, "--min-port", int, 0, "help")` registers the flag with its environment default;
booleans take `true/false` (Go's `strconv.ParseBool`) or no value (true) and durations Go's `500ms` / `1m30s` form.
A bad environment value is a clear `SystemExit(2)` from argparse, naming the variable.

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


# --- flags derived from a settings dataclass ------------------------------------------------

DURATION = "go-duration"
"""`field(metadata={"flag": DURATION})`: a float of seconds given as a Go duration (`500ms`)."""


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
        add(parser, flag, _kind(f, hints), getattr(defaults, f.name), docs.get(f.name, ""), *extra)


def settings_from_args(settings: type[T], args: argparse.Namespace, **overrides: Any) -> T:
    """The `settings` dataclass from flags bound by `bind_settings` (and `overrides`)."""
    values = {
        f.name: getattr(args, f.name)
        for f in dataclasses.fields(settings)  # type: ignore[arg-type]
        if hasattr(args, f.name) and f.name not in overrides
    }
    return settings(**values, **overrides)
