"""The whole local cluster in one object: what `agones local up` runs and e2e tests start.

`LocalStack(StackOptions(...))`: `start()` brings up, in order, the local API server (graceful pod
deletion on), with a `WriteCounter` (`writecounter`) on it; with `agones` (the default) Agones'
CRDs, namespace and ServiceAccounts and the admission webhooks (`stack_agones`); then the cluster
itself (`stack_cluster`): the nodes, the default StorageClass, the cluster DNS server, the
scheduler and kubelets (in this process, or with `nodes_process` as a child process), the
deployment, replicaset, statefulset, endpoints and volume controllers, the pod mesh and the
service proxy (every informer of this process lists and watches in-process, through
`list_watches`, and writes over HTTP); then, with `agones`, the allocation API on the webhook servers (an `Allocator`
for each in-process one; `agones extensions` children run their own), registered through the
APIService `v1.allocation.agones.dev` (so `kubectl create -f gameserverallocation.yaml` works),
the controller as a child process (`agones controller`, so it
can be killed and restarted: `stop_controller(kill=True)` / `start_controller()`), and the
allocator service as another (`agones allocator` on 127.0.0.1:`allocator_port`, mutual TLS with
certificates generated into `allocator_certs`). `stop()` undoes all of it, killing every process
it started (`stack_processes`), also after a failed start. `ThreadedStack` runs one on its own
loop in a thread for synchronous callers.

`StackOptions` (`stack_options`), `WriteCounter`, `node_addresses`, `POD_DNS_ADDRESS` and
`REPO_ROOT` are importable from here too.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import threading
from dataclasses import replace
from typing import Any

import structlog

from ..allocator.certs import AllocatorCertDirs
from ..client.config import load_config
from ..client.rest import RESTClient
from ..controllers.gameserverallocations import Allocator
from ..extensions.apiserver import APIServer
from ..extensions.server import WebhookServer
from ..featuregates import FeatureGates
from ..informers import SharedInformerFactory
from ..record import EventBroadcaster
from . import stack_agones, stack_cluster
from .apiserver.inprocess import InProcessListWatches
from .apiserver.server import LocalAPIServer, ServerOptions
from .clusterdns import ClusterDNS
from .controllers.deployment import DeploymentController
from .controllers.endpoints import EndpointsController
from .controllers.replicaset import ReplicaSetController
from .controllers.statefulset import StatefulSetController
from .controllers.volumes import LocalVolumeProvisioner
from .extensions_children import wait_ready
from .nodes.kubelet import Kubelet
from .nodes.podmesh import PodMesh
from .nodes.scheduler import Scheduler
from .nodes.serviceproxy import ServiceProxy
from .stack_agones import REPO_ROOT as REPO_ROOT
from .stack_cluster import POD_DNS_ADDRESS as POD_DNS_ADDRESS
from .stack_cluster import USER_AGENT
from .stack_cluster import node_addresses as node_addresses
from .stack_options import StackOptions as StackOptions
from .stack_processes import spawn, terminate
from .writecounter import WriteCounter as WriteCounter

log = structlog.get_logger("agones.localcluster.stack")


class LocalStack:
    def __init__(self, options: StackOptions | None = None) -> None:
        self.options = options or StackOptions()
        if self.options.extensions_replicas < 1:
            raise ValueError(
                f"extensions replicas must be at least 1, not {self.options.extensions_replicas}"
            )
        self.gates = FeatureGates.parse(self.options.gates)
        self.addresses = node_addresses(self.options.nodes, self.options.first_node_address)
        self.api = LocalAPIServer(
            ServerOptions(
                port=self.options.api_port,
                kubeconfig=self.options.kubeconfig,
                graceful_pod_deletion=True,
                bookmark_interval=5.0,
                in_cluster_tls=True,
            )
        )
        self.list_watches = InProcessListWatches(
            self.api.registry, self.api.options.bookmark_interval
        )
        """How this process's informers list and watch: straight from the API server's store
        (`apiserver.inprocess`); their writes still go over HTTP."""
        self.writes = WriteCounter()
        self.client: RESTClient | None = None
        self.factory: SharedInformerFactory | None = None
        self.kubelet: Kubelet | None = None
        self.scheduler: Scheduler | None = None
        self.nodes_proc: asyncio.subprocess.Process | None = None
        """The nodes process (`nodes_process`); `kubelet` and `scheduler` are then None."""
        self._nodes_dir: tempfile.TemporaryDirectory[str] | None = None
        self.replica_sets: ReplicaSetController | None = None
        self.deployments: DeploymentController | None = None
        self.endpoints: EndpointsController | None = None
        self.stateful_sets: StatefulSetController | None = None
        self.volumes: LocalVolumeProvisioner | None = None
        self.dns: ClusterDNS | None = None
        self.mesh: PodMesh | None = None
        self._events: EventBroadcaster | None = None
        self.service_proxy: ServiceProxy | None = None
        self.extensions: list[tuple[WebhookServer, APIServer]] = []
        self.extensions_procs: list[asyncio.subprocess.Process] = []
        self.extensions_ports: list[int] = []
        self._extensions_tmp: tempfile.TemporaryDirectory[str] | None = None
        self.allocators: list[Allocator] = []
        self._allocator_factories: list[SharedInformerFactory] = []
        self._ca: bytes = b""
        self.controller_proc: asyncio.subprocess.Process | None = None
        self._tasks: list[asyncio.Task[Any]] = []
        self._clients: list[RESTClient] = []
        self.allocator_proc: asyncio.subprocess.Process | None = None
        self.allocator_port = 0
        self.allocator_health_port = 0
        self.allocator_certs: AllocatorCertDirs | None = None
        self._certs_tmp: tempfile.TemporaryDirectory[str] | None = None

    @property
    def kubeconfig(self) -> str:
        return self.api.kubeconfig

    async def start(self) -> None:
        await self.api.start()
        self.writes.install(self.api)
        config = load_config(self.api.kubeconfig)
        config.user_agent = USER_AGENT
        config.qps = 0
        self.client = RESTClient(config)
        self._clients = [
            RESTClient(replace(config, user_agent=f"agones-local-{who}"))
            for who in ("scheduler", "sdkserver", "controller-manager")
        ]
        self._clients.append(RESTClient(replace(config, user_agent="agones-extensions")))
        if self.options.agones:
            await stack_agones.install(self.client)
            await self._start_webhooks()
        await stack_cluster.start_cluster(self)
        if not self.options.agones:
            return
        await stack_agones.start_allocation(self)
        if self.options.controller:
            await self.start_controller()
        if self.options.allocator_service:
            await self.start_allocator_service()

    async def _start_webhooks(self) -> None:
        await stack_agones.start_webhooks(self)

    @property
    def webhooks(self) -> WebhookServer | None:
        return self.extensions[0][0] if self.extensions else None

    @property
    def allocator(self) -> Allocator | None:
        return self.allocators[0] if self.allocators else None

    def controller_argv(self) -> list[str]:
        return stack_agones.controller_argv(self)

    async def start_controller(self) -> None:
        self.controller_proc = await self._spawn(self.controller_argv(), "controller.log")

    async def stop_controller(self, kill: bool = False, timeout: float = 15.0) -> None:
        proc, self.controller_proc = self.controller_proc, None
        await terminate(proc, kill, timeout)

    async def start_allocator_service(self, timeout: float = 60.0) -> None:
        """Generate its certificates, start `agones allocator`, wait for its `/ready`."""
        stack_agones.allocator_certs(self)
        argv = stack_agones.allocator_argv(self)
        self.allocator_proc = await self._spawn(argv, "allocator.log")
        await wait_ready(
            self.allocator_proc, self.allocator_health_port, "agones allocator", timeout
        )

    async def stop_allocator_service(self, timeout: float = 15.0) -> None:
        proc, self.allocator_proc = self.allocator_proc, None
        await terminate(proc, False, timeout)

    async def _spawn(self, argv: list[str], log_name: str) -> asyncio.subprocess.Process:
        return await spawn(argv, self.options.log_dir, log_name)

    async def stop(self) -> None:
        """Stop everything `start` started (also after a failed start); a step that fails does
        not keep the later ones from running (the first failure is raised at the end)."""
        failures: list[BaseException] = []

        async def step(coro: Any) -> None:
            try:
                await coro
            except Exception as err:
                log.exception("local stack stop step failed")
                failures.append(err)

        await step(self.stop_allocator_service())
        await step(self.stop_controller())
        await step(stack_cluster.stop_nodes(self))
        for allocator in self.allocators:
            await step(allocator.stop())
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        for factory in self._allocator_factories:
            await step(factory.shutdown())
        if self.factory is not None:
            await step(self.factory.shutdown())
        for server, _ in self.extensions:
            await step(server.stop())
        if self.dns is not None:
            await step(self.dns.stop())
        procs, self.extensions_procs = self.extensions_procs, []
        for proc in procs:
            await step(terminate(proc, False, 15.0))
        if self._extensions_tmp is not None:
            self._extensions_tmp.cleanup()
        for client in [*([self.client] if self.client is not None else []), *self._clients]:
            await step(client.close())
        await step(self.api.stop())
        if self._certs_tmp is not None:
            self._certs_tmp.cleanup()
        if failures:
            raise failures[0]

    async def __aenter__(self) -> LocalStack:
        try:
            await self.start()
        except BaseException:
            await self.stop()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


class ThreadedStack:
    """A `LocalStack` on its own event loop in a daemon thread."""

    def __init__(self, options: StackOptions | None = None) -> None:
        self.stack = LocalStack(options)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)

    def start(self, timeout: float = 120.0) -> LocalStack:
        self._thread.start()
        try:
            self.call(self.stack.start(), timeout)
        except BaseException:
            self.stop()
            raise
        return self.stack

    def call(self, coro: Any, timeout: float = 60.0) -> Any:
        future = asyncio.run_coroutine_threadsafe(coro, self._loop)
        try:
            return future.result(timeout)
        except TimeoutError:
            future.cancel()  # not left running beside whatever the caller does next
            raise

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.call(self.stack.stop(), 60)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
