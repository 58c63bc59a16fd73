"""Per-container log files as a kubelet with a CRI runtime keeps them, and reading them back.

Layout (the kubelet's `/var/log/pods`): `<root>/<namespace>_<pod>_<uid>/<container>/<restart>.log`,
one file per run of a container (`restartCount` at its launch), so `previous=true` reads the run
before the current one. Each line is in the CRI logging format,
`<RFC3339Nano UTC timestamp> <stdout|stderr> <F|P> <content>`: `F` ends a line, `P` is a piece of a
line longer than `MAX_LINE_PIECE` bytes (or the unterminated tail of a stream that closed), whose
rest follows in later records.

`pump_output(proc, path)` copies a process's stdout and stderr into such a file until both close.
`read_log(data, options)` is the pure reading side (the kubelet's `ReadLogs`): lines since a time,
the last N, with or without their timestamps, at most N bytes. `follow_log` streams a file as it
grows until the writer says it is done.
"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

MAX_LINE_PIECE = 16 * 1024
"""Bytes of one line per record; longer lines are split into `P` records (containerd's size)."""
FOLLOW_POLL = 0.1
"""Seconds between looks at a followed file that has not grown."""


def format_timestamp(at: datetime) -> str:
    """RFC 3339 with nanoseconds in UTC, as the CRI log format writes it."""
    at = at.astimezone(UTC)
    return at.strftime("%Y-%m-%dT%H:%M:%S.") + f"{at.microsecond:06d}000Z"


def parse_timestamp(text: str) -> datetime:
    """A CRI (nanosecond) or RFC 3339 timestamp, as an aware datetime (ValueError if neither)."""
    text = text.strip()
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    head, sep, rest = text.partition(".")
    if sep:
        digits = len(rest) - len(rest.lstrip("0123456789"))
        if digits == 0:
            raise ValueError(f"no fraction digits in {text!r}")
        text = f"{head}.{rest[:digits][:6].ljust(6, '0')}{rest[digits:]}"
    at = datetime.fromisoformat(text)
    if at.tzinfo is None:
        raise ValueError(f"no time zone in {text!r}")
    return at


def format_record(at: datetime, stream: str, content: bytes, partial: bool) -> bytes:
    """One CRI log record (with its newline)."""
    tag = b"P" if partial else b"F"
    return b"%s %s %s %s\n" % (format_timestamp(at).encode(), stream.encode(), tag, content)


@dataclass(frozen=True)
class LogLine:
    """One line of a container's output, joined from its records."""

    timestamp: str
    at: datetime
    stream: str
    content: bytes
    """Without the newline; `complete` says whether the line had one."""
    complete: bool = True


def parse_records(data: bytes) -> list[LogLine]:
    """The lines of a CRI log file (records that do not parse are skipped, as the kubelet does)."""
    lines: list[LogLine] = []
    pending: dict[str, LogLine] = {}
    for raw in data.split(b"\n"):
        parts = raw.split(b" ", 3)
        if len(parts) < 3 or parts[2] not in (b"F", b"P"):
            continue
        try:
            stamp = parts[0].decode()
            at = parse_timestamp(stamp)
        except (UnicodeDecodeError, ValueError):
            continue
        stream, content = parts[1].decode(errors="replace"), parts[3] if len(parts) > 3 else b""
        begun = pending.pop(stream, None)
        line = LogLine(stamp, at, stream, content, complete=parts[2] == b"F")
        if begun is not None:
            line = LogLine(
                begun.timestamp, begun.at, stream, begun.content + content, line.complete
            )
        if line.complete:
            lines.append(line)
        else:
            pending[stream] = line
    lines.extend(pending.values())
    return lines


@dataclass(frozen=True)
class ReadOptions:
    """What the kubelet reads of a log (its `LogOptions` from the request's `PodLogOptions`)."""

    since: datetime | None = None
    tail_lines: int | None = None
    limit_bytes: int | None = None
    timestamps: bool = False


def render(lines: list[LogLine], options: ReadOptions) -> bytes:
    """`lines` as the log endpoint sends them: since a time, the last N, timestamps, a byte cap."""
    if options.since is not None:
        since = options.since
        lines = [line for line in lines if line.at >= since]
    if options.tail_lines is not None:
        lines = lines[-options.tail_lines :] if options.tail_lines > 0 else []
    out = b"".join(render_line(line, options.timestamps) for line in lines)
    if options.limit_bytes is not None:
        out = out[: options.limit_bytes]
    return out


def render_line(line: LogLine, timestamps: bool) -> bytes:
    end = b"\n" if line.complete else b""
    prefix = line.timestamp.encode() + b" " if timestamps else b""
    return prefix + line.content + end


def read_log(data: bytes, options: ReadOptions) -> bytes:
    """The kubelet's answer for one container run's file contents."""
    return render(parse_records(data), options)


class ContainerLogDir:
    """The log files of one pod (see the module docstring for the layout)."""

    def __init__(self, root: Path, namespace: str, pod: str, uid: str) -> None:
        self.path = root / f"{namespace}_{pod}_{uid}"
        self._pumps: dict[tuple[str, int], asyncio.Task[None]] = {}

    def file(self, container: str, restart: int) -> Path:
        return self.path / container / f"{restart}.log"

    def attach(self, container: str, restart: int, proc: asyncio.subprocess.Process) -> None:
        """Write `proc`'s output as run `restart` of `container`."""
        task = asyncio.create_task(pump_output(proc, self.file(container, restart)))
        self._pumps[(container, restart)] = task

    def done_writing(self, container: str, restart: int) -> Callable[[], bool]:
        """Whether that run's output has closed (a run this kubelet never started: done)."""
        task = self._pumps.get((container, restart))
        return lambda: task is None or task.done()

    async def close(self) -> None:
        """Wait for the output of the stopped processes to be written."""
        if self._pumps:
            await asyncio.wait(list(self._pumps.values()), timeout=5)

    def remove(self) -> None:
        """Remove the pod's log files (none to remove when it never ran a container here)."""
        if self._pumps:
            shutil.rmtree(self.path, ignore_errors=True)


async def pump_output(proc: asyncio.subprocess.Process, path: Path) -> None:
    """Copy `proc`'s stdout and stderr into `path` as CRI records until both streams close."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab", buffering=0) as out:
        streams = [(s, n) for s, n in ((proc.stdout, "stdout"), (proc.stderr, "stderr")) if s]
        await asyncio.gather(*(_copy(stream, name, out.write) for stream, name in streams))


async def _copy(stream: asyncio.StreamReader, name: str, write: Callable[[bytes], object]) -> None:
    buffer = b""
    while True:
        chunk = await stream.read(65536)
        if not chunk:
            break
        buffer += chunk
        *whole, buffer = buffer.split(b"\n")
        now = datetime.now(UTC)
        for line in whole:
            write(_records(now, name, line, final=True))
        while len(buffer) > MAX_LINE_PIECE:
            write(format_record(now, name, buffer[:MAX_LINE_PIECE], partial=True))
            buffer = buffer[MAX_LINE_PIECE:]
    if buffer:
        write(format_record(datetime.now(UTC), name, buffer, partial=True))


def _records(at: datetime, stream: str, line: bytes, final: bool) -> bytes:
    pieces = [line[i : i + MAX_LINE_PIECE] for i in range(0, len(line), MAX_LINE_PIECE)] or [b""]
    return b"".join(
        format_record(at, stream, piece, partial=not (final and i == len(pieces) - 1))
        for i, piece in enumerate(pieces)
    )


async def follow_log(
    path: Path, options: ReadOptions, done: Callable[[], bool]
) -> AsyncIterator[bytes]:
    """What the file holds (per `options`), then each line written after, until `done()` says the
    writer has finished and everything written has been sent."""
    data = path.read_bytes() if path.exists() else b""
    cut = data.rfind(b"\n") + 1
    first = render(parse_records(data[:cut]), options)
    if first:
        yield first
    offset = cut
    sent = len(first)
    limit = options.limit_bytes
    live = ReadOptions(timestamps=options.timestamps)
    while limit is None or sent < limit:
        finished = done()
        data = _read_from(path, offset)
        cut = data.rfind(b"\n") + 1
        if finished:
            cut = len(data)
        if cut:
            lines = parse_records(data[:cut])
            if options.since is not None:
                lines = [line for line in lines if line.at >= options.since]
            chunk = render(lines, live)
            if limit is not None:
                chunk = chunk[: limit - sent]
            offset += cut
            if chunk:
                sent += len(chunk)
                yield chunk
        if finished:
            return
        await asyncio.sleep(FOLLOW_POLL)


def _read_from(path: Path, offset: int) -> bytes:
    """What the file holds past `offset` (nothing if it does not exist yet)."""
    try:
        with path.open("rb") as f:
            f.seek(offset)
            return f.read()
    except FileNotFoundError:
        return b""
