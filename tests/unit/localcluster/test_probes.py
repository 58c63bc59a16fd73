"""Container probes (`nodes/probes.py`) against real local endpoints: the handlers' results and
kubelet-worded failures, and a worker's thresholds."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiohttp import web

from agones.httpserver import serve_app
from agones.localcluster.nodes.containers import Container
from agones.localcluster.nodes.probes import (
    ProbeTiming,
    ProbeWorker,
    exec_probe,
    http_probe,
    tcp_probe,
)


class HostTarget:
    host = "127.0.0.1"

    async def connect(self, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        return await asyncio.open_connection(self.host, port)

    def exec_context(self, container: Container) -> tuple[list[str], dict[str, str]]:
        return [], {"PATH": "/usr/bin:/bin", **container.env}


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
async def server() -> AsyncIterator[dict[str, Any]]:
    state = {"code": 200}

    async def health(_request: web.Request) -> web.Response:
        return web.Response(status=state["code"])

    app = web.Application()
    app.router.add_get("/healthz", health)
    runner, port = await serve_app(app, "127.0.0.1", 0)
    state["port"] = port
    yield state
    await runner.cleanup()


async def test_http_probe(server: dict[str, Any]) -> None:
    target, port = HostTarget(), server["port"]
    assert (await http_probe(target, port, {"path": "/healthz"}, 1)).ok
    server["code"] = 503
    result = await http_probe(target, port, {"path": "/healthz"}, 1)
    assert (result.ok, result.output) == (False, "HTTP probe failed with statuscode: 503")
    gone = closed_port()
    result = await http_probe(target, gone, {"path": "/x"}, 1)
    assert result.output == (
        f'Get "http://127.0.0.1:{gone}/x": dial tcp 127.0.0.1:{gone}: connect: connection refused'
    )


async def test_tcp_probe(server: dict[str, Any]) -> None:
    assert (await tcp_probe(HostTarget(), server["port"], 1)).ok
    gone = closed_port()
    result = await tcp_probe(HostTarget(), gone, 1)
    assert result.output == f"dial tcp 127.0.0.1:{gone}: connect: connection refused"


@pytest.mark.parametrize(
    ("command", "ok", "output"),
    [
        pytest.param(["sh", "-c", "echo fine"], True, "fine\n", id="success"),
        pytest.param(["sh", "-c", "echo broken >&2; exit 1"], False, "broken\n", id="failure"),
        pytest.param(["sleep", "5"], False, 'command "sleep 5" timed out', id="timeout"),
        pytest.param(["/no/such/program"], False, "No such file", id="missing"),
    ],
)
async def test_exec_probe(command: list[str], ok: bool, output: str) -> None:
    result = await exec_probe([], command, {"PATH": "/usr/bin:/bin"}, 0.5)
    assert result.ok is ok and output in result.output


def test_timing_defaults_and_malformed_values() -> None:
    assert ProbeTiming.of({}) == ProbeTiming(0.0, 1.0, 10.0, 1, 3)
    assert ProbeTiming.of({"periodSeconds": -1, "timeoutSeconds": "x"}) == ProbeTiming()
    assert ProbeTiming.of({"failureThreshold": 1, "periodSeconds": 2}).period == 2.0


async def test_worker_flips_after_thresholds(server: dict[str, Any]) -> None:
    proc = await asyncio.create_subprocess_exec("sleep", "30")
    container = Container({"name": "c"}, ["sleep"], {})
    container.proc, container.container_id = proc, "containerd://1"
    probe = {
        "httpGet": {"port": server["port"], "path": "/healthz"},
        "periodSeconds": 0.02,
        "failureThreshold": 3,
        "successThreshold": 2,
    }
    results: list[bool] = []
    failures: list[str] = []

    async def on_result(_kind: str, ok: bool) -> None:
        results.append(ok)

    worker = ProbeWorker(
        container, "Readiness", probe, HostTarget, lambda _k, m: failures.append(m), on_result
    )
    stop = asyncio.Event()
    task = asyncio.create_task(worker.run(stop.is_set))
    try:
        await asyncio.wait_for(_until(lambda: results == [True]), 5)
        server["code"] = 500
        await asyncio.wait_for(_until(lambda: results == [True, False]), 5)
        assert len(failures) >= 3  # one Unhealthy per failed probe, the flip at the third
        assert failures[0] == "Readiness probe failed: HTTP probe failed with statuscode: 500"
        server["code"] = 200
        await asyncio.wait_for(_until(lambda: results == [True, False, True]), 5)
    finally:
        stop.set()
        proc.kill()
        await proc.wait()
        await asyncio.wait_for(task, 5)


async def _until(condition: Any) -> None:
    while not condition():
        await asyncio.sleep(0.01)
