"""Memory snapshots of a running process on SIGUSR2, for finding what it keeps between rounds.

With `AGONES_MEMTRACE=<file>` in its environment, `install_from_env()` starts `tracemalloc`
(`AGONES_MEMTRACE_FRAMES` frames per allocation, 8 by default; 0 = no tracemalloc) and, on each
SIGUSR2, runs a full garbage collection and appends a report to `<file>`, then one line
`-- end of snapshot N` (a reader polls for it). A report says, for this process:

* RSS (`/proc/self/status`) and, when tracing, the bytes tracemalloc traces (live Python
  allocations made since it started) and the bytes tracemalloc itself spends;
* pymalloc's arenas (allocated, highwater mark, bytes in used and in free blocks; only without
  tracemalloc, whose hooks hide them) and glibc's heap (`mallinfo2`: bytes in use, free but not
  returned to the system, mmapped), so true retention and fragmentation can be told apart;
* when tracing, the allocation sites that grew most since the previous report (by line and by
  traceback);
* the gc-tracked objects by type whose counts changed most since the previous report;
* the event loop's pending timers, grouped by what they will call (a timer's closure names its
  owner, e.g. the work queue an item waits in) with the longest wait of each group.

With `AGONES_MEMTRACE_PEAK=1` (and tracing) a thread also keeps a snapshot of the highest traced
memory between two reports (re-taken each time it grew by another MiB) and the report says what
that peak held over the previous report: transient memory that sets how many arenas stay.
With `AGONES_MEMTRACE_TRIM=1` each report then calls glibc's `malloc_trim(0)` and gives the RSS
after it (what the heap could give back). Without `AGONES_MEMTRACE` nothing is installed and
nothing costs anything. tracemalloc slows the process two to three times and adds memory of its
own: it is a diagnosis tool, not a mode to run in.
"""

from __future__ import annotations

import asyncio
import collections
import ctypes
import gc
import os
import re
import signal
import sys
import tempfile
import threading
import time
import tracemalloc
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType

import structlog

ENV_FILE = "AGONES_MEMTRACE"
ENV_FRAMES = "AGONES_MEMTRACE_FRAMES"
ENV_TRIM = "AGONES_MEMTRACE_TRIM"
ENV_PEAK = "AGONES_MEMTRACE_PEAK"
PEAK_STEP = 1024 * 1024
PEAK_POLL = 0.5
DEFAULT_FRAMES = 8
MAX_FRAMES = 1000
TOP_LINES = 30
TOP_TRACEBACKS = 12
TOP_TYPES = 30

_log = structlog.get_logger(__name__)


@dataclass
class Heap:
    """One moment's memory figures (bytes unless named otherwise)."""

    rss: int = 0
    traced: int = 0
    traced_peak: int = 0
    tracemalloc_overhead: int = 0
    pymalloc: dict[str, int] = field(default_factory=dict)
    glibc: dict[str, int] = field(default_factory=dict)


_PYMALLOC_LINES = {
    "# arenas allocated current": "arenas_current",
    "# arenas highwater mark": "arenas_highwater",
    "# bytes in allocated blocks": "bytes_in_used_blocks",
    "# bytes in available blocks": "bytes_in_free_blocks",
}


def parse_pymalloc_stats(text: str) -> dict[str, int]:
    """The figures of `sys._debugmallocstats()`'s output that say how full the arenas are."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        name, sep, value = line.partition("=")
        key = _PYMALLOC_LINES.get(name.strip())
        if sep and key is not None:
            out[key] = int(value.strip().replace(",", ""))
    return out


def type_census_diff(
    before: Mapping[str, int], after: Mapping[str, int], top: int
) -> list[tuple[str, int, int]]:
    """(type name, count now, change) for the `top` types whose counts changed most."""
    names = set(before) | set(after)
    changes = [(n, after.get(n, 0), after.get(n, 0) - before.get(n, 0)) for n in names]
    changes = [c for c in changes if c[2] != 0]
    changes.sort(key=lambda c: (-abs(c[2]), c[0]))
    return changes[:top]


def format_heap(heap: Heap) -> list[str]:
    mib = 1024 * 1024
    lines = [
        f"rss {heap.rss / mib:.1f} MiB; traced {heap.traced / mib:.1f} MiB "
        f"(peak {heap.traced_peak / mib:.1f}); tracemalloc's own {heap.tracemalloc_overhead / mib:.1f} MiB"
    ]
    if heap.pymalloc:
        p = heap.pymalloc
        lines.append(
            f"pymalloc arenas {p.get('arenas_current', 0)} (highwater {p.get('arenas_highwater', 0)}); "
            f"used blocks {p.get('bytes_in_used_blocks', 0) / mib:.1f} MiB, "
            f"free blocks {p.get('bytes_in_free_blocks', 0) / mib:.1f} MiB"
        )
    if heap.glibc:
        g = heap.glibc
        lines.append(
            f"glibc heap {g['arena'] / mib:.1f} MiB: in use {g['uordblks'] / mib:.1f}, "
            f"free {g['fordblks'] / mib:.1f} (releasable {g['keepcost'] / mib:.1f}); "
            f"mmapped {g['hblkhd'] / mib:.1f} MiB"
        )
    return lines


def _rss_bytes() -> int:
    try:
        text = Path("/proc/self/status").read_text()
    except OSError:
        return 0
    m = re.search(r"^VmRSS:\s+(\d+) kB", text, re.MULTILINE)
    return int(m.group(1)) * 1024 if m else 0


def _pymalloc() -> dict[str, int]:
    """Run `sys._debugmallocstats()` (it prints to the C stderr) into a temporary file."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 2)
        try:
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        return parse_pymalloc_stats(tmp.read().decode(errors="replace"))


_MALLINFO2_FIELDS = (
    "arena",
    "ordblks",
    "smblks",
    "hblks",
    "hblkhd",
    "usmblks",
    "fsmblks",
    "uordblks",
    "fordblks",
    "keepcost",
)


class _MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in _MALLINFO2_FIELDS]


def _libc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL("libc.so.6")
        libc.mallinfo2.restype = _MallInfo2
        libc.malloc_trim.argtypes = [ctypes.c_size_t]
    except (OSError, AttributeError):
        return None
    return libc


def _glibc() -> dict[str, int]:
    libc = _libc()
    if libc is None:
        return {}
    info = libc.mallinfo2()
    return {name: int(getattr(info, name)) for name in _MALLINFO2_FIELDS}


def malloc_trim() -> bool:
    """glibc's `malloc_trim(0)`: give free heap pages back to the system; False without glibc."""
    libc = _libc()
    return libc is not None and bool(libc.malloc_trim(0))


def measure() -> Heap:
    traced, peak = tracemalloc.get_traced_memory()
    return Heap(
        _rss_bytes(),
        traced,
        peak,
        tracemalloc.get_tracemalloc_memory(),
        _pymalloc(),
        _glibc(),
    )


def _census() -> dict[str, int]:
    counts: collections.Counter[str] = collections.Counter()
    for obj in gc.get_objects():
        counts[type(obj).__qualname__] += 1
    return dict(counts)


def _stat_lines(stats: Iterable[tracemalloc.StatisticDiff], top: int) -> list[str]:
    lines = []
    for stat in list(stats)[:top]:
        frame = stat.traceback[0]
        lines.append(
            f"  {stat.size_diff / 1024:+10.1f} KiB {stat.count_diff:+8d} blocks "
            f"(now {stat.size / 1024:.1f} KiB) {frame.filename}:{frame.lineno}"
        )
    return lines


def _traceback_lines(stats: Iterable[tracemalloc.StatisticDiff], top: int) -> list[str]:
    lines = []
    for stat in list(stats)[:top]:
        lines.append(f"  {stat.size_diff / 1024:+10.1f} KiB {stat.count_diff:+8d} blocks:")
        lines += [f"      {frame.filename}:{frame.lineno}" for frame in stat.traceback]
    return lines


def describe_callback(callback: object) -> str:
    """What a timer will call: the function's qualified name and, for a closure or a bound
    method, the `name` of the object it belongs to when it has one (a queue's name)."""
    func = getattr(callback, "__func__", callback)
    owner = getattr(callback, "__self__", None)
    label = getattr(func, "__qualname__", type(func).__qualname__)
    for cell in getattr(func, "__closure__", None) or ():
        try:
            content = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if owner is None and isinstance(getattr(content, "name", None), str):
            owner = content
    name = getattr(owner, "name", None)
    return f"{label} [{name}]" if isinstance(name, str) and name else label


def _timer_lines() -> list[str]:
    loop = asyncio._get_running_loop()
    scheduled = getattr(loop, "_scheduled", None)
    if loop is None or scheduled is None:
        return []
    now = loop.time()
    groups: dict[str, list[float]] = {}
    for handle in scheduled:
        if handle.cancelled():
            groups.setdefault("(cancelled)", []).append(handle.when() - now)
            continue
        groups.setdefault(describe_callback(handle._callback), []).append(handle.when() - now)
    ordered = sorted(groups.items(), key=lambda g: -len(g[1]))
    lines = [f"pending timers: {len(scheduled)}"]
    lines += [f"  {len(w):6d} {label} (due in up to {max(w):.0f} s)" for label, w in ordered[:15]]
    return lines


def _take_snapshot() -> tracemalloc.Snapshot:
    return tracemalloc.take_snapshot().filter_traces(
        [tracemalloc.Filter(False, tracemalloc.__file__)]
    )


class MemTrace:
    """The snapshots taken so far and the file the reports go to."""

    def __init__(self, path: Path, trim: bool = False) -> None:
        self.path = path
        self.trim = trim
        self.number = 0
        self._lock = threading.RLock()
        self._snapshot: tracemalloc.Snapshot | None = None
        self._types: dict[str, int] = {}
        self._peak_bytes = 0
        self._peak: tracemalloc.Snapshot | None = None

    def watch_peak(self) -> None:
        """Keep a snapshot of the highest traced memory since the last report (runs forever)."""
        while True:
            time.sleep(PEAK_POLL)
            self.sample_peak()

    def sample_peak(self) -> None:
        """Snapshot now if traced memory grew by `PEAK_STEP` over the last peak snapshot."""
        current, _ = tracemalloc.get_traced_memory()
        with self._lock:
            if current > self._peak_bytes + PEAK_STEP:
                self._peak_bytes = current
                self._peak = _take_snapshot()

    def _peak_lines(self) -> list[str]:
        peak, self._peak = self._peak, None
        self._peak_bytes = tracemalloc.get_traced_memory()[0]
        if peak is None or self._snapshot is None:
            return []
        total = sum(stat.size for stat in peak.statistics("filename")) / 1024 / 1024
        lines = [f"at the peak since the previous snapshot ({total:.1f} MiB traced), by line:"]
        lines += _stat_lines(peak.compare_to(self._snapshot, "lineno"), TOP_LINES)
        lines.append("… by traceback:")
        lines += _traceback_lines(peak.compare_to(self._snapshot, "traceback"), TOP_TRACEBACKS)
        return lines

    def report(self) -> list[str]:
        """Collect, snapshot, and describe what changed since the previous report."""
        gc.collect()
        tracing = tracemalloc.is_tracing()
        snapshot = _take_snapshot() if tracing else None
        types = _census()
        self.number += 1
        lines = [f"== snapshot {self.number} (pid {os.getpid()})", *format_heap(measure())]
        if self.trim:
            malloc_trim()
            lines.append(f"rss after malloc_trim(0) {_rss_bytes() / 1024 / 1024:.1f} MiB")
        if snapshot is not None and self._snapshot is not None:
            lines.append("grown since the previous snapshot, by line:")
            lines += _stat_lines(snapshot.compare_to(self._snapshot, "lineno"), TOP_LINES)
            lines.append("… by traceback:")
            lines += _traceback_lines(
                snapshot.compare_to(self._snapshot, "traceback"), TOP_TRACEBACKS
            )
        lines += self._peak_lines()
        if self._types:
            lines.append("gc-tracked objects by type, changed most:")
            lines += [
                f"  {change:+8d} {name} (now {now})"
                for name, now, change in type_census_diff(self._types, types, TOP_TYPES)
            ]
        lines += _timer_lines()
        self._snapshot, self._types = snapshot, types
        lines.append(f"-- end of snapshot {self.number}")
        return lines

    def write_report(self) -> None:
        with self._lock:
            lines = self.report()
            with self.path.open("a") as out:
                out.write("\n".join(lines) + "\n")


class MemTraceConfigError(ValueError):
    """A memtrace variable holds something unusable (one line: what, and what was given)."""


def parse_frames(value: str | None) -> int:
    """`AGONES_MEMTRACE_FRAMES`: an integer from 0 (no tracemalloc) to 1000; unset = 8."""
    if value is None or not value.strip():
        return DEFAULT_FRAMES
    try:
        frames = int(value.strip())
    except ValueError:
        frames = -1
    if not 0 <= frames <= MAX_FRAMES:
        raise MemTraceConfigError(
            f"{ENV_FRAMES} must be an integer from 0 to {MAX_FRAMES}, got {value!r}"
        )
    return frames


def install_from_env(environ: Mapping[str, str] = os.environ) -> MemTrace | None:
    """Start tracing and handle SIGUSR2 when `AGONES_MEMTRACE` names a file; else do nothing.

    Raises MemTraceConfigError for an unusable `AGONES_MEMTRACE_FRAMES`. A report that cannot be
    written (e.g. the file's directory is gone) is logged, never raised into the running code.
    """
    target = environ.get(ENV_FILE)
    if not target:
        return None
    frames = parse_frames(environ.get(ENV_FRAMES))
    if frames > 0:
        tracemalloc.start(frames)
    trace = MemTrace(Path(target), trim=environ.get(ENV_TRIM, "") not in ("", "0"))

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        try:
            trace.write_report()
        except OSError as err:
            _log.warning("could not write the memory report", path=target, error=str(err))

    signal.signal(signal.SIGUSR2, on_signal)
    if frames > 0 and environ.get(ENV_PEAK, "") not in ("", "0"):
        threading.Thread(target=trace.watch_peak, name="memtrace-peak", daemon=True).start()
    return trace
