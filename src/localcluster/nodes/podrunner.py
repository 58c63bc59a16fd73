"""One pod on a simulated node, from start to deletion (`PodRunner`), and what it needs from its
kubelet (`KubeletConfig`, the pods' state directory). The module docstring of `kubelet` tells what
a pod runs as and how it is stopped. Parts of a runner's work live beside it, each over a Protocol
of what it uses of the runner: the pod IP and host ports (`podports`), the status it writes
(`podstatus`), the simulated-pod path (`simulatedpod`), volumes (`volumemanager`), container
config (`containerconfig`), start order (`initcontainers`) and stops (`lifecycle`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import structlog

from ...client.errors import ApiError
from ...client.rest import RESTClient
from ...client.versioned.resources import PODS
from ...featuregates import FeatureGates
from ..apiserver.meta import now_rfc3339
from . import volumemanager, volumes
from .containerconfig import container_config
from .containers import (
    REPO_ROOT,
    SIDECAR_MIN_GRACE,
    SIDECAR_NAME,
    Container,
    free_port,
    new_container_id,
)
from .imagemap import SIMULATE_ANNOTATION as SIMULATE_ANNOTATION  # re-exported: tests, bench
from .imagemap import ImageProgram, local_program, placeholder_message
from .initcontainers import (
    MAX_BACKOFF,
    configure_containers,
    pause,
    start_in_order,
    terminated_state,
)
from .lifecycle import exec_prefix, kill_container
from .logs import ContainerLogDir
from .mounts import MOUNT_POINTS, main_pid, mountns_supported
from .netns import PodNetwork, netns_supported
from .podevents import PodEvents, crash_loop_back_off
from .podfiles import InCluster, PodFiles
from .podports import POD_IPS, allocate_pod_ip, forward_ports, own_ip
from .podsandbox import pod_hostname, write_sandbox_files
from .podstatus import pod_status
from .probes import PodTarget, ProbeTarget, probe_workers
from .simulated import SharedGameServerStore, SimulatedGame
from .simulatedpod import annotate_simulated, should_simulate, start_simulated
from .spawn import start_process

log = structlog.get_logger("agones.localcluster.nodes.podrunner")


def log_root(config: KubeletConfig) -> Path:
    """Where containers' log files go (`logs.ContainerLogDir`): `<log_dir>/pods`, kept after
    the pod; without a `log_dir`, under the pods' state directory, removed with the pod."""
    if config.log_dir:
        return Path(config.log_dir) / "pods"
    return volumemanager.pod_state_dir(config.state_dir) / "logs"


@dataclass
class KubeletConfig:
    kubeconfig: str
    """Kubeconfig the sidecar processes use (its server must be http(s)://127.0.0.1:<port>)."""
    api_port: int
    """The API server's port on 127.0.0.1 (made reachable inside each pod's namespace)."""
    node_addresses: dict[str, str] = field(default_factory=dict)
    """Node name → its 127.0.0.x address."""
    gates: FeatureGates = field(default_factory=FeatureGates)
    use_netns: bool | None = None
    """None: when supported."""
    log_dir: str | None = None
    """Where container output is kept (`<log_dir>/pods/<namespace>_<pod>_<uid>/<container>/
    <restart>.log`, CRI format); None: a directory of the pod's, removed with it."""
    simulate_all: bool = False
    """Simulate every pod (benchmarks)."""
    in_cluster: InCluster | None = None
    """The API server's HTTPS port for pods' in-cluster config (None: no service-account files)."""
    state_dir: str | None = None
    """Where pods' volume and service-account files go (None: a temporary directory)."""
    use_mountns: bool | None = None
    """Mount, UTS, IPC and PID namespaces for process pods in a network namespace (volumes at
    their mountPath, pod hostname, pid 1); None: when supported. False: the path rewrite."""
    volume_sync_period: float = 2.0
    """Seconds between two checks of a process pod's ConfigMaps and Secrets for its volumes."""
    dns_server: str | None = None
    """The cluster DNS server as pods see it, written to their resolv.conf (dnsPolicy
    ClusterFirst; port 53, relayed inside each pod's network namespace to `dns_target`); None:
    the host's resolv.conf, as a kubelet without cluster DNS does."""
    dns_target: tuple[str, int] | None = None
    """Where the cluster DNS server listens on the host (`clusterdns.ClusterDNS`)."""
    images: list[ImageProgram] = field(default_factory=list)
    """The user's image → program entries, before the built-in ones (`imagemap`)."""
    kubelet_client_token: str | None = None
    """The token the API server presents to the kubelets' servers (None: none required)."""


class PodHost(Protocol):
    """What a `PodRunner` uses of the kubelet that started it."""

    client: RESTClient
    config: KubeletConfig
    gameservers: SharedGameServerStore
    processes: set[int]


class PodRunner:
    """Runs one pod until it is deleted."""

    def __init__(
        self,
        kubelet: PodHost,
        pod: dict[str, Any],
        node_ip: str,
        events: PodEvents | None = None,
    ) -> None:
        self.kubelet = kubelet
        self.pod = pod
        self.events = events or PodEvents(None, pod)
        md = pod["metadata"]
        self.namespace: str = md["namespace"]
        self.name: str = md["name"]
        self.uid: str = md.get("uid", "")
        self.node_ip = node_ip
        self.containers: list[Container] = []
        self.sim: SimulatedGame | None = None
        self.net: PodNetwork | None = None
        self.pod_ip = node_ip
        self.files: PodFiles | None = None
        self._sources: dict[tuple[str, str], dict[str, Any] | None] = {}
        self._use_netns = False
        self.initialized = True
        """Every init container (but native sidecars) has completed."""
        self.terminating = False
        self.stopped = asyncio.Event()
        """Set with `terminating`: wakes the start's back-off waits."""
        self._tasks: list[asyncio.Task[Any]] = []
        self.start_task: asyncio.Task[None] | None = None
        """The running `start()`: `terminate()` waits for it, so nothing starts after the stop."""
        self._status_lock = asyncio.Lock()
        self._phase = "Pending"
        self._start_time = ""
        self._transitions: dict[str, tuple[str, str]] = {}
        """Condition type → (status, lastTransitionTime): the time moves only when the status does."""
        self.log_dir = ContainerLogDir(
            log_root(kubelet.config), self.namespace, self.name, self.uid
        )
        """Its containers' log files (`logs`), read by the node's `KubeletServer`."""
        self.simulated_reason = ""
        """Why the pod is simulated rather than run ("" while it runs processes)."""

    # -- status ---------------------------------------------------------------------------------

    async def write_status(self) -> None:
        async with self._status_lock:
            status = pod_status(self)
            try:
                await self.kubelet.client.patch(
                    PODS,
                    self.name,
                    {"status": status},
                    namespace=self.namespace,
                    subresource="status",
                )
            except ApiError as err:
                if err.status_code != 404:
                    log.warning("pod status update failed", pod=self.name, error=str(err))

    # -- start ----------------------------------------------------------------------------------

    async def start(self) -> None:
        try:
            if should_simulate(self):
                await start_simulated(self)
            else:
                await self._start_processes()
        except Exception as err:
            log.exception("pod failed to start", pod=f"{self.namespace}/{self.name}")
            self._phase = "Failed"
            for c in self.containers:
                c.terminated = c.terminated or {
                    "exitCode": 128,
                    "reason": "StartError",
                    "message": str(err),
                    "finishedAt": now_rfc3339(),
                }
            await self.write_status()

    async def _start_processes(self) -> None:
        cfg = self.kubelet.config
        spec = self.pod.get("spec") or {}
        init = list(spec.get("initContainers") or [])
        every = [*init, *(spec.get("containers") or [])]
        use_netns = cfg.use_netns if cfg.use_netns is not None else netns_supported()
        use_mounts = use_netns and (
            cfg.use_mountns if cfg.use_mountns is not None else mountns_supported()
        )
        self._use_netns = use_netns
        remap: dict[str, str] = {}
        if use_netns and own_ip(self.pod):
            self.pod_ip = allocate_pod_ip(self.uid, self.pod)
        self.containers = [Container(c, [], {}) for c in every]
        for container in self.containers[: len(init)]:
            container.init_container = True
        for container in self.containers:
            container.pid_namespace = use_mounts
        self.initialized = not any(
            c.init_container and not c.native_sidecar for c in self.containers
        )
        files = await self._prepare_files()
        if files is None:
            return
        self.files = files
        files.in_mount_namespace = use_mounts
        if use_netns:
            self.net = await self._create_network(files, use_mounts)
        else:
            sidecar = {
                "GRPC": free_port(),
                "HTTP": free_port(),
                "HEALTH": free_port(),
            }
            remap = {
                "AGONES_SDK_GRPC_PORT": str(sidecar["GRPC"]),
                "AGONES_SDK_HTTP_PORT": str(sidecar["HTTP"]),
            }
            self._health_port = sidecar["HEALTH"]
        if not await configure_containers(
            self,
            lambda c: container_config(self, c, use_mounts, remap),
        ):
            return
        placeholders = [
            c
            for c in self.containers
            if c.name != SIDECAR_NAME and local_program(c.spec, cfg.images) is None
        ]
        for c in placeholders:
            self.events.simulated(placeholder_message(c.spec), c.name)
        await forward_ports(self, every)
        downward = [
            v for v in spec.get("volumes") or [] if isinstance(v, dict) and "emptyDir" not in v
        ]
        if downward or volumes.referenced_sources(self.pod):
            self._tasks.append(asyncio.create_task(self.sync_volumes()))
        await start_in_order(self)
        if placeholders and not self.terminating:
            await annotate_simulated(
                self,
                f"containers without a local program: {', '.join(c.name for c in placeholders)}",
            )

    async def _create_network(self, files: PodFiles, use_mounts: bool) -> PodNetwork:
        """The pod's network namespace (with its sandbox files when it has mount namespaces),
        the API server's ports and the cluster DNS server reachable inside it."""
        cfg = self.kubelet.config
        sandbox = None
        if use_mounts:
            sandbox = write_sandbox_files(files.root, self.pod, self.pod_ip, cfg.dns_server)
        net = await PodNetwork.create(sandbox)
        self.net = net
        await net.expose_host_port(cfg.api_port, ("127.0.0.1", cfg.api_port))
        if cfg.in_cluster is not None and cfg.in_cluster.port != cfg.api_port:
            port = cfg.in_cluster.port
            await net.expose_host_port(port, ("127.0.0.1", port))
        if cfg.dns_server and cfg.dns_target is not None:
            await net.expose_dns(cfg.dns_server, cfg.dns_target)
        return net

    def start_supervision(self, container: Container) -> None:
        """Watch a launched container: restarts per policy, and its probes (`probes`)."""
        self._tasks.append(asyncio.create_task(self._supervise(container)))
        probed = functools.partial(self._probed, container)
        unhealthy = functools.partial(self._unhealthy, container)
        workers = probe_workers(container, self._probe_target, unhealthy, probed)
        stopped = functools.partial(self._probes_stopped, container)
        self._tasks.extend(asyncio.create_task(w.run(stopped)) for w in workers)

    async def fetch_sources(self) -> dict[tuple[str, str], dict[str, Any] | None]:
        """The ConfigMaps and Secrets the pod's volumes and env name (None: not found)."""
        return await volumemanager.fetch_sources(self.kubelet.client, self.pod)

    async def _prepare_files(self) -> PodFiles | None:
        return await volumemanager.prepare_files(self)

    def observe(self, pod: dict[str, Any]) -> None:
        """A newer version of the pod: its labels and annotations (the downward API's mutable
        fields) reach its downwardAPI volumes at the next volume sync."""
        md = pod.get("metadata") or {}
        self.pod = {
            **self.pod,
            "metadata": {
                **self.pod["metadata"],
                "labels": md.get("labels") or {},
                "annotations": md.get("annotations") or {},
            },
        }

    async def sync_volumes(self) -> None:
        await volumemanager.sync_volumes(self)

    def process_env(self, container: Container) -> dict[str, str]:
        """The environment a container's processes (and its exec hooks, exec probes and
        `kubectl exec`s) get."""
        return {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": os.environ.get("HOME", "/root"),
            "PYTHONUNBUFFERED": "1",
            "HOSTNAME": pod_hostname(self.pod).uts,
            **container.env,
        }

    def forget_process(self, pid: int) -> None:
        self.kubelet.processes.discard(pid)

    async def _launch(self, container: Container) -> None:
        argv = container.argv
        if self.net is not None:
            argv = [*self.net.exec_prefix(), *argv]
        env = self.process_env(container)
        container.proc = await start_process(
            argv,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=str(REPO_ROOT) if REPO_ROOT.is_dir() else None,
        )
        self.log_dir.attach(container.name, container.restart_count, container.proc)
        container.container_id = new_container_id()
        self.events.started(container.spec)
        container.started_at = now_rfc3339()
        container.terminated = None
        self.kubelet.processes.add(container.proc.pid)

    async def _supervise(self, container: Container) -> None:
        restart = (self.pod.get("spec") or {}).get("restartPolicy") or "Always"
        if container.native_sidecar:
            restart = "Always"
        backoff = 1.0
        while True:
            proc = container.proc
            assert proc is not None
            code = await proc.wait()
            self.kubelet.processes.discard(proc.pid)
            finished = terminated_state(container, code)
            container.terminated = finished
            if self.terminating or container.stopped:
                await self.write_status()
                return
            if restart == "Always" or (restart == "OnFailure" and code != 0):
                container.last_terminated = finished
                container.waiting = crash_loop_back_off(self.pod, container.name, backoff)
                await self.write_status()
                self.events.back_off(container.name)
                if await pause(self, backoff):
                    return
                backoff = min(backoff * 2, MAX_BACKOFF)
                container.restart_count += 1
                container.waiting = None
                await self._launch(container)
                await self.write_status()
                continue
            regular = [c for c in self.containers if not c.init_container]
            if all(c.terminated is not None for c in regular):
                # the pod is done: its phase from the regular containers, then its sidecars stop
                failed = any(c.terminated and c.terminated["exitCode"] for c in regular)
                self._phase = "Failed" if failed else "Succeeded"
                for sidecar in self.containers:
                    if sidecar.native_sidecar:
                        sidecar.stopped = True
                        await self._stop_container(sidecar)
            await self.write_status()
            return

    def exec_context(self, container: Container) -> tuple[list[str], dict[str, str]]:
        """The argv prefix (the pod's namespaces) and environment of a command run in
        `container` as its own processes are: exec probes and `kubectl exec`."""
        proc = container.proc
        target = main_pid(proc.pid, True) if container.pid_namespace and proc else None
        return exec_prefix(self.net, container, target), self.process_env(container)

    def _probes_stopped(self, container: Container) -> bool:
        return self.terminating or container.stopped

    def _probe_target(self) -> ProbeTarget:
        # Without a namespace the SDK sidecar's health port 8080 is remapped, as its flags are.
        remap = {8080: self._health_port} if hasattr(self, "_health_port") else {}
        return PodTarget(self.net, self.pod_ip, remap, self.exec_context)

    def _unhealthy(self, container: Container, _kind: str, message: str) -> None:
        self.events.unhealthy(container.name, message)

    async def _probed(self, container: Container, kind: str, ok: bool) -> None:
        """A probe's result changed: readiness into the status; a failed liveness or startup
        probe kills the container (restarted per restartPolicy)."""
        if kind == "Readiness":
            container.probe_ready = ok
            await self.write_status()
        elif not ok:
            why = f"Container {container.name} failed {kind.lower()} probe, will be restarted"
            self.events.killing(container.name, why)
            log.info("probe failed; restarting", pod=self.name, c=container.name, probe=kind)
            await self._stop_container(container)

    async def _stop_container(self, container: Container) -> None:
        """preStop, SIGTERM, then SIGKILL after terminationGracePeriodSeconds (as for a failed
        probe): `lifecycle.kill_container`."""
        grace = (self.pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
        await kill_container(self, container, float(grace))

    async def _stop_all(self, containers: list[Container], deadline: float) -> None:
        """Stop `containers` at once (`lifecycle.kill_container`), each with the grace period
        left until `deadline` (loop time)."""
        live = [c for c in containers if c.proc is not None and c.proc.returncode is None]
        if not live:  # nothing to stop (`kill_container` returns at once): no gather to pay
            return
        left = deadline - asyncio.get_running_loop().time()
        await asyncio.gather(*(kill_container(self, c, left) for c in live))

    def _signal(self, container: Container, sig: int) -> None:
        """SIGTERM to the container's main process (as a runtime sends it: a shell there that
        does not pass it on keeps its children running); SIGKILL to all of its processes."""
        if container.proc is not None and container.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                if sig == signal.SIGKILL:
                    os.killpg(container.proc.pid, sig)
                else:
                    os.kill(main_pid(container.proc.pid, container.pid_namespace), sig)

    # -- stop -----------------------------------------------------------------------------------

    async def terminate(self, grace: float) -> None:
        """Stop the pod as a kubelet does: SIGTERM to the regular containers; once they have all
        exited (or the grace period is over: SIGKILL), the native sidecars in reverse order, each
        with what is left of the grace period but at least `SIDECAR_MIN_GRACE`; then release
        everything."""
        self.terminating = True
        self.stopped.set()
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(grace, 0.1)
        for c in self.containers:
            if c.proc is not None and c.proc.returncode is None:
                self.events.killing(c.name)
        if self.start_task is not None:
            # A pod deleted while it starts: let the start finish (it launches nothing more once
            # `terminating` is set) so every process and namespace it made is released below;
            # an init container it waits for is stopped as the app containers are.
            init = [c for c in self.containers if c.init_container and not c.native_sidecar]
            if self.start_task.done():
                await self._stop_all(init, deadline)
            else:
                stopping = asyncio.ensure_future(self._stop_all(init, deadline))
                await asyncio.wait([self.start_task, stopping])
        if self.sim is not None:
            await self.sim.stop()
        await self._stop_all([c for c in self.containers if not c.native_sidecar], deadline)
        for sidecar in reversed([c for c in self.containers if c.native_sidecar]):
            await self._stop_all([sidecar], max(deadline, loop.time() + SIDECAR_MIN_GRACE))
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            await asyncio.gather(*self._tasks, return_exceptions=True)
        # A restart launched while the signals went out is still running: kill it too.
        late = [c.proc for c in self.containers if c.proc and c.proc.returncode is None]
        for c in self.containers:
            self._signal(c, signal.SIGKILL)
        if late:
            await asyncio.wait([asyncio.ensure_future(p.wait()) for p in late], timeout=5)
        for c in self.containers:
            if c.proc is not None:
                self.kubelet.processes.discard(c.proc.pid)
        if self.net is not None:
            await self.net.close()
            self.net = None
        if self.pod_ip != self.node_ip:
            POD_IPS.release(self.uid)
        MOUNT_POINTS.release(self.uid)
        if self.files is not None:
            self.files.remove()
        await self.log_dir.close()
        if not self.kubelet.config.log_dir:
            self.log_dir.remove()
