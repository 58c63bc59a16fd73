"""Traces (parse, generate) and `agones simulate`'s input handling: tables and malformed input."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agones.cmd import simulate as cmd
from agones.cmd.main import main
from agones.simulate.trace import Arrival, Spike, TraceError, diurnal, format_trace, parse_trace

P = pytest.param
EXAMPLES = Path(__file__).parents[3] / "examples" / "simulate"


@pytest.mark.parametrize(
    ("text", "want"),
    [
        P("at,session\n10,60\n5,30\n", [Arrival(5, 30), Arrival(10, 60)], id="sorted"),
        P("# comment\n\nat, session\n 1.5 , 2\n", [Arrival(1.5, 2)], id="comments-spaces"),
        P("at,session\n", [], id="header-only"),
    ],
)
def test_parse_trace(text: str, want: list[Arrival]) -> None:
    assert parse_trace(text) == want


@pytest.mark.parametrize(
    ("text", "message"),
    [
        P("", "the trace is empty", id="empty"),
        P("time,length\n1,2\n", "line 1: want the header `at,session`", id="bad-header"),
        P("at,session\n1\n", "line 2: want 2 values", id="one-value"),
        P("at,session\nx,2\n", "line 2: at 'x' is not a number", id="not-a-number"),
        P("at,session\n1,-2\n", "line 2: session '-2' must be a finite number >= 0", id="negative"),
        P("at,session\n1,inf\n", "must be a finite number", id="infinite"),
        P("at,session\n1,1e9\n", "longer than a week", id="too-long"),
    ],
)
def test_parse_trace_errors(text: str, message: str) -> None:
    with pytest.raises(TraceError) as err:
        parse_trace(text)
    assert message in str(err.value)


def test_diurnal_is_reproducible_and_peaks_at_noon() -> None:
    day = diurnal(24, 5, 40, 1800, [Spike(20 * 3600, 30, 60)], seed=4)
    assert day == diurnal(24, 5, 40, 1800, [Spike(20 * 3600, 30, 60)], seed=4)
    assert day != diurnal(24, 5, 40, 1800, [Spike(20 * 3600, 30, 60)], seed=5)
    night = sum(1 for a in day if a.at < 2 * 3600)
    noon = sum(1 for a in day if 11 * 3600 <= a.at < 13 * 3600)
    burst = sum(1 for a in day if 20 * 3600 <= a.at < 20 * 3600 + 60)
    assert noon > 3 * night
    assert burst >= 30
    assert parse_trace(format_trace(day)) == [
        Arrival(round(a.at, 1), round(a.session, 1)) for a in day
    ]


def test_shipped_traces_parse() -> None:
    for path in EXAMPLES.glob("*.csv"):
        assert len(parse_trace(path.read_text())) > 10


def args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers()
    cmd.register(sub)
    return parser.parse_args(["simulate", *argv])


@pytest.mark.parametrize(
    ("compare", "labels", "field", "values"),
    [
        P(
            "buffer=5,10,20",
            ["buffer=5", "buffer=10", "buffer=20"],
            "bufferSize",
            [5, 10, 20],
            id="buffer",
        ),
        P(
            "buffer=10%,20%",
            ["buffer=10%", "buffer=20%"],
            "bufferSize",
            ["10%", "20%"],
            id="percent",
        ),
        P("max=50,100", ["max=50", "max=100"], "maxReplicas", [50, 100], id="max"),
    ],
)
def test_variants(compare: str, labels: list[str], field: str, values: list[object]) -> None:
    runs = cmd.variants(cmd.buffer_autoscaler(args()), compare)
    assert [r.label for r in runs] == labels
    assert [r.fleet_autoscaler["spec"]["policy"]["buffer"][field] for r in runs] == values


def test_sync_variant() -> None:
    (run,) = cmd.variants(cmd.buffer_autoscaler(args()), "sync=5")
    assert run.fleet_autoscaler["spec"]["sync"]["fixedInterval"]["seconds"] == 5


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        P(["--compare", "buffer"], "--compare wants KEY=V1,V2", id="no-values"),
        P(["--compare", "colour=1,2"], "--compare wants KEY=V1,V2", id="bad-key"),
        P(["--compare", "buffer=five"], "'five' is not an integer or a percentage", id="bad-value"),
        P(["--compare", "min=10%"], "min wants an integer", id="percent-min"),
        P(
            ["--compare", "buffer=5,10", "--min-replicas", "7"],
            "minReplicas should be bigger than or equal to bufferSize",
            id="invalid-fas",
        ),
        P(
            ["--trace", "/nonexistent/trace.csv"],
            "cannot read /nonexistent/trace.csv",
            id="no-trace",
        ),
        P(["--spike", "noon"], "--spike wants HOUR:COUNT", id="bad-spike"),
        P(["--hours", "-1"], "--hours must be a positive number", id="negative-hours"),
        P(
            ["--fleetautoscaler", "/nonexistent.yaml"],
            "cannot read /nonexistent.yaml",
            id="no-manifest",
        ),
    ],
)
def test_bad_input_is_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["simulate", "--out", str(tmp_path), *argv]) == 2
    out = capsys.readouterr().out
    assert out.startswith("error: ") and out.count("\n") == 1, out
    assert message in out


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_any_trace_text_parses_or_names_its_line(text: str) -> None:
    try:
        arrivals = parse_trace(text)
    except TraceError as err:
        assert str(err) and "\n" not in str(err)
    else:
        assert all(a.at >= 0 and 0 <= a.session <= 7 * 86400 for a in arrivals)
        assert arrivals == sorted(arrivals)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40))
def test_any_compare_gives_variants_or_a_usage_error(compare: str) -> None:
    try:
        runs = cmd.variants(cmd.buffer_autoscaler(args()), compare)
    except cmd.UsageError as err:
        assert str(err) and "\n" not in str(err)
    else:
        assert runs


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=12), max_size=3))
def test_any_spike_flag_gives_spikes_or_a_usage_error(values: list[str]) -> None:
    try:
        spikes = cmd._spikes(values)
    except cmd.UsageError as err:
        assert "\n" not in str(err)
    else:
        assert len(spikes) == len(values)
