"""How many GameServerAllocation requests per second the API layer admits, by path.

Each request is Agones' full example allocation (selectors with counters and lists, priorities,
actions, metadata). Paths: the trusted fast decode (`msgspec.json.decode`) then defaults,
validation and conversion; the same after the structural pass (`schema.check_types`) that reports
every wrong JSON type; and decode alone. Prints requests per second for each.

    .venv/bin/python -m bench.bench_allocation_admission --seconds 2
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from pathlib import Path

import msgspec

from agones.apis.allocation.v1 import GameServerAllocation, apply_defaults, converter, validate
from agones.apis.meta import schema
from agones.featuregates import DEFAULT_GATES

FIXTURE = (
    Path(__file__).resolve().parents[1]
    / "tests/fixtures/agones-oracle/valid/gameserverallocation-examples-gameserverallocation.json"
)


def _admit(gsa: GameServerAllocation) -> None:
    apply_defaults(gsa, DEFAULT_GATES)
    if validate(gsa, DEFAULT_GATES):
        raise SystemExit("the benchmark request must be valid")
    converter(gsa)


def _rate(fn: Callable[[], None], seconds: float) -> float:
    fn()
    count, start = 0, time.perf_counter()
    while (elapsed := time.perf_counter() - start) < seconds:
        for _ in range(100):
            fn()
        count += 100
    return count / elapsed


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    body = json.dumps(json.loads(FIXTURE.read_text())["input"]).encode()

    def fast() -> None:
        _admit(msgspec.json.decode(body, type=GameServerAllocation))

    def structural() -> None:
        cleaned, errs = schema.check_types(json.loads(body), GameServerAllocation)
        assert not errs
        _admit(msgspec.convert(cleaned, GameServerAllocation))

    def decode_only() -> None:
        msgspec.json.decode(body, type=GameServerAllocation)

    print(f"request: {len(body)} bytes of JSON")
    for name, fn in (
        ("decode only", decode_only),
        ("fast decode + defaults + validate + convert", fast),
        ("structural pass + defaults + validate + convert", structural),
    ):
        print(f"{name:50s} {_rate(fn, args.seconds):>10,.0f} requests/s")


if __name__ == "__main__":
    main()
