"""What `agones simulate` prints and writes: a JSON report, a terminal chart and a PNG.

`report_json(runs, trace_info)` is the JSON document (per run: allocations asked, served, failed
and when, GameServer-hours, peak and mean fleet size, API writes, wall time, and the samples).
`terminal_chart(run, width, height)` draws the Fleet's GameServers (`#`), Allocated (`a`) and
failed allocations (`x` on the bottom line) over time in plain text. `write_png(runs, path)`
draws the same series with matplotlib (Agg, no display), one panel per run. Pure except for the
file written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .simulation import RunResult


def report_json(runs: Sequence[RunResult], trace: dict[str, Any]) -> dict[str, Any]:
    return {
        "trace": trace,
        "runs": [
            {
                **run.summary(),
                "samples": [
                    {
                        "t": s.t,
                        "replicas": s.replicas,
                        "gameServers": s.game_servers,
                        "ready": s.ready,
                        "allocated": s.allocated,
                        "failed": s.failed,
                    }
                    for s in run.samples
                ],
            }
            for run in runs
        ],
    }


def summary_table(runs: Sequence[RunResult]) -> str:
    header = (
        f"{'run':<16} {'asked':>6} {'served':>6} {'failed':>6} "
        f"{'GS-hours':>9} {'peak':>5} {'mean':>7} {'writes':>7} {'wall s':>7}"
    )
    lines = [header, "-" * len(header)]
    for r in runs:
        lines.append(
            f"{r.label[:16]:<16} {r.asked:>6} {r.served:>6} {r.failed:>6} "
            f"{r.game_server_hours:>9.1f} {r.peak_fleet_size:>5} {r.mean_fleet_size:>7.1f} "
            f"{r.api_writes:>7} {r.wall_seconds:>7.1f}"
        )
    return "\n".join(lines)


def terminal_chart(run: RunResult, width: int = 72, height: int = 12) -> str:
    """GameServers (`#`) with Allocated (`a`) below them, failures (`x`) on the bottom line."""
    samples = run.samples
    if not samples or run.simulated_seconds <= 0:
        return f"{run.label}: no samples"
    top = max(1, max(s.game_servers for s in samples))
    columns: list[tuple[int, int]] = []
    for c in range(width):
        lo = run.simulated_seconds * c / width
        hi = run.simulated_seconds * (c + 1) / width
        inside = [s for s in samples if lo <= s.t < hi] or [
            min(samples, key=lambda s: abs(s.t - lo))
        ]
        columns.append((max(s.game_servers for s in inside), max(s.allocated for s in inside)))
    failed_cols = {min(width - 1, int(t / run.simulated_seconds * width)) for t in run.failed_at}
    rows = []
    for level in range(height, 0, -1):
        threshold = top * (level - 0.5) / height
        row = "".join(
            "a" if alloc >= threshold else "#" if size >= threshold else " "
            for size, alloc in columns
        )
        rows.append(f"{top * level / height:>6.0f} |{row}")
    rows.append("       |" + "".join("x" if c in failed_cols else "-" for c in range(width)))
    hours = run.simulated_seconds / 3600
    rows.append(f"        0h{' ' * (width - 8)}{hours:>5.1f}h")
    title = f"{run.label}: GameServers (#), Allocated (a), failed allocations (x)"
    return "\n".join([title, *rows])


def write_png(runs: Sequence[RunResult], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(
        len(runs), 1, figsize=(11, 3.2 * len(runs)), sharex=True, squeeze=False
    )
    for ax, run in zip((a[0] for a in axes), runs, strict=True):
        hours = [s.t / 3600 for s in run.samples]
        ax.step(hours, [s.replicas for s in run.samples], where="post", label="Fleet replicas")
        ax.step(hours, [s.ready for s in run.samples], where="post", label="Ready")
        ax.step(hours, [s.allocated for s in run.samples], where="post", label="Allocated")
        if run.failed_at:
            ax.scatter(
                [t / 3600 for t in run.failed_at],
                [0] * len(run.failed_at),
                marker="x",
                color="red",
                label=f"failed allocations ({run.failed})",
                zorder=3,
            )
        ax.set_title(
            f"{run.label}: {run.served}/{run.asked} served, "
            f"{run.game_server_hours:.0f} GameServer-hours"
        )
        ax.set_ylabel("GameServers")
        ax.legend(loc="upper left", fontsize="small")
        ax.grid(alpha=0.3)
    axes[-1][0].set_xlabel("hours")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
