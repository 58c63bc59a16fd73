"""Lifecycle handlers by table, in the host namespace (the fallback): exec, httpGet (HTTP and
HTTPS without certificate checks), tcpSocket, sleep and malformed handlers give None or the
error the kubelet would report; `kill_container` runs preStop before SIGTERM."""

from __future__ import annotations

import asyncio
import ssl
import sys
from pathlib import Path
from typing import Any

import pytest

from agones.localcluster.nodes.containers import Container
from agones.localcluster.nodes.lifecycle import kill_container, run_handler
from agones.localcluster.nodes.podrunner import KubeletConfig, PodRunner
from agones.pki import self_signed


class _Client:
    async def patch(self, *_a: Any, **_kw: Any) -> None:
        return None


def _runner() -> PodRunner:
    from types import SimpleNamespace

    kubelet = SimpleNamespace(
        config=KubeletConfig(kubeconfig="", api_port=0, use_netns=False),
        client=_Client(),
        processes=set(),
    )
    pod = {"metadata": {"name": "p", "namespace": "ns", "uid": "u"}, "spec": {}}
    return PodRunner(kubelet, pod, "127.0.0.1")  # type: ignore[arg-type]


async def _server(tls: bool, tmp: Path) -> tuple[asyncio.AbstractServer, int]:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        line = await reader.readline()
        code = 200 if b"/ok" in line else 500
        writer.write(f"HTTP/1.0 {code} X\r\n\r\n".encode())
        await writer.drain()
        writer.close()

    context = None
    if tls:
        pair = self_signed(["127.0.0.1"])
        (tmp / "c.pem").write_bytes(pair.cert_pem)
        (tmp / "k.pem").write_bytes(pair.key_pem)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(tmp / "c.pem", tmp / "k.pem")
    server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=context)
    return server, server.sockets[0].getsockname()[1]


@pytest.mark.parametrize(
    ("handler", "error"),
    [
        pytest.param({"exec": {"command": ["true"]}}, None, id="exec-ok"),
        pytest.param(
            {"exec": {"command": ["sh", "-c", "echo boom >&2; exit 3"]}},
            "exited with 3: boom",
            id="exec-fails",
        ),
        pytest.param({"exec": {"command": []}}, "exec handler has no command", id="exec-empty"),
        pytest.param(
            {"exec": {"command": ["/nonexistent-hook"]}}, "exited with", id="exec-missing"
        ),
        pytest.param({"httpGet": {"path": "/ok", "port": "PORT"}}, None, id="http-ok"),
        pytest.param({"httpGet": {"path": "/bad", "port": "PORT"}}, "status 500", id="http-500"),
        pytest.param(
            {"httpGet": {"path": "/ok", "port": "PORT", "scheme": "HTTPS"}}, None, id="https"
        ),
        pytest.param({"httpGet": {"path": "/ok", "port": 1}}, "status 0", id="http-refused"),
        pytest.param({"tcpSocket": {"port": "PORT"}}, None, id="tcp-ok"),
        pytest.param({"tcpSocket": {"port": 1}}, "dial tcp 127.0.0.1:1", id="tcp-refused"),
        pytest.param({"sleep": {"seconds": 0}}, None, id="sleep"),
        pytest.param({"sleep": {"seconds": -1}}, "invalid sleep seconds: -1", id="sleep-negative"),
        pytest.param({"sleep": {"seconds": "1"}}, "invalid sleep seconds: '1'", id="sleep-string"),
        pytest.param({}, "lifecycle handler names no action", id="empty"),
    ],
)
async def test_run_handler(tmp_path: Path, handler: dict[str, Any], error: str | None) -> None:
    tls = (handler.get("httpGet") or {}).get("scheme") == "HTTPS"
    server, port = await _server(tls, tmp_path)
    try:
        for kind in ("httpGet", "tcpSocket"):
            if (handler.get(kind) or {}).get("port") == "PORT":
                handler = {kind: {**handler[kind], "port": port}}
        runner = _runner()
        got = await run_handler(runner, Container({"name": "c"}, [], {}), handler, 5)
    finally:
        server.close()
    if error is None:
        assert got is None
    else:
        assert got is not None and error in got


async def test_pre_stop_runs_before_sigterm(tmp_path: Path) -> None:
    marker = tmp_path / "order"
    code = (
        "import signal, sys, time\n"
        f"def term(*_):\n    open({str(marker)!r}, 'a').write('sigterm\\n'); sys.exit(0)\n"
        "signal.signal(signal.SIGTERM, term)\n"
        f"open({str(marker)!r}, 'a').write('ready\\n')\n"
        "while True: time.sleep(0.05)"
    )
    runner = _runner()
    hook = {"exec": {"command": ["sh", "-c", f"echo prestop >> {marker}"]}}
    container = Container(
        {"name": "c", "lifecycle": {"preStop": hook}}, [sys.executable, "-c", code], {}
    )
    await runner._launch(container)
    for _ in range(600):
        if marker.exists():
            break
        await asyncio.sleep(0.05)
    await asyncio.wait_for(kill_container(runner, container, 10), 30)
    assert marker.read_text() == "ready\nprestop\nsigterm\n"
    assert container.proc is not None and container.proc.returncode == 0
