"""Demand traces: when allocations arrive and how long each session holds its GameServer.

A trace file is CSV with a header `at,session` (seconds from the start, as numbers; `#` comments
and blank lines are skipped), one allocation per row, in any order. `load_trace` returns the
arrivals sorted by time, or raises `TraceError` naming the line at fault. `diurnal(...)` makes a
synthetic day: Poisson arrivals whose rate follows a cosine between `base_per_hour` (at midnight)
and `peak_per_hour` (at noon), plus `spikes` (extra arrivals in short bursts), with exponentially
distributed sessions of mean `mean_session`; the same seed gives the same trace. Pure.
"""

from __future__ import annotations

import csv
import io
import math
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

MAX_SESSION = 7 * 24 * 3600.0


class TraceError(ValueError):
    """A trace that cannot be read; `str()` names the line."""


@dataclass(frozen=True, order=True)
class Arrival:
    """One allocation request: at `at` seconds, holding a GameServer for `session` seconds."""

    at: float
    session: float


@dataclass(frozen=True)
class Spike:
    """`count` extra arrivals spread over `length` seconds from `at`."""

    at: float
    count: int
    length: float = 300.0


def _number(text: str, what: str, line: int) -> float:
    try:
        value = float(text)
    except ValueError:
        raise TraceError(f"line {line}: {what} {text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise TraceError(f"line {line}: {what} {text!r} must be a finite number >= 0")
    return value


def parse_trace(text: str) -> list[Arrival]:
    rows = [
        (n, line)
        for n, line in enumerate(text.splitlines(), 1)
        if line.strip() and not line.lstrip().startswith("#")
    ]
    if not rows:
        raise TraceError("the trace is empty (want a header `at,session` and rows)")
    first, header = rows[0]
    if [h.strip() for h in header.split(",")] != ["at", "session"]:
        raise TraceError(f"line {first}: want the header `at,session`, got {header.strip()!r}")
    arrivals = []
    for n, line in rows[1:]:
        cells = next(csv.reader(io.StringIO(line)))
        if len(cells) != 2:
            raise TraceError(f"line {n}: want 2 values (at,session), got {len(cells)}")
        at = _number(cells[0].strip(), "at", n)
        session = _number(cells[1].strip(), "session", n)
        if session > MAX_SESSION:
            raise TraceError(f"line {n}: session {session:g}s is longer than a week")
        arrivals.append(Arrival(at, session))
    return sorted(arrivals)


def load_trace(path: str) -> list[Arrival]:
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except (OSError, UnicodeDecodeError) as err:
        raise TraceError(f"cannot read {path}: {err}") from None
    return parse_trace(text)


def format_trace(arrivals: Iterable[Arrival]) -> str:
    lines = ["at,session"] + [f"{a.at:.1f},{a.session:.1f}" for a in arrivals]
    return "\n".join(lines) + "\n"


def _rate(t: float, base: float, peak: float, day: float) -> float:
    """Arrivals per second at `t`: a cosine from base (t = 0) to peak (t = day / 2)."""
    return (base + (peak - base) * (1 - math.cos(2 * math.pi * t / day)) / 2) / 3600.0


def diurnal(
    hours: float = 24.0,
    base_per_hour: float = 20.0,
    peak_per_hour: float = 200.0,
    mean_session: float = 900.0,
    spikes: Sequence[Spike] = (),
    seed: int = 1,
) -> list[Arrival]:
    """A synthetic day of demand (see the module docstring)."""
    rng = random.Random(seed)
    length = hours * 3600.0
    top = max(base_per_hour, peak_per_hour) / 3600.0
    arrivals = []
    t = 0.0
    while top > 0:
        t += rng.expovariate(top)  # thinning: candidates at the top rate, kept by rate(t) / top
        if t >= length:
            break
        if rng.random() * top <= _rate(t, base_per_hour, peak_per_hour, 86400.0):
            arrivals.append(Arrival(t, min(rng.expovariate(1 / mean_session), MAX_SESSION)))
    for spike in spikes:
        for _ in range(spike.count):
            at = spike.at + rng.random() * spike.length
            if at < length:
                arrivals.append(Arrival(at, min(rng.expovariate(1 / mean_session), MAX_SESSION)))
    return sorted(arrivals)
