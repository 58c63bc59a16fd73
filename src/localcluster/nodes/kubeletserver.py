"""The kubelet's HTTP server of each simulated node (the real one's port 10250: logs and exec).

One server per node, on the node's own loopback address and a free port that the kubelet writes
into its Node's `status.daemonEndpoints.kubeletEndpoint.Port`, where the API server's `pods/log`
finds it (`apiserver.podlog`). Every request must carry the API server's kubelet client token
(`KubeletConfig.kubelet_client_token`; 401 otherwise): loopback is shared with every local user,
and exec runs commands as the pods do. It serves
* `GET /containerLogs/{namespace}/{pod}/{container}` with the `PodLogOptions` query: the
  container's current run, or with `previous=true` the run before it (`logs.ContainerLogDir`),
  filtered per the options and, with `follow=true`, streamed until that run's output closes.
  Errors as the kubelet words them: an unknown pod or container is a 404 (`pod "p" does not
  exist`, `container "c" not found in pod "p"`), a container with nothing to show a 400
  (`container "c" in pod "p" is waiting to start: ContainerCreating`, `previous terminated
  container "c" in pod "p" not found`); a simulated pod has no processes, hence no logs, and says
  so;
* `GET /exec/{namespace}/{pod}/{container}?command=...`: the command in the container's pod, over
  the websocket streaming protocol (`kubeletexec`); a simulated or stopped container answers with
  a Failure `Status` on the error channel, a SPDY request with a 400 that says why.
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Protocol

from aiohttp import web

from ...httpserver import serve_app
from ..apiserver.errors import StatusError
from ..apiserver.podlog import PodLogOptions, parse_log_options
from .containers import Container
from .kubeletexec import refuse_exec, serve_exec
from .logs import ContainerLogDir, ReadOptions, follow_log, read_log


class LoggedPod(Protocol):
    """What the server reads of a pod's runner."""

    namespace: str
    name: str
    pod: dict[str, Any]
    containers: list[Container]
    log_dir: ContainerLogDir
    simulated_reason: str

    def exec_context(self, container: Container) -> tuple[list[str], dict[str, str]]: ...


@dataclass
class KubeletError(Exception):
    code: int
    message: str


def _text(code: int, message: str) -> web.Response:
    return web.Response(status=code, text=message + "\n", content_type="text/plain")


def log_file_for(pod: LoggedPod, container: str, previous: bool) -> tuple[Container, int]:
    """The run of `container` to read (`validateContainerLogStatus`), or a `KubeletError`."""
    if pod.simulated_reason:
        raise KubeletError(
            400,
            f'container "{container}" in pod "{pod.name}" is simulated by the local cluster '
            f"({pod.simulated_reason}): it runs no process, so it has no logs",
        )
    found = next((c for c in pod.containers if c.name == container), None)
    quoted = f'"{container}" in pod "{pod.name}"'
    if found is not None and found.waiting is not None and found.last_terminated is not None:
        return found, found.restart_count  # backing off: both name the run that just ended
    if previous:
        if found is None or found.last_terminated is None or found.restart_count == 0:
            raise KubeletError(400, f"previous terminated container {quoted} not found")
        return found, found.restart_count - 1
    if found is None or found.proc is None:
        raise KubeletError(400, f"container {quoted} is waiting to start: ContainerCreating")
    return found, found.restart_count


class KubeletServer:
    """Serves one node's kubelet API (see the module docstring)."""

    def __init__(
        self,
        node: str,
        address: str,
        pods: Callable[[], Iterable[LoggedPod]],
        token: str | None = None,
    ) -> None:
        self.node = node
        self.address = address
        self._pods = pods
        self._token = token
        """The bearer token every request must carry (None: no authentication)."""
        self._runner: web.AppRunner | None = None
        self.port = 0

    async def start(self) -> int:
        app = web.Application(middlewares=[self._authenticate])
        app.router.add_get("/containerLogs/{namespace}/{pod}/{container}", self._logs)
        app.router.add_route("*", "/exec/{namespace}/{pod}/{container}", self._exec)
        self._runner, self.port = await serve_app(app, self.address, 0)
        return self.port

    @web.middleware
    async def _authenticate(self, request: web.Request, handler: Any) -> web.StreamResponse:
        if self._token is not None and not hmac.compare_digest(
            request.headers.get("Authorization", ""), f"Bearer {self._token}"
        ):
            return _text(401, "Unauthorized")
        response: web.StreamResponse = await handler(request)
        return response

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    def _pod(self, namespace: str, name: str) -> LoggedPod | None:
        return next((p for p in self._pods() if (p.namespace, p.name) == (namespace, name)), None)

    async def _exec(self, request: web.Request) -> web.StreamResponse:
        info = request.match_info
        pod = self._pod(info["namespace"], info["pod"])
        if pod is None:
            return _text(404, f'pod "{info["pod"]}" does not exist')
        if info["container"] not in declared_containers(pod.pod):
            return _text(404, f'container "{info["container"]}" not found in pod "{pod.name}"')
        found = next((c for c in pod.containers if c.name == info["container"]), None)
        running = found is not None and found.proc is not None and found.proc.returncode is None
        if pod.simulated_reason or found is None or not running:
            why = "is simulated by the local cluster" if pod.simulated_reason else "is not running"
            message = f'container "{info["container"]}" in pod "{pod.name}" {why}'
            return await refuse_exec(request, message)
        prefix, env = pod.exec_context(found)
        return await serve_exec(request, prefix, env)

    async def _logs(self, request: web.Request) -> web.StreamResponse:
        info = request.match_info
        try:
            opts = parse_log_options(request.query)
        except StatusError as err:
            return _text(400, err.message)
        pod = self._pod(info["namespace"], info["pod"])
        if pod is None:
            return _text(404, f'pod "{info["pod"]}" does not exist')
        if info["container"] not in declared_containers(pod.pod):
            return _text(404, f'container "{info["container"]}" not found in pod "{pod.name}"')
        try:
            container, run = log_file_for(pod, info["container"], opts.previous)
        except KubeletError as err:
            return _text(err.code, err.message)
        path = pod.log_dir.file(container.name, run)
        read = _read_options(opts)
        if not opts.follow:
            data = read_log(path.read_bytes() if path.exists() else b"", read)
            return web.Response(body=data, content_type="text/plain")
        response = web.StreamResponse(headers={"Content-Type": "text/plain"})
        await response.prepare(request)
        written = pod.log_dir.done_writing(container.name, run)

        def done() -> bool:
            gone = request.transport is None or request.transport.is_closing()
            return gone or written()

        try:
            async for chunk in follow_log(path, read, done):
                await response.write(chunk)
        except ConnectionResetError:
            return response
        await response.write_eof()
        return response


def declared_containers(pod: dict[str, Any]) -> set[str]:
    """The names of the containers the pod's spec declares (`GetContainerSpec`)."""
    spec = pod.get("spec") or {}
    return {
        str(c.get("name"))
        for kind in ("initContainers", "containers", "ephemeralContainers")
        for c in spec.get(kind) or []
    }


def _read_options(opts: PodLogOptions) -> ReadOptions:
    return ReadOptions(
        since=opts.since(datetime.now(UTC)),
        tail_lines=opts.tail_lines,
        limit_bytes=opts.limit_bytes,
        timestamps=opts.timestamps,
    )
