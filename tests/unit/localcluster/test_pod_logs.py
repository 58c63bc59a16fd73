"""The pure parts of `kubectl logs` on the local cluster: CRI log records and how the kubelet reads
them back (`nodes/logs.py`), and the API server's `PodLogOptions` decoding, validation and choice
of container (`apiserver/podlog.py`), with kube-apiserver's wording."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from multidict import MultiDict

from agones.localcluster.apiserver.errors import StatusError
from agones.localcluster.apiserver.podlog import (
    PodLogOptions,
    choose_container,
    parse_log_options,
    validate_log_options,
)
from agones.localcluster.nodes.containers import Container
from agones.localcluster.nodes.kubeletserver import KubeletError, log_file_for
from agones.localcluster.nodes.logs import (
    MAX_LINE_PIECE,
    ContainerLogDir,
    ReadOptions,
    follow_log,
    format_record,
    parse_records,
    parse_timestamp,
    pump_output,
    read_log,
)

T0 = datetime(2026, 1, 2, 3, 4, 5, 123456, tzinfo=UTC)


def records(*lines: tuple[int, str, str, bool]) -> bytes:
    """(seconds after T0, stream, content, partial) → a CRI log file's bytes."""
    return b"".join(
        format_record(T0 + timedelta(seconds=s), stream, text.encode(), partial)
        for s, stream, text, partial in lines
    )


FILE = records(
    (0, "stdout", "one", False),
    (1, "stderr", "two", False),
    (2, "stdout", "thr", True),
    (2, "stdout", "ee", False),
    (3, "stdout", "four", False),
)


def test_record_format_is_cri() -> None:
    assert format_record(T0, "stdout", b"hi", partial=False) == (
        b"2026-01-02T03:04:05.123456000Z stdout F hi\n"
    )
    assert parse_timestamp("2026-01-02T03:04:05.123456789Z") == T0


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        pytest.param(ReadOptions(), b"one\ntwo\nthree\nfour\n", id="all-partials-joined"),
        pytest.param(ReadOptions(tail_lines=2), b"three\nfour\n", id="tail"),
        pytest.param(ReadOptions(tail_lines=0), b"", id="tail-zero"),
        pytest.param(ReadOptions(tail_lines=10), b"one\ntwo\nthree\nfour\n", id="tail-more"),
        pytest.param(ReadOptions(since=T0 + timedelta(seconds=1.5)), b"three\nfour\n", id="since"),
        pytest.param(ReadOptions(limit_bytes=6), b"one\ntw", id="limit-bytes"),
        pytest.param(
            ReadOptions(timestamps=True, tail_lines=1),
            b"2026-01-02T03:04:08.123456000Z four\n",
            id="timestamps",
        ),
        pytest.param(
            ReadOptions(timestamps=True, since=T0 + timedelta(seconds=2)),
            b"2026-01-02T03:04:07.123456000Z three\n2026-01-02T03:04:08.123456000Z four\n",
            id="partial-line-keeps-first-timestamp",
        ),
    ],
)
def test_read_log(options: ReadOptions, expected: bytes) -> None:
    assert read_log(FILE, options) == expected


def test_garbage_records_are_skipped_and_unterminated_tail_kept() -> None:
    data = b"not a record\n" + records((0, "stdout", "ok", False), (1, "stdout", "tail", True))
    lines = parse_records(data + b"2026-13-99T00:00:00Z stdout F bad time\n")
    assert [(line.content, line.complete) for line in lines] == [(b"ok", True), (b"tail", False)]
    assert read_log(data, ReadOptions()) == b"ok\ntail"


async def test_pump_writes_both_streams_and_splits_long_lines(tmp_path: Path) -> None:
    code = (
        "import sys; print('out'); print('err', file=sys.stderr); "
        f"sys.stdout.write('x' * {MAX_LINE_PIECE + 10} + '\\n'); sys.stdout.write('end')"
    )
    proc = await asyncio.create_subprocess_exec(
        "python3", "-c", code, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    path = tmp_path / "c" / "0.log"
    await pump_output(proc, path)
    await proc.wait()
    data = path.read_bytes()
    assert data.count(b" P ") >= 2  # the long line's first piece and the unterminated "end"
    lines = {(line.stream, line.content[:3]) for line in parse_records(data)}
    assert lines == {("stdout", b"out"), ("stderr", b"err"), ("stdout", b"xxx"), ("stdout", b"end")}
    out = read_log(data, ReadOptions())
    assert out.endswith(b"end") and b"x" * (MAX_LINE_PIECE + 10) + b"\n" in out


async def test_follow_streams_what_is_appended_until_done(tmp_path: Path) -> None:
    path = tmp_path / "0.log"
    path.write_bytes(records((0, "stdout", "old", False)))
    done = asyncio.Event()
    got: list[bytes] = []

    async def follow() -> None:
        async for chunk in follow_log(path, ReadOptions(), done.is_set):
            got.append(chunk)

    task = asyncio.create_task(follow())
    while not got:
        await asyncio.sleep(0.01)
    with path.open("ab") as f:
        f.write(records((1, "stdout", "new", False)))
    while b"".join(got) != b"old\nnew\n":
        await asyncio.sleep(0.01)
    done.set()
    await asyncio.wait_for(task, 5)
    assert b"".join(got) == b"old\nnew\n"


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        pytest.param({}, PodLogOptions(), id="none"),
        pytest.param(
            {"follow": "true", "previous": "1", "timestamps": "True", "container": "c"},
            PodLogOptions("c", True, True, True),
            id="flags",
        ),
        pytest.param({"follow": "false", "previous": "0"}, PodLogOptions(), id="false-flags"),
        pytest.param({"follow": "yes"}, PodLogOptions(follow=True), id="any-other-is-true"),
        pytest.param({"tailLines": "5"}, PodLogOptions(tail_lines=5), id="tail"),
        pytest.param({"sinceSeconds": ""}, PodLogOptions(), id="empty-int-unset"),
        pytest.param(
            {"sinceTime": "2026-01-02T03:04:05Z"},
            PodLogOptions(since_time=datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)),
            id="since-time",
        ),
    ],
)
def test_parse_log_options(query: dict[str, str], expected: PodLogOptions) -> None:
    assert parse_log_options(MultiDict(query)) == expected


@pytest.mark.parametrize(
    ("query", "message"),
    [
        pytest.param(
            {"tailLines": "abc"}, 'strconv.ParseInt: parsing "abc": invalid syntax', id="tail"
        ),
        pytest.param(
            {"limitBytes": "1" * 30},
            f'strconv.ParseInt: parsing "{"1" * 30}": value out of range',
            id="range",
        ),
        pytest.param(
            {"sinceTime": "yesterday"},
            'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" '
            'as "2006"',
            id="time",
        ),
    ],
)
def test_unparsable_options_are_bad_requests(query: dict[str, str], message: str) -> None:
    with pytest.raises(StatusError) as err:
        parse_log_options(MultiDict(query))
    assert (err.value.code, err.value.message) == (400, message)


@pytest.mark.parametrize(
    ("opts", "fields"),
    [
        pytest.param(PodLogOptions(tail_lines=-1), ["tailLines"], id="negative-tail"),
        pytest.param(PodLogOptions(limit_bytes=0), ["limitBytes"], id="zero-limit"),
        pytest.param(PodLogOptions(since_seconds=0), ["sinceSeconds"], id="zero-since"),
        pytest.param(
            PodLogOptions(since_seconds=5, since_time=T0), [""], id="since-seconds-and-time"
        ),
        pytest.param(PodLogOptions(tail_lines=0, limit_bytes=1, since_seconds=1), [], id="ok"),
    ],
)
def test_validate_log_options(opts: PodLogOptions, fields: list[str]) -> None:
    assert [e.field for e in validate_log_options(opts)] == fields


POD: dict[str, Any] = {
    "metadata": {"name": "p"},
    "spec": {
        "initContainers": [{"name": "init"}],
        "containers": [{"name": "a"}, {"name": "b"}],
    },
}


@pytest.mark.parametrize(
    ("pod", "container", "result"),
    [
        pytest.param(POD, "b", "b", id="named"),
        pytest.param(POD, "init", "init", id="init-container"),
        pytest.param(
            {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "only"}]}},
            "",
            "only",
            id="the-only-one",
        ),
        pytest.param(POD, "nope", "container nope is not valid for pod p", id="unknown"),
        pytest.param(
            POD,
            "",
            "a container name must be specified for pod p, choose one of: [init a b]",
            id="ambiguous",
        ),
    ],
)
def test_choose_container(pod: dict[str, Any], container: str, result: str) -> None:
    try:
        assert choose_container(pod, container) == result
    except StatusError as err:
        assert (err.code, err.message) == (400, result)


QUERY_KEYS = ("tailLines", "sinceSeconds", "sinceTime", "limitBytes", "follow", "container")


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(QUERY_KEYS), st.text(max_size=30), max_size=6))
def test_any_query_parses_or_is_a_4xx(query: dict[str, str]) -> None:
    try:
        opts = parse_log_options(MultiDict(query))
    except StatusError as err:
        assert err.code == 400 and err.message
        return
    for error in validate_log_options(opts):
        assert error.field in ("tailLines", "limitBytes", "sinceSeconds", "")


class _Pod:
    """What the kubelet server reads of a runner."""

    def __init__(self, containers: list[Any], simulated: str = "") -> None:
        self.namespace, self.name = "default", "p"
        self.pod: dict[str, Any] = {"spec": {"containers": [{"name": "main"}]}}
        self.containers = containers
        self.log_dir = ContainerLogDir(Path("/nonexistent"), "default", "p", "u")
        self.simulated_reason = simulated

    def exec_context(self, container: Any) -> tuple[list[str], dict[str, str]]:
        return [], {}


def _container(restarts: int, running: bool, last: bool) -> Container:
    c = Container({"name": "main"}, ["true"], {})
    c.restart_count = restarts
    c.proc = SimpleNamespace(returncode=None if running else 0) if running or last else None  # type: ignore[assignment]
    c.last_terminated = {"exitCode": 1} if last else None
    return c


@pytest.mark.parametrize(
    ("pod", "previous", "result"),
    [
        pytest.param(_Pod([_container(0, True, False)]), False, 0, id="current-first-run"),
        pytest.param(_Pod([_container(2, True, True)]), False, 2, id="current-third-run"),
        pytest.param(_Pod([_container(2, True, True)]), True, 1, id="previous"),
        pytest.param(
            _Pod([_container(0, True, False)]),
            True,
            'previous terminated container "main" in pod "p" not found',
            id="no-previous",
        ),
        pytest.param(
            _Pod([]),
            False,
            'container "main" in pod "p" is waiting to start: ContainerCreating',
            id="not-started",
        ),
        pytest.param(
            _Pod([], simulated="no program"),
            False,
            'container "main" in pod "p" is simulated by the local cluster (no program): it runs '
            "no process, so it has no logs",
            id="simulated",
        ),
    ],
)
def test_log_file_for(pod: _Pod, previous: bool, result: int | str) -> None:
    try:
        _container_found, run = log_file_for(pod, "main", previous)
        assert run == result
    except KubeletError as err:
        assert (err.code, err.message) == (400, result)
