"""`agones version`: print the build version and the feature gates in force."""

from __future__ import annotations

import argparse
import os
from typing import Any

from ..featuregates import FeatureGates
from ..version import VERSION


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "version", help="print the version and the feature gates in force"
    )
    parser.add_argument(
        "--feature-gates",
        default=os.environ.get("FEATURE_GATES", ""),
        help="gates as a query string, e.g. PlayerTracking=true (env FEATURE_GATES)",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        gates = FeatureGates.parse(args.feature_gates)
    except ValueError as err:
        print(f"error: {err}")
        return 2
    print(f"agones-py {VERSION}")
    print(f"feature gates: {gates.encode()}")
    return 0
