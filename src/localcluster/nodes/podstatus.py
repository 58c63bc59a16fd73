"""The status a pod's kubelet writes (`PodRunner.write_status`): `pod_status(runner)`.

Phase, host and pod IPs, `startTime` (set at the first write, then kept), the conditions
`PodScheduled`, `Initialized`, `ContainersReady` and `Ready` (each `lastTransitionTime` moves only
when its status does), and the container statuses: a process pod's from its containers
(`Container.status`), a simulated pod's all running and ready since now.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..apiserver.meta import now_rfc3339
from .containers import Container
from .simulated import SimulatedGame


class Runner(Protocol):
    """What this module uses of a `podrunner.PodRunner`."""

    pod: dict[str, Any]
    containers: list[Container]
    sim: SimulatedGame | None
    initialized: bool
    node_ip: str
    pod_ip: str
    _phase: str
    _start_time: str
    _transitions: dict[str, tuple[str, str]]


def _simulated(c: dict[str, Any], stamp: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": c["name"],
        "image": c.get("image", ""),
        "imageID": "",
        "ready": True,
        "started": True,
        "restartCount": 0,
        "state": stamp,
    }


def pod_status(runner: Runner) -> dict[str, Any]:
    """The pod's `status` now; records its start time and its conditions' transitions."""
    spec = runner.pod.get("spec") or {}
    init_names = {c["name"] for c in spec.get("initContainers") or []}
    statuses = [c.status() for c in runner.containers if c.name not in init_names]
    init_statuses = [c.status() for c in runner.containers if c.name in init_names]
    if runner.sim is not None:
        stamp = {"running": {"startedAt": now_rfc3339()}}
        statuses = [_simulated(c, stamp) for c in spec.get("containers") or []]
        init_statuses = [_simulated(c, stamp) for c in spec.get("initContainers") or []]
    ready = all(s["ready"] for s in statuses) and runner._phase == "Running"
    t = now_rfc3339()
    runner._start_time = runner._start_time or t
    conditions = []
    for kind, value in (
        ("PodScheduled", "True"),
        ("Initialized", str(runner.initialized)),
        ("ContainersReady", str(ready)),
        ("Ready", str(ready)),
    ):
        was, since = runner._transitions.get(kind, ("", t))
        since = since if was == value else t
        runner._transitions[kind] = (value, since)
        conditions.append({"type": kind, "status": value, "lastTransitionTime": since})
    status: dict[str, Any] = {
        "phase": runner._phase,
        "hostIP": runner.node_ip,
        "hostIPs": [{"ip": runner.node_ip}],
        "podIP": runner.pod_ip,
        "podIPs": [{"ip": runner.pod_ip}],
        "startTime": runner._start_time,
        "conditions": conditions,
        "containerStatuses": statuses,
    }
    if init_statuses:
        status["initContainerStatuses"] = init_statuses
    return status
