"""`agones simulate`: what would this FleetAutoscaler have done with this demand?

Replays a demand trace (`--trace FILE`, CSV `at,session`; or a synthetic diurnal day with spikes)
against the real GameServerSet, Fleet and FleetAutoscaler controllers on an in-process local API
server, on virtual time (see `agones.simulate.simulation`), once per parameter set: the
FleetAutoscaler of `--fleetautoscaler FILE` (its in-process `python:` policies registered by
`--autoscaler-policy-modules`), or a Buffer policy from `--buffer/--min-replicas/
--max-replicas`, varied by `--compare KEY=V1,V2,...` (KEY: buffer, min, max, sync). Prints a summary
table and a terminal chart per run, and writes `report.json` and `report.png` into `--out`.
Exit 0 after a run, 2 for bad flags or input (one line, `error: ...`), 1 if a run fails.
"""

from __future__ import annotations

import argparse
import copy
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog
import yaml

from .. import aioloop
from ..controllers.fleetautoscalers import REGISTRY
from ..featuregates import FeatureGates
from ..simulate.report import report_json, summary_table, terminal_chart, write_png
from ..simulate.simulation import (
    RunResult,
    SimulationError,
    SimulationOptions,
    admitted,
    run_simulation,
)
from ..simulate.trace import Arrival, Spike, TraceError, diurnal, load_trace

FLEET_NAME = "simulated"
COMPARE_KEYS = {"buffer": "bufferSize", "min": "minReplicas", "max": "maxReplicas", "sync": "sync"}


class UsageError(ValueError):
    """Bad flags or input: printed as one line, exit 2."""


def register(subparsers: Any) -> None:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "simulate", help="replay a demand trace against the autoscaling controllers"
    )
    parser.add_argument("--trace", help="CSV trace (at,session seconds); default: synthetic")
    parser.add_argument("--hours", type=float, default=24.0, help="synthetic trace length")
    parser.add_argument("--base-per-hour", type=float, default=5.0, help="synthetic: at midnight")
    parser.add_argument("--peak-per-hour", type=float, default=40.0, help="synthetic: at noon")
    parser.add_argument("--mean-session", type=float, default=1800.0, help="synthetic, seconds")
    parser.add_argument("--spike", action="append", default=[], help="HOUR:COUNT extra arrivals")
    parser.add_argument("--seed", type=int, default=1, help="synthetic trace seed")
    parser.add_argument("--fleetautoscaler", help="a FleetAutoscaler manifest (YAML/JSON)")
    parser.add_argument("--buffer", default="5", help="Buffer policy bufferSize (int or %%)")
    parser.add_argument("--min-replicas", type=int, default=0)
    parser.add_argument("--max-replicas", type=int, default=200)
    parser.add_argument("--sync-seconds", type=int, default=30)
    parser.add_argument("--compare", help="KEY=V1,V2,... (buffer, min, max, sync)")
    parser.add_argument(
        "--autoscaler-policy-modules",
        default="",
        help="comma-separated modules registering in-process policies (url: python:<name>)",
    )
    parser.add_argument("--startup", type=float, default=10.0, help="seconds to Ready")
    parser.add_argument("--duration", type=float, help="seconds to simulate")
    parser.add_argument("--out", default="simulate-report", help="directory for the report")
    parser.add_argument("--no-png", action="store_true", help="skip report.png")
    parser.add_argument("--width", type=int, default=72, help="terminal chart width")
    parser.set_defaults(func=run)


def fleet_manifest() -> dict[str, Any]:
    return {
        "apiVersion": "agones.dev/v1",
        "kind": "Fleet",
        "metadata": {"name": FLEET_NAME, "namespace": "default"},
        "spec": {
            "replicas": 0,
            "template": {
                "spec": {
                    "ports": [{"name": "default", "containerPort": 7654}],
                    "template": {"spec": {"containers": [{"name": "game", "image": "game:1"}]}},
                }
            },
        },
    }


def _int_or_percent(text: str) -> int | str:
    text = text.strip()
    if text.endswith("%"):
        return text
    try:
        return int(text)
    except ValueError:
        raise UsageError(f"{text!r} is not an integer or a percentage") from None


def buffer_autoscaler(args: argparse.Namespace) -> dict[str, Any]:
    return {
        "apiVersion": "autoscaling.agones.dev/v1",
        "kind": "FleetAutoscaler",
        "metadata": {"name": FLEET_NAME, "namespace": "default"},
        "spec": {
            "fleetName": FLEET_NAME,
            "policy": {
                "type": "Buffer",
                "buffer": {
                    "bufferSize": _int_or_percent(args.buffer),
                    "minReplicas": args.min_replicas,
                    "maxReplicas": args.max_replicas,
                },
            },
            "sync": {"type": "FixedInterval", "fixedInterval": {"seconds": args.sync_seconds}},
        },
    }


def load_autoscaler(path: str) -> dict[str, Any]:
    try:
        doc = yaml.safe_load(Path(path).read_text())
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise UsageError(f"cannot read {path}: {str(err).splitlines()[0]}") from None
    if not isinstance(doc, dict) or doc.get("kind") != "FleetAutoscaler":
        raise UsageError(f"{path} is not a FleetAutoscaler manifest")
    doc.setdefault("metadata", {})["namespace"] = "default"
    spec = doc.setdefault("spec", {})
    if not isinstance(spec, dict):
        raise UsageError(f"{path}: spec must be an object")
    spec["fleetName"] = FLEET_NAME
    return doc


@dataclass(frozen=True)
class Variant:
    label: str
    fleet_autoscaler: dict[str, Any]


def variants(base: dict[str, Any], compare: str | None) -> list[Variant]:
    """The FleetAutoscalers to run: `base`, or one per value of `--compare KEY=V1,V2`."""
    if not compare:
        return [Variant("base", base)]
    key, sep, values = compare.partition("=")
    key = key.strip()
    if not sep or key not in COMPARE_KEYS or not values.strip():
        raise UsageError(f"--compare wants KEY=V1,V2,... with KEY one of {', '.join(COMPARE_KEYS)}")
    out = []
    for raw in values.split(","):
        fas = copy.deepcopy(base)
        spec = fas["spec"]
        if key == "sync":
            seconds = _int_or_percent(raw)
            if not isinstance(seconds, int):
                raise UsageError(f"sync wants whole seconds, got {raw!r}")
            spec["sync"] = {"type": "FixedInterval", "fixedInterval": {"seconds": seconds}}
        else:
            policy = spec.get("policy")
            if not isinstance(policy, dict) or not isinstance(policy.get("buffer"), dict):
                raise UsageError(f"--compare {key} needs a Buffer policy")
            value = _int_or_percent(raw)
            if key != "buffer" and not isinstance(value, int):
                raise UsageError(f"{key} wants an integer, got {raw!r}")
            policy["buffer"][COMPARE_KEYS[key]] = value
        out.append(Variant(f"{key}={raw.strip()}", fas))
    return out


def _spikes(values: list[str]) -> list[Spike]:
    spikes = []
    for value in values:
        hour, sep, count = value.partition(":")
        try:
            spikes.append(Spike(float(hour) * 3600, int(count)))
        except ValueError:
            raise UsageError(f"--spike wants HOUR:COUNT, got {value!r}") from None
        if not sep or spikes[-1].count < 0 or spikes[-1].at < 0:
            raise UsageError(f"--spike wants HOUR:COUNT >= 0, got {value!r}")
    return spikes


def arrivals(args: argparse.Namespace) -> tuple[list[Arrival], dict[str, Any]]:
    if args.trace:
        try:
            trace = load_trace(args.trace)
        except TraceError as err:
            raise UsageError(f"{args.trace}: {err}") from None
        return trace, {"file": args.trace, "arrivals": len(trace)}
    for name in ("hours", "base_per_hour", "peak_per_hour", "mean_session"):
        value = getattr(args, name)
        if not (value > 0 and value < 1e7):
            raise UsageError(f"--{name.replace('_', '-')} must be a positive number, got {value}")
    synthetic = diurnal(
        args.hours,
        args.base_per_hour,
        args.peak_per_hour,
        args.mean_session,
        _spikes(args.spike),
        args.seed,
    )
    info = {
        "synthetic": {
            "hours": args.hours,
            "basePerHour": args.base_per_hour,
            "peakPerHour": args.peak_per_hour,
            "meanSession": args.mean_session,
            "spikes": args.spike,
            "seed": args.seed,
        },
        "arrivals": len(synthetic),
    }
    return synthetic, info


def _import_policy_modules(value: str) -> None:
    for module in (m.strip() for m in value.split(",")):
        if not module:
            continue
        try:
            REGISTRY.import_modules([module])
        except Exception as err:  # a user module: any failure is a usage error
            raise UsageError(f"could not import autoscaler policy module {module}: {err}") from None


async def simulate_all(
    trace: list[Arrival], runs: list[Variant], options: SimulationOptions
) -> list[RunResult]:
    gates = FeatureGates.parse(options.gates)
    for variant in runs:  # every manifest is checked before the first run starts
        admitted(variant.fleet_autoscaler, f"FleetAutoscaler ({variant.label})", gates)
    results = []
    for variant in runs:
        results.append(
            await run_simulation(
                trace, fleet_manifest(), variant.fleet_autoscaler, options, variant.label
            )
        )
    return results


def run(args: argparse.Namespace) -> int:
    saved = structlog.get_config()
    # the controllers' info and debug lines would drown the report; put logging back afterwards
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    try:
        return _run(args)
    finally:
        structlog.configure(**saved)


def _run(args: argparse.Namespace) -> int:
    try:
        _import_policy_modules(args.autoscaler_policy_modules)
        trace, info = arrivals(args)
        base = (
            load_autoscaler(args.fleetautoscaler)
            if args.fleetautoscaler
            else buffer_autoscaler(args)
        )
        runs = variants(base, args.compare)
        if not (args.startup >= 0) or (args.duration is not None and not args.duration > 0):
            raise UsageError("--startup must be >= 0 and --duration > 0")
        options = SimulationOptions(startup=args.startup, duration=args.duration)
        results = aioloop.run(simulate_all(trace, runs, options))
    except (UsageError, SimulationError) as err:
        print(f"error: {err}")
        return 2
    out = Path(args.out)
    os.makedirs(out, exist_ok=True)
    (out / "report.json").write_text(json.dumps(report_json(results, info), indent=1))
    if not args.no_png:
        write_png(results, str(out / "report.png"))
    print(summary_table(results))
    for result in results:
        print()
        print(terminal_chart(result, width=max(20, min(args.width, 400))))
    print(f"\nreport: {out / 'report.json'}" + ("" if args.no_png else f", {out / 'report.png'}"))
    return 0
