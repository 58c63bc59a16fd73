"""`agones validate -f FILE`: decode, default and validate manifests as Agones would on create.

Every document in FILE (YAML or JSON, `-` for stdin; multi-document YAML allowed; unquoted
timestamps stay strings, as kubectl reads them) must be a registered kind. Valid documents are printed in their stored (defaulted) form; invalid ones print
the apiserver-style message (`<Kind>.<group> "<name>" is invalid: ...`) with every error. With
`--old`, documents are checked as updates of the object in that file. Exit 0 when all are valid,
1 when any is invalid or unreadable, 2 on bad flags. A file that cannot be read (not UTF-8, not
YAML, nested deeper than the decoder goes) is one line, `error: <file>: <why>`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

import yaml

from ..apis.field import aggregate_message
from ..apis.scheme import Admission, load
from ..featuregates import FeatureGates


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "validate", help="default and validate Agones manifests as the webhooks would"
    )
    parser.add_argument(
        "-f", "--filename", required=True, help="manifest file (YAML/JSON, - for stdin)"
    )
    parser.add_argument("--old", help="the current object, to validate FILE as an update of it")
    parser.add_argument(
        "--feature-gates",
        default=os.environ.get("FEATURE_GATES", ""),
        help="gates as a query string, e.g. PlayerTracking=true (env FEATURE_GATES)",
    )
    parser.add_argument("-o", "--output", choices=("yaml", "json"), default="yaml")
    parser.set_defaults(func=run)


class _KubeYAMLLoader(yaml.SafeLoader):
    """YAML as kubectl reads it (sigs.k8s.io/yaml): an unquoted timestamp stays a string."""


_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"
_KubeYAMLLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _TIMESTAMP_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


class ReadError(Exception):
    """A manifest file that cannot be read; the message is its one line."""


def _read(name: str) -> list[Any]:
    try:
        text = sys.stdin.read() if name == "-" else Path(name).read_text(encoding="utf-8")
        return [doc for doc in yaml.load_all(text, Loader=_KubeYAMLLoader) if doc is not None]
    except RecursionError:
        raise ReadError(f"{name}: exceeded max depth") from None
    except yaml.YAMLError as err:
        raise ReadError(f"{name}: {_one_line(str(err))}") from None
    except (OSError, ValueError) as err:
        raise ReadError(f"{name}: {_one_line(str(err))}") from None


def _printable(text: str) -> str:
    """`text` with lone surrogates (YAML's `"\\ud800"`) escaped, so that it can be written."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _describe(doc: Any, admission: Admission) -> str:
    kind = admission.kind
    meta = doc.get("metadata") if isinstance(doc, dict) else None
    name = ""
    if isinstance(meta, dict):
        name = str(meta.get("name") or meta.get("generateName") or "")
    if kind is not None:
        return aggregate_message(kind.kind, kind.group, name, admission.errors)
    kind_name = doc.get("kind", "") if isinstance(doc, dict) else ""
    body = "; ".join(str(e) if e.field else e.body() for e in admission.errors)
    return f'{kind_name or "object"} "{name}" is invalid: {body}'


def run(args: argparse.Namespace) -> int:
    try:
        gates = FeatureGates.parse(args.feature_gates)
    except ValueError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    scheme = load()
    try:
        docs = _read(args.filename)
        old = None
        if args.old:
            old_docs = _read(args.old)
            if len(old_docs) != 1:
                print("error: --old must hold exactly one object", file=sys.stderr)
                return 1
            old = scheme.decode(old_docs[0])
    except ReadError as err:
        print(_printable(f"error: {err}"), file=sys.stderr)
        return 1
    except (RecursionError, ValueError, TypeError) as err:
        why = _one_line(str(err)) or "exceeded max depth"
        print(_printable(f"error: {args.old}: {why}"), file=sys.stderr)
        return 1
    if not docs:
        print(f"error: no objects in {args.filename}", file=sys.stderr)
        return 1
    code = 0
    outputs = []
    for doc in docs:
        try:
            admission = scheme.admit(doc, gates, old=old)
        except RecursionError:
            print(f"error: {args.filename}: exceeded max depth", file=sys.stderr)
            code = 1
            continue
        if admission.errors:
            print(_printable(_describe(doc, admission)), file=sys.stderr)
            code = 1
        else:
            outputs.append(scheme.encode(admission.obj))
    for out in outputs:
        if args.output == "json":
            print(json.dumps(out, indent=2))
        else:
            print("---")
            print(_printable(yaml.safe_dump(out, sort_keys=False)), end="")
    return code
