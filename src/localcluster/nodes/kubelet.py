"""Kubelets of the simulated nodes: run the pods bound to them and report their status.

One `Kubelet` serves every simulated node from one pod informer. For each pod bound to one of its
nodes it starts a `PodRunner`, which either
* runs the containers as LOCAL PROCESSES, when a container has a `command` or its image maps to a
  local program (`IMAGE_PROGRAMS`: Agones' simple-game-server image → `examples/simple-game-server`,
  agones-py's own images `*/agones-{controller,extensions,allocator,ping}:*` → `agones` with
  `args`, by default the component's sub-command, as the images' ENTRYPOINT/CMD; `*/agones-sdk:*`
  → `agones sdkserver` + `args`), each pod in its own network namespace
  (`netns.PodNetwork`) with its host ports forwarded from `<node address>:<hostPort>` and, when
  free, `127.0.0.1:<hostPort>`, and the API server's port reachable on the pod's own loopback; the
  pod's env (fieldRef `metadata.*` and `status.*IP` resolved) plus `KUBECONFIG` for the sidecar;
  liveness probes (`httpGet`) as a kubelet runs them (a failed one stops the container: SIGTERM,
  then SIGKILL after the grace period); a container that exits is restarted per `restartPolicy`
  with `restartCount`, `lastState.terminated` and its exit code in the pod status; once every
  regular container of a pod that restarts none has finished, the pod is Succeeded (all exit 0) or
  Failed and its native sidecars are stopped; or
* SIMULATES the pod (`simulated.SimulatedGame`) when no container runs locally, or when the pod is
  annotated `local.agones-py.dev/simulate: "true"`.
Without network namespaces (not root, no `unshare`) processes run in the host namespace: each
container's first port is passed as `PORT=<hostPort>` and the sidecar gets free ports through
`--grpc-port`/`--http-port`/`HEALTH_PORT` (and the game `AGONES_SDK_*_PORT`), which suits programs
that read them (simple-game-server does) and nothing else.

As root each process pod also gets UTS, IPC and mount namespaces, and each container a mount and
PID namespace of its own with its volumes at their mountPath (`mounts`, `podsandbox`, `volumes`,
`envvars`); init containers run first, in order (`initcontainers`).

A pod deleted gracefully (deletionTimestamp set) gets its `preStop` hooks, SIGTERM to each
container's main process, `terminationGracePeriodSeconds`, then SIGKILL (`lifecycle`), its native
sidecars only after its app containers have exited, as Kubernetes orders them; the kubelet then
deletes it with grace period 0. Pod IP and host IP are the node's address.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
from typing import Any

import aiohttp
import structlog

from ...client.errors import ApiError
from ...client.rest import RESTClient
from ...client.versioned.resources import NODES, PODS
from ...informers import DeletedFinalStateUnknown, ResourceEventHandlerFuncs, SharedInformerFactory
from ...record import EventBroadcaster
from .kubeletserver import KubeletServer
from .podevents import PodEvents
from .podrunner import KubeletConfig, PodRunner
from .simulated import SharedGameServerStore

log = structlog.get_logger("agones.localcluster.nodes.kubelet")


class Kubelet:
    """The kubelets of all simulated nodes (see the module docstring)."""

    def __init__(
        self,
        client: RESTClient,
        factory: SharedInformerFactory,
        config: KubeletConfig,
        sdk_client: RESTClient | None = None,
    ) -> None:
        self.client = client
        self.config = config
        self.pods = factory.for_resource(PODS)
        self.gameservers = SharedGameServerStore(sdk_client or client, factory)
        self.runners: dict[str, PodRunner] = {}
        self.processes: set[int] = set()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._finishing: set[str] = set()
        self.servers: list[KubeletServer] = []
        self.events = EventBroadcaster(client)
        self.recorders = {n: self.events.new_recorder("kubelet", n) for n in config.node_addresses}
        """Each node's recorder (events carry the node as their source host)."""
        self.pods.informer().add_event_handler(
            ResourceEventHandlerFuncs(
                add_func=self._on_pod,
                update_func=lambda _o, n: self._on_pod(n),
                delete_func=self._on_delete,
            )
        )

    async def serve(self) -> None:
        """Start each node's `KubeletServer` on its address and advertise its port on the Node
        (`status.daemonEndpoints.kubeletEndpoint.Port`), where the API server's proxy looks."""
        self._spawn(self.events.run())
        for node, address in self.config.node_addresses.items():
            pods = functools.partial(self._pods_on, address)
            server = KubeletServer(node, address, pods, self.config.kubelet_client_token)
            port = await server.start()
            self.servers.append(server)
            endpoints = {"daemonEndpoints": {"kubeletEndpoint": {"Port": port}}}
            await self.client.patch(NODES, node, {"status": endpoints}, subresource="status")

    def _pods_on(self, address: str) -> list[PodRunner]:
        return [r for r in self.runners.values() if r.node_ip == address]

    def _spawn(self, coro: Any) -> asyncio.Task[Any]:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _on_pod(self, pod: Any) -> None:
        node = (pod.get("spec") or {}).get("nodeName")
        if node not in self.config.node_addresses:
            return
        uid = pod["metadata"].get("uid", "")
        runner = self.runners.get(uid)
        if pod["metadata"].get("deletionTimestamp"):
            if uid not in self._finishing:
                self._finishing.add(uid)
                self._spawn(self._finish(pod, runner))
            return
        if runner is not None:
            runner.observe(pod)
        if runner is None:
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                return
            events = PodEvents(self.recorders[node], pod)
            runner = PodRunner(self, pod, self.config.node_addresses[node], events)
            self.runners[uid] = runner
            runner.start_task = self._spawn(runner.start())

    def _on_delete(self, obj: Any) -> None:
        pod = obj.obj if isinstance(obj, DeletedFinalStateUnknown) else obj
        uid = (pod.get("metadata") or {}).get("uid", "")
        runner = self.runners.pop(uid, None)
        if runner is not None and not runner.terminating:
            self._spawn(runner.terminate(0))

    async def _finish(self, pod: dict[str, Any], runner: PodRunner | None) -> None:
        md = pod["metadata"]
        grace = md.get("deletionGracePeriodSeconds")
        if grace is None:
            grace = (pod.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
        delay = 0.5
        try:
            if runner is not None:
                await runner.terminate(float(grace))
            # Retried until it lands (no later event would bring the pod back here): a pod left
            # Terminating would hold its GameServer and node ports for ever.
            while True:
                try:
                    await self.client.delete(
                        PODS,
                        md["name"],
                        md["namespace"],
                        grace_period_seconds=0,
                        preconditions={"uid": md.get("uid", "")},
                    )
                    return
                except ApiError as err:
                    if err.status_code in (404, 409):
                        return
                    log.warning("final pod delete failed", pod=md["name"], error=str(err))
                except (aiohttp.ClientError, OSError, TimeoutError) as err:
                    log.warning("final pod delete failed", pod=md["name"], error=str(err))
                await asyncio.sleep(delay)
                delay = min(delay * 2, 10.0)
        finally:
            self.runners.pop(md.get("uid", ""), None)
            self._finishing.discard(md.get("uid", ""))

    async def stop(self) -> None:
        """Stop every pod's processes (SIGTERM then SIGKILL after 5 s); leave the API alone."""
        runners = list(self.runners.values())
        self.runners.clear()
        for server in self.servers:
            await server.stop()
        await asyncio.gather(*(r.terminate(5) for r in runners), return_exceptions=True)
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for pid in list(self.processes):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(pid, signal.SIGKILL)
