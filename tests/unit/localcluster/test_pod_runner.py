"""Kubelet pod lifecycle: a pod deleted while it starts leaves no process behind, its status
keeps its start and transition times, and the final delete is retried."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from agones.client.errors import ApiError
from agones.informers import SharedInformerFactory
from agones.localcluster.nodes.kubelet import Kubelet
from agones.localcluster.nodes.podrunner import KubeletConfig, PodRunner


class _Client:
    def __init__(self) -> None:
        self.patches: list[dict[str, Any]] = []

    async def patch(self, _res: Any, _name: str, body: dict[str, Any], **_kw: Any) -> None:
        self.patches.append(body)


def _runner() -> tuple[PodRunner, Any]:
    kubelet = SimpleNamespace(
        config=KubeletConfig(kubeconfig="", api_port=0, use_netns=False),
        client=_Client(),
        processes=set(),
    )
    sleeper = [sys.executable, "-c", "import time; time.sleep(60)"]
    pod = {
        "metadata": {"name": "p", "namespace": "default", "uid": "u1"},
        "spec": {
            "terminationGracePeriodSeconds": 1,
            "containers": [{"name": "a", "command": sleeper}, {"name": "b", "command": sleeper}],
        },
    }
    return PodRunner(kubelet, pod, "127.0.0.1"), kubelet  # type: ignore[arg-type]


async def test_terminate_during_start_leaves_no_process() -> None:
    runner, kubelet = _runner()
    runner.start_task = asyncio.create_task(runner.start())
    await asyncio.wait_for(runner.terminate(1), 10)
    await asyncio.wait_for(runner.start_task, 10)
    alive = [c.name for c in runner.containers if c.proc and c.proc.returncode is None]
    assert alive == []
    assert kubelet.processes == set()


async def test_terminate_after_start_stops_every_container() -> None:
    runner, kubelet = _runner()
    runner.start_task = asyncio.create_task(runner.start())
    await asyncio.wait_for(runner.start_task, 10)
    assert [c.proc is not None for c in runner.containers] == [True, True]
    await asyncio.wait_for(runner.terminate(1), 10)
    assert [c.proc.returncode is not None for c in runner.containers if c.proc] == [True, True]
    assert kubelet.processes == set()


async def test_start_time_and_transitions_stay_put_while_the_status_holds() -> None:
    runner, kubelet = _runner()
    runner.start_task = asyncio.create_task(runner.start())
    await asyncio.wait_for(runner.start_task, 10)
    try:
        first = kubelet.client.patches[-1]["status"]
        runner._start_time = "2000-01-01T00:00:00Z"  # what the first write recorded, made old
        runner._transitions = {
            c["type"]: (c["status"], "2000-01-01T00:00:00Z") for c in first["conditions"]
        }
        runner._phase = "Failed"  # not ready any more: Ready and ContainersReady transition
        await runner.write_status()
        second = kubelet.client.patches[-1]["status"]
        assert second["startTime"] == "2000-01-01T00:00:00Z"
        times = {c["type"]: c["lastTransitionTime"] for c in second["conditions"]}
        assert times["PodScheduled"] == times["Initialized"] == "2000-01-01T00:00:00Z"
        assert times["Ready"] != "2000-01-01T00:00:00Z"
        assert times["ContainersReady"] != "2000-01-01T00:00:00Z"
    finally:
        await asyncio.wait_for(runner.terminate(1), 10)


class _FlakyDeletes:
    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.deletes = 0

    async def delete(self, *_args: Any, **_kw: Any) -> None:
        self.deletes += 1
        if self.deletes <= self.failures:
            raise ApiError(500, {"reason": "InternalError", "message": "injected failure"})


async def test_final_pod_delete_is_retried_until_it_lands() -> None:
    client: Any = _FlakyDeletes(failures=1)
    kubelet = Kubelet(
        client,
        SharedInformerFactory(client),
        KubeletConfig(kubeconfig="", api_port=0, node_addresses={"node-1": "127.0.0.2"}),
    )
    pod = {"metadata": {"name": "p", "namespace": "default", "uid": "u1"}, "spec": {}}
    kubelet._finishing.add("u1")
    await asyncio.wait_for(kubelet._finish(pod, None), 10)
    assert client.deletes == 2
    assert kubelet._finishing == set()


_MAIN = """
import os, signal, sys, time
d = sys.argv[1]
def term(*_):
    open(os.path.join(d, "main-terminating"), "w").close()
    while not os.path.exists(os.path.join(d, "release")):
        time.sleep(0.02)
    open(os.path.join(d, "main-exited"), "w").close()
    sys.exit(0)
signal.signal(signal.SIGTERM, term)
open(os.path.join(d, "main-ready"), "w").close()
while True:
    time.sleep(1)
"""

_SIDECAR = """
import os, signal, sys, time
d = sys.argv[1]
def term(*_):
    seen = "main-exited" if os.path.exists(os.path.join(d, "main-exited")) else "main-running"
    open(os.path.join(d, "sidecar-term"), "w").write(seen)
    sys.exit(0)
signal.signal(signal.SIGTERM, term)
open(os.path.join(d, "sidecar-ready"), "w").close()
while True:
    time.sleep(1)
"""


async def test_native_sidecar_is_stopped_only_after_the_app_containers_exit(
    tmp_path: Path,
) -> None:
    kubelet = SimpleNamespace(
        config=KubeletConfig(kubeconfig="", api_port=0, use_netns=False),
        client=_Client(),
        processes=set(),
    )
    d = str(tmp_path)
    pod = {
        "metadata": {"name": "p", "namespace": "default", "uid": "u1"},
        "spec": {
            "terminationGracePeriodSeconds": 60,
            "initContainers": [
                {
                    "name": "sidecar",
                    "restartPolicy": "Always",
                    "command": [sys.executable, "-c", _SIDECAR, d],
                }
            ],
            "containers": [{"name": "game", "command": [sys.executable, "-c", _MAIN, d]}],
        },
    }
    runner = PodRunner(kubelet, pod, "127.0.0.1")  # type: ignore[arg-type]
    await asyncio.wait_for(runner.start(), 30)
    await _until(
        lambda: (tmp_path / "main-ready").exists() and (tmp_path / "sidecar-ready").exists()
    )
    stopping = asyncio.create_task(runner.terminate(60))
    await _until(lambda: (tmp_path / "main-terminating").exists())
    (tmp_path / "release").touch()
    await asyncio.wait_for(stopping, 30)
    assert (tmp_path / "sidecar-term").read_text() == "main-exited"
    codes = {c.name: c.proc.returncode for c in runner.containers if c.proc}
    assert codes == {"sidecar": 0, "game": 0}  # both by their own SIGTERM handler, no SIGKILL


async def _until(condition: Any, timeout: float = 30) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)
