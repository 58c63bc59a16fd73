"""Container probes as the kubelet's prober runs them (`pkg/kubelet/prober`): liveness, readiness and
startup probes with an `httpGet`, `tcpSocket` or `exec` handler, against a process pod.

One `ProbeWorker` per (container, probe kind), as the kubelet's `worker`: it waits
`initialDelaySeconds` after each start of the container, then probes every `periodSeconds` with a
`timeoutSeconds` deadline; the result flips to failure after `failureThreshold` consecutive
failures and back to success after `successThreshold` consecutive successes. Until the startup
probe has succeeded, liveness and readiness are not run (readiness is false). Every failed probe
records a Warning `Unhealthy` event (`<Kind> probe failed: <output>`); a liveness or startup
probe that reaches its failure threshold has the container killed (`Killing`, "Container <c>
failed liveness probe, will be restarted") and restarted per the pod's restartPolicy. A container
not running is not probed.

The handlers (`http_probe`, `tcp_probe`, `exec_probe`) reach the pod through a `ProbeTarget` (inside
its network namespace when it has one) and word their failures as the kubelet does.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol

from .containers import Container, probe_port
from .netns import PodNetwork

PROBE_KINDS = (
    ("startupProbe", "Startup"),
    ("livenessProbe", "Liveness"),
    ("readinessProbe", "Readiness"),
)
USER_AGENT = "kube-probe/1.28"


@dataclass(frozen=True)
class ProbeResult:
    ok: bool
    output: str = ""


class ProbeTarget(Protocol):
    """How the prober reaches one pod."""

    host: str
    """The pod's IP, as the messages name it."""

    async def connect(self, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        """A TCP connection to `port` of the pod (OSError when refused)."""
        ...

    def exec_context(self, container: Container) -> tuple[list[str], dict[str, str]]:
        """The argv prefix (the pod's namespaces) and environment of a command in `container`."""
        ...


class PodTarget:
    """A pod as its probes reach it: inside its network namespace when it has one (the kubelet
    dials the pod IP, which here relays only declared ports), else on the host at the pod's IP,
    with `remap`ped ports (how a host-namespace pod's fixed ports were moved)."""

    def __init__(
        self,
        net: PodNetwork | None,
        host: str,
        remap: dict[int, int],
        exec_context: Callable[[Container], tuple[list[str], dict[str, str]]],
    ) -> None:
        self.net = net
        self.host = host
        self.remap = remap
        self.exec_context = exec_context

    async def connect(self, port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        if self.net is not None:
            return await asyncio.open_connection(sock=await self.net.connect_tcp(port))
        return await asyncio.open_connection(self.host, self.remap.get(port, port))


@dataclass(frozen=True)
class ProbeTiming:
    """A probe's timing fields with their defaults (`SetDefaults_Probe`)."""

    initial_delay: float = 0.0
    timeout: float = 1.0
    period: float = 10.0
    success_threshold: int = 1
    failure_threshold: int = 3

    @classmethod
    def of(cls, probe: dict[str, Any]) -> ProbeTiming:
        def number(key: str, default: float) -> float:
            value = probe.get(key)
            return float(value) if isinstance(value, int | float) and value > 0 else default

        return cls(
            number("initialDelaySeconds", 0.0),
            number("timeoutSeconds", 1.0),
            number("periodSeconds", 10.0),
            int(number("successThreshold", 1)),
            int(number("failureThreshold", 3)),
        )


async def http_probe(
    target: ProbeTarget, port: int, action: dict[str, Any], timeout: float
) -> ProbeResult:
    path = str(action.get("path") or "/")
    url = f"http://{target.host}:{port}{path}"
    headers = "".join(
        f"{h.get('name')}: {h.get('value', '')}\r\n"
        for h in action.get("httpHeaders") or []
        if isinstance(h, dict) and h.get("name")
    )
    request = (
        f"GET {path} HTTP/1.1\r\nHost: {target.host}:{port}\r\nUser-Agent: {USER_AGENT}\r\n"
        f"Accept: */*\r\n{headers}Connection: close\r\n\r\n"
    )
    try:
        async with asyncio.timeout(timeout):
            reader, writer = await _connect(target, port)
            try:
                writer.write(request.encode())
                line = await reader.readline()
            finally:
                writer.close()
    except TimeoutError:
        return ProbeResult(
            False,
            f'Get "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)',
        )
    except OSError as err:
        return ProbeResult(False, f'Get "{url}": {_dial_error(target, port, err)}')
    parts = line.split()
    code = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
    if 200 <= code < 400:
        return ProbeResult(True)
    if code == 0:
        return ProbeResult(False, f'Get "{url}": malformed HTTP response {line[:40]!r}')
    return ProbeResult(False, f"HTTP probe failed with statuscode: {code}")


async def tcp_probe(target: ProbeTarget, port: int, timeout: float) -> ProbeResult:
    try:
        async with asyncio.timeout(timeout):
            _reader, writer = await _connect(target, port)
            writer.close()
    except TimeoutError:
        return ProbeResult(False, f"dial tcp {target.host}:{port}: i/o timeout")
    except OSError as err:
        return ProbeResult(False, _dial_error(target, port, err))
    return ProbeResult(True)


async def exec_probe(
    prefix: list[str], command: list[str], env: dict[str, str], timeout: float
) -> ProbeResult:
    from .spawn import start_process

    try:
        proc = await start_process(
            [*prefix, *command],
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
    except OSError as err:
        return ProbeResult(False, str(err))
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()
        return ProbeResult(False, f'command "{" ".join(command)}" timed out')
    return ProbeResult(proc.returncode == 0, out.decode(errors="replace"))


async def _connect(
    target: ProbeTarget, port: int
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    if port <= 0:
        raise ConnectionRefusedError("invalid port")
    return await target.connect(port)


def _dial_error(target: ProbeTarget, port: int, err: OSError) -> str:
    why = "connection refused" if isinstance(err, ConnectionRefusedError) else str(err)
    return f"dial tcp {target.host}:{port}: connect: {why}"


async def run_probe(
    target: ProbeTarget, container: Container, probe: dict[str, Any], timeout: float
) -> ProbeResult | None:
    """One run of the probe's handler (None: a handler this prober does not run)."""
    if isinstance(probe.get("httpGet"), dict):
        port = probe_port(container.spec, probe["httpGet"])
        return await http_probe(target, port, probe["httpGet"], timeout)
    if isinstance(probe.get("tcpSocket"), dict):
        return await tcp_probe(target, probe_port(container.spec, probe["tcpSocket"]), timeout)
    command = (
        (probe.get("exec") or {}).get("command") if isinstance(probe.get("exec"), dict) else None
    )
    if isinstance(command, list) and command:
        prefix, env = target.exec_context(container)
        return await exec_probe(prefix, [str(c) for c in command], env, timeout)
    return None


class ProbeWorker:
    """Runs one probe of one container (see the module docstring)."""

    def __init__(
        self,
        container: Container,
        kind: str,
        probe: dict[str, Any],
        target: Callable[[], ProbeTarget],
        on_failure: Callable[[str, str], None],
        on_result: Callable[[str, bool], Awaitable[None]],
    ) -> None:
        self.container = container
        self.kind = kind
        """`Liveness`, `Readiness` or `Startup`."""
        self.probe = probe
        self.timing = ProbeTiming.of(probe)
        self._target = target
        self._on_failure = on_failure
        self._on_result = on_result
        self.result = kind != "Readiness"
        self._successes = 0
        self._failures = 0

    async def run(self, stopped: Callable[[], bool]) -> None:
        run_id = ""
        loop = asyncio.get_running_loop()
        started = loop.time()
        while not stopped():
            proc = self.container.proc
            running = proc is not None and proc.returncode is None
            if running and self.container.container_id != run_id:
                run_id, started = self.container.container_id, loop.time()
                self._successes = self._failures = 0
                self.result = self.kind != "Readiness"
                if self.kind == "Startup":
                    self.container.startup_done = False
            if (
                not running
                or not self._may_probe()
                or loop.time() - started < self.timing.initial_delay
            ):
                await asyncio.sleep(min(self.timing.period, 0.5))
                continue
            result = await run_probe(
                self._target(), self.container, self.probe, self.timing.timeout
            )
            if result is None or stopped():
                return
            await self._record(result)
            await asyncio.sleep(self.timing.period)

    def _may_probe(self) -> bool:
        return self.kind == "Startup" or self.container.startup_done

    async def _record(self, result: ProbeResult) -> None:
        if result.ok:
            self._successes, self._failures = self._successes + 1, 0
        else:
            self._failures, self._successes = self._failures + 1, 0
            self._on_failure(self.kind, f"{self.kind} probe failed: {result.output}")
        threshold = self.timing.success_threshold if result.ok else self.timing.failure_threshold
        count = self._successes if result.ok else self._failures
        if count < threshold or result.ok == self.result:
            return
        self.result = result.ok
        if self.kind == "Startup" and result.ok:
            self.container.startup_done = True
        await self._on_result(self.kind, result.ok)
        if not result.ok and self.kind != "Readiness":
            self._failures = 0


def probe_workers(
    container: Container,
    target: Callable[[], ProbeTarget],
    on_failure: Callable[[str, str], None],
    on_result: Callable[[str, bool], Awaitable[None]],
) -> list[ProbeWorker]:
    """The workers of every probe the container declares."""
    container.startup_done = not isinstance(container.spec.get("startupProbe"), dict)
    return [
        ProbeWorker(container, kind, container.spec[key], target, on_failure, on_result)
        for key, kind in PROBE_KINDS
        if isinstance(container.spec.get(key), dict)
    ]
