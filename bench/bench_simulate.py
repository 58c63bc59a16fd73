"""`agones simulate` speed: how long a simulated day takes, in wall and CPU seconds.

Runs one simulation of a trace (default: `examples/simulate/day.csv`, Buffer 5) and prints the
wall time, the process CPU time, the simulated seconds per wall second, the API writes and the
writes per simulated hour. No assertion: the figures go into BENCHMARKS.md.

    .venv/bin/python -m bench.bench_simulate --buffer 5
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import time
from pathlib import Path

import structlog

from agones.cmd import simulate as cmd
from agones.simulate.simulation import SimulationOptions, run_simulation
from agones.simulate.trace import load_trace

DAY = Path(__file__).parents[1] / "examples" / "simulate" / "day.csv"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", default=str(DAY))
    parser.add_argument("--buffer", default="5")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    trace = load_trace(args.trace)
    sim_args = argparse.Namespace(
        buffer=args.buffer, min_replicas=0, max_replicas=200, sync_seconds=30
    )
    fas = cmd.buffer_autoscaler(sim_args)
    cpu, wall = time.process_time(), time.monotonic()
    result = asyncio.run(run_simulation(trace, cmd.fleet_manifest(), fas, SimulationOptions()))
    cpu, wall = time.process_time() - cpu, time.monotonic() - wall
    hours = result.simulated_seconds / 3600
    print(f"trace: {args.trace} ({len(trace)} allocations), Buffer {args.buffer}")
    print(f"simulated: {hours:.1f} h in {wall:.1f} s wall, {cpu:.1f} s CPU")
    print(f"speed: {result.simulated_seconds / wall:.0f} simulated s per wall s")
    print(
        f"API writes: {result.api_writes} ({result.api_writes / hours:.0f} per simulated hour, "
        f"{result.api_writes / max(1, result.served):.1f} per served allocation)"
    )
    print(
        f"served {result.served}/{result.asked}, failed {result.failed}, "
        f"{result.game_server_hours:.1f} GameServer-hours"
    )


if __name__ == "__main__":
    main()
