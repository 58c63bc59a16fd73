"""Children of the local cluster start without fork(): no atfork handler (grpc's included) runs,
many pods start cleanly while gRPC is busy in the same process, and a child still dies with the
process that started it."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import grpc
import pytest

from agones.featuregates import FeatureGates
from agones.localcluster.nodes.logs import ReadOptions, read_log
from agones.localcluster.nodes.netns import netns_supported
from agones.localcluster.nodes.podrunner import KubeletConfig, PodRunner
from agones.localcluster.nodes.spawn import parent_death_prefix, start_process
from agones.sdk.proto import sdk_pb2, sdk_pb2_grpc
from agones.sdkserver.localsdk import LocalSDKServer
from agones.sdkserver.serve import serve_sdk
from tests.waiting import wait_for

_FORKS: list[int] = []
os.register_at_fork(before=lambda: _FORKS.append(1))
"""CPython runs these hooks around every real fork() (and so would grpc's pthread_atfork
handlers run); a vfork/posix_spawn start runs none."""


class _Client:
    async def patch(self, *_args: Any, **_kw: Any) -> None:
        return None


def _runner(name: str, log_dir: Path, use_netns: bool, argv: list[str]) -> PodRunner:
    kubelet = SimpleNamespace(
        config=KubeletConfig(kubeconfig="", api_port=1, use_netns=use_netns, log_dir=str(log_dir)),
        client=_Client(),
        processes=set(),
    )
    pod = {
        "metadata": {"name": name, "namespace": "default", "uid": name},
        "spec": {
            "restartPolicy": "Never",
            "terminationGracePeriodSeconds": 1,
            "containers": [{"name": "main", "command": argv}],
        },
    }
    return PodRunner(kubelet, pod, "127.0.0.1")  # type: ignore[arg-type]


async def test_start_process_does_not_fork() -> None:
    before = len(_FORKS)
    proc = await start_process(["true"], stdin=asyncio.subprocess.DEVNULL)
    assert await proc.wait() == 0
    assert len(_FORKS) == before


async def test_start_process_refuses_a_preexec_fn() -> None:
    with pytest.raises(ValueError, match="preexec_fn"):
        await start_process(["true"], preexec_fn=lambda: None)


def test_a_child_dies_with_the_process_that_started_it(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    code = (
        "import asyncio, sys, time\n"
        "from agones.localcluster.nodes.spawn import start_process\n"
        "async def main():\n"
        "    proc = await start_process(['sleep', '300'])\n"
        f"    open({str(pid_file)!r}, 'w').write(str(proc.pid))\n"
        "    time.sleep(300)\n"
        "asyncio.run(main())\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", code])
    try:
        wait_for(lambda: pid_file.exists() and pid_file.read_text(), 30, what="the child started")
        child = int(pid_file.read_text())
        parent.kill()
        parent.wait(30)
        wait_for(lambda: not _alive(child), 30, what="the child gone with its parent")
    finally:
        parent.kill()
        parent.wait(30)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][:1] != "Z"
    except FileNotFoundError:
        return False


def test_parent_death_prefix_runs_the_program() -> None:
    out = subprocess.run([*parent_death_prefix(), "echo", "hi"], capture_output=True, timeout=30)
    assert out.stdout == b"hi\n"


@pytest.fixture
def busy_grpc() -> Iterator[int]:
    """An SDK server on its own loop thread, and four threads calling it as fast as they can."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    serving = asyncio.run_coroutine_threadsafe(
        serve_sdk(LocalSDKServer(FeatureGates()), address="127.0.0.1", grpc_port=0, http_port=0),
        loop,
    ).result(30)
    stop = threading.Event()
    calls: list[int] = []

    def hammer() -> None:
        with grpc.insecure_channel(f"127.0.0.1:{serving.grpc_port}") as channel:
            stub = sdk_pb2_grpc.SDKStub(channel)
            while not stop.is_set():
                stub.GetGameServer(sdk_pb2.Empty(), timeout=10)
                calls.append(1)

    clients = [threading.Thread(target=hammer, daemon=True) for _ in range(4)]
    for client in clients:
        client.start()
    wait_for(lambda: len(calls) > 20, 30, what="gRPC busy")
    try:
        yield len(calls)
    finally:
        stop.set()
        for client in clients:
            client.join(30)
        asyncio.run_coroutine_threadsafe(serving.stop(0), loop).result(30)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        loop.close()


@pytest.mark.timeout(180)
@pytest.mark.parametrize(
    "use_netns",
    [
        pytest.param(False, id="host-namespace"),
        pytest.param(
            True,
            id="netns",
            marks=pytest.mark.skipif(not netns_supported(), reason="no network namespaces"),
        ),
    ],
)
def test_many_pods_start_while_grpc_is_busy(
    busy_grpc: int, tmp_path: Path, use_netns: bool
) -> None:
    """Pods launched from a thread running an event loop, beside busy gRPC threads: each
    container runs its program to the end, none dies before exec, and nothing forks."""
    count = 30 if use_netns else 60
    before = len(_FORKS)

    async def launch_all() -> list[PodRunner]:
        argv = ["sh", "-c", "echo started"]
        runners = [_runner(f"p{i}", tmp_path, use_netns, argv) for i in range(count)]
        await asyncio.gather(*(r.start() for r in runners))
        for runner in runners:
            proc = runner.containers[0].proc
            assert proc is not None
            await asyncio.wait_for(proc.wait(), 60)
        await asyncio.gather(*(r.terminate(1) for r in runners))
        return runners

    result: list[list[PodRunner]] = []
    launcher = threading.Thread(target=lambda: result.append(asyncio.run(launch_all())))
    launcher.start()
    launcher.join(170)
    assert result, "the launcher thread did not finish"
    codes = [r.containers[0].proc.returncode for r in result[0] if r.containers[0].proc]
    assert codes == [0] * count
    for i in range(count):
        log = result[0][i].log_dir.file("main", 0).read_bytes()
        assert read_log(log, ReadOptions()) == b"started\n", log
    assert len(_FORKS) == before
