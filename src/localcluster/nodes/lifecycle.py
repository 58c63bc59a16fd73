"""Container lifecycle hooks and the stop of one container, as the kubelet runs them
(`pkg/kubelet/lifecycle` and `kuberuntime.killContainer`).

* `run_handler(runner, container, handler, timeout)` runs one `LifecycleHandler`: `exec` (the
  command inside the container: `nsenter` into its main process's namespaces, with the container's
  env; failed when it exits non-zero), `httpGet` (`host` defaults to the pod IP; `scheme: HTTPS`
  without checking the certificate, as the kubelet; 2xx/3xx succeed),
  `sleep` (`seconds`), `tcpSocket` (a connect). It returns an error message, or None.
* `post_start(runner, container)` runs `lifecycle.postStart` right after the container started;
  when it fails, the container is killed (`FailedPostStartHook`) and restarted per policy.
* `kill_container(runner, container, grace)`: `lifecycle.preStop` first, bounded by the grace
  period; then SIGTERM to the container's main process with what is left of the grace period
  (at least `MIN_GRACE`, as the kubelet gives); SIGKILL to every process of the container when
  that is over. A shell that is pid 1 of the container and does not handle SIGTERM ignores it (the
  kernel drops a default-action signal to a namespace's init): `sh -c 'prog'` is killed at the
  grace period, `sh -c 'exec prog'` gets the signal in `prog`, as on Kubernetes. Without PID
  namespaces (the fallback) the shell dies of it and its children are killed with the group.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import ssl
from typing import Any, Protocol

import structlog

from .containers import Container, probe_port
from .mounts import forked_main_pid
from .netns import PodNetwork, http_status
from .spawn import start_process

log = structlog.get_logger("agones.localcluster.nodes.lifecycle")

MIN_GRACE = 2.0
"""Seconds of SIGTERM a container gets after its preStop hook, however long the hook took
(the kubelet's `minimumGracePeriodInSeconds`)."""
KILL_WAIT = 5.0


class Runner(Protocol):
    """What this module uses of a `podrunner.PodRunner`."""

    name: str
    pod_ip: str
    net: PodNetwork | None
    terminating: bool

    def process_env(self, container: Container) -> dict[str, str]: ...
    def _signal(self, container: Container, sig: int) -> None: ...


def exec_prefix(net: PodNetwork | None, container: Container, target: int | None) -> list[str]:
    """The argv prefix that runs a command inside the container: `nsenter` into its main
    process's namespaces (host pid `target`) when it has its own PID and mount namespaces, else
    into the pod's network namespace, else nothing (the host)."""
    if container.pid_namespace and target is not None:
        return [
            "nsenter",
            f"--target={target}",
            "--mount",
            "--uts",
            "--ipc",
            "--net",
            "--pid",
            "--wd",
            "--",
        ]
    if net is not None:
        return net.exec_prefix()
    return []


async def exec_argv(runner: Runner, container: Container, command: list[str]) -> list[str]:
    """`command` run inside the container (`exec_prefix`), once its main process has forked."""
    proc = container.proc
    target = None
    if container.pid_namespace and proc is not None:
        target = await forked_main_pid(proc.pid)
    return [*exec_prefix(runner.net, container, target), *command]


async def _exec(
    runner: Runner, container: Container, command: list[str], timeout: float
) -> str | None:
    if not command:
        return "exec handler has no command"
    try:
        proc = await start_process(
            await exec_argv(runner, container, [str(c) for c in command]),
            env=runner.process_env(container),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
    except OSError as err:
        return f"exec {command[0]}: {err}"
    try:
        _, stderr = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
        return f"command {command!r} timed out"
    if proc.returncode:
        text = (stderr or b"").decode(errors="replace").strip()
        return f"command {command!r} exited with {proc.returncode}: {text}"
    return None


async def _tcp(runner: Runner, port: int, host: str, timeout: float) -> str | None:
    try:
        if runner.net is not None and host == runner.pod_ip:
            sock = await asyncio.wait_for(runner.net.connect_tcp(port), timeout)
            sock.close()
        else:
            _, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout)
            writer.close()
    except (OSError, TimeoutError) as err:
        return f"dial tcp {host}:{port}: {err}"
    return None


async def _http_get(
    runner: Runner, host: str, port: int, path: str, timeout: float, tls: bool
) -> int:
    """An HTTP(S) GET as the kubelet makes it for hooks: over TLS the certificate is not
    checked. Its status, or 0 when nothing answered."""
    context: ssl.SSLContext | None = None
    if tls:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    try:
        if runner.net is not None and host == runner.pod_ip:
            sock = await asyncio.wait_for(runner.net.connect_tcp(port), timeout)
            hostname = host if tls else None
            connecting = asyncio.open_connection(sock=sock, ssl=context, server_hostname=hostname)
        else:
            connecting = asyncio.open_connection(host, port, ssl=context)
        reader, writer = await asyncio.wait_for(connecting, timeout)
    except (OSError, TimeoutError):
        return 0
    return await http_status(reader, writer, path, timeout)


async def run_handler(
    runner: Runner, container: Container, handler: dict[str, Any], timeout: float
) -> str | None:
    """Run one lifecycle handler (see the module docstring); its error, or None."""
    if isinstance(handler.get("exec"), dict):
        return await _exec(runner, container, list(handler["exec"].get("command") or []), timeout)
    if isinstance(handler.get("httpGet"), dict):
        http = handler["httpGet"]
        port = probe_port(container.spec, http)
        host = str(http.get("host") or runner.pod_ip)
        path = str(http.get("path") or "/")
        tls = str(http.get("scheme") or "HTTP").upper() == "HTTPS"
        code = await _http_get(runner, host, port, path, timeout, tls)
        return None if 200 <= code < 400 else f"HTTP GET {host}:{port}{path}: status {code}"
    if isinstance(handler.get("tcpSocket"), dict):
        tcp = handler["tcpSocket"]
        port = probe_port(container.spec, tcp)
        return await _tcp(runner, port, str(tcp.get("host") or runner.pod_ip), timeout)
    if isinstance(handler.get("sleep"), dict):
        seconds = handler["sleep"].get("seconds")
        if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or seconds < 0:
            return f"invalid sleep seconds: {seconds!r}"
        await asyncio.sleep(min(float(seconds), timeout))
        return None
    return "lifecycle handler names no action"


def _hook(container: Container, name: str) -> dict[str, Any] | None:
    lifecycle = container.spec.get("lifecycle")
    hook = lifecycle.get(name) if isinstance(lifecycle, dict) else None
    return hook if isinstance(hook, dict) else None


def _grace(runner: Any) -> float:
    value = (runner.pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 30.0


async def post_start(runner: Runner, container: Container) -> None:
    """Run the container's postStart hook; kill the container when it fails."""
    hook = _hook(container, "postStart")
    if hook is None:
        return
    error = await run_handler(runner, container, hook, _grace(runner))
    if error is not None and not runner.terminating:
        log.warning("FailedPostStartHook", pod=runner.name, container=container.name, error=error)
        await kill_container(runner, container, _grace(runner))


async def kill_container(runner: Runner, container: Container, grace: float) -> None:
    """preStop, SIGTERM, SIGKILL at the grace period (see the module docstring)."""
    proc = container.proc
    if proc is None or proc.returncode is not None:
        return
    loop = asyncio.get_running_loop()
    start = loop.time()
    hook = _hook(container, "preStop")
    if hook is not None:
        try:
            error = await asyncio.wait_for(
                run_handler(runner, container, hook, max(grace, 0.0)), max(grace, 0.0)
            )
        except TimeoutError:
            error = f"preStop hook did not finish in {grace:g}s"
        if error is not None:
            log.warning("FailedPreStopHook", pod=runner.name, container=container.name, error=error)
    left = max(grace - (loop.time() - start), MIN_GRACE if hook is not None else 0.0)
    runner._signal(container, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(proc.wait()), max(left, 0.1))
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(proc.wait()), KILL_WAIT)
