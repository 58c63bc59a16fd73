"""The order a process pod's containers start in, and its init containers (the kubelet's
`SyncPod` with `computeInitContainerActions`).

`configure_containers(runner, command)` gives every container its argv and env first; one that
cannot be made (a missing ConfigMap, Secret or key: `envvars.ContainerConfigError`) waits with
reason `CreateContainerConfigError` and the kubelet's message, and the whole pod is retried with
the sources read again (1 s, doubling to 10 s) until it can start or is deleted.

`start_in_order(runner)` then walks `spec.initContainers` in order: a regular init container runs
to completion before the next one starts; one that fails is restarted per the pod's
`restartPolicy` (Always and OnFailure: after a back-off of 1 s doubling to `MAX_BACKOFF`, its state
`waiting: CrashLoopBackOff` with `lastState.terminated`, so kubectl shows `Init:Error` then
`Init:CrashLoopBackOff`; Never: the pod is Failed). A native sidecar (`restartPolicy: Always`)
starts at its place and keeps running beside the rest. Until the last regular init container has
succeeded the pod is Pending with `Initialized=False`, the containers not run yet wait with reason
`PodInitializing` (kubectl: `Init:N/M`); then the app containers start in order, each after the
`postStart` hook of the one before (`lifecycle.post_start`), and the pod is Running.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any, Protocol

import structlog

from ..apiserver.meta import now_rfc3339
from .containers import Container
from .envvars import ContainerConfigError
from .lifecycle import post_start
from .podevents import crash_loop_back_off

log = structlog.get_logger("agones.localcluster.nodes.initcontainers")

MAX_BACKOFF = 10.0
"""Longest wait between two restarts of a failing container (the kubelet's is 5 minutes; a local
cluster is a development tool)."""
PENDING = {"reason": "PodInitializing"}


class Runner(Protocol):
    """What this module uses of a `podrunner.PodRunner`."""

    name: str
    namespace: str
    uid: str
    pod: dict[str, Any]
    containers: list[Container]
    terminating: bool
    initialized: bool
    stopped: asyncio.Event
    _phase: str
    _sources: dict[tuple[str, str], dict[str, Any] | None]

    async def write_status(self) -> None: ...
    async def fetch_sources(self) -> dict[tuple[str, str], dict[str, Any] | None]: ...
    async def _launch(self, container: Container) -> None: ...
    def start_supervision(self, container: Container) -> None: ...
    def forget_process(self, pid: int) -> None: ...


def terminated_state(container: Container, code: int) -> dict[str, Any]:
    """`state.terminated` of a container whose main process ended with `code` (negative: the
    signal that ended it, reported as 128 + signal, as a runtime does)."""
    finished: dict[str, Any] = {
        "exitCode": code if code >= 0 else 128 - code,
        "reason": "Completed" if code == 0 else "Error",
        "startedAt": container.started_at,
        "finishedAt": now_rfc3339(),
    }
    if code < 0:
        finished["signal"] = -code
    if container.container_id:
        finished["containerID"] = container.container_id
    return finished


class Stoppable(Protocol):
    terminating: bool
    stopped: asyncio.Event


async def pause(runner: Stoppable, seconds: float) -> bool:
    """Wait `seconds` or until the pod is being deleted; True when it is."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(runner.stopped.wait(), seconds)
    return runner.terminating


async def configure_containers(
    runner: Runner, command: Callable[[dict[str, Any]], tuple[list[str], dict[str, str]]]
) -> bool:
    """Give each container its argv and env (see the module docstring); False when the pod was
    deleted first."""
    delay = 1.0
    while not runner.terminating:
        failed = False
        for c in runner.containers:
            try:
                c.argv, c.env = command(c.spec)
                c.waiting = None
            except ContainerConfigError as err:
                c.waiting = {"reason": err.reason, "message": str(err)}
                failed = True
        if not failed:
            return True
        log.info("container config not ready", pod=f"{runner.namespace}/{runner.name}")
        await runner.write_status()
        if await pause(runner, delay):
            return False
        delay = min(delay * 2, MAX_BACKOFF)
        runner._sources = await runner.fetch_sources()
    return False


async def run_to_completion(runner: Runner, container: Container) -> bool:
    """Run an init container until it exits 0 (restarting it per restartPolicy); False when
    the pod failed (restartPolicy Never) or is being deleted."""
    policy = (runner.pod.get("spec") or {}).get("restartPolicy") or "Always"
    backoff = 1.0
    while not runner.terminating:
        container.waiting = None
        await runner._launch(container)
        await runner.write_status()
        proc = container.proc
        assert proc is not None
        code = await proc.wait()
        runner.forget_process(proc.pid)
        container.terminated = terminated_state(container, code)
        if code == 0:
            await runner.write_status()
            return True
        if runner.terminating:
            return False
        if policy == "Never":
            runner._phase = "Failed"
            await runner.write_status()
            return False
        await runner.write_status()
        container.waiting = crash_loop_back_off(runner.pod, container.name, backoff)
        container.last_terminated = container.terminated
        await runner.write_status()
        if await pause(runner, backoff):
            return False
        backoff = min(backoff * 2, MAX_BACKOFF)
        container.restart_count += 1
    return False


async def start_in_order(runner: Runner) -> None:
    """Init containers, then the app containers (see the module docstring)."""
    if not runner.initialized:
        for c in runner.containers:
            if not (c.init_container and c.native_sidecar):
                c.waiting = dict(PENDING)
        await runner.write_status()
    for container in runner.containers:
        if runner.terminating:
            return
        if container.init_container and not container.native_sidecar:
            if not await run_to_completion(runner, container):
                return
            continue
        if not container.init_container and not runner.initialized:
            runner.initialized = True
            for c in runner.containers:
                if c.waiting == PENDING:
                    c.waiting = None
        container.waiting = None
        await runner._launch(container)
        runner.start_supervision(container)
        if container.native_sidecar:
            await runner.write_status()
        await post_start(runner, container)  # type: ignore[arg-type]
    runner.initialized = True
    if runner._phase == "Pending":
        runner._phase = "Running"
    await runner.write_status()
