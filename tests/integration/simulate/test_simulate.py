"""`agones simulate` on the shipped sample trace: the report's numbers are computed, so the test
checks how they relate (a larger buffer never fails more allocations and costs at least as many
GameServer-hours; every allocation is served or failed; peak >= mean), and that the PNG and the
terminal chart are drawn."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from agones.cmd.main import main
from agones.controllers.fleetautoscalers import REGISTRY

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

TRACE = Path(__file__).parents[3] / "examples" / "simulate" / "spike.csv"


def test_simulate_compare_buffers(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "report"
    code = main(
        ["simulate", "--trace", str(TRACE), "--compare", "buffer=5,10,20", "--out", str(out)]
    )
    assert code == 0
    printed = capsys.readouterr().out
    report = json.loads((out / "report.json").read_text())
    png = (out / "report.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000

    runs = report["runs"]
    assert [r["label"] for r in runs] == ["buffer=5", "buffer=10", "buffer=20"]
    asked = sum(1 for line in TRACE.read_text().splitlines()[2:] if line.strip())
    for run in runs:
        allocations = run["allocations"]
        assert allocations["asked"] == asked
        assert allocations["served"] + allocations["failed"] == asked
        assert len(allocations["failed_at_seconds"]) == allocations["failed"]
        assert run["fleet_size"]["peak"] >= run["fleet_size"]["mean"] > 0
        assert run["game_server_hours"] > 0
        assert run["samples"][-1]["failed"] == allocations["failed"]
        assert all(s["allocated"] <= s["gameServers"] for s in run["samples"])
        assert run["label"] + ": GameServers (#)" in printed
    failed = [r["allocations"]["failed"] for r in runs]
    hours = [r["game_server_hours"] for r in runs]
    assert failed == sorted(failed, reverse=True), failed  # a larger buffer never fails more
    assert hours == sorted(hours), hours  # ... and never costs less
    assert failed[0] > 0, "the spike should beat a buffer of 5"
    # with nothing going on the fleet holds at least the buffer: the first hour's samples
    for run, buffer in zip(runs, (5, 10, 20), strict=True):
        quiet = [s for s in run["samples"] if 600 <= s["t"] < 3300]
        assert min(s["ready"] for s in quiet) >= buffer - 2


def test_simulate_an_in_process_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A studio's Python policy (the example) simulated as it would run in the controller."""
    example = TRACE.parents[1] / "autoscaler-python-policy"
    monkeypatch.syspath_prepend(str(example))
    sys.modules.pop("studio_policy", None)  # imported fresh, so it registers itself here
    monkeypatch.setattr(REGISTRY, "_policies", dict(REGISTRY._policies))
    out = tmp_path / "py"
    code = main(
        [
            "simulate",
            "--trace",
            str(TRACE),
            "--duration",
            "1800",
            "--fleetautoscaler",
            str(example / "fleetautoscaler.yaml"),
            "--autoscaler-policy-modules",
            "studio_policy",
            "--no-png",
            "--out",
            str(out),
        ]
    )
    assert code == 0, capsys.readouterr().out
    (run,) = json.loads((out / "report.json").read_text())["runs"]
    assert run["allocations"]["served"] > 0
    # the policy keeps 5 Ready while less than half the Fleet is allocated
    quiet = [s for s in run["samples"] if 600 <= s["t"] <= 1800]
    assert min(s["ready"] for s in quiet) >= 3
    assert not (out / "report.png").exists()
