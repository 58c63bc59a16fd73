"""`agones.cmd.memtrace`: the figures it parses, the diffs it reports, and one real report."""

from __future__ import annotations

import asyncio
import os
import signal
import tracemalloc
from pathlib import Path

import pytest
import structlog
from hypothesis import given
from hypothesis import strategies as st

from agones.cmd import memtrace
from agones.cmd.main import main
from agones.workqueue.delaying_queue import DelayingQueue

DEBUGMALLOCSTATS = """\
Small block threshold = 512, in 32 size classes.
# arenas allocated total           =                   61
# arenas reclaimed                 =                    8
# arenas highwater mark            =                   53
# arenas allocated current         =                   53
53 arenas * 1048576 bytes/arena    =           55,574,528

# bytes in allocated blocks        =           32,505,856
# bytes in available blocks        =           18,612,224
0 unused pools * 16384 bytes       =                    0
"""


def test_parse_pymalloc_stats_reads_the_arena_figures() -> None:
    assert memtrace.parse_pymalloc_stats(DEBUGMALLOCSTATS) == {
        "arenas_current": 53,
        "arenas_highwater": 53,
        "bytes_in_used_blocks": 32_505_856,
        "bytes_in_free_blocks": 18_612_224,
    }


@pytest.mark.parametrize(
    ("before", "after", "top", "want"),
    [
        pytest.param({}, {}, 5, [], id="nothing"),
        pytest.param({"a": 3}, {"a": 3}, 5, [], id="unchanged-types-left-out"),
        pytest.param({"a": 1}, {"a": 4, "b": 1}, 5, [("a", 4, 3), ("b", 1, 1)], id="growth"),
        pytest.param({"a": 9}, {"a": 1}, 5, [("a", 1, -8)], id="shrink"),
        pytest.param({"gone": 2}, {}, 5, [("gone", 0, -2)], id="type-gone"),
        pytest.param(
            {"a": 1, "b": 1, "c": 1},
            {"a": 2, "b": 11, "c": -4},
            2,
            [("b", 11, 10), ("c", -4, -5)],
            id="largest-change-first-either-sign",
        ),
        pytest.param({}, {"y": 2, "x": 2}, 5, [("x", 2, 2), ("y", 2, 2)], id="ties-by-name"),
    ],
)
def test_type_census_diff(
    before: dict[str, int], after: dict[str, int], top: int, want: list[tuple[str, int, int]]
) -> None:
    assert memtrace.type_census_diff(before, after, top) == want


async def test_pending_timers_name_the_queue_they_wait_in() -> None:
    queue: DelayingQueue[str] = DelayingQueue("agones.dev.Example")
    queue.add_after("default/a", 50)
    queue.add_after("default/b", 20)
    try:
        lines = memtrace._timer_lines()
    finally:
        queue.shut_down()
    assert any(
        "2 DelayingQueue.add_after.<locals>.<lambda> [agones.dev.Example] (due in up to 50 s)"
        in line
        for line in lines
    ), lines


def test_describe_callback_of_a_bound_method_and_a_plain_function() -> None:
    queue: DelayingQueue[str] = DelayingQueue("q1")
    assert memtrace.describe_callback(queue.ready_now) == "DelayingQueue.ready_now [q1]"
    assert memtrace.describe_callback(len) == "len"


def test_without_the_variable_nothing_is_installed() -> None:
    assert memtrace.install_from_env({}) is None
    assert signal.getsignal(signal.SIGUSR2) in (signal.SIG_DFL, None)


def test_a_report_without_tracemalloc_has_the_heap_and_the_census(tmp_path: Path) -> None:
    trace = memtrace.MemTrace(tmp_path / "report.txt", trim=True)
    trace.write_report()
    kept = [object() for _ in range(50)], [[] for _ in range(500)]
    trace.write_report()
    text = (tmp_path / "report.txt").read_text()
    assert "== snapshot 1" in text and "-- end of snapshot 2" in text
    assert "pymalloc arenas" in text and "rss after malloc_trim(0)" in text
    second = text.split("== snapshot 2")[1]
    assert "gc-tracked objects by type, changed most:" in second
    assert any(
        line.strip().startswith("+") and " list (now" in line for line in second.splitlines()
    )
    assert kept


def test_sigusr2_writes_a_traced_report(tmp_path: Path) -> None:
    path = tmp_path / "report.txt"
    previous = signal.getsignal(signal.SIGUSR2)
    was_tracing = tracemalloc.is_tracing()
    try:
        trace = memtrace.install_from_env({memtrace.ENV_FILE: str(path), memtrace.ENV_FRAMES: "2"})
        assert trace is not None and tracemalloc.is_tracing()
        os.kill(os.getpid(), signal.SIGUSR2)
        kept = [bytearray(1000) for _ in range(2000)]
        os.kill(os.getpid(), signal.SIGUSR2)
        text = path.read_text()
    finally:
        signal.signal(signal.SIGUSR2, previous)
        if not was_tracing:
            tracemalloc.stop()
    assert "-- end of snapshot 2" in text
    second = text.split("== snapshot 2")[1]
    assert "grown since the previous snapshot, by line:" in second
    assert "test_memtrace.py" in second.split("… by traceback:")[0]
    assert len(kept) == 2000


def test_a_report_runs_inside_the_event_loop(tmp_path: Path) -> None:
    async def main() -> str:
        queue: DelayingQueue[str] = DelayingQueue("agones.dev.Loop")
        queue.add_after("k", 30)
        memtrace.MemTrace(tmp_path / "r.txt").write_report()
        queue.shut_down()
        return (tmp_path / "r.txt").read_text()

    assert "[agones.dev.Loop]" in asyncio.run(main())


def test_the_peak_between_two_reports_is_reported(tmp_path: Path) -> None:
    was_tracing = tracemalloc.is_tracing()
    if not was_tracing:
        tracemalloc.start(2)
    try:
        trace = memtrace.MemTrace(tmp_path / "r.txt")
        trace.write_report()
        transient = [bytearray(1000) for _ in range(3000)]
        trace.sample_peak()
        del transient
        trace.write_report()
    finally:
        if not was_tracing:
            tracemalloc.stop()
    second = (tmp_path / "r.txt").read_text().split("== snapshot 2")[1]
    assert "at the peak since the previous snapshot" in second
    peak = second.split("at the peak since the previous snapshot")[1]
    assert "test_memtrace.py" in peak.split("… by traceback:")[0]


@pytest.mark.parametrize(
    ("value", "want"),
    [
        pytest.param(None, memtrace.DEFAULT_FRAMES, id="unset"),
        pytest.param("", memtrace.DEFAULT_FRAMES, id="empty"),
        pytest.param("0", 0, id="no-tracemalloc"),
        pytest.param(" 12 ", 12, id="spaces"),
        pytest.param("1000", 1000, id="max"),
    ],
)
def test_parse_frames(value: str | None, want: int) -> None:
    assert memtrace.parse_frames(value) == want


@given(st.text(max_size=20))
def test_parse_frames_answers_a_number_or_one_line(value: str) -> None:
    try:
        frames = memtrace.parse_frames(value)
    except memtrace.MemTraceConfigError as err:
        assert "\n" not in str(err) and memtrace.ENV_FRAMES in str(err)
    else:
        assert 0 <= frames <= memtrace.MAX_FRAMES


def test_controller_with_bad_frames_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(memtrace.ENV_FILE, str(tmp_path / "r.txt"))
    monkeypatch.setenv(memtrace.ENV_FRAMES, "lots")
    try:
        assert main(["controller", "--min-port", "7000", "--max-port", "8000"]) == 2
    finally:
        structlog.reset_defaults()  # the command configured logging onto captured stderr
    assert capsys.readouterr().out == (
        "error: AGONES_MEMTRACE_FRAMES must be an integer from 0 to 1000, got 'lots'\n"
    )


def test_a_report_that_cannot_be_written_is_logged_not_raised(tmp_path: Path) -> None:
    previous = signal.getsignal(signal.SIGUSR2)
    try:
        memtrace.install_from_env(
            {memtrace.ENV_FILE: str(tmp_path / "gone" / "r.txt"), memtrace.ENV_FRAMES: "0"}
        )
        os.kill(os.getpid(), signal.SIGUSR2)  # the handler runs here; nothing may raise
    finally:
        signal.signal(signal.SIGUSR2, previous)
    assert not (tmp_path / "gone").exists()
