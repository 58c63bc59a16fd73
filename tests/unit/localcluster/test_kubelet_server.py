"""The kubelet HTTP server of a node (`nodes/kubeletserver.py`) over real HTTP: a container's log
runs with the kubelet's wording, and malformed paths and queries answer 4xx (property-based)."""

from __future__ import annotations

import asyncio
import threading
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agones.localcluster.nodes.containers import Container
from agones.localcluster.nodes.kubeletserver import KubeletServer
from agones.localcluster.nodes.logs import ContainerLogDir, format_record


class _Pod:
    def __init__(self, root: Path) -> None:
        self.namespace, self.name = "default", "p"
        self.pod: dict[str, Any] = {"spec": {"containers": [{"name": "main"}, {"name": "idle"}]}}
        main = Container({"name": "main"}, ["true"], {})
        main.proc = SimpleNamespace(returncode=None)  # type: ignore[assignment]
        main.restart_count, main.last_terminated = 1, {"exitCode": 1}
        self.containers = [main]
        self.log_dir = ContainerLogDir(root, "default", "p", "u")
        self.simulated_reason = ""
        now = datetime.now(UTC)
        for run, text in ((0, b"first"), (1, b"second")):
            path = self.log_dir.file("main", run)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(format_record(now, "stdout", text, partial=False))

    def exec_context(self, container: Container) -> tuple[list[str], dict[str, str]]:
        return [], {}


@pytest.fixture(scope="module")
def kubelet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    pod = _Pod(tmp_path_factory.mktemp("logs"))
    loop = asyncio.new_event_loop()
    server = KubeletServer("n", "127.0.0.1", lambda: [pod])
    port = loop.run_until_complete(server.start())
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{port}"
    asyncio.run_coroutine_threadsafe(server.stop(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(10)


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status, resp.read().decode()
    except urllib.error.HTTPError as err:
        return err.code, err.read().decode()


@pytest.mark.parametrize(
    ("path", "status", "body"),
    [
        pytest.param("/containerLogs/default/p/main", 200, "second\n", id="current-run"),
        pytest.param("/containerLogs/default/p/main?previous=true", 200, "first\n", id="previous"),
        pytest.param("/containerLogs/default/q/main", 404, 'pod "q" does not exist\n', id="pod"),
        pytest.param(
            "/containerLogs/default/p/nope",
            404,
            'container "nope" not found in pod "p"\n',
            id="container",
        ),
        pytest.param(
            "/containerLogs/default/p/idle",
            400,
            'container "idle" in pod "p" is waiting to start: ContainerCreating\n',
            id="not-started",
        ),
        pytest.param(
            "/containerLogs/default/p/main?tailLines=x",
            400,
            'strconv.ParseInt: parsing "x": invalid syntax\n',
            id="bad-query",
        ),
    ],
)
def test_container_logs(kubelet: str, path: str, status: int, body: str) -> None:
    assert get(kubelet + path) == (status, body)


SEGMENT = st.text(st.characters(codec="utf-8", exclude_characters="/?#"), min_size=1, max_size=12)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    kind=st.sampled_from(["containerLogs", "exec", "other"]),
    parts=st.lists(SEGMENT, min_size=0, max_size=4),
    query=st.dictionaries(
        st.sampled_from(
            ["tailLines", "sinceSeconds", "sinceTime", "limitBytes", "previous", "command"]
        ),
        st.text(max_size=10),
        max_size=4,
    ),
)
def test_malformed_requests_answer_4xx(
    kubelet: str, kind: str, parts: list[str], query: dict[str, str]
) -> None:
    path = "/".join(urllib.parse.quote(p, safe="") for p in [kind, *parts])
    status, _body = get(f"{kubelet}/{path}?{urllib.parse.urlencode(query)}")
    assert 200 <= status < 500, (path, query, status)


async def test_requests_without_the_api_servers_token_are_refused(tmp_path: Path) -> None:
    import aiohttp

    pod = _Pod(tmp_path)
    server = KubeletServer("n", "127.0.0.1", lambda: [pod], token="s3cret")
    port = await server.start()
    url = f"http://127.0.0.1:{port}/containerLogs/default/p/main"
    try:
        async with aiohttp.ClientSession() as session:
            for headers, status in (
                ({}, 401),
                ({"Authorization": "Bearer wrong"}, 401),
                ({"Authorization": "Bearer s3cret"}, 200),
            ):
                async with session.get(url, headers=headers) as resp:
                    assert resp.status == status, headers
    finally:
        await server.stop()
